//! `[switch]`: the switch micro-architecture — buffers, switching, speedup, organisation
//! (crossbar or the hierarchical Omni-Path switch, `[switch.opa]`).
use super::SchedulerConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a packet moves through a switch.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Switching {
    /// Virtual cut-through: a packet starts only when the next buffer can hold all of it.
    #[default]
    Vct,
    /// Wormhole: a packet starts with one credit and holds the output VL until its tail.
    Wormhole,
}

/// Dynamically shared input buffer: each VL owns `min_per_vl` flits and may grow into a shared
/// pool up to `max_per_vl`; the port holds `total_flits`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SharedBufferConfig {
    /// Flits per input port.
    pub total_flits: u32,
    /// Flits reserved for each VL.
    pub min_per_vl: u32,
    /// Largest share one VL may hold.
    pub max_per_vl: u32,
}

/// Switch micro-architecture (input-queued crossbar).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchConfig {
    /// Static input buffer per VL, flits (default 64). Ignored when `shared_buffer` is given.
    #[serde(default = "default_vl_buffer")]
    pub vl_buffer_flits: u32,
    /// Dynamically shared input buffers instead of static per-VL ones.
    #[serde(default)]
    pub shared_buffer: Option<SharedBufferConfig>,
    /// Cycles from a head flit's arrival to its first allocation attempt (default 1).
    #[serde(default = "one")]
    pub routing_delay: u32,
    /// Crossbar speedup (default 1). Without output buffers: the crossbar connections an input
    /// port may hold at once (each limited by its output link). With output buffers: flits per
    /// cycle a crossbar connection moves into the output buffer.
    #[serde(default = "one")]
    pub speedup: u32,
    /// Output buffer per VL, flits (default 0 = no output buffers: the crossbar feeds the link).
    /// With output buffers the switch is combined input/output queued: the crossbar moves
    /// packets into the output buffers and each output port's scheduler feeds its link from them.
    #[serde(default)]
    pub output_buffer_flits: u32,
    /// Dynamically shared output buffers (per port, VL space shared with a minimum and maximum
    /// per VL) instead of the static `output_buffer_flits` per VL.
    #[serde(default)]
    pub shared_output_buffer: Option<SharedBufferConfig>,
    /// Virtual cut-through (default) or wormhole.
    #[serde(default)]
    pub switching: Switching,
    /// Output port scheduler.
    #[serde(default)]
    pub scheduler: SchedulerConfig,
    /// Switch organisation: one `crossbar` (default) or the hierarchical Omni-Path switch
    /// (`opa`, parameters in `[switch.opa]`).
    #[serde(default)]
    pub organisation: SwitchOrganisation,
    /// Parameters of the hierarchical Omni-Path switch (with `organisation = "opa"`).
    #[serde(default)]
    pub opa: OpaConfig,
    /// Source routing, as Myrinet switches do (default false: InfiniBand's forwarding tables).
    /// Each packet carries its route, the output port at every switch it crosses, chosen at
    /// the source NIC: a flow's explicit `route`, else the route its path (`path`, default 0)
    /// takes through the routing engine's tables, computed once per (source, destination,
    /// path). Switches then read the route and consult no table.
    #[serde(default, skip_serializing_if = "is_false")]
    pub source_routing: bool,
    /// Queue discipline of every VL buffer (default `fifo`; `ordered_takeover` and `heap`
    /// order packets by deadline, for deadline-based QoS — see `qos.architecture`).
    #[serde(default, skip_serializing_if = "super::VlDiscipline::is_fifo")]
    pub vl_discipline: super::VlDiscipline,
    /// How an output port picks among the requests for it (default `round_robin`; `fifo`:
    /// the oldest request first, as the IBA switch model of Gómez et al. 2007 does).
    #[serde(default, skip_serializing_if = "Arbiter::is_round_robin")]
    pub arbiter: Arbiter,
    /// The crossbar's ports (default `multiplexed`: one per switch port; `per_vl`: one per
    /// port and VL, a non-multiplexed crossbar; needs output buffers).
    #[serde(default, skip_serializing_if = "Crossbar::is_multiplexed")]
    pub crossbar: Crossbar,
}

/// `switch.arbiter`: the crossbar arbiter's rule among the requests for one output.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Arbiter {
    /// Each input port's round-robin arbiter offers one VL; each output's scheduler picks a
    /// (VL, SL) and its round-robin arbiter an input among those requesting it.
    #[default]
    RoundRobin,
    /// FIFO request queues: a head packet's request joins the queue of its output when the
    /// packet is routed, and the output serves the oldest request whose packet has room in
    /// the next buffer (ties: round robin over inputs). An input port offers its oldest
    /// routed head.
    Fifo,
}

impl Arbiter {
    fn is_round_robin(&self) -> bool {
        *self == Arbiter::RoundRobin
    }
}

/// `switch.crossbar`: whether the crossbar multiplexes a port's VLs.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Crossbar {
    /// One crossbar input and one crossbar output per switch port: an input port moves one
    /// packet at a time, an output port accepts one at a time.
    #[default]
    Multiplexed,
    /// A non-multiplexed crossbar: one crossbar input per (input port, VL) and one output per
    /// (output port, VL), each moving `speedup` flits per cycle into the output buffer of its
    /// VL; packets of different VLs cross at once. Needs output buffers.
    PerVl,
}

impl Crossbar {
    fn is_multiplexed(&self) -> bool {
        *self == Crossbar::Multiplexed
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// How a switch is built inside.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SwitchOrganisation {
    /// One crossbar between the input buffers (and output buffers, if any) of all ports.
    #[default]
    Crossbar,
    /// The hierarchical Omni-Path switch of Cano-Cano et al. 2022 (§2.2, Fig. 2): ports grouped
    /// into MPorts, each with a small crossbar, joined by a central crossbar with its own
    /// buffers per MPort. Needs output buffers (`shared_output_buffer` or
    /// `output_buffer_flits`).
    Opa,
}

/// The hierarchical Omni-Path switch's internal structure. Defaults are the paper's (§2.2,
/// §4.1, with 64-byte flits): MPorts of 4 ports, 2 links of 3 flits/cycle from each MPort to
/// the central crossbar, central crossbar links of 4 flits/cycle, 128 × 1 KB central buffer
/// per MPort.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpaConfig {
    /// External ports per MPort (default 4).
    #[serde(default = "four")]
    pub ports_per_mport: u32,
    /// Links from each MPort crossbar to the central crossbar (default 2).
    #[serde(default = "two")]
    pub mport_links: u32,
    /// Flits per cycle of an MPort-to-central link (default 3).
    #[serde(default = "three")]
    pub mport_link_width: u32,
    /// Flits per cycle of a central-crossbar output link (default 4).
    #[serde(default = "four")]
    pub central_width: u32,
    /// Central buffer per MPort, flits, split evenly over its links (default 2048 = 128 × GMTU
    /// of 16 flits).
    #[serde(default = "default_central")]
    pub central_buffer_flits: u32,
    /// Minimum (reserved) flits per VL in a central buffer (default 16, one GMTU).
    #[serde(default = "sixteen")]
    pub central_min_per_vl: u32,
    /// Buffer per VL, flits, where a central-crossbar output link enters its output port's
    /// MPort crossbar (default 32: two GMTUs; the model's one extra stage, see `docs/model.md`).
    #[serde(default = "thirty_two")]
    pub central_output_flits: u32,
    /// Routing delay of the switch's internal buffers (central and staging), cycles. Default:
    /// `switch.routing_delay` at every crossbar of the switch, three times per MPort crossing.
    /// 0 charges the delay once per switch, at the input port, as the paper's RT stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal_routing_delay: Option<u32>,
    /// Largest share one VL may take of a central buffer, flits (default: all of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub central_max_per_vl: Option<u32>,
    /// How a packet leaving its MPort picks its link (and central buffer): `"input"`
    /// (default: input `j` always takes link `j · mport_links / ports_per_mport`), `"flow"`
    /// (by its source and destination, so every central buffer serves all inputs) or `"free"`
    /// (at allocation: the input's own link, else any other that can start the packet).
    #[serde(default, skip_serializing_if = "is_input")]
    pub link_choice: LinkChoice,
}

/// How an Omni-Path MPort spreads packets over its links to the central crossbar.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinkChoice {
    /// Each external input is bound to one link.
    #[default]
    Input,
    /// Each (source, destination) pair is bound to one link, whatever its input.
    Flow,
    /// Chosen at allocation: the input's own link if it can start the packet, else the first
    /// other link of the MPort that can (every central buffer serves every input, §2.2).
    Free,
}

fn is_input(c: &LinkChoice) -> bool {
    *c == LinkChoice::Input
}

fn two() -> u32 {
    2
}
fn three() -> u32 {
    3
}
fn four() -> u32 {
    4
}
fn thirty_two() -> u32 {
    32
}
fn default_central() -> u32 {
    2048
}

impl Default for OpaConfig {
    fn default() -> Self {
        OpaConfig {
            ports_per_mport: 4,
            mport_links: 2,
            mport_link_width: 3,
            central_width: 4,
            central_buffer_flits: default_central(),
            central_min_per_vl: 16,
            central_output_flits: 32,
            internal_routing_delay: None,
            central_max_per_vl: None,
            link_choice: LinkChoice::Input,
        }
    }
}

fn default_vl_buffer() -> u32 {
    64
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            vl_buffer_flits: default_vl_buffer(),
            shared_buffer: None,
            routing_delay: 1,
            speedup: 1,
            output_buffer_flits: 0,
            shared_output_buffer: None,
            switching: Switching::Vct,
            scheduler: SchedulerConfig::RoundRobin,
            organisation: SwitchOrganisation::Crossbar,
            opa: OpaConfig::default(),
            source_routing: false,
            vl_discipline: super::VlDiscipline::Fifo,
            arbiter: Arbiter::RoundRobin,
            crossbar: Crossbar::Multiplexed,
        }
    }
}

impl SwitchConfig {
    /// Range checks that serde cannot express, for links of `vls` data VLs. Errors name the
    /// key.
    pub fn validate(&self, vls: u8) -> Result<(), super::ParamError> {
        use super::ParamError;
        if self.speedup == 0 {
            return Err(ParamError::new("switch.speedup", "must be at least 1"));
        }
        for (key, sb) in [
            ("switch.shared_buffer", &self.shared_buffer),
            ("switch.shared_output_buffer", &self.shared_output_buffer),
        ] {
            let Some(sb) = sb else { continue };
            if sb.max_per_vl < sb.min_per_vl
                || (sb.total_flits as u64) < sb.min_per_vl as u64 * vls as u64
                || sb.max_per_vl > sb.total_flits
            {
                return Err(ParamError::new(
                    key,
                    "need min_per_vl ≤ max_per_vl ≤ total_flits and vls·min_per_vl ≤ total_flits",
                ));
            }
        }
        if self.crossbar == Crossbar::PerVl {
            if self.organisation != SwitchOrganisation::Crossbar {
                return Err(ParamError::new(
                    "switch.crossbar",
                    "\"per_vl\" is a crossbar switch's option (switch.organisation = \"crossbar\")",
                ));
            }
            if self.output_buffer_flits == 0 && self.shared_output_buffer.is_none() {
                return Err(ParamError::new(
                    "switch.crossbar",
                    "\"per_vl\" needs output buffers (switch.output_buffer_flits or switch.shared_output_buffer)",
                ));
            }
        }
        if self.organisation == SwitchOrganisation::Opa {
            let o = &self.opa;
            for (key, v) in [
                ("switch.opa.ports_per_mport", o.ports_per_mport),
                ("switch.opa.mport_links", o.mport_links),
                ("switch.opa.mport_link_width", o.mport_link_width),
                ("switch.opa.central_width", o.central_width),
            ] {
                if v == 0 {
                    return Err(ParamError::new(key, "must be at least 1"));
                }
            }
        }
        Ok(())
    }
}

fn one() -> u32 {
    1
}
fn sixteen() -> u32 {
    16
}
