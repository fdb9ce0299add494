//! Fat-tree routing in the manner of OpenSM's `ftree` engine.
use super::layered::SwitchGraph;
use super::multipath::{with_alt_paths, UpDownSteps};
use super::tables::single_layer_fabric;
use super::{RoutingEngine, RoutingRequest};
use crate::{FabricConfig, RoutingError, NO_ROUTE};
use flitsim_topology::{Bfs, SwitchId, Topology};

/// Fat-tree routing for fat trees such as [`flitsim_topology::Shape::KaryNTree`] (Petrini & Vanneschi 1997) and [`flitsim_topology::Shape::Xgft`]
/// (Öhring et al. 1995) fabrics, following the algorithm of OpenSM's `ftree` engine
/// (Zahavi et al., "Optimized InfiniBand fat-tree routing for shift all-to-all communication
/// patterns", CCPE 22(2), 2010).
///
/// **Structure.** Levels come from the links: switches with endpoints are level 0 (leaves),
/// and every other switch is one above its nearest leaf; every switch-to-switch link must join
/// adjacent levels, else the topology is refused. Links to a higher level are up links.
///
/// **Paths.** Destinations are indexed in the order of their leaves (switch id) and, within a
/// leaf, of their ports — OpenSM's ordering — and routed one after the other:
/// - *down-going by going up*: from the destination's leaf the route climbs, at each switch
///   through the up link that carries the fewest down-going routes so far (ties to the lowest
///   port); the switch above gets a down entry towards it. This chain of switches is the only
///   place where the destination's traffic goes down.
/// - *up-going by going down*: from each chain switch, lowest first, a level-by-level search
///   downwards gives every switch that has no entry yet an up entry towards a switch of the
///   previous level of the search, through the up link with the fewest up-going routes.
///   Lower chain switches go first, so each switch climbs only to the lowest chain switch
///   above it: paths are minimal.
/// - switches still without an entry (roots and middle switches off the chain's cone) get
///   down entries towards down-routed switches, then up entries towards routed ones, so the
///   tables are complete; no endpoint's traffic uses them, so they do not count as load.
///
/// On a complete k-ary n-tree with the generator's numbering this yields exactly the d-mod-k
/// paths of [`super::DmodkEngine`] for every endpoint pair (the index order is the endpoint
/// order, and the least-loaded choice reproduces `digit_l(e)`); only the completion entries,
/// which no endpoint's traffic uses, may differ. So on those trees `ftree` balances exactly
/// as well as `dmodk`; unlike `dmodk` it reads the structure from the links, so it also routes
/// fat trees with missing links, XGFTs and permuted numberings, balancing by load.
///
/// **Deadlock freedom.** A switch with a down entry forwards to a switch with a down entry,
/// so every path is up links followed by down links; levels strictly rise along up links and
/// fall along down links, so no dependency cycle exists (Dally & Seitz 1987). One VL per
/// class, `routing_sls = 1`.
#[derive(Clone, Copy, Debug, Default)]
pub struct FtreeEngine;

impl RoutingEngine for FtreeEngine {
    fn name(&self) -> &'static str {
        "ftree"
    }

    fn route(&self, topo: &Topology, req: &RoutingRequest) -> Result<FabricConfig, RoutingError> {
        // Any topology with a fat tree's level structure is routed, whatever generated it
        // (files from ibnetdiscover included); `levels` rejects the others with the reason.
        let g = SwitchGraph::new(topo);
        let n = g.len();
        let level = levels(topo, &g)?;
        let top = level.iter().copied().max().unwrap_or(0);
        let mut by_level: Vec<Vec<u32>> = vec![Vec::new(); top as usize + 1];
        for s in 0..n as u32 {
            by_level[level[s as usize] as usize].push(s);
        }
        let n_ep = topo.num_endpoints();
        let mut lft = vec![vec![NO_ROUTE; n_ep]; n];
        // Routes per channel: down-going ones on the channel that carries them down, up-going
        // ones on the channel that carries them up.
        let mut down_load = vec![0u32; g.channels];
        let mut up_load = vec![0u32; g.channels];
        let mut routed = vec![false; n];
        let mut down = vec![false; n];
        let mut stamp = vec![0u32; n];
        let mut gen = 0u32;
        let mut frontier: Vec<u32> = Vec::new();
        let mut cands: Vec<u32> = Vec::new();
        for &leaf in &by_level[0] {
            for (eport, e) in topo.switch_endpoints(SwitchId(leaf)) {
                flitsim_topology::cancel::check()?;
                let e = e.0 as usize;
                routed.fill(false);
                down.fill(false);
                lft[leaf as usize][e] = eport;
                routed[leaf as usize] = true;
                down[leaf as usize] = true;
                let mut cur = leaf;
                loop {
                    // Up-going by going down from `cur`.
                    frontier.clear();
                    frontier.push(cur);
                    for lvl in (0..level[cur as usize]).rev() {
                        gen += 1;
                        for &x in &frontier {
                            stamp[x as usize] = gen;
                        }
                        cands.clear();
                        for &x in &frontier {
                            for a in g.arcs(x) {
                                if level[a.to as usize] == lvl && !routed[a.to as usize] {
                                    routed[a.to as usize] = true;
                                    cands.push(a.to);
                                }
                            }
                        }
                        cands.sort_unstable();
                        for &c in &cands {
                            let a = g
                                .least_loaded(
                                    c,
                                    |a| up_load[a.chan as usize],
                                    |a| stamp[a.to as usize] == gen,
                                )
                                .expect("a candidate is linked to the frontier");
                            up_load[a.chan as usize] += 1;
                            lft[c as usize][e] = a.port;
                        }
                        std::mem::swap(&mut frontier, &mut cands);
                    }
                    // Down-going by going up.
                    let Some(a) = g.least_loaded(
                        cur,
                        |a| down_load[a.back as usize],
                        |a| level[a.to as usize] > level[cur as usize],
                    ) else {
                        break;
                    };
                    down_load[a.back as usize] += 1;
                    lft[a.to as usize][e] = a.to_port;
                    routed[a.to as usize] = true;
                    down[a.to as usize] = true;
                    cur = a.to;
                }
                // Complete the tables: down entries bottom-up, then up entries top-down. These
                // routes carry no endpoint's traffic, so (as in OpenSM) they do not count as load.
                for (lvl, row) in by_level.iter().enumerate().skip(1) {
                    for &u in row {
                        if routed[u as usize] {
                            continue;
                        }
                        if let Some(a) = g.least_loaded(
                            u,
                            |a| down_load[a.chan as usize],
                            |a| level[a.to as usize] + 1 == lvl as u32 && down[a.to as usize],
                        ) {
                            lft[u as usize][e] = a.port;
                            routed[u as usize] = true;
                            down[u as usize] = true;
                        }
                    }
                }
                for lvl in (0..top as usize).rev() {
                    for &u in &by_level[lvl] {
                        if routed[u as usize] {
                            continue;
                        }
                        if let Some(a) = g.least_loaded(
                            u,
                            |a| up_load[a.chan as usize],
                            |a| level[a.to as usize] == lvl as u32 + 1 && routed[a.to as usize],
                        ) {
                            lft[u as usize][e] = a.port;
                            routed[u as usize] = true;
                        }
                    }
                }
                if let Some(s) = (0..n).find(|&s| !routed[s] && g.eps[s] > 0) {
                    return Err(RoutingError::Unroutable(format!(
                        "ftree: switch {} has no up/down path to endpoint {e}",
                        topo.switches()[s].name
                    )));
                }
            }
        }
        single_layer_fabric(self.name(), topo, req, lft)
    }

    /// Further paths over the other minimal up/down ports (see the `multipath` module).
    fn route_paths(
        &self,
        topo: &Topology,
        req: &RoutingRequest,
        paths: usize,
    ) -> Result<FabricConfig, RoutingError> {
        let f = self.route(topo, req)?;
        fat_tree_alt_paths(f, topo, paths)
    }
}

/// `fabric` (path 0 of a fat-tree engine) with paths `1..paths` over the minimal up/down
/// ports of the fat tree's levels ([`levels`]).
pub(super) fn fat_tree_alt_paths(
    fabric: FabricConfig,
    topo: &Topology,
    paths: usize,
) -> Result<FabricConfig, RoutingError> {
    if paths <= 1 {
        return Ok(fabric);
    }
    let g = SwitchGraph::new(topo);
    let level = levels(topo, &g)?;
    with_alt_paths(fabric, topo, &g, paths, &mut UpDownSteps::fat_tree(&level))
}

/// Level of every switch: 0 for switches with endpoints, else one above the nearest one.
/// Fails unless every switch link joins adjacent levels.
fn levels(topo: &Topology, g: &SwitchGraph) -> Result<Vec<u32>, RoutingError> {
    let n = g.len();
    let leaves = (0..n as u32).filter(|&s| g.eps[s as usize] > 0);
    let level = g.distances(&mut Bfs::default(), leaves).to_vec();
    let name = |s: u32| &topo.switches()[s as usize].name;
    for s in 0..n as u32 {
        if level[s as usize] == Bfs::UNREACHED {
            return Err(RoutingError::Unroutable(format!(
                "ftree: switch {} is not connected to any leaf",
                name(s)
            )));
        }
        for a in g.arcs(s) {
            if level[s as usize].abs_diff(level[a.to as usize]) != 1 {
                return Err(RoutingError::Unroutable(format!(
                    "ftree: switches {} (level {}) and {} (level {}) are linked, but a fat tree only links adjacent levels",
                    name(s),
                    level[s as usize],
                    name(a.to),
                    level[a.to as usize]
                )));
            }
        }
    }
    Ok(level)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untagged_fat_trees_are_routed_like_tagged_ones() {
        let tagged = flitsim_topology::generators::kary_ntree(4, 3, 1).unwrap();
        // The same graph as read from a file: no shape tag.
        let mut json: serde_json::Value = serde_json::from_str(&tagged.to_json()).unwrap();
        json["shape"] = serde_json::json!({ "kind": "irregular" });
        let untagged = Topology::from_json(&json.to_string()).unwrap();
        let req = RoutingRequest { vls: 1, classes: 1 };
        let a = FtreeEngine.route(&tagged, &req).unwrap();
        let b = FtreeEngine.route(&untagged, &req).unwrap();
        assert_eq!(a.lft, b.lft);
        // A network that is not a fat tree is refused with the structural reason.
        let torus = flitsim_topology::generators::torus(&[4, 4], 1, 1, 1).unwrap();
        let e = FtreeEngine.route(&torus, &req).unwrap_err().to_string();
        assert!(e.contains("adjacent levels"), "{e}");
    }
    use crate::routing::testutil::all_paths;
    use crate::routing::DmodkEngine;
    use flitsim_topology::generators;

    #[test]
    fn complete_kary_ntrees_get_the_dmodk_tables() {
        for (k, n) in [(2u32, 3u32), (3, 3), (4, 2), (2, 4)] {
            let topo = generators::kary_ntree(k, n, 1).unwrap();
            let req = RoutingRequest { vls: 1, classes: 1 };
            let f = FtreeEngine.route(&topo, &req).unwrap();
            let d = DmodkEngine.route(&topo, &req).unwrap();
            // Every path an endpoint's traffic takes is the d-mod-k path.
            assert_eq!(
                all_paths(&topo, &f, 0),
                all_paths(&topo, &d, 0),
                "{k}-ary {n}-tree"
            );
            // Leaves agree entirely.
            let leaves = k.pow(n - 1) as usize;
            assert_eq!(f.lft[..leaves], d.lft[..leaves]);
        }
    }
}
