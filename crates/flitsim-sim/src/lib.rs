//! # flitsim-sim
//!
//! The flit-level engine of flitsim: it simulates a fabric programmed with a
//! [`FabricConfig`](flitsim_manager::FabricConfig) under synthetic traffic. It takes typed
//! inputs — the engine's configuration, a topology and the manager's tables — and never calls a
//! routing engine or reads a file; putting an experiment together from its file is the job of
//! the application layer (`flitsim-app`).
//!
//! ```text
//! ExperimentConfig ─┐
//! Topology ─────────┼─► Network::build ─► Network::run ─► RunResult
//! FabricConfig ─────┘
//! ```
//!
//! Glossary: a *message* is what an application sends; a *packet* (at most the class MTU) is
//! the routed unit; a *flit* is what a width-1 link moves per cycle; a *credit* returns buffer
//! space for one flit. An *SL* (service level) is carried end to end, a *VL* (virtual lane) is
//! a buffer lane of one link, chosen per hop by the SL→VL tables; an *LFT* (linear forwarding
//! table) gives a switch's output port per destination.
//!
//! ```
//! let toml = r#"
//! [topology]
//! kind = "torus"
//! sides = [4, 4]
//! [traffic]
//! load = 0.2
//! [run]
//! warmup = 200
//! measure = 500
//! "#;
//! use flitsim_sim::{ExperimentConfig, Network};
//! use flitsim_topology::generators;
//! let cfg = ExperimentConfig::parse(toml, "example", &[], None).unwrap();
//! let topo = generators::torus_or_mesh(&[4, 4], 1, 1, 1, true).unwrap();
//! let fabric = flitsim_manager::route(
//!     &topo,
//!     "dor",
//!     &flitsim_manager::RoutingRequest { vls: 2, classes: 1 },
//! )
//! .unwrap();
//! let r = Network::build(&cfg, &topo, fabric).unwrap().run().unwrap();
//! assert!(!r.saturated);
//! assert_eq!(r.flits.generated, r.flits.delivered + r.flits.remaining);
//! ```
//!
//! The timing model is described in [`engine`], which also lists where each part of the
//! engine lives.
#![warn(missing_docs)]
// The engine's parts are crate-private; their docs are built with `--document-private-items`.
#![allow(rustdoc::private_intra_doc_links)]

pub mod config;
pub mod engine;
pub mod ids;
pub mod qos;
pub mod scheduler;
pub mod stats;
pub mod traffic;

pub use config::ExperimentConfig;
pub use engine::Network;
pub use stats::{Delivery, RunResult};

/// Errors of the simulator and of assembling an experiment. All are fatal for the run that
/// raised them; nothing is written.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The experiment file is malformed or has a value out of range.
    #[error("{origin}: {message}")]
    Config {
        /// File name (or `<string>`).
        origin: String,
        /// What is wrong, with the key path and position where known.
        message: String,
    },
    /// The topology could not be built or read.
    #[error("topology: {0}")]
    Topology(#[from] flitsim_topology::TopologyError),
    /// The routing engine failed or its tables are unusable.
    #[error("routing: {0}")]
    Routing(#[from] flitsim_manager::RoutingError),
    /// The network could not be built from the configuration and tables.
    #[error("{0}")]
    Build(String),
    /// Stopped by [`flitsim_topology::cancel::request`] (Ctrl-C).
    #[error("interrupted")]
    Cancelled(#[from] flitsim_topology::cancel::Cancelled),
}
