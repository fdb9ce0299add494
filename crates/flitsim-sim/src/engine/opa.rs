//! The hierarchical Omni-Path switch (Cano-Cano et al. 2022, `shared/papers/000_942770a54f7010fd.txt`,
//! §2.2 and Fig. 2), built from the engine's parts.
//!
//! Each switch of the fabric becomes a small network inside the engine:
//!
//! * one **MPort node** per group of `ports_per_mport` external ports. Its crossbar takes the
//!   external input buffers and the central crossbar's links, and feeds the external output
//!   buffers (at `mport_link_width` flits/cycle) or one of its `mport_links` links to the central
//!   crossbar (each `mport_link_width` flits/cycle). External input `j` of an MPort always uses
//!   link `j · mport_links / ports_per_mport`, so each link carries a fixed group of inputs.
//! * one **central node**. Its input buffers are the central buffers: `central_buffer_flits` per
//!   MPort, split over the MPort's links, VL space shared with a reserved minimum per VL. It
//!   has one output link of `central_width` flits/cycle per external port of the switch
//!   (24 inputs and 48 outputs for the paper's 48-port switch: "24:48").
//!
//! A central-crossbar output link ends in a small per-VL buffer (`central_output_flits`) in
//! front of its output port's MPort crossbar, which moves the packet into the output buffer.
//! The paper's model writes into the output buffer directly; this extra stage adds one cycle
//! of routing delay and a little buffering, and keeps every buffer in the engine an input
//! buffer of some crossbar.
//!
//! With `link_choice = "flow"` the link is chosen per (source, destination) pair instead, by
//! a fixed hash: every input of the MPort then reaches both central buffers, as in the paper,
//! where each central buffer arbitrates among all 4 inputs of its MPort, and the packets of a
//! flow still keep their order. With `link_choice = "free"` the choice is made when the packet
//! is allocated, as the paper's MPort crossbar does: a head whose input's own link is busy or
//! has no room takes the first other link of the MPort that can start it, so every central
//! buffer serves every input and a link held by a packet still arriving does not hold back
//! the other inputs (a flow's packets may then pass each other between two links).
//!
//! Routing uses the fabric's tables of the whole switch: at an external input the packet's
//! output port and the VL it leaves the switch on (its exit VL, kept in the packet) come from
//! the LFT and SL→VL table. The link to the central crossbar and the central buffer hold the
//! packet under the VL it arrived on; the central crossbar hands it to the staging buffer under
//! its exit VL (see [`OpaLayout::route`] for why). Output scheduling (RR,
//! SBT, DTable, VLArb) runs at the external output ports; the MPort and central crossbars
//! arbitrate round robin, as in the paper.
use super::packet::Packet;
use super::route::{RouteSource, Sl2VlTables};
use crate::config::{LinkChoice, OpaConfig};
use crate::ids::Vl;
use flitsim_topology::{
    Endpoint, Link, NodeId, PortNum, PortRef, Shape, Switch, SwitchId, Topology,
};

/// What a node of the expanded network is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeKind {
    /// MPort `m` of its switch.
    MPort(u16),
    /// The central crossbar.
    Central,
}

/// The expanded network and the map back to the fabric's switches and ports.
pub(crate) struct OpaLayout {
    /// The expanded topology the engine simulates.
    pub topo: Topology,
    /// Per expanded switch: the fabric switch it belongs to and its role.
    pub node: Vec<(u32, NodeKind)>,
    /// Per fabric switch: its first MPort node (the central node follows its MPorts).
    pub first: Vec<u32>,
    /// Per expanded link: whether it is inside a switch.
    pub internal: Vec<bool>,
    /// External ports per MPort.
    pub ppm: u16,
    /// Links from each MPort to the central crossbar.
    pub links: u16,
    /// How a packet leaving its MPort picks its link to the central crossbar.
    pub link_choice: LinkChoice,
}

/// The role of a port of an expanded switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PortRole {
    /// A port of the fabric (to another switch or an endpoint).
    External,
    /// MPort → central link (sending side at the MPort, central buffer at the central node).
    Up,
    /// Central → MPort link (sending side at the central node, staging buffer at the MPort).
    Down,
}

impl OpaLayout {
    /// Expands every switch of `topo`. Errors name the `switch.opa` key.
    pub fn build(topo: &Topology, p: &OpaConfig) -> Result<OpaLayout, String> {
        if p.ports_per_mport == 0 || p.ports_per_mport > 1024 {
            return Err("switch.opa.ports_per_mport must be in 1..=1024".into());
        }
        if p.mport_links == 0 || p.mport_links > p.ports_per_mport {
            return Err(format!(
                "switch.opa.mport_links = {}: must be in 1..=ports_per_mport ({})",
                p.mport_links, p.ports_per_mport
            ));
        }
        if p.mport_link_width == 0 || p.central_width == 0 {
            return Err("switch.opa: link widths must be at least 1 flit/cycle".into());
        }
        let ppm = p.ports_per_mport as usize;
        let nl = p.mport_links as usize;
        let mut switches = Vec::new();
        let mut node = Vec::new();
        let mut first = Vec::with_capacity(topo.num_switches());
        let mut links = Vec::new();
        let mut internal = Vec::new();
        // Expanded position of each fabric port: (expanded switch, port).
        let ext = |first: &[u32], s: u32, port: PortNum| -> PortRef {
            PortRef {
                node: NodeId::Switch(first[s as usize] + port as u32 / ppm as u32),
                port: (port as usize % ppm) as PortNum,
            }
        };
        for (si, sw) in topo.switches().iter().enumerate() {
            let np = sw.ports as usize;
            let mports = np.div_ceil(ppm);
            let base = switches.len() as u32;
            first.push(base);
            let central = base + mports as u32;
            let central_ports = mports * nl + mports * ppm;
            if ppm + nl + ppm > PortNum::MAX as usize || central_ports > PortNum::MAX as usize {
                return Err(format!("switch {}: too many internal ports", sw.name));
            }
            for m in 0..mports {
                switches.push(Switch {
                    name: format!("{}/m{m}", sw.name),
                    ports: (ppm + nl + ppm) as PortNum,
                    guid: None,
                    lid: None,
                });
                node.push((si as u32, NodeKind::MPort(m as u16)));
            }
            switches.push(Switch {
                name: format!("{}/central", sw.name),
                ports: central_ports as PortNum,
                guid: None,
                lid: None,
            });
            node.push((si as u32, NodeKind::Central));
            for m in 0..mports {
                let mnode = NodeId::Switch(base + m as u32);
                for l in 0..nl {
                    links.push(Link {
                        a: PortRef {
                            node: mnode,
                            port: (ppm + l) as PortNum,
                        },
                        b: PortRef {
                            node: NodeId::Switch(central),
                            port: (m * nl + l) as PortNum,
                        },
                        latency: 1,
                        width: p.mport_link_width,
                    });
                    internal.push(true);
                }
                for j in 0..ppm {
                    let port = m * ppm + j;
                    if port >= np
                        || topo
                            .switch_peer(SwitchId(si as u32), port as PortNum)
                            .is_none()
                    {
                        continue;
                    }
                    links.push(Link {
                        a: PortRef {
                            node: NodeId::Switch(central),
                            port: (mports * nl + port) as PortNum,
                        },
                        b: PortRef {
                            node: mnode,
                            port: (ppm + nl + j) as PortNum,
                        },
                        latency: 1,
                        width: p.central_width,
                    });
                    internal.push(true);
                }
            }
        }
        for l in topo.links() {
            let map = |r: PortRef| match r.node {
                NodeId::Switch(s) => ext(&first, s, r.port),
                NodeId::Endpoint(_) => r,
            };
            links.push(Link {
                a: map(l.a),
                b: map(l.b),
                ..*l
            });
            internal.push(false);
        }
        let endpoints: Vec<Endpoint> = topo.endpoints().to_vec();
        let expanded = Topology::new(
            format!("{} (Omni-Path switches)", topo.name()),
            Shape::Irregular,
            switches,
            endpoints,
            links,
        )
        .map_err(|e| format!("switch.opa: {e}"))?;
        Ok(OpaLayout {
            topo: expanded,
            node,
            first,
            internal,
            ppm: ppm as u16,
            links: nl as u16,
            link_choice: p.link_choice,
        })
    }

    /// With `link_choice = "free"`, for an MPort node `s`: (its external ports, its links to
    /// the central crossbar), whose ports follow the external ones. `None` otherwise.
    #[inline]
    pub fn free_links(&self, s: usize) -> Option<(u16, u16)> {
        (self.link_choice == LinkChoice::Free
            && matches!(self.node[s].1, NodeKind::MPort(_))
            && self.links > 1)
            .then_some((self.ppm, self.links))
    }

    /// The role of port `p` of expanded switch `s`.
    pub fn role(&self, s: u32, p: PortNum) -> PortRole {
        let (ppm, nl) = (self.ppm, self.links);
        match self.node[s as usize].1 {
            NodeKind::MPort(_) if p < ppm => PortRole::External,
            NodeKind::MPort(_) if p < ppm + nl => PortRole::Up,
            NodeKind::MPort(_) => PortRole::Down,
            NodeKind::Central => {
                let fs = self.node[s as usize].0 as usize;
                let mports = (s - self.first[fs]) as u16;
                if p < mports * nl {
                    PortRole::Up
                } else {
                    PortRole::Down
                }
            }
        }
    }

    /// The fabric switch and port of an external port of expanded switch `s`.
    pub fn fabric_port(&self, s: u32, p: PortNum) -> (u32, PortNum) {
        let (fs, kind) = self.node[s as usize];
        match kind {
            NodeKind::MPort(m) => (fs, m * self.ppm + p),
            NodeKind::Central => (fs, p),
        }
    }

    /// Where `pkt`, arriving at port `in_port` of expanded switch `s` on VL `in_vl`, goes
    /// next: (output port, output VL, and the VL to remember as the packet's exit VL). At an
    /// external input the fabric switch's route source and SL→VL table decide the output port
    /// and the VL the packet leaves the switch on (its exit VL). A packet that stays in its
    /// MPort goes straight to that port and VL. One that crosses the central crossbar waits in
    /// the central buffer under the VL it arrived on, and from the central crossbar on under
    /// its exit VL (the staging buffer and the output buffer are per output port).
    ///
    /// Why: a central buffer serves every output of the switch. Keyed by the exit VL, one of
    /// its queues would mix packets for different outputs that share a VL number — on a torus
    /// with datelines, packets still in lane 0 of one dimension with packets that crossed the
    /// dateline and turn into lane 0 of the next — and its head-of-line blocking would add
    /// channel dependencies the fabric's routing does not have (lane 1 waiting on lane 0):
    /// the 8×8 torus of the Omni-Path QoS scenario deadlocked that way under overload. Keyed
    /// by the arrival VL, a queue holds only packets that arrived on one VL through the inputs
    /// of one link, so what waits behind a packet is what an input buffer of that VL holds.
    #[inline]
    pub fn route(
        &self,
        routes: &RouteSource,
        sl2vl: &Sl2VlTables,
        s: u32,
        in_port: u16,
        pkt: &Packet,
        in_vl: Vl,
    ) -> (u16, Vl, Option<u8>) {
        let (fs, kind) = self.node[s as usize];
        let (ppm, nl) = (self.ppm, self.links);
        match kind {
            NodeKind::MPort(m) if in_port < ppm => {
                let a = m * ppm + in_port;
                let o = routes.out_port(SwitchId(fs), pkt);
                let vl = sl2vl.vl(SwitchId(fs), a, o, pkt.wire_sl);
                if o / ppm == m {
                    (o % ppm, vl, None)
                } else {
                    let link = match self.link_choice {
                        LinkChoice::Input | LinkChoice::Free => in_port * nl / ppm,
                        LinkChoice::Flow => flow_link(pkt.src, pkt.dst, nl),
                    };
                    (ppm + link, in_vl, Some(vl.0))
                }
            }
            // From the central crossbar to the output buffer of port `in_port − ppm − nl`.
            NodeKind::MPort(_) => (in_port - ppm - nl, in_vl, None),
            NodeKind::Central => {
                let o = routes.out_port(SwitchId(fs), pkt);
                let mports = (s - self.first[fs as usize]) as u16;
                (mports * nl + o, Vl(pkt.exit_vl), None)
            }
        }
    }
}

/// The MPort-to-central link of the flow from `src` to `dst` among `links` (a fixed mix of
/// both ids, so the flows of one input spread evenly over the links).
#[inline]
fn flow_link(src: u32, dst: u32, links: u16) -> u16 {
    let x = (src as u64) << 32 | dst as u64;
    let h = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((h >> 32) % links as u64) as u16
}
