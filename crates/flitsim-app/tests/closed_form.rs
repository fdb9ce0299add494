//! Closed-form micro-scenarios: a lone packet over k switches arrives after exactly
//! `(k + 1)·L + k·R + P − 1` cycles (link latency L, routing delay R, P flits), the latency the
//! engine's model documents (see `flitsim_sim::engine`). The tables are built by hand here, so
//! the check does not depend on any routing engine.
mod common;
use common::line;
use flitsim_sim::{ExperimentConfig, Network};

fn config(r: u32, p: u32, switching: &str, obuf: u32) -> ExperimentConfig {
    let text = format!(
        r#"
[topology]
kind = "mesh"
sides = [2]
[switch]
routing_delay = {r}
vl_buffer_flits = 32
switching = "{switching}"
output_buffer_flits = {obuf}
[traffic]
load = 0.0
[[traffic.class]]
name = "BE"
message_flits = {p}
[run]
warmup = 0
measure = 10
"#
    );
    ExperimentConfig::parse(&text, "closed_form", &[], None).unwrap()
}

fn lone_packet_latency(
    k: u32,
    l: u32,
    r: u32,
    p: u32,
    switching: &str,
    obuf: u32,
) -> (u64, u64, u16) {
    let (topo, fabric) = line(k, l);
    let cfg = config(r, p, switching, obuf);
    let mut net = Network::build(&cfg, &topo, fabric).unwrap();
    net.enable_trace();
    // From endpoint 0 (switch 0) to the second endpoint of switch k−1.
    let dst = (k - 1) * 2 + 1;
    net.inject_message(3, 0, dst, 0, p).unwrap();
    let res = net.run().unwrap();
    assert_eq!(net.deliveries().len(), 1);
    assert_eq!(res.flits.delivered, p as u64);
    assert_eq!(res.flits.remaining, 0);
    let d = net.deliveries()[0];
    (d.delivered - d.generated, d.delivered - d.injected, d.hops)
}

#[test]
fn lone_packet_latency_matches_the_closed_form() {
    // Output buffers (combined input/output queuing) add no latency to a lone packet: the
    // crossbar and the link stage both run in the cycle of the grant.
    for (switching, obuf) in [("vct", 0), ("wormhole", 0), ("vct", 16), ("wormhole", 4)] {
        for k in 1..=6u32 {
            for l in [1u32, 3] {
                for r in [0u32, 1, 2] {
                    for p in [1u32, 4, 16] {
                        let (lat, net_lat, hops) = lone_packet_latency(k, l, r, p, switching, obuf);
                        let expect = ((k + 1) * l + k * r + p - 1) as u64;
                        assert_eq!(
                            lat, expect,
                            "{switching} obuf={obuf} k={k} L={l} R={r} P={p}"
                        );
                        // Nothing queued at the NIC: network latency equals end-to-end latency.
                        assert_eq!(net_lat, expect);
                        assert_eq!(hops as u32, k);
                    }
                }
            }
        }
    }
}

#[test]
fn back_to_back_packets_pipeline_at_link_rate() {
    // Two 8-flit messages generated together over 3 switches: the second one's tail arrives
    // exactly 8 cycles after the first one's (the NIC link is the bottleneck).
    let (topo, fabric) = line(3, 1);
    let cfg = config(1, 8, "vct", 0);
    let mut net = Network::build(&cfg, &topo, fabric).unwrap();
    net.enable_trace();
    net.inject_message(0, 0, 5, 0, 8).unwrap();
    net.inject_message(0, 0, 5, 0, 8).unwrap();
    net.run().unwrap();
    let d = net.deliveries();
    assert_eq!(d.len(), 2);
    assert_eq!(d[0].delivered, (4 + 3 + 8 - 1) as u64);
    assert_eq!(d[1].delivered, d[0].delivered + 8);
}
