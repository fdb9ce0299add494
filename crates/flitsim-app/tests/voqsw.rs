//! `routing.vl_assignment`: VOQsw tables and the virtual-network baseline in experiments, on
//! a random network of the VOQsw paper's kind (8-port switches, 4 hosts and 4 links each,
//! up*/down*).
mod common;
use common::{assemble, parse, run};
use flitsim_app::build_topology;
use flitsim_manager::cdg;
use flitsim_manager::qos::voqsw::{analyse, VoqswSls};
use flitsim_topology::EndpointId;

const NET: &str = r#"
[topology]
kind = "random"
switches = 8
ports = 8
endpoints_per_switch = 4
links = 16
seed = 2

[routing]
engine = "updn"
vls = 8

[[traffic.class]]
name = "BE"
message_flits = 4

[traffic]
pattern = "uniform"
load = 0.05

[run]
warmup = 200
measure = 1000
"#;

#[test]
fn default_is_the_engine_and_unchanged() {
    let a = assemble(&parse(NET, "v.toml", &[])).1;
    let b = assemble(&parse(NET, "v.toml", &["routing.vl_assignment=\"engine\""])).1;
    assert_eq!(a, b);
    let ra = run(NET, "v.toml", &[]);
    let rb = run(NET, "v.toml", &["routing.vl_assignment=\"engine\""]);
    // Byte-identical results (the config hash included), wall-clock timings aside.
    let text = |r: &flitsim_sim::RunResult| {
        let mut v = serde_json::to_value(r).unwrap();
        v.as_object_mut().unwrap().remove("performance");
        serde_json::to_string(&v).unwrap()
    };
    assert_eq!(text(&ra), text(&rb));
}

#[test]
fn voqsw_tables_are_the_methodologys_and_deadlock_free() {
    let cfg = parse(
        NET,
        "v.toml",
        &["routing.vl_assignment=\"voqsw\"", "routing.voqsw_sls=4"],
    );
    let (topo, fabric) = assemble(&cfg);
    assert_eq!((fabric.routing_sls, fabric.num_vls), (4, 8));
    assert!(cdg::verify(&topo, &fabric).unwrap().deadlock_free);
    // Same tables as the methodology run by hand over the engine's forwarding tables.
    let plain = assemble(&parse(NET, "v.toml", &[])).1;
    // up*/down* routed with 8 VLs keeps one lane: VOQsw gets all 8 VLs.
    assert_eq!(flitsim_manager::qos::voqsw::lanes(&plain), 1);
    let v = analyse(&topo, &plain, VoqswSls::Limit(4)).unwrap();
    assert_eq!(v.tables(&topo, &plain, 8).unwrap(), fabric);
    let r = run(
        NET,
        "v.toml",
        &["routing.vl_assignment=\"voqsw\"", "routing.voqsw_sls=4"],
    );
    assert!(r.drained);
    // "full" fits here (16 SLs).
    let full = parse(
        NET,
        "v.toml",
        &[
            "routing.vl_assignment=\"voqsw\"",
            "routing.voqsw_sls=\"full\"",
        ],
    );
    assert_eq!(assemble(&full).1.routing_sls, 16);
}

#[test]
fn virtual_networks_keep_one_vl_per_destination() {
    let cfg = parse(NET, "v.toml", &["routing.vl_assignment=\"vn\""]);
    let topo = build_topology(&cfg, None).unwrap();
    let (_, fabric) = assemble(&cfg);
    for (s, d) in [(0u32, 5u32), (3, 30), (17, 2)] {
        for hop in fabric
            .trace(&topo, EndpointId(s), EndpointId(d), 0)
            .unwrap()
        {
            assert_eq!(hop.vl as u32, d % 8);
        }
    }
    assert!(run(NET, "v.toml", &["routing.vl_assignment=\"vn\""]).drained);
}

#[test]
fn what_cannot_work_is_named() {
    let err = |sets: &[&str]| common::run_err(NET, "v.toml", sets);
    let e = err(&["routing.vl_assignment=\"voqsw\"", "routing.voqsw_sls=0"]);
    assert!(e.contains("routing.voqsw_sls"), "{e}");
    let e = err(&["routing.voqsw_sls=4"]);
    assert!(e.contains("only used with"), "{e}");
    let e = err(&["routing.vl_assignment=\"voq\""]);
    assert!(e.contains("vl_assignment"), "{e}");
    let torus = NET.replace(
        "kind = \"random\"\nswitches = 8\nports = 8\nendpoints_per_switch = 4\nlinks = 16\nseed = 2",
        "kind = \"torus\"\nsides = [4, 4]",
    );
    let e = common::run_err(
        &torus,
        "t.toml",
        &[
            "routing.vl_assignment=\"voqsw\"",
            "routing.engine=\"dor\"",
            "routing.vls=1",
        ],
    );
    assert!(e.contains("at least 2 VLs"), "{e}");
    // With enough VLs, DOR keeps its dateline lanes and stays deadlock-free.
    for a in ["voqsw", "vn"] {
        let set = format!("routing.vl_assignment=\"{a}\"");
        let cfg = parse(&torus, "t.toml", &[&set, "routing.engine=\"dor\""]);
        let (topo, fabric) = assemble(&cfg);
        assert!(cdg::verify(&topo, &fabric).unwrap().deadlock_free, "{a}");
        // The engine is routed with the fewest VLs it accepts (DOR: 2), not `routing.vls`
        // (DOR would spread its datelines over all 8, leaving nothing to split).
        let req = flitsim_manager::RoutingRequest { vls: 2, classes: 1 };
        let dor = flitsim_manager::route(&topo, "dor", &req).unwrap();
        assert_eq!(flitsim_manager::qos::voqsw::lanes(&dor), 2);
        let want = if a == "vn" {
            flitsim_manager::qos::voqsw::virtual_networks(&topo, &dor, 8).unwrap()
        } else {
            let v = analyse(&topo, &dor, VoqswSls::Limit(8)).unwrap();
            v.tables(&topo, &dor, 8).unwrap()
        };
        assert_eq!(fabric, want, "{a}");
    }
    let e = err(&["routing.vl_assignment=\"vn\"", "routing.lmc=1"]);
    assert!(e.contains("single path"), "{e}");
}

/// `routing.voqsw_spread`: paths that cross no considered 4-tuple leave SL 0 for
/// `destination mod SLs`; the considered 4-tuples and the VOQ guarantee do not change, the
/// tables stay deadlock-free, and the path SLs spread over all the SLs.
#[test]
fn spread_moves_only_the_unconstrained_paths() {
    let sets = ["routing.vl_assignment=\"voqsw\"", "routing.voqsw_sls=4"];
    let (topo, plain) = assemble(&parse(NET, "v.toml", &sets));
    let mut spread_sets = sets.to_vec();
    spread_sets.push("routing.voqsw_spread=true");
    let (_, spread) = assemble(&parse(NET, "v.toml", &spread_sets));
    assert!(cdg::verify(&topo, &spread).unwrap().deadlock_free);
    let engine = assemble(&parse(NET, "v.toml", &[])).1;
    let mut v = analyse(&topo, &engine, VoqswSls::Limit(4)).unwrap();
    let before = v.assignment.clone();
    v.spread_unconstrained();
    assert_eq!(v.considered(), before.x);
    assert_eq!(v.tables(&topo, &engine, 8).unwrap(), spread);
    let e = topo.num_endpoints();
    let mut moved = 0;
    for p in 0..e * e {
        if before.sl[p] != v.assignment.sl[p] {
            // Only paths Figure 5 left on SL 0 move, to their destination's SL.
            assert_eq!(before.sl[p], 0);
            assert_eq!(v.assignment.sl[p] as usize, (p % e) % 4);
            moved += 1;
        }
    }
    assert!(moved > 0);
    // The wire SLs of all paths: at most about half on one SL with spreading, where Figure 5
    // alone leaves most on SL 0.
    let share = |f: &flitsim_manager::FabricConfig| {
        let mut n = [0usize; 4];
        for s in 0..e {
            for d in 0..e {
                if s != d {
                    n[f.path_sl[s * e + d] as usize] += 1;
                }
            }
        }
        *n.iter().max().unwrap() as f64 / (e * (e - 1)) as f64
    };
    assert!(share(&plain) > 0.5, "{}", share(&plain));
    assert!(
        share(&spread) < share(&plain),
        "{} vs {}",
        share(&spread),
        share(&plain)
    );
    let err = common::run_err(NET, "v.toml", &["routing.voqsw_spread=true"]);
    assert!(err.contains("routing.voqsw_spread"), "{err}");
}

/// `routing.vn_by = "source"`: the path SL (= VL on every hop) is the source mod `vls`, and
/// the tables stay deadlock-free. Under one hot spot, networks chosen by source carry hot
/// packets in every VL, so the hot spot's congestion holds back all other traffic, while
/// networks chosen by destination confine it to one VL (hosts with a send queue per VL).
#[test]
fn virtual_networks_by_source_mix_a_hot_spot_into_every_vl() {
    let sets = ["routing.vl_assignment=\"vn\"", "routing.vn_by=\"source\""];
    let (topo, f) = assemble(&parse(NET, "v.toml", &sets));
    assert!(cdg::verify(&topo, &f).unwrap().deadlock_free);
    let e = topo.num_endpoints();
    for s in 0..e {
        for d in 0..e {
            if s != d {
                assert_eq!(f.path_sl[s * e + d] as usize, s % 8);
            }
        }
    }
    let hot = [
        "traffic.pattern=\"hotspot\"",
        "traffic.hotspot={endpoints=1,fraction=0.4}",
        "traffic.load=0.4",
        "nic.send_queues=\"vl\"",
        "routing.vl_assignment=\"vn\"",
        "run.warmup=2000",
        "run.measure=10000",
    ];
    let by_dst = run(NET, "v.toml", &hot).accepted_load.unwrap();
    let mut src = hot.to_vec();
    src.push("routing.vn_by=\"source\"");
    let by_src = run(NET, "v.toml", &src).accepted_load.unwrap();
    // The hot host's link carries 1 flit/cycle, 1/32 per sender. By source, all of a host's
    // messages share its one VL, so the other 60 % leave at the pace of the hot 40 %:
    // (1 + 1.5) / 32 ≈ 0.078 flits/cycle per host.
    assert!(by_src < 0.1, "by source {by_src}");
    assert!(
        by_dst > 2.0 * by_src,
        "by destination {by_dst}, by source {by_src}"
    );
    let err = common::run_err(NET, "v.toml", &["routing.vn_by=\"source\""]);
    assert!(err.contains("routing.vn_by"), "{err}");
}
