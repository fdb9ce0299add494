//! The cost of closed-loop trace replay: runs an experiment with `[traffic.trace]`, records
//! every packet it delivered, then injects exactly those packets open loop (scripted, at the
//! cycles the replay generated them) into the same fabric without the trace, and prints both
//! runs' wall time, flit-hops/s and simulated cycles.
//!
//! ```text
//! cargo run --release -p flitsim-app --example replay_bench -- EXPERIMENT.toml
//! ```
use flitsim_app::{build_fabric, build_topology, ExperimentConfig};
use flitsim_sim::Network;

fn main() {
    let file = std::env::args()
        .nth(1)
        .expect("usage: replay_bench EXPERIMENT.toml (with [traffic.trace])");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let cfg = ExperimentConfig::parse(&text, &file, &[], None).unwrap_or_else(|e| panic!("{e}"));
    assert!(cfg.traffic.trace.is_some(), "{file} has no [traffic.trace]");
    let topo = build_topology(&cfg, None).unwrap_or_else(|e| panic!("{e}"));
    let (fabric, _) = build_fabric(&cfg, &topo).unwrap_or_else(|e| panic!("{e}"));

    let mut closed = Network::build(&cfg.params(), &topo, fabric.clone()).unwrap();
    closed.enable_trace();
    let a = closed.run().unwrap();
    let packets = closed.deliveries().to_vec();

    let mut params = cfg.params();
    params.traffic.trace = None;
    let mut open = Network::build(&params, &topo, fabric).unwrap();
    for d in &packets {
        open.inject_message(d.generated, d.src, d.dst, d.class, d.len as u32)
            .unwrap();
    }
    let b = open.run().unwrap();

    println!(
        "{:<26} {:>12} {:>9} {:>12} {:>14}",
        "run", "cycles", "wall s", "packets", "flit-hops/s"
    );
    for (name, r, n) in [
        ("closed loop (replay)", &a, packets.len()),
        ("open loop (same packets)", &b, packets.len()),
    ] {
        println!(
            "{:<26} {:>12} {:>9.3} {:>12} {:>12.2} M",
            name,
            r.cycles.total,
            r.performance.wall_seconds,
            n,
            r.performance.flit_hops_per_second / 1e6
        );
    }
    println!(
        "replay / open loop wall time: {:.1} %   (flit-hops: {} vs {})",
        100.0 * a.performance.wall_seconds / b.performance.wall_seconds,
        a.performance.flit_hops,
        b.performance.flit_hops
    );
}
