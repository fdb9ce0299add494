//! Deadline-based QoS (Martínez et al. 2008, `shared/papers/001_35fa54e686c80f21.txt`):
//! `qos.architecture`, the per-class deadline parameters `[[qos.class]]`, and
//! `switch.vl_discipline`.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The five switch/host architectures of §4.1, selected by one key.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QosArchitecture {
    /// Two VCs: the regulated classes in VC 0 with absolute priority, the others in VC 1;
    /// FIFO queues everywhere, no deadlines.
    #[serde(rename = "traditional_2vc")]
    Traditional2vc,
    /// One VC per class in priority order (class 0 first), FIFO queues; token buckets at the
    /// hosts for the classes that give `bucket_rate`.
    #[serde(rename = "traditional_4vc")]
    Traditional4vc,
    /// Host EDF with deadline stamping, two VCs of FIFO queues, switches arbitrate by deadline.
    #[serde(rename = "simple_2vc")]
    Simple2vc,
    /// As `simple_2vc`, with the regulated VC split into ordered + take-over queues (§3.4).
    #[serde(rename = "advanced_2vc")]
    Advanced2vc,
    /// As `simple_2vc`, with heap queues (ideal EDF) in both VCs.
    Ideal,
}

impl QosArchitecture {
    /// Hosts stamp deadlines and schedule EDF; switches arbitrate by deadline.
    pub fn edf(self) -> bool {
        matches!(self, Self::Simple2vc | Self::Advanced2vc | Self::Ideal)
    }

    /// The number of VCs (virtual lanes per routing lane) for `classes` traffic classes.
    pub fn vcs(self, classes: usize) -> usize {
        match self {
            Self::Traditional4vc => classes,
            _ => 2,
        }
    }

    /// The key's value, as written in a file.
    pub fn name(self) -> &'static str {
        match self {
            Self::Traditional2vc => "traditional_2vc",
            Self::Traditional4vc => "traditional_4vc",
            Self::Simple2vc => "simple_2vc",
            Self::Advanced2vc => "advanced_2vc",
            Self::Ideal => "ideal",
        }
    }
}

/// The queue discipline of a switch VL (`switch.vl_discipline`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VlDiscipline {
    /// First in, first out.
    #[default]
    Fifo,
    /// Ordered queue + take-over queue (§3.4, appendix Definitions 1–2).
    OrderedTakeover,
    /// Smallest deadline first (an ideal heap).
    Heap,
}

impl VlDiscipline {
    /// Whether this is the default (serialisation skips it, keeping old configuration hashes).
    pub fn is_fifo(&self) -> bool {
        *self == VlDiscipline::Fifo
    }
}

/// How a host stamps the deadline of a class's packets (§3.1).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeadlineStamp {
    /// D = max(D_prev, now) + L / bandwidth, with `bandwidth` the class's (or flow's) reserved
    /// average rate — `bandwidth` if given, else the offered rate.
    #[default]
    Rate,
    /// D = max(D_prev, now) + L / link bandwidth: control traffic, as early as possible.
    Link,
    /// D = max(D_prev, now) + frame_latency / packets of the frame: video, each message a
    /// frame.
    Frame,
}

/// Deadline and VC parameters of one traffic class (`[[qos.class]]`, in class order).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QosClassConfig {
    /// How deadlines are stamped (`rate`, `link`, `frame`; default `rate`).
    #[serde(default)]
    pub stamp: DeadlineStamp,
    /// Average bandwidth used for `stamp = "rate"`, flits/cycle (a rate with `[units]`);
    /// default: the class's offered rate per endpoint (a flow's own `rate` for flows). Best
    /// effort classes sharing a VC are told apart by giving them different bandwidths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<f64>,
    /// Target latency of a frame for `stamp = "frame"`, cycles (a time with `[units]`; the
    /// paper uses 10 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_latency: Option<u64>,
    /// Regulated traffic: the regulated VC (absolute priority) under the two-VC architectures.
    #[serde(default)]
    pub regulated: bool,
    /// Packets wait at the host until their eligible time, the deadline minus
    /// `qos.eligibility_factor` (smoothing; §3.1).
    #[serde(default)]
    pub eligible: bool,
    /// Token bucket at the hosts: tokens per cycle, flits/cycle (a rate with `[units]`).
    /// Applies under `traditional_4vc` and without an architecture; the other architectures
    /// ignore it (the paper's Traditional 4 VCs is the one with token buckets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket_rate: Option<f64>,
    /// Token bucket depth, flits (a size with `[units]`; default the class's MTU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket_depth: Option<u32>,
}
