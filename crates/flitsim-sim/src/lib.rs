//! # flitsim-sim (placeholder while the engine is written)
#![warn(missing_docs)]

/// Errors of the simulator.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// Invalid configuration.
    #[error("{0}")]
    Config(String),
}

/// Runs one experiment given as TOML text and returns its summary as a JSON string.
/// `origin` names the file in error messages; `sets` are `key=value` overrides; `seed`
/// overrides the config's seed.
pub fn run_experiment_json(_text: &str, _origin: &str, _sets: &[String], _seed: Option<u64>) -> Result<String, SimError> {
    Err(SimError::Config("engine not built yet".into()))
}
