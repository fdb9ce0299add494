//! `topology.kind = "file"` reads every format `flitsim topo` reads (flitsim JSON,
//! ibnetdiscover dumps, ibsim net files), detected by content.
use flitsim_app::{report::load_topology, run_experiment_str};
use flitsim_topology::generators;
use std::path::{Path, PathBuf};

const EXPERIMENT: &str = r#"
seed = 7
[topology]
kind = "file"
path = "PATH"
[routing]
engine = "minhop"
vls = 1
[switch]
vl_buffer_flits = 16
[traffic]
load = 0.05
[[traffic.class]]
name = "BE"
message_flits = 4
[run]
warmup = 200
measure = 800
"#;

const IBSIM: &str = include_str!("../../flitsim-topology/tests/data/two-switches.ibsim");

struct TempDir(PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the experiment with `topology.path` = `file` (written to a temporary directory with
/// `text`) and returns the number of endpoints that sent something, or the error.
fn run_with(dir: &Path, file: &str, text: &str) -> Result<usize, String> {
    std::fs::write(dir.join(file), text).unwrap();
    let exp = dir.join("exp.toml");
    let toml = EXPERIMENT.replace("PATH", file);
    std::fs::write(&exp, &toml).unwrap();
    let r =
        run_experiment_str(&toml, exp.to_str().unwrap(), &[], None).map_err(|e| e.to_string())?;
    assert!(r.flits.delivered > 0, "{file}: nothing delivered");
    Ok(load_topology(dir.join(file).to_str().unwrap())
        .unwrap()
        .num_endpoints())
}

#[test]
fn experiments_read_every_topology_format() {
    let dir =
        TempDir(std::env::temp_dir().join(format!("flitsim-kind-file-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let t = generators::kary_ntree(2, 2, 1).unwrap();
    // The extension does not matter: the content decides.
    for (file, text) in [
        ("fabric.json", t.to_json()),
        ("fabric.topo", t.to_ibnetdiscover()),
        ("ib-dump.json", t.to_ibnetdiscover()),
        ("json-in.topo", t.to_json()),
        ("net.2sw", IBSIM.to_string()),
    ] {
        let eps = run_with(&dir.0, file, &text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(eps, 4, "{file}");
    }
    // The shared real dump (the test fails when the shared test data is missing).
    let real = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/testdata/fabrics/loginoff-8sw-145ca.topo");
    let text = std::fs::read_to_string(&real)
        .unwrap_or_else(|e| panic!("shared test fabric {}: {e}", real.display()));
    assert_eq!(run_with(&dir.0, "loginoff.topo", &text).unwrap(), 145);
    // Errors name the file and the line.
    let e = run_with(&dir.0, "empty.topo", "").unwrap_err();
    assert!(
        e.contains("empty.topo") && e.contains("empty topology file"),
        "{e}"
    );
    let e = run_with(&dir.0, "bad.topo", "Switch 4 \"S-1\"\n[1] oops\n").unwrap_err();
    assert!(e.contains("bad.topo: line 2"), "{e}");
}
