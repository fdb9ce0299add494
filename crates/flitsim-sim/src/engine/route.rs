//! Where a packet goes next: the route source and the switch organisation.
//!
//! A switch forwards a packet by asking its [`RouteSource`] for the fabric output port, then
//! its [`Organisation`] for the port of the simulated node and the VL. The route source is
//! either the forwarding tables indexed by (path, switch, destination) — InfiniBand's LFT by
//! DLID, where a packet's path is the offset of its destination LID under LMC — or a route
//! carried in the packet (Myrinet source routing); the organisations need not know which.
use super::opa::OpaLayout;
use super::packet::Packet;
use crate::ids::Vl;
use flitsim_manager::FabricConfig;
use flitsim_topology::{NodeId, PortNum, SwitchId, Topology};
use std::collections::HashMap;

/// How a fabric switch finds a packet's output port.
pub(crate) enum RouteSource {
    /// Linear forwarding tables of every path, flat:
    /// `lft[(path · switches + switch) · endpoints + destination]`.
    ForwardingTable {
        lft: Vec<PortNum>,
        switches: usize,
        endpoints: usize,
    },
    /// Source routes: a packet's `route` indexes the first hop of its route.
    SourceRoute(SourceRoutes),
}

/// The source routes in use: hops `(switch, output port)` of every route back to back, and the
/// route of each (source, destination, path) computed from the tables so far.
pub(crate) struct SourceRoutes {
    pub hops: Vec<(u32, PortNum)>,
    pub by_pair: HashMap<(u32, u32, u8), u32>,
    /// The switch of each endpoint.
    ep_switch: Vec<u32>,
    /// Per switch and port, the switch at the other end (`u32::MAX`: an endpoint or nothing).
    peer: Vec<Vec<u32>>,
}

impl SourceRoutes {
    /// No routes yet, for the fabric `topo`.
    pub fn new(topo: &Topology) -> Self {
        let ep_switch = (0..topo.num_endpoints() as u32)
            .map(|e| topo.endpoint_switch(flitsim_topology::EndpointId(e)).0 .0)
            .collect();
        let peer = (0..topo.num_switches() as u32)
            .map(|s| {
                (0..topo.num_ports(SwitchId(s)))
                    .map(
                        |p| match topo.switch_peer(SwitchId(s), p).map(|p| p.remote.node) {
                            Some(NodeId::Switch(t)) => t,
                            _ => u32::MAX,
                        },
                    )
                    .collect()
            })
            .collect();
        SourceRoutes {
            hops: Vec::new(),
            by_pair: HashMap::new(),
            ep_switch,
            peer,
        }
    }

    /// Appends a route and returns its index.
    fn push(&mut self, hops: impl IntoIterator<Item = (u32, PortNum)>) -> u32 {
        let start = self.hops.len() as u32;
        self.hops.extend(hops);
        start
    }

    /// The route of (src, dst, path) through the fabric's tables (computed on first use).
    pub fn of_pair(&mut self, fabric: &FabricConfig, src: u32, dst: u32, path: u8) -> u32 {
        if let Some(&r) = self.by_pair.get(&(src, dst, path)) {
            return r;
        }
        let lft = fabric.lft_of(path as usize);
        let mut s = self.ep_switch[src as usize];
        let start = self.hops.len() as u32;
        // The tables were checked (`check_routes`): this walk ends at `dst`.
        loop {
            let out = lft[s as usize][dst as usize];
            self.hops.push((s, out));
            match self.peer[s as usize][out as usize] {
                u32::MAX => break,
                t => s = t,
            }
        }
        let r = start;
        self.by_pair.insert((src, dst, path), r);
        r
    }

    /// Checks an explicit route — output ports from `src`'s switch on — against the topology
    /// and stores it. The error says where it goes wrong.
    pub fn explicit(
        &mut self,
        topo: &Topology,
        src: u32,
        dst: u32,
        ports: &[PortNum],
    ) -> Result<u32, String> {
        let (mut s, _) = topo.endpoint_switch(flitsim_topology::EndpointId(src));
        let mut hops = Vec::with_capacity(ports.len());
        for (i, &out) in ports.iter().enumerate() {
            let name = &topo.switches()[s.0 as usize].name;
            if out >= topo.num_ports(s) {
                return Err(format!(
                    "hop {i}: switch {name} has no port {out} ({} ports)",
                    topo.num_ports(s)
                ));
            }
            if hops.iter().any(|&(v, _)| v == s.0) {
                return Err(format!("hop {i}: the route visits switch {name} twice"));
            }
            hops.push((s.0, out));
            let last = i + 1 == ports.len();
            match topo.switch_peer(s, out).map(|p| p.remote.node) {
                None => {
                    return Err(format!(
                        "hop {i}: port {out} of switch {name} is unconnected"
                    ))
                }
                Some(NodeId::Endpoint(e)) if e == dst && last => {
                    return Ok(self.push(hops));
                }
                Some(NodeId::Endpoint(e)) => {
                    return Err(format!(
                        "hop {i}: port {out} of switch {name} leads to endpoint {e}{}",
                        if e == dst {
                            " before the route ends"
                        } else {
                            ", not to the destination"
                        }
                    ))
                }
                Some(NodeId::Switch(t)) => s = SwitchId(t),
            }
        }
        Err(format!(
            "the route ends at switch {} before reaching endpoint {dst}",
            topo.switches()[s.0 as usize].name
        ))
    }
}

impl RouteSource {
    /// Forwarding tables of every path of `fabric`.
    pub fn tables(fabric: &FabricConfig) -> RouteSource {
        let switches = fabric.lft.len();
        let endpoints = fabric.lft.first().map_or(0, Vec::len);
        let lft = fabric
            .paths()
            .flat_map(|(lft, _)| lft.iter().flatten().copied())
            .collect();
        RouteSource::ForwardingTable {
            lft,
            switches,
            endpoints,
        }
    }

    /// The output port of fabric switch `s` for `pkt`.
    #[inline(always)]
    pub fn out_port(&self, s: SwitchId, pkt: &Packet) -> PortNum {
        match self {
            RouteSource::ForwardingTable {
                lft,
                switches,
                endpoints,
            } => lft[(pkt.path as usize * switches + s.0 as usize) * endpoints + pkt.dst as usize],
            RouteSource::SourceRoute(r) => {
                // The packet is at a switch of its route: find that hop (routes are short).
                let mut i = pkt.route as usize;
                while r.hops[i].0 != s.0 {
                    i += 1;
                }
                r.hops[i].1
            }
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
