//! Up*/Down* routing for arbitrary topologies.
use super::layered::SwitchGraph;
use super::multipath::{updown_ok, updown_search, with_alt_paths, UpDownSteps, FAR};
use super::tables::single_layer_fabric;
use super::{RoutingEngine, RoutingRequest};
use crate::{FabricConfig, RoutingError, NO_ROUTE};
use flitsim_topology::{Bfs, EndpointId, SwitchId, Topology};

/// Up*/Down* routing (Schroeder et al., "Autonet: a high-speed, self-configuring local area
/// network using point-to-point links", IEEE JSAC 9(8), 1991), like OpenSM's `updn` engine,
/// for any connected topology.
///
/// **Roots.** [`UpDownEngine::roots`] names them; by default they are found as OpenSM's
/// `updn` finds them from the min-hop tables: a switch is a root when, over all endpoints, the
/// histogram of its hop distances to their switches has exactly one bar above 90 % of the
/// endpoints and no other bar above 5 % (the spines of a fat tree). Where no switch qualifies
/// (random and other irregular networks, on which OpenSM's `updn` stops with "no root nodes
/// were found"), the switch with the most switch-to-switch links is the root (ties to the
/// lowest id).
///
/// Those roots can sit at different heights (leaves of a fat tree whose neighbours hold few
/// endpoints pass the rule beside the spines), leaving some pairs without a legal path; then
/// the highest-degree switch is the single root instead.
///
/// **Orientation.** A breadth-first search from the root switches gives every switch a level.
/// Every link is directed *up* towards the end with the smaller
/// key (level, switch id), so "up" is a total order and every switch but the lowest-keyed
/// root has an up link (towards its BFS parent). A legal path takes zero or more up links,
/// then zero or more down links, never down then up.
///
/// **Paths.** Tables are destination-based, so a switch's entry must suit every packet that
/// reaches it: a switch that forwards *down* may only forward to a switch that also forwards
/// down. Per destination switch, a level-by-level search from the destination assigns each
/// switch its distance and mode at once: a switch is reached over an up link from any
/// already-reached switch (mode up), or over a down link from a switch in mode down (mode
/// down); at equal distance mode down wins, as it serves more sources. Each switch then
/// forwards to a neighbour one step closer that fits its mode, choosing the port with the
/// fewest destinations assigned so far, as [`super::MinHopEngine`] does (destinations in
/// endpoint order, ties to the lowest port). Paths are the shortest legal paths except where
/// a shorter up-route of an intermediate switch conflicts with the down-route a source needs
/// (then the source takes a longer legal path); all are legal.
///
/// **Deadlock freedom.** Consecutive up channels lead to strictly smaller keys and consecutive
/// down channels to strictly larger keys, so neither kind alone can close a cycle; a cycle
/// would need a dependency from a down channel to an up channel, which legal paths never
/// create. The channel dependency graph is acyclic with one VL per class (Dally & Seitz 1987;
/// Schroeder et al. 1991); `routing_sls = 1`.
///
/// Fails with [`RoutingError::Unroutable`] when a switch with endpoints has no legal path to
/// another (a disconnected topology, or several roots that split it).
#[derive(Clone, Debug, Default)]
pub struct UpDownEngine {
    /// Root switches of the BFS (all at level 0); empty selects them by the min-hop histogram
    /// rule, or the switch with the highest switch-to-switch degree when none qualifies.
    pub roots: Vec<SwitchId>,
}

/// OpenSM's automatic root choice (`updn_find_root_nodes_by_min_hop` in `osm_ucast_updn.c`,
/// reimplemented from its description): the switches whose endpoint-weighted histogram of hop
/// distances has exactly one bar above 90 % of the endpoints and none other above 5 %.
pub(super) fn min_hop_roots(g: &SwitchGraph) -> Vec<u32> {
    let total: u64 = g.eps.iter().map(|&e| e as u64).sum();
    let (thd1, thd2) = (total as f64 * 0.9, total as f64 * 0.05);
    let mut hist: Vec<u64> = Vec::new();
    let mut bfs = Bfs::default();
    (0..g.len() as u32)
        .filter(|&s| {
            // Hop distances from s; a disconnected fabric has no roots.
            let dist = g.distances(&mut bfs, [s]);
            if g.unreached_endpoint_switch(dist).is_some() {
                return false;
            }
            hist.clear();
            for (d, &e) in dist.iter().zip(&g.eps) {
                if *d != Bfs::UNREACHED {
                    if hist.len() <= *d as usize {
                        hist.resize(*d as usize + 1, 0);
                    }
                    hist[*d as usize] += e as u64;
                }
            }
            let over = |t: f64| hist.iter().filter(|&&h| h as f64 > t).count();
            total > 0 && over(thd1) == 1 && over(thd2) == 1
        })
        .collect()
}

impl UpDownEngine {
    /// BFS levels from the roots that [`RoutingEngine::route`] uses (`u32::MAX` for switches
    /// the roots cannot reach): the given roots; else the min-hop rule's roots if they give
    /// every switch with endpoints a legal path to every other; else the highest-degree switch.
    pub fn levels(&self, topo: &Topology) -> Result<Vec<u32>, RoutingError> {
        let one = RoutingRequest { vls: 1, classes: 1 };
        Ok(self.resolve(topo, &one)?.0)
    }

    /// The levels and tables of the roots chosen as described under **Roots**.
    fn resolve(
        &self,
        topo: &Topology,
        req: &RoutingRequest,
    ) -> Result<(Vec<u32>, FabricConfig), RoutingError> {
        let g = SwitchGraph::new(topo);
        let attempt = |roots: &[u32]| {
            let level = levels_of(topo, &g, roots)?;
            let f = route_levels(topo, req, &g, &level)?;
            Ok::<_, RoutingError>((level, f))
        };
        if !self.roots.is_empty() {
            let roots: Vec<u32> = self.roots.iter().map(|r| r.0).collect();
            return attempt(&roots);
        }
        let found = min_hop_roots(&g);
        if !found.is_empty() {
            match attempt(&found) {
                Err(RoutingError::Unroutable(_)) => {}
                other => return other,
            }
        }
        attempt(&[highest_degree(&g)])
    }
}

/// The switch with the most switch-to-switch links (ties to the lowest id).
fn highest_degree(g: &SwitchGraph) -> u32 {
    (0..g.len() as u32)
        .max_by_key(|&s| (g.arcs(s).len(), std::cmp::Reverse(s)))
        .unwrap_or(0)
}

fn levels_of(topo: &Topology, g: &SwitchGraph, roots: &[u32]) -> Result<Vec<u32>, RoutingError> {
    let n = g.len();
    if let Some(r) = roots.iter().find(|&&r| r as usize >= n) {
        return Err(RoutingError::Unroutable(format!(
            "updn: root switch {r} does not exist (the topology has {n} switches)"
        )));
    }
    let level = g
        .distances(&mut Bfs::default(), roots.iter().copied())
        .to_vec();
    if let Some(s) = g.unreached_endpoint_switch(&level) {
        return Err(RoutingError::Unroutable(format!(
            "updn: switch {} is not reachable from the root switches: the topology is disconnected",
            topo.switches()[s].name
        )));
    }
    Ok(level)
}

impl RoutingEngine for UpDownEngine {
    fn name(&self) -> &'static str {
        "updn"
    }

    fn route(&self, topo: &Topology, req: &RoutingRequest) -> Result<FabricConfig, RoutingError> {
        Ok(self.resolve(topo, req)?.1)
    }

    /// Further paths over other up*/down*-legal ports of the same orientation (see the
    /// `multipath` module), so all paths together stay deadlock-free.
    fn route_paths(
        &self,
        topo: &Topology,
        req: &RoutingRequest,
        paths: usize,
    ) -> Result<FabricConfig, RoutingError> {
        let (level, f) = self.resolve(topo, req)?;
        if paths <= 1 {
            return Ok(f);
        }
        let g = SwitchGraph::new(topo);
        let key = level
            .iter()
            .enumerate()
            .map(|(s, &l)| (l, s as u32))
            .collect();
        with_alt_paths(f, topo, &g, paths, &mut UpDownSteps::new(key))
    }
}

/// Up*/Down* tables for the orientation given by `level` (see [`UpDownEngine`]).
// The endpoint id indexes the inner dimension of every switch's LFT row, not one slice.
#[allow(clippy::needless_range_loop)]
fn route_levels(
    topo: &Topology,
    req: &RoutingRequest,
    g: &SwitchGraph,
    level: &[u32],
) -> Result<FabricConfig, RoutingError> {
    let n = g.len();
    let key = |s: u32| (level[s as usize], s);
    // a → b is up when b has the smaller key.
    let up = |a: u32, b: u32| key(b) < key(a);
    let n_ep = topo.num_endpoints();
    let mut lft = vec![vec![NO_ROUTE; n_ep]; n];
    let mut load = vec![0u32; g.channels];
    let mut dist = vec![FAR; n];
    let mut down = vec![false; n];
    let mut routed_for = None;
    let mut frontier: Vec<u32> = Vec::new();
    let mut next: Vec<u32> = Vec::new();
    for e in 0..n_ep {
        flitsim_topology::cancel::check()?;
        let (t, eport) = topo.endpoint_switch(EndpointId(e as u32));
        let t = t.0;
        if routed_for != Some(t) {
            updown_search(g, t, up, &mut dist, &mut down, &mut frontier, &mut next);
            routed_for = Some(t);
        }
        lft[t as usize][e] = eport;
        for s in (0..n as u32).filter(|&s| s != t) {
            if dist[s as usize] == FAR {
                if g.eps[s as usize] > 0 {
                    return Err(RoutingError::Unroutable(format!(
                        "updn: switch {} has no legal up*/down* path to switch {}",
                        topo.switches()[s as usize].name,
                        topo.switches()[t as usize].name
                    )));
                }
                continue;
            }
            let a = g
                .least_loaded(
                    s,
                    |a| load[a.chan as usize],
                    |a| updown_ok(up, &dist, &down, s, a),
                )
                .expect("a reached switch has a neighbour one step closer in its mode");
            load[a.chan as usize] += 1;
            lft[s as usize][e] = a.port;
        }
    }
    single_layer_fabric("updn", topo, req, lft)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdg;
    use flitsim_topology::generators;

    #[test]
    fn default_roots_are_the_spines_or_the_highest_degree_and_can_be_chosen() {
        let topo = generators::kary_ntree(2, 3, 1).unwrap();
        // Leaves 0-3, middle 4-7, spines 8-11: every endpoint is 2 hops from a spine, while a
        // middle switch has a quarter of them 1 hop away and the rest 3, a leaf 1/4 at 0.
        let g = SwitchGraph::new(&topo);
        assert_eq!(min_hop_roots(&g), vec![8, 9, 10, 11]);
        let lv = UpDownEngine::default().levels(&topo).unwrap();
        assert_eq!(&lv[8..12], &[0, 0, 0, 0]);
        assert_eq!(&lv[0..4], &[2, 2, 2, 2]);
        // A ring has no switch with one dominant distance: the highest degree (all 2, so the
        // lowest id) is the root.
        let ring = generators::torus(&[6], 1, 1, 1).unwrap();
        assert!(min_hop_roots(&SwitchGraph::new(&ring)).is_empty());
        let lv = UpDownEngine::default().levels(&ring).unwrap();
        assert_eq!(lv, vec![0, 1, 2, 3, 2, 1]);
        // Given roots override the rule.
        let roots = vec![SwitchId(4), SwitchId(5)];
        let lv = UpDownEngine { roots }.levels(&topo).unwrap();
        assert_eq!(&lv[4..6], &[0, 0]);
        let roots = vec![SwitchId(8), SwitchId(9), SwitchId(10), SwitchId(11)];
        let e = UpDownEngine { roots };
        let lv = e.levels(&topo).unwrap();
        assert_eq!(&lv[8..12], &[0, 0, 0, 0]);
        assert_eq!(&lv[0..4], &[2, 2, 2, 2]);
        let f = e
            .route(&topo, &RoutingRequest { vls: 1, classes: 1 })
            .unwrap();
        assert!(cdg::verify(&topo, &f).unwrap().deadlock_free);
        let bad = UpDownEngine {
            roots: vec![SwitchId(99)],
        };
        assert!(bad
            .route(&topo, &RoutingRequest { vls: 1, classes: 1 })
            .unwrap_err()
            .to_string()
            .contains("root switch 99"));
    }
}
