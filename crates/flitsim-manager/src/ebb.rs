//! Effective bisection bandwidth of a routed fabric, as the Oblivious Routing Congestion
//! Simulator (ORCS) computes it: T. Schneider, T. Hoefler and A. Lumsdaine, "ORCS: An
//! oblivious routing congestion simulator", Indiana University TR 675, 2009; definition from
//! T. Hoefler, T. Schneider and A. Lumsdaine, "Multistage switches are not crossbars: effects
//! of static routing in high-performance networks", IEEE Cluster 2008; used as the quality
//! metric by J. Domke, T. Hoefler and W. E. Nagel, "Deadlock-Free Oblivious Routing for
//! Arbitrary Topologies", IPDPS 2011, §V ("the average bandwidth for routing messages between
//! random perfect matchings of endpoints").
//!
//! One *pattern* is a random perfect matching: the endpoints are shuffled and endpoint
//! `p[2i]` sends to `p[2i+1]` (with an odd endpoint count the last one stays idle). Every
//! flow follows the fabric's LFTs; each directed link (endpoint links included) is shared
//! equally by the flows crossing it, so a flow gets bandwidth `1 / c` where `c` is the
//! largest number of flows on any link of its path. The pattern's value is the mean over its
//! flows, and the effective bisection bandwidth is the mean over patterns (relative to the
//! link bandwidth: 1 means every flow runs at full link speed).
//!
//! Patterns are evaluated in parallel (rayon). Pattern `i` draws its matching from an RNG
//! seeded by `(seed, i)` alone and the results are combined in pattern order, so the report
//! is the same for a seed whatever the number of threads.
use crate::{FabricConfig, RoutingError, NO_ROUTE};
use flitsim_topology::{EndpointId, NodeId, PortNum, PortRef, SwitchId, Topology};
use rand::seq::SliceRandom;
use rand_pcg::Pcg64;
use rayon::prelude::*;
use serde::Serialize;

/// Result of [`effective_bisection_bandwidth`]: statistics of the pattern values.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EbbReport {
    /// Mean pattern value: the effective bisection bandwidth (fraction of link bandwidth).
    pub ebb_mean: f64,
    /// Smallest pattern value.
    pub ebb_min: f64,
    /// Largest pattern value.
    pub ebb_max: f64,
    /// Number of patterns evaluated.
    pub patterns: usize,
}

/// Index of the directed link leaving `from` over link `li`: `2·li` for a → b, `2·li + 1`
/// for b → a.
fn directed(topo: &Topology, li: u32, from: PortRef) -> usize {
    let l = &topo.links()[li as usize];
    if l.a == from {
        2 * li as usize
    } else {
        2 * li as usize + 1
    }
}

/// Appends the directed links of the LFT path `src → dst` (injection link, inter-switch links,
/// ejection link) to `out`.
fn path_links(
    topo: &Topology,
    fabric: &FabricConfig,
    src: EndpointId,
    dst: EndpointId,
    out: &mut Vec<usize>,
) -> Result<(), RoutingError> {
    let inj = topo.endpoint_peer(src);
    out.push(directed(
        topo,
        inj.link,
        PortRef {
            node: NodeId::Endpoint(src.0),
            port: 0,
        },
    ));
    let (mut s, _) = topo.endpoint_switch(src);
    for _ in 0..=topo.num_switches() {
        let port = fabric.port(0, s.0, dst.0);
        let name = || topo.switches()[s.0 as usize].name.clone();
        if port == NO_ROUTE {
            return Err(RoutingError::Unroutable(format!(
                "switch {} has no route to endpoint {}",
                name(),
                dst.0
            )));
        }
        let peer = topo.switch_peer(s, port).ok_or_else(|| {
            RoutingError::Unroutable(format!(
                "switch {} routes endpoint {} to unconnected port {port}",
                name(),
                dst.0
            ))
        })?;
        out.push(directed(
            topo,
            peer.link,
            PortRef {
                node: NodeId::Switch(s.0),
                port,
            },
        ));
        match peer.remote.node {
            NodeId::Endpoint(e) if e == dst.0 => return Ok(()),
            NodeId::Endpoint(e) => {
                return Err(RoutingError::Unroutable(format!(
                    "path to endpoint {} ends at endpoint {e}",
                    dst.0
                )))
            }
            NodeId::Switch(t) => s = SwitchId(t),
        }
    }
    Err(RoutingError::Loop(format!(
        "path from endpoint {} to {} loops",
        src.0, dst.0
    )))
}

/// The matching of pattern `pattern` for seed `seed`: the endpoints shuffled by an RNG seeded
/// from `(seed, pattern)` only, paired as `p[2i] → p[2i+1]`.
pub fn pattern_pairs(
    num_endpoints: usize,
    seed: u64,
    pattern: u64,
) -> Vec<(EndpointId, EndpointId)> {
    // Distinct (seed, pattern) give distinct PCG states; the stream constant is PCG's default.
    let state = ((seed as u128) << 64) | pattern as u128;
    let mut rng = Pcg64::new(
        state ^ 0x5851_f42d_4c95_7f2d_1405_7b7e_f767_814f,
        0x0a02_bdbf_7bb3_c0a7_ac28_fa16_a64a_bf96,
    );
    let mut p: Vec<u32> = (0..num_endpoints as u32).collect();
    p.shuffle(&mut rng);
    p.chunks_exact(2)
        .map(|c| (EndpointId(c[0]), EndpointId(c[1])))
        .collect()
}

/// Value of one traffic pattern: each flow `src → dst` gets `1 / (largest number of flows on
/// a directed link of its path)`; the result is the mean over flows (1.0 for no flows).
/// `counts` is scratch space of `2 · links` entries, all zero on entry and on return.
fn pattern_value_with(
    topo: &Topology,
    fabric: &FabricConfig,
    pairs: &[(EndpointId, EndpointId)],
    counts: &mut [u32],
) -> Result<f64, RoutingError> {
    if pairs.is_empty() {
        return Ok(1.0);
    }
    let mut paths: Vec<usize> = Vec::new();
    let mut starts = Vec::with_capacity(pairs.len() + 1);
    for &(s, d) in pairs {
        starts.push(paths.len());
        if let Err(e) = path_links(topo, fabric, s, d, &mut paths) {
            // Leave the scratch space clean for the next pattern.
            counts.iter_mut().for_each(|c| *c = 0);
            return Err(e);
        }
    }
    starts.push(paths.len());
    for &l in &paths {
        counts[l] += 1;
    }
    let mut sum = 0.0;
    for w in starts.windows(2) {
        let worst = paths[w[0]..w[1]]
            .iter()
            .map(|&l| counts[l])
            .max()
            .unwrap_or(1);
        sum += 1.0 / worst as f64;
    }
    for &l in &paths {
        counts[l] = 0;
    }
    Ok(sum / pairs.len() as f64)
}

/// Value of one traffic pattern given as explicit `src → dst` flows (see the module
/// documentation): the mean over flows of `1 / max flows on a link of the flow's path`.
pub fn pattern_bandwidth(
    topo: &Topology,
    fabric: &FabricConfig,
    pairs: &[(EndpointId, EndpointId)],
) -> Result<f64, RoutingError> {
    let mut counts = vec![0u32; 2 * topo.links().len()];
    pattern_value_with(topo, fabric, pairs, &mut counts)
}

/// Effective bisection bandwidth over `patterns` random perfect matchings (ORCS's
/// definition; see the module documentation). Deterministic for `seed` regardless of the
/// number of rayon threads. Fails when a path has no route, a dead end or a loop, when
/// `patterns` is 0, or when the topology has fewer than two endpoints.
pub fn effective_bisection_bandwidth(
    topo: &Topology,
    fabric: &FabricConfig,
    patterns: usize,
    seed: u64,
) -> Result<EbbReport, RoutingError> {
    if patterns == 0 {
        return Err(RoutingError::Unroutable(
            "effective bisection bandwidth needs at least one pattern".into(),
        ));
    }
    if topo.num_endpoints() < 2 {
        return Err(RoutingError::Unroutable(
            "effective bisection bandwidth needs at least two endpoints".into(),
        ));
    }
    fabric.check_shape(topo)?;
    let n = topo.num_endpoints();
    let links = topo.links().len();
    let values: Vec<f64> = (0..patterns)
        .into_par_iter()
        .map_init(
            || vec![0u32; 2 * links],
            |counts, i| {
                flitsim_topology::cancel::check()?;
                let pairs = pattern_pairs(n, seed, i as u64);
                pattern_value_with(topo, fabric, &pairs, counts)
            },
        )
        .collect::<Result<_, _>>()?;
    Ok(EbbReport {
        ebb_mean: values.iter().sum::<f64>() / patterns as f64,
        ebb_min: values.iter().copied().fold(f64::INFINITY, f64::min),
        ebb_max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        patterns,
    })
}

/// Flows per directed switch link under all-to-all traffic (every endpoint sends one flow to
/// every other endpoint, routed by the LFTs): `(switch, output port, flows)` for every
/// connected output port of every switch (towards switches and towards endpoints), ordered
/// by switch and port. Computed per destination by pushing the number of sources at each
/// switch down the LFT tree towards it, in O(endpoints · switches).
pub fn link_loads_all_to_all(
    topo: &Topology,
    fabric: &FabricConfig,
) -> Result<Vec<(SwitchId, PortNum, u64)>, RoutingError> {
    let fabric = &*fabric.stored();
    fabric.check_shape(topo)?;
    let nsw = topo.num_switches();
    let nep = topo.num_endpoints();
    // Endpoints attached to each switch.
    let attached: Vec<u64> = (0..nsw as u32)
        .map(|s| topo.switch_endpoints(SwitchId(s)).count() as u64)
        .collect();
    let per_dest = |d: usize| -> Result<Vec<(usize, u64)>, RoutingError> {
        flitsim_topology::cancel::check()?;
        let (dsw, _) = topo.endpoint_switch(EndpointId(d as u32));
        // next[s]: the switch traffic for d goes to from s (None at d's switch).
        let mut next: Vec<Option<usize>> = vec![None; nsw];
        for (s, nx) in next.iter_mut().enumerate() {
            let port = fabric.lft[s][d];
            if port == NO_ROUTE {
                continue;
            }
            match topo
                .switch_peer(SwitchId(s as u32), port)
                .map(|p| p.remote.node)
            {
                Some(NodeId::Switch(t)) => *nx = Some(t as usize),
                Some(NodeId::Endpoint(e)) if e as usize == d => {}
                Some(NodeId::Endpoint(e)) => {
                    return Err(RoutingError::Unroutable(format!(
                        "switch {} sends traffic for endpoint {d} to endpoint {e}",
                        topo.switches()[s].name
                    )))
                }
                None => {
                    return Err(RoutingError::Unroutable(format!(
                        "switch {} routes endpoint {d} to unconnected port {port}",
                        topo.switches()[s].name
                    )))
                }
            }
        }
        // Hops from every switch to d's switch along the LFT chain (memoised). DEAD marks
        // switches whose chain ends at a switch without a route; loops are errors.
        const UNKNOWN: u32 = u32::MAX;
        const VISITING: u32 = u32::MAX - 1;
        const DEAD: u32 = u32::MAX - 2;
        let mut depth = vec![UNKNOWN; nsw];
        depth[dsw.0 as usize] = 0;
        let mut path = Vec::new();
        for start in 0..nsw {
            path.clear();
            let mut s = start;
            loop {
                match depth[s] {
                    VISITING => {
                        return Err(RoutingError::Loop(format!(
                            "traffic to endpoint {d} loops through switch {}",
                            topo.switches()[s].name
                        )))
                    }
                    UNKNOWN => match next[s] {
                        Some(t) => {
                            depth[s] = VISITING;
                            path.push(s);
                            s = t;
                        }
                        None => {
                            depth[s] = DEAD;
                            break;
                        }
                    },
                    _ => break,
                }
            }
            let mut base = depth[s];
            for &t in path.iter().rev() {
                depth[t] = if base == DEAD { DEAD } else { base + 1 };
                base = depth[t];
            }
        }
        // Sources at each switch, pushed towards d in decreasing depth.
        let mut load: Vec<u64> = attached.clone();
        load[dsw.0 as usize] -= 1; // d does not send to itself
        let mut order: Vec<usize> = (0..nsw).collect();
        order.sort_by_key(|&s| std::cmp::Reverse(depth[s]));
        let mut out = Vec::new();
        for s in order {
            if load[s] == 0 {
                continue;
            }
            if depth[s] == DEAD || fabric.lft[s][d] == NO_ROUTE {
                return Err(RoutingError::Unroutable(format!(
                    "traffic for endpoint {d} at switch {} does not reach it (no route on the way)",
                    topo.switches()[s].name
                )));
            }
            out.push((
                topo.port_index(SwitchId(s as u32), fabric.lft[s][d]),
                load[s],
            ));
            if let Some(t) = next[s] {
                load[t] += load[s];
            }
        }
        Ok(out)
    };
    let partial: Vec<Vec<(usize, u64)>> = (0..nep)
        .into_par_iter()
        .map(per_dest)
        .collect::<Result<_, _>>()?;
    let mut flows = vec![0u64; topo.total_switch_ports()];
    for v in partial {
        for (ix, c) in v {
            flows[ix] += c;
        }
    }
    let mut out = Vec::new();
    for s in 0..nsw as u32 {
        for p in 0..topo.num_ports(SwitchId(s)) {
            if topo.switch_peer(SwitchId(s), p).is_some() {
                out.push((SwitchId(s), p, flows[topo.port_index(SwitchId(s), p)]));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::{route, RoutingRequest};
    use flitsim_topology::{generators, Topology};

    const REQ: RoutingRequest = RoutingRequest { vls: 1, classes: 1 };

    fn pairs(v: &[(u32, u32)]) -> Vec<(EndpointId, EndpointId)> {
        v.iter()
            .map(|&(a, b)| (EndpointId(a), EndpointId(b)))
            .collect()
    }

    #[test]
    fn a_crossbar_has_full_bandwidth() {
        let t = generators::from_spec("random:switches=1,ports=16,endpoints=16,links=0").unwrap();
        let f = route(&t, "minhop", &REQ).unwrap();
        let r = effective_bisection_bandwidth(&t, &f, 50, 7).unwrap();
        assert_eq!(
            r,
            EbbReport {
                ebb_mean: 1.0,
                ebb_min: 1.0,
                ebb_max: 1.0,
                patterns: 50
            }
        );
    }

    /// Two switches joined by one link, `e` endpoints each (0..e on switch 0).
    fn line(e: u32) -> (Topology, FabricConfig) {
        let t = generators::torus_or_mesh(&[2], e, 1, 1, false).unwrap();
        let f = route(&t, "minhop", &REQ).unwrap();
        (t, f)
    }

    #[test]
    fn two_switch_line_by_hand() {
        let (t, f) = line(2);
        let v = |p: &[(u32, u32)]| pattern_bandwidth(&t, &f, &pairs(p)).unwrap();
        // Both flows cross 0 → 1 and share the link: 1/2 each.
        assert_eq!(v(&[(0, 2), (1, 3)]), 0.5);
        // One flow each way: directed links are separate.
        assert_eq!(v(&[(0, 2), (3, 1)]), 1.0);
        // Nothing crosses.
        assert_eq!(v(&[(0, 1), (2, 3)]), 1.0);
        // Three endpoints: flows 0→2, 1→3 cross; 4→5 local. (1/2 + 1/2 + 1) / 3.
        let (t3, f3) = line(3);
        let w = pattern_bandwidth(&t3, &f3, &pairs(&[(0, 3), (1, 4), (5, 2)])).unwrap();
        assert_eq!(w, (0.5 + 0.5 + 1.0) / 3.0);
    }

    #[test]
    fn two_switch_line_matches_brute_force() {
        // Independent computation: with k pairs crossing 0 → 1 and l crossing 1 → 0, a pattern
        // of P pairs is worth (P − k − l + [k > 0] + [l > 0]) / P.
        let e = 5u32;
        let (t, f) = line(e);
        let (n, seed, patterns) = (2 * e as usize, 42, 200);
        let side = |x: EndpointId| x.0 / e;
        let mut values = Vec::new();
        for i in 0..patterns {
            let p = pattern_pairs(n, seed, i as u64);
            let k = p
                .iter()
                .filter(|&&(a, b)| side(a) == 0 && side(b) == 1)
                .count();
            let l = p
                .iter()
                .filter(|&&(a, b)| side(a) == 1 && side(b) == 0)
                .count();
            let pp = p.len();
            let v = (pp - k - l + usize::from(k > 0) + usize::from(l > 0)) as f64 / pp as f64;
            let got = pattern_bandwidth(&t, &f, &p).unwrap();
            assert!((got - v).abs() < 1e-12, "pattern {i}: {got} vs {v}");
            values.push(v);
        }
        let r = effective_bisection_bandwidth(&t, &f, patterns, seed).unwrap();
        let mean = values.iter().sum::<f64>() / patterns as f64;
        assert!(
            (r.ebb_mean - mean).abs() < 1e-12,
            "{} vs {mean}",
            r.ebb_mean
        );
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(0.0, f64::max);
        assert!((r.ebb_min - min).abs() < 1e-12 && (r.ebb_max - max).abs() < 1e-12);
        assert!(r.ebb_min < r.ebb_max && r.ebb_max <= 1.0);
    }

    #[test]
    fn dmodk_fat_tree_by_hand() {
        // 2-ary 3-tree, leaves hold endpoints {0,1}, {2,3}, {4,5}, {6,7}. d-mod-k sends traffic
        // for 4 and 6 up the same port of leaf 0 (both ≡ 0 mod 2): 0→4 and 1→6 share it.
        let t = generators::kary_ntree(2, 3, 1).unwrap();
        let f = route(&t, "dmodk", &REQ).unwrap();
        let v = |p: &[(u32, u32)]| pattern_bandwidth(&t, &f, &pairs(p)).unwrap();
        assert_eq!(v(&[(0, 4), (1, 6), (2, 3), (5, 7)]), 0.75);
        // A shift by 4 is routed without any conflict.
        assert_eq!(v(&[(0, 4), (1, 5), (2, 6), (3, 7)]), 1.0);
        // 2-ary 2-tree: every matching of 4 endpoints is conflict-free, so eBB is exactly 1.
        let t2 = generators::kary_ntree(2, 2, 1).unwrap();
        let f2 = route(&t2, "dmodk", &REQ).unwrap();
        let r = effective_bisection_bandwidth(&t2, &f2, 100, 3).unwrap();
        assert_eq!((r.ebb_min, r.ebb_max), (1.0, 1.0));
        // Bigger trees are not crossbars under oblivious routing (Hoefler et al. 2008).
        let t3 = generators::kary_ntree(4, 3, 1).unwrap();
        let f3 = route(&t3, "dmodk", &REQ).unwrap();
        let r3 = effective_bisection_bandwidth(&t3, &f3, 100, 3).unwrap();
        assert!(r3.ebb_mean < 1.0 && r3.ebb_mean > 0.3, "{r3:?}");
    }

    #[test]
    fn same_seed_same_result_on_any_thread_count() {
        let t = generators::torus(&[4, 4], 2, 1, 1).unwrap();
        let f = route(&t, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
        let run = |threads: usize, seed: u64| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| effective_bisection_bandwidth(&t, &f, 64, seed).unwrap())
        };
        let a = run(1, 9);
        assert_eq!(a, run(2, 9));
        assert_eq!(a, run(3, 9));
        assert_ne!(a, run(1, 10));
        assert!(a.ebb_min <= a.ebb_mean && a.ebb_mean <= a.ebb_max);
        assert!(serde_json::to_string(&a).unwrap().contains("\"ebb_mean\""));
    }

    #[test]
    fn odd_endpoint_counts_and_errors() {
        let (t, f) = line(1);
        // Two endpoints on different switches: the single flow has its link to itself.
        let r = effective_bisection_bandwidth(&t, &f, 5, 1).unwrap();
        assert_eq!(r.ebb_mean, 1.0);
        assert_eq!(pattern_pairs(5, 1, 0).len(), 2);
        assert!(effective_bisection_bandwidth(&t, &f, 0, 1).is_err());
        let mut bad = f.clone();
        bad.lft[0][1] = NO_ROUTE;
        let e = pattern_bandwidth(&t, &bad, &pairs(&[(0, 1)])).unwrap_err();
        assert!(e.to_string().contains("no route to endpoint 1"), "{e}");
    }

    /// All-to-all loads by tracing every pair, for comparison.
    fn brute_loads(t: &Topology, f: &FabricConfig) -> Vec<(SwitchId, PortNum, u64)> {
        let mut m = std::collections::BTreeMap::new();
        for s in 0..t.num_endpoints() as u32 {
            for d in 0..t.num_endpoints() as u32 {
                if s != d {
                    for h in f.trace(t, EndpointId(s), EndpointId(d), 0).unwrap() {
                        *m.entry((h.switch, h.out_port)).or_insert(0u64) += 1;
                    }
                }
            }
        }
        let mut out = Vec::new();
        for s in 0..t.num_switches() as u32 {
            for p in 0..t.num_ports(SwitchId(s)) {
                if t.switch_peer(SwitchId(s), p).is_some() {
                    out.push((
                        SwitchId(s),
                        p,
                        m.get(&(SwitchId(s), p)).copied().unwrap_or(0),
                    ));
                }
            }
        }
        out
    }

    #[test]
    fn all_to_all_loads_match_tracing() {
        let (t, f) = line(3);
        let loads = link_loads_all_to_all(&t, &f).unwrap();
        // The link 0 → 1 carries 3 · 3 flows; each endpoint port receives 5.
        let l01 = loads
            .iter()
            .find(|x| x.0 == SwitchId(0) && x.1 == 0)
            .unwrap();
        assert_eq!(l01.2, 9);
        assert!(loads.iter().filter(|x| x.1 >= 2).all(|x| x.2 == 5));
        assert_eq!(loads, brute_loads(&t, &f));
        for (spec, engine, vls) in [
            ("kary-ntree:k=2,n=3", "dmodk", 1),
            ("torus:3x4,endpoints=2", "dor", 2),
            (
                "random:switches=10,ports=8,endpoints=3,links=14,seed=5",
                "minhop",
                1,
            ),
        ] {
            let t = generators::from_spec(spec).unwrap();
            let f = route(&t, engine, &RoutingRequest { vls, classes: 1 }).unwrap();
            assert_eq!(
                link_loads_all_to_all(&t, &f).unwrap(),
                brute_loads(&t, &f),
                "{spec}"
            );
        }
    }

    #[test]
    fn real_infiniband_dump_is_measurable() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/testdata/fabrics/loginoff-8sw-145ca.topo");
        if !path.exists() {
            println!("skipping: test fabric {} is not present", path.display());
            return;
        }
        let t = Topology::read_ib(&path).unwrap();
        let f = route(&t, "minhop", &REQ).unwrap();
        let r = effective_bisection_bandwidth(&t, &f, 200, 1).unwrap();
        println!("loginoff-8sw-145ca, minhop: {r:?}");
        assert!(
            r.ebb_min > 0.0 && r.ebb_max <= 1.0 && r.ebb_mean < 1.0,
            "{r:?}"
        );
        // 145 endpoints: 72 flows per pattern, one endpoint idle.
        assert_eq!(pattern_pairs(145, 1, 0).len(), 72);
        let loads = link_loads_all_to_all(&t, &f).unwrap();
        // Every endpoint receives from the 144 others.
        let to_endpoints: Vec<u64> = loads
            .iter()
            .filter(|(s, p, _)| {
                matches!(
                    t.switch_peer(*s, *p).unwrap().remote.node,
                    NodeId::Endpoint(_)
                )
            })
            .map(|x| x.2)
            .collect();
        assert_eq!(to_endpoints.len(), 145);
        assert!(to_endpoints.iter().all(|&c| c == 144));
    }
}
