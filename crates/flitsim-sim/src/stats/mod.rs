//! Statistics: latency histograms, the counters the engine keeps while it runs
//! ([`collector`]), and the result record of a run ([`RunResult`]).
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub(crate) mod collector;
mod flows;
mod physical;

pub use flows::{BandwidthFlow, FlowPhysical, FlowResult, FlowSeries, IdtChange, RefusedBy};
pub(crate) use flows::{FlowCounters, FlowLatency};
pub use physical::{ClassPhysical, LatencyNs, PhysicalResults, ResultUnits};

const EXACT: u64 = 1024;
const SUB: u64 = 64; // sub-buckets per octave above EXACT (≤ 1.6 % relative error)

/// Latency histogram: exact below 1024 cycles, log-linear above (64 buckets per octave).
/// Mean and max are kept exactly.
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
    max: u64,
}

fn bucket(v: u64) -> usize {
    if v < EXACT {
        v as usize
    } else {
        let octave = 63 - v.leading_zeros() as u64; // ≥ 10
        let shift = octave - 6;
        let sub = (v >> shift) & (SUB - 1);
        (EXACT + (octave - 10) * SUB + sub) as usize
    }
}

fn bucket_low(b: usize) -> u64 {
    let b = b as u64;
    if b < EXACT {
        b
    } else {
        let octave = (b - EXACT) / SUB + 10;
        let sub = (b - EXACT) % SUB;
        (1u64 << octave) + (sub << (octave - 6))
    }
}

impl Histogram {
    /// Records one value.
    #[inline]
    pub fn add(&mut self, v: u64) {
        let b = bucket(v);
        if b >= self.counts.len() {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        self.n += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }
    /// Adds all values of `other` (exactly: same bucket layout).
    pub fn merge(&mut self, other: &Histogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.n += other.n;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }
    /// Number of values.
    pub fn count(&self) -> u64 {
        self.n
    }
    /// Exact mean (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }
    /// Smallest recorded-bucket value v such that at least `q` of the values are ≤ v's bucket
    /// (exact below 1024 cycles).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let target = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut acc = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= target {
                return bucket_low(b).min(self.max);
            }
        }
        self.max
    }
    /// Summary with mean, p50, p99 and max (0 when empty).
    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            mean: Some(self.mean()),
            p50: Some(self.quantile(0.5)),
            p99: Some(self.quantile(0.99)),
            max: Some(self.max),
            count: self.n,
        }
    }

    /// [`summary`](Self::summary), with the statistics `None` when no value was recorded.
    pub fn summary_or_none(&self) -> LatencySummary {
        if self.n == 0 {
            LatencySummary::EMPTY
        } else {
            self.summary()
        }
    }
    /// Non-empty buckets as `(lower bound, count)`.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(b, &c)| (bucket_low(b), c))
            .collect()
    }
}

/// Latency statistics in cycles. The statistics are `null` when a deadlocked run delivered no
/// packet to count (see [`RunResult::deadlock`]); a run that did not deadlock reports 0 then.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct LatencySummary {
    /// Mean.
    pub mean: Option<f64>,
    /// Median.
    pub p50: Option<u64>,
    /// 99th percentile.
    pub p99: Option<u64>,
    /// Maximum.
    pub max: Option<u64>,
    /// Packets (messages, for `message_latency`) counted.
    pub count: u64,
}

impl LatencySummary {
    /// No packets: every statistic `None`.
    pub const EMPTY: LatencySummary = LatencySummary {
        mean: None,
        p50: None,
        p99: None,
        max: None,
        count: 0,
    };
}

/// Cycle counts of the phases.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Cycles {
    /// Warm-up cycles.
    pub warmup: u64,
    /// Measurement window.
    pub measure: u64,
    /// Total simulated cycles (warm-up + window + drain).
    pub total: u64,
}

/// Flit conservation counters over the whole run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct FlitCounts {
    /// Flits generated by all sources.
    pub generated: u64,
    /// Flits delivered to their destinations.
    pub delivered: u64,
    /// Flits still in application queues, NIC buffers, links or switches at the end.
    pub remaining: u64,
}

/// Results of one traffic class.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct ClassResult {
    /// SL (class index).
    pub sl: u32,
    /// Class name.
    pub name: String,
    /// Offered load, flits/cycle/endpoint, during the window (`null`: see
    /// [`RunResult::offered_load`]).
    pub offered_load: Option<f64>,
    /// Accepted load, flits/cycle/endpoint, during the window (`null`: see
    /// [`RunResult::accepted_load`]).
    pub accepted_load: Option<f64>,
    /// This class's share of all accepted traffic (`null` when a deadlocked run accepted
    /// none).
    pub share: Option<f64>,
    /// End-to-end latency (generation → tail delivered), cycles.
    pub latency: LatencySummary,
    /// Network latency (head leaves the NIC → tail delivered), cycles.
    pub network_latency: LatencySummary,
    /// Message latency (message generated → last flit of its last packet delivered) of the
    /// messages generated in the window, cycles; `count` counts messages. Equal to `latency`
    /// when every message is one packet.
    pub message_latency: LatencySummary,
    /// Variation of the message latency.
    pub jitter: Jitter,
    /// Physical twins, with `[units]`.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub physical: Option<ClassPhysical>,
}

/// Jitter of a class's message latency, cycles (`null` when a deadlocked run delivered no
/// measured message; 0 for a run without messages that did not deadlock).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Jitter {
    /// Standard deviation of the message latency (population: divided by the count).
    pub std: Option<f64>,
    /// `message_latency.p99 − message_latency.p50`.
    pub p99_minus_p50: Option<u64>,
}

/// Flits delivered per class in consecutive bins of `run.timeseries_bin` cycles over the whole
/// run (warm-up, window and drain): bin `i` covers cycles `[i·bin, (i+1)·bin)`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct TimeSeries {
    /// Bin width, cycles.
    pub bin: u64,
    /// One series per class.
    pub classes: Vec<ClassSeries>,
    /// One series per flow (absent without flows).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowSeries>,
    /// One series per connected switch output port, in the order of the `ports` table (only
    /// with `run.port_timeseries = true`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<PortSeries>,
    /// One series per simulated switch: the flits its buffers held, on average over the
    /// bin (only with `run.port_timeseries = true`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub switches: Vec<SwitchSeries>,
}

/// The flits one switch's buffers (input and output) held in each bin, the mean of snapshots
/// taken every `max(1, bin / 8)` cycles while flits moved (`run.port_timeseries`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct SwitchSeries {
    /// Switch name (an internal node of a hierarchical switch has its own).
    pub switch: String,
    /// Mean flits buffered in each bin.
    pub flits: Vec<f64>,
}

/// The flits one switch output port sent in each bin (`run.port_timeseries`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct PortSeries {
    /// Switch name.
    pub switch: String,
    /// Port number.
    pub port: u32,
    /// Flits sent on the port's link in each bin (all VLs; as many bins as the classes have).
    pub flits: Vec<u64>,
}

/// One class's delivered flits per bin.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct ClassSeries {
    /// SL (class index).
    pub sl: u32,
    /// Class name.
    pub name: String,
    /// Flits delivered in each bin (all classes have the same number of bins: ⌈cycles.total /
    /// bin⌉).
    pub flits: Vec<u64>,
}

/// One bin of a class's end-to-end latency histogram (measured packets).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct HistogramBin {
    /// SL (class index).
    pub sl: u32,
    /// Lower bound of the bin, cycles (exact below 1024 cycles, 64 bins per octave above).
    pub latency: u64,
    /// Packets in the bin.
    pub count: u64,
}

/// What deadline-based QoS did (`deadline` in a [`RunResult`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct DeadlineResult {
    /// `qos.architecture`, if set.
    pub architecture: Option<String>,
    /// Per class: packets (and their flits) discarded at their host after waiting longer than
    /// `qos.discard_after` for injection.
    pub discarded: Vec<DiscardCount>,
    /// Packets that started to leave a switch VL buffer while a packet with an earlier
    /// deadline waited behind them in the same VL (Martínez et al. 2008, §3.2).
    pub order_errors: u64,
    /// `order_errors` per VL (under `qos.architecture`, VC `v` has VLs `v·lanes …`).
    pub order_errors_by_vl: Vec<u64>,
    /// The largest time to deadline a packet carried on a link, cycles (`None` without
    /// deadlines): the header field must hold it.
    pub max_ttd: Option<i64>,
    /// `max_ttd` in nanoseconds (with `[units]`).
    pub max_ttd_ns: Option<f64>,
}

/// Discarded packets of one class.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct DiscardCount {
    /// Class name.
    pub class: String,
    /// Packets discarded.
    pub packets: u64,
    /// Their flits.
    pub flits: u64,
}

/// What a replayed trace did (`trace` in a [`RunResult`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct TraceResult {
    /// Tasks of the trace.
    pub tasks: u32,
    /// Point-to-point messages of the trace.
    pub messages: u64,
    /// Bytes of those messages.
    pub bytes: u64,
    /// Collective operations of the trace.
    pub collectives: u64,
    /// Transfers injected: the messages and every step of the collectives (tasks on one
    /// endpoint included, which cross no link).
    pub transfers: u64,
    /// Every task finished before the run stopped.
    pub complete: bool,
    /// Cycle the last task finished (`null` when the trace did not complete).
    pub execution_time: Option<u64>,
    /// Per task, the cycle it finished its last record (`null`: not finished).
    pub finish: Vec<Option<u64>>,
    /// Latency of the transfers that crossed the network, release → last flit received,
    /// cycles (`null`s when none did).
    pub message_latency: LatencySummary,
    /// `execution_time` in nanoseconds (only with `[units]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_time_ns: Option<f64>,
}

/// One routing decision: a packet head routed at a switch, recorded when route tracing is on
/// ([`Network::enable_route_trace`](crate::Network::enable_route_trace)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteHop {
    /// Source endpoint.
    pub src: u32,
    /// Destination endpoint.
    pub dst: u32,
    /// Creation order of the packet at its source NIC.
    pub seq: u64,
    /// Its flow, if it belongs to one.
    pub flow: Option<u32>,
    /// Its path index.
    pub path: u8,
    /// The simulated switch (the fabric switch, unless `switch.organisation = "opa"`).
    pub switch: u32,
    /// Port the head arrived on.
    pub in_port: u16,
    /// Output port chosen.
    pub out_port: u16,
    /// VL on the output.
    pub vl: u8,
}

/// One delivered packet, recorded when tracing is on (tests, debugging).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// Source endpoint.
    pub src: u32,
    /// Destination endpoint.
    pub dst: u32,
    /// Traffic class.
    pub class: u8,
    /// Packet length, flits.
    pub len: u16,
    /// Creation order at the source NIC.
    pub seq: u64,
    /// Cycle the message was generated.
    pub generated: u64,
    /// Cycle the head left the NIC.
    pub injected: u64,
    /// Cycle the tail arrived.
    pub delivered: u64,
    /// Switches traversed.
    pub hops: u16,
}

/// Utilisation of one switch output port during the window.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct PortResult {
    /// Switch name.
    pub switch: String,
    /// Port number.
    pub port: u32,
    /// True when the port leads to an endpoint.
    pub to_endpoint: bool,
    /// Flits sent per VL during the window.
    pub vl_flits: Vec<u64>,
    /// Fraction of the port's capacity used (flits / (cycles · width)).
    pub utilisation: f64,
}

/// One buffer involved in a deadlock.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct BlockedBuffer {
    /// Switch name.
    pub switch: String,
    /// Input port holding the packet.
    pub in_port: u32,
    /// Input VL.
    pub vl: u32,
    /// Output port the head packet waits for.
    pub out_port: u32,
    /// VL it waits for on that output.
    pub out_vl: u32,
    /// Flits buffered in this VL.
    pub flits: u32,
}

/// Stall report: no flit moved for `run.stall_cycles` while flits were in switches.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct DeadlockReport {
    /// Cycle the stall was detected.
    pub cycle: u64,
    /// Last cycle a flit moved.
    pub last_progress: u64,
    /// Non-empty buffers whose head could not move.
    pub blocked: Vec<BlockedBuffer>,
}

fn tables_word() -> String {
    "tables".into()
}

fn one_thread() -> u32 {
    1
}

/// Wall-clock performance of the run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct Performance {
    /// Wall seconds of the simulation loop (building excluded).
    pub wall_seconds: f64,
    /// Wall seconds spent before the simulation loop: building the topology, routing and
    /// checking the tables (`routing_seconds`), and building the simulated network.
    pub build_seconds: f64,
    /// The part of `build_seconds` spent building the topology, computing or loading the
    /// forwarding and SL/VL tables and certifying them (0 when the engine is driven
    /// directly, without an experiment).
    #[serde(default)]
    pub routing_seconds: f64,
    /// CPU seconds of the simulation loop (the running thread's CPU clock, or the process's
    /// with more than one thread; `null` where the platform has none). Below `wall_seconds`
    /// when the thread waited for a core.
    #[serde(default)]
    pub cpu_seconds: Option<f64>,
    /// Threads that simulated the run (`run.threads`; the results do not depend on it).
    #[serde(default = "one_thread")]
    pub threads: u32,
    /// How the switches found output ports: `tables` (stored forwarding tables) or
    /// `computed` (the routing engine's rule, `routing.forwarding`; the results do not
    /// depend on it).
    #[serde(default = "tables_word")]
    pub forwarding: String,
    /// Simulated cycles per wall second.
    pub cycles_per_second: f64,
    /// Flit traversals of switch-to-switch links.
    pub flit_hops: u64,
    /// `flit_hops` per wall second.
    pub flit_hops_per_second: f64,
    /// Hardware event counts of the simulation loop, all threads (with `run.counters`;
    /// absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<crate::hwcount::HwCounts>,
}

/// Everything a run reports; serialises to the `flitsim run --json` object.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
pub struct RunResult {
    /// flitsim version.
    pub version: String,
    /// Seed used.
    pub seed: u64,
    /// Hash of the resolved configuration.
    pub config_hash: String,
    /// Topology name.
    pub topology: String,
    /// Routing engine.
    pub routing: String,
    /// Phase lengths.
    pub cycles: Cycles,
    /// Number of endpoints.
    pub endpoints: u64,
    /// Offered load (all classes), flits/cycle/endpoint, over the measurement window; for a
    /// deadlocked run over the part of the window simulated before the deadlock was detected,
    /// and `null` when that part is empty (deadlock detected before the window began).
    pub offered_load: Option<f64>,
    /// Accepted load (all classes), flits/cycle/endpoint, over the same cycles as
    /// `offered_load`; `null` for a deadlocked run that accepted no flit in the window.
    pub accepted_load: Option<f64>,
    /// True when accepted < (1 − tolerance) · offered, the measured packets did not drain,
    /// or the fabric deadlocked.
    pub saturated: bool,
    /// True when every measured packet was delivered.
    pub drained: bool,
    /// End-to-end latency of measured packets, cycles.
    pub latency: LatencySummary,
    /// Network latency of measured packets, cycles.
    pub network_latency: LatencySummary,
    /// Mean switches traversed by measured packets (`null` for a deadlocked run that
    /// delivered none).
    pub hops_mean: Option<f64>,
    /// Conservation counters.
    pub flits: FlitCounts,
    /// Per-class results.
    pub per_sl: Vec<ClassResult>,
    /// End-to-end latency histograms of all classes, non-empty bins only.
    pub latency_histogram: Vec<HistogramBin>,
    /// Per-port utilisation (empty when `run.per_port_stats = false`).
    pub ports: Vec<PortResult>,
    /// Set when the stall detector stopped the run; `saturated` is then true and the
    /// statistics of an empty window are `null` instead of 0.
    pub deadlock: Option<DeadlockReport>,
    /// Channel-dependency verdict of the tables (with `routing.verify`). Its schema is any
    /// JSON value: the manager's report types do not derive `JsonSchema`.
    #[schemars(with = "Option<serde_json::Value>")]
    pub cdg: Option<flitsim_manager::cdg::CdgReport>,
    /// Physical twins of the cycle figures (`latency_ns`, `network_latency_ns`,
    /// `offered_gbps`, `accepted_gbps`, `accepted_mbps`), present only when the experiment has
    /// a `[units]` table.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub physical: Option<PhysicalResults>,
    /// Delivered flits per class over time, present only when `run.timeseries_bin` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeseries: Option<TimeSeries>,
    /// One row per flow, present only when the experiment has `[[traffic.flow]]` or
    /// `[[traffic.flow_set]]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<Vec<FlowResult>>,
    /// The replayed trace, present only with `[traffic.trace]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceResult>,
    /// The bandwidth manager's verdict on each managed flow, present only with
    /// `nic.rate_control` and flows that `reserve` or are `best_effort`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<Vec<BandwidthFlow>>,
    /// Deadline-based QoS: discards, order errors and the largest time to deadline; present
    /// with `qos.architecture`, `[[qos.class]]`, `qos.discard_after` or a
    /// `switch.vl_discipline` other than FIFO.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<DeadlineResult>,
    /// Connection admission control's report (with `qos.admission_limit`): the same object as
    /// `flitsim cac --json` prints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Value>")]
    pub admission: Option<serde_json::Value>,
    /// Wall-clock figures (the only part that differs between identical runs).
    pub performance: Performance,
}

impl RunResult {
    /// The JSON Schema of the `flitsim run --json` object (the serialised [`RunResult`]), from
    /// which the Python layer takes the fields and types of its result tables.
    pub fn json_schema() -> String {
        let schema = schemars::schema_for!(RunResult);
        serde_json::to_string_pretty(&schema).expect("schema serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_schema_names_every_field() {
        let schema: serde_json::Value = serde_json::from_str(&RunResult::json_schema()).unwrap();
        let props = schema["properties"].as_object().unwrap();
        for key in [
            "latency",
            "per_sl",
            "ports",
            "latency_histogram",
            "cdg",
            "performance",
        ] {
            assert!(props.contains_key(key), "{key}");
        }
        let sl = &schema["definitions"]["ClassResult"]["properties"];
        assert_eq!(sl["sl"]["type"], "integer");
        // Statistics a deadlocked run could not measure are null.
        assert_eq!(sl["share"]["type"], serde_json::json!(["number", "null"]));
    }

    #[test]
    fn quantiles_are_exact_below_1024() {
        let mut h = Histogram::default();
        for v in 1..=100 {
            h.add(v);
        }
        assert_eq!(h.quantile(0.5), 50);
        assert_eq!(h.quantile(0.99), 99);
        assert_eq!(h.summary().max, Some(100));
        assert!((h.mean() - 50.5).abs() < 1e-12);
    }

    #[test]
    fn large_values_have_small_relative_error() {
        for v in [1024u64, 1500, 4097, 65_537, 1_000_000, 123_456_789] {
            let low = bucket_low(bucket(v));
            assert!(
                low <= v && (v - low) as f64 / v as f64 <= 1.0 / 64.0,
                "{v} -> {low}"
            );
        }
    }
}
