//! Packets inside messages (`traffic.packet_flits`, Cano-Cano et al. 2022 §3.3.1):
//!
//! - DTable sends an SL's message atomically: it reaches the destination as one unit, its
//!   packets back to back, and the results count its packets one by one;
//! - round robin arbitrates per packet, so packets of different messages interleave;
//! - `packet_flits = 0` reproduces the single-packet messages of earlier versions byte for byte
//!   (golden output, `tests/data/opa-small-*.json`: of the version before packets until
//!   session 18, regenerated then for the central buffers' arrival-VL keys, a Breaking change);
//! - the packet size is checked and accepts a size with `[units]`.
mod common;
use common::{network, parse, run_err};
use flitsim_app::run_experiment_json;
use flitsim_sim::Delivery;
use std::collections::{BTreeMap, BTreeSet};

const SMALL: &str = include_str!("data/opa-small.toml");
/// Message (= MTU) sizes of the five SLs, flits.
const MESSAGE: [u16; 5] = [2, 4, 8, 16, 16];

fn deliveries(overrides: &[&str]) -> (flitsim_sim::RunResult, Vec<Delivery>) {
    let cfg = parse(SMALL, "opa-small", overrides);
    let (mut net, _) = network(&cfg);
    net.enable_trace();
    let r = net.run().unwrap();
    (r, net.deliveries().to_vec())
}

/// A message: its source, class and generation cycle (CBR sources make these unique).
type MsgKey = (u32, u8, u64);

#[test]
fn dtable_sends_each_message_atomically_and_counts_its_packets() {
    let (r, ds) = deliveries(&[
        "traffic.packet_flits=2",
        "traffic.load=0.5",
        "qos.scheduler=\"dtable\"",
    ]);
    assert!(r.drained && !ds.is_empty());
    // Each delivered unit is a whole message of its SL: its packets crossed every link back
    // to back on one VL, nothing in between.
    for d in &ds {
        assert_eq!(d.len, MESSAGE[d.class as usize], "{d:?}");
    }
    // One unit per message.
    let keys: BTreeSet<MsgKey> = ds.iter().map(|d| (d.src, d.class, d.generated)).collect();
    assert_eq!(keys.len(), ds.len());
    // The results count packets of 2 flits and messages separately.
    for c in &r.per_sl {
        let packets = (MESSAGE[c.sl as usize] / 2) as u64;
        assert_eq!(
            c.latency.count,
            c.message_latency.count * packets,
            "{}",
            c.name
        );
        // A message's latency is that of its last packet, the largest of them.
        assert!(
            c.message_latency.mean.unwrap() >= c.latency.mean.unwrap(),
            "{}",
            c.name
        );
    }
}

#[test]
fn round_robin_interleaves_packets_of_different_messages() {
    let (r, ds) = deliveries(&[
        "traffic.packet_flits=2",
        "traffic.load=0.5",
        "qos.scheduler=\"rr\"",
    ]);
    assert!(r.drained);
    assert!(ds.iter().all(|d| d.len <= 2));
    // At some destination, a packet of another message arrives between two packets of one
    // message.
    let mut by_dst: BTreeMap<u32, Vec<&Delivery>> = BTreeMap::new();
    for d in &ds {
        by_dst.entry(d.dst).or_default().push(d);
    }
    let mut interleaved = 0;
    for v in by_dst.values_mut() {
        v.sort_by_key(|d| (d.delivered, d.src, d.seq));
        let mut first: BTreeMap<MsgKey, usize> = BTreeMap::new();
        let mut last: BTreeMap<MsgKey, usize> = BTreeMap::new();
        for (i, d) in v.iter().enumerate() {
            let k = (d.src, d.class, d.generated);
            first.entry(k).or_insert(i);
            last.insert(k, i);
        }
        for (k, &f) in &first {
            let l = last[k];
            if v[f..=l].iter().any(|d| (d.src, d.class, d.generated) != *k) {
                interleaved += 1;
            }
        }
    }
    assert!(interleaved > 0, "no message was interleaved with another");
    for c in &r.per_sl {
        let packets = (MESSAGE[c.sl as usize] / 2) as u64;
        assert_eq!(
            c.latency.count,
            c.message_latency.count * packets,
            "{}",
            c.name
        );
    }
}

/// A result's JSON up to its wall-clock figures (`performance`, the last key).
fn without_performance(json: &str) -> &str {
    &json[..json
        .find(",\"performance\":")
        .expect("performance is reported")]
}

#[test]
fn packet_flits_zero_reproduces_single_packet_messages() {
    for (q, golden) in [
        ("rr", include_str!("data/opa-small-rr.json")),
        ("dtable", include_str!("data/opa-small-dtable.json")),
    ] {
        let set = format!("qos.scheduler=\"{q}\"");
        let sets = [set, "traffic.packet_flits=0".to_string()];
        let got = run_experiment_json(SMALL, "data/opa-small.toml", &sets, None).unwrap();
        assert!(
            without_performance(&got) == golden.trim_end(),
            "{q}: the output differs from the single-packet golden"
        );
    }
}

#[test]
fn packet_size_is_checked_and_takes_units() {
    let e = run_err(SMALL, "opa-small", &["traffic.packet_flits=70000"]);
    assert!(e.contains("traffic.packet_flits"), "{e}");
    let cfg = parse(
        SMALL,
        "opa-small",
        &[
            "units.flit_bytes=64",
            "units.cycle_ns=5.12",
            "traffic.packet_flits=\"128B\"",
        ],
    );
    assert_eq!(cfg.traffic.packet_flits, 2);
}
