//! Message-level results: message latency and jitter per class, and the delivered-flits time
//! series (`run.timeseries_bin`).
mod common;
use common::{network, parse};
use flitsim_sim::stats::Histogram;
use flitsim_sim::RunResult;
use std::collections::HashMap;

const TREE: &str = r#"
seed = 3
[topology]
kind = "kary_ntree"
k = 4
n = 2
[routing]
vls = 2
[traffic]
load = 0.5
[[traffic.class]]
name = "A"
share = 1
message_flits = 8
[[traffic.class]]
name = "B"
share = 1
message_flits = 40
mtu_flits = 16
[run]
warmup = 1000
measure = 4000
"#;

#[test]
fn single_packet_messages_have_the_packet_latency() {
    let r = common::run(TREE, "t", &[]);
    let a = &r.per_sl[0];
    assert!(a.latency.count > 100);
    assert_eq!(a.message_latency, a.latency);
    // Class B: 40 flits in packets of 16, 16 and 8.
    let b = &r.per_sl[1];
    assert_eq!(b.message_latency.count * 3, b.latency.count);
    assert!(b.message_latency.mean.unwrap() > b.latency.mean.unwrap());
    assert!(b.message_latency.max.unwrap() >= b.latency.max.unwrap());
    for c in &r.per_sl {
        let j = &c.jitter;
        assert!(j.std.unwrap() > 0.0);
        assert_eq!(
            j.p99_minus_p50.unwrap(),
            c.message_latency.p99.unwrap() - c.message_latency.p50.unwrap()
        );
    }
}

/// Message latencies recomputed from the packet trace: a message is identified by its source,
/// class and generation cycle (a source generates at most one message per cycle).
#[test]
fn message_latency_and_jitter_agree_with_the_packet_trace() {
    let cfg = parse(TREE, "t", &[]);
    let (mut net, _) = network(&cfg);
    net.enable_trace();
    let r = net.run().unwrap();
    let (w0, w1) = (1000, 5000);
    let mut last: HashMap<(u32, u8, u64), (u64, u32)> = HashMap::new();
    for d in net.deliveries() {
        if d.generated >= w0 && d.generated < w1 {
            let e = last.entry((d.src, d.class, d.generated)).or_insert((0, 0));
            e.0 = e.0.max(d.delivered);
            e.1 += d.len as u32;
        }
    }
    for (c, size) in [(0u8, 8u32), (1, 40)] {
        let lats: Vec<u64> = last
            .iter()
            .filter(|(k, _)| k.1 == c)
            .map(|(k, v)| {
                assert_eq!(v.1, size, "every measured message complete");
                v.0 - k.2
            })
            .collect();
        let mut h = Histogram::default();
        lats.iter().for_each(|&l| h.add(l));
        let s = &r.per_sl[c as usize];
        assert_eq!(s.message_latency, h.summary());
        let n = lats.len() as f64;
        let mean = lats.iter().sum::<u64>() as f64 / n;
        let var = lats.iter().map(|&l| (l as f64 - mean).powi(2)).sum::<f64>() / n;
        let std = s.jitter.std.unwrap();
        assert!(
            (std - var.sqrt()).abs() < 1e-9 * var.sqrt(),
            "{std} vs {}",
            var.sqrt()
        );
    }
}

#[test]
fn without_timeseries_bin_there_is_no_time_series() {
    let r = common::run(TREE, "t", &[]);
    assert!(r.timeseries.is_none());
    let json = serde_json::to_value(&r).unwrap();
    assert!(json.get("timeseries").is_none());
    let row = &json["per_sl"][1];
    assert!(row["message_latency"]["p99"].is_u64());
    assert!(row["jitter"]["std"].is_f64());
}

fn series_sums(r: &RunResult) -> Vec<u64> {
    let ts = r.timeseries.as_ref().expect("time series configured");
    ts.classes.iter().map(|c| c.flits.iter().sum()).collect()
}

#[test]
fn the_time_series_sums_to_the_delivered_flits_and_to_accepted_load_in_the_window() {
    let r = common::run(TREE, "t", &["run.timeseries_bin=100"]);
    let ts = r.timeseries.as_ref().unwrap();
    assert_eq!(ts.bin, 100);
    assert_eq!(ts.classes.len(), 2);
    assert_eq!(ts.classes[1].name, "B");
    let bins = r.cycles.total.div_ceil(100) as usize;
    assert!(ts.classes.iter().all(|c| c.flits.len() == bins));
    assert_eq!(series_sums(&r).iter().sum::<u64>(), r.flits.delivered);
    // The window is bins 10..50.
    for (c, s) in r.per_sl.iter().zip(&ts.classes) {
        let window: u64 = s.flits[10..50].iter().sum();
        let accepted = c.accepted_load.unwrap() * 4000.0 * r.endpoints as f64;
        assert_eq!(window, accepted.round() as u64, "{}", c.name);
    }
    // Flits are delivered in warm-up too.
    assert!(ts.classes[0].flits[..10].iter().sum::<u64>() > 0);
    // The time series changes nothing else.
    let mut plain = common::run(TREE, "t", &[]);
    let mut with = r.clone();
    with.timeseries = None;
    with.config_hash.clear();
    plain.config_hash.clear();
    with.performance = plain.performance.clone();
    assert_eq!(with, plain);
}

/// Scripted messages only (the sources' load is too small to generate any), all in the window:
/// every one is delivered, so each class's series sums exactly to the flits injected in it.
#[test]
fn each_class_series_sums_to_its_delivered_flits() {
    let cfg = parse(TREE, "t", &["traffic.load=1e-12", "run.timeseries_bin=7"]);
    let (mut net, _) = network(&cfg);
    let mut sent = [0u64; 2];
    for i in 0..200u64 {
        let (class, flits) = if i % 3 == 0 {
            (1u8, 40u32)
        } else {
            (0, 8 + (i % 5) as u32)
        };
        let src = (i % 16) as u32;
        let dst = ((i * 7 + 3) % 16) as u32;
        net.inject_message(1000 + i * 13, src, dst, class, flits)
            .unwrap();
        sent[class as usize] += flits as u64;
    }
    let r = net.run().unwrap();
    assert_eq!(r.flits.remaining, 0);
    assert_eq!(r.flits.generated, sent.iter().sum::<u64>());
    assert_eq!(series_sums(&r), sent.to_vec());
    // Every scripted message was measured: message counts are the injected counts.
    assert_eq!(r.per_sl[1].message_latency.count, 67);
    assert_eq!(r.per_sl[0].message_latency.count, 133);
}

#[test]
fn a_zero_timeseries_bin_is_an_error_naming_the_key() {
    let e = common::run_err(TREE, "t", &["run.timeseries_bin=0"]);
    assert!(e.contains("run.timeseries_bin"), "{e}");
}

#[test]
fn the_time_series_bin_takes_a_time_with_units() {
    let text = format!("{TREE}\n[units]\nflit_bytes = 64\ncycle_ns = 64\n");
    let r = common::run(&text, "t", &["run.timeseries_bin=\"640ns\""]);
    assert_eq!(r.timeseries.unwrap().bin, 10);
}

/// `run.port_timeseries`: one series per row of the `ports` table, the window's bins summing
/// to the table's flits; without it (or without bins) there is none.
#[test]
fn the_port_time_series_sums_to_the_ports_table_in_the_window() {
    let r = common::run(
        TREE,
        "t",
        &["run.timeseries_bin=100", "run.port_timeseries=true"],
    );
    let ts = r.timeseries.as_ref().unwrap();
    assert_eq!(ts.ports.len(), r.ports.len());
    let bins = ts.classes[0].flits.len();
    for (row, series) in r.ports.iter().zip(&ts.ports) {
        assert_eq!((&row.switch, row.port), (&series.switch, series.port));
        assert_eq!(series.flits.len(), bins);
        // The window is bins 10..50 (warm-up 1000, measure 4000).
        let window: u64 = series.flits[10..50].iter().sum();
        assert_eq!(
            window,
            row.vl_flits.iter().sum::<u64>(),
            "{} {}",
            row.switch,
            row.port
        );
    }
    assert!(ts.ports.iter().any(|p| p.flits.iter().sum::<u64>() > 0));
    // Every switch's buffered flits per bin: as many bins, never negative, some non-zero.
    let names: std::collections::BTreeSet<_> = r.ports.iter().map(|p| &p.switch).collect();
    assert_eq!(ts.switches.len(), names.len());
    for sw in &ts.switches {
        assert!(names.contains(&sw.switch), "{}", sw.switch);
        assert_eq!(sw.flits.len(), bins);
        assert!(sw.flits.iter().all(|&f| f >= 0.0));
    }
    assert!(ts.switches.iter().any(|s| s.flits.iter().any(|&f| f > 0.0)));
    let plain = common::run(TREE, "t", &["run.timeseries_bin=100"]);
    let plain = plain.timeseries.unwrap();
    assert!(plain.ports.is_empty() && plain.switches.is_empty());
    let e = common::run_err(TREE, "t", &["run.port_timeseries=true"]);
    assert!(e.contains("run.port_timeseries"), "{e}");
}
