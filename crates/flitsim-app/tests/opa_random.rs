//! Random hierarchical Omni-Path fabrics (issue 19's check that the engine's speed-ups change no
//! result, on the switch model they were tuned for): small tori of Omni-Path switches (the
//! Omni-Path tests' QoS torus, reshaped by overrides) with random MPort sizes, internal link
//! counts and widths, central and staging buffers, internal routing delays, link choices, output
//! schedulers, buffer organisations, switching modes, link latencies and loads up to overload.
//! Every case must
//!
//! - keep the engine's flow-control invariants in every cycle (`run.check_invariants = 1`: credit
//!   and buffer counts against the queues, settled switches, waiting sets);
//! - neither deadlock nor lose a flit (generated = delivered + remaining), drain below
//!   saturation, and deliver each (source, destination, class)'s packets in order (unless
//!   packets may take any internal link, `link_choice = "free"`);
//! - give byte-identical results on two and three threads as on one, and with the switches and
//!   NICs visited in shuffled orders within each cycle.
//!
//! The suite runs 12 cases (about 25 s in a debug build); `PROPTEST_CASES=400 cargo test
//! --release -p flitsim-app --test opa_random` runs more.
mod common;
use common::{network, parse, same_in_shuffled_orders, without_performance, OPA_QOS_TORUS};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    #[test]
    fn random_omni_path_fabrics_conserve_flits_and_do_not_depend_on_threads_or_order(
        seed in 0u64..1000,
        sides in prop::sample::select(vec!["[3]", "[2,3]", "[3,3]"]),
        per_switch in 1u32..4,
        trunk in 1u32..3,
        latency in 1u32..4,
        shared in any::<bool>(),
        wormhole in prop::sample::select(vec![false, false, true]),
        rdelay in 0u32..4,
        ppm in prop::sample::select(vec![1u32, 2, 3, 4]),
        links in 0u32..3,
        link_width in 1u32..5,
        central_width in 1u32..6,
        central_per_link in prop::sample::select(vec![160u32, 256, 512]),
        staging in prop::sample::select(vec![16u32, 32, 64]),
        internal_delay in prop::sample::select(vec![None, Some(0u32), Some(1), Some(3)]),
        choice in prop::sample::select(vec!["input", "flow", "free"]),
        scheduler in prop::sample::select(vec!["rr", "sbt", "dtable"]),
        load in 0.05f64..1.3,
        cbr in any::<bool>(),
    ) {
        // At most one link per external port of the MPort.
        let links = 1 + links % ppm;
        // Shared input and output buffers, or static ones (each VL's minimum is its maximum).
        let buffer = if shared {
            "{total_flits=192,min_per_vl=16,max_per_vl=128}"
        } else {
            "{total_flits=192,min_per_vl=24,max_per_vl=24}"
        };
        let mut sets = vec![
            format!("seed={seed}"),
            format!("topology.sides={sides}"),
            format!("topology.endpoints_per_switch={per_switch}"),
            format!("topology.trunk={trunk}"),
            format!("topology.link_latency={latency}"),
            "switch.organisation=\"opa\"".to_string(),
            format!("switch.switching=\"{}\"", if wormhole { "wormhole" } else { "vct" }),
            format!("switch.routing_delay={rdelay}"),
            format!("switch.shared_buffer={buffer}"),
            format!("switch.shared_output_buffer={buffer}"),
            format!("switch.opa.ports_per_mport={ppm}"),
            format!("switch.opa.mport_links={links}"),
            format!("switch.opa.mport_link_width={link_width}"),
            format!("switch.opa.central_width={central_width}"),
            format!("switch.opa.central_buffer_flits={}", central_per_link * links),
            format!("switch.opa.central_output_flits={staging}"),
            format!("switch.opa.link_choice=\"{choice}\""),
            format!("qos.scheduler=\"{scheduler}\""),
            "qos.sbt={weights=[10,30,50,5,5]}".to_string(),
            format!("traffic.load={load}"),
            format!("traffic.injection=\"{}\"", if cbr { "cbr" } else { "bernoulli" }),
            "run.warmup=200".to_string(),
            "run.measure=600".to_string(),
            "run.drain_max=5000".to_string(),
            "run.check_invariants=1".to_string(),
        ];
        if let Some(d) = internal_delay {
            sets.push(format!("switch.opa.internal_routing_delay={d}"));
        }
        let case = sets.join(" ");
        let all: Vec<&str> = sets.iter().map(String::as_str).collect();
        let cfg = parse(OPA_QOS_TORUS, "opa_random", &all);
        let (mut net, _) = network(&cfg);
        net.enable_trace();
        let r = net.run().unwrap();
        prop_assert!(r.deadlock.is_none(), "deadlock: {case}");
        // Sources go on generating while the window's packets drain: beyond saturation a
        // starved source's backlog may outlast any drain.
        prop_assert!(r.saturated || r.drained, "not drained in 5 000 cycles: {case}");
        prop_assert_eq!(r.flits.generated, r.flits.delivered + r.flits.remaining);
        prop_assert!(r.flits.delivered > 0);
        // (`"free"` lets two packets of a flow take different links and pass each other, as
        // docs/model.md says; the other choices keep a flow on one path.)
        let mut last = std::collections::HashMap::new();
        for d in net.deliveries().iter().filter(|_| choice != "free") {
            let prev = last.insert((d.src, d.dst, d.class), d.seq);
            prop_assert!(prev.is_none_or(|p| p < d.seq), "out of order: {case}");
        }
        let reference = without_performance(&r);
        for threads in [2, 3] {
            let n = format!("run.threads={threads}");
            let mut more = all.clone();
            more.push(&n);
            let (mut net, _) = network(&parse(OPA_QOS_TORUS, "opa_random", &more));
            let lanes = net.run().unwrap();
            prop_assert!(
                without_performance(&lanes) == reference,
                "{} threads give other results: {}", threads, case
            );
        }
        same_in_shuffled_orders(&cfg, &case);
    }
}
