//! Paths per flow (issue 12 item 5): a flow pinned to path k of a multipath fabric follows
//! that path's forwarding tables hop by hop; with source routing packets follow the route they
//! carry, whatever the tables say; the CDG covers every path.
mod common;
use common::{assemble, parse};
use flitsim_manager::{cdg, FabricConfig, PathTables};
use flitsim_sim::{Network, RouteHop};
use flitsim_topology::{EndpointId, Topology};

/// A ring of 6 switches, one endpoint each: DOR puts `+` on port 0, `−` on port 1 and the
/// endpoint on port 2.
const RING: &str = r#"
[topology]
kind = "torus"
sides = [6]

[[traffic.class]]
name = "BE"
message_flits = 4

[run]
warmup = 200
measure = 1000
"#;

const PLUS: u16 = 0;
const MINUS: u16 = 1;
const EJECT: u16 = 2;

/// The ring's DOR tables plus a second path that always goes `+` (the long way for half the
/// pairs).
fn ring_with_clockwise_path(topo: &Topology, mut fabric: FabricConfig) -> FabricConfig {
    let n = topo.num_endpoints();
    let lft = (0..topo.num_switches())
        .map(|s| (0..n).map(|d| if d == s { EJECT } else { PLUS }).collect())
        .collect();
    fabric.alt_paths.push(PathTables {
        lft,
        path_sl: fabric.path_sl.clone(),
    });
    fabric
}

fn flows_text(extra: &str) -> String {
    format!("{RING}{extra}")
}

const TWO_PATHS: &str = r#"
[[traffic.flow]]
src = 0
dst = 1
rate = 0.05
path = 1

[[traffic.flow]]
src = 0
dst = 2
rate = 0.05

[[traffic.flow]]
src = 3
dst = 1
rate = 0.05
path = 1
"#;

fn hops_of(trace: &[RouteHop], flow: u32) -> Vec<Vec<(u32, u16)>> {
    let mut packets: std::collections::BTreeMap<u64, Vec<(u32, u16)>> = Default::default();
    for h in trace.iter().filter(|h| h.flow == Some(flow)) {
        packets
            .entry(h.seq)
            .or_default()
            .push((h.switch, h.out_port));
    }
    packets.into_values().collect()
}

#[test]
fn a_flow_pinned_to_path_k_follows_that_path_hop_by_hop() {
    let cfg = parse(&flows_text(TWO_PATHS), "p.toml", &[]);
    let (topo, fabric) = assemble(&cfg);
    let fabric = ring_with_clockwise_path(&topo, fabric);
    assert_eq!(fabric.num_paths(), 2);
    let mut net = Network::build(&cfg.params(), &topo, fabric.clone()).unwrap();
    net.enable_route_trace();
    let r = net.run().unwrap();
    assert!(r.drained);
    let trace = net.route_trace();
    // Flow 0 (0 → 1, path 1) is one step +, where both paths agree; flow 2 (3 → 1, path 1)
    // goes the long way, 3, 4, 5, 0, 1.
    for p in hops_of(trace, 0) {
        assert_eq!(p, vec![(0, PLUS), (1, EJECT)]);
    }
    let long = hops_of(trace, 2);
    assert!(!long.is_empty());
    for p in &long {
        assert_eq!(
            p,
            &vec![(3, PLUS), (4, PLUS), (5, PLUS), (0, PLUS), (1, EJECT)]
        );
    }
    // Path 0 of 3 → 1 is the short way (−), so the pin made the difference.
    let short = fabric
        .trace(&topo, EndpointId(3), EndpointId(1), 0)
        .unwrap();
    assert_eq!(short.len(), 3);
    assert_eq!(short[0].out_port, MINUS);
    // Every routing decision of every flow packet is its path's table entry.
    for h in trace.iter().filter(|h| h.flow.is_some()) {
        assert_eq!(
            h.out_port,
            fabric.lft_of(h.path as usize)[h.switch as usize][h.dst as usize],
            "{h:?}"
        );
    }
    // Paths by flow: as configured.
    assert!(trace
        .iter()
        .filter(|h| h.flow == Some(1))
        .all(|h| h.path == 0));
    assert!(trace
        .iter()
        .filter(|h| h.flow == Some(2))
        .all(|h| h.path == 1));
}

#[test]
fn a_path_the_fabric_does_not_offer_is_an_error_naming_the_flow() {
    let cfg = parse(&flows_text(TWO_PATHS), "p.toml", &[]);
    let (topo, fabric) = assemble(&cfg);
    let e = Network::build(&cfg.params(), &topo, fabric)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("traffic.flow[0].path: 1: the fabric offers 1 path per destination"),
        "{e}"
    );
}

#[test]
fn the_cdg_covers_every_path() {
    let cfg = parse(RING, "p.toml", &["traffic.load=0.1"]);
    let (topo, fabric) = assemble(&cfg);
    let single = cdg::build_cdg(&topo, &fabric).unwrap();
    let multi = ring_with_clockwise_path(&topo, fabric.clone());
    let both = cdg::build_cdg(&topo, &multi).unwrap();
    for (a, b) in single.dependencies() {
        assert!(both.has_dependency(a, b));
    }
    assert!(both.num_dependencies() > single.num_dependencies());
    // A broken second path is reported as such.
    let mut bad = multi.clone();
    bad.alt_paths[0].lft[2][4] = MINUS; // 2 sends traffic for 4 back to 1, which sends it +
    let e = bad.check_routes(&topo).unwrap_err().to_string();
    assert!(e.contains("endpoint 4 (path 1) loops"), "{e}");
}

#[test]
fn source_routes_from_the_tables_give_the_same_run_as_the_tables() {
    for extra in ["", TWO_PATHS] {
        let text = flows_text(extra);
        let a = parse(&text, "p.toml", &["traffic.load=0.2"]);
        let b = parse(
            &text,
            "p.toml",
            &["traffic.load=0.2", "switch.source_routing=true"],
        );
        let (topo, fabric) = assemble(&a);
        let fabric = ring_with_clockwise_path(&topo, fabric);
        let mut ra = Network::build(&a.params(), &topo, fabric.clone())
            .unwrap()
            .run()
            .unwrap();
        let mut rb = Network::build(&b.params(), &topo, fabric)
            .unwrap()
            .run()
            .unwrap();
        assert_ne!(ra.config_hash, rb.config_hash);
        rb.config_hash = ra.config_hash.clone();
        rb.performance = ra.performance.clone();
        ra.performance = rb.performance.clone();
        assert_eq!(ra, rb, "flows: {}", !extra.is_empty());
    }
}

#[test]
fn source_routed_packets_follow_their_route_not_the_tables() {
    // 0 → 1 the long way: −, −, −, −, − and out. The tables of switches 5, 4, 3 and 2 send
    // traffic for endpoint 1 the other way (+ is shorter from 5 and 4, − from 3 and 2 only
    // agrees by accident), so a packet that follows the tables would not take this route.
    let text = flows_text(
        r#"
[switch]
source_routing = true

[[traffic.flow]]
src = 0
dst = 1
rate = 0.05
route = [1, 1, 1, 1, 1, 2]
"#,
    );
    let cfg = parse(&text, "p.toml", &[]);
    let (topo, fabric) = assemble(&cfg);
    assert_eq!(fabric.lft[5][1], PLUS, "the tables route 5 → 1 through 0");
    let mut net = Network::build(&cfg.params(), &topo, fabric).unwrap();
    net.enable_route_trace();
    let r = net.run().unwrap();
    assert!(r.drained && r.flows.as_ref().unwrap()[0].delivered_flits > 0);
    let packets = hops_of(net.route_trace(), 0);
    assert!(packets.len() >= 10);
    for p in packets {
        assert_eq!(
            p,
            vec![
                (0, MINUS),
                (5, MINUS),
                (4, MINUS),
                (3, MINUS),
                (2, MINUS),
                (1, EJECT)
            ]
        );
    }
    assert_eq!(r.hops_mean, Some(6.0));
}

#[test]
fn bad_routes_are_named() {
    let flow = |route: &str, source: bool| {
        let sw = if source {
            "[switch]\nsource_routing = true\n"
        } else {
            ""
        };
        flows_text(&format!(
            "{sw}[[traffic.flow]]\nsrc = 0\ndst = 2\nrate = 0.05\nroute = {route}\n"
        ))
    };
    let build_err = |text: String| {
        let cfg = parse(&text, "p.toml", &[]);
        let (topo, fabric) = assemble(&cfg);
        Network::build(&cfg.params(), &topo, fabric)
            .err()
            .unwrap()
            .to_string()
    };
    for (route, want) in [
        ("[0, 2]", "traffic.flow[0].route: hop 1: port 2 of switch"),
        ("[0, 0]", "ends at switch"),
        ("[0, 7]", "hop 1: switch"),
        ("[1, 0, 2]", "hop 2: the route visits switch"),
    ] {
        let e = build_err(flow(route, true));
        assert!(e.contains(want), "{route}: want {want:?} in {e}");
    }
    let e = common::run_err(&flow("[0, 0, 2]", false), "p.toml", &[]);
    assert!(e.contains("needs switch.source_routing = true"), "{e}");
    let e = common::run_err(&flow("[]", true), "p.toml", &[]);
    assert!(e.contains("at least one output port"), "{e}");
}
