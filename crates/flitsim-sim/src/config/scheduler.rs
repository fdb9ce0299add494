//! `switch.scheduler` and `nic.scheduler`: which output-port scheduler a port runs, and the
//! entries of a DTable given by hand.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
