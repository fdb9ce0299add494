//! # flitsim-manager
//!
//! What a subnet / fabric manager computes: routing tables ([`FabricConfig`]), VL assignment,
//! and a deadlock-freedom check on the channel dependency graph ([`cdg`]).
//!
//! ```text
//! Topology ──► RoutingEngine::route ──► FabricConfig ──► cdg::verify ──► CdgReport
//! ```
#![warn(missing_docs)]

pub mod bandwidth;
pub mod cac;
pub mod cdg;
pub mod ebb;
pub mod fabric;
pub mod opensm;
pub mod qos;
pub mod routing;

pub use fabric::{FabricConfig, Hop, PathDiversity, PathTables, NO_ROUTE};
pub use routing::{engine_by_name, route, RoutingEngine, RoutingRequest};

/// Errors of routing engines and table checks.
#[derive(Debug, thiserror::Error)]
pub enum RoutingError {
    /// The engine cannot route this topology (wrong shape, disconnected, …).
    #[error("cannot route: {0}")]
    Unroutable(String),
    /// Tables route a packet in a loop.
    #[error("routing loop: {0}")]
    Loop(String),
    /// Not enough VLs for the engine's deadlock-avoidance scheme.
    #[error("not enough VLs: {0}")]
    NotEnoughVls(String),
    /// Tables have the wrong size or name ports/VLs that do not exist.
    #[error("invalid tables: {0}")]
    InvalidTables(String),
    /// Stopped by [`flitsim_topology::cancel::request`] (Ctrl-C).
    #[error("interrupted")]
    Cancelled(#[from] flitsim_topology::cancel::Cancelled),
}
