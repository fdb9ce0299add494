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
    /// Include the per-flow rows (`flows`) in the results (default true). Runs of many flows
    /// (thousands of video flows) can leave them out: the per-class figures are unchanged.
    /// Omitted from the resolved config when true.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub per_flow_stats: bool,
    /// Check the engine's flow-control invariants every this many cycles (default: every 64
    /// cycles in debug builds, never in release builds; 0 = never). A violation is a bug of
    /// the engine, never of the input, and stops the program. For testing; it slows runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_invariants: Option<u64>,
    /// Refuse to build an experiment whose memory estimate exceeds this: bytes as an integer
    /// or a string with a unit (`"8GiB"`, `"512MB"`; k/M/G/T are powers of 1000, Ki/Mi/Gi/Ti
    /// of 1024). Default: the machine's available memory (`MemAvailable` of /proc/meminfo),
    /// no limit where that cannot be read. Omitted from the resolved config when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_memory: Option<MemorySize>,
    /// Width of the bins of the delivered-flits time series, cycles (optional). When set, the
    /// results carry `timeseries`: the flits delivered per class in each bin of the whole run
    /// (warm-up, window and drain); when unset there is no time series. Omitted from the
    /// resolved config when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeseries_bin: Option<u64>,
    /// With `timeseries_bin`, also count the flits every switch output port sends in each bin
    /// (`timeseries.ports`; default false). What `flitsim view --out X.html` animates. Omitted
    /// from the resolved config when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub port_timeseries: bool,
    /// Threads that simulate the run: the switches are split into this many contiguous
    /// lanes, each simulated on its own thread and synchronised every cycle (at least 1).
    /// Default: every core (at most [`thread_cap`](crate::engine::lane::thread_cap)) for
    /// fabrics of 2048 simulated switch ports or more, 1 below. Results are byte-identical for any value,
    /// so it is left out of the resolved config and its hash; `performance.threads` says how
    /// many ran. Deadline-based QoS runs on one thread.
    #[serde(default, skip_serializing)]
    pub threads: Option<u32>,
    /// Count hardware events while the simulation loop runs (default false):
    /// `performance.counters` then gives instructions, cycles, last-level and L1 data cache
    /// misses (where the processor's counters are available to the process: Linux, often not
    /// in virtual machines) and page faults, over every thread of the run. Counting cannot
    /// change a result, so the key is left out of the resolved config and its hash.
    #[serde(default, skip_serializing)]
    pub counters: bool,
}

/// A memory size: bytes, or a number with a unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum MemorySize {
    /// Bytes.
    Bytes(u64),
    /// A number and a unit: `"8GiB"`, `"1.5 GB"`, `"512MiB"`, `"1000000"`.
    Text(String),
}

impl MemorySize {
    /// The size in bytes, or what is wrong with the text.
    pub fn bytes(&self) -> Result<u64, String> {
        let text = match self {
            MemorySize::Bytes(b) => return Ok(*b),
            MemorySize::Text(t) => t.trim(),
        };
        let split = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(text.len());
        let (num, unit) = (text[..split].trim(), text[split..].trim());
        let factor: f64 = match unit.to_ascii_lowercase().as_str() {
            "" | "b" => 1.0,
            "k" | "kb" => 1e3,
            "m" | "mb" => 1e6,
            "g" | "gb" => 1e9,
            "t" | "tb" => 1e12,
            "ki" | "kib" => 1024.0,
            "mi" | "mib" => 1024.0 * 1024.0,
            "gi" | "gib" => 1024.0 * 1024.0 * 1024.0,
            "ti" | "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
            _ => {
                return Err(format!(
                "\"{text}\": unknown unit \"{unit}\" (use B, kB, MB, GB, TB, KiB, MiB, GiB or TiB)"
            ))
            }
        };
        let v: f64 = num
            .parse()
            .map_err(|_| format!("\"{text}\": not a size such as \"8GiB\" or 8589934592"))?;
        let b = v * factor;
        if !(b.is_finite() && b < u64::MAX as f64) {
            return Err(format!("\"{text}\": too large"));
        }
        Ok(b as u64)
    }
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
            per_flow_stats: true,
            check_invariants: None,
            max_memory: None,
            timeseries_bin: None,
            threads: None,
            counters: false,
            port_timeseries: false,
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_true(b: &bool) -> bool {
    *b
}

fn yes() -> bool {
    true
}

/// The largest number of cycles a run may span (`warmup + measure + drain_max`): 2^53, the
/// largest count of cycles that rates and means computed in `f64` still count exactly.
pub const MAX_RUN_CYCLES: u64 = 1 << 53;

impl RunConfig {
    /// Range checks that serde cannot express. Errors name the key.
    ///
    /// `stall_cycles = 0` is an error: the stall detector cannot be turned off (a deadlocked
    /// run would otherwise spin until `drain_max`); a large value makes it patient instead.
    pub fn validate(&self) -> Result<(), super::ParamError> {
        use super::ParamError;
        if self.measure == 0 {
            return Err(ParamError::new("run.measure", "must be at least 1 cycle"));
        }
        if self.timeseries_bin == Some(0) {
            return Err(ParamError::new(
                "run.timeseries_bin",
                "must be at least 1 cycle (omit it for no time series)",
            ));
        }
        if self.port_timeseries && self.timeseries_bin.is_none() {
            return Err(ParamError::new(
                "run.port_timeseries",
                "needs run.timeseries_bin (the width of the bins)",
            ));
        }
        if self.stall_cycles == 0 {
            return Err(ParamError::new(
                "run.stall_cycles",
                "must be at least 1 cycle (the deadlock detector cannot be turned off; a large value makes it patient)",
            ));
        }
        for (key, v) in [
            ("run.warmup", self.warmup),
            ("run.measure", self.measure),
            ("run.drain_max", self.drain_max),
            ("run.stall_cycles", self.stall_cycles),
        ] {
            if v > MAX_RUN_CYCLES {
                return Err(ParamError::new(
                    key,
                    format!("{v} cycles exceeds the limit of 2^53 = {MAX_RUN_CYCLES} cycles"),
                ));
            }
        }
        let total = self.warmup + self.measure + self.drain_max; // each ≤ 2^53: no overflow
        if total > MAX_RUN_CYCLES {
            // Name the largest of the three: the one most likely meant to be smaller.
            let key = [
                ("run.measure", self.measure),
                ("run.warmup", self.warmup),
                ("run.drain_max", self.drain_max),
            ]
            .into_iter()
            .max_by_key(|&(_, v)| v)
            .map_or("run.measure", |(k, _)| k);
            return Err(ParamError::new(
                key,
                format!(
                    "warmup + measure + drain_max = {total} cycles exceeds the limit of 2^53 = {MAX_RUN_CYCLES} cycles"
                ),
            ));
        }
        if let Some(m) = &self.max_memory {
            m.bytes()
                .map_err(|e| ParamError::new("run.max_memory", e))?;
        }
        if !(0.0..1.0).contains(&self.saturation_tolerance) {
            return Err(ParamError::new(
                "run.saturation_tolerance",
                "must be in [0, 1)",
            ));
        }
        Ok(())
    }
}
