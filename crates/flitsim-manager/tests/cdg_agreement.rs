//! Property tests: the CDG verifier's verdicts agree with an independent reference that walks
//! the forwarding tables itself (no `FabricConfig::trace`, no `cdg::build_cdg`) into plain
//! `BTreeSet`s and decides acyclicity with Kahn's topological sort instead of a DFS.
use flitsim_manager::cdg::{self, CdgReport, Channel};
use flitsim_manager::{route, FabricConfig, RoutingError, RoutingRequest, NO_ROUTE};
use flitsim_topology::{generators, EndpointId, NodeId, SwitchId, Topology};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// (switch, out port, VL)
type Ch = (u32, u16, u8);

/// Channels and dependencies of every (src, dst, class) path, by walking the LFTs and SL→VL
/// tables directly.
fn reference_graph(topo: &Topology, f: &FabricConfig) -> (BTreeSet<Ch>, BTreeSet<(Ch, Ch)>) {
    let n = topo.num_endpoints();
    let wire_sls = f.classes as usize * f.routing_sls as usize;
    let mut channels = BTreeSet::new();
    let mut edges = BTreeSet::new();
    for src in 0..n {
        for dst in 0..n {
            for class in 0..f.classes as usize {
                let path_sl = if f.routing_sls > 1 {
                    f.path_sl[src * n + dst] as usize
                } else {
                    0
                };
                let sl = class * f.routing_sls as usize + path_sl;
                let attach = topo.endpoint_peer(EndpointId(src as u32)).remote;
                let NodeId::Switch(mut s) = attach.node else {
                    panic!("endpoint on an endpoint")
                };
                let mut in_port = attach.port as usize;
                let mut prev: Option<Ch> = None;
                for step in 0.. {
                    assert!(step <= topo.num_switches(), "{src} -> {dst} loops");
                    let out = f.lft[s as usize][dst];
                    assert_ne!(out, NO_ROUTE, "{src} -> {dst} has no route at switch {s}");
                    let ports = topo.num_ports(SwitchId(s)) as usize;
                    let vl = f.sl2vl[s as usize][(in_port * ports + out as usize) * wire_sls + sl];
                    let far = topo
                        .switch_peer(SwitchId(s), out)
                        .expect("route through a connected port")
                        .remote;
                    match far.node {
                        NodeId::Endpoint(e) => {
                            assert_eq!(e as usize, dst, "{src} -> {dst} delivered to {e}");
                            break;
                        }
                        NodeId::Switch(t) => {
                            let ch = (s, out, vl);
                            channels.insert(ch);
                            if let Some(p) = prev {
                                edges.insert((p, ch));
                            }
                            prev = Some(ch);
                            s = t;
                            in_port = far.port as usize;
                        }
                    }
                }
            }
        }
    }
    (channels, edges)
}

/// Kahn's algorithm: the graph is acyclic iff repeatedly removing nodes without incoming
/// edges removes them all.
fn kahn_acyclic(edges: &[(Ch, Ch)]) -> bool {
    let mut indegree: BTreeMap<Ch, usize> = BTreeMap::new();
    let mut out: BTreeMap<Ch, Vec<Ch>> = BTreeMap::new();
    for &(a, b) in edges {
        indegree.entry(a).or_insert(0);
        *indegree.entry(b).or_insert(0) += 1;
        out.entry(a).or_default().push(b);
    }
    let mut ready: VecDeque<Ch> = indegree
        .iter()
        .filter(|(_, &d)| d == 0)
        .map(|(&c, _)| c)
        .collect();
    let mut removed = 0;
    while let Some(c) = ready.pop_front() {
        removed += 1;
        for &d in out.get(&c).map(Vec::as_slice).unwrap_or(&[]) {
            let k = indegree.get_mut(&d).unwrap();
            *k -= 1;
            if *k == 0 {
                ready.push_back(d);
            }
        }
    }
    removed == indegree.len()
}

fn ch(c: &Channel) -> Ch {
    (c.switch.0, c.port, c.vl)
}

/// Asserts that `report` says what the reference says, and that its cycle is real.
fn assert_agrees(
    topo: &Topology,
    fabric: &FabricConfig,
    report: &CdgReport,
) -> Result<(), TestCaseError> {
    let (channels, edges) = reference_graph(topo, fabric);
    let all: Vec<(Ch, Ch)> = edges.iter().copied().collect();
    prop_assert_eq!(report.channels, channels.len());
    prop_assert_eq!(report.dependencies, edges.len());
    prop_assert_eq!(report.deadlock_free, kahn_acyclic(&all));
    prop_assert_eq!(report.per_vl.len(), fabric.num_vls as usize);
    for v in &report.per_vl {
        let same: Vec<(Ch, Ch)> = all
            .iter()
            .copied()
            .filter(|(a, b)| a.2 == v.vl && b.2 == v.vl)
            .collect();
        prop_assert_eq!(v.channels, channels.iter().filter(|c| c.2 == v.vl).count());
        prop_assert_eq!(v.dependencies, same.len());
        prop_assert_eq!(v.acyclic, kahn_acyclic(&same), "VL {}", v.vl);
    }
    match &report.cycle {
        None => prop_assert!(report.deadlock_free),
        Some(cycle) => {
            prop_assert!(!report.deadlock_free);
            prop_assert!(!cycle.is_empty());
            for (i, c) in cycle.iter().enumerate() {
                let next = &cycle[(i + 1) % cycle.len()];
                prop_assert!(
                    edges.contains(&(ch(c), ch(next))),
                    "{:?} -> {:?} is not a dependency",
                    c,
                    next
                );
            }
        }
    }
    Ok(())
}

/// A random irregular network; the link count is picked inside the feasible range and lowered
/// if the generator cannot place that many.
fn random_topology(n: u32, ports: u32, eps: u32, multi: bool, pick: u32, seed: u64) -> Topology {
    let free = ports - eps;
    let max = if multi {
        n * free / 2
    } else {
        (n * free / 2).min(n * (n - 1) / 2)
    };
    // Stay below the very last ports: filling every one makes the generator search for long.
    let max = (n - 1).max(max * 3 / 4);
    let mut links = n - 1 + pick % (max - (n - 1) + 1);
    loop {
        let p = generators::RandomParams {
            switches: n,
            ports,
            endpoints_per_switch: eps,
            links,
            multi_links: multi,
            latency: 1,
            seed,
        };
        match generators::random(&p) {
            Ok(t) => return t,
            Err(_) if links > n - 1 => links -= 1,
            Err(e) => panic!("random topology with a spanning tree only failed: {e}"),
        }
    }
}

/// Replaces every SL→VL entry by a random VL: one per switch (`per_switch`), or one per entry.
fn scramble_vls(fabric: &mut FabricConfig, seed: u64, per_switch: bool) {
    let mut rng = Pcg64::seed_from_u64(seed);
    for table in fabric.sl2vl.iter_mut() {
        let switch_vl = rng.gen_range(0..fabric.num_vls);
        for v in table.iter_mut() {
            *v = if per_switch {
                switch_vl
            } else {
                rng.gen_range(0..fabric.num_vls)
            };
        }
    }
}

/// Sides of a small torus or mesh: 1–3 dimensions, sides 2–5, at most 48 switches.
fn small_sides() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(2u32..=5, 1..=3)
        .prop_filter("at most 48 switches", |s| s.iter().product::<u32>() <= 48)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn minhop_on_random_networks(
        n in 4u32..=12, ports in 6u32..=8, eps in 1u32..=2, multi in any::<bool>(),
        pick in any::<u32>(), seed in any::<u64>(), vls in 1u8..=3, classes in 1u8..=2,
    ) {
        let topo = random_topology(n, ports, eps, multi, pick, seed);
        let fabric = route(&topo, "minhop", &RoutingRequest { vls, classes }).unwrap();
        let report = cdg::verify(&topo, &fabric).unwrap();
        assert_agrees(&topo, &fabric, &report)?;
    }

    #[test]
    fn random_vl_tables_that_change_vl_along_paths(
        n in 4u32..=10, eps in 1u32..=2, pick in any::<u32>(), seed in any::<u64>(), vls in 2u8..=3,
        per_switch in any::<bool>(),
    ) {
        // Min-hop forwarding, but SL→VL tables are random: paths hop between VLs, so the
        // per-VL verdicts and the whole-graph verdict can differ.
        let topo = random_topology(n, 6, eps, false, pick, seed);
        let mut fabric = route(&topo, "minhop", &RoutingRequest { vls, classes: 1 }).unwrap();
        scramble_vls(&mut fabric, seed, per_switch);
        let report = cdg::verify(&topo, &fabric).unwrap();
        assert_agrees(&topo, &fabric, &report)?;
    }

    #[test]
    fn minhop_on_small_tori(sides in small_sides(), wrap in any::<bool>(), trunk in 1u32..=2, eps in 1u32..=2) {
        let topo = generators::torus_or_mesh(&sides, eps, trunk, 1, wrap).unwrap();
        let fabric = route(&topo, "minhop", &RoutingRequest { vls: 1, classes: 1 }).unwrap();
        let report = cdg::verify(&topo, &fabric).unwrap();
        assert_agrees(&topo, &fabric, &report)?;
    }

    #[test]
    fn dor_on_small_tori_and_meshes(
        sides in small_sides(), wrap in any::<bool>(), trunk in 1u32..=2, eps in 1u32..=2,
        vls in 1u8..=6, classes in 1u8..=3,
    ) {
        let topo = generators::torus_or_mesh(&sides, eps, trunk, 1, wrap).unwrap();
        match route(&topo, "dor", &RoutingRequest { vls, classes }) {
            Err(RoutingError::NotEnoughVls(_)) => prop_assert!(wrap && vls < 2),
            Err(e) => return Err(TestCaseError::fail(e.to_string())),
            Ok(fabric) => {
                let report = cdg::verify(&topo, &fabric).unwrap();
                prop_assert!(report.deadlock_free, "{:?}", report.cycle);
                assert_agrees(&topo, &fabric, &report)?;
            }
        }
    }

    #[test]
    fn dmodk_on_small_trees(k in 2u32..=4, n in 1u32..=3, vls in 1u8..=4, classes in 1u8..=3) {
        let topo = generators::kary_ntree(k, n, 1).unwrap();
        let fabric = route(&topo, "updown-dmodk", &RoutingRequest { vls, classes }).unwrap();
        let report = cdg::verify(&topo, &fabric).unwrap();
        prop_assert!(report.deadlock_free, "{:?}", report.cycle);
        assert_agrees(&topo, &fabric, &report)?;
    }
}

#[test]
fn the_reference_detects_cycles() {
    // Guard against a reference that always agrees by always saying "acyclic".
    let topo = generators::torus(&[4, 4], 1, 1, 1).unwrap();
    let fabric = route(&topo, "minhop", &RoutingRequest { vls: 1, classes: 1 }).unwrap();
    let (_, edges) = reference_graph(&topo, &fabric);
    assert!(!kahn_acyclic(&edges.into_iter().collect::<Vec<_>>()));
    let fabric = route(&topo, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
    let (_, edges) = reference_graph(&topo, &fabric);
    assert!(kahn_acyclic(&edges.into_iter().collect::<Vec<_>>()));
}

#[test]
fn the_random_families_exercise_every_verdict() {
    // Without this, agreement could hold only because every case had the same answer. Sparse
    // networks (a spanning tree and 4 more links) give both plain verdicts, and colouring the
    // switches with 2 VLs gives cycles that no single VL contains.
    let (mut cyclic, mut acyclic, mut split) = (0, 0, 0);
    for seed in 0..24u64 {
        let p = generators::RandomParams {
            switches: 8,
            ports: 6,
            endpoints_per_switch: 1,
            links: 11,
            multi_links: false,
            latency: 1,
            seed,
        };
        let topo = generators::random(&p).unwrap();
        let mut fabric = route(&topo, "minhop", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
        if cdg::verify(&topo, &fabric).unwrap().deadlock_free {
            acyclic += 1;
        } else {
            cyclic += 1;
        }
        scramble_vls(&mut fabric, seed, true);
        let report = cdg::verify(&topo, &fabric).unwrap();
        if !report.deadlock_free && report.per_vl.iter().all(|v| v.acyclic) {
            split += 1;
        }
    }
    assert!(
        cyclic > 0 && acyclic > 0 && split > 0,
        "cyclic {cyclic}, acyclic {acyclic}, split {split}"
    );
}

#[test]
fn wrong_shapes_are_unroutable_through_route() {
    let tree = generators::kary_ntree(2, 3, 1).unwrap();
    let err = route(&tree, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap_err();
    assert!(matches!(err, RoutingError::Unroutable(_)), "{err}");
    assert!(err.to_string().contains("2-ary 3-tree"), "{err}");
    let torus = generators::torus(&[3, 3], 1, 1, 1).unwrap();
    let err = route(&torus, "dmodk", &RoutingRequest { vls: 2, classes: 1 }).unwrap_err();
    assert!(err.to_string().contains("3x3 torus"), "{err}");
    let err = route(&torus, "ecube", &RoutingRequest { vls: 2, classes: 1 }).unwrap_err();
    assert!(
        err.to_string().contains("dor, dmodk, updown-dmodk, minhop"),
        "{err}"
    );
}
