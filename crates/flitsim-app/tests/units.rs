//! Physical units end to end: `examples/units-torus-8gbps.toml` is
//! `examples/torus-8x8-uniform.toml` written with units, so both resolve to the same engine
//! parameters and give the same results; the physical twins are the cycle figures times the
//! cycle (64 ns: 64-byte flits on 8 Gb/s links) in closed form.
mod common;

use common::{parse, run};
use flitsim_app::ExperimentConfig;

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/");

fn example(name: &str) -> (String, String) {
    let path = format!("{EXAMPLES}{name}");
    (std::fs::read_to_string(&path).unwrap(), path)
}

const SHORT: &[&str] = &["run.warmup=1000", "run.measure=2000"];

#[test]
fn the_units_example_is_the_plain_example_in_physical_units() {
    let (plain, plain_path) = example("torus-8x8-uniform.toml");
    let (units, units_path) = example("units-torus-8gbps.toml");
    let a = parse(&plain, &plain_path, &[]);
    let b = parse(&units, &units_path, &[]);
    let engine = |c: &ExperimentConfig| {
        let mut v = serde_json::to_value(c).unwrap();
        v.as_object_mut().unwrap().remove("units");
        v
    };
    assert_eq!(engine(&a), engine(&b));
    let u = b.units.as_ref().unwrap();
    assert_eq!((u.flit_bytes, u.cycle_ns), (64, Some(64.0)));
    assert_eq!(u.link_rate.as_deref(), Some("8Gb/s"));
    assert_eq!(
        (b.run.warmup, b.run.measure, b.traffic.load),
        (10_000, 20_000, Some(0.5))
    );

    // Same results, apart from the hash (it covers [units]) and the physical twins.
    let ra = run(&plain, &plain_path, SHORT);
    let mut rb = run(&units, &units_path, SHORT);
    assert!(ra.physical.is_none());
    let twins = rb.physical.take().expect("[units] adds physical twins");
    assert_ne!(ra.config_hash, rb.config_hash);
    rb.config_hash = ra.config_hash.clone();
    rb.performance = ra.performance.clone();
    for c in &mut rb.per_sl {
        assert!(c.physical.take().is_some(), "per-class twins");
    }
    assert_eq!(ra, rb);

    // Closed forms: ns = cycles · 64; Gb/s = flits/cycle · 64 B · 8 / 64 ns; MB/s = · 1000 / 8.
    let ns = |c: Option<u64>| Some(c.unwrap() as f64 * 64.0);
    assert_eq!(twins.latency_ns.mean, Some(ra.latency.mean.unwrap() * 64.0));
    assert_eq!(twins.latency_ns.p50, ns(ra.latency.p50));
    assert_eq!(twins.latency_ns.p99, ns(ra.latency.p99));
    assert_eq!(twins.latency_ns.max, ns(ra.latency.max));
    assert_eq!(twins.network_latency_ns.p99, ns(ra.network_latency.p99));
    assert_eq!(twins.accepted_gbps, Some(ra.accepted_load.unwrap() * 8.0));
    assert_eq!(twins.offered_gbps, Some(ra.offered_load.unwrap() * 8.0));
    assert_eq!(
        twins.accepted_mbps,
        Some(ra.accepted_load.unwrap() * 1000.0)
    );
    assert!(twins.latency_ns.p50.unwrap() > 0.0);
}

#[test]
fn results_without_units_have_no_physical_keys_and_with_units_have_them() {
    let (plain, plain_path) = example("torus-8x8-uniform.toml");
    let json =
        flitsim_app::run_experiment_json(&plain, &plain_path, &common::sets(SHORT), None).unwrap();
    for key in [
        "latency_ns",
        "network_latency_ns",
        "accepted_gbps",
        "accepted_mbps",
        "offered_gbps",
        "units",
    ] {
        assert!(!json.contains(key), "{key}");
    }
    let (units, units_path) = example("units-torus-8gbps.toml");
    let json =
        flitsim_app::run_experiment_json(&units, &units_path, &common::sets(SHORT), None).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    for stat in ["mean", "p50", "p99", "max"] {
        assert!(v["latency_ns"][stat].is_f64(), "{stat}");
        assert!(v["network_latency_ns"][stat].is_f64(), "{stat}");
    }
    assert!(v["accepted_gbps"].is_f64() && v["accepted_mbps"].is_f64());
    assert_eq!(v["units"]["flit_bytes"], 64);
    assert_eq!(v["units"]["cycle_ns"], 64.0);
    // The result record round-trips through its JSON.
    let back: flitsim_sim::RunResult = serde_json::from_str(&json).unwrap();
    assert!(back.physical.is_some());
}

#[test]
fn a_non_integer_cycle_scales_the_twins_exactly() {
    // 100 Gb/s, 64-byte flits: 5.12 ns per cycle.
    let text = "[units]\nflit_bytes = 64\nlink_rate = \"100Gb/s\"\n[topology]\nkind = \"torus\"\nsides = [4, 4]\n[traffic]\nload = \"40Gb/s\"\n[run]\nwarmup = \"5.12us\"\nmeasure = \"10.24us\"\n";
    let cfg = parse(text, "t.toml", &[]);
    assert_eq!(
        (cfg.run.warmup, cfg.run.measure, cfg.traffic.load),
        (1000, 2000, Some(0.4))
    );
    let r = run(text, "t.toml", &[]);
    let p = r.physical.as_ref().unwrap();
    assert_eq!(p.latency_ns.p99, Some(r.latency.p99.unwrap() as f64 * 5.12));
    assert_eq!(
        p.accepted_gbps,
        Some(r.accepted_load.unwrap() * 64.0 / 5.12 * 8.0)
    );
}

#[test]
fn every_class_gets_physical_twins_of_its_figures() {
    let (units, units_path) = example("units-torus-8gbps.toml");
    let r = run(&units, &units_path, SHORT);
    let ns = 64.0; // 64-byte flits at 8 Gb/s
    for c in &r.per_sl {
        let p = c.physical.as_ref().expect("per-class twins with [units]");
        assert_eq!(
            p.message_latency_ns.mean,
            c.message_latency.mean.map(|v| v * ns)
        );
        assert_eq!(p.latency_ns.p99, c.latency.p99.map(|v| v as f64 * ns));
        assert_eq!(p.jitter_std_ns, c.jitter.std.map(|v| v * ns));
        assert_eq!(
            p.accepted_mbps,
            c.accepted_load.map(|l| l * 64.0 / ns * 1000.0)
        );
    }
    let (plain, plain_path) = example("torus-8x8-uniform.toml");
    let r = run(&plain, &plain_path, SHORT);
    assert!(r.per_sl.iter().all(|c| c.physical.is_none()));
}
