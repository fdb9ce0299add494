//! Subnet-management traffic (InfiniBand VL15, Omni-Path SC15; Cano-Cano et al. 2022 §2.1,
//! `shared/papers/000_942770a54f7010fd.txt`): a class with `management = true` travels on a
//! VL of its own with absolute priority, so data traffic that saturates the fabric cannot
//! starve it. The fabric is the hot-spot 4-ary 2-tree of `tests/qos.rs`: every endpoint sends
//! its data (classes A and B, 2- and 16-flit messages) to one endpoint, whose link is
//! saturated, and the management packets (4 flits, 0.002 flits/cycle/endpoint) go there too.
mod common;
use common::{hotspot_tree, run_err};
use flitsim_sim::RunResult;

/// The hot-spot tree with a third class "VL15" of 4-flit messages: management at 0.002
/// flits/cycle/endpoint, or (`management` false) an ordinary class with the share of a load
/// of 1.0 that gives it the same rate.
fn fabric(management: bool) -> String {
    let base = hotspot_tree("speedup = 2", "[qos.sbt]\nweights = [25, 75]");
    let rate = if management {
        "rate = 0.002\nmanagement = true"
    } else {
        // share / (1 + 1 + share) = 0.002
        "share = 0.004008"
    };
    let class = format!("[[traffic.class]]\nname = \"VL15\"\nmessage_flits = 4\n{rate}\n");
    base.replace("[qos]\n", &format!("{class}[qos]\n"))
}

fn run(management: bool, sets: &[&str]) -> RunResult {
    common::run(&fabric(management), "management", sets)
}

const SCHEDULERS: [&str; 3] = ["dtable", "rr", "sbt"];

/// A lone management packet: NIC → leaf → spine → leaf → NIC, at an idle fabric.
fn lone_latency() -> f64 {
    let r = run(true, &["traffic.load=0.0001"]);
    r.per_sl[2].latency.max.unwrap() as f64
}

#[test]
fn management_traffic_is_never_starved() {
    let lone = lone_latency();
    for s in SCHEDULERS {
        let r = run(true, &[&format!("qos.scheduler=\"{s}\"")]);
        assert!(r.saturated, "{s}: the hot link is saturated");
        let m = &r.per_sl[2];
        assert_eq!(m.name, "VL15");
        let (offered, accepted) = (m.offered_load.unwrap(), m.accepted_load.unwrap());
        assert!(
            (accepted - offered).abs() <= 0.05 * offered,
            "{s}: management accepted {accepted:.5} of {offered:.5}"
        );
        // At each of its 4 output ports (NIC and 3 switches) a management packet waits at
        // most for the data packet on the link (≤ 16 flits, the largest MTU) and for the
        // management packets ahead of it.
        let mean = m.latency.mean.unwrap();
        let max = m.latency.max.unwrap() as f64;
        eprintln!("{s}: management latency mean {mean:.1}, max {max}, lone {lone}");
        assert!(
            mean <= lone + 4.0 * 16.0,
            "{s}: mean {mean:.1}, lone {lone}"
        );
        assert!(max <= lone + 8.0 * 16.0, "{s}: max {max}, lone {lone}");
    }
}

#[test]
fn the_same_traffic_as_a_data_class_waits_behind_the_data() {
    // As an ordinary SL it shares the data VLs (3 classes on 2 VLs) and the schedulers'
    // tables: its packets queue behind the saturated data at the NIC and in the switches.
    let r = run(false, &["qos.scheduler=\"rr\""]);
    let m = &r.per_sl[2];
    let (offered, accepted) = (m.offered_load.unwrap(), m.accepted_load.unwrap());
    eprintln!(
        "rr, data SL: offered {offered:.5}, accepted {accepted:.5}, {} packets delivered in \
         the window",
        m.latency.count
    );
    assert!(offered > 0.001, "offered {offered}");
    assert!(
        accepted < 0.5 * offered,
        "as a data SL it is starved: accepted {accepted:.5} of {offered:.5}"
    );
}

#[test]
fn management_configuration_errors_name_the_key() {
    let text = fabric(true);
    let e = run_err(&text.replace("rate = 0.002", "rate = 0.0"), "m.toml", &[]);
    assert!(
        e.contains("traffic.class[2].rate") && e.contains("positive"),
        "{e}"
    );
    let moved = text
        .replace("management = true", "management = false")
        .replacen(
            "name = \"A\"",
            "name = \"A\"\nmanagement = true\nrate = 0.01",
            1,
        );
    let e = run_err(&moved, "m.toml", &[]);
    assert!(
        e.contains("traffic.class[0].management") && e.contains("last"),
        "{e}"
    );
    let e = run_err(
        &text,
        "m.toml",
        &["qos.scheduler=\"none\"", "qos.architecture=\"ideal\""],
    );
    assert!(e.contains("traffic.class[2].management"), "{e}");
}

/// The small Omni-Path fabric of `tests/opa_packets.rs` (4×4 torus of hierarchical switches,
/// Table 7 SCs, 128-byte packets) with a management class; `qos.sc.sl2sc` leaves it out.
fn opa(sets: &[&str]) -> RunResult {
    let text = format!(
        "{}\n[[traffic.class]]\nname = \"SC15\"\nmessage_flits = 4\nrate = 0.002\nmanagement = true\n",
        include_str!("data/opa-small.toml").replace("[run]", "[run_]")
    )
    .replace("[run_]", "[run]");
    let mut all = vec![
        "traffic.packet_flits=2",
        "run.warmup=1000",
        "run.measure=3000",
    ];
    all.extend_from_slice(sets);
    common::run(&text, "opa-management", &all)
}

#[test]
fn management_traffic_on_an_omni_path_fabric_is_never_starved() {
    let lone = opa(&["traffic.load=0.0001"]);
    let lone = &lone.per_sl[5].latency;
    let (lone_mean, lone_max) = (lone.mean.unwrap(), lone.max.unwrap() as f64);
    for s in SCHEDULERS {
        let r = opa(&[&format!("qos.scheduler=\"{s}\""), "traffic.load=1.0"]);
        assert!(r.saturated, "{s}: load 1.0 saturates the torus");
        let m = &r.per_sl[5];
        assert_eq!(m.name, "SC15");
        let (offered, accepted) = (m.offered_load.unwrap(), m.accepted_load.unwrap());
        let (mean, max) = (m.latency.mean.unwrap(), m.latency.max.unwrap() as f64);
        eprintln!(
            "opa {s}: management offered {offered:.5} accepted {accepted:.5}, latency mean \
             {mean:.1} max {max} (lone mean {lone_mean:.1} max {lone_max})"
        );
        assert!(
            (accepted - offered).abs() <= 0.05 * offered,
            "{s}: management accepted {accepted:.5} of {offered:.5}"
        );
        // At most 5 output ports on a path (NIC, ≤ 4 switches on a 4×4 torus): at each, one
        // data message in progress (≤ 16 flits; DTable sends a whole message) ahead of it.
        assert!(
            max <= lone_max + 5.0 * 16.0,
            "{s}: max {max}, lone {lone_max}"
        );
        assert!(
            mean <= lone_mean + 2.0 * 16.0,
            "{s}: mean {mean:.1}, lone {lone_mean:.1}"
        );
    }
}
