//! Explicit flows (`[[traffic.flow]]`) and flow sets (`[[traffic.flow_set]]`): expansion,
//! start/stop, per-flow counters against the class counters and the time series, units, and
//! the errors of bad flows.
mod common;
use common::{network, parse, run, run_err};
use flitsim_sim::config::FlowSetKind;

const BASE: &str = r#"
[topology]
kind = "torus"
sides = [4, 4]

[[traffic.class]]
name = "BE"
message_flits = 8

[run]
warmup = 1000
measure = 4000
"#;

fn with(extra: &str) -> String {
    format!("{BASE}{extra}")
}

const TWO_FLOWS: &str = r#"
[[traffic.flow]]
src = 0
dst = 5
rate = 0.2
start = 1500
stop = 3000
process = "cbr"

[[traffic.flow]]
src = 3
dst = 12
rate = 0.1
size = { dist = "uniform", min = 2, max = 10 }
"#;

#[test]
fn flows_alone_drive_the_fabric_and_report_per_flow() {
    let r = run(&with(TWO_FLOWS), "f.toml", &["run.timeseries_bin=250"]);
    assert!(r.drained && r.deadlock.is_none());
    let flows = r.flows.as_ref().expect("flows in the result");
    assert_eq!(flows.len(), 2);
    let (a, b) = (&flows[0], &flows[1]);
    assert_eq!((a.id, a.src, a.dst, a.class.as_str()), (0, 0, 5, "BE"));
    assert_eq!((a.start, a.stop), (1500, Some(3000)));
    assert_eq!((b.start, b.stop), (0, None));
    // CBR at 0.2 flits/cycle for 1500 cycles of the 4000-cycle window (8-flit messages every
    // 40 cycles): 37 or 38 messages.
    let a_msgs = a.generated_flits / 8;
    assert!((37..=38).contains(&a_msgs), "{a_msgs}");
    let want = 0.2 * 1500.0 / 4000.0;
    assert!(
        (a.offered_rate.unwrap() - want).abs() <= 8.0 / 4000.0,
        "{a:?}"
    );
    assert!((b.offered_rate.unwrap() - 0.1).abs() < 0.02, "{b:?}");
    // Everything generated is delivered (the run drained).
    for f in flows {
        assert_eq!(f.generated_flits, f.delivered_flits, "{f:?}");
        assert!(f.message_latency.count > 0);
        assert!(f.jitter.std.unwrap() >= 0.0);
    }
    // The flows are the only sources: their totals are the run's.
    let total: u64 = flows.iter().map(|f| f.generated_flits).sum();
    assert_eq!(total, r.flits.generated);
    let ts = r.timeseries.as_ref().unwrap();
    assert_eq!(ts.flows.len(), 2);
    for (f, s) in flows.iter().zip(&ts.flows) {
        assert_eq!(
            s.flits.iter().sum::<u64>(),
            f.delivered_flits,
            "series integrates"
        );
        assert_eq!(s.flits.len(), ts.classes[0].flits.len());
    }
    // Flow 0 delivers nothing before its start nor long after its stop (bins of 250 cycles:
    // the first 6 bins end at 1500; at this load a message takes well under 250 cycles).
    let s0 = &ts.flows[0].flits;
    assert!(s0[..6].iter().all(|&x| x == 0), "{s0:?}");
    assert!(s0[13..].iter().all(|&x| x == 0), "{s0:?}");
    // Class and flow message counts agree (every message is a flow's).
    let msgs: u64 = flows.iter().map(|f| f.message_latency.count).sum();
    assert_eq!(msgs, r.per_sl[0].message_latency.count);
}

#[test]
fn a_stopped_flow_delivers_only_inside_start_to_stop_plus_drain() {
    let cfg = parse(&with(TWO_FLOWS), "f.toml", &[]);
    let (mut net, _) = network(&cfg);
    net.enable_trace();
    let r = net.run().unwrap();
    assert!(r.drained);
    let mut n = 0;
    for d in net.deliveries().iter().filter(|d| d.src == 0) {
        n += 1;
        assert_eq!(d.dst, 5);
        assert!((1500..3000).contains(&d.generated), "{d:?}");
        assert!(d.delivered >= 1500 && d.delivered < 3000 + 200, "{d:?}");
    }
    assert!(n >= 37, "{n}");
}

#[test]
fn same_seed_same_result_and_flows_do_not_shift_class_streams() {
    let text = with(&format!(
        "{TWO_FLOWS}\n[[traffic.flow_set]]\nkind = \"random\"\ndests = 3\nrate = 0.01\n"
    ));
    let a = run(&text, "f.toml", &["seed=7"]);
    let b = run(&text, "f.toml", &["seed=7"]);
    let strip = |r: &flitsim_sim::RunResult| {
        let mut v = serde_json::to_value(r).unwrap();
        v.as_object_mut().unwrap().remove("performance");
        v
    };
    assert_eq!(strip(&a), strip(&b));
    let c = run(&text, "f.toml", &["seed=8"]);
    assert_ne!(strip(&a)["flows"], strip(&c)["flows"]);
}

#[test]
fn flow_sets_expand_as_documented() {
    let text = with(
        r#"
[[traffic.flow_set]]
kind = "all_pairs"
rate = 0.001

[[traffic.flow_set]]
kind = "permutation"
rate = 0.01

[[traffic.flow_set]]
kind = "random"
dests = 4
rate = 0.01
"#,
    );
    let cfg = parse(&text, "f.toml", &[]);
    let t = &cfg.traffic;
    assert_eq!(t.flow_sets[2].kind, FlowSetKind::Random);
    let flows = t.expand_flows(16, 3);
    assert_eq!(flows.len(), 16 * 15 + 16 + 16 * 4);
    // All pairs: every ordered pair of distinct endpoints once, by source then destination.
    let ap: Vec<(u32, u32)> = flows[..240].iter().map(|f| (f.src, f.dst)).collect();
    let want: Vec<(u32, u32)> = (0..16)
        .flat_map(|a| (0..16).filter(move |&b| b != a).map(move |b| (a, b)))
        .collect();
    assert_eq!(ap, want);
    // Permutation: a derangement.
    let perm = &flows[240..256];
    let mut dsts: Vec<u32> = perm.iter().map(|f| f.dst).collect();
    assert!(perm
        .iter()
        .enumerate()
        .all(|(i, f)| f.src == i as u32 && f.dst != f.src));
    dsts.sort_unstable();
    assert_eq!(dsts, (0..16).collect::<Vec<_>>());
    // Random: 4 distinct destinations per source, never itself.
    for a in 0..16u32 {
        let d: Vec<u32> = flows[256..]
            .iter()
            .filter(|f| f.src == a)
            .map(|f| f.dst)
            .collect();
        assert_eq!(d.len(), 4);
        assert!(
            d.windows(2).all(|w| w[0] < w[1]) && !d.contains(&a),
            "{d:?}"
        );
    }
    assert_eq!(flows, t.expand_flows(16, 3), "deterministic");
    assert_ne!(
        flows,
        t.expand_flows(16, 4),
        "the seed draws the permutation"
    );
}

#[test]
fn flows_take_physical_units_and_report_twins() {
    let text = format!(
        "{BASE}\n[units]\nflit_bytes = 64\nlink_rate = \"8Gb/s\"\n{}",
        r#"
[[traffic.flow]]
src = 1
dst = 14
rate = "100MB/s"
size = "1KiB"
process = "cbr"
start = "20us"
"#
    );
    let cfg = parse(&text, "f.toml", &[]);
    let f = &cfg.traffic.flows[0];
    // 8 Gb/s with 64-byte flits: a cycle is 64 ns. 100 MB/s = 6.4 bytes/ns = 0.1 flit/cycle.
    assert!((f.rate.unwrap() - 0.1).abs() < 1e-12);
    assert_eq!(f.start, 20_000 / 64 + 1, "20 us = 312.5 cycles, rounded up");
    let r = run(&text, "f.toml", &[]);
    let fr = &r.flows.as_ref().unwrap()[0];
    let p = fr.physical.as_ref().expect("physical twins");
    assert!((p.offered_mbps.unwrap() - 100.0).abs() < 3.0, "{p:?}");
    assert_eq!(p.delivered_bytes, fr.delivered_flits * 64);
    let v = serde_json::to_value(fr).unwrap();
    for k in [
        "offered_mbps",
        "accepted_mbps",
        "accepted_gbps",
        "message_latency_ns",
    ] {
        assert!(v.get(k).is_some(), "{k} in {v}");
    }
}

#[test]
fn flows_beside_classes_leave_results_without_flows_unchanged_in_shape() {
    let r = run(BASE, "f.toml", &["traffic.load=0.2"]);
    let v = serde_json::to_value(&r).unwrap();
    assert!(v.get("flows").is_none(), "no flows key without flows");
    let r = run(
        &with(TWO_FLOWS),
        "f.toml",
        &["traffic.load=0.2", "run.timeseries_bin=500"],
    );
    let flows: u64 = r.flows.unwrap().iter().map(|f| f.generated_flits).sum();
    assert!(
        r.flits.generated > flows,
        "class sources add their own traffic"
    );
}

#[test]
fn bad_flows_are_named() {
    let flow = |body: &str| with(&format!("[[traffic.flow]]\n{body}\n"));
    for (text, want) in [
        (
            flow("src = 0\ndst = 1\nrate = 0.1\nclass = \"VO\""),
            "traffic.flow[0].class: \"VO\" is not a class",
        ),
        (
            flow("src = 0\ndst = 16\nrate = 0.1"),
            "traffic.flow[0].dst: endpoint 16 does not exist",
        ),
        (
            flow("src = 99\ndst = 1\nrate = 0.1"),
            "traffic.flow[0].src: endpoint 99 does not exist",
        ),
        (
            flow("src = 0\ndst = 1\nrate = 0.1\nstart = 500\nstop = 400"),
            "traffic.flow[0].stop: 400 is not after start (500)",
        ),
        (
            flow("src = 0\ndst = 1\nrate = 0.1\npath = 1"),
            "traffic.flow[0].path: 1: the fabric offers 1 path per destination (0..=0)",
        ),
        (
            flow("src = 0\ndst = 1"),
            "traffic.flow[0].rate: is required",
        ),
        (
            flow("src = 0\ndst = 1\nrate = 0"),
            "traffic.flow[0].rate: 0: must be a positive number",
        ),
        (
            flow("src = 0\ndst = 1\nrate = 9"),
            "exceeds one message per cycle",
        ),
        (flow("src = 0\ndst = 1\nrate = \"3MB/s\""), "[units]"),
        (
            flow(
                "src = 0\ndst = 1\nrate = 0.1\nsize = { dist = \"pareto\", alpha = 1.5, min = 1 }",
            ),
            "traffic.flow[0].size",
        ),
        (
            with("[[traffic.flow_set]]\nkind = \"random\"\nrate = 0.1\n"),
            "traffic.flow_set[0].dests: is required",
        ),
        (
            with("[[traffic.flow_set]]\nkind = \"random\"\ndests = 16\nrate = 0.1\n"),
            "traffic.flow_set[0].dests: 16 exceeds the 15 other endpoints",
        ),
        (
            with("[[traffic.flow_set]]\nkind = \"all_pairs\"\ndests = 2\nrate = 0.1\n"),
            "applies only to kind = \"random\"",
        ),
        (
            with("[[traffic.flow_set]]\nkind = \"ring\"\nrate = 0.1\n"),
            "traffic.flow_set",
        ),
    ] {
        let e = run_err(&text, "f.toml", &[]);
        // "KEY: MESSAGE" expectations are written as the error shows them.
        let want = match want.split_once(": ") {
            Some((k, m)) if k.starts_with("traffic.") => format!("key `{k}`: {m}"),
            _ => want.to_string(),
        };
        assert!(e.contains(&want), "want {want:?} in: {e}");
    }
}

/// `run.per_flow_stats = false` drops the per-flow rows and nothing else; the key stays out of
/// the resolved configuration (and its hash) at its default.
#[test]
fn per_flow_stats_off_drops_only_the_flow_rows() {
    let text = with(TWO_FLOWS);
    let full = run(&text, "f.toml", &[]);
    let lean = run(&text, "f.toml", &["run.per_flow_stats=false"]);
    assert!(full.flows.is_some() && lean.flows.is_none());
    let strip = |r: &flitsim_sim::RunResult| {
        let mut v = serde_json::to_value(r).unwrap();
        let o = v.as_object_mut().unwrap();
        for k in ["performance", "flows", "config_hash"] {
            o.remove(k);
        }
        v
    };
    assert_eq!(strip(&full), strip(&lean));
    let cfg = parse(&text, "f.toml", &[]);
    let resolved = serde_json::to_string(&cfg).unwrap();
    assert!(!resolved.contains("per_flow_stats"), "{resolved}");
}
