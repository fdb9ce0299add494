//! Per-flow counters and results (`flows` in a [`RunResult`](super::RunResult)).
//!
//! A run may have millions of flows, so a flow keeps a compact message-latency histogram:
//! exact below 64 cycles, 32 log-linear buckets per octave above (a quantile is the lower bound
//! of its bucket: at most 1/32 ≈ 3.1 % below the true value). Mean, max and the standard
//! deviation are exact.
use super::{Jitter, LatencySummary};
use crate::config::FlowSpec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

const EXACT: u64 = 64;
const SUB: u64 = 32;

fn bucket(v: u64) -> usize {
    if v < EXACT {
        v as usize
    } else {
        let octave = 63 - v.leading_zeros() as u64; // ≥ 6
        let sub = (v >> (octave - 5)) & (SUB - 1);
        (EXACT + (octave - 6) * SUB + sub) as usize
    }
}

fn bucket_low(b: usize) -> u64 {
    let b = b as u64;
    if b < EXACT {
        b
    } else {
        let octave = (b - EXACT) / SUB + 6;
        let sub = (b - EXACT) % SUB;
        (1u64 << octave) + (sub << (octave - 5))
    }
}

/// A flow's message latencies: a compact histogram and exact moments.
#[derive(Clone, Debug, Default)]
pub(crate) struct FlowLatency {
    counts: Vec<u32>,
    n: u64,
    sum: u128,
    sq: u128,
    max: u64,
}

impl FlowLatency {
    #[inline]
    pub fn add(&mut self, v: u64) {
        let b = bucket(v);
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] = self.counts[b].saturating_add(1);
        self.n += 1;
        let x = v as u128;
        self.sum += x;
        self.sq = self.sq.saturating_add(x * x);
        self.max = self.max.max(v);
    }

    fn quantile(&self, q: f64) -> u64 {
        let target = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut acc = 0u64;
        for (b, &c) in self.counts.iter().enumerate() {
            acc += c as u64;
            if acc >= target {
                return bucket_low(b).min(self.max);
            }
        }
        self.max
    }

    /// Mean, p50, p99 and max (`None`s when no message was delivered).
    pub fn summary(&self) -> LatencySummary {
        if self.n == 0 {
            return LatencySummary::EMPTY;
        }
        LatencySummary {
            mean: Some(self.sum as f64 / self.n as f64),
            p50: Some(self.quantile(0.5)),
            p99: Some(self.quantile(0.99)),
            max: Some(self.max),
            count: self.n,
        }
    }

    /// Standard deviation and p99 − p50 (`None`s without messages).
    pub fn jitter(&self) -> Jitter {
        if self.n == 0 {
            return Jitter {
                std: None,
                p99_minus_p50: None,
            };
        }
        Jitter {
            std: Some(super::collector::std_dev(self.n, self.sum, self.sq)),
            p99_minus_p50: Some(self.quantile(0.99) - self.quantile(0.5)),
        }
    }
}

/// What the engine counts for one flow.
#[derive(Clone, Debug)]
pub(crate) struct FlowCounters {
    pub src: u32,
    pub dst: u32,
    pub class: u8,
    pub start: u64,
    pub stop: u64,
    /// Flits generated and delivered over the whole run.
    pub generated: u64,
    pub delivered: u64,
    /// Flits generated and delivered in the measurement window.
    pub window_generated: u64,
    pub window_accepted: u64,
    /// Latency of the flow's measured messages.
    pub latency: FlowLatency,
    /// Flits delivered per time-series bin (with `run.timeseries_bin`).
    pub series: Vec<u64>,
}

impl FlowCounters {
    pub fn new(f: &FlowSpec) -> Self {
        FlowCounters {
            src: f.src,
            dst: f.dst,
            class: f.class,
            start: f.start,
            stop: f.stop,
            generated: 0,
            delivered: 0,
            window_generated: 0,
            window_accepted: 0,
            latency: FlowLatency::default(),
            series: Vec::new(),
        }
    }
}

/// One flow's results. Rates are flits/cycle of this flow (not per endpoint) over the
/// measurement window; totals cover the whole run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct FlowResult {
    /// Flow id: explicit flows in file order, then each flow set's flows.
    pub id: u32,
    /// Source endpoint.
    pub src: u32,
    /// Destination endpoint.
    pub dst: u32,
    /// SL (class index).
    pub sl: u32,
    /// Class name.
    pub class: String,
    /// First cycle the flow may generate.
    pub start: u64,
    /// Cycle it stops generating (`null`: never).
    pub stop: Option<u64>,
    /// Flits generated in the window per window cycle (`null` when a deadlocked run
    /// simulated none of the window).
    pub offered_rate: Option<f64>,
    /// Flits delivered in the window per window cycle (`null` as `offered_rate`).
    pub accepted_rate: Option<f64>,
    /// Flits generated over the whole run.
    pub generated_flits: u64,
    /// Flits delivered over the whole run (the sum of its time series).
    pub delivered_flits: u64,
    /// Latency of the flow's measured messages, first flit generated → last flit delivered
    /// (`null`s when none was delivered).
    pub message_latency: LatencySummary,
    /// Jitter of the message latency (`null`s when no message was delivered).
    pub jitter: Jitter,
    /// Physical twins, with `[units]`.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub physical: Option<FlowPhysical>,
}

/// A flow's figures in physical units (only with `[units]`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct FlowPhysical {
    /// `offered_rate` in MB/s (10⁶ bytes/s).
    pub offered_mbps: Option<f64>,
    /// `accepted_rate` in MB/s (10⁶ bytes/s).
    pub accepted_mbps: Option<f64>,
    /// `accepted_rate` in Gb/s.
    pub accepted_gbps: Option<f64>,
    /// `generated_flits` in bytes.
    pub generated_bytes: u64,
    /// `delivered_flits` in bytes.
    pub delivered_bytes: u64,
    /// `message_latency` in nanoseconds.
    pub message_latency_ns: super::LatencyNs,
}

/// One flow's delivered flits per bin of the time series.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct FlowSeries {
    /// Flow id.
    pub flow: u32,
    /// Flits delivered in each bin (as many bins as the classes' series).
    pub flits: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotone_and_within_a_32nd() {
        let mut last = 0;
        for v in 0..200_000u64 {
            let b = bucket(v);
            assert!(b >= last);
            last = b;
            let lo = bucket_low(b);
            assert!(lo <= v && (v - lo) as f64 <= v as f64 / 32.0, "{v} {lo}");
            assert_eq!(bucket(lo), b);
        }
    }

    #[test]
    fn summary_and_jitter_match_closed_forms() {
        let mut h = FlowLatency::default();
        for v in 1..=100u64 {
            h.add(v);
        }
        let s = h.summary();
        assert_eq!(s.mean, Some(50.5));
        assert_eq!(s.max, Some(100));
        assert_eq!(s.p50, Some(50));
        // 99 lies in the bucket [98, 100) of octave 6 (2 cycles wide).
        assert_eq!(s.p99, Some(98));
        // Population std of 1..=100: sqrt((100² − 1) / 12).
        let std = h.jitter().std.unwrap();
        assert!((std - (9999f64 / 12.0).sqrt()).abs() < 1e-9, "{std}");
        assert_eq!(FlowLatency::default().summary(), LatencySummary::EMPTY);
    }
}

/// A flow the bandwidth manager handled (`reserve` or `best_effort` under
/// `nic.rate_control`): its verdict, IDT and the rate it achieved.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct BandwidthFlow {
    /// Flow id (its index among the explicit flows).
    pub flow: u32,
    /// Source endpoint.
    pub src: u32,
    /// Destination endpoint.
    pub dst: u32,
    /// True for a best-effort flow.
    pub best_effort: bool,
    /// The reservation asked for, flits/cycle (`null` for a best-effort flow).
    pub requested: Option<f64>,
    /// Admitted (a best-effort flow always is; it may still get no share).
    pub admitted: bool,
    /// The rate the manager gives the flow, flits/cycle: its reservation, its best-effort
    /// share, 0 when refused.
    pub granted: f64,
    /// Its inter-packet dispatch time, cycles (`null`: refused, or no best-effort share; the
    /// flow then sends nothing).
    pub idt: Option<f64>,
    /// Why it was refused (`null` when admitted).
    pub refused_by: Option<RefusedBy>,
    /// Its `accepted_rate` in the run, flits/cycle (`null` as `accepted_rate`).
    pub accepted_rate: Option<f64>,
    /// Later changes of its rate, as other managed flows start and stop (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<IdtChange>,
}

/// A change of a managed flow's rate during a run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct IdtChange {
    /// The cycle the NIC applies it (the allocation change + `update_delay`).
    pub cycle: u64,
    /// The new rate, flits/cycle.
    pub granted: f64,
    /// The new IDT, cycles (`null`: no share; the flow sends nothing until the next change).
    pub idt: Option<f64>,
}

/// Which admission criterion refused a request, and where.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct RefusedBy {
    /// `source_node`, `switch_port` or `destination_node` (Gulati §3.3.1's criteria 1–3).
    pub criterion: String,
    /// The endpoint, for a node criterion.
    pub node: Option<u32>,
    /// The switch's name, for the port criterion.
    pub switch: Option<String>,
    /// The output port, for the port criterion.
    pub port: Option<u16>,
    /// Reserved there before the request, flits/cycle.
    pub reserved: f64,
    /// Its capacity, flits/cycle.
    pub capacity: f64,
    /// The refusal in words.
    pub message: String,
}

impl From<&flitsim_manager::bandwidth::Refusal> for RefusedBy {
    fn from(r: &flitsim_manager::bandwidth::Refusal) -> Self {
        use flitsim_manager::bandwidth::Place;
        let (node, switch, port) = match &r.at {
            Place::Node { endpoint, .. } => (Some(*endpoint), None, None),
            Place::Port { switch, port } => (None, Some(switch.clone()), Some(*port)),
        };
        RefusedBy {
            criterion: serde_json::to_value(r.criterion)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            node,
            switch,
            port,
            reserved: r.reserved,
            capacity: r.capacity,
            message: r.to_string(),
        }
    }
}
