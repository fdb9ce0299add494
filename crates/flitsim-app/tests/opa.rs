//! The hierarchical Omni-Path switch (`switch.organisation = "opa"`, Cano-Cano et al. 2022 §2.2)
//! and the SL→SC→VL tables (`[qos.sc]`, Table 7).
//!
//! - a lone packet's latency follows the closed form of the crossbar model plus `2·R + 2`
//!   cycles for every switch it crosses between two MPorts (two more crossbars, each with its
//!   routing delay, and two internal links of one cycle);
//! - under the same scripted traffic, an Omni-Path fabric moves exactly the flits a crossbar
//!   fabric moves over every external link;
//! - the output schedulers keep their shares through the hierarchical switch;
//! - a torus under overload with Table 7's SCs neither deadlocks nor loses flits;
//! - bad configurations are refused with the key named.
mod common;
use common::{
    hotspot_tree, lone_packet_config, network, over_line, parse, run, run_err,
    OPA_QOS_TORUS as TORUS,
};
use flitsim_app::ExperimentConfig;
use std::collections::BTreeMap;

fn lone_config(r: u32, p: u32, switching: &str, ppm: u32) -> ExperimentConfig {
    let switch = format!(
        "organisation = \"opa\"\noutput_buffer_flits = 32\n\
         [switch.opa]\nports_per_mport = {ppm}\nmport_links = 1\ncentral_buffer_flits = 64"
    );
    lone_packet_config(r, p, switching, &switch, "opa")
}

#[test]
fn lone_packet_latency_adds_two_crossbars_per_mport_crossing() {
    for switching in ["vct", "wormhole"] {
        for ppm in [2u32, 4] {
            for k in 1..=4u32 {
                for l in [1u32, 3] {
                    for r in [0u32, 1, 2] {
                        for p in [1u32, 5, 16] {
                            let cfg = lone_config(r, p, switching, ppm);
                            let (res, deliveries) = over_line(&cfg, k, l, &[(3, p)]);
                            assert_eq!(res.flits.remaining, 0);
                            let d = deliveries[0];
                            // With MPorts of 2, the first switch (endpoint port 2 → port 0) and
                            // the last (port 1 → endpoint port 3) cross MPorts when k ≥ 2; the
                            // middle ones (1 → 0) do not. With MPorts of 4 nothing crosses.
                            let crossings = if ppm == 2 && k >= 2 { 2 } else { 0 };
                            let expect = (k + 1) * l + k * r + p - 1 + crossings * (2 * r + 2);
                            assert_eq!(
                                d.delivered - d.generated,
                                expect as u64,
                                "{switching} ppm={ppm} k={k} L={l} R={r} P={p}"
                            );
                            assert_eq!(d.hops as u32, k, "hops count fabric switches");
                        }
                    }
                }
            }
        }
    }
}

/// Flits per (switch, port) over external switch ports, from a run's port table.
fn external_port_flits(r: &flitsim_sim::RunResult) -> BTreeMap<(String, u32), u64> {
    r.ports
        .iter()
        .filter(|p| !p.switch.contains('/'))
        .map(|p| ((p.switch.clone(), p.port), p.vl_flits.iter().sum()))
        .collect()
}

#[test]
fn scripted_traffic_crosses_the_same_external_links_as_in_a_crossbar() {
    let mut results = Vec::new();
    for org in ["crossbar", "opa"] {
        let organisation = format!("switch.organisation=\"{org}\"");
        let mut cfg = parse(
            TORUS,
            "torus",
            &[
                &organisation,
                "run.warmup=0",
                "run.measure=4000",
                "run.drain_max=20000",
            ],
        );
        // Only the scripted messages (a file cannot set `traffic.load = 0`; the engine can).
        cfg.traffic.load = Some(0.0);
        let (mut net, topo) = network(&cfg);
        let n = topo.num_endpoints() as u32;
        let mut x: u64 = 12345;
        for i in 0..600u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let src = ((x >> 33) % n as u64) as u32;
            let dst = ((x >> 13) % n as u64) as u32;
            let class = ((x >> 5) % 5) as u8;
            let flits = [2, 4, 8, 16, 16][class as usize];
            net.inject_message(i * 3, src, dst, class, flits).unwrap();
        }
        let r = net.run().unwrap();
        assert!(r.deadlock.is_none(), "{org}: deadlock");
        assert_eq!(r.flits.remaining, 0, "{org}: everything delivered");
        results.push(r);
    }
    let (x, o) = (&results[0], &results[1]);
    assert_eq!(x.flits.delivered, o.flits.delivered);
    assert_eq!(x.performance.flit_hops, o.performance.flit_hops);
    assert_eq!(x.hops_mean.unwrap(), o.hops_mean.unwrap());
    let (xp, op) = (external_port_flits(x), external_port_flits(o));
    assert!(!xp.is_empty());
    assert_eq!(xp, op, "per external port flits");
    // The hierarchical switch reports its internal ports under its MPort and central names.
    assert!(o.ports.iter().any(|p| p.switch.ends_with("/central")));
    assert!(o.ports.iter().any(|p| p.switch.ends_with("/m0")));
    // Internal stages cost latency.
    assert!(o.latency.mean.unwrap() > x.latency.mean.unwrap());
}

#[test]
fn overloaded_torus_with_table7_scs_neither_deadlocks_nor_loses_flits() {
    for sched in ["rr", "sbt", "dtable"] {
        let scheduler = format!("qos.scheduler=\"{sched}\"");
        let r = run(
            TORUS,
            "torus",
            &[
                "switch.organisation=\"opa\"",
                &scheduler,
                "routing.verify=true",
            ],
        );
        assert!(r.deadlock.is_none(), "{sched}");
        assert!(r.cdg.as_ref().unwrap().deadlock_free, "{sched}");
        assert_eq!(
            r.flits.generated,
            r.flits.delivered + r.flits.remaining,
            "{sched}"
        );
        assert!(r.saturated, "{sched}: load 1.0 saturates the 4×4 torus");
        let names: Vec<&str> = r.per_sl.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["VO", "VI", "CL", "BE", "BK"]);
    }
}

/// The hot-spot tree of the QoS tests over hierarchical switches with MPorts of 2 ports.
fn hotspot() -> String {
    hotspot_tree(
        "organisation = \"opa\"\n[switch.opa]\nports_per_mport = 2\nmport_links = 1\n\
         central_buffer_flits = 256",
        "",
    )
}

#[test]
fn dtable_shares_hold_through_the_hierarchical_switch() {
    // Every endpoint sends to one hot endpoint: the MPort and central crossbars (3 and 4
    // flits/cycle) fill the hot port's output buffer and its DTable decides the split.
    for shares in [[0.25, 0.75], [0.6, 0.4]] {
        let shares_set = format!("qos.dtable.shares=[{},{}]", shares[0], shares[1]);
        let r = run(&hotspot(), "hotspot", &[&shares_set]);
        assert!(r.saturated);
        let a = r.per_sl[0].share.unwrap();
        assert!((a - shares[0]).abs() <= 0.02, "share of A {a:.4}");
    }
    // Round robin alternates packets: flits split 2 : 16.
    let r = run(&hotspot(), "hotspot", &["qos.scheduler=\"rr\""]);
    let a = r.per_sl[0].share.unwrap();
    assert!((a - 2.0 / 18.0).abs() <= 0.02, "RR share of A {a:.4}");
}

fn build_error(sets: &[&str]) -> String {
    run_err(TORUS, "torus", sets)
}

#[test]
fn bad_configurations_name_the_key() {
    let opa = "switch.organisation=\"opa\"";
    let e = build_error(&[
        opa,
        "switch.shared_output_buffer.total_flits=0",
        "run.measure=1",
    ]);
    assert!(e.contains("switch.shared_output_buffer"), "{e}");
    let e = build_error(&[opa, "switch.opa.central_buffer_flits=100"]);
    assert!(e.contains("switch.opa.central_buffer_flits"), "{e}");
    let e = build_error(&[opa, "switch.shared_buffer.max_per_vl=8"]);
    assert!(e.contains("switch.shared_buffer"), "{e}");
    let e = build_error(&[opa, "switch.opa.central_output_flits=8"]);
    assert!(
        e.contains("switch.opa.central_output_flits") && e.contains("largest MTU"),
        "{e}"
    );
    let e = build_error(&["qos.sc.sc2vl=[0,1,2,3,4,5,6,7,6]"]);
    assert!(e.contains("SC 9 (of BK) is mapped to no VL"), "{e}");
    let e = build_error(&["qos.sc.sl2sc=[[0,1],[2,3],[4,5],[6,7]]"]);
    assert!(
        e.contains("qos.sc.sl2sc: 4 rows for 5 traffic classes"),
        "{e}"
    );
    let e = build_error(&["routing.vls=6"]);
    assert!(e.contains("only 6 VLs"), "{e}");
    let e = build_error(&[
        "qos.dtable.shares=[0.9,0.025,0.025,0.025,0.025]",
        "qos.dtable.max_distance=[64,4,8,16,16]",
    ]);
    assert!(e.contains("qos.dtable"), "{e}");
}

#[test]
fn opa_without_output_buffers_is_refused() {
    let text = TORUS.replace(
        "shared_output_buffer = { total_flits = 256, min_per_vl = 16, max_per_vl = 256 }\n",
        "",
    );
    let e = run_err(&text, "torus", &["switch.organisation=\"opa\""]);
    assert!(e.contains("needs output buffers"), "{e}");
}

#[test]
fn dtable_shares_hold_with_packets_inside_messages() {
    // 2-flit packets: DTable still sends whole messages and keeps its split at saturation;
    // round robin now alternates 2-flit packets of both classes, an even split.
    for shares in [[0.25, 0.75], [0.6, 0.4]] {
        let shares_set = format!("qos.dtable.shares=[{},{}]", shares[0], shares[1]);
        let r = run(
            &hotspot(),
            "hotspot",
            &[&shares_set, "traffic.packet_flits=2"],
        );
        assert!(r.saturated);
        let a = r.per_sl[0].share.unwrap();
        assert!((a - shares[0]).abs() <= 0.02, "share of A {a:.4}");
    }
    let r = run(
        &hotspot(),
        "hotspot",
        &["qos.scheduler=\"rr\"", "traffic.packet_flits=2"],
    );
    let a = r.per_sl[0].share.unwrap();
    assert!((a - 0.5).abs() <= 0.02, "RR share of A {a:.4}");
}

#[test]
fn internal_routing_delay_zero_charges_the_routing_delay_once_per_switch() {
    // MPorts of 2: the first and last switch of a line of k ≥ 2 cross MPorts. With the
    // internal delay at 0 a crossing costs only the two internal links.
    for r in [1u32, 2] {
        for k in [2u32, 3] {
            let mut cfg = lone_config(r, 4, "vct", 2);
            cfg.switch.opa.internal_routing_delay = Some(0);
            let (res, deliveries) = over_line(&cfg, k, 1, &[(3, 4)]);
            assert_eq!(res.flits.remaining, 0);
            let expect = (k + 1) + k * r + 4 - 1 + 2 * 2;
            assert_eq!(
                deliveries[0].delivered - deliveries[0].generated,
                expect as u64,
                "R={r} k={k}"
            );
        }
    }
}

#[test]
fn shared_nic_buffer_and_central_maxima_run_and_are_checked() {
    let opa = "switch.organisation=\"opa\"";
    let r = run(
        TORUS,
        "torus",
        &[
            opa,
            "nic.shared_buffer={total_flits=256,min_per_vl=16,max_per_vl=256}",
            "switch.opa.central_max_per_vl=64",
            "traffic.load=0.5",
            "run.drain_max=5000",
        ],
    );
    assert!(r.drained && r.deadlock.is_none());
    // Flows spread over both links of an MPort: same traffic, nothing lost, no deadlock.
    let flow = run(
        TORUS,
        "torus",
        &[
            opa,
            "switch.opa.link_choice=\"flow\"",
            "traffic.load=0.5",
            "run.drain_max=5000",
        ],
    );
    assert!(flow.drained && flow.deadlock.is_none());
    assert_eq!(
        flow.flits.generated,
        flow.flits.delivered + flow.flits.remaining
    );
    let e = build_error(&[
        opa,
        "nic.shared_buffer={total_flits=64,min_per_vl=16,max_per_vl=64}",
    ]);
    assert!(e.contains("nic.shared_buffer"), "{e}");
    let e = build_error(&[
        opa,
        "nic.shared_buffer={total_flits=256,min_per_vl=2,max_per_vl=8}",
    ]);
    assert!(
        e.contains("nic.shared_buffer") && e.contains("largest MTU"),
        "{e}"
    );
    let e = build_error(&[opa, "switch.opa.central_max_per_vl=8"]);
    assert!(e.contains("switch.opa.central_max_per_vl"), "{e}");
}

/// One 8-port switch of two MPorts (ports 0–3 and 4–7), each with two links of one flit per
/// cycle to the central crossbar. Endpoints 0 and 1 each send `n` 16-flit messages at cycle 0,
/// to endpoints 4 and 5. Returns the cycle the last one is delivered.
fn two_inputs_one_link(choice: &str, n: u64) -> u64 {
    let text = r#"
[topology]
kind = "kary_ntree"
k = 8
n = 1
[switch]
organisation = "opa"
output_buffer_flits = 64
vl_buffer_flits = 64
[switch.opa]
ports_per_mport = 4
mport_links = 2
mport_link_width = 1
central_buffer_flits = 256
[traffic]
load = 0.1
[[traffic.class]]
name = "BE"
message_flits = 16
[run]
warmup = 0
measure = 100
drain_max = 100000
"#;
    let choice_set = format!("switch.opa.link_choice=\"{choice}\"");
    let mut cfg = parse(text, "one-switch", &[&choice_set]);
    cfg.traffic.load = Some(0.0);
    let (mut net, _) = network(&cfg);
    net.enable_trace();
    for i in 0..n {
        net.inject_message(i, 0, 4, 0, 16).unwrap();
        net.inject_message(i, 1, 5, 0, 16).unwrap();
    }
    let r = net.run().unwrap();
    assert_eq!(r.flits.remaining, 0, "{choice}");
    assert!(r.deadlock.is_none(), "{choice}");
    let d = net.deliveries();
    assert_eq!(d.len() as u64, 2 * n, "{choice}");
    d.iter().map(|d| d.delivered).max().unwrap()
}

#[test]
fn free_link_choice_lets_two_inputs_of_one_link_use_both() {
    // Inputs 0 and 1 of an MPort are bound to its link 0 (`"input"`): their 2·n·16 flits
    // cross one link of one flit per cycle, so the last arrives after at least 2·n·16 cycles.
    // With `"free"` the second input takes link 1 while link 0 is busy: each flow has a link
    // of its own and its n·16 flits arrive in n·16 cycles plus the lone packet's latency.
    let n = 40;
    let bound = two_inputs_one_link("input", n);
    assert!(bound >= 2 * n * 16, "input: last delivery at {bound}");
    let free = two_inputs_one_link("free", n);
    assert!(free <= n * 16 + 40, "free: last delivery at {free}");
}

#[test]
fn central_buffers_hold_packets_under_their_arrival_vl() {
    // The 4×4 torus with Table 7's SCs: lane 0 before a dimension's dateline and at each turn,
    // lane 1 after it, so many packets leave a switch on another VL than they arrived on. A
    // central buffer serves every output of its switch; keyed by the exit VL it would mix
    // lane-1 packets turning into the next dimension with lane-0 packets going on (a
    // dependency the routing does not have: it deadlocked the 8×8 torus of the paper's
    // scenario). So the MPort's link to the central crossbar carries a packet on the VL it
    // arrived on, and from the central crossbar on it takes the VL it leaves the switch on.
    let mut cfg = parse(
        TORUS,
        "torus",
        &[
            "switch.organisation=\"opa\"",
            "run.warmup=0",
            "run.measure=2000",
            "run.drain_max=50000",
        ],
    );
    cfg.traffic.load = Some(0.0);
    let (mut net, topo) = network(&cfg);
    net.enable_route_trace();
    let n = topo.num_endpoints() as u32;
    for src in 0..n {
        for k in 1..n {
            let dst = (src + k) % n;
            net.inject_message(u64::from(src * 7 + k * 13) % 1500, src, dst, 2, 8)
                .unwrap();
        }
    }
    let r = net.run().unwrap();
    assert_eq!(r.flits.remaining, 0);
    let mut by_packet: BTreeMap<(u32, u64), Vec<flitsim_sim::RouteHop>> = BTreeMap::new();
    for h in net.route_trace() {
        by_packet.entry((h.src, h.seq)).or_default().push(*h);
    }
    let (ppm, links) = (4u16, 2u16);
    let (mut crossings, mut vl_changes) = (0, 0);
    for hops in by_packet.values() {
        for i in 1..hops.len() {
            let h = hops[i];
            if h.in_port < ppm && (ppm..ppm + links).contains(&h.out_port) {
                // Through the central crossbar: MPort → central → the output's MPort.
                let (central, out) = (hops[i + 1], hops[i + 2]);
                assert_eq!(
                    h.vl,
                    hops[i - 1].vl,
                    "the link to the central buffer: arrival VL"
                );
                assert_eq!(central.vl, out.vl, "from the central crossbar on: exit VL");
                crossings += 1;
                vl_changes += usize::from(h.vl != out.vl);
            }
        }
    }
    assert!(crossings > 1000, "{crossings} central crossings");
    assert!(vl_changes > 0, "some packets change VL in a switch");
}
