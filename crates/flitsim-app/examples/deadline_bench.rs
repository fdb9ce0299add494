//! What deadline-based QoS costs per flit-hop: the same run with FIFO VLs and with the
//! deadline disciplines, printed as simulated cycles/s and flit-hops/s.
//!
//! ```text
//! cargo run --release -p flitsim-app --example deadline_bench [-- --ms 2]
//! ```
//!
//! Table 1: the paper's scenario (`examples/deadline-qos-*.toml`, 128 endpoints, Table 1
//! traffic at full load) under the five architectures; `simple_2vc` is EDF hosts with FIFO
//! VCs, `advanced_2vc` and `ideal` add the take-over queue and the heap. Table 2: the 8×8
//! torus at load 0.5 with `switch.vl_discipline` = fifo, ordered_takeover and heap (no
//! deadlines: the disciplines' bookkeeping alone).
use std::path::PathBuf;

fn run(path: &PathBuf, sets: &[String]) -> flitsim_sim::RunResult {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    flitsim_app::run_experiment_str(&text, &path.display().to_string(), sets, None)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn row(name: &str, r: &flitsim_sim::RunResult, base: Option<f64>) -> f64 {
    let p = &r.performance;
    let rel = base.map_or(String::new(), |b| {
        format!("{:>8.1} %", 100.0 * p.flit_hops_per_second / b)
    });
    println!(
        "{:<34} {:>10} {:>8.2} {:>11.0} {:>13.0} {}",
        name, r.cycles.total, p.wall_seconds, p.cycles_per_second, p.flit_hops_per_second, rel
    );
    p.flit_hops_per_second
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ms = args
        .iter()
        .position(|a| a == "--ms")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.parse::<f64>().expect("--ms N"))
        .unwrap_or(2.0);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let header = || {
        println!(
            "{:<34} {:>10} {:>8} {:>11} {:>13} {:>10}",
            "run", "cycles", "wall s", "cycles/s", "flit-hops/s", "vs first"
        )
    };
    println!("Paper scenario, 128 endpoints, full load, {ms} ms measured");
    header();
    let mut base = None;
    for arch in [
        "traditional_2vc",
        "simple_2vc",
        "advanced_2vc",
        "ideal",
        "traditional_4vc",
    ] {
        let path = dir.join(format!("deadline-qos-{arch}.toml"));
        let sets = vec![
            "run.warmup=\"1ms\"".to_string(),
            format!("run.measure=\"{ms}ms\""),
        ];
        let r = run(&path, &sets);
        let f = row(arch, &r, base);
        base.get_or_insert(f);
    }
    println!();
    println!("8x8 torus, uniform load 0.5, 50 000 cycles measured");
    header();
    let mut base = None;
    for d in ["fifo", "ordered_takeover", "heap"] {
        let path = dir.join("torus-8x8-uniform.toml");
        let sets = vec![
            "traffic.load=0.5".to_string(),
            "run.warmup=5000".to_string(),
            "run.measure=50000".to_string(),
            format!("switch.vl_discipline=\"{d}\""),
        ];
        let r = run(&path, &sets);
        let f = row(&format!("vl_discipline = {d}"), &r, base);
        base.get_or_insert(f);
    }
}
