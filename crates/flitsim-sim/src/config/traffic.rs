//! `[traffic]`: offered load, destination pattern, injection process and traffic classes.
use super::{FlowConfig, FlowSetConfig, ParamError, TraceConfig};
use crate::workload::{ProcessConfig, ProcessTable, SizeConfig};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    /// Explicit flows (`[[traffic.flow]]`), beside the class sources.
    #[serde(default, rename = "flow", skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowConfig>,
    /// Generated flow sets (`[[traffic.flow_set]]`): all pairs, a permutation, or random
    /// destinations per source.
    #[serde(default, rename = "flow_set", skip_serializing_if = "Vec::is_empty")]
    pub flow_sets: Vec<FlowSetConfig>,
    /// An MPI trace replayed closed loop (`[traffic.trace]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceConfig>,
    /// Packet size, flits, for every class (a size with `[units]`, e.g. `"128B"`): a class
    /// message of at most its MTU is cut into packets of this size, as Omni-Path does
    /// (Cano-Cano et al. 2022, §3.3.1: 128-byte packets inside messages of an SL's MTU).
    /// Round robin, strict priority, SBT and VLArb arbitrate per packet; DTable sends a whole
    /// message (up to the SL's MTU) atomically, its packets back to back on one VL. Default 0:
    /// a packet is a whole message of at most the MTU (the single-packet messages of earlier
    /// versions).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub packet_flits: u32,
}

fn is_zero(x: &u32) -> bool {
    *x == 0
}

fn default_classes() -> Vec<ClassConfig> {
    vec![ClassConfig {
        name: "BE".into(),
        share: 1.0,
        rate: None,
        message_flits: 16,
        mtu_flits: None,
        size: None,
        process: None,
        management: false,
    }]
}

/// One traffic class (a service level).
///
/// Serialised without `message_flits` when `size` is given, so a resolved configuration reads
/// back (a file may not give both).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, into = "ClassConfigOut")]
pub struct ClassConfig {
    /// Name shown in results (e.g. "VO", "BE").
    pub name: String,
    /// Relative share of `traffic.load` (default 1).
    #[serde(default = "one_f")]
    pub share: f64,
    /// Explicit rate in flits/cycle/endpoint (used when `traffic.load` is absent).
    #[serde(default)]
    pub rate: Option<f64>,
    /// Message size, flits (default 16); the fixed size used when `size` is absent. Giving
    /// both in a file is an error.
    #[serde(default = "sixteen")]
    pub message_flits: u32,
    /// Largest packet of this SL, flits (default: the largest message size — a video
    /// process's `max` frame; required when `size` is unbounded).
    #[serde(default)]
    pub mtu_flits: Option<u32>,
    /// Message size: a number of flits, or a distribution table
    /// (`{ dist = "fixed" | "uniform" | "pareto" | "exponential" | "empirical", … }`).
    /// Replaces `message_flits`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<SizeConfig>,
    /// Arrival process: `"bernoulli" | "cbr" | "poisson"` or a table
    /// `{ kind = "onoff" | "video", … }` (default: `traffic.injection`). The message rate is
    /// the class rate / mean size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessConfig>,
    /// Subnet-management traffic (InfiniBand VL15, Omni-Path SC15): the class travels on a
    /// VL of its own above the data VLs, with absolute priority at every output port, input
    /// and NIC, outside the QoS scheduler's tables. It must be the last class and give
    /// `rate` (flits/cycle/endpoint); `traffic.load` and the shares cover the data classes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub management: bool,
}

/// The serialised form of [`ClassConfig`] (same keys, in the same order).
#[derive(Serialize)]
struct ClassConfigOut {
    name: String,
    share: f64,
    rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message_flits: Option<u32>,
    mtu_flits: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<SizeConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    process: Option<ProcessConfig>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    management: bool,
}

impl From<ClassConfig> for ClassConfigOut {
    fn from(c: ClassConfig) -> Self {
        ClassConfigOut {
            message_flits: c.size.is_none().then_some(c.message_flits),
            name: c.name,
            share: c.share,
            rate: c.rate,
            mtu_flits: c.mtu_flits,
            size: c.size,
            process: c.process,
            management: c.management,
        }
    }
}

impl ClassConfig {
    /// The message size (from `size`, else the fixed `message_flits`).
    pub fn size_config(&self) -> SizeConfig {
        self.size
            .clone()
            .unwrap_or(SizeConfig::Flits(self.message_flits))
    }

    /// The largest message, flits (`None`: an unbounded distribution).
    pub fn max_message_flits(&self) -> Option<u32> {
        if let Some(f) = self.trace_frames() {
            return Some(f.iter().copied().max().unwrap_or(1).max(1));
        }
        if let Some(ProcessConfig::Table(ProcessTable::Video { max, min, .. })) = &self.process {
            let max = max.unwrap_or(*min);
            return Some(max.ceil().clamp(1.0, u32::MAX as f64) as u32);
        }
        match &self.size {
            None => Some(self.message_flits),
            Some(s) => s.max_flits(),
        }
    }

    /// The `trace` path of a video process, if one is given.
    pub fn trace_path(&self) -> Option<&str> {
        match &self.process {
            Some(ProcessConfig::Table(ProcessTable::Video { trace, .. })) => trace.as_deref(),
            _ => None,
        }
    }

    /// The frame sizes (flits) read from a video process's `trace`, once read.
    pub fn trace_frames(&self) -> Option<&[u32]> {
        match &self.process {
            Some(ProcessConfig::Table(ProcessTable::Video {
                trace: Some(_),
                frames,
                ..
            })) => frames.as_deref(),
            _ => None,
        }
    }

    /// The rate implied by a video trace: mean frame (flits) / frame period (cycles).
    pub fn trace_rate(&self) -> Option<f64> {
        let f = self.trace_frames().filter(|f| !f.is_empty())?;
        let Some(ProcessConfig::Table(ProcessTable::Video { frame_period, .. })) = &self.process
        else {
            return None;
        };
        let mean = f.iter().map(|&x| x as f64).sum::<f64>() / f.len() as f64;
        Some(mean / frame_period)
    }

    /// True when the class uses the workload models (`size` or `process` given), false for
    /// the fixed-size Bernoulli/CBR sources of `traffic.injection`.
    pub fn has_workload(&self) -> bool {
        self.size.is_some() || self.process.is_some()
    }
}

fn one_f() -> f64 {
    1.0
}
fn sixteen() -> u32 {
    16
}

impl TrafficConfig {
    /// Offered rate of class `i` in flits/cycle/endpoint: its share of `load`, or its `rate`
    /// when `load` is absent.
    /// A management class always sends at its `rate`.
    pub fn class_rate(&self, i: usize) -> f64 {
        if let Some(r) = self.classes[i].trace_rate() {
            return r;
        }
        if self.classes[i].management {
            return self.classes[i].rate.unwrap_or(0.0);
        }
        match self.load {
            Some(l) => {
                let total: f64 = self.data_classes().map(|c| c.share).sum();
                l * self.classes[i].share / total
            }
            None => self.classes[i].rate.unwrap_or(0.0),
        }
    }

    /// The index of the management class (`management = true`), if any.
    pub fn management_class(&self) -> Option<usize> {
        self.classes.iter().position(|c| c.management)
    }

    /// The data classes: every class but the management class.
    pub fn data_classes(&self) -> impl Iterator<Item = &ClassConfig> {
        self.classes.iter().filter(|c| !c.management)
    }

    /// Range checks that serde cannot express. Errors name the key (`traffic.load`,
    /// `traffic.class[0].message_flits`, …).
    ///
    /// A total offered load of 0 (`load = 0`, or every class's `rate = 0`) is an error: an
    /// idle fabric delivers nothing to measure.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.classes.is_empty() {
            return Err(ParamError::new(
                "traffic.class",
                "at least one class is needed",
            ));
        }
        if self.classes.len() > 32 {
            return Err(ParamError::new("traffic.class", "at most 32 classes"));
        }
        let last = self.classes.len() - 1;
        for (i, c) in self
            .classes
            .iter()
            .enumerate()
            .filter(|(_, c)| c.management)
        {
            let key = format!("traffic.class[{i}].management");
            if i != last {
                return Err(ParamError::new(
                    key,
                    "the management class must be the last [[traffic.class]] (its SL follows \
                     the data SLs)",
                ));
            }
            if i == 0 {
                return Err(ParamError::new(
                    key,
                    "a management class needs at least one data class beside it",
                ));
            }
            match c.rate {
                Some(r) if r.is_finite() && r > 0.0 => {}
                _ => {
                    return Err(ParamError::new(
                        format!("traffic.class[{i}].rate"),
                        "a management class needs a positive `rate` (flits/cycle/endpoint); \
                         traffic.load and the shares cover the data classes only",
                    ))
                }
            }
            if c.has_workload() || c.trace_path().is_some() {
                return Err(ParamError::new(
                    key,
                    "a management class sends fixed-size messages (`message_flits`); drop \
                     `size` and `process`",
                ));
            }
        }
        if let Some(l) = self.load {
            if !(l.is_finite() && l >= 0.0) {
                return Err(ParamError::new(
                    "traffic.load",
                    format!("{l}: must be a non-negative number"),
                ));
            }
            if l == 0.0 {
                return Err(ParamError::new(
                    "traffic.load",
                    "must be > 0 (an idle fabric has nothing to measure)",
                ));
            }
            for (i, c) in self.classes.iter().enumerate() {
                if !(c.share.is_finite() && c.share >= 0.0) {
                    return Err(ParamError::new(
                        format!("traffic.class[{i}].share"),
                        format!("{}: must be a non-negative number", c.share),
                    ));
                }
            }
            let total: f64 = self.data_classes().map(|c| c.share).sum();
            if !(total.is_finite() && total > 0.0) {
                return Err(ParamError::new(
                    "traffic.class",
                    "shares must be non-negative and not all zero",
                ));
            }
        }
        if self.packet_flits > u16::MAX as u32 {
            return Err(ParamError::new(
                "traffic.packet_flits",
                format!("{}: must be in 0..=65535", self.packet_flits),
            ));
        }
        for (i, c) in self.classes.iter().enumerate() {
            let key = format!("traffic.class[{i}]");
            if c.trace_path().is_some() {
                if self.load.is_some() {
                    return Err(ParamError::new(
                        "traffic.load",
                        format!(
                            "class {:?} takes its rate from process.trace; give the classes \
                             `rate` instead of traffic.load",
                            c.name
                        ),
                    ));
                }
                if c.rate.is_some() {
                    return Err(ParamError::new(
                        format!("{key}.rate"),
                        "must not be given with process.trace (the trace sets the rate)",
                    ));
                }
                if c.size.is_some() {
                    return Err(ParamError::new(
                        format!("{key}.size"),
                        "does not apply to a video trace (its frames are the messages)",
                    ));
                }
                if c.mtu_flits == Some(0) || c.mtu_flits.unwrap_or(1) > u16::MAX as u32 {
                    return Err(ParamError::new(
                        format!("{key}.mtu_flits"),
                        "must be in 1..=65535",
                    ));
                }
                let p = c.process.as_ref().expect("a trace is a process");
                p.validate(&format!("{key}.process"), 0.0, &c.size_config().sampler())?;
                continue;
            }
            if self.load.is_none() && c.rate.is_none() && !self.has_other_sources() {
                return Err(ParamError::new(
                    key,
                    format!(
                        "class {:?} needs `rate` when traffic.load is not set (or flows in \
                         [[traffic.flow]] / [[traffic.flow_set]])",
                        c.name
                    ),
                ));
            }
            if c.message_flits == 0 {
                return Err(ParamError::new(
                    format!("{key}.message_flits"),
                    "must be at least 1",
                ));
            }
            if c.mtu_flits == Some(0) || c.mtu_flits.unwrap_or(1) > u16::MAX as u32 {
                return Err(ParamError::new(
                    format!("{key}.mtu_flits"),
                    "must be in 1..=65535",
                ));
            }
            if let (Some(_), Some(ProcessConfig::Table(ProcessTable::Video { .. }))) =
                (&c.size, &c.process)
            {
                return Err(ParamError::new(
                    format!("{key}.size"),
                    "does not apply to a video process (its frames are sized by process.min, \
                     process.max and the rate)",
                ));
            }
            if let Some(s) = &c.size {
                s.validate(&format!("{key}.size"))?;
                if c.mtu_flits.is_none() && s.max_flits().is_none() {
                    return Err(ParamError::new(
                        format!("{key}.mtu_flits"),
                        "needed when `size` has no upper bound",
                    ));
                }
            }
            let rate = self.class_rate(i);
            let rate_key = if self.load.is_some() {
                "traffic.load".to_string()
            } else {
                format!("{key}.rate")
            };
            if !(rate.is_finite() && rate >= 0.0) {
                return Err(ParamError::new(
                    rate_key,
                    format!("class {:?}: rate must be a non-negative number", c.name),
                ));
            }
            let mean = c.size_config().sampler().mean();
            if let Some(p) = &c.process {
                p.validate(&format!("{key}.process"), rate, &c.size_config().sampler())?;
            }
            if rate > mean {
                return Err(ParamError::new(
                    rate_key,
                    format!(
                        "class {:?}: rate {rate} flits/cycle exceeds one message per cycle",
                        c.name
                    ),
                ));
            }
        }
        self.validate_flows()?;
        self.validate_trace()?;
        if self.load.is_none()
            && !self.has_other_sources()
            && (0..self.classes.len()).all(|i| self.class_rate(i) == 0.0)
        {
            return Err(ParamError::new(
                "traffic.class",
                "every class has rate 0 (an idle fabric has nothing to measure)",
            ));
        }
        if self.pattern == PatternKind::Hotspot {
            match &self.hotspot {
                None => {
                    return Err(ParamError::new(
                        "traffic.pattern",
                        "\"hotspot\" needs a [traffic.hotspot] section",
                    ))
                }
                Some(h) if !(0.0..=1.0).contains(&h.fraction) => {
                    return Err(ParamError::new(
                        "traffic.hotspot.fraction",
                        "must be in [0, 1]",
                    ))
                }
                Some(h) if h.endpoints == 0 => {
                    return Err(ParamError::new(
                        "traffic.hotspot.endpoints",
                        "must be at least 1",
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The checks that need the fabric's endpoint count `n`: bit patterns need a power of two
    /// (transpose an even number of bits), and the hot spots must exist.
    pub fn validate_endpoints(&self, n: usize) -> Result<(), ParamError> {
        self.validate_flow_endpoints(n)?;
        let name = self.pattern.name();
        let pow2 = n.is_power_of_two();
        let bits = n.trailing_zeros();
        match self.pattern {
            PatternKind::BitReversal | PatternKind::BitComplement | PatternKind::Shuffle
                if !pow2 =>
            {
                Err(ParamError::new(
                    "traffic.pattern",
                    format!("\"{name}\" needs a power-of-two number of endpoints, not {n}"),
                ))
            }
            PatternKind::Transpose if !pow2 || bits % 2 == 1 => Err(ParamError::new(
                "traffic.pattern",
                format!(
                    "\"{name}\" needs a number of endpoints that is an even power of two, not {n}"
                ),
            )),
            PatternKind::Hotspot
                if self
                    .hotspot
                    .as_ref()
                    .is_some_and(|h| h.endpoints as usize > n) =>
            {
                Err(ParamError::new(
                    "traffic.hotspot.endpoints",
                    format!("exceeds the {n} endpoints of the fabric"),
                ))
            }
            PatternKind::UniformOthers if n < 2 => Err(ParamError::new(
                "traffic.pattern",
                format!("\"{name}\" needs at least 2 endpoints"),
            )),
            _ => Ok(()),
        }
    }
}

impl PatternKind {
    /// The name as written in an experiment file (`bit_reversal`).
    pub fn name(&self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }
}
