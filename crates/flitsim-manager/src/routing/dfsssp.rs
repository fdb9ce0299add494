//! Deadlock-free SSSP routing (DFSSSP): SSSP paths split into acyclic virtual layers.
use super::layered::{
    first_fit_restarts, layered_fabric, offline_layers, online_layers, CycleHeuristic, Deps,
    LayerPlan, PathSet, SwitchGraph,
};
use super::sssp::sssp_lfts;
use super::{RoutingEngine, RoutingRequest};
use crate::{FabricConfig, RoutingError};
use flitsim_topology::Topology;

/// DFSSSP (Domke, Hoefler & Nagel, "Deadlock-Free Oblivious Routing for Arbitrary
/// Topologies", IPDPS 2011): the balanced minimal paths of [`super::SsspEngine`]
/// (Algorithm 1), assigned to virtual layers so that each layer's channel dependency graph is
/// acyclic.
///
/// **Layers.** A path is the sequence of directed switch-to-switch links its packets use; two
/// consecutive links form a dependency. Paths are handled per (source switch, destination
/// endpoint), weighted by the endpoints on the source switch (they share every channel).
/// - *Offline* (default; the paper's Algorithm 2): all paths start in layer 0; a cycle search
///   over the layer's CDG cuts each cycle it finds by moving all paths that induce one of its
///   edges, chosen by `heuristic` ([`CycleHeuristic`]: weakest edge by default), to the next
///   layer, then resumes; the next layer is processed likewise until a layer stays intact.
/// - *Online* (`online: true`; the paper's first approach, as LASH does it): paths in order
///   (source switch, then destination) go to the first layer that stays acyclic.
/// - *Restarts* (`restarts`, default [`DfssspEngine::DEFAULT_RESTARTS`]; flitsim's addition):
///   after the assignment above, first fit is run again `restarts` times with the paths
///   ordered longest first (ties in index order, then in seeded random orders), in parallel;
///   a run replaces the paper's assignment only if it needs strictly fewer layers, ties to the
///   lower run, so the result is deterministic and never worse than the paper's. Acyclic path
///   partitioning generalises graph colouring (the paper's Theorem 1), and largest-first
///   greedy colouring with random restarts is the classic cheap heuristic for that. What it
///   saves on the paper's networks is measured in `docs/validation/routing.md`.
///   First fit uses an incremental topological order per layer (Pearce & Kelly). Each
///   restart may visit at most 16 channels per path dependency in its searches, and if the
///   first one exceeds that no others run (a deterministic work bound for graphs on which
///   first fit is slow; times in `docs/performance.md`). `restarts: 0` gives the paper's
///   algorithm alone.
///
/// **VLs and SLs.** The path SL selects the layer's VL: wire SL = `class · routing_sls +
/// path_sl`, and every hop (and the NIC's injection link) uses VL `base(class) + path_sl`
/// ([`super::VlBlocks`]). With `balance` (default) the spare VLs of a class's block are given
/// to the layers with the most paths per VL and each layer's endpoint pairs are spread over
/// its VLs by `(src + dst) mod lanes` (the paper's balancing step; a subset of an acyclic
/// layer is acyclic); then `routing_sls` is the block size, otherwise the number of layers.
/// `max_layers` caps the VLs used per class.
///
/// **Deadlock freedom.** Every layer's CDG is acyclic and no path changes VL, so the CDG of the
/// fabric, a disjoint union of the layers' CDGs, is acyclic (Dally & Seitz 1987). The engine
/// needs as many VLs per class as layers; it fails with [`RoutingError::NotEnoughVls`]
/// ("dfsssp needs N virtual layers …, but only M VLs are available") otherwise. On
/// loop-free switch graphs and fat trees (minimal paths are up/down) one layer suffices;
/// the paper reports 3–5 for random networks of 64 switches with the weakest-edge heuristic
/// (Section IV).
#[derive(Clone, Copy, Debug)]
pub struct DfssspEngine {
    /// Which cycle edge the offline algorithm cuts.
    pub heuristic: CycleHeuristic,
    /// Use the online (first-fit) assignment instead of the offline cycle breaking.
    pub online: bool,
    /// Spread paths over unused VLs.
    pub balance: bool,
    /// Use at most this many VLs (layers) per class.
    pub max_layers: Option<u8>,
    /// First-fit restarts tried after the paper's assignment (0: the paper's alone).
    pub restarts: u32,
}

impl DfssspEngine {
    /// Default [`DfssspEngine::restarts`].
    pub const DEFAULT_RESTARTS: u32 = 8;
}

impl Default for DfssspEngine {
    fn default() -> Self {
        DfssspEngine {
            heuristic: CycleHeuristic::Weakest,
            online: false,
            balance: true,
            max_layers: None,
            restarts: Self::DEFAULT_RESTARTS,
        }
    }
}

/// Layers the search may open before giving up (the SL space holds at most 255 per class).
const LAYER_CAP: usize = 255;

impl RoutingEngine for DfssspEngine {
    fn name(&self) -> &'static str {
        "dfsssp"
    }

    fn route(&self, topo: &Topology, req: &RoutingRequest) -> Result<FabricConfig, RoutingError> {
        self.route_paths(topo, req, 1)
    }

    /// Every (destination, path) routed by SSSP as a destination of its own
    /// (`sssp_lfts`), and the layers assigned over the paths of every LID
    /// together, so the CDG of all paths is acyclic; each path gets its own path SLs.
    fn route_paths(
        &self,
        topo: &Topology,
        req: &RoutingRequest,
        paths: usize,
    ) -> Result<FabricConfig, RoutingError> {
        let g = SwitchGraph::new(topo);
        let lfts = sssp_lfts(topo, &g, self.name(), paths.max(1))?;
        let paths = PathSet::from_lfts(topo, &g, &lfts)?;
        let deps = Deps::new(&paths, g.channels);
        let mut result = if self.online {
            online_layers(&paths, &deps, g.channels, LAYER_CAP)
        } else {
            offline_layers(&paths, &deps, g.channels, self.heuristic, LAYER_CAP)
        };
        let mut method = if self.online {
            "online first-fit layering".to_string()
        } else {
            format!(
                "offline cycle breaking, {} edge heuristic",
                self.heuristic.name()
            )
        };
        if self.restarts > 0 {
            // Only strictly better runs can replace the paper's assignment.
            let cap = match &result {
                Ok((_, n)) => n - 1,
                Err(_) => LAYER_CAP,
            };
            if let Some(better) = first_fit_restarts(&paths, &deps, g.channels, self.restarts, cap)
            {
                result = Ok(better);
            }
            method.push_str(&format!(
                ", then up to {} longest-first first-fit restart{}",
                self.restarts,
                if self.restarts == 1 { "" } else { "s" }
            ));
        }
        // Layering stops early with a meaningless result when cancelled.
        flitsim_topology::cancel::check()?;
        layered_fabric(
            topo,
            req,
            lfts,
            &paths,
            result,
            &LayerPlan {
                engine: self.name(),
                method,
                balance: self.balance,
                max_layers: self.max_layers,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdg;
    use flitsim_topology::generators;

    #[test]
    fn a_ring_needs_two_layers_and_gets_them() {
        let topo = generators::torus(&[6], 1, 1, 1).unwrap();
        let req = RoutingRequest { vls: 2, classes: 1 };
        for online in [false, true] {
            let e = DfssspEngine {
                online,
                ..Default::default()
            };
            let f = e.route(&topo, &req).unwrap();
            assert_eq!(f.routing_sls, 2);
            assert!(cdg::verify(&topo, &f).unwrap().deadlock_free);
            let err = e
                .route(&topo, &RoutingRequest { vls: 1, classes: 1 })
                .unwrap_err();
            assert!(
                err.to_string().contains("needs 2 virtual layers")
                    && err.to_string().contains("only 1 VL is available"),
                "{err}"
            );
        }
    }

    #[test]
    fn resuming_after_cuts_leaves_every_layer_acyclic() {
        // Many cycles in one layer: a 5x5 torus with SSSP paths.
        let topo = generators::torus(&[5, 5], 1, 1, 1).unwrap();
        for h in [
            CycleHeuristic::Weakest,
            CycleHeuristic::Strongest,
            CycleHeuristic::First,
        ] {
            let e = DfssspEngine {
                heuristic: h,
                balance: false,
                ..Default::default()
            };
            let f = e
                .route(
                    &topo,
                    &RoutingRequest {
                        vls: 15,
                        classes: 1,
                    },
                )
                .unwrap();
            let r = cdg::verify(&topo, &f).unwrap();
            assert!(r.deadlock_free, "{h:?}: {:?}", r.cycle);
            assert!(r.per_vl.iter().all(|v| v.acyclic));
        }
    }
}
