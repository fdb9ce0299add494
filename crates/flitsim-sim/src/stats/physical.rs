//! Physical twins of a run's cycle figures (`latency_ns`, `network_latency_ns`, `offered_gbps`,
//! `accepted_gbps`, `accepted_mbps`), present in a [`RunResult`] when the experiment has a
//! `[units]` table. The engine counts cycles and flits only; the application layer, which
//! knows the units, adds these with [`RunResult::add_physical`].
use super::{FlowPhysical, LatencySummary, RunResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Latency statistics in nanoseconds: the cycle figures of the same [`LatencySummary`] times
/// `units.cycle_ns`; `null` where the cycle figure is (a window that measured no packet).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct LatencyNs {
    /// Mean, ns.
    pub mean: Option<f64>,
    /// Median, ns.
    pub p50: Option<f64>,
    /// 99th percentile, ns.
    pub p99: Option<f64>,
    /// Maximum, ns.
    pub max: Option<f64>,
}

impl LatencyNs {
    /// `l` (cycles) × `cycle_ns`, statistic by statistic.
    pub fn from_cycles(l: &LatencySummary, cycle_ns: f64) -> Self {
        LatencyNs {
            mean: l.mean.map(|v| v * cycle_ns),
            p50: l.p50.map(|v| v as f64 * cycle_ns),
            p99: l.p99.map(|v| v as f64 * cycle_ns),
            max: l.max.map(|v| v as f64 * cycle_ns),
        }
    }
}

/// The physical twins of a run's cycle figures. Throughputs are per endpoint, like
/// `offered_load` and `accepted_load`: `load · flit_bytes · 8 / cycle_ns` Gb/s
/// (bits per ns) and `load · flit_bytes · 1000 / cycle_ns` MB/s (10⁶ bytes per second).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct PhysicalResults {
    /// `latency` in nanoseconds (only with `[units]`).
    pub latency_ns: LatencyNs,
    /// `network_latency` in nanoseconds (only with `[units]`).
    pub network_latency_ns: LatencyNs,
    /// `offered_load` in Gb/s per endpoint (only with `[units]`; `null` where it is).
    pub offered_gbps: Option<f64>,
    /// `accepted_load` in Gb/s per endpoint (only with `[units]`; `null` where it is).
    pub accepted_gbps: Option<f64>,
    /// `accepted_load` in MB/s (10⁶ bytes/s) per endpoint (only with `[units]`; `null` where
    /// it is).
    pub accepted_mbps: Option<f64>,
    /// The units the twins were computed with (only with `[units]`), so that readers of the
    /// result can convert other flit and cycle counts (e.g. the time series) themselves.
    pub units: ResultUnits,
}

/// A class's figures in physical units (only with `[units]`): its latencies in ns and its
/// loads (per endpoint) in Gb/s and MB/s, as the run's twins.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct ClassPhysical {
    /// `latency` in nanoseconds.
    pub latency_ns: LatencyNs,
    /// `network_latency` in nanoseconds.
    pub network_latency_ns: LatencyNs,
    /// `message_latency` in nanoseconds.
    pub message_latency_ns: LatencyNs,
    /// `jitter.std` in nanoseconds.
    pub jitter_std_ns: Option<f64>,
    /// `offered_load` in Gb/s per endpoint.
    pub offered_gbps: Option<f64>,
    /// `accepted_load` in Gb/s per endpoint.
    pub accepted_gbps: Option<f64>,
    /// `accepted_load` in MB/s (10⁶ bytes/s) per endpoint.
    pub accepted_mbps: Option<f64>,
}

/// What a flit and a cycle were in a run with `[units]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct ResultUnits {
    /// Bytes per flit.
    pub flit_bytes: u32,
    /// Nanoseconds per cycle.
    pub cycle_ns: f64,
}

impl PhysicalResults {
    /// The twins of `r`'s figures for flits of `flit_bytes` bytes and cycles of `cycle_ns`
    /// nanoseconds.
    pub fn new(r: &RunResult, flit_bytes: u32, cycle_ns: f64) -> Self {
        let bytes_per_ns = |load: Option<f64>| load.map(|l| l * flit_bytes as f64 / cycle_ns);
        PhysicalResults {
            latency_ns: LatencyNs::from_cycles(&r.latency, cycle_ns),
            network_latency_ns: LatencyNs::from_cycles(&r.network_latency, cycle_ns),
            offered_gbps: bytes_per_ns(r.offered_load).map(|b| b * 8.0),
            accepted_gbps: bytes_per_ns(r.accepted_load).map(|b| b * 8.0),
            accepted_mbps: bytes_per_ns(r.accepted_load).map(|b| b * 1000.0),
            units: ResultUnits {
                flit_bytes,
                cycle_ns,
            },
        }
    }
}

impl RunResult {
    /// Adds the physical twins of the cycle figures (see [`PhysicalResults`]).
    pub fn add_physical(&mut self, flit_bytes: u32, cycle_ns: f64) {
        self.physical = Some(PhysicalResults::new(self, flit_bytes, cycle_ns));
        let bytes_per_ns = |rate: Option<f64>| rate.map(|r| r * flit_bytes as f64 / cycle_ns);
        for c in &mut self.per_sl {
            c.physical = Some(ClassPhysical {
                latency_ns: LatencyNs::from_cycles(&c.latency, cycle_ns),
                network_latency_ns: LatencyNs::from_cycles(&c.network_latency, cycle_ns),
                message_latency_ns: LatencyNs::from_cycles(&c.message_latency, cycle_ns),
                jitter_std_ns: c.jitter.std.map(|s| s * cycle_ns),
                offered_gbps: bytes_per_ns(c.offered_load).map(|b| b * 8.0),
                accepted_gbps: bytes_per_ns(c.accepted_load).map(|b| b * 8.0),
                accepted_mbps: bytes_per_ns(c.accepted_load).map(|b| b * 1000.0),
            });
        }
        if let Some(d) = &mut self.deadline {
            d.max_ttd_ns = d.max_ttd.map(|c| c as f64 * cycle_ns);
        }
        if let Some(tr) = &mut self.trace {
            tr.execution_time_ns = tr.execution_time.map(|c| c as f64 * cycle_ns);
        }
        for f in self.flows.iter_mut().flatten() {
            f.physical = Some(FlowPhysical {
                offered_mbps: bytes_per_ns(f.offered_rate).map(|b| b * 1000.0),
                accepted_mbps: bytes_per_ns(f.accepted_rate).map(|b| b * 1000.0),
                accepted_gbps: bytes_per_ns(f.accepted_rate).map(|b| b * 8.0),
                generated_bytes: f.generated_flits * flit_bytes as u64,
                delivered_bytes: f.delivered_flits * flit_bytes as u64,
                message_latency_ns: LatencyNs::from_cycles(&f.message_latency, cycle_ns),
            });
        }
    }
}
