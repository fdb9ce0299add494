//! PyO3 bindings of flitsim: the private `flitsim._core` extension module.
//!
//! This crate only converts arguments and maps errors. Everything a user calls lives in the
//! Python package `flitsim` (python/flitsim), which wraps these functions.
//!
//! Every function that can take long runs its computation on a worker thread through
//! [`interruptible`], so that Ctrl-C stops it (see `flitsim_topology::cancel`).

use flitsim_app::report;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Large blocks on transparent huge pages (see `flitsim_sim::alloc`): the engine's vectors of
/// large fabrics, whatever Python's own allocator does.
#[global_allocator]
static ALLOC: flitsim_sim::alloc::HugePages = flitsim_sim::alloc::HugePages;

create_exception!(
    _core,
    FlitsimError,
    PyValueError,
    "A flitsim experiment could not be run: invalid configuration, override or input file."
);

/// How long the calling thread waits for the worker before it looks for Ctrl-C again.
const SIGNAL_SLICE: std::time::Duration = std::time::Duration::from_millis(50);

/// Runs `f` on a worker thread and waits for it with the GIL released, in slices of
/// [`SIGNAL_SLICE`], running Python's signal handlers between slices (on the main thread; on
/// other threads that does nothing). When a handler raises (Ctrl-C: `KeyboardInterrupt`),
/// it requests cancellation of every flitsim computation of the process
/// (`flitsim_topology::cancel`), waits for the worker to return, clears the request and
/// re-raises the handler's exception, whatever the worker returned. A worker's panic is
/// resumed here (pyo3 turns it into a `PanicException`).
fn interruptible<T, E>(py: Python<'_>, f: impl FnOnce() -> Result<T, E> + Send) -> PyResult<T>
where
    T: Send,
    E: std::fmt::Display + Send,
{
    use std::sync::mpsc::{channel, RecvTimeoutError};
    std::thread::scope(|scope| {
        let (done_tx, done_rx) = channel::<()>();
        let worker = std::thread::Builder::new()
            .name("flitsim-core".into())
            .spawn_scoped(scope, move || {
                let result = f();
                // The receiver may be gone when the caller was interrupted.
                let _ = done_tx.send(());
                result
            })
            .map_err(|e| err(format!("cannot start a worker thread: {e}")))?;
        let mut done_rx = done_rx;
        loop {
            // A panicking worker drops the sender: `Disconnected` ends the wait as well. The
            // receiver goes into the GIL-free closure and back (it is `Send`, not `Sync`).
            let (finished, rx) = py.allow_threads(move || {
                let waited = done_rx.recv_timeout(SIGNAL_SLICE);
                (!matches!(waited, Err(RecvTimeoutError::Timeout)), done_rx)
            });
            done_rx = rx;
            if finished {
                break;
            }
            if let Err(interrupt) = py.check_signals() {
                flitsim_topology::cancel::request();
                let _ = py.allow_threads(|| worker.join());
                flitsim_topology::cancel::clear();
                return Err(interrupt);
            }
        }
        match worker.join() {
            Ok(result) => result.map_err(err),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// Asks every flitsim computation running in this process to stop (they fail with
/// `FlitsimError("interrupted")`); for callers that wait for computations on other threads,
/// such as a sweep's thread pool on Ctrl-C. Call `cancel_clear` once they have returned.
#[pyfunction]
fn cancel_request() {
    flitsim_topology::cancel::request();
}

/// Withdraws `cancel_request`, so that new computations run again.
#[pyfunction]
fn cancel_clear() {
    flitsim_topology::cancel::clear();
}

/// Limits the threads one run takes when its `run.threads` is not set, for this process (0:
/// no limit; a run then takes every core from 2048 simulated switch ports on). A sweep running
/// several experiments at once sets it so that they share the cores. Returns the previous
/// limit.
#[pyfunction]
fn set_thread_cap(n: usize) -> usize {
    let before = flitsim_sim::engine::lane::thread_cap();
    flitsim_sim::engine::lane::set_thread_cap(n);
    before
}

/// Runs one experiment given as TOML text and returns its summary as a JSON string.
///
/// `origin` names the source in error messages, `sets` are `key=value` overrides applied to
/// the configuration and `seed` replaces the configuration's seed. The simulation runs on a
/// worker thread with the GIL released, so other Python threads keep going; Ctrl-C stops it
/// and raises `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(signature = (text, origin = "<string>", sets = Vec::new(), seed = None))]
fn run_json(
    py: Python<'_>,
    text: &str,
    origin: &str,
    sets: Vec<String>,
    seed: Option<u64>,
) -> PyResult<String> {
    interruptible(py, || {
        flitsim_app::run_experiment_json(text, origin, &sets, seed)
    })
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
    flitsim_app::resolve_experiment_json(text, origin, &sets, seed)
        .map_err(|e| FlitsimError::new_err(e.to_string()))
}

/// The topology an experiment (TOML text, `sets` overrides) builds, as flitsim topology
/// JSON; nothing is routed or run.
#[pyfunction]
#[pyo3(signature = (text, origin = "<string>", sets = Vec::new()))]
fn experiment_topology_json(
    py: Python<'_>,
    text: &str,
    origin: &str,
    sets: Vec<String>,
) -> PyResult<String> {
    interruptible(py, || {
        flitsim_app::experiment_topology_json(text, origin, &sets)
    })
}

/// The JSON Schema of experiment files.
#[pyfunction]
fn schema_json() -> String {
    flitsim_app::ExperimentConfig::json_schema()
}

/// The JSON Schema of the summary `run_json` returns (the serialised `RunResult`).
#[pyfunction]
fn result_schema_json() -> String {
    flitsim_sim::RunResult::json_schema()
}

/// Routing engine names, as `routing.engine` and `route_json` accept them (aliases included).
#[pyfunction]
fn engine_names() -> Vec<&'static str> {
    flitsim_manager::routing::ENGINE_NAMES.to_vec()
}

/// Engine names that select another engine: alias → engine.
#[pyfunction]
fn engine_aliases() -> std::collections::BTreeMap<&'static str, &'static str> {
    flitsim_manager::routing::ENGINE_ALIASES
        .iter()
        .copied()
        .collect()
}

/// dfsssp's cycle-breaking heuristics (`heuristic` of `route_json`'s options), default first.
#[pyfunction]
fn cycle_heuristics() -> Vec<&'static str> {
    flitsim_manager::routing::CycleHeuristic::ALL
        .iter()
        .map(|h| h.name())
        .collect()
}

/// The formats `topo_convert` writes.
#[pyfunction]
fn topology_formats() -> Vec<&'static str> {
    report::TOPOLOGY_FORMATS.to_vec()
}

fn err(e: impl std::fmt::Display) -> PyErr {
    FlitsimError::new_err(e.to_string())
}

/// A Python int as a `u8` count in `1..=255`, named `what` in the error.
fn count_u8(value: u64, what: &str) -> PyResult<u8> {
    u8::try_from(value)
        .ok()
        .filter(|&v| v > 0)
        .ok_or_else(|| err(format!("{what} must be in 1..=255, got {value}")))
}

/// The topology named by `spec_or_path` (a `.json` file, an ibnetdiscover/ibsim file or a
/// generator spec such as `torus:6x6`) as flitsim topology JSON.
#[pyfunction]
fn topo_json(py: Python<'_>, spec_or_path: &str) -> PyResult<String> {
    interruptible(py, || report::topo_convert(spec_or_path, "json"))
}

/// Facts about a topology as JSON: switches, endpoints, inter-switch links, ports per switch,
/// connectivity, diameter and shape.
#[pyfunction]
fn topo_info_json(py: Python<'_>, spec_or_path: &str) -> PyResult<String> {
    interruptible(py, || report::topo_info_json(spec_or_path))
}

/// The topology in format `to` (`"json"` or `"ibnetdiscover"`).
#[pyfunction]
fn topo_convert(py: Python<'_>, spec_or_path: &str, to: &str) -> PyResult<String> {
    interruptible(py, || report::topo_convert(spec_or_path, to))
}

/// Routes a topology, verifies its channel dependency graph and returns the route report as
/// JSON; with `out_dir`, also writes the OpenSM dumps there (all four files or none), giving
/// nodes without LIDs one first; `guid2lid` names an OpenSM LID cache to take LIDs from.
/// `options_json` holds engine options (`heuristic`, `online`, `restarts`, `balance`, `max_layers`,
/// `roots` as GUID strings, `lmc` for 2^lmc LIDs and paths per port).
#[pyfunction]
#[pyo3(signature = (spec_or_path, engine, max_vls = 8, classes = 1, out_dir = None, options_json = None, guid2lid = None))]
#[allow(clippy::too_many_arguments)]
fn route_json(
    py: Python<'_>,
    spec_or_path: &str,
    engine: &str,
    max_vls: u64,
    classes: u64,
    out_dir: Option<std::path::PathBuf>,
    options_json: Option<&str>,
    guid2lid: Option<std::path::PathBuf>,
) -> PyResult<String> {
    let max_vls = count_u8(max_vls, "max_vls")?;
    let classes = count_u8(classes, "classes")?;
    interruptible(py, || {
        report::route_json_with(
            spec_or_path,
            engine,
            max_vls,
            classes,
            &report::RouteFiles {
                out_dir: out_dir.as_deref(),
                guid2lid: guid2lid.as_deref(),
            },
            options_json,
        )
    })
}

/// Effective bisection bandwidth (JSON) of the routing by `engine` or of the OpenSM dumps in
/// `tables_dir` (exactly one of the two).
#[pyfunction]
#[pyo3(signature = (spec_or_path, engine = None, tables_dir = None, patterns = 100, seed = 1, max_vls = 8))]
fn ebb_json(
    py: Python<'_>,
    spec_or_path: &str,
    engine: Option<&str>,
    tables_dir: Option<std::path::PathBuf>,
    patterns: usize,
    seed: u64,
    max_vls: u64,
) -> PyResult<String> {
    let max_vls = count_u8(max_vls, "max_vls")?;
    interruptible(py, || {
        report::ebb_json(
            spec_or_path,
            engine,
            tables_dir.as_deref(),
            patterns,
            seed,
            max_vls,
        )
    })
}

/// Builds a DTable arbitration table (Cano-Cano et al. 2022, §3.3.2–3.3.3) and returns it as
/// JSON. `sls` holds `(name, max_distance, mtu, share)` per SL; MTUs and GMTU in units.
#[pyfunction]
fn dtable_json(
    entries: u32,
    gmtu: u32,
    w: u32,
    k: u32,
    unit_bytes: u32,
    sls: Vec<(String, u32, u32, f64)>,
) -> PyResult<String> {
    use flitsim_manager::qos::{configure_dtable_json, DTableParams, SlRequirement};
    let params = DTableParams {
        entries,
        gmtu,
        w,
        k,
        unit_bytes,
    };
    let sls: Vec<SlRequirement> = sls
        .into_iter()
        .map(|(name, max_distance, mtu, share)| SlRequirement {
            name,
            max_distance,
            mtu,
            share,
        })
        .collect();
    configure_dtable_json(&params, &sls).map_err(err)
}

/// Flows per switch output port under all-to-all traffic, as JSON; routing from `engine` or
/// `tables_dir` (exactly one of the two).
#[pyfunction]
#[pyo3(signature = (spec_or_path, engine = None, tables_dir = None, max_vls = 8))]
fn link_loads_json(
    py: Python<'_>,
    spec_or_path: &str,
    engine: Option<&str>,
    tables_dir: Option<std::path::PathBuf>,
    max_vls: u64,
) -> PyResult<String> {
    let max_vls = count_u8(max_vls, "max_vls")?;
    interruptible(py, || {
        report::link_loads_json(spec_or_path, engine, tables_dir.as_deref(), max_vls)
    })
}

/// The LFT paths (JSON: `paths`, one `{src, dst, hops}` per pair, every hop `switch`,
/// `in_port`, `out_port`, `vl`) of the endpoint `pairs`; routing from `engine` or
/// `tables_dir` (exactly one of the two).
#[pyfunction]
#[pyo3(signature = (spec_or_path, pairs, engine = None, tables_dir = None, max_vls = 8))]
fn paths_json(
    py: Python<'_>,
    spec_or_path: &str,
    pairs: Vec<(u32, u32)>,
    engine: Option<&str>,
    tables_dir: Option<std::path::PathBuf>,
    max_vls: u64,
) -> PyResult<String> {
    let max_vls = count_u8(max_vls, "max_vls")?;
    interruptible(py, || {
        report::paths_json(spec_or_path, engine, tables_dir.as_deref(), max_vls, &pairs)
    })
}

/// Admission verdicts of the bandwidth manager (JSON): premium `flows` `(src, dst, rate)`
/// then `best_effort` `(src, dst)` over the routing of `engine` (default: the topology's).
#[pyfunction]
#[pyo3(signature = (spec_or_path, flows, best_effort = Vec::new(), engine = None, dispatch_time = 16.0, mtu = 16.0, node_capacity = None, max_vls = 8))]
#[allow(clippy::too_many_arguments)]
fn bandwidth_json(
    py: Python<'_>,
    spec_or_path: &str,
    flows: Vec<(u32, u32, f64)>,
    best_effort: Vec<(u32, u32)>,
    engine: Option<&str>,
    dispatch_time: f64,
    mtu: f64,
    node_capacity: Option<f64>,
    max_vls: u64,
) -> PyResult<String> {
    let max_vls = count_u8(max_vls, "max_vls")?;
    interruptible(py, || {
        report::bandwidth_json(
            spec_or_path,
            engine,
            &flows,
            &best_effort,
            dispatch_time,
            mtu,
            node_capacity,
            max_vls,
        )
    })
}

/// Connection admission control (JSON) of the flows in the file `flows_path` over the routing
/// of `engine` (default: the topology's) with `2^lmc` paths per destination, every link's QoS
/// load kept within `limit`.
#[pyfunction]
#[pyo3(signature = (spec_or_path, flows_path, engine = None, lmc = 0, limit = 0.7, max_vls = 8))]
fn cac_json(
    py: Python<'_>,
    spec_or_path: &str,
    flows_path: std::path::PathBuf,
    engine: Option<&str>,
    lmc: u64,
    limit: f64,
    max_vls: u64,
) -> PyResult<String> {
    let max_vls = count_u8(max_vls, "max_vls")?;
    let lmc = u8::try_from(lmc).map_err(|_| err(format!("lmc must be in 0..=7, got {lmc}")))?;
    interruptible(py, || {
        report::cac_json(spec_or_path, &flows_path, engine, lmc, limit, max_vls)
    })
}

/// `rate` as a fraction of `link_rate` (both rates with units, such as `"40MB/s"` and
/// `"1.28Gb/s"`): the flits/cycle it stands for. `ValueError` names the one that is not a rate.
#[pyfunction]
fn rate_per_link(rate: &str, link_rate: &str) -> PyResult<f64> {
    flitsim_app::config::units::rate_per_link(rate, link_rate).map_err(PyValueError::new_err)
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
    m.add_function(wrap_pyfunction!(experiment_topology_json, m)?)?;
    m.add_function(wrap_pyfunction!(schema_json, m)?)?;
    m.add_function(wrap_pyfunction!(result_schema_json, m)?)?;
    m.add_function(wrap_pyfunction!(engine_names, m)?)?;
    m.add_function(wrap_pyfunction!(engine_aliases, m)?)?;
    m.add_function(wrap_pyfunction!(cycle_heuristics, m)?)?;
    m.add_function(wrap_pyfunction!(topology_formats, m)?)?;
    m.add_function(wrap_pyfunction!(dtable_json, m)?)?;
    m.add_function(wrap_pyfunction!(link_loads_json, m)?)?;
    m.add_function(wrap_pyfunction!(paths_json, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(topo_json, m)?)?;
    m.add_function(wrap_pyfunction!(topo_info_json, m)?)?;
    m.add_function(wrap_pyfunction!(topo_convert, m)?)?;
    m.add_function(wrap_pyfunction!(route_json, m)?)?;
    m.add_function(wrap_pyfunction!(ebb_json, m)?)?;
    m.add_function(wrap_pyfunction!(bandwidth_json, m)?)?;
    m.add_function(wrap_pyfunction!(rate_per_link, m)?)?;
    m.add_function(wrap_pyfunction!(cac_json, m)?)?;
    m.add_function(wrap_pyfunction!(cancel_request, m)?)?;
    m.add_function(wrap_pyfunction!(cancel_clear, m)?)?;
    m.add_function(wrap_pyfunction!(set_thread_cap, m)?)?;
    Ok(())
}
