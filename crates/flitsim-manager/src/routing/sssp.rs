//! Single-source-shortest-path (SSSP) routing with globally balanced edge weights.
use super::layered::{disconnected, SwitchGraph};
use super::tables::single_layer_fabric;
use super::{RoutingEngine, RoutingRequest};
use crate::{FabricConfig, RoutingError, NO_ROUTE};
use flitsim_topology::{EndpointId, PortNum, Topology};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// SSSP routing (Hoefler, Schneider & Lumsdaine, "Optimized routing for large-scale InfiniBand
/// networks", HOTI 2009), as Algorithm 1 of Domke, Hoefler & Nagel, "Deadlock-Free Oblivious
/// Routing for Arbitrary Topologies", IPDPS 2011.
///
/// **Paths.** Destinations (endpoints) are routed one after the other, in id order. For each,
/// Dijkstra's algorithm over the switch graph (parallel links are separate directed edges)
/// finds from every switch a cheapest path to the destination's switch; the parent edges form
/// a tree towards the destination and become the LFT entries. Then every directed edge's
/// weight grows by the number of paths routed over it: a switch's path counts once per
/// endpoint attached to it (the paper's "number of paths", at endpoint granularity, as
/// OpenSM's implementation counts HCAs). Later destinations therefore avoid loaded links and
/// the load spreads over the whole fabric.
///
/// **Minimal paths.** The paper starts every edge at weight `|V|²` so that a detour (one edge
/// more) always costs more than any accumulated balancing weight. Here the path cost is the
/// pair (hops, accumulated weight) compared lexicographically, which is that argument with an
/// unbounded base weight: every path is a minimal-hop path, and among minimal paths the
/// least loaded one wins, without a bound on the accumulated weights. Ties are broken
/// deterministically: the first relaxation (switches settle in (cost, id) order, edges are
/// scanned in port order) wins.
///
/// **Not deadlock-free in general.** One VL per class ([`super::VlBlocks`]), `routing_sls = 1`.
/// The channel dependency graph is cyclic on rings, tori and most random networks (the paper's
/// Figure 2); use [`super::DfssspEngine`] for deadlock freedom. Fails with
/// [`RoutingError::Unroutable`] when switches with endpoints cannot reach each other.
#[derive(Clone, Copy, Debug, Default)]
pub struct SsspEngine;

impl RoutingEngine for SsspEngine {
    fn name(&self) -> &'static str {
        "sssp"
    }

    fn route(&self, topo: &Topology, req: &RoutingRequest) -> Result<FabricConfig, RoutingError> {
        let g = SwitchGraph::new(topo);
        let lft = sssp_lft(topo, &g, self.name())?;
        single_layer_fabric(self.name(), topo, req, lft)
    }

    /// Every (destination, path) routed as a destination of its own (`sssp_lfts`).
    fn route_paths(
        &self,
        topo: &Topology,
        req: &RoutingRequest,
        paths: usize,
    ) -> Result<FabricConfig, RoutingError> {
        if paths <= 1 {
            return self.route(topo, req);
        }
        let g = SwitchGraph::new(topo);
        let mut lfts = sssp_lfts(topo, &g, self.name(), paths)?.into_iter();
        let lft0 = lfts.next().expect("at least one path");
        let mut f = single_layer_fabric(self.name(), topo, req, lft0)?;
        f.alt_paths = lfts
            .map(|lft| crate::PathTables {
                lft,
                path_sl: Vec::new(),
            })
            .collect();
        Ok(f)
    }
}

/// The LFTs of Algorithm 1 (see [`SsspEngine`]).
pub(super) fn sssp_lft(
    topo: &Topology,
    g: &SwitchGraph,
    engine: &str,
) -> Result<Vec<Vec<PortNum>>, RoutingError> {
    Ok(sssp_lfts(topo, g, engine, 1)?.swap_remove(0))
}

/// The LFTs of Algorithm 1 with `paths` paths per destination: every (destination, path) is
/// routed as a destination of its own, in the order (endpoint, path), each by its own
/// Dijkstra run on the weights all earlier ones left — as OpenSM's SSSP/DFSSSP route every
/// LID of an LMC > 0 port. Path `k` of a destination compares minimal paths first by how
/// many of the earlier paths' trees of the same destination use their links (summed over the
/// links), then by the balancing weight, so the paths of one destination share links only
/// where minimal paths must. With one path the cost is (hops, weight), the paper's.
/// `result[k]` is path `k`.
// The endpoint id indexes the inner dimension of every switch's LFT row, not one slice.
#[allow(clippy::needless_range_loop)]
pub(super) fn sssp_lfts(
    topo: &Topology,
    g: &SwitchGraph,
    engine: &str,
    paths: usize,
) -> Result<Vec<Vec<Vec<PortNum>>>, RoutingError> {
    let paths = paths.max(1);
    let n = g.len();
    let n_ep = topo.num_endpoints();
    // Reverse arcs: for switch x, the arcs (y → x) as (y, channel of y → x).
    let mut rev: Vec<Vec<(u32, u32, PortNum)>> = vec![Vec::new(); n];
    for y in 0..n as u32 {
        for a in g.arcs(y) {
            rev[a.to as usize].push((y, a.chan, a.port));
        }
    }
    let mut weight = vec![0u64; g.channels];
    let mut lfts = vec![vec![vec![NO_ROUTE; n_ep]; n]; paths];
    const FAR: (u32, u64, u64) = (u32::MAX, u64::MAX, u64::MAX);
    // Trees of earlier paths of the current destination over each channel.
    let mut same = vec![0u64; if paths > 1 { g.channels } else { 0 }];
    let mut cost = vec![FAR; n];
    // Parent of each switch: (next switch, channel, port).
    let mut parent: Vec<Option<(u32, u32, PortNum)>> = vec![None; n];
    let mut done = vec![false; n];
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut acc = vec![0u64; n];
    let mut heap = BinaryHeap::new();
    for (e, k) in (0..n_ep).flat_map(|e| (0..paths).map(move |k| (e, k))) {
        flitsim_topology::cancel::check()?;
        let lft = &mut lfts[k];
        let (t, eport) = topo.endpoint_switch(EndpointId(e as u32));
        let t = t.0;
        cost.fill(FAR);
        parent.fill(None);
        done.fill(false);
        order.clear();
        cost[t as usize] = (0, 0, 0);
        heap.push(Reverse(((0u32, 0u64, 0u64), t)));
        if k == 0 {
            same.fill(0);
        }
        while let Some(Reverse((c, x))) = heap.pop() {
            if done[x as usize] {
                continue;
            }
            done[x as usize] = true;
            order.push(x);
            for &(y, chan, port) in &rev[x as usize] {
                if done[y as usize] {
                    continue;
                }
                let shared = same.get(chan as usize).copied().unwrap_or(0);
                let cand = (c.0 + 1, c.1 + shared, c.2 + weight[chan as usize]);
                if cand < cost[y as usize] {
                    cost[y as usize] = cand;
                    parent[y as usize] = Some((x, chan, port));
                    heap.push(Reverse((cand, y)));
                }
            }
        }
        lft[t as usize][e] = eport;
        // Leaves of the tree first: each switch passes its paths on to its parent edge.
        for &x in order.iter().rev() {
            acc[x as usize] = 0;
        }
        for &x in order.iter().rev() {
            if let Some((next, chan, port)) = parent[x as usize] {
                let paths = acc[x as usize] + g.eps[x as usize] as u64;
                weight[chan as usize] += paths;
                acc[next as usize] += paths;
                if let Some(x) = same.get_mut(chan as usize) {
                    *x += 1;
                }
                lft[x as usize][e] = port;
            }
        }
        if let Some(s) = (0..n).find(|&s| !done[s] && g.eps[s] > 0) {
            return Err(disconnected(engine, topo, s as u32, t));
        }
    }
    Ok(lfts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::testutil::{all_paths, switch_hops, torus_distance};
    use flitsim_topology::generators;

    /// Paths per directed switch-to-switch link.
    fn link_loads(topo: &Topology, f: &FabricConfig) -> Vec<u32> {
        let mut load = vec![0u32; topo.total_switch_ports()];
        for (_, _, path) in all_paths(topo, f, 0) {
            for h in &path[..path.len() - 1] {
                load[topo.port_index(h.switch, h.out_port)] += 1;
            }
        }
        load
    }

    #[test]
    fn torus_paths_are_minimal_and_better_balanced_than_minhop() {
        let topo = generators::torus(&[4, 4], 2, 1, 1).unwrap();
        let req = RoutingRequest { vls: 1, classes: 1 };
        let f = SsspEngine.route(&topo, &req).unwrap();
        f.check_routes(&topo).unwrap();
        for (src, dst, path) in all_paths(&topo, &f, 0) {
            let a = topo.endpoint_switch(EndpointId(src)).0 .0;
            let b = topo.endpoint_switch(EndpointId(dst)).0 .0;
            assert_eq!(switch_hops(&path), torus_distance(&[4, 4], true, a, b));
        }
        let m = crate::routing::MinHopEngine.route(&topo, &req).unwrap();
        let (ls, lm) = (link_loads(&topo, &f), link_loads(&topo, &m));
        let max = |l: &[u32]| *l.iter().max().unwrap();
        assert_eq!(ls.iter().sum::<u32>(), lm.iter().sum::<u32>());
        assert!(
            max(&ls) <= max(&lm),
            "sssp {} vs minhop {}",
            max(&ls),
            max(&lm)
        );
    }
}
