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
        /// Where an SL's message is atomic (`link`, the default, or `path`): see
        /// [`DTableAtomic`].
        #[serde(default, skip_serializing_if = "DTableAtomic::is_link")]
        atomic: DTableAtomic,
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

/// Where DTable keeps an SL's message together (Cano-Cano et al. 2022, §3.3.1). It matters
/// only with packets inside messages (`traffic.packet_flits` > 0); without them a message is
/// one packet either way.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DTableAtomic {
    /// On every link a DTable schedules (switch output ports and NICs): once it has chosen an
    /// SL, with room downstream for the SL's whole MTU and enough weight, the port sends the
    /// next MTU's worth of packets of that VL back to back. Inside a switch the packets move one
    /// by one, as the crossbars of the paper's switch move packets (§2.2).
    #[default]
    Link,
    /// Along the whole path: the message moves as one unit through every stage of every
    /// switch too (flitsim before this key).
    Path,
}

impl DTableAtomic {
    /// Whether this is the default, `link`.
    pub fn is_link(&self) -> bool {
        *self == DTableAtomic::Link
    }
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
