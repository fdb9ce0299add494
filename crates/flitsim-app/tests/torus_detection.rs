//! Tori and meshes in topology files (issue 13, item 3): `topo info` reports the dimensions
//! found in the links, and `route --engine dor --out` on flitsim's own exported torus writes
//! the same dumps as on the generated one.
use flitsim_app::report::{route_json, topo_info_json};
use std::path::{Path, PathBuf};

struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("flitsim-torus-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap()
}

fn export(spec: &str, path: &Path) -> String {
    std::fs::write(
        path,
        flitsim_app::report::topo_convert(spec, "ibnetdiscover").unwrap(),
    )
    .unwrap();
    path.display().to_string()
}

const CASES: &[(&str, &str, &[u64])] = &[
    ("torus:4x4", "torus", &[4, 4]),
    ("torus:4x4,endpoints=2", "torus", &[4, 4]),
    ("mesh:4x4", "mesh", &[4, 4]),
    ("mesh:4x4,endpoints=2", "mesh", &[4, 4]),
    ("torus:3x4x2", "torus", &[3, 4, 2]),
    ("torus:3x4x2,endpoints=2", "torus", &[3, 4, 2]),
    ("mesh:3x4x2", "mesh", &[3, 4, 2]),
    ("mesh:3x4x2,endpoints=2", "mesh", &[3, 4, 2]),
];

#[test]
fn topo_info_reports_the_dimensions_of_exported_tori_and_meshes() {
    let dir = TempDir::new("info");
    for (i, &(spec, kind, dims)) in CASES.iter().enumerate() {
        let f = export(spec, &dir.0.join(format!("t{i}.topo")));
        let gen = json(&topo_info_json(spec).unwrap());
        let file = json(&topo_info_json(&f).unwrap());
        for j in [&gen, &file] {
            assert_eq!(j["shape"]["kind"], kind, "{spec}");
            let got: Vec<u64> = j["shape"]["dims"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect();
            assert_eq!(got, dims, "{spec}");
        }
        assert_eq!(gen["shape"]["detected"], false);
        assert_eq!(file["shape"]["detected"], true);
        assert_eq!(
            file["shape"]["endpoints_per_switch"], gen["shape"]["endpoints_per_switch"],
            "{spec}"
        );
        // The other keys are what they were.
        for k in ["switches", "endpoints", "inter_switch_links", "diameter"] {
            assert_eq!(gen[k], file[k], "{spec} {k}");
        }
    }
    let j = json(&topo_info_json("kary-ntree:k=4,n=3").unwrap());
    assert_eq!(
        (j["shape"]["kind"].as_str(), j["shape"]["levels"].as_u64()),
        (Some("fat_tree"), Some(3))
    );
    let j = json(&topo_info_json("xgft:h=2,m=4,4,w=1,2").unwrap());
    assert_eq!(
        (j["shape"]["kind"].as_str(), j["shape"]["levels"].as_u64()),
        (Some("fat_tree"), Some(2))
    );
}

#[test]
fn dor_on_an_exported_torus_writes_the_generated_tori_dumps() {
    let dir = TempDir::new("dor");
    for (i, &(spec, _, _)) in CASES.iter().enumerate() {
        let f = export(spec, &dir.0.join(format!("t{i}.topo")));
        let (a, b) = (
            dir.0.join(format!("gen{i}")),
            dir.0.join(format!("file{i}")),
        );
        let ra = json(&route_json(spec, "dor", 8, 1, Some(&a), None).unwrap());
        let rb = json(&route_json(&f, "dor", 8, 1, Some(&b), None).unwrap());
        assert_eq!(rb["deadlock_free"], true, "{spec}");
        for k in ["max_hops", "mean_hops", "routing_sls", "vls_used", "layers"] {
            assert_eq!(ra[k], rb[k], "{spec} {k}");
        }
        for file in [
            "opensm-lfts.dump",
            "opensm-sl2vl.dump",
            "guid2lid",
            "path-sl.txt",
        ] {
            let x = std::fs::read_to_string(a.join(file)).unwrap();
            let y = std::fs::read_to_string(b.join(file)).unwrap();
            assert!(x == y, "{spec}: {file} differs");
        }
    }
}

#[test]
fn dor_on_a_file_that_is_no_torus_says_why() {
    let real = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/testdata/fabrics/loginoff-8sw-145ca.topo");
    assert!(
        real.is_file(),
        "shared test fabric {} missing",
        real.display()
    );
    let real = real.display().to_string();
    let e = route_json(&real, "dor", 8, 1, None, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("dor routes tori and meshes only") && e.contains("is not one: "),
        "{e}"
    );
    let info = json(&topo_info_json(&real).unwrap());
    assert_eq!(info["shape"]["kind"], "irregular");
    assert!(!info["shape"]["reason"].as_str().unwrap().is_empty());
    // A fat tree written to a file is not a torus either.
    let dir = TempDir::new("tree");
    let f = export("kary-ntree:k=4,n=2", &dir.0.join("tree.topo"));
    let e = route_json(&f, "dor", 8, 1, None, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("is not one: "), "{e}");
}

/// The cost of torus detection and LID assignment beside a whole `route` (issue 13: under
/// 5 % on 4096-endpoint topologies). Prints a table; run with
/// `cargo test --release -p flitsim-app --test torus_detection -- --ignored --nocapture`.
#[test]
#[ignore = "timing, run by hand in release mode"]
fn timing_of_detection_and_lid_assignment() {
    use flitsim_app::report::load_topology;
    use std::time::Instant;
    let dir = TempDir::new("timing");
    let best = |f: &mut dyn FnMut()| {
        (0..2)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    println!("| topology | engine | detect | assign LIDs | route (file, --out) | route (spec, --out) | detect + assign / route |");
    println!("|---|---|---|---|---|---|---|");
    for (spec, engine) in [
        ("torus:16x16x16", "dor"),
        ("torus:16x16,endpoints=16", "dor"),
        ("torus:8x8x8,endpoints=8", "dor"),
        (
            "random:switches=512,ports=36,endpoints=8,links=3500,seed=1",
            "minhop",
        ),
        ("kautz:b=4,n=4,endpoints=4", "minhop"),
    ] {
        let f = export(spec, &dir.0.join("t.topo"));
        let topo = load_topology(&f).unwrap();
        let detect = best(&mut || {
            let _ = flitsim_topology::detect_torus(&topo);
        });
        // Assignment of every LID (the file's LIDs stripped).
        let mut bare = topo.clone();
        bare.set_lids(
            &vec![None; topo.num_switches()],
            &vec![None; topo.num_endpoints()],
        )
        .unwrap();
        let assign = best(&mut || {
            let mut t = bare.clone();
            t.assign_missing_ids(0).unwrap();
        });
        let out = dir.0.join("out");
        let route = best(&mut || {
            route_json(&f, engine, 8, 1, Some(&out), None).unwrap();
        });
        let route_spec = best(&mut || {
            route_json(spec, engine, 8, 1, Some(&out), None).unwrap();
        });
        println!(
            "| {spec} ({} endpoints) | {engine} | {:.2} ms | {:.2} ms | {:.0} ms | {:.0} ms | {:.2} % |",
            topo.num_endpoints(),
            detect * 1e3,
            assign * 1e3,
            route * 1e3,
            route_spec * 1e3,
            100.0 * (detect + assign) / route
        );
    }
}
