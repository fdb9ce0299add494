//! Where a packet goes next: the route source and the switch organisation.
//!
//! A switch forwards a packet by asking its [`RouteSource`] for the fabric output port, then
//! its [`Organisation`] for the port of the simulated node and the VL. Today the route source
//! is the forwarding table indexed by destination (InfiniBand's LFT by DLID); a route carried
//! in the packet (Myrinet source routing) and a per-flow destination LID (LMC multipath) are
//! further variants of [`RouteSource`], which the organisations need not know about.
use super::opa::OpaLayout;
use super::packet::Packet;
use crate::ids::Vl;
use flitsim_manager::FabricConfig;
use flitsim_topology::{PortNum, SwitchId};

/// How a fabric switch finds a packet's output port.
pub(crate) enum RouteSource {
    /// Linear forwarding tables: per switch, the output port of each destination endpoint.
    ForwardingTable(Vec<Vec<PortNum>>),
}

impl RouteSource {
    /// The output port of fabric switch `s` for `pkt`.
    #[inline(always)]
    pub fn out_port(&self, s: SwitchId, pkt: &Packet) -> PortNum {
        match self {
            RouteSource::ForwardingTable(lft) => lft[s.0 as usize][pkt.dst as usize],
        }
    }
}

/// How every switch is built inside; chosen once, when the network is built.
pub(crate) enum Organisation {
    /// Input-queued crossbar: the crossbar connects input buffers directly to the links.
    InputQueued,
    /// Combined input/output-queued crossbar: the crossbar moves packets into per-port output
    /// buffers, and each output port's scheduler feeds its link from them.
    InputOutputQueued,
    /// The hierarchical Omni-Path switch (see [`super::opa`]): each fabric switch is simulated
    /// as MPort nodes and a central node.
    OmniPath(Box<OpaLayout>),
}

impl Organisation {
    /// The hierarchical switch's layout, if that is the organisation.
    pub fn opa(&self) -> Option<&OpaLayout> {
        match self {
            Organisation::OmniPath(l) => Some(l),
            _ => None,
        }
    }

    /// Where `pkt`, arriving on VL `in_vl` at port `in_port` of simulated switch `s`, leaves:
    /// (output port of `s`, VL).
    #[inline(always)]
    pub fn route(
        &self,
        routes: &RouteSource,
        fabric: &FabricConfig,
        s: u32,
        in_port: PortNum,
        pkt: &Packet,
        in_vl: Vl,
    ) -> (PortNum, Vl) {
        match self {
            Organisation::InputQueued | Organisation::InputOutputQueued => {
                let out = routes.out_port(SwitchId(s), pkt);
                let vl = fabric.vl(SwitchId(s), in_port, out, pkt.wire_sl);
                (out, vl)
            }
            Organisation::OmniPath(l) => l.route(routes, fabric, s, in_port, pkt, in_vl),
        }
    }
}
