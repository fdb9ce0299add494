//! `[run]`: warm-up, measurement window, drain, stall detection and what the results hold.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Run control. Cycles are simulated clock cycles.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Cycles before measurement starts (default 10000).
    #[serde(default = "default_warmup")]
    pub warmup: u64,
    /// Measurement window, cycles (default 20000). Packets generated in it are measured.
    #[serde(default = "default_measure")]
    pub measure: u64,
    /// Most cycles to wait after the window for measured packets to arrive (default 50000).
    #[serde(default = "default_drain")]
    pub drain_max: u64,
    /// Cycles without any flit moving while flits are in switches that count as a deadlock
    /// (default 5000).
    #[serde(default = "default_stall")]
    pub stall_cycles: u64,
    /// Accepted below `(1 − tolerance) · offered` counts as saturated (default 0.05).
    #[serde(default = "default_tol")]
    pub saturation_tolerance: f64,
    /// Include per-port utilisation rows in the results (default true).
    #[serde(default = "yes")]
    pub per_port_stats: bool,
    /// Check the engine's flow-control invariants every this many cycles (default: every 64
    /// cycles in debug builds, never in release builds; 0 = never). A violation is a bug of
    /// the engine, never of the input, and stops the program. For testing; it slows runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_invariants: Option<u64>,
}

fn default_warmup() -> u64 {
    10_000
}
fn default_measure() -> u64 {
    20_000
}
fn default_drain() -> u64 {
    50_000
}
fn default_stall() -> u64 {
    5_000
}
fn default_tol() -> f64 {
    0.05
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            warmup: default_warmup(),
            measure: default_measure(),
            drain_max: default_drain(),
            stall_cycles: default_stall(),
            saturation_tolerance: default_tol(),
            per_port_stats: true,
            check_invariants: None,
        }
    }
}

fn yes() -> bool {
    true
}

impl RunConfig {
    /// Range checks that serde cannot express. Messages name the key.
    pub fn validate(&self) -> Result<(), String> {
        if self.measure == 0 {
            return Err("run.measure must be at least 1 cycle".into());
        }
        if !(0.0..1.0).contains(&self.saturation_tolerance) {
            return Err("run.saturation_tolerance must be in [0, 1)".into());
        }
        Ok(())
    }
}
