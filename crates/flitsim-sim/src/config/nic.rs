//! `[nic]`: endpoint (network interface) parameters.
use super::{SchedulerConfig, SharedBufferConfig};
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
    /// One NIC buffer shared among the VLs instead of `buffer_flits` per VL: `total_flits`
    /// for the NIC, `min_per_vl` reserved for each VL, at most `max_per_vl` in one VL (the
    /// paper's 32 × GMTU at the network interface, §4.1). Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_buffer: Option<SharedBufferConfig>,
    /// Injection scheduler (chooses the VL to inject next).
    #[serde(default)]
    pub scheduler: SchedulerConfig,
    /// Rate control (default false): each flow is dispatched at most one packet every `idt`
    /// cycles (its inter-packet dispatch time; the class's own traffic and flows without `idt`
    /// use `dispatch_time`), the NIC picking the due flow with the smallest next dispatch time
    /// (see docs/model.md, "NIC rate control").
    #[serde(default, skip_serializing_if = "is_false")]
    pub rate_control: bool,
    /// With rate control: T, the least time between two dispatches of the NIC, cycles (a time
    /// with `[units]`; default 1). The most a flow gets is then one MTU per T.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub dispatch_time: u64,
    /// With rate control: cycles of the NIC's processor each received packet takes (a time
    /// with `[units]`; default 0, a full-duplex NIC whose receiving costs nothing). The
    /// processor that spends T per dispatch then also spends this per packet received,
    /// receives first, and holds a packet's head at the NIC's input while busy, so what a
    /// node receives lowers what it can send (see docs/model.md, "NIC rate control").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub receive_time: u64,
    /// The application's send queues (default `class`: one FIFO per traffic class, so a
    /// message whose VL is full holds back the class's later messages; `vl`: one FIFO per
    /// class and VL, as an InfiniBand HCA's send queues, so a blocked VL holds back only its
    /// own messages).
    #[serde(default, skip_serializing_if = "SendQueues::is_class")]
    pub send_queues: SendQueues,
}

/// `nic.send_queues`: how the application's messages wait for the NIC buffer.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SendQueues {
    /// One FIFO per traffic class.
    #[default]
    Class,
    /// One FIFO per traffic class and VL of the NIC's link.
    Vl,
}

impl SendQueues {
    fn is_class(&self) -> bool {
        *self == SendQueues::Class
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}
fn one() -> u64 {
    1
}
fn is_one(x: &u64) -> bool {
    *x == 1
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

fn default_nic_buffer() -> u32 {
    256
}

impl Default for NicConfig {
    fn default() -> Self {
        NicConfig {
            buffer_flits: default_nic_buffer(),
            shared_buffer: None,
            scheduler: SchedulerConfig::RoundRobin,
            rate_control: false,
            dispatch_time: 1,
            receive_time: 0,
            send_queues: SendQueues::Class,
        }
    }
}
