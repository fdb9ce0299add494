//! `[nic]`: endpoint (network interface) parameters.
use super::SchedulerConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
