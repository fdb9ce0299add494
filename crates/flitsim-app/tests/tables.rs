//! `routing.tables`: a routing written as OpenSM dumps and loaded back runs exactly like the
//! engine that computed it.
mod common;
use common::{assemble, parse, run, run_err};
use flitsim_manager::opensm;
use flitsim_sim::RunResult;

const TORUS: &str = r#"
seed = 11
[topology]
kind = "torus"
sides = [4, 4]
endpoints_per_switch = 2
[routing]
engine = "dfsssp"
vls = 4
verify = true
[switch]
vl_buffer_flits = 16
[traffic]
load = 0.3
[[traffic.class]]
name = "hi"
message_flits = 8
share = 0.25
[[traffic.class]]
name = "lo"
message_flits = 16
share = 0.75
[run]
warmup = 500
measure = 3000
"#;

/// The result without what legitimately differs: the routing's name, the config hash (the
/// configs differ) and wall-clock figures.
fn comparable(r: &RunResult) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap();
    let o = v.as_object_mut().unwrap();
    for k in ["routing", "config_hash", "performance"] {
        o.remove(k);
    }
    v
}

#[test]
fn dumped_tables_run_like_the_engine() {
    let (topo, fabric) = assemble(&parse(TORUS, "test", &[]));
    assert!(fabric.routing_sls > 1, "dfsssp should use several path SLs");
    let dir = std::env::temp_dir().join(format!("flitsim-sim-tables-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    opensm::write_dir(&topo, &fabric, &dir).unwrap();

    let with_engine = run(TORUS, "test", &[]);
    let set = format!("routing.tables={:?}", dir.display().to_string());
    let with_tables = run(TORUS, "test", &[&set]);
    assert_eq!(with_tables.routing, "file");
    assert!(with_engine.flits.delivered > 0);
    assert_eq!(comparable(&with_engine), comparable(&with_tables));

    // Too few VLs for the tables, and a directory without dumps, are named.
    let e = run_err(TORUS, "test", &[&set, "routing.vls=1"]);
    assert!(e.contains("routing.vls = 1") && e.contains("VLs"), "{e}");
    std::fs::remove_file(dir.join(opensm::LFTS_FILE)).unwrap();
    let set = format!("routing.tables={:?}", dir.display().to_string());
    let e = run_err(TORUS, "test", &[&set]);
    assert!(e.contains("opensm-lfts.dump"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
