//! Random hierarchical Omni-Path fabrics (issue 19's check that the engine's speed-ups change no
//! result, on the switch model they were tuned for): small tori of Omni-Path switches with random
//! MPort sizes, internal link counts and widths, central and staging buffers, internal routing
//! delays, link choices, output schedulers, buffer organisations, switching modes, link
//! latencies and loads up to overload. Every case must
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
use common::{network, parse, same_in_shuffled_orders, without_performance};
use proptest::prelude::*;

/// The experiment of one case (see the module docs for what varies).
#[allow(clippy::too_many_arguments)]
fn opa_text(
    seed: u64,
    sides: &str,
    per_switch: u32,
    trunk: u32,
    latency: u32,
    shared: bool,
    wormhole: bool,
    rdelay: u32,
    ppm: u32,
    links: u32,
    link_width: u32,
    central_width: u32,
    central_per_link: u32,
    internal_delay: Option<u32>,
    choice: &str,
    scheduler: &str,
    load: f64,
    cbr: bool,
) -> String {
    let buffers = if shared {
        "shared_buffer = { total_flits = 192, min_per_vl = 16, max_per_vl = 128 }\n\
         shared_output_buffer = { total_flits = 192, min_per_vl = 16, max_per_vl = 128 }"
    } else {
        "vl_buffer_flits = 24\noutput_buffer_flits = 24"
    };
    let internal =
        internal_delay.map_or(String::new(), |d| format!("internal_routing_delay = {d}\n"));
    format!(
        r#"seed = {seed}
[topology]
kind = "torus"
sides = {sides}
endpoints_per_switch = {per_switch}
trunk = {trunk}
link_latency = {latency}
[routing]
engine = "dor"
vls = 8
[switch]
organisation = "opa"
switching = "{switching}"
routing_delay = {rdelay}
{buffers}
[switch.opa]
ports_per_mport = {ppm}
mport_links = {links}
mport_link_width = {link_width}
central_width = {central_width}
central_buffer_flits = {central}
link_choice = "{choice}"
{internal}[qos]
scheduler = "{scheduler}"
[qos.sc]
sl2sc = [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
sc2vl = [0, 1, 2, 3, 4, 5, 6, 7, 6, 7]
[qos.sbt]
weights = [10, 30, 50, 5, 5]
[qos.dtable]
entries = 64
gmtu = 16
w = 8
k = 2
max_distance = [2, 4, 8, 16, 16]
[traffic]
load = {load}
pattern = "uniform_others"
injection = "{injection}"
[[traffic.class]]
name = "VO"
share = 0.10
message_flits = 2
[[traffic.class]]
name = "VI"
share = 0.30
message_flits = 4
[[traffic.class]]
name = "CL"
share = 0.50
message_flits = 8
[[traffic.class]]
name = "BE"
share = 0.05
message_flits = 16
[[traffic.class]]
name = "BK"
share = 0.05
message_flits = 16
[run]
warmup = 200
measure = 600
drain_max = 5000
check_invariants = 1
"#,
        switching = if wormhole { "wormhole" } else { "vct" },
        central = central_per_link * links,
        injection = if cbr { "cbr" } else { "bernoulli" },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    #[test]
    fn random_omni_path_fabrics_conserve_flits_and_do_not_depend_on_threads_or_order(
        seed in 0u64..1000,
        sides in prop::sample::select(vec!["[3]", "[2, 3]", "[3, 3]"]),
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
        internal_delay in prop::sample::select(vec![None, Some(0u32), Some(1), Some(3)]),
        choice in prop::sample::select(vec!["input", "flow", "free"]),
        scheduler in prop::sample::select(vec!["rr", "sbt", "dtable"]),
        load in 0.05f64..1.3,
        cbr in any::<bool>(),
    ) {
        // At most one link per external port of the MPort.
        let links = 1 + links % ppm;
        let text = opa_text(
            seed, sides, per_switch, trunk, latency, shared, wormhole, rdelay, ppm, links,
            link_width, central_width, central_per_link, internal_delay, choice, scheduler, load,
            cbr,
        );
        let cfg = parse(&text, "opa_random", &[]);
        let (mut net, _) = network(&cfg);
        net.enable_trace();
        let r = net.run().unwrap();
        prop_assert!(r.deadlock.is_none(), "deadlock:\n{text}");
        // Sources go on generating while the window's packets drain: beyond saturation a
        // starved source's backlog may outlast any drain.
        prop_assert!(r.saturated || r.drained, "not drained in 5 000 cycles:\n{text}");
        prop_assert_eq!(r.flits.generated, r.flits.delivered + r.flits.remaining);
        prop_assert!(r.flits.delivered > 0);
        // (`"free"` lets two packets of a flow take different links and pass each other, as
        // docs/model.md says; the other choices keep a flow on one path.)
        let mut last = std::collections::HashMap::new();
        for d in net.deliveries().iter().filter(|_| choice != "free") {
            let prev = last.insert((d.src, d.dst, d.class), d.seq);
            prop_assert!(prev.is_none_or(|p| p < d.seq), "out of order:\n{text}");
        }
        let reference = without_performance(&r);
        for threads in [2, 3] {
            let n = format!("run.threads={threads}");
            let (mut net, _) = network(&parse(&text, "opa_random", &[&n]));
            let lanes = net.run().unwrap();
            prop_assert!(
                without_performance(&lanes) == reference,
                "{} threads give other results:\n{}", threads, text
            );
        }
        same_in_shuffled_orders(&cfg, &text);
    }
}
