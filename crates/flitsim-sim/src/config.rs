//! Experiment configuration: TOML → typed, validated structs.
//!
//! Every field has a default and a unit in its doc comment. Unknown keys are rejected with the
//! key path and the position in the file; `key=value` overrides (`--set`) are applied to the
//! parsed document before it is typed, so they are checked by the same rules.
use crate::SimError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A whole experiment: fabric, tables, traffic and run control.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExperimentConfig {
    /// Root seed; every random stream (traffic sources, patterns, random topologies' default) is
    /// derived from it and a stable component id.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The fabric graph.
    pub topology: TopologyConfig,
    /// The routing engine that programs the tables.
    #[serde(default)]
    pub routing: RoutingConfig,
    /// Switch micro-architecture.
    #[serde(default)]
    pub switch: SwitchConfig,
    /// Network interface (endpoint) parameters.
    #[serde(default)]
    pub nic: NicConfig,
    /// Offered traffic.
    pub traffic: TrafficConfig,
    /// Quality of service: the output scheduler of every port and its tables.
    #[serde(default)]
    pub qos: QosConfig,
    /// Warm-up, measurement, drain and stall detection.
    #[serde(default)]
    pub run: RunConfig,
}

fn default_seed() -> u64 {
    1
}
fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}

/// Which topology to build.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologyConfig {
    /// n-dimensional torus.
    Torus {
        /// Side per dimension, e.g. `[8, 8]`.
        sides: Vec<u32>,
        /// Endpoints per switch (default 1).
        #[serde(default = "one")]
        endpoints_per_switch: u32,
        /// Parallel links between neighbours (default 1).
        #[serde(default = "one")]
        trunk: u32,
        /// Link latency in cycles (default 1).
        #[serde(default = "one")]
        link_latency: u32,
    },
    /// n-dimensional mesh.
    Mesh {
        /// Side per dimension.
        sides: Vec<u32>,
        /// Endpoints per switch (default 1).
        #[serde(default = "one")]
        endpoints_per_switch: u32,
        /// Parallel links between neighbours (default 1).
        #[serde(default = "one")]
        trunk: u32,
        /// Link latency in cycles (default 1).
        #[serde(default = "one")]
        link_latency: u32,
    },
    /// k-ary n-tree (fat tree) with k^n endpoints.
    KaryNtree {
        /// Arity.
        k: u32,
        /// Levels.
        n: u32,
        /// Link latency in cycles (default 1).
        #[serde(default = "one")]
        link_latency: u32,
    },
    /// Random irregular network (always connected).
    Random {
        /// Number of switches.
        switches: u32,
        /// Ports per switch.
        ports: u32,
        /// Endpoints per switch.
        endpoints_per_switch: u32,
        /// Inter-switch links.
        links: u32,
        /// Allow more than one link between two switches (default false).
        #[serde(default)]
        multi_links: bool,
        /// Generator seed (default: the experiment seed).
        #[serde(default)]
        seed: Option<u64>,
        /// Link latency in cycles (default 1).
        #[serde(default = "one")]
        link_latency: u32,
    },
    /// A topology JSON file (`flitsim-topology` format); a relative path is taken from the
    /// experiment file's directory.
    File {
        /// Path of the file.
        path: String,
    },
}

/// Routing engine selection.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoutingConfig {
    /// `dor`, `dmodk` or `minhop`; default: `dor` for tori/meshes, `dmodk` for k-ary n-trees,
    /// `minhop` otherwise.
    #[serde(default)]
    pub engine: Option<String>,
    /// Data VLs per link (default 2).
    #[serde(default = "default_vls")]
    pub vls: u8,
    /// Check the channel dependency graph before running and refuse cyclic tables
    /// (default false: a cyclic routing runs, and the stall detector reports a deadlock).
    #[serde(default)]
    pub require_deadlock_free: bool,
    /// Verify the channel dependency graph and put the verdict (per VL, with a cycle when there
    /// is one) in the results as `cdg` (default false; implied by `require_deadlock_free`).
    #[serde(default)]
    pub verify: bool,
    /// A directory of routing tables in OpenSM's dump formats, as `flitsim route --out` or
    /// OpenSM write them: `opensm-lfts.dump` (required), `opensm-sl2vl.dump` and `path-sl.txt`
    /// (optional). When set, the tables are loaded from there instead of running `engine`, and
    /// `vls` must cover the VLs they use. A relative path is taken from the experiment file's
    /// directory.
    #[serde(default)]
    pub tables: Option<String>,
}

fn default_vls() -> u8 {
    2
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig {
            engine: None,
            vls: default_vls(),
            require_deadlock_free: false,
            verify: false,
            tables: None,
        }
    }
}

/// How a packet moves through a switch.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Switching {
    /// Virtual cut-through: a packet starts only when the next buffer can hold all of it.
    #[default]
    Vct,
    /// Wormhole: a packet starts with one credit and holds the output VL until its tail.
    Wormhole,
}

/// Output-port scheduler (chooses which VL sends next). Usually set for the whole fabric
/// through `[qos]`; `switch.scheduler` and `nic.scheduler` set it per device kind.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SchedulerConfig {
    /// Round robin among VLs that can send.
    #[default]
    RoundRobin,
    /// Strict priority: the first VL in `order` that can send wins (default: highest VL first).
    StrictPriority {
        /// VLs from highest to lowest priority; unlisted VLs come last, highest first.
        #[serde(default)]
        order: Vec<u8>,
    },
    /// Simple Bandwidth Table: one weight (packets) per SL (Cano-Cano et al. 2022, Alg. 1).
    Sbt {
        /// Packets per table round, one per traffic class in class order.
        weights: Vec<u32>,
    },
    /// DTable: an arbitration table of (SL, weight) entries with deficit counters
    /// (Cano-Cano et al. 2022, Alg. 2); weights in flits.
    Dtable {
        /// The table, in order.
        entries: Vec<DTableEntryConfig>,
    },
    /// InfiniBand VLArbitration: high- and low-priority tables of (VL, weight in flits).
    VlArb {
        /// High-priority table: `[vl, weight]` pairs.
        high: Vec<(u8, u32)>,
        /// Low-priority table: `[vl, weight]` pairs.
        low: Vec<(u8, u32)>,
        /// 4096-byte units (64 flits) of high priority sent while low waits; 255 = unlimited.
        #[serde(default)]
        limit_of_high_priority: u8,
    },
}

/// One DTable entry.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DTableEntryConfig {
    /// SL (traffic class index).
    pub sl: u8,
    /// Weight, flits.
    pub weight: u32,
}

/// Which QoS output scheduler every switch port and NIC uses.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QosScheduler {
    /// No QoS section: `switch.scheduler` and `nic.scheduler` apply.
    #[default]
    None,
    /// Round robin among SLs: an SBT table with equal weights (the paper's baseline).
    Rr,
    /// SBT with `qos.sbt.weights` (default: the classes' shares in percent).
    Sbt,
    /// DTable configured by the DTable methodology from `[qos.dtable]`.
    Dtable,
    /// InfiniBand VLArbitration tables from `[qos.vlarb]`.
    VlArb,
}

/// QoS configuration of the whole fabric.
#[derive(Clone, Debug, Serialize, Deserialize, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QosConfig {
    /// The output scheduler of every switch port and NIC (`rr`, `sbt`, `dtable`, `vl_arb`).
    #[serde(default)]
    pub scheduler: QosScheduler,
    /// SBT weights.
    #[serde(default)]
    pub sbt: Option<SbtQosConfig>,
    /// DTable methodology parameters.
    #[serde(default)]
    pub dtable: Option<DTableQosConfig>,
    /// InfiniBand VLArbitration tables.
    #[serde(default)]
    pub vlarb: Option<VlArbQosConfig>,
    /// Omni-Path SL→SC and SC→VL tables (instead of one block of VLs per class).
    #[serde(default)]
    pub sc: Option<ScQosConfig>,
}

/// Omni-Path service channels (Cano-Cano et al. 2022, §2.1, Table 7): each traffic class (SL)
/// owns one SC per routing lane; SCs are mapped onto VLs. The routing engine is run for one
/// class with as many VLs as lanes, and a packet changes SC where its path changes lane (at a
/// torus dateline, for example). See `flitsim_manager::qos::sc`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScQosConfig {
    /// `sl2sc[sl]`: the SCs of class `sl`, one per routing lane (Table 7: `[[0, 1], [2, 3],
    /// [4, 5], [6, 7], [8, 9]]`).
    pub sl2sc: Vec<Vec<u8>>,
    /// `sc2vl[sc]`: the VL of SC `sc` (Table 7: `[0, 1, 2, 3, 4, 5, 6, 7, 6, 7]`).
    pub sc2vl: Vec<u8>,
}

/// SBT weights.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SbtQosConfig {
    /// Packets per round, one per class (the paper uses percentages summing to 100).
    pub weights: Vec<u32>,
}

/// Parameters of the DTable configuration methodology (Cano-Cano et al. 2022, §3.3.2); the
/// table is computed with `flitsim_manager::qos::configure_dtable`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DTableQosConfig {
    /// Table entries N (default 128).
    #[serde(default = "default_entries")]
    pub entries: u32,
    /// Global MTU in flits (default: the largest class MTU).
    #[serde(default)]
    pub gmtu: Option<u32>,
    /// Maximum entry weight in GMTUs, w (default 8).
    #[serde(default = "default_w")]
    pub w: u32,
    /// Pool factor k ≤ w (default 2).
    #[serde(default = "default_k")]
    pub k: u32,
    /// Maximum distance between consecutive entries of each class (latency requirement).
    pub max_distance: Vec<u32>,
    /// Bandwidth share of each class (default: the classes' traffic shares, normalised).
    #[serde(default)]
    pub shares: Option<Vec<f64>>,
}

fn default_entries() -> u32 {
    128
}
fn default_w() -> u32 {
    8
}
fn default_k() -> u32 {
    2
}

/// InfiniBand VLArbitration tables.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VlArbQosConfig {
    /// High-priority `[vl, weight]` pairs (weights in flits).
    pub high: Vec<(u8, u32)>,
    /// Low-priority `[vl, weight]` pairs.
    pub low: Vec<(u8, u32)>,
    /// LimitOfHighPriority (255 = unlimited).
    #[serde(default)]
    pub limit_of_high_priority: u8,
}

/// Dynamically shared input buffer: each VL owns `min_per_vl` flits and may grow into a shared
/// pool up to `max_per_vl`; the port holds `total_flits`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SharedBufferConfig {
    /// Flits per input port.
    pub total_flits: u32,
    /// Flits reserved for each VL.
    pub min_per_vl: u32,
    /// Largest share one VL may hold.
    pub max_per_vl: u32,
}

/// Switch micro-architecture (input-queued crossbar).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Static input buffer per VL, flits (default 64). Ignored when `shared_buffer` is given.
    #[serde(default = "default_vl_buffer")]
    pub vl_buffer_flits: u32,
    /// Dynamically shared input buffers instead of static per-VL ones.
    #[serde(default)]
    pub shared_buffer: Option<SharedBufferConfig>,
    /// Cycles from a head flit's arrival to its first allocation attempt (default 1).
    #[serde(default = "one")]
    pub routing_delay: u32,
    /// Crossbar speedup (default 1). Without output buffers: the crossbar connections an input
    /// port may hold at once (each limited by its output link). With output buffers: flits per
    /// cycle a crossbar connection moves into the output buffer.
    #[serde(default = "one")]
    pub speedup: u32,
    /// Output buffer per VL, flits (default 0 = no output buffers: the crossbar feeds the link).
    /// With output buffers the switch is combined input/output queued: the crossbar moves
    /// packets into the output buffers and each output port's scheduler feeds its link from them.
    #[serde(default)]
    pub output_buffer_flits: u32,
    /// Dynamically shared output buffers (per port, VL space shared with a minimum and maximum
    /// per VL) instead of the static `output_buffer_flits` per VL.
    #[serde(default)]
    pub shared_output_buffer: Option<SharedBufferConfig>,
    /// Virtual cut-through (default) or wormhole.
    #[serde(default)]
    pub switching: Switching,
    /// Output port scheduler.
    #[serde(default)]
    pub scheduler: SchedulerConfig,
    /// Switch organisation: one `crossbar` (default) or the hierarchical Omni-Path switch
    /// (`opa`, parameters in `[switch.opa]`).
    #[serde(default)]
    pub organisation: SwitchOrganisation,
    /// Parameters of the hierarchical Omni-Path switch (with `organisation = "opa"`).
    #[serde(default)]
    pub opa: OpaConfig,
}

/// How a switch is built inside.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SwitchOrganisation {
    /// One crossbar between the input buffers (and output buffers, if any) of all ports.
    #[default]
    Crossbar,
    /// The hierarchical Omni-Path switch of Cano-Cano et al. 2022 (§2.2, Fig. 2): ports grouped
    /// into MPorts, each with a small crossbar, joined by a central crossbar with its own
    /// buffers per MPort. Needs output buffers (`shared_output_buffer` or
    /// `output_buffer_flits`).
    Opa,
}

/// The hierarchical Omni-Path switch's internal structure. Defaults are the paper's (§2.2,
/// §4.1, with 64-byte flits): MPorts of 4 ports, 2 links of 3 flits/cycle from each MPort to
/// the central crossbar, central crossbar links of 4 flits/cycle, 128 × 1 KB central buffer
/// per MPort.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpaConfig {
    /// External ports per MPort (default 4).
    #[serde(default = "four")]
    pub ports_per_mport: u32,
    /// Links from each MPort crossbar to the central crossbar (default 2).
    #[serde(default = "two")]
    pub mport_links: u32,
    /// Flits per cycle of an MPort-to-central link (default 3).
    #[serde(default = "three")]
    pub mport_link_width: u32,
    /// Flits per cycle of a central-crossbar output link (default 4).
    #[serde(default = "four")]
    pub central_width: u32,
    /// Central buffer per MPort, flits, split evenly over its links (default 2048 = 128 × GMTU
    /// of 16 flits).
    #[serde(default = "default_central")]
    pub central_buffer_flits: u32,
    /// Minimum (reserved) flits per VL in a central buffer (default 16, one GMTU).
    #[serde(default = "sixteen")]
    pub central_min_per_vl: u32,
    /// Buffer per VL, flits, where a central-crossbar output link enters its output port's
    /// MPort crossbar (default 32: two GMTUs; the model's one extra stage, see `docs/model.md`).
    #[serde(default = "thirty_two")]
    pub central_output_flits: u32,
}

fn two() -> u32 {
    2
}
fn three() -> u32 {
    3
}
fn four() -> u32 {
    4
}
fn thirty_two() -> u32 {
    32
}
fn default_central() -> u32 {
    2048
}

impl Default for OpaConfig {
    fn default() -> Self {
        OpaConfig {
            ports_per_mport: 4,
            mport_links: 2,
            mport_link_width: 3,
            central_width: 4,
            central_buffer_flits: default_central(),
            central_min_per_vl: 16,
            central_output_flits: 32,
        }
    }
}

fn default_vl_buffer() -> u32 {
    64
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            vl_buffer_flits: default_vl_buffer(),
            shared_buffer: None,
            routing_delay: 1,
            speedup: 1,
            output_buffer_flits: 0,
            shared_output_buffer: None,
            switching: Switching::Vct,
            scheduler: SchedulerConfig::RoundRobin,
            organisation: SwitchOrganisation::Crossbar,
            opa: OpaConfig::default(),
        }
    }
}

/// Endpoint (NIC) parameters.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NicConfig {
    /// Bounded NIC buffer between the application queues and the link, flits per VL
    /// (default 256).
    #[serde(default = "default_nic_buffer")]
    pub buffer_flits: u32,
    /// Injection scheduler (chooses the VL to inject next).
    #[serde(default)]
    pub scheduler: SchedulerConfig,
}

fn default_nic_buffer() -> u32 {
    256
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            buffer_flits: default_nic_buffer(),
            scheduler: SchedulerConfig::RoundRobin,
        }
    }
}

/// Destination pattern. Bit patterns need a power-of-two endpoint count; transpose an even
/// number of address bits.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PatternKind {
    /// Uniform over all endpoints (the source included, as in BookSim).
    #[default]
    Uniform,
    /// Uniform over all other endpoints.
    UniformOthers,
    /// Destination address = source address with its bits reversed.
    BitReversal,
    /// Destination = bitwise complement of the source.
    BitComplement,
    /// Destination = source with the upper and lower halves of its bits swapped.
    Transpose,
    /// Destination = source address rotated left by one bit.
    Shuffle,
    /// Tornado: on a torus/mesh, each coordinate moves ⌈k/2⌉−1 ahead; elsewhere the endpoint
    /// index moves ⌈N/2⌉−1 ahead.
    Tornado,
    /// A fixed random permutation (from the pattern's own random stream).
    RandomPermutation,
    /// `hotspot.endpoints` hot endpoints receive `hotspot.fraction` of all messages; the rest
    /// are uniform.
    Hotspot,
}

/// Hot-spot parameters.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HotspotConfig {
    /// Number of hot endpoints (chosen at random from the pattern's stream).
    pub endpoints: u32,
    /// Fraction of messages sent to a hot endpoint (0..=1).
    pub fraction: f64,
}

/// When sources generate messages.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InjectionKind {
    /// Each cycle a message starts with probability rate / message_flits.
    #[default]
    Bernoulli,
    /// Constant bit rate: one message every message_flits / rate cycles (random phase).
    Cbr,
}

/// Offered traffic.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrafficConfig {
    /// Total offered load, flits/cycle/endpoint over all classes; each class gets
    /// `load · share / Σ share`. When absent, every class needs a `rate`.
    #[serde(default)]
    pub load: Option<f64>,
    /// Destination pattern (default uniform).
    #[serde(default)]
    pub pattern: PatternKind,
    /// Hot-spot parameters (with `pattern = "hotspot"`).
    #[serde(default)]
    pub hotspot: Option<HotspotConfig>,
    /// Injection process (default Bernoulli).
    #[serde(default)]
    pub injection: InjectionKind,
    /// Traffic classes; class `i` is SL `i`. Default: one class "BE".
    #[serde(default = "default_classes", rename = "class")]
    pub classes: Vec<ClassConfig>,
}

fn default_classes() -> Vec<ClassConfig> {
    vec![ClassConfig {
        name: "BE".into(),
        share: 1.0,
        rate: None,
        message_flits: 16,
        mtu_flits: None,
    }]
}

/// One traffic class (a service level).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassConfig {
    /// Name shown in results (e.g. "VO", "BE").
    pub name: String,
    /// Relative share of `traffic.load` (default 1).
    #[serde(default = "one_f")]
    pub share: f64,
    /// Explicit rate in flits/cycle/endpoint (used when `traffic.load` is absent).
    #[serde(default)]
    pub rate: Option<f64>,
    /// Message size, flits (default 16).
    #[serde(default = "sixteen")]
    pub message_flits: u32,
    /// Largest packet of this SL, flits (default: the message size).
    #[serde(default)]
    pub mtu_flits: Option<u32>,
}

fn one_f() -> f64 {
    1.0
}
fn sixteen() -> u32 {
    16
}

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

/// Prefixes a deserialisation message with its key path and adds a "did you mean" hint for an
/// unknown field or variant.
fn describe(path: &str, message: &str) -> String {
    let mut out = if path.is_empty() || path == "." {
        message.to_string()
    } else {
        format!("key `{path}`: {message}")
    };
    if let Some(hint) = suggestion(message) {
        out.push_str(&format!(" (did you mean `{hint}`?)"));
    }
    out
}

/// For serde's "unknown field `x`, expected one of `a`, `b`" (or variant), the closest name.
fn suggestion(message: &str) -> Option<String> {
    let rest = message
        .split_once("unknown field `")
        .or_else(|| message.split_once("unknown variant `"))?
        .1;
    let (given, rest) = rest.split_once('`')?;
    let expected: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
    let best = expected
        .iter()
        .map(|c| (edit_distance(given, c), *c))
        .min()?;
    (best.0 <= given.len().max(3) / 2 + 1).then(|| best.1.to_string())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + (ca != cb) as usize)
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

fn set_path(doc: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!("bad key \"{key}\""));
    }
    let mut table = doc;
    for (i, p) in parts[..parts.len() - 1].iter().enumerate() {
        let entry = table
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = match entry {
            toml::Value::Table(t) => t,
            _ => return Err(format!("\"{}\" is not a table", parts[..=i].join("."))),
        };
    }
    table.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

fn parse_value(text: &str) -> toml::Value {
    match toml::from_str::<toml::Table>(&format!("v = {text}")) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(text.into())),
        Err(_) => toml::Value::String(text.into()),
    }
}

impl ExperimentConfig {
    /// Parses TOML text, applies `key=value` overrides and an optional seed.
    ///
    /// Errors name the origin, the key path (`traffic.load`), the line and column when the
    /// mistake is in the file, and the closest valid name for an unknown key or choice.
    pub fn parse(
        text: &str,
        origin: &str,
        sets: &[String],
        seed: Option<u64>,
    ) -> Result<Self, SimError> {
        let cfg_err = |message: String| SimError::Config {
            origin: origin.to_string(),
            message,
        };
        // Type-check the file as written first, so errors carry line and column.
        let mut cfg: ExperimentConfig = {
            let de = toml::Deserializer::new(text);
            serde_path_to_error::deserialize(de).map_err(|e| {
                let path = e.path().to_string();
                cfg_err(describe(&path, e.into_inner().to_string().trim_end()))
            })?
        };
        if !sets.is_empty() {
            let mut doc: toml::Table = toml::from_str(text).map_err(|e| cfg_err(e.to_string()))?;
            for s in sets {
                let (k, v) = s.split_once('=').ok_or_else(|| {
                    cfg_err(format!("override \"{s}\" is not of the form key=value"))
                })?;
                set_path(&mut doc, k.trim(), parse_value(v.trim()))
                    .map_err(|m| cfg_err(format!("override \"{s}\": {m}")))?;
            }
            cfg = serde_path_to_error::deserialize(toml::Value::Table(doc)).map_err(|e| {
                let path = e.path().to_string();
                let inner = e.into_inner();
                cfg_err(format!(
                    "after overrides {sets:?}: {}",
                    describe(&path, inner.message())
                ))
            })?;
        }
        if let Some(s) = seed {
            cfg.seed = s;
        }
        cfg.validate().map_err(cfg_err)?;
        Ok(cfg)
    }

    /// The JSON Schema of experiment files (for editors and documentation).
    pub fn json_schema() -> String {
        let schema = schemars::schema_for!(ExperimentConfig);
        serde_json::to_string_pretty(&schema).expect("schema serialises")
    }

    /// Range checks that serde cannot express. Messages name the key.
    pub fn validate(&self) -> Result<(), String> {
        let t = &self.traffic;
        if t.classes.is_empty() {
            return Err("traffic.class: at least one class is needed".into());
        }
        if t.classes.len() > 32 {
            return Err("traffic.class: at most 32 classes".into());
        }
        if let Some(l) = t.load {
            if !(l.is_finite() && l >= 0.0) {
                return Err(format!("traffic.load = {l}: must be a non-negative number"));
            }
            let total: f64 = t.classes.iter().map(|c| c.share).sum();
            if total.is_nan()
                || total <= 0.0
                || t.classes.iter().any(|c| c.share.is_nan() || c.share < 0.0)
            {
                return Err(
                    "traffic.class.share: shares must be non-negative and not all zero".into(),
                );
            }
        }
        for (i, c) in t.classes.iter().enumerate() {
            let key = format!("traffic.class[{i}] ({})", c.name);
            if t.load.is_none() && c.rate.is_none() {
                return Err(format!("{key}: needs `rate` when traffic.load is not set"));
            }
            if c.message_flits == 0 {
                return Err(format!("{key}.message_flits must be at least 1"));
            }
            if c.mtu_flits == Some(0) || c.mtu_flits.unwrap_or(1) > u16::MAX as u32 {
                return Err(format!("{key}.mtu_flits must be in 1..=65535"));
            }
            let rate = self.class_rate(i);
            if !(rate.is_finite() && rate >= 0.0) {
                return Err(format!("{key}: rate must be a non-negative number"));
            }
            if rate > c.message_flits as f64 {
                return Err(format!(
                    "{key}: rate {rate} flits/cycle exceeds one message per cycle"
                ));
            }
        }
        if t.pattern == PatternKind::Hotspot {
            match &t.hotspot {
                None => return Err("traffic.hotspot: required with pattern = \"hotspot\"".into()),
                Some(h) if !(0.0..=1.0).contains(&h.fraction) || h.endpoints == 0 => {
                    return Err("traffic.hotspot: endpoints ≥ 1 and fraction in [0, 1]".into())
                }
                _ => {}
            }
        }
        if let Some(engine) = &self.routing.engine {
            if let Err(e) = flitsim_manager::routing::engine_by_name(engine) {
                let names = flitsim_manager::routing::ENGINE_NAMES;
                let hint = names
                    .iter()
                    .map(|n| (edit_distance(engine, n), *n))
                    .min()
                    .filter(|(d, _)| *d <= engine.len().max(3) / 2 + 1)
                    .map(|(_, n)| format!(" (did you mean `{n}`?)"))
                    .unwrap_or_default();
                return Err(format!("routing.engine: {e}{hint}"));
            }
        }
        if self.routing.vls == 0 || self.routing.vls > 32 {
            return Err(format!(
                "routing.vls = {}: must be in 1..=32",
                self.routing.vls
            ));
        }
        if self.switch.speedup == 0 {
            return Err("switch.speedup must be at least 1".into());
        }
        for (key, sb) in [
            ("switch.shared_buffer", &self.switch.shared_buffer),
            (
                "switch.shared_output_buffer",
                &self.switch.shared_output_buffer,
            ),
        ] {
            let Some(sb) = sb else { continue };
            if sb.max_per_vl < sb.min_per_vl
                || sb.total_flits < sb.min_per_vl * self.routing.vls as u32
                || sb.max_per_vl > sb.total_flits
            {
                return Err(format!(
                    "{key}: need min_per_vl ≤ max_per_vl ≤ total_flits and vls·min_per_vl ≤ total_flits"
                ));
            }
        }
        if self.run.measure == 0 {
            return Err("run.measure must be at least 1 cycle".into());
        }
        if !(0.0..1.0).contains(&self.run.saturation_tolerance) {
            return Err("run.saturation_tolerance must be in [0, 1)".into());
        }
        Ok(())
    }

    /// Offered rate of class `i` in flits/cycle/endpoint.
    pub fn class_rate(&self, i: usize) -> f64 {
        let t = &self.traffic;
        match t.load {
            Some(l) => {
                let total: f64 = t.classes.iter().map(|c| c.share).sum();
                l * t.classes[i].share / total
            }
            None => t.classes[i].rate.unwrap_or(0.0),
        }
    }

    /// Stable 64-bit FNV-1a hash of the resolved configuration (canonical JSON), as hex.
    pub fn hash(&self) -> String {
        let json = serde_json::to_string(self).expect("config serialises");
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in json.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        format!("{h:016x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str, sets: &[&str]) -> String {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        ExperimentConfig::parse(text, "exp.toml", &sets, None)
            .unwrap_err()
            .to_string()
    }

    const BASE: &str = "[topology]\nkind = \"torus\"\nsides = [4, 4]\n[traffic]\nload = 0.3\n";

    #[test]
    fn unknown_keys_get_a_suggestion_and_position() {
        let e = err(&BASE.replace("load = 0.3", "lod = 0.3"), &[]);
        assert!(
            e.contains("exp.toml") && e.contains("line 5") && e.contains("did you mean `load`"),
            "{e}"
        );
        let e = err(BASE, &["traffic.pattern=\"unifrom\""]);
        assert!(
            e.contains("`traffic.pattern`") && e.contains("did you mean `uniform`"),
            "{e}"
        );
    }

    #[test]
    fn wrong_types_name_the_key_path_and_line() {
        let e = err(&BASE.replace("load = 0.3", "load = \"high\""), &[]);
        assert!(
            e.contains("key `traffic.load`") && e.contains("line 5"),
            "{e}"
        );
        let e = err(BASE, &["switch.routing_delay=-1"]);
        assert!(e.contains("`switch.routing_delay`"), "{e}");
    }

    #[test]
    fn unknown_routing_engines_fail_at_parse_time() {
        let e = err(BASE, &["routing.engine=\"dfssp\""]);
        assert!(
            e.contains("routing.engine") && e.contains("did you mean `dfsssp`"),
            "{e}"
        );
    }

    #[test]
    fn no_suggestion_for_far_fetched_names() {
        let e = err(&BASE.replace("load = 0.3", "zzzzzzzz = 0.3"), &[]);
        assert!(!e.contains("did you mean"), "{e}");
    }
}
