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
