//! Engine macro-benchmark: runs the fixed scenarios of `examples/` and prints simulated
//! cycles/s and flit-hops/s (flit × switch-to-switch link traversals per wall second).
//!
//! ```text
//! cargo run --release -p flitsim-app --example bench [-- --cycles N]
//! ```
use std::path::PathBuf;

const SCENARIOS: &[(&str, &str, f64)] = &[
    ("torus-16x16 uniform 0.2", "torus-16x16-uniform.toml", 0.2),
    ("torus-8x8 uniform 0.5", "torus-8x8-uniform.toml", 0.5),
    (
        "4-ary 3-tree uniform 0.5",
        "fattree-4ary3-uniform.toml",
        0.5,
    ),
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let measure = args
        .iter()
        .position(|a| a == "--cycles")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.parse::<u64>().expect("--cycles N"))
        .unwrap_or(50_000);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    println!(
        "{:<26} {:>10} {:>9} {:>12} {:>14} {:>9} {:>9}",
        "scenario", "cycles", "wall s", "cycles/s", "flit-hops/s", "accepted", "lat mean"
    );
    for (name, file, load) in SCENARIOS {
        let path = dir.join(file);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let sets = vec![
            format!("traffic.load={load}"),
            "run.warmup=5000".to_string(),
            format!("run.measure={measure}"),
            "run.per_port_stats=false".to_string(),
        ];
        let r = flitsim_app::run_experiment_str(&text, &path.display().to_string(), &sets, None)
            .unwrap_or_else(|e| panic!("{e}"));
        let p = &r.performance;
        println!(
            "{:<26} {:>10} {:>9.3} {:>12.0} {:>12.2} M {:>9.4} {:>9.1}",
            name,
            r.cycles.total,
            p.wall_seconds,
            p.cycles_per_second,
            p.flit_hops_per_second / 1e6,
            r.accepted_load.unwrap(),
            r.latency.mean.unwrap()
        );
    }
}
