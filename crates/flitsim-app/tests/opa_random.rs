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
use common::{network, opa_case, parse, same_in_shuffled_orders, same_on_threads, OPA_QOS_TORUS};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    #[test]
    fn random_omni_path_fabrics_conserve_flits_and_do_not_depend_on_threads_or_order(
        case in opa_case(),
    ) {
        let sets = case.sets();
        let what = sets.join(" ");
        let all: Vec<&str> = sets.iter().map(String::as_str).collect();
        let cfg = parse(OPA_QOS_TORUS, "opa_random", &all);
        let (mut net, _) = network(&cfg);
        net.enable_trace();
        let r = net.run().unwrap();
        prop_assert!(r.deadlock.is_none(), "deadlock: {what}");
        // Sources go on generating while the window's packets drain: beyond saturation a
        // starved source's backlog may outlast any drain.
        prop_assert!(r.saturated || r.drained, "not drained in 5 000 cycles: {what}");
        prop_assert_eq!(r.flits.generated, r.flits.delivered + r.flits.remaining);
        prop_assert!(r.flits.delivered > 0);
        // (`"free"` lets two packets of a flow take different links and pass each other, as
        // docs/model.md says; the other choices keep a flow on one path.)
        let mut last = std::collections::HashMap::new();
        for d in net.deliveries().iter().filter(|_| case.choice != "free") {
            let prev = last.insert((d.src, d.dst, d.class), d.seq);
            prop_assert!(prev.is_none_or(|p| p < d.seq), "out of order: {what}");
        }
        same_on_threads(OPA_QOS_TORUS, "opa_random", &all, &[1, 2, 3]);
        same_in_shuffled_orders(&cfg, &what);
    }
}
