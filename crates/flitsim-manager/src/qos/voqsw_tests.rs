use super::*;
use crate::{cdg, route, RoutingRequest};
use flitsim_topology::{generators, Endpoint, Link, PortRef, Shape, Switch};
use proptest::prelude::*;

fn updn(topo: &Topology) -> FabricConfig {
    route(topo, "updn", &RoutingRequest { vls: 1, classes: 1 }).unwrap()
}

/// A line of three 4-port switches S0 — S1 — S2 with two hosts each on ports 0 and 1
/// (h0, h1 on S0; h2, h3 on S1; h4, h5 on S2). Port 3 leads right, port 2 left; S0's port 2
/// and S2's port 3 are free.
fn line() -> Topology {
    let sw = |i: u32| PortRef {
        node: NodeId::Switch(i),
        port: 0,
    };
    let mut links = Vec::new();
    for h in 0..6u32 {
        links.push(Link {
            a: PortRef {
                node: NodeId::Endpoint(h),
                port: 0,
            },
            b: PortRef {
                port: (h % 2) as PortNum,
                ..sw(h / 2)
            },
            latency: 1,
            width: 1,
        });
    }
    for s in 0..2u32 {
        links.push(Link {
            a: PortRef { port: 3, ..sw(s) },
            b: PortRef {
                port: 2,
                ..sw(s + 1)
            },
            latency: 1,
            width: 1,
        });
    }
    Topology::new(
        "line",
        Shape::Irregular,
        (0..3)
            .map(|i| Switch {
                name: format!("S{i}"),
                ports: 4,
                ..Default::default()
            })
            .collect(),
        (0..6)
            .map(|i| Endpoint {
                name: format!("h{i}"),
                ..Default::default()
            })
            .collect(),
        links,
    )
    .unwrap()
}

/// Worked by hand. The paths (a tree: routing is unique) use these 4-tuples
/// `(switch, in, out, next_out)`:
/// - S0: in 0 or 1, out 3, next_out 0, 1 (to h2, h3) or 3 (to S2): 2 × 3 = 6;
/// - S1: in 2 → out 3 and in 3 → out 2, next_out 0 or 1: 4; hosts' ports 0, 1 → out 2 or 3,
///   next_out 0 or 1: 8;
/// - S2: in 0 or 1, out 2, next_out 0, 1 (h2, h3) or 2 (to S0): 6;
///
/// 24 in all. Weights: 2 for the 4-tuples carrying two destinations — (S0, i, 3, 3),
/// (S1, 2, 3, n), (S1, 3, 2, n), (S2, i, 2, 2) — 1 for the others.
///
/// Figure 5 with every 4-tuple considered, paths src-major:
/// - h0: →h1 no 4-tuple, SL 0; →h2 SL 0; →h3 neighbour (S0,0,3,0) has 0: SL 1; →h4
///   (S0,0,3,3) sees 0, 1: SL 2; →h5 (S0,0,3,3) sees 0, 1 and (S1,2,3,1) sees h4's 2 at
///   (S1,2,3,0): SL 3.
/// - h1 (own group at S0): →h2 0, →h3 1; →h4 sees 0, 1 at S0 and 3 at (S1,2,3,1): SL 2; →h5
///   sees 0, 1 and 2: SL 3.
/// - h2, h3: →h0 0, →h1 1, →h4 0, →h5 1 (each input port is its own group).
/// - h4: →h0 0; →h1 sees 0 at (S1,3,2,0): 1; →h2 sees 0, 1 at (S2,0,2,2): 2; →h3 sees 0, 1
///   and 2: 3. h5 the same.
///
/// So full VOQ needs 4 SLs — also the optimum: h0's four destinations on other switches are
/// pairwise neighbours at S0 or S1.
#[test]
fn hand_made_line_full_voq() {
    let topo = line();
    let f = updn(&topo);
    let v = analyse(&topo, &f, VoqswSls::Full).unwrap();
    assert_eq!(v.tuples(), 24);
    assert_eq!(v.sls_for_full, Some(4));
    assert!(v.full());
    let t = |switch, in_port, out_port, next_out| Tuple {
        switch,
        in_port,
        out_port,
        next_out,
        path_sl: 0,
    };
    // Stage 3: the eight 4-tuples of weight 2 first, in increasing order.
    assert_eq!(
        v.set.tuples[..8],
        [
            t(0, 0, 3, 3),
            t(0, 1, 3, 3),
            t(1, 2, 3, 0),
            t(1, 2, 3, 1),
            t(1, 3, 2, 0),
            t(1, 3, 2, 1),
            t(2, 0, 2, 2),
            t(2, 1, 2, 2),
        ]
    );
    assert!(v.set.weights[..8].iter().all(|&w| w == 2));
    assert!(v.set.weights[8..].iter().all(|&w| w == 1));
    #[rustfmt::skip]
    let expected: [[u32; 6]; 6] = [
        [0, 0, 0, 1, 2, 3],
        [0, 0, 0, 1, 2, 3],
        [0, 1, 0, 0, 0, 1],
        [0, 1, 0, 0, 0, 1],
        [0, 1, 2, 3, 0, 0],
        [0, 1, 2, 3, 0, 0],
    ];
    assert_eq!(v.assignment.sl, expected.concat());
    // Stage 5 with 4 VLs: port p of the next switch is VL p.
    let g = v.tables(&topo, &f, 4).unwrap();
    assert_eq!(g.routing_sls, 4);
    let vl = |s: u32, i, o, sl: u8| g.vl(SwitchId(s), i, o, flitsim_topology::Sl(sl)).0;
    // S0, in 0, out 3: SL 0 → h2's port 0, SL 1 → port 1, SLs 2 and 3 → port 3 (to S2).
    assert_eq!([0, 1, 2, 3].map(|sl| vl(0, 0, 3, sl)), [0, 1, 3, 3]);
    // S1, in 2, out 3: SL 2 → S2's port 0 (h4), SL 3 → port 1 (h5); SLs 0, 1 unclaimed: sl mod 4.
    assert_eq!([0, 1, 2, 3].map(|sl| vl(1, 2, 3, sl)), [0, 1, 0, 1]);
    // S2, in 0, out 2: SLs 0, 1 → S1's port 2 (to S0), SL 2 → port 0, SL 3 → port 1.
    assert_eq!([0, 1, 2, 3].map(|sl| vl(2, 0, 2, sl)), [2, 2, 0, 1]);
    g.check_shape(&topo).unwrap();
    assert!(cdg::verify(&topo, &g).unwrap().deadlock_free);
    // With 4 SLs the search reaches full VOQ; with 3 it stops short.
    let four = analyse(&topo, &f, VoqswSls::Limit(4)).unwrap();
    assert!(four.full() && four.sls_used() == 4);
    let three = analyse(&topo, &f, VoqswSls::Limit(3)).unwrap();
    assert!(!three.full() && three.sls_used() <= 3);
}

#[test]
fn errors_say_what_works() {
    let topo = line();
    let two = route(&topo, "updn", &RoutingRequest { vls: 2, classes: 2 }).unwrap();
    let e = analyse(&topo, &two, VoqswSls::Limit(8))
        .unwrap_err()
        .to_string();
    assert!(e.contains("one class"), "{e}");
    let e = analyse(&topo, &updn(&topo), VoqswSls::Limit(0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("at least 1 SL"), "{e}");
    let torus = generators::torus(&[4, 4], 1, 1, 1).unwrap();
    let dor = route(&torus, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
    let v = analyse(&torus, &dor, VoqswSls::Limit(8)).unwrap();
    let e = v.tables(&torus, &dor, 1).unwrap_err().to_string();
    assert!(e.contains("give at least 2 VLs"), "{e}");
}

/// Layered and dateline routings keep their layers: each path keeps the routing's path SL
/// (wire SL = VOQsw SL × routing SLs + path SL), 4-tuples are told apart by path SL, and
/// each routing VL is split into `vls / lanes` VLs by next output port. Every packet on a
/// considered 4-tuple gets `lane · g + next_out mod g`; the CDG stays acyclic.
#[test]
fn layered_routings_keep_their_layers() {
    let torus = generators::torus(&[4, 4], 2, 1, 1).unwrap();
    let random = paper_network(16, 3).unwrap();
    for (topo, engine, engine_vls, vls) in [
        (&torus, "dor", 2, 8),
        (&torus, "lash", 4, 8),
        (&torus, "dfsssp", 4, 8),
        (&random, "lash", 4, 8),
    ] {
        let f = route(
            topo,
            engine,
            &RoutingRequest {
                vls: engine_vls,
                classes: 1,
            },
        )
        .unwrap();
        assert!(cdg::verify(topo, &f).unwrap().deadlock_free);
        let lanes = lanes(&f);
        if std::ptr::eq(topo, &torus) {
            assert!(lanes > 1 && f.routing_sls > 1, "{engine}: {lanes} lanes");
        }
        let v = analyse(topo, &f, VoqswSls::Limit(4)).unwrap();
        let g = v.tables(topo, &f, vls).unwrap();
        g.check_shape(topo).unwrap();
        assert!(cdg::verify(topo, &g).unwrap().deadlock_free, "{engine}");
        let sub = vls as usize / lanes;
        let x = v.considered() as u32;
        let n = topo.num_endpoints();
        let mut checked = 0;
        for src in 0..n {
            for dst in (0..n).filter(|&d| d != src) {
                let (a, b) = (EndpointId(src as u32), EndpointId(dst as u32));
                let old = f.trace(topo, a, b, 0).unwrap();
                let new = g.trace(topo, a, b, 0).unwrap();
                let e = f.path_sl.get(src * n + dst).copied().unwrap_or(0);
                for (h, w) in new.windows(2).enumerate() {
                    let tu = Tuple {
                        switch: w[0].switch.0,
                        in_port: w[0].in_port,
                        out_port: w[0].out_port,
                        next_out: w[1].out_port,
                        path_sl: e,
                    };
                    let r = v.set.tuples.iter().position(|t| *t == tu).unwrap() as u32;
                    // The lane is kept on every hop.
                    assert_eq!(w[0].vl as usize / sub, old[h].vl as usize, "{engine}");
                    if r < x {
                        let want = old[h].vl as usize * sub + tu.next_out as usize % sub;
                        assert_eq!(w[0].vl as usize, want, "{engine} {tu:?}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 0, "{engine}");
    }
}

#[test]
fn virtual_networks_keep_the_vl_of_the_destination() {
    let topo = line();
    let f = updn(&topo);
    let g = virtual_networks(&topo, &f, 4).unwrap();
    g.check_shape(&topo).unwrap();
    for s in 0..6u32 {
        for d in 0..6u32 {
            for hop in g.trace(&topo, EndpointId(s), EndpointId(d), 0).unwrap() {
                assert_eq!(hop.vl as u32, d % 4);
            }
        }
    }
    assert!(cdg::verify(&topo, &g).unwrap().deadlock_free);
    // DOR's two dateline VLs: 8 VLs give 4 networks per lane, the lane kept on every hop.
    let torus = generators::torus(&[4, 4], 1, 1, 1).unwrap();
    let dor = route(&torus, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
    let g = virtual_networks(&torus, &dor, 8).unwrap();
    assert!(cdg::verify(&torus, &g).unwrap().deadlock_free);
    for (s, d) in [(0u32, 5u32), (3, 14), (15, 2), (1, 11)] {
        let (a, b) = (EndpointId(s), EndpointId(d));
        let old = dor.trace(&torus, a, b, 0).unwrap();
        for (h, hop) in g.trace(&torus, a, b, 0).unwrap().iter().enumerate() {
            assert_eq!(hop.vl as u32, old[h].vl as u32 * 4 + d % 4);
        }
    }
    let e = virtual_networks(&torus, &dor, 1).unwrap_err().to_string();
    assert!(e.contains("at least 2 VLs"), "{e}");
}

/// A random network of the paper's kind (`ports` = 8, 4 hosts, 4 links per switch), or `None`
/// for a seed the generator cannot complete.
fn paper_network(switches: u32, seed: u64) -> Option<Topology> {
    generators::random(&generators::RandomParams {
        switches,
        ports: 8,
        endpoints_per_switch: 4,
        links: 2 * switches,
        multi_links: false,
        latency: 1,
        seed,
    })
    .ok()
}

/// Checks the guarantee on `topo`: every packet crossing a considered 4-tuple
/// `(s, i, o, n)` gets VL `n mod vls` on the link to the next switch; considered neighbours
/// never share an SL; the tables are deadlock-free; and the search stopped where Figure 4
/// says (the next `x` fails or everything is considered).
fn check_guarantee(topo: &Topology, sls: usize, vls: u8) {
    let f = updn(topo);
    let v = analyse(topo, &f, VoqswSls::Limit(sls)).unwrap();
    assert!(v.sls_used() <= sls);
    if !v.full() {
        assert!(compute_sls(&v.set, v.considered() + 1, Some(sls)).is_none());
    }
    let g = v.tables(topo, &f, vls).unwrap();
    g.check_shape(topo).unwrap();
    let n = topo.num_endpoints();
    let x = v.considered() as u32;
    let mut sl_of: HashMap<(u32, u32), u32> = HashMap::new();
    for src in 0..n {
        for dst in 0..n {
            if src == dst {
                continue;
            }
            let p = src * n + dst;
            let sl = v.assignment.sl[p];
            let hops = g
                .trace(topo, EndpointId(src as u32), EndpointId(dst as u32), 0)
                .unwrap();
            for w in hops.windows(2) {
                let tu = Tuple {
                    switch: w[0].switch.0,
                    in_port: w[0].in_port,
                    out_port: w[0].out_port,
                    next_out: w[1].out_port,
                    path_sl: 0,
                };
                let r = v.set.tuples.iter().position(|t| *t == tu).unwrap() as u32;
                if r < x {
                    assert_eq!(w[0].vl, (tu.next_out % vls as u16) as u8, "{tu:?} sl {sl}");
                    // One considered 4-tuple per (group, SL).
                    let grp = v.set.group[r as usize];
                    if let Some(&other) = sl_of.get(&(grp, sl)) {
                        assert_eq!(other, r, "neighbours share SL {sl}");
                    }
                    sl_of.insert((grp, sl), r);
                }
            }
        }
    }
    assert!(cdg::verify(topo, &g).unwrap().deadlock_free);
}

#[test]
fn guarantee_on_an_eight_switch_network() {
    let topo = (0..20).find_map(|s| paper_network(8, s)).unwrap();
    check_guarantee(&topo, 8, 8);
    check_guarantee(&topo, 4, 4);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn guarantee_on_random_networks(
        switches in 3u32..10,
        seed in 0u64..1000,
        sls in 1usize..10,
        vls in 1u8..9,
    ) {
        let topo = paper_network(switches, seed);
        prop_assume!(topo.is_some());
        check_guarantee(&topo.unwrap(), sls, vls);
    }
}

/// With as many SLs as the single full run needs, does the one-by-one search of Figure 4
/// reach full VOQ? Only if no intermediate `x` needs more SLs than `x` = all (greedy
/// assignments are not monotone in `x`). Prints the largest intermediate count.
#[test]
fn the_full_count_and_the_one_by_one_search() {
    let mut report = Vec::new();
    for seed in 0..12 {
        let Some(topo) = paper_network(size(), seed) else {
            continue;
        };
        let f = updn(&topo);
        let set = tuple_set(&topo, &f).unwrap();
        let k_full = compute_sls(&set, set.len(), None).unwrap().sls_used;
        let k_max = (1..=set.len())
            .map(|x| compute_sls(&set, x, None).unwrap().sls_used)
            .max()
            .unwrap();
        let reached = search_one_by_one(&set, k_full).x == set.len();
        assert_eq!(reached, k_max <= k_full);
        report.push((seed, k_full, k_max, reached));
    }
    println!("seed, SLs of the full run, max over x, one-by-one reaches full: {report:?}");
    // Up to 32 switches no intermediate x needs more SLs than the full run on these seeds;
    // at 64 switches some do (docs/validation/voqsw.md).
    if size() <= 32 {
        assert!(report.iter().all(|r| r.3), "{report:?}");
    }
}

/// Network size of [`the_full_count_and_the_one_by_one_search`]: 8, or `VOQSW_SWITCHES`.
fn size() -> u32 {
    std::env::var("VOQSW_SWITCHES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8)
}

/// The incremental search gives, for every `x`, the SL count of Figure 5 run from scratch.
#[test]
fn incremental_counts_equal_the_from_scratch_runs() {
    let mut cases: Vec<(Topology, FabricConfig)> = vec![(line(), updn(&line()))];
    for seed in 0..6 {
        let t = paper_network(6 + (seed as u32 % 3), seed).unwrap();
        let f = updn(&t);
        cases.push((t, f));
    }
    let torus = generators::torus(&[4, 4], 1, 1, 1).unwrap();
    let lash = route(&torus, "lash", &RoutingRequest { vls: 4, classes: 1 }).unwrap();
    cases.push((torus, lash));
    for (topo, f) in &cases {
        let set = tuple_set(topo, f).unwrap();
        let fast = sls_by_x(&set, None);
        let slow: Vec<usize> = (0..=set.len())
            .map(|x| compute_sls(&set, x, None).unwrap().sls_used)
            .collect();
        assert_eq!(fast, slow, "{}", topo.name());
        // The assignments themselves, for every x.
        incremental::walk(&set, |x, sl, _| {
            assert_eq!(
                sl,
                compute_sls(&set, x, None).unwrap().sl,
                "{} x = {x}",
                topo.name()
            );
            true
        });
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]
    #[test]
    fn incremental_counts_equal_on_random_networks(switches in 5u32..11, seed in 0u64..10_000) {
        let topo = paper_network(switches, seed).unwrap();
        let set = tuple_set(&topo, &updn(&topo)).unwrap();
        let mut bad = None;
        incremental::walk(&set, |x, sl, used| {
            let a = compute_sls(&set, x, None).unwrap();
            if a.sl != sl || a.sls_used != used {
                bad = Some(x);
            }
            bad.is_none()
        });
        prop_assert_eq!(bad, None);
    }
}
