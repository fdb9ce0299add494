//! Packets inside messages (`traffic.packet_flits`, Cano-Cano et al. 2022 §3.3.1):
//!
//! - DTable keeps an SL's MTU together on every link it schedules (`qos.dtable.atomic =
//!   "link"`, the default): packets cross switches one by one, but a message's packets reach
//!   the destination back to back far more often than under round robin;
//! - with `atomic = "path"` a message moves as one unit along its whole path: it reaches the
//!   destination as one unit, and the results count its packets one by one;
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

/// The results count 2-flit packets and messages separately: every delivered message of an
/// SL brings its MTU's packets.
fn counts_packets_and_messages(r: &flitsim_sim::RunResult) {
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

/// A message: its source, class and generation cycle (CBR sources make these unique).
type MsgKey = (u32, u8, u64);

#[test]
fn dtable_along_the_path_moves_each_message_as_one_unit_and_counts_its_packets() {
    let (r, ds) = deliveries(&[
        "traffic.packet_flits=2",
        "traffic.load=0.5",
        "qos.scheduler=\"dtable\"",
        "qos.dtable.atomic=\"path\"",
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
    counts_packets_and_messages(&r);
    for c in &r.per_sl {
        // A message's latency is that of its last packet, the largest of them.
        assert!(
            c.message_latency.mean.unwrap() >= c.latency.mean.unwrap(),
            "{}",
            c.name
        );
    }
}

/// Per destination, in arrival order, the messages whose packets arrived with another
/// message's packet between them, and all messages.
fn interleaved_messages(ds: &[Delivery]) -> (usize, usize) {
    let mut by_dst: BTreeMap<u32, Vec<&Delivery>> = BTreeMap::new();
    for d in ds {
        by_dst.entry(d.dst).or_default().push(d);
    }
    let (mut interleaved, mut all) = (0, 0);
    for v in by_dst.values_mut() {
        v.sort_by_key(|d| (d.delivered, d.src, d.seq));
        let mut first: BTreeMap<MsgKey, usize> = BTreeMap::new();
        let mut last: BTreeMap<MsgKey, usize> = BTreeMap::new();
        for (i, d) in v.iter().enumerate() {
            let k = (d.src, d.class, d.generated);
            first.entry(k).or_insert(i);
            last.insert(k, i);
        }
        all += first.len();
        for (k, &f) in &first {
            let l = last[k];
            if v[f..=l].iter().any(|d| (d.src, d.class, d.generated) != *k) {
                interleaved += 1;
            }
        }
    }
    (interleaved, all)
}

/// Of the messages of more than one packet, the fraction whose packets left their NIC back
/// to back: consecutive in the source's injection order, each starting as the previous ends
/// (links move one flit per cycle).
fn whole_on_the_first_link(ds: &[Delivery]) -> f64 {
    let mut by_src: BTreeMap<u32, Vec<&Delivery>> = BTreeMap::new();
    for d in ds {
        by_src.entry(d.src).or_default().push(d);
    }
    let (mut whole, mut all) = (0, 0);
    for v in by_src.values_mut() {
        v.sort_by_key(|d| d.injected);
        let mut at: BTreeMap<MsgKey, Vec<usize>> = BTreeMap::new();
        for (i, d) in v.iter().enumerate() {
            at.entry((d.src, d.class, d.generated)).or_default().push(i);
        }
        for idx in at.values().filter(|idx| idx.len() > 1) {
            all += 1;
            if idx.windows(2).all(|w| {
                w[1] == w[0] + 1 && v[w[1]].injected == v[w[0]].injected + v[w[0]].len as u64
            }) {
                whole += 1;
            }
        }
    }
    whole as f64 / all as f64
}

/// DTable on links: the engine moves 2-flit packets (they cross the switches' crossbars one
/// by one) and every DTable port sends an MTU's packets back to back; results count packets
/// and messages.
#[test]
fn dtable_on_links_keeps_messages_together_between_packet_switched_crossbars() {
    let sets = |q: &str| {
        vec![
            "traffic.packet_flits=2".to_string(),
            "traffic.load=0.5".to_string(),
            format!("qos.scheduler=\"{q}\""),
        ]
    };
    let s = sets("dtable");
    let (r, ds) = deliveries(&s.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(r.drained && !ds.is_empty());
    assert!(ds.iter().all(|d| d.len == 2), "the engine moves packets");
    let (dt_split, dt_all) = interleaved_messages(&ds);
    let s = sets("rr");
    let (_, ds_rr) = deliveries(&s.iter().map(String::as_str).collect::<Vec<_>>());
    let (rr_split, rr_all) = interleaved_messages(&ds_rr);
    let dt = dt_split as f64 / dt_all as f64;
    let rr = rr_split as f64 / rr_all as f64;
    let (dt_first, rr_first) = (
        whole_on_the_first_link(&ds),
        whole_on_the_first_link(&ds_rr),
    );
    eprintln!(
        "messages interleaved at their destination: DTable {dt:.3}, RR {rr:.3}; \
         whole on the NIC's link: DTable {dt_first:.3}, RR {rr_first:.3}"
    );
    // Every NIC sends each message's packets back to back (they are all in its buffer when
    // the first starts); round robin interleaves the SLs' packets there.
    assert!(
        dt_first >= 0.99 && rr_first < 0.8,
        "{dt_first:.3}, {rr_first:.3}"
    );
    // Downstream, packets of one VL from different inputs may meet in an output buffer, and
    // an MTU ends early when its next packet has not reached the port: fewer messages arrive
    // whole than left whole, but fewer are split than under round robin.
    assert!(dt < rr, "DTable {dt:.3} against round robin {rr:.3}");
    counts_packets_and_messages(&r);
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
    let (interleaved, _) = interleaved_messages(&ds);
    assert!(interleaved > 0, "no message was interleaved with another");
    counts_packets_and_messages(&r);
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
