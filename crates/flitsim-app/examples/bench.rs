//! Engine macro-benchmark: runs the fixed scenarios of `examples/` and prints simulated
//! cycles/s and flit-hops/s (flit × switch-to-switch link traversals per wall second).
//!
//! ```text
//! cargo run --release -p flitsim-app --example bench [-- --cycles N]
//! ```
//!
//! A second table compares the same offered traffic on 128 endpoints (an 8×8 torus, two
//! endpoints per switch) from per-class CBR sources (`uniform_others`) and from 16 256 CBR
//! flows (`flow_set` all pairs, each at load / 127): the cost of flows per flit-hop.
use std::path::PathBuf;

/// 128 endpoints, CBR sources of 16-flit messages; the load is set per scenario.
const FLOWS_BASE: &str = r#"
[topology]
kind = "torus"
sides = [8, 8]
endpoints_per_switch = 2

[traffic]
injection = "cbr"
pattern = "uniform_others"
"#;

const FLOW_LOAD: f64 = 0.2;

const SCENARIOS: &[(&str, &str, f64)] = &[
    ("torus-16x16 uniform 0.2", "torus-16x16-uniform.toml", 0.2),
    ("torus-8x8 uniform 0.5", "torus-8x8-uniform.toml", 0.5),
    (
        "4-ary 3-tree uniform 0.5",
        "fattree-4ary3-uniform.toml",
        0.5,
    ),
];

/// Large blocks on transparent huge pages (see `flitsim_sim::alloc`).
#[global_allocator]
static ALLOC: flitsim_sim::alloc::HugePages = flitsim_sim::alloc::HugePages;

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
    println!();
    println!(
        "{:<34} {:>7} {:>9} {:>14} {:>9} {:>9}",
        "128 endpoints, CBR, load 0.2", "flows", "wall s", "flit-hops/s", "accepted", "lat mean"
    );
    let classes = format!("{FLOWS_BASE}\n[[traffic.class]]\nname = \"BE\"\nrate = {FLOW_LOAD}\n");
    let flows = format!(
        "{FLOWS_BASE}\n[[traffic.class]]\nname = \"BE\"\n\n[[traffic.flow_set]]\nkind = \"all_pairs\"\nrate = {}\n",
        FLOW_LOAD / 127.0
    );
    let mut rates = Vec::new();
    for (name, text) in [("per-class sources", classes), ("all-pairs flows", flows)] {
        let sets = vec![
            "run.warmup=5000".to_string(),
            format!("run.measure={measure}"),
            "run.per_port_stats=false".to_string(),
        ];
        let r = flitsim_app::run_experiment_str(&text, "bench-flows.toml", &sets, None)
            .unwrap_or_else(|e| panic!("{e}"));
        let p = &r.performance;
        rates.push(p.flit_hops_per_second);
        println!(
            "{:<34} {:>7} {:>9.3} {:>12.2} M {:>9.4} {:>9.1}",
            name,
            r.flows.as_ref().map_or(0, Vec::len),
            p.wall_seconds,
            p.flit_hops_per_second / 1e6,
            r.accepted_load.unwrap(),
            r.latency.mean.unwrap()
        );
    }
    println!(
        "flows / per-class flit-hops/s: {:.1} %",
        100.0 * rates[1] / rates[0]
    );
}
