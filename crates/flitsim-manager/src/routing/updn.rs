//! Up*/Down* routing for arbitrary topologies.
use super::layered::{single_layer_fabric, SwitchGraph};
use super::{RoutingEngine, RoutingRequest};
use crate::{FabricConfig, RoutingError, NO_ROUTE};
use flitsim_topology::{EndpointId, SwitchId, Topology};
use std::collections::VecDeque;

/// Up*/Down* routing (Schroeder et al., "Autonet: a high-speed, self-configuring local area
/// network using point-to-point links", IEEE JSAC 9(8), 1991), like OpenSM's `updn` engine,
/// for any connected topology.
///
/// **Orientation.** A breadth-first search from the root switches (by default the switch with
/// the most switch-to-switch links, ties to the lowest id; [`UpDownEngine::roots`] overrides)
/// gives every switch a level. Every link is directed *up* towards the end with the smaller
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
    /// Root switches of the BFS (all at level 0); empty selects the switch with the highest
    /// switch-to-switch degree.
    pub roots: Vec<SwitchId>,
}

impl UpDownEngine {
    /// BFS levels from the roots (`u32::MAX` for switches the roots cannot reach).
    pub fn levels(&self, topo: &Topology) -> Result<Vec<u32>, RoutingError> {
        let g = SwitchGraph::new(topo);
        self.levels_of(topo, &g)
    }

    fn levels_of(&self, topo: &Topology, g: &SwitchGraph) -> Result<Vec<u32>, RoutingError> {
        let n = g.len();
        let roots: Vec<u32> = if self.roots.is_empty() {
            (0..n as u32)
                .max_by_key(|&s| (g.arcs(s).len(), std::cmp::Reverse(s)))
                .into_iter()
                .collect()
        } else {
            self.roots.iter().map(|r| r.0).collect()
        };
        if let Some(r) = roots.iter().find(|&&r| r as usize >= n) {
            return Err(RoutingError::Unroutable(format!(
                "updn: root switch {r} does not exist (the topology has {n} switches)"
            )));
        }
        let mut level = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        for &r in &roots {
            if level[r as usize] == u32::MAX {
                level[r as usize] = 0;
                queue.push_back(r);
            }
        }
        while let Some(u) = queue.pop_front() {
            for a in g.arcs(u) {
                if level[a.to as usize] == u32::MAX {
                    level[a.to as usize] = level[u as usize] + 1;
                    queue.push_back(a.to);
                }
            }
        }
        if let Some(s) = (0..n).find(|&s| level[s] == u32::MAX && g.eps[s] > 0) {
            return Err(RoutingError::Unroutable(format!(
                "updn: switch {} is not reachable from the root switches: the topology is disconnected",
                topo.switches()[s].name
            )));
        }
        Ok(level)
    }
}

impl RoutingEngine for UpDownEngine {
    fn name(&self) -> &'static str {
        "updn"
    }

    // The endpoint id indexes the inner dimension of every switch's LFT row, not one slice.
    #[allow(clippy::needless_range_loop)]
    fn route(&self, topo: &Topology, req: &RoutingRequest) -> Result<FabricConfig, RoutingError> {
        let g = SwitchGraph::new(topo);
        let level = self.levels_of(topo, &g)?;
        let n = g.len();
        let key = |s: u32| (level[s as usize], s);
        // a → b is up when b has the smaller key.
        let up = |a: u32, b: u32| key(b) < key(a);
        let n_ep = topo.num_endpoints();
        let mut lft = vec![vec![NO_ROUTE; n_ep]; n];
        let mut load = vec![0u32; g.channels];
        const FAR: u32 = u32::MAX;
        let mut dist = vec![FAR; n];
        let mut down = vec![false; n];
        let mut routed_for = None;
        let mut frontier: Vec<u32> = Vec::new();
        let mut next: Vec<u32> = Vec::new();
        for e in 0..n_ep {
            let (t, eport) = topo.endpoint_switch(EndpointId(e as u32));
            let t = t.0;
            if routed_for != Some(t) {
                dist.fill(FAR);
                down.fill(false);
                dist[t as usize] = 0;
                down[t as usize] = true;
                frontier.clear();
                frontier.push(t);
                let mut d = 0;
                while !frontier.is_empty() {
                    next.clear();
                    for &x in &frontier {
                        // Arcs x → y are the reverse of the links y → x a packet would take.
                        for a in g.arcs(x) {
                            let y = a.to;
                            if dist[y as usize] != FAR && dist[y as usize] != d + 1 {
                                continue;
                            }
                            let goes_down = !up(y, x);
                            if goes_down && !down[x as usize] {
                                continue;
                            }
                            if dist[y as usize] == FAR {
                                dist[y as usize] = d + 1;
                                next.push(y);
                            }
                            down[y as usize] |= goes_down;
                        }
                    }
                    std::mem::swap(&mut frontier, &mut next);
                    d += 1;
                }
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
                    .arcs(s)
                    .iter()
                    .filter(|a| {
                        dist[a.to as usize] + 1 == dist[s as usize]
                            && if down[s as usize] {
                                !up(s, a.to) && down[a.to as usize]
                            } else {
                                up(s, a.to)
                            }
                    })
                    .min_by_key(|a| (load[a.chan as usize], a.port))
                    .expect("a reached switch has a neighbour one step closer in its mode");
                load[a.chan as usize] += 1;
                lft[s as usize][e] = a.port;
            }
        }
        single_layer_fabric(self.name(), topo, req, lft)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdg;
    use flitsim_topology::generators;

    #[test]
    fn roots_default_to_the_highest_degree_and_can_be_chosen() {
        let topo = generators::kary_ntree(2, 3, 1).unwrap();
        // Level-1 switches have the most switch links (4); the lowest is switch 4.
        let lv = UpDownEngine::default().levels(&topo).unwrap();
        assert_eq!(lv[4], 0);
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
