//! `[traffic.trace]`: an MPI trace replayed closed loop on one class (SL), beside any synthetic
//! traffic.
use super::{ParamError, TrafficConfig};
use crate::replay::TraceProgram;
use crate::traffic::{stream, StreamKind};
use rand::seq::SliceRandom;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Trace file formats.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// VEF text (read natively).
    #[default]
    Vef,
    /// SST DUMPI per-rank binaries: `flitsim run` and `flitsim.run` (the Python package)
    /// convert them to a cached VEF file first (`flitsim trace convert` does it by hand).
    Dumpi,
}

/// A trace to replay.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// The trace file (`vef`) or DUMPI trace (`dumpi`: a directory of per-rank files, or one
    /// of them), relative to the experiment file's directory. Times in it are nanoseconds and
    /// sizes bytes: `[units]` is required.
    pub path: String,
    /// `vef` (default) or `dumpi`.
    #[serde(default)]
    pub format: TraceFormat,
    /// For `format = "dumpi"`: the VEF file converted from `path`, set by the Python package
    /// (`flitsim run`, `flitsim.run`, sweeps) to its cached conversion. Not part of the
    /// resolved configuration nor of its hash (which covers the converted trace's text).
    #[serde(default, skip_serializing)]
    pub converted: Option<String>,
    /// The class (SL) of the trace's messages by name (default: the first class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Tasks to endpoints: `"linear"` (task t on endpoint ⌊t / tasks_per_endpoint⌋, the
    /// default), `"round_robin"` (task t on endpoint t mod endpoints), `"random"` (a random
    /// placement from the seed, at most `tasks_per_endpoint` per endpoint) or a mapping file
    /// (lines `task endpoint`, relative to the experiment file).
    #[serde(default = "linear")]
    pub mapping: String,
    /// Tasks an endpoint may hold (default 1). Tasks on one endpoint exchange messages
    /// through memory, instantly.
    #[serde(default = "one")]
    pub tasks_per_endpoint: u32,
    /// Multiplies the trace's compute delays (default 1; 0 replays the communication alone,
    /// back to back — the usual way to study the network's share of a run when background
    /// traffic must be simulated through the compute phases).
    #[serde(default = "one_f", skip_serializing_if = "is_one_f")]
    pub compute_scale: f64,
    /// The trace, read by the application layer (not part of the file).
    #[serde(skip)]
    #[schemars(skip)]
    pub program: Option<Arc<TraceProgram>>,
    /// The endpoint of each task from a mapping file, read by the application layer.
    #[serde(skip)]
    #[schemars(skip)]
    pub map: Option<Vec<u32>>,
    /// Bytes per flit (`units.flit_bytes`), set by the application layer.
    #[serde(skip)]
    #[schemars(skip)]
    pub flit_bytes: u32,
}

fn linear() -> String {
    "linear".into()
}
fn one() -> u32 {
    1
}
fn one_f() -> f64 {
    1.0
}
fn is_one_f(x: &f64) -> bool {
    *x == 1.0
}

impl TraceConfig {
    /// The endpoint of every task on `n` endpoints (`seed` draws a random placement). The
    /// error names the key.
    pub fn endpoints(&self, n: usize, seed: u64) -> Result<Vec<u32>, ParamError> {
        let tasks = self.program.as_ref().map_or(0, |p| p.tasks) as usize;
        let tpe = self.tasks_per_endpoint.max(1) as usize;
        if let Some(map) = &self.map {
            if map.len() != tasks {
                return Err(ParamError::new(
                    "traffic.trace.mapping",
                    format!("maps {} tasks, the trace has {tasks}", map.len()),
                ));
            }
            let mut load = vec![0usize; n];
            for (t, &e) in map.iter().enumerate() {
                if e as usize >= n {
                    return Err(ParamError::new(
                        "traffic.trace.mapping",
                        format!("task {t} on endpoint {e}, which does not exist ({n} endpoints)"),
                    ));
                }
                load[e as usize] += 1;
                if load[e as usize] > tpe {
                    return Err(ParamError::new(
                        "traffic.trace.mapping",
                        format!("endpoint {e} gets more than tasks_per_endpoint = {tpe} tasks"),
                    ));
                }
            }
            return Ok(map.clone());
        }
        if tasks > n * tpe {
            return Err(ParamError::new(
                "traffic.trace.tasks_per_endpoint",
                format!(
                    "the trace's {tasks} tasks do not fit on {n} endpoints with {tpe} per \
                     endpoint (tasks_per_endpoint = {} would)",
                    tasks.div_ceil(n)
                ),
            ));
        }
        Ok(match self.mapping.as_str() {
            "linear" => (0..tasks).map(|t| (t / tpe) as u32).collect(),
            "round_robin" => (0..tasks).map(|t| (t % n) as u32).collect(),
            "random" => {
                let mut slots: Vec<u32> = (0..n * tpe).map(|s| (s / tpe) as u32).collect();
                slots.shuffle(&mut stream(seed, StreamKind::Pattern, 16));
                slots.truncate(tasks);
                slots
            }
            other => {
                return Err(ParamError::new(
                    "traffic.trace.mapping",
                    format!("{other:?}: the mapping file has not been read"),
                ))
            }
        })
    }
}

impl TrafficConfig {
    /// Checks `traffic.trace` without the fabric.
    pub(super) fn validate_trace(&self) -> Result<(), ParamError> {
        let Some(t) = &self.trace else { return Ok(()) };
        if !(t.compute_scale.is_finite() && t.compute_scale >= 0.0) {
            return Err(ParamError::new(
                "traffic.trace.compute_scale",
                format!("{}: must be a non-negative number", t.compute_scale),
            ));
        }
        if t.tasks_per_endpoint == 0 {
            return Err(ParamError::new(
                "traffic.trace.tasks_per_endpoint",
                "must be at least 1",
            ));
        }
        if let Some(name) = &t.class {
            if !self.classes.iter().any(|c| &c.name == name) {
                return Err(ParamError::new(
                    "traffic.trace.class",
                    format!("{name:?} is not a class"),
                ));
            }
        }
        if t.program.is_none() {
            return Err(ParamError::new(
                "traffic.trace.path",
                format!("{:?}: the trace has not been read", t.path),
            ));
        }
        Ok(())
    }

    /// The class index of the trace's messages.
    pub fn trace_class(&self) -> usize {
        self.trace
            .as_ref()
            .and_then(|t| t.class.as_ref())
            .and_then(|n| self.classes.iter().position(|c| &c.name == n))
            .unwrap_or(0)
    }
}
