//! LASH: layered shortest-path routing.
use super::layered::{
    disconnected, layered_fabric, online_layers, Deps, LayerPlan, PathSet, SwitchGraph,
};
use super::{RoutingEngine, RoutingRequest};
use crate::{FabricConfig, RoutingError, NO_ROUTE};
use flitsim_topology::{Bfs, EndpointId, PortNum, SwitchId, Topology};

/// LASH (Skeie, Lysne & Theiss, "Layered Shortest Path (LASH) Routing in Irregular System
/// Area Networks", IPDPS 2002; Lysne et al., "Layered routing in irregular networks", IEEE
/// TPDS 2006) for any connected topology.
///
/// **Paths.** One minimal path per (source switch, destination switch) pair, as LASH routes
/// switch pairs: for each destination switch with endpoints (in id order) a breadth-first
/// search gives hop distances, and every other switch forwards through a port towards a
/// neighbour one hop closer, the one with the fewest endpoints routed over it so far (ties to
/// the lowest port), like [`super::MinHopEngine`] but per switch. All endpoints of the
/// destination switch share the entry, so the paths are destination-based (one LFT) and each
/// switch pair has exactly one path.
///
/// **Layers.** Switch pairs in order (source, then destination) go to the first virtual layer
/// whose channel dependency graph stays acyclic with the path's dependencies added; a new
/// layer is opened when none does. The path SL of every endpoint pair is the layer of its
/// switch pair, wire SL = `class · routing_sls + layer`, and every hop uses VL
/// `base(class) + layer` ([`super::VlBlocks`]); `routing_sls` is the number of layers. With
/// `balance` the spare VLs of a class's block are also used, as in [`super::DfssspEngine`].
///
/// **Deadlock freedom.** Each layer's CDG is acyclic by construction and paths never change
/// layer, so the whole CDG is acyclic (Dally & Seitz 1987). Needs as many VLs per class as
/// layers; fails with [`RoutingError::NotEnoughVls`] naming the number of layers otherwise.
#[derive(Clone, Copy, Debug, Default)]
pub struct LashEngine {
    /// Spread the layers over the spare VLs of each class's block.
    pub balance: bool,
    /// Use at most this many VLs (layers) per class.
    pub max_layers: Option<u8>,
}

impl RoutingEngine for LashEngine {
    fn name(&self) -> &'static str {
        "lash"
    }

    fn route(&self, topo: &Topology, req: &RoutingRequest) -> Result<FabricConfig, RoutingError> {
        let g = SwitchGraph::new(topo);
        let lft = switch_pair_lft(topo, &g, self.name())?;
        let paths = PathSet::from_lft(topo, &g, &lft, true)?;
        let deps = Deps::new(&paths, g.channels);
        let layers = online_layers(&paths, &deps, g.channels, 255);
        // Layering stops early with a meaningless result when cancelled.
        flitsim_topology::cancel::check()?;
        layered_fabric(
            topo,
            req,
            vec![lft],
            &paths,
            layers,
            &LayerPlan {
                engine: self.name(),
                method: "first-fit layering of switch-pair paths".into(),
                balance: self.balance,
                max_layers: self.max_layers,
            },
        )
    }
}

/// Minimal destination-switch-based LFTs with least-loaded port choice (see [`LashEngine`]).
fn switch_pair_lft(
    topo: &Topology,
    g: &SwitchGraph,
    engine: &str,
) -> Result<Vec<Vec<PortNum>>, RoutingError> {
    let n = g.len();
    let mut lft = vec![vec![NO_ROUTE; topo.num_endpoints()]; n];
    let mut load = vec![0u64; g.channels];
    let mut bfs = Bfs::default();
    for t in (0..n as u32).filter(|&t| g.eps[t as usize] > 0) {
        flitsim_topology::cancel::check()?;
        let dist = g.distances(&mut bfs, [t]);
        let here: Vec<(PortNum, EndpointId)> = topo.switch_endpoints(SwitchId(t)).collect();
        for &(p, e) in &here {
            lft[t as usize][e.0 as usize] = p;
        }
        g.min_hop_towards(t, dist, &mut load, here.len() as u64, |s, port| {
            for &(_, e) in &here {
                lft[s][e.0 as usize] = port;
            }
        })
        .map_err(|s| disconnected(engine, topo, s, t))?;
    }
    Ok(lft)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdg;
    use flitsim_topology::generators;

    #[test]
    fn a_torus_needs_several_layers_and_each_is_acyclic() {
        let topo = generators::torus(&[4, 4], 2, 1, 1).unwrap();
        let f = LashEngine::default()
            .route(&topo, &RoutingRequest { vls: 8, classes: 1 })
            .unwrap();
        assert!(f.routing_sls >= 2, "{}", f.routing_sls);
        let r = cdg::verify(&topo, &f).unwrap();
        assert!(r.deadlock_free, "{:?}", r.cycle);
        // All endpoints of a switch pair share the layer.
        let n = topo.num_endpoints();
        for s in 0..n {
            for d in 0..n {
                assert_eq!(f.path_sl[s * n + d], f.path_sl[(s ^ 1) * n + (d ^ 1)]);
            }
        }
    }
}
