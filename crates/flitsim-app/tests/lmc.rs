//! LMC multipath end to end: `routing.lmc` gives every destination 2^lmc paths, a flow
//! pinned to path k follows path k's tables through the switches, and `flitsim route --lmc`
//! writes dumps that read back as the same multipath tables.
mod common;
use common::{assemble, parse};
use flitsim_app::report;
use flitsim_manager::cdg;
use flitsim_sim::{Network, RouteHop};
use flitsim_topology::EndpointId;

/// A 4-ary 2-tree (4 leaves × 4 endpoints, 4 spines) with two flows between the same pair of
/// endpoints on different leaves, pinned to paths 0 and 1.
const FAT_TREE: &str = r#"
[topology]
kind = "kary_ntree"
k = 4
n = 2

[routing]
engine = "ftree"
lmc = 1
verify = true

[[traffic.class]]
name = "BE"
message_flits = 4

[[traffic.flow]]
src = 0
dst = 15
rate = 0.05
path = 0

[[traffic.flow]]
src = 0
dst = 15
rate = 0.05
path = 1

[run]
warmup = 200
measure = 2000
"#;

/// Switches each packet of `flow` traversed, in order.
fn switches_of(trace: &[RouteHop], flow: u32) -> Vec<Vec<u32>> {
    let mut packets: std::collections::BTreeMap<u64, Vec<u32>> = Default::default();
    for h in trace.iter().filter(|h| h.flow == Some(flow)) {
        packets.entry(h.seq).or_default().push(h.switch);
    }
    packets.into_values().collect()
}

#[test]
fn flows_pinned_to_paths_0_and_1_cross_different_spines() {
    let cfg = parse(FAT_TREE, "lmc.toml", &[]);
    let (topo, fabric) = assemble(&cfg);
    assert_eq!(fabric.num_paths(), 2);
    assert!(cdg::verify(&topo, &fabric).unwrap().deadlock_free);
    let mut net = Network::build(&cfg.params(), &topo, fabric.clone()).unwrap();
    net.enable_route_trace();
    let r = net.run().unwrap();
    assert!(r.drained);
    let trace = net.route_trace();
    let (p0, p1) = (switches_of(trace, 0), switches_of(trace, 1));
    assert!(!p0.is_empty() && !p1.is_empty());
    // Every packet of a flow takes its path: leaf, spine, leaf; the two paths share only the
    // two leaves.
    let expect = |k: usize| -> Vec<u32> {
        fabric
            .trace_path(&topo, EndpointId(0), EndpointId(15), 0, k)
            .unwrap()
            .iter()
            .map(|h| h.switch.0)
            .collect()
    };
    let (e0, e1) = (expect(0), expect(1));
    assert_eq!(e0.len(), 3);
    assert_eq!((e0[0], e0[2]), (e1[0], e1[2]));
    assert_ne!(e0[1], e1[1], "the two paths cross different spines");
    assert!(p0.iter().all(|p| *p == e0), "{p0:?} vs {e0:?}");
    assert!(p1.iter().all(|p| *p == e1), "{p1:?} vs {e1:?}");
    // Every decision is the entry of the packet's path.
    for h in trace.iter().filter(|h| h.flow.is_some()) {
        assert_eq!(
            h.out_port,
            fabric.lft_of(h.path as usize)[h.switch as usize][h.dst as usize]
        );
    }
}

#[test]
fn routing_lmc_is_checked() {
    let e = flitsim_app::ExperimentConfig::parse(
        FAT_TREE,
        "lmc.toml",
        &["routing.lmc=8".to_string()],
        None,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("routing.lmc") && e.contains("0..=7"), "{e}");
    // lash cannot: the error says which engines can.
    let cfg = parse(FAT_TREE, "lmc.toml", &["routing.engine=lash"]);
    let topo = flitsim_app::build_topology(&cfg, None).unwrap();
    let e = flitsim_app::build_fabric(&cfg, &topo)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("lash does not support LMC > 0"), "{e}");
}

#[test]
fn route_with_lmc_2_writes_every_lid_and_reads_back_the_same_tables() {
    let dir = std::env::temp_dir().join(format!("flitsim-app-lmc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (spec, engine) in [
        ("kary-ntree:k=4,n=3", "ftree"),
        (
            "random:switches=12,ports=8,endpoints=2,links=20,seed=2",
            "dfsssp",
        ),
    ] {
        let json = report::route_json_with(
            spec,
            engine,
            8,
            1,
            &report::RouteFiles {
                out_dir: Some(&dir),
                guid2lid: None,
            },
            Some(r#"{"lmc": 2}"#),
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["lmc"], 2);
        assert_eq!(v["deadlock_free"], true, "{engine}");
        let d = &v["path_diversity"];
        assert_eq!(d["paths"], 4);
        assert!(
            d["mean_distinct_paths"].as_f64().unwrap() > 1.5,
            "{engine}: {d}"
        );
        if engine == "ftree" {
            assert_eq!(d["disjoint_share"], 1.0);
        }
        // Reading the dumps back (onto the generator's topology) gives the routed tables.
        let topo = report::load_topology(spec).unwrap();
        let back = flitsim_manager::opensm::read_dir(&topo, &dir).unwrap();
        let mut lmc_topo = topo.clone();
        let (ns, ne) = (topo.num_switches(), topo.num_endpoints());
        lmc_topo.set_lids(&vec![None; ns], &vec![None; ne]).unwrap();
        lmc_topo.assign_missing_ids(2).unwrap();
        let routed = flitsim_manager::routing::route_with(
            &lmc_topo,
            engine,
            &flitsim_manager::RoutingRequest { vls: 8, classes: 1 },
            &flitsim_manager::routing::EngineOptions {
                lmc: 2,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(back.num_paths(), 4);
        assert_eq!(back.lft, routed.lft, "{engine}");
        assert_eq!(back.alt_paths, routed.alt_paths, "{engine}");
        assert_eq!(back.path_sl, routed.path_sl, "{engine}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    // Without LMC the report has no diversity.
    let json = report::route_json("kary-ntree:k=2,n=2", "ftree", 1, 1, None, None).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["lmc"], 0);
    assert!(v["path_diversity"].is_null());
}

#[test]
fn a_file_whose_lids_are_not_aligned_is_refused_with_what_would_work() {
    let dir = std::env::temp_dir().join(format!("flitsim-app-lmc-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tree.json");
    // A generated tree written to a file keeps its LMC 0 LIDs (switches 1-4, endpoints 5-8).
    let t = flitsim_topology::generators::kary_ntree(2, 2, 1).unwrap();
    std::fs::write(&file, t.to_json()).unwrap();
    let out = dir.join("out");
    let e = report::route_json_with(
        file.to_str().unwrap(),
        "updn",
        1,
        1,
        &report::RouteFiles {
            out_dir: Some(&out),
            guid2lid: None,
        },
        Some(r#"{"lmc": 1}"#),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("has LID 5, which is not a multiple of 2") && e.contains("use LMC 0"),
        "{e}"
    );
    assert!(!out.exists());
    // Out of range.
    let e = report::route_json(
        "kary-ntree:k=2,n=2",
        "updn",
        1,
        1,
        None,
        Some(r#"{"lmc": 9}"#),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("LMC 9 is out of range"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
