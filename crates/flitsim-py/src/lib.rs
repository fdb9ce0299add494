//! PyO3 bindings of flitsim: the private `flitsim._core` extension module.
//!
//! This crate only converts arguments and maps errors. Everything a user calls lives in the
//! Python package `flitsim` (python/flitsim), which wraps these functions.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

create_exception!(
    _core,
    FlitsimError,
    PyValueError,
    "A flitsim experiment could not be run: invalid configuration, override or input file."
);

/// Runs one experiment given as TOML text and returns its summary as a JSON string.
///
/// `origin` names the source in error messages, `sets` are `key=value` overrides applied to
/// the configuration and `seed` replaces the configuration's seed. The GIL is released while
/// the simulation runs, so other Python threads keep going.
#[pyfunction]
#[pyo3(signature = (text, origin = "<string>", sets = Vec::new(), seed = None))]
fn run_json(
    py: Python<'_>,
    text: &str,
    origin: &str,
    sets: Vec<String>,
    seed: Option<u64>,
) -> PyResult<String> {
    py.allow_threads(|| flitsim_sim::run_experiment_json(text, origin, &sets, seed))
        .map_err(|e| FlitsimError::new_err(e.to_string()))
}

/// Validates an experiment without running it; returns JSON with `config_hash`, `seed` and
/// the resolved `config` (defaults filled in, overrides and seed applied).
#[pyfunction]
#[pyo3(signature = (text, origin = "<string>", sets = Vec::new(), seed = None))]
fn resolve_json(
    text: &str,
    origin: &str,
    sets: Vec<String>,
    seed: Option<u64>,
) -> PyResult<String> {
    flitsim_sim::resolve_experiment_json(text, origin, &sets, seed)
        .map_err(|e| FlitsimError::new_err(e.to_string()))
}

/// The JSON Schema of experiment files.
#[pyfunction]
fn schema_json() -> String {
    flitsim_sim::ExperimentConfig::json_schema()
}

/// The version of the compiled flitsim core.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FlitsimError", m.py().get_type_bound::<FlitsimError>())?;
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_json, m)?)?;
    m.add_function(wrap_pyfunction!(schema_json, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
