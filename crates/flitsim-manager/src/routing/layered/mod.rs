//! Shared machinery of the engines that route on a plain switch graph (`updn`, `sssp`) and of
//! the *layered* engines (`lash`, `dfsssp`): a compact switch graph, the set of paths that
//! destination-based tables induce, their channel dependencies, and the assignment of paths to
//! virtual layers so that every layer's channel dependency graph is acyclic.
//!
//! **Layers.** A virtual layer is one VL of a class's block, selected by the path SL (Lysne,
//! Skeie, Reinemo & Theiss, "Layered routing in irregular networks", IEEE TPDS 17(1), 2006).
//! Every hop of a path stays on its layer's VL, so the channel dependency graph (CDG) of the
//! whole fabric is the disjoint union of the layers' CDGs: it is acyclic exactly when each
//! layer's is (Dally & Seitz 1987).
//!
//! **Paths.** Links from and to endpoints never lie on a dependency cycle (see [`crate::cdg`]),
//! so a path is the sequence of directed switch-to-switch links ("channels") it uses. All
//! endpoints attached to one switch have the same channel sequence towards a destination, so
//! paths are kept per *unit* (source switch, destination) with a weight counting the endpoint
//! pairs the unit stands for, and expanded to endpoint pairs only when the path SL table is
//! written.
//!
//! The parts: the switch graph, path set and dependency index (`paths.rs`); the offline
//! cycle breaking of DFSSSP (`offline.rs`); first-fit layering, as LASH and DFSSSP's online
//! variant and restarts use it (`first_fit.rs`); layer balancing and the tables of a layered
//! routing (`balance.rs`).
use crate::RoutingError;
use flitsim_topology::Topology;

mod balance;
mod first_fit;
mod offline;
mod paths;

pub(super) use balance::{layered_fabric, LayerPlan};
pub(super) use first_fit::{first_fit_restarts, online_layers};
pub(super) use offline::offline_layers;
pub use offline::CycleHeuristic;
pub(super) use paths::{Arc, Deps, PathSet, SwitchGraph};

/// The error for a switch with endpoints that cannot reach a destination switch.
pub(super) fn disconnected(engine: &str, topo: &Topology, from: u32, to: u32) -> RoutingError {
    RoutingError::Unroutable(format!(
        "{engine}: switch {} cannot reach switch {}: the topology is disconnected",
        topo.switches()[from as usize].name,
        topo.switches()[to as usize].name
    ))
}
