//! The error of reading, assembling and running an experiment.
use flitsim_manager::RoutingError;
use flitsim_sim::SimError;
use flitsim_topology::TopologyError;

/// Errors of reading an experiment, building its topology and tables, and building its
/// network. All are fatal for the run that raised them; nothing is written.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
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
    Topology(#[from] TopologyError),
    /// The routing engine failed or its tables are unusable.
    #[error("routing: {0}")]
    Routing(#[from] RoutingError),
    /// The tables do not fit the configuration (VLs, SC tables, a required deadlock-free
    /// routing); the message names the key.
    #[error("{0}")]
    Assembly(String),
    /// The engine could not be built from the parameters and tables.
    #[error(transparent)]
    Sim(#[from] SimError),
}
