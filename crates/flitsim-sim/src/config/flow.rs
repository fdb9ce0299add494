//! `[[traffic.flow]]` and `[[traffic.flow_set]]`: explicit flows between two endpoints, and
//! generators of common flow sets.
//!
//! A flow is a source of one class (its SL) at one endpoint that sends every message to one
//! destination, at its own rate, with its own size distribution and arrival process, between
//! `start` and `stop`. Flows run beside the class sources of `traffic.load` / `class.rate`;
//! a class that only names an SL for flows needs neither (its class rate is then 0).
use super::{ParamError, TrafficConfig};
use crate::traffic::{stream, StreamKind};
use crate::workload::{ProcessConfig, ProcessTable, SizeConfig};
use rand::seq::SliceRandom;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The most flows a run may have after the flow sets are expanded (each costs a source, its
/// counters and, with `run.timeseries_bin`, a time series).
pub const MAX_FLOWS: usize = 1 << 22;

/// One explicit flow.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Source endpoint index.
    pub src: u32,
    /// Destination endpoint index.
    pub dst: u32,
    /// Class (SL) by name (default: the first class). Its packets are cut at the class's MTU
    /// and use its VLs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Rate of the flow, flits/cycle (a rate such as `"3MB/s"` with `[units]`). Required
    /// unless the process is a video trace, which sets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Message size: flits or a distribution table (default: the class's size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<SizeConfig>,
    /// Arrival process (default: the class's process, else `traffic.injection`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessConfig>,
    /// First cycle the flow may generate a message (a time with `[units]`; default 0).
    #[serde(default)]
    pub start: u64,
    /// The flow generates no message at or after this cycle (default: never stops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<u64>,
    /// Index of the path among the destination's paths (default 0): with LMC > 0 the
    /// destination LID offset, which selects that LID's forwarding-table entries (or, with
    /// `switch.source_routing`, the route they give). Must be below the fabric's paths per
    /// destination.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<u32>,
    /// An explicit source route (with `switch.source_routing`): the output port at each switch
    /// from the source's switch to the destination's, whose last port leads to `dst`.
    /// Replaces `path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<Vec<u16>>,
    /// With `nic.rate_control`: the flow's inter-packet dispatch time, cycles (a time with
    /// `[units]`; at least `nic.dispatch_time`, its default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idt: Option<f64>,
    /// With `nic.rate_control`: the bandwidth to reserve for the flow, flits/cycle (a rate
    /// with `[units]`). The bandwidth manager admits or refuses it and sets the flow's IDT
    /// (see docs/model.md, "Bandwidth manager"); replaces `idt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve: Option<f64>,
    /// With `nic.rate_control`: a best-effort flow, whose IDT the bandwidth manager sets from
    /// the surplus on its path (default false); replaces `idt`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub best_effort: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// How a flow set chooses its (source, destination) pairs.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlowSetKind {
    /// Every ordered pair of distinct endpoints: n·(n − 1) flows, by source then destination.
    AllPairs,
    /// A random permutation without fixed points (a derangement): one flow per endpoint, drawn
    /// from the set's own random stream.
    Permutation,
    /// `dests` distinct random destinations per source (never the source itself).
    Random,
}

/// A generated set of flows; every flow gets the set's class, rate, size, process, start and
/// stop.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSetConfig {
    /// Which pairs.
    pub kind: FlowSetKind,
    /// Destinations per source (with `kind = "random"`; 1 ≤ dests ≤ endpoints − 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dests: Option<u32>,
    /// Class by name (default: the first class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Rate of each flow, flits/cycle (a rate with `[units]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Message size of each flow (default: the class's size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<SizeConfig>,
    /// Arrival process of each flow (default: the class's process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessConfig>,
    /// First cycle (default 0).
    #[serde(default)]
    pub start: u64,
    /// Stop cycle (default: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<u64>,
}

/// A flow ready to run: its endpoints, class index and what its source needs.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    /// Source endpoint.
    pub src: u32,
    /// Destination endpoint.
    pub dst: u32,
    /// Class index (SL).
    pub class: u8,
    /// Rate, flits/cycle.
    pub rate: f64,
    /// Message size.
    pub size: SizeConfig,
    /// Arrival process (`None`: `traffic.injection`).
    pub process: Option<ProcessConfig>,
    /// First cycle.
    pub start: u64,
    /// Stop cycle (`u64::MAX`: never).
    pub stop: u64,
    /// Path index.
    pub path: u32,
    /// Explicit source route (output ports), if given.
    pub route: Option<Vec<u16>>,
    /// Inter-packet dispatch time under rate control, if given.
    pub idt: Option<f64>,
}

/// The traffic keys a flow and a flow set share.
struct FlowTraffic<'a> {
    class: &'a Option<String>,
    rate: Option<f64>,
    size: &'a Option<SizeConfig>,
    process: &'a Option<ProcessConfig>,
    start: u64,
    stop: Option<u64>,
}

impl FlowConfig {
    fn traffic(&self) -> FlowTraffic<'_> {
        FlowTraffic {
            class: &self.class,
            rate: self.rate,
            size: &self.size,
            process: &self.process,
            start: self.start,
            stop: self.stop,
        }
    }
}

impl FlowSetConfig {
    fn traffic(&self) -> FlowTraffic<'_> {
        FlowTraffic {
            class: &self.class,
            rate: self.rate,
            size: &self.size,
            process: &self.process,
            start: self.start,
            stop: self.stop,
        }
    }

    /// Flows this set generates on `n` endpoints (without drawing them).
    pub fn count(&self, n: usize) -> usize {
        match self.kind {
            FlowSetKind::AllPairs => n * n.saturating_sub(1),
            FlowSetKind::Permutation => n,
            FlowSetKind::Random => n * self.dests.unwrap_or(0) as usize,
        }
    }
}

fn trace_rate(process: &Option<ProcessConfig>) -> Option<f64> {
    let Some(ProcessConfig::Table(ProcessTable::Video {
        frame_period,
        frames: Some(f),
        trace: Some(_),
        ..
    })) = process
    else {
        return None;
    };
    if f.is_empty() {
        return None;
    }
    Some(f.iter().map(|&x| x as f64).sum::<f64>() / f.len() as f64 / frame_period)
}

fn has_trace(process: &Option<ProcessConfig>) -> bool {
    matches!(
        process,
        Some(ProcessConfig::Table(ProcessTable::Video {
            trace: Some(_),
            ..
        }))
    )
}

impl TrafficConfig {
    /// The class index of `name` (`None`: the first class); the error names `key`.
    fn flow_class(&self, name: &Option<String>, key: &str) -> Result<u8, ParamError> {
        let Some(name) = name else { return Ok(0) };
        self.classes
            .iter()
            .position(|c| &c.name == name)
            .map(|i| i as u8)
            .ok_or_else(|| {
                let names: Vec<String> = self
                    .classes
                    .iter()
                    .map(|c| format!("{:?}", c.name))
                    .collect();
                ParamError::new(
                    format!("{key}.class"),
                    format!(
                        "{name:?} is not a class (the classes are {})",
                        names.join(", ")
                    ),
                )
            })
    }

    /// Checks one flow's or flow set's traffic keys; `key` is `traffic.flow[i]`.
    fn validate_flow_traffic(&self, t: &FlowTraffic<'_>, key: &str) -> Result<(), ParamError> {
        let c = self.flow_class(t.class, key)? as usize;
        let class = &self.classes[c];
        let process = t.process.as_ref().or(class.process.as_ref());
        let trace = has_trace(t.process) || (t.process.is_none() && class.trace_path().is_some());
        if let Some(stop) = t.stop {
            if stop <= t.start {
                return Err(ParamError::new(
                    format!("{key}.stop"),
                    format!("{stop} is not after start ({})", t.start),
                ));
            }
        }
        if trace {
            if t.rate.is_some() {
                return Err(ParamError::new(
                    format!("{key}.rate"),
                    "must not be given with a video trace process (the trace sets the rate)",
                ));
            }
            if t.size.is_some() {
                return Err(ParamError::new(
                    format!("{key}.size"),
                    "does not apply to a video trace (its frames are the messages)",
                ));
            }
            let p = process.expect("a trace is a process");
            return p.validate(
                &format!("{key}.process"),
                0.0,
                &SizeConfig::Flits(1).sampler(),
            );
        }
        let Some(rate) = t.rate else {
            return Err(ParamError::new(
                format!("{key}.rate"),
                "is required (flits/cycle, or a rate such as \"3MB/s\" with [units])",
            ));
        };
        if !(rate.is_finite() && rate > 0.0) {
            return Err(ParamError::new(
                format!("{key}.rate"),
                format!("{rate}: must be a positive number"),
            ));
        }
        let size = t.size.clone().unwrap_or_else(|| class.size_config());
        let video = matches!(
            process,
            Some(ProcessConfig::Table(ProcessTable::Video { .. }))
        );
        if video && t.size.is_some() {
            return Err(ParamError::new(
                format!("{key}.size"),
                "does not apply to a video process (its frames are sized by process.min, \
                 process.max and the rate)",
            ));
        }
        if let Some(s) = t.size {
            s.validate(&format!("{key}.size"))?;
            if s.max_flits().is_none() && class.mtu_flits.is_none() {
                return Err(ParamError::new(
                    format!("{key}.size"),
                    format!(
                        "has no upper bound: class {:?} needs mtu_flits to cut its messages",
                        class.name
                    ),
                ));
            }
        }
        let sampler = size.sampler();
        if let Some(p) = process {
            let pkey = if t.process.is_some() {
                format!("{key}.process")
            } else {
                format!("traffic.class[{c}].process")
            };
            p.validate(&pkey, rate, &sampler)?;
        }
        if rate > sampler.mean() {
            return Err(ParamError::new(
                format!("{key}.rate"),
                format!("{rate} flits/cycle exceeds one message per cycle"),
            ));
        }
        Ok(())
    }

    /// Checks `traffic.flow` and `traffic.flow_set` without the fabric (class names, rates,
    /// sizes, processes, start before stop, paths).
    pub(super) fn validate_flows(&self) -> Result<(), ParamError> {
        for (i, f) in self.flows.iter().enumerate() {
            let key = format!("traffic.flow[{i}]");
            self.validate_flow_traffic(&f.traffic(), &key)?;
            if f.path.is_some() && f.route.is_some() {
                return Err(ParamError::new(
                    format!("{key}.route"),
                    "give either `path` or `route`, not both",
                ));
            }
            if f.route.as_ref().is_some_and(Vec::is_empty) {
                return Err(ParamError::new(
                    format!("{key}.route"),
                    "must name at least one output port (the source switch's)",
                ));
            }
            if f.path.is_some_and(|p| p > u8::MAX as u32) {
                return Err(ParamError::new(format!("{key}.path"), "must be below 256"));
            }
        }
        for (i, s) in self.flow_sets.iter().enumerate() {
            let key = format!("traffic.flow_set[{i}]");
            self.validate_flow_traffic(&s.traffic(), &key)?;
            match (s.kind, s.dests) {
                (FlowSetKind::Random, None) => {
                    return Err(ParamError::new(
                        format!("{key}.dests"),
                        "is required with kind = \"random\" (destinations per source)",
                    ))
                }
                (FlowSetKind::Random, Some(0)) => {
                    return Err(ParamError::new(
                        format!("{key}.dests"),
                        "must be at least 1",
                    ))
                }
                (FlowSetKind::AllPairs | FlowSetKind::Permutation, Some(_)) => {
                    return Err(ParamError::new(
                        format!("{key}.dests"),
                        "applies only to kind = \"random\"",
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The checks of the flows that need the endpoint count `n`: endpoints exist, flow sets
    /// fit, and the total number of flows is at most [`MAX_FLOWS`].
    pub(super) fn validate_flow_endpoints(&self, n: usize) -> Result<(), ParamError> {
        for (i, f) in self.flows.iter().enumerate() {
            for (k, e) in [("src", f.src), ("dst", f.dst)] {
                if e as usize >= n {
                    return Err(ParamError::new(
                        format!("traffic.flow[{i}].{k}"),
                        format!(
                            "endpoint {e} does not exist (the fabric has {n} endpoints, 0..={})",
                            n.saturating_sub(1)
                        ),
                    ));
                }
            }
        }
        let mut total = self.flows.len();
        for (i, s) in self.flow_sets.iter().enumerate() {
            let key = format!("traffic.flow_set[{i}]");
            if n < 2 {
                return Err(ParamError::new(
                    format!("{key}.kind"),
                    "needs at least 2 endpoints",
                ));
            }
            if let Some(d) = s.dests.filter(|&d| d as usize > n - 1) {
                return Err(ParamError::new(
                    format!("{key}.dests"),
                    format!("{d} exceeds the {} other endpoints of each source", n - 1),
                ));
            }
            total = total.saturating_add(s.count(n));
        }
        if total > MAX_FLOWS {
            return Err(ParamError::new(
                "traffic.flow_set",
                format!("{total} flows on {n} endpoints: at most {MAX_FLOWS} are supported"),
            ));
        }
        Ok(())
    }

    /// True when the experiment has flows, flow sets or a trace: sources besides the classes,
    /// which then need no rate of their own.
    pub fn has_other_sources(&self) -> bool {
        !self.flows.is_empty() || !self.flow_sets.is_empty() || self.trace.is_some()
    }

    /// Every flow of the run on `n` endpoints, explicit flows first (in file order), then each
    /// flow set's (in file order). Random choices of flow set `i` come from its own stream of
    /// `seed`. Call after [`TrafficConfig::validate`] and the endpoint checks.
    pub fn expand_flows(&self, n: usize, seed: u64) -> Vec<FlowSpec> {
        let mut out = Vec::new();
        let spec = |t: &FlowTraffic<'_>,
                    src: u32,
                    dst: u32,
                    path: u32,
                    route: Option<Vec<u16>>,
                    idt: Option<f64>| {
            let c = self.flow_class(t.class, "").unwrap_or(0);
            let class = &self.classes[c as usize];
            let process = t.process.clone().or_else(|| class.process.clone());
            FlowSpec {
                src,
                dst,
                class: c,
                rate: t.rate.or_else(|| trace_rate(&process)).unwrap_or(0.0),
                size: t.size.clone().unwrap_or_else(|| class.size_config()),
                process,
                start: t.start,
                stop: t.stop.unwrap_or(u64::MAX),
                path,
                route,
                idt,
            }
        };
        for f in &self.flows {
            out.push(spec(
                &f.traffic(),
                f.src,
                f.dst,
                f.path.unwrap_or(0),
                f.route.clone(),
                f.idt,
            ));
        }
        let n32 = n as u32;
        for (i, s) in self.flow_sets.iter().enumerate() {
            let t = s.traffic();
            let mut rng = stream(seed, StreamKind::FlowSet, i as u64);
            match s.kind {
                FlowSetKind::AllPairs => {
                    for a in 0..n32 {
                        for b in (0..n32).filter(|&b| b != a) {
                            out.push(spec(&t, a, b, 0, None, None));
                        }
                    }
                }
                FlowSetKind::Permutation => {
                    let mut p: Vec<u32> = (0..n32).collect();
                    loop {
                        p.shuffle(&mut rng);
                        if p.iter().enumerate().all(|(a, &b)| a as u32 != b) {
                            break;
                        }
                    }
                    for (a, &b) in p.iter().enumerate() {
                        out.push(spec(&t, a as u32, b, 0, None, None));
                    }
                }
                FlowSetKind::Random => {
                    let d = s.dests.unwrap_or(1) as usize;
                    for a in 0..n32 {
                        let mut picks: Vec<u32> = rand::seq::index::sample(&mut rng, n - 1, d)
                            .into_iter()
                            .map(|x| x as u32)
                            .map(|x| if x >= a { x + 1 } else { x })
                            .collect();
                        picks.sort_unstable();
                        for b in picks {
                            out.push(spec(&t, a, b, 0, None, None));
                        }
                    }
                }
            }
        }
        out
    }
}
