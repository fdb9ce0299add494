//! The engine's parameters: typed sections, one file per section of an experiment file.
//!
//! | file | section |
//! |---|---|
//! | `switch.rs` | `[switch]`, `[switch.opa]`: buffers, switching, speedup, organisation |
//! | `scheduler.rs` | an output-port scheduler (`switch.scheduler`, `nic.scheduler`) |
//! | `nic.rs` | `[nic]` |
//! | `traffic.rs` | `[traffic]`, `[[traffic.class]]` |
//! | `flow.rs` | `[[traffic.flow]]`, `[[traffic.flow_set]]` |
//! | `trace.rs` | `[traffic.trace]` |
//! | `qos.rs` | `[qos]` and its tables |
//! | `deadline.rs` | `qos.architecture`, `[[qos.class]]`, `switch.vl_discipline` |
//! | `run.rs` | `[run]` |
//!
//! Every field has a default and a unit in its doc comment. The sections are serde types
//! (`deny_unknown_fields`) so that the application layer (`flitsim-app`), which owns the
//! experiment file, its topology and routing sections, its overrides and its JSON Schema, can
//! embed them as they are; the engine itself reads no file and takes a [`SimParams`].
mod deadline;
mod flow;
mod nic;
mod qos;
mod run;
mod scheduler;
mod switch;
mod trace;
mod traffic;

pub use crate::workload::{ProcessConfig, ProcessTable, SimpleProcess, SizeConfig, SizeDist};
pub use deadline::{DeadlineStamp, QosArchitecture, QosClassConfig, VlDiscipline};
pub use flow::{FlowConfig, FlowSetConfig, FlowSetKind, FlowSpec, MAX_FLOWS};
pub use nic::{NicConfig, SendQueues};
pub use qos::{
    DTableQosConfig, QosConfig, QosScheduler, SbtQosConfig, ScQosConfig, VlArbQosConfig,
};
pub use run::{MemorySize, RunConfig, MAX_RUN_CYCLES};
pub use scheduler::{DTableAtomic, DTableEntryConfig, SchedulerConfig};
pub use switch::{
    Arbiter, Crossbar, LinkChoice, OpaConfig, SharedBufferConfig, SwitchConfig, SwitchOrganisation,
    Switching,
};
pub use trace::{TraceConfig, TraceFormat};
pub use traffic::{ClassConfig, HotspotConfig, InjectionKind, PatternKind, TrafficConfig};

/// Everything [`Network::build`](crate::Network::build) needs besides the topology and the
/// manager's tables: the root seed and the engine's sections of an experiment.
#[derive(Clone, Debug)]
pub struct SimParams {
    /// Root seed; every random stream of the engine (traffic sources, patterns) is derived
    /// from it and a stable component id.
    pub seed: u64,
    /// Switch micro-architecture.
    pub switch: SwitchConfig,
    /// Network interface (endpoint) parameters.
    pub nic: NicConfig,
    /// Offered traffic.
    pub traffic: TrafficConfig,
    /// Quality of service: the output scheduler of every port and its tables.
    pub qos: QosConfig,
    /// Warm-up, measurement, drain and stall detection.
    pub run: RunConfig,
    /// The hash of the configuration these parameters come from, copied as it is into every
    /// result (`RunResult::config_hash`). The application layer puts the experiment's hash
    /// here; the engine never computes or checks it.
    pub config_hash: String,
}

/// A value of the parameters that is out of range: the key path of the offending value as it
/// is written in an experiment file (`switch.vl_buffer_flits`, `traffic.class[0].rate`) and
/// what is wrong with it. The application layer maps the key to the line of the file (or the
/// `--set` override) that gave the value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct ParamError {
    /// Key path, sections joined by `.`, array elements as `[i]`.
    pub key: String,
    /// What is wrong, without the key.
    pub message: String,
}

impl ParamError {
    /// An error of the value at `key`.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        ParamError {
            key: key.into(),
            message: message.into(),
        }
    }
}

/// The largest MTU of the traffic classes, flits.
fn max_mtu(p: &SimParams) -> u32 {
    crate::engine::build::class_mtus(p)
        .into_iter()
        .max()
        .unwrap_or(0) as u32
}

impl SimParams {
    /// Range checks that serde cannot express, for links of `vls` data VLs: traffic, switch
    /// (with the buffers' room for the largest MTU), NIC, then run. Errors name the key. The
    /// application layer runs them (between its own checks of the routing section) when it
    /// reads an experiment; callers that build parameters by hand should run them before
    /// [`Network::build`](crate::Network::build), which repeats the checks that need the
    /// topology.
    pub fn validate(&self, vls: u8) -> Result<(), ParamError> {
        self.traffic.validate()?;
        if let Some(m) = self.traffic.management_class() {
            if self.qos.architecture.is_some() || self.qos.deadlines() {
                return Err(ParamError::new(
                    format!("traffic.class[{m}].management"),
                    "cannot be combined with deadline-based QoS (qos.architecture, \
                     [[qos.class]]), which orders the VLs by deadline itself",
                ));
            }
        }
        if self.nic.rate_control && self.qos.deadlines() {
            return Err(ParamError::new(
                "nic.rate_control",
                "cannot be combined with deadline stamping (qos.architecture or [[qos.class]]): \
                 both decide when a NIC sends",
            ));
        }
        if let Some(l) = self
            .qos
            .admission_limit
            .filter(|l| !(*l > 0.0 && *l <= 1.0))
        {
            return Err(ParamError::new(
                "qos.admission_limit",
                format!("{l}: must be a fraction of link capacity in (0, 1]"),
            ));
        }
        if self.nic.receive_time > 0 && !self.nic.rate_control {
            return Err(ParamError::new(
                "nic.receive_time",
                "needs nic.rate_control = true (the receive cost is taken from the processor \
                 time that paces dispatches, T = nic.dispatch_time)",
            ));
        }
        if self.nic.rate_control && self.nic.dispatch_time == 0 {
            return Err(ParamError::new(
                "nic.dispatch_time",
                "must be at least 1 cycle",
            ));
        }
        for (i, f) in self.traffic.flows.iter().enumerate() {
            let key = format!("traffic.flow[{i}]");
            let managed = if f.best_effort {
                "best_effort"
            } else {
                "reserve"
            };
            if (f.reserve.is_some() || f.best_effort) && !self.nic.rate_control {
                return Err(ParamError::new(
                    format!("{key}.{managed}"),
                    "needs nic.rate_control = true (the bandwidth manager sets IDTs)",
                ));
            }
            if f.reserve.is_some() && f.best_effort {
                return Err(ParamError::new(
                    format!("{key}.reserve"),
                    "give either `reserve` or `best_effort = true`, not both",
                ));
            }
            if (f.reserve.is_some() || f.best_effort) && f.idt.is_some() {
                return Err(ParamError::new(
                    format!("{key}.idt"),
                    format!("must not be given with `{managed}`: the bandwidth manager sets it"),
                ));
            }
            if let Some(r) = f.reserve.filter(|r| !(r.is_finite() && *r > 0.0)) {
                return Err(ParamError::new(
                    format!("{key}.reserve"),
                    format!("{r}: must be a positive rate (flits/cycle)"),
                ));
            }
            let Some(idt) = f.idt else { continue };
            if !self.nic.rate_control {
                return Err(ParamError::new(
                    format!("traffic.flow[{i}].idt"),
                    "needs nic.rate_control = true",
                ));
            }
            if !(idt.is_finite() && idt >= self.nic.dispatch_time as f64) {
                return Err(ParamError::new(
                    format!("traffic.flow[{i}].idt"),
                    format!(
                        "{idt}: must be at least nic.dispatch_time = {} cycles",
                        self.nic.dispatch_time
                    ),
                ));
            }
        }
        if !self.switch.source_routing {
            if let Some(i) = self.traffic.flows.iter().position(|f| f.route.is_some()) {
                return Err(ParamError::new(
                    format!("traffic.flow[{i}].route"),
                    "an explicit route needs switch.source_routing = true",
                ));
            }
        }
        self.switch.validate(vls)?;
        crate::engine::build::check_buffers(self, vls as usize)?;
        if self.nic.buffer_flits < max_mtu(self) {
            return Err(ParamError::new(
                "nic.buffer_flits",
                format!(
                    "{} flits is smaller than the largest MTU ({} flits)",
                    self.nic.buffer_flits,
                    max_mtu(self)
                ),
            ));
        }
        self.run.validate()
    }
}
