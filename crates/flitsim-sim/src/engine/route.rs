//! Where a packet goes next: the route source and the switch organisation.
//!
//! A switch forwards a packet by asking its [`RouteSource`] for the fabric output port, then
//! its [`Organisation`] for the port of the simulated node and the VL. The route source is
//! either the forwarding tables indexed by (path, switch, destination) — InfiniBand's LFT by
//! DLID, where a packet's path is the offset of its destination LID under LMC — or a route
//! carried in the packet (Myrinet source routing); the organisations need not know which.
use super::opa::OpaLayout;
use super::packet::Packet;
use crate::ids::{Sl, Vl};
use flitsim_manager::routing::rule::ForwardingRule;
use flitsim_manager::FabricConfig;
use flitsim_topology::{NodeId, PortNum, SwitchId, Topology};
use std::collections::HashMap;
use std::sync::Arc;

/// How a fabric switch finds a packet's output port.
pub(crate) enum RouteSource {
    /// Linear forwarding tables of every path, flat:
    /// `lft[(path · switches + switch) · endpoints + destination]`.
    ForwardingTable {
        lft: Vec<PortNum>,
        switches: usize,
        endpoints: usize,
    },
    /// The fabric's routing rule (regular fabrics routed without stored tables, see
    /// [`FabricConfig::rule`]); single path.
    Computed(Arc<ForwardingRule>),
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
        let mut s = self.ep_switch[src as usize];
        let start = self.hops.len() as u32;
        // The tables were checked (`check_routes`): this walk ends at `dst`.
        loop {
            let out = fabric.port(path as usize, s, dst);
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
    /// Forwarding of every path of `fabric`: its rule if it has one, else its tables, which
    /// move into the engine's flat layout (the fabric keeps empty rows: nothing reads them
    /// once the network is built, and the tables are not held twice).
    pub fn tables(fabric: &mut FabricConfig) -> RouteSource {
        if let Some(rule) = &fabric.rule {
            return RouteSource::Computed(rule.clone());
        }
        let switches = fabric.lft.len();
        let endpoints = fabric.lft.first().map_or(0, Vec::len);
        let mut lft = Vec::with_capacity(switches * endpoints * fabric.num_paths());
        for rows in
            std::iter::once(&mut fabric.lft).chain(fabric.alt_paths.iter_mut().map(|p| &mut p.lft))
        {
            for row in rows.iter_mut() {
                lft.extend_from_slice(row);
                *row = Vec::new();
            }
        }
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
            RouteSource::Computed(rule) => rule.port(s.0, pkt.dst),
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

/// The SL→VL tables of the fabric's switches as the engine reads them: identical tables
/// stored once (a regular fabric has a handful of distinct tables, not one per switch), so
/// that the lookup each head makes at each switch stays in cache.
pub(crate) struct Sl2VlTables {
    /// Per fabric switch: where its table starts in `data`, and its port count (the row
    /// stride).
    at: Vec<(usize, PortNum)>,
    data: Vec<u8>,
    wire_sls: usize,
}

impl Sl2VlTables {
    pub fn new(fabric: &FabricConfig) -> Self {
        let mut data = Vec::new();
        let mut seen: HashMap<&[u8], usize> = HashMap::new();
        let at = fabric
            .sl2vl
            .iter()
            .zip(&fabric.ports)
            .map(|(table, &ports)| {
                let start = *seen.entry(table.as_slice()).or_insert_with(|| {
                    data.extend_from_slice(table);
                    data.len() - table.len()
                });
                (start, ports)
            })
            .collect();
        Sl2VlTables {
            at,
            data,
            wire_sls: fabric.wire_sls(),
        }
    }

    /// Asks for the line of switch `s`'s entry (where its table is), which a head routed
    /// there reads first; the tables themselves are few and stay in cache.
    #[inline(always)]
    pub fn prefetch(&self, s: u32) {
        if let Some(a) = self.at.get(s as usize) {
            super::prefetch(a);
        }
    }

    /// The VL of wire SL `sl` from `in_port` to `out_port` of fabric switch `s` (as
    /// [`FabricConfig::vl`]).
    #[inline(always)]
    pub fn vl(&self, s: SwitchId, in_port: PortNum, out_port: PortNum, sl: Sl) -> Vl {
        let (start, ports) = self.at[s.0 as usize];
        let i = (in_port as usize * ports as usize + out_port as usize) * self.wire_sls + sl.idx();
        Vl(self.data[start + i])
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
    /// (output port of `s`, VL, and with the Omni-Path switch the exit VL the packet is to
    /// remember, see [`OpaLayout::route`]).
    #[inline(always)]
    pub fn route(
        &self,
        routes: &RouteSource,
        sl2vl: &Sl2VlTables,
        s: u32,
        in_port: PortNum,
        pkt: &Packet,
        in_vl: Vl,
    ) -> (PortNum, Vl, Option<u8>) {
        match self {
            Organisation::InputQueued | Organisation::InputOutputQueued => {
                let out = routes.out_port(SwitchId(s), pkt);
                let vl = sl2vl.vl(SwitchId(s), in_port, out, pkt.wire_sl);
                (out, vl, None)
            }
            Organisation::OmniPath(l) => l.route(routes, sl2vl, s, in_port, pkt, in_vl),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flitsim_manager::routing::{route, RoutingRequest};
    use flitsim_topology::generators;

    /// The deduplicated tables give the fabric's VL for every switch, port pair and SL (DOR
    /// on a torus: dateline tables differ between switches), and store fewer tables than
    /// switches.
    #[test]
    fn deduplicated_sl2vl_equals_the_fabric() {
        let topo = generators::torus(&[5, 4], 2, 1, 1).unwrap();
        for (engine, vls, classes) in [("dor", 4, 2), ("minhop", 2, 2), ("updn", 1, 1)] {
            let fabric = route(&topo, engine, &RoutingRequest { vls, classes }).unwrap();
            let t = Sl2VlTables::new(&fabric);
            let per_table: usize = fabric.sl2vl.iter().map(Vec::len).max().unwrap();
            assert!(
                t.data.len() < fabric.sl2vl.len() * per_table,
                "{engine}: {} bytes for {} switches",
                t.data.len(),
                fabric.sl2vl.len()
            );
            for s in 0..fabric.sl2vl.len() {
                let ports = fabric.ports[s];
                for i in 0..ports {
                    for o in 0..ports {
                        for sl in 0..fabric.wire_sls() {
                            let s = SwitchId(s as u32);
                            assert_eq!(
                                t.vl(s, i, o, Sl(sl as u8)),
                                fabric.vl(s, i, o, Sl(sl as u8)),
                                "{engine}: switch {s:?} {i}→{o} SL {sl}"
                            );
                        }
                    }
                }
            }
        }
    }
}
