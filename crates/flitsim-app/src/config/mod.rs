//! The experiment file: [`ExperimentConfig`] and the sections only the application layer reads.
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | [`ExperimentConfig`]: the whole file, its checks, hash, JSON Schema, and the engine's [`SimParams`] |
//! | `parse.rs` | TOML text and `--set key=value` overrides → [`ExperimentConfig`], with positioned errors |
//! | `topology.rs` | `[topology]` ([`TopologyConfig`]) |
//! | `routing.rs` | `[routing]` ([`RoutingConfig`]) |
//! | `trace.rs` | per-frame video size traces (`process.trace`), read into flits |
//! | `units.rs` | `[units]` ([`UnitsConfig`]) and quantities with units (`"2KiB"`, `"100ns"`, `"8Gb/s"`), converted before typing |
//!
//! The engine's sections (`[switch]`, `[nic]`, `[traffic]`, `[qos]`, `[run]`) are the types of
//! [`flitsim_sim::config`], embedded as they are. Every field has a default and a unit in its
//! doc comment; unknown keys are rejected.
mod parse;
mod routing;
mod source;
mod topology;
pub mod trace;
pub mod units;

pub use routing::{Forwarding, FullWord, RoutingConfig, VlAssignment, VnBy, VoqswSlsKey};
pub use source::ConfigSource;
pub use topology::TopologyConfig;
pub use units::UnitsConfig;

use crate::ExperimentError;
use flitsim_sim::config::{
    NicConfig, ParamError, QosConfig, RunConfig, SimParams, SwitchConfig, TrafficConfig,
};
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
    /// Where the configuration was read from (file text and overrides), to name the line of
    /// a value in errors found after parsing. Not part of the configuration or its hash.
    #[serde(skip)]
    #[schemars(skip)]
    pub source: Option<std::sync::Arc<ConfigSource>>,
    /// Physical units: bytes per flit and the cycle (or link rate). With it, quantities may be
    /// written with units (`"2KiB"`, `"100ns"`, `"8Gb/s"`) and results gain physical twins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<UnitsConfig>,
    /// The bandwidth manager of flows with `reserve` or `best_effort` (with
    /// `nic.rate_control`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_manager: Option<BandwidthManagerConfig>,
}

/// `[bandwidth_manager]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BandwidthManagerConfig {
    /// Cycles between an allocation change (a managed flow starting or stopping) and the
    /// moment the other flows' NICs apply their new IDTs (a time with `[units]`; default 0).
    #[serde(default)]
    pub update_delay: u64,
}

fn default_seed() -> u64 {
    1
}

impl ExperimentConfig {
    /// The JSON Schema of experiment files (for editors and documentation).
    pub fn json_schema() -> String {
        let schema = schemars::schema_for!(ExperimentConfig);
        let mut schema = serde_json::to_value(&schema).expect("schema serialises");
        units::widen_schema(&mut schema);
        serde_json::to_string_pretty(&schema).expect("schema serialises")
    }

    /// Range checks that serde cannot express and that need no topology, section by section
    /// (topology, routing, then the engine's: traffic, switch, buffers, NIC, run). Errors
    /// name the key path.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.topology.validate()?;
        self.routing.validate()?;
        self.params().validate(self.routing.vls)
    }

    /// The error of the value at `key`, placed in the file or `--set` it came from (when the
    /// configuration was parsed from text) — see [`ConfigSource::error`].
    pub fn error(&self, key: &str, message: &str) -> ExperimentError {
        match &self.source {
            Some(s) => s.error(key, message),
            None => ExperimentError::Config {
                origin: "<config>".into(),
                message: format!("key `{key}`: {message}"),
            },
        }
    }

    /// Stable 64-bit FNV-1a hash of the resolved configuration (canonical JSON), as hex.
    /// The frames read from video traces (`process.trace`) and the text of an MPI trace
    /// (`traffic.trace`) are hashed after it, so that a changed trace file changes the hash; a
    /// configuration without traces hashes its JSON alone.
    pub fn hash(&self) -> String {
        let json = serde_json::to_string(self).expect("config serialises");
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut feed = |bytes: &[u8]| {
            for &b in bytes {
                h ^= b as u64;
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        };
        feed(json.as_bytes());
        if let Some(p) = self.traffic.trace.as_ref().and_then(|t| t.program.as_ref()) {
            feed(b"\0trace");
            feed(&p.digest.to_le_bytes());
        }
        for frames in self.trace_frames() {
            feed(b"\0frames");
            for f in frames.iter() {
                feed(&f.to_le_bytes());
            }
        }
        format!("{h:016x}")
    }

    /// The frames of every video trace, in the order of classes, flows and flow sets.
    fn trace_frames(&self) -> impl Iterator<Item = &[u32]> {
        use flitsim_sim::workload::{ProcessConfig, ProcessTable};
        let t = &self.traffic;
        t.classes
            .iter()
            .map(|c| &c.process)
            .chain(t.flows.iter().map(|f| &f.process))
            .chain(t.flow_sets.iter().map(|f| &f.process))
            .filter_map(|p| match p {
                Some(ProcessConfig::Table(ProcessTable::Video {
                    frames: Some(f), ..
                })) => Some(&f[..]),
                _ => None,
            })
    }

    /// The engine's parameters: the seed, the engine's sections and this configuration's
    /// [`hash`](Self::hash), which every result carries.
    pub fn params(&self) -> SimParams {
        SimParams {
            seed: self.seed,
            switch: self.switch.clone(),
            nic: self.nic.clone(),
            traffic: self.traffic.clone(),
            qos: self.qos.clone(),
            run: self.run.clone(),
            config_hash: self.hash(),
        }
    }
}
