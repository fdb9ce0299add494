//! # flitsim-app
//!
//! The application layer of flitsim: everything that knows about experiment files and the
//! command line's reports, above the crates that take typed inputs.
//!
//! ```text
//! experiment.toml ─► ExperimentConfig ─► experiment::build_topology ─► Topology
//!                                        experiment::build_fabric   ─► FabricConfig (+ CDG verdict)
//!                  ExperimentConfig::params ─► SimParams ─► Network::build ─► run ─► RunResult (JSON)
//! topology spec or file ─► report::{topo_info_json, route_json, ebb_json, …} ─► JSON
//! ```
//!
//! * [`config`] reads experiment files (TOML, `--set` overrides, JSON Schema);
//! * [`experiment`] assembles and runs an experiment (`flitsim run`, `flitsim.run`, sweeps);
//! * [`report`] computes what `flitsim topo`, `flitsim route` and `flitsim ebb` print.
//!
//! The Python bindings (`flitsim-py`) only convert arguments and call these functions.
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
//! let r = flitsim_app::run_experiment_str(toml, "example", &[], None).unwrap();
//! assert!(!r.saturated);
//! assert_eq!(r.flits.generated, r.flits.delivered + r.flits.remaining);
//! ```
#![warn(missing_docs)]

pub mod config;
mod error;
pub mod experiment;
pub mod memory;
pub mod report;

pub use config::ExperimentConfig;
pub use error::ExperimentError;
pub use experiment::{
    build_fabric, build_fabric_at, build_topology, experiment_topology_json,
    resolve_experiment_json, run_experiment, run_experiment_json, run_experiment_str,
};
