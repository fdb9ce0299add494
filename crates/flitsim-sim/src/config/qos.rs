//! `[qos]`: the fabric-wide output scheduler and its tables (SBT, DTable, VLArbitration,
//! Omni-Path SL→SC→VL).
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    /// Deadline-based QoS architecture of Martínez et al. 2008 (§4.1): `traditional_2vc`,
    /// `traditional_4vc`, `simple_2vc`, `advanced_2vc`, `ideal`. Sets the VCs (SL→VL), the
    /// schedulers, the queue disciplines and the hosts' scheduling; needs `[[qos.class]]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<super::QosArchitecture>,
    /// Per traffic class, in class order: deadline stamping, VC and token bucket.
    #[serde(default, rename = "class", skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<super::QosClassConfig>,
    /// Eligible time = deadline − this, cycles, for classes with `eligible = true` (a time
    /// with `[units]`; the paper uses 20 µs).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub eligibility_factor: u64,
    /// Packets that waited this long at their host without being injected are discarded
    /// and counted, cycles (a time with `[units]`; the paper uses 100 ms; default never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discard_after: Option<u64>,
    /// Clocks of switches and hosts are offset by up to this many cycles (uniform, seeded):
    /// deadlines travel as time to deadline, so results do not depend on it (§3.3).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub clock_skew: u64,
    /// Connection admission control (Martínez et al. 2008, §4.1): the flows of regulated
    /// classes (`qos.class[c].regulated`; every flow without `[[qos.class]]`) are admitted in
    /// order only while every link of one of their paths stays at or below this fraction of
    /// its capacity, each on its least occupied path; refused flows send nothing. The paper
    /// uses 0.7. Results gain `admission` (the `flitsim cac` report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission_limit: Option<f64>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl QosConfig {
    /// Whether hosts stamp deadlines and switches arbitrate by them: an EDF architecture, or
    /// `[[qos.class]]` given without an architecture.
    pub fn deadlines(&self) -> bool {
        match self.architecture {
            Some(a) => a.edf(),
            None => !self.classes.is_empty(),
        }
    }
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
    /// Where an SL's message is atomic with packets inside messages: `link` (default: on
    /// every link the table schedules; packets cross switches one by one) or `path` (as one
    /// unit through every switch stage too, flitsim before this key).
    #[serde(default, skip_serializing_if = "super::DTableAtomic::is_link")]
    pub atomic: super::DTableAtomic,
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
