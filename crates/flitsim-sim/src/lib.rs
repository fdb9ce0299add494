//! # flitsim-sim
//!
//! The flit-level engine of flitsim: it simulates a fabric programmed with a
//! [`FabricConfig`](flitsim_manager::FabricConfig) under synthetic traffic. It takes typed
//! inputs — the engine's configuration, a topology and the manager's tables — and never calls a
//! routing engine or reads a file; putting an experiment together from its file is the job of
//! the application layer (`flitsim-app`).
//!
//! ```text
//! SimParams ────┐
//! Topology ─────┼─► Network::build ─► Network::run ─► RunResult
//! FabricConfig ─┘
//! ```
//!
//! Glossary: a *message* is what an application sends; a *packet* (at most the class MTU) is
//! the routed unit; a *flit* is what a width-1 link moves per cycle; a *credit* returns buffer
//! space for one flit. An *SL* (service level) is carried end to end, a *VL* (virtual lane) is
//! a buffer lane of one link, chosen per hop by the SL→VL tables; an *LFT* (linear forwarding
//! table) gives a switch's output port per destination.
//!
//! ```
//! use flitsim_sim::config::{RunConfig, SimParams};
//! use flitsim_sim::Network;
//! use flitsim_topology::generators;
//! // Every section has the defaults of the experiment file; `[traffic]` has required keys.
//! let params = SimParams {
//!     seed: 1,
//!     switch: Default::default(),
//!     nic: Default::default(),
//!     traffic: serde_json::from_str(r#"{ "load": 0.2 }"#).unwrap(),
//!     qos: Default::default(),
//!     run: RunConfig { warmup: 200, measure: 500, ..Default::default() },
//!     config_hash: String::new(),
//! };
//! params.validate(2).unwrap();
//! let topo = generators::torus_or_mesh(&[4, 4], 1, 1, 1, true).unwrap();
//! let fabric = flitsim_manager::route(
//!     &topo,
//!     "dor",
//!     &flitsim_manager::RoutingRequest { vls: 2, classes: 1 },
//! )
//! .unwrap();
//! let r = Network::build(&params, &topo, fabric).unwrap().run().unwrap();
//! assert!(!r.saturated);
//! assert_eq!(r.flits.generated, r.flits.delivered + r.flits.remaining);
//! ```
//!
//! The timing model is described in [`engine`], which also lists where each part of the
//! engine lives.
#![warn(missing_docs)]
// The engine's parts are crate-private; their docs are built with `--document-private-items`.
#![allow(rustdoc::private_intra_doc_links)]

pub mod alloc;
pub mod config;
pub mod engine;
pub mod hwcount;
pub mod ids;
pub mod qos;
pub mod replay;
pub mod scheduler;
pub mod stats;
pub mod traffic;
pub mod workload;

pub use config::SimParams;
pub use engine::Network;
pub use stats::{Delivery, RouteHop, RunResult};

/// Errors of the engine. All are fatal for the run that raised them; nothing is written.
/// Errors of reading an experiment and building its topology and tables belong to the
/// application layer (`flitsim-app`).
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The network could not be built from the parameters and tables; the message names the
    /// offending key.
    #[error("{0}")]
    Build(String),
    /// Stopped by [`flitsim_topology::cancel::request`] (Ctrl-C).
    #[error("interrupted")]
    Cancelled(#[from] flitsim_topology::cancel::Cancelled),
}
