//! # flitsim-topology
//!
//! The graph model of a fabric: switches with numbered ports, endpoints (NICs, one port each)
//! and bidirectional links between ports. A link has a latency in cycles and a width in flits
//! per cycle; parallel trunk links (as Omni-Path fabrics use between switches) are separate
//! links on separate ports, exactly as they are cabled.
//!
//! ```
//! use flitsim_topology::{generators, Topology};
//! let t: Topology = generators::torus(&[4, 4], 1, 1, 1).unwrap();
//! assert_eq!(t.num_switches(), 16);
//! assert_eq!(t.num_endpoints(), 16);
//! let json = t.to_json();
//! let back = Topology::from_json(&json).unwrap();
//! assert_eq!(back.links().len(), t.links().len());
//! ```
//!
//! Glossary used across flitsim:
//! - **flit**: the transfer unit; a base-width link moves one flit per cycle.
//! - **packet**: the routed unit (at most the MTU of its SL), a whole number of flits.
//! - **message**: what an application sends; segmented into packets.
//! - **credit**: the flow-control unit, here one flit of buffer space at the receiver.
//! - **SL / VL**: service level carried end to end / buffer lane on one link.
//! - **LFT**: linear forwarding table, destination → output port, one per switch.
#![warn(missing_docs)]

mod bfs;
pub mod cancel;
pub mod detect;
pub mod generators;
pub mod ibnetdiscover;
mod ids;
mod io;
pub mod lids;

pub use bfs::Bfs;
pub use detect::{detect_torus, shape_of, TorusLayout};
pub use ids::{Sl, Vl};
pub use io::{TopologyFile, TopologyFormat};
pub use lids::{lids_needed, IdAssignment, MAX_LMC};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Index of a switch in [`Topology::switches`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SwitchId(pub u32);

/// Index of an endpoint in [`Topology::endpoints`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EndpointId(pub u32);

/// Port number on a switch (0-based). Endpoints have exactly one port, number 0.
pub type PortNum = u16;

/// A node of the fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeId {
    /// A switch.
    Switch(u32),
    /// An endpoint (NIC / HCA / HFI).
    Endpoint(u32),
}

/// One end of a link: a node and one of its ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PortRef {
    /// The node.
    pub node: NodeId,
    /// The port on that node (0 for endpoints).
    pub port: PortNum,
}

/// A bidirectional link; both directions have the same latency and width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// One end.
    pub a: PortRef,
    /// The other end.
    pub b: PortRef,
    /// Cycles from a flit leaving one end to it being usable at the other (≥ 1).
    pub latency: u32,
    /// Flits per cycle in each direction (≥ 1).
    pub width: u32,
}

/// A switch: a name, a port count and, optionally, its InfiniBand identity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Switch {
    /// Human-readable name (unique).
    pub name: String,
    /// Number of ports; ports are numbered `0..ports`.
    pub ports: PortNum,
    /// Node GUID (unique among switches when present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guid: Option<u64>,
    /// LID of the switch's management port 0 (unique among all LIDs when present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lid: Option<u16>,
}

/// An endpoint (one port, number 0) and, optionally, its InfiniBand identity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Endpoint {
    /// Human-readable name (unique).
    pub name: String,
    /// Port GUID of the endpoint (unique among endpoints when present). An InfiniBand CA with
    /// several connected ports becomes several endpoints, one per port GUID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guid: Option<u64>,
    /// LID of the endpoint (unique among all LIDs when present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lid: Option<u16>,
}

/// What generated a topology; routing engines that need structure (DOR, fat-tree routing)
/// read it from here instead of guessing it from the graph.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// No known structure.
    #[default]
    Irregular,
    /// n-dimensional torus (`wrap = true`) or mesh. Switch `i` has coordinates in mixed radix
    /// of `sides` (dimension 0 fastest). Ports `0..trunk` go +dim0, the next `trunk` −dim0,
    /// then +dim1, −dim1, …; endpoint ports follow at `2·dims·trunk ..`.
    Torus {
        /// Side length per dimension.
        sides: Vec<u32>,
        /// Wrap-around links present.
        wrap: bool,
        /// Endpoints attached to each switch.
        endpoints_per_switch: u32,
        /// Parallel links between neighbouring switches.
        trunk: u32,
    },
    /// k-ary n-tree: `n` levels of `k^(n-1)` switches with `2k` ports. Level 0 are leaves.
    /// Switch `level·k^(n-1) + w`; ports `0..k` point down, `k..2k` up. Endpoint `e` hangs
    /// on leaf `e / k`, port `e % k`.
    KaryNTree {
        /// Arity.
        k: u32,
        /// Levels.
        n: u32,
    },
    /// Extended generalized fat tree XGFT(h; m₁..m_h; w₁..w_h) (Öhring, Ibel, Das and Kumar,
    /// "On generalized fat trees", IPPS 1995). Level-0 nodes are the endpoints (so `w₁ = 1`),
    /// levels 1..=h are switches, numbered level by level; see [`generators::xgft`] for node
    /// and port numbering. (An XGFT whose level-0 nodes are *switches* carrying `e` endpoints
    /// each — including Öhring's multi-port processing nodes, `e = 1` — is
    /// XGFT(h+1; e,m₁..; 1,w₁..) and is described that way.)
    Xgft {
        /// Height: number of switch levels.
        h: u32,
        /// `m[i]`: children of a level-`(i+1)` node.
        m: Vec<u32>,
        /// `w[i]`: parents of a level-`i` node.
        w: Vec<u32>,
    },
}

/// Errors building or reading a topology.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// A structural error: a dangling or doubly used port, an endpoint not attached, …
    #[error("invalid topology: {0}")]
    Invalid(String),
    /// Generator parameters out of range.
    #[error("invalid generator parameters: {0}")]
    Parameters(String),
    /// A file could not be parsed; the message names the position.
    #[error("{path}: {message}")]
    Parse {
        /// File name (or `<string>`).
        path: String,
        /// What is wrong and where.
        message: String,
    },
    /// I/O failure reading or writing a file.
    #[error("{path}: {source}")]
    Io {
        /// File name.
        path: String,
        /// Underlying error.
        source: std::io::Error,
    },
    /// Stopped by [`cancel::request`] (Ctrl-C).
    #[error("interrupted")]
    Cancelled(#[from] cancel::Cancelled),
}

/// Where a port leads: the link index and the far end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Peer {
    /// Index into [`Topology::links`].
    pub link: u32,
    /// The far end of the link.
    pub remote: PortRef,
}

/// A validated fabric graph with O(1) port lookups.
#[derive(Clone, Debug)]
pub struct Topology {
    name: String,
    shape: Shape,
    switches: Vec<Switch>,
    endpoints: Vec<Endpoint>,
    links: Vec<Link>,
    /// `switch_port_base[s] + p` indexes `switch_peers`.
    switch_port_base: Vec<u32>,
    switch_peers: Vec<Option<Peer>>,
    endpoint_peers: Vec<Peer>,
    ids: IdIndex,
}

/// GUID and LID lookup tables, rebuilt whenever identities change.
#[derive(Clone, Debug, Default)]
struct IdIndex {
    switch_guid: HashMap<u64, u32>,
    endpoint_guid: HashMap<u64, u32>,
    endpoint_lid: HashMap<u16, u32>,
}

impl IdIndex {
    /// Indexes the identities, rejecting duplicates and LID 0.
    fn build(switches: &[Switch], endpoints: &[Endpoint]) -> Result<IdIndex, TopologyError> {
        let mut ix = IdIndex::default();
        let mut lids: HashMap<u16, String> = HashMap::new();
        let mut claim_lid = |lid: u16, who: String| -> Result<(), TopologyError> {
            if lid == 0 {
                return Err(TopologyError::Invalid(format!(
                    "{who} has LID 0, which is reserved"
                )));
            }
            if let Some(prev) = lids.insert(lid, who.clone()) {
                return Err(TopologyError::Invalid(format!(
                    "LID {lid} is used by both {prev} and {who}"
                )));
            }
            Ok(())
        };
        for (i, s) in switches.iter().enumerate() {
            if let Some(g) = s.guid {
                if let Some(prev) = ix.switch_guid.insert(g, i as u32) {
                    return Err(TopologyError::Invalid(format!(
                        "switches {} and {} have the same GUID {g:#018x}",
                        switches[prev as usize].name, s.name
                    )));
                }
            }
            if let Some(l) = s.lid {
                claim_lid(l, format!("switch {}", s.name))?;
            }
        }
        for (i, e) in endpoints.iter().enumerate() {
            if let Some(g) = e.guid {
                if let Some(&s) = ix.switch_guid.get(&g) {
                    return Err(TopologyError::Invalid(format!(
                        "endpoint {} has GUID {g:#018x}, the GUID of switch {}",
                        e.name, switches[s as usize].name
                    )));
                }
                if let Some(prev) = ix.endpoint_guid.insert(g, i as u32) {
                    return Err(TopologyError::Invalid(format!(
                        "endpoints {} and {} have the same GUID {g:#018x}",
                        endpoints[prev as usize].name, e.name
                    )));
                }
            }
            if let Some(l) = e.lid {
                claim_lid(l, format!("endpoint {}", e.name))?;
                ix.endpoint_lid.insert(l, i as u32);
            }
        }
        Ok(ix)
    }
}

/// First GUID [`Topology::assign_guids_and_lids`] gives to switches (switch `i` gets base + i).
pub const GENERATED_SWITCH_GUID_BASE: u64 = 0x0002_c900_0000_0000;
/// First GUID [`Topology::assign_guids_and_lids`] gives to endpoints (endpoint `i` gets base + i).
pub const GENERATED_ENDPOINT_GUID_BASE: u64 = 0x0002_c901_0000_0000;
/// Largest unicast LID (InfiniBand Architecture Specification, LIDs 0x0001–0xBFFF).
pub const MAX_UNICAST_LID: u16 = 0xbfff;

/// Most switches a topology may have (2²⁴ = 16 777 216). Generators check their sizes against
/// [`MAX_SWITCHES`], [`MAX_ENDPOINTS`] and [`MAX_SWITCH_PORTS`] before allocating anything, and
/// [`Topology::new`] (so every reader) checks them too, so an oversized spec or file is a
/// [`TopologyError`], never an allocation failure. A topology at these limits takes a few GB
/// of memory before any routing or simulation.
pub const MAX_SWITCHES: u64 = 1 << 24;
/// Most endpoints a topology may have (2²⁴); see [`MAX_SWITCHES`].
pub const MAX_ENDPOINTS: u64 = 1 << 24;
/// Most switch ports, summed over all switches, a topology may have (2²⁷ = 134 217 728);
/// see [`MAX_SWITCHES`].
pub const MAX_SWITCH_PORTS: u64 = 1 << 27;

/// Checks counts (computed with saturating arithmetic by the caller) against [`MAX_SWITCHES`],
/// [`MAX_ENDPOINTS`] and [`MAX_SWITCH_PORTS`]; the message starts with `what`.
pub(crate) fn check_size(
    what: &str,
    switches: u64,
    endpoints: u64,
    switch_ports: u64,
) -> Result<(), String> {
    let over = |n: u64, max: u64, unit: &str| {
        let n = if n == u64::MAX {
            "more than 2^64".to_string()
        } else {
            n.to_string()
        };
        Err(format!(
            "{what}{n} {unit} is more than the limit of {max} (2^{})",
            max.trailing_zeros()
        ))
    };
    if switches > MAX_SWITCHES {
        return over(switches, MAX_SWITCHES, "switches");
    }
    if endpoints > MAX_ENDPOINTS {
        return over(endpoints, MAX_ENDPOINTS, "endpoints");
    }
    if switch_ports > MAX_SWITCH_PORTS {
        return over(switch_ports, MAX_SWITCH_PORTS, "switch ports in total");
    }
    Ok(())
}

impl Topology {
    /// Builds and validates a topology. Every endpoint must be linked to exactly one switch
    /// port; no port may be used twice; latencies and widths must be ≥ 1.
    pub fn new(
        name: impl Into<String>,
        shape: Shape,
        switches: Vec<Switch>,
        endpoints: Vec<Endpoint>,
        links: Vec<Link>,
    ) -> Result<Self, TopologyError> {
        let total_ports: u64 = switches.iter().map(|s| u64::from(s.ports)).sum();
        check_size(
            "",
            switches.len() as u64,
            endpoints.len() as u64,
            total_ports,
        )
        .map_err(TopologyError::Invalid)?;
        if let Some((i, s)) = switches.iter().enumerate().find(|(_, s)| s.ports == 0) {
            return Err(TopologyError::Invalid(format!(
                "switch {i} (\"{}\") has 0 ports",
                s.name
            )));
        }
        let mut switch_port_base = Vec::with_capacity(switches.len() + 1);
        let mut acc = 0u32;
        for s in &switches {
            switch_port_base.push(acc);
            acc += s.ports as u32;
        }
        switch_port_base.push(acc);
        let mut switch_peers = vec![None; acc as usize];
        let mut endpoint_peers: Vec<Option<Peer>> = vec![None; endpoints.len()];
        for (li, l) in links.iter().enumerate() {
            if l.latency == 0 || l.width == 0 {
                return Err(TopologyError::Invalid(format!(
                    "link {li}: latency and width must be at least 1"
                )));
            }
            if l.a.node == l.b.node {
                return Err(TopologyError::Invalid(format!(
                    "link {li} connects a node to itself"
                )));
            }
            for (here, there) in [(l.a, l.b), (l.b, l.a)] {
                let peer = Peer {
                    link: li as u32,
                    remote: there,
                };
                match here.node {
                    NodeId::Switch(s) => {
                        let sw = switches.get(s as usize).ok_or_else(|| {
                            TopologyError::Invalid(format!("link {li}: no switch {s}"))
                        })?;
                        if here.port >= sw.ports {
                            return Err(TopologyError::Invalid(format!(
                                "link {li}: switch {} has no port {} (it has {})",
                                sw.name, here.port, sw.ports
                            )));
                        }
                        let slot = &mut switch_peers
                            [(switch_port_base[s as usize] + here.port as u32) as usize];
                        if slot.is_some() {
                            return Err(TopologyError::Invalid(format!(
                                "link {li}: port {} of switch {} is already connected",
                                here.port, sw.name
                            )));
                        }
                        *slot = Some(peer);
                    }
                    NodeId::Endpoint(e) => {
                        let ep = endpoints.get(e as usize).ok_or_else(|| {
                            TopologyError::Invalid(format!("link {li}: no endpoint {e}"))
                        })?;
                        if here.port != 0 {
                            return Err(TopologyError::Invalid(format!(
                                "link {li}: endpoint {} has only port 0",
                                ep.name
                            )));
                        }
                        if endpoint_peers[e as usize].is_some() {
                            return Err(TopologyError::Invalid(format!(
                                "link {li}: endpoint {} is already connected",
                                ep.name
                            )));
                        }
                        if let NodeId::Endpoint(_) = there.node {
                            return Err(TopologyError::Invalid(format!(
                                "link {li}: endpoints must connect to switches"
                            )));
                        }
                        endpoint_peers[e as usize] = Some(peer);
                    }
                }
            }
        }
        let endpoint_peers = endpoint_peers
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                p.ok_or_else(|| {
                    TopologyError::Invalid(format!(
                        "endpoint {} is not connected",
                        endpoints[i].name
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let ids = IdIndex::build(&switches, &endpoints)?;
        Ok(Topology {
            name: name.into(),
            shape,
            switches,
            endpoints,
            links,
            switch_port_base,
            switch_peers,
            endpoint_peers,
            ids,
        })
    }

    /// Gives every switch and endpoint a deterministic identity, replacing any it had:
    /// switch `i` gets GUID [`GENERATED_SWITCH_GUID_BASE`]` + i` and LID `1 + i`; endpoint `i`
    /// gets GUID [`GENERATED_ENDPOINT_GUID_BASE`]` + i` and LID `S + 1 + i` (`S` switches).
    /// When `S + E` exceeds the unicast LID space ([`MAX_UNICAST_LID`]) no LIDs are assigned
    /// (all become `None`). Every generator calls this.
    pub fn assign_guids_and_lids(&mut self) {
        let s = self.switches.len();
        let fits = s + self.endpoints.len() <= MAX_UNICAST_LID as usize;
        for (i, sw) in self.switches.iter_mut().enumerate() {
            sw.guid = Some(GENERATED_SWITCH_GUID_BASE + i as u64);
            sw.lid = fits.then(|| 1 + i as u16);
        }
        for (i, e) in self.endpoints.iter_mut().enumerate() {
            e.guid = Some(GENERATED_ENDPOINT_GUID_BASE + i as u64);
            e.lid = fits.then(|| (s + 1 + i) as u16);
        }
        self.ids = IdIndex::build(&self.switches, &self.endpoints)
            .expect("generated identities are unique");
    }

    /// The switch with node GUID `guid`.
    pub fn switch_by_guid(&self, guid: u64) -> Option<SwitchId> {
        self.ids.switch_guid.get(&guid).map(|&i| SwitchId(i))
    }

    /// The endpoint with port GUID `guid`.
    pub fn endpoint_by_guid(&self, guid: u64) -> Option<EndpointId> {
        self.ids.endpoint_guid.get(&guid).map(|&i| EndpointId(i))
    }

    /// The endpoint with LID `lid`.
    pub fn endpoint_by_lid(&self, lid: u16) -> Option<EndpointId> {
        self.ids.endpoint_lid.get(&lid).map(|&i| EndpointId(i))
    }

    /// Name of the topology.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Structure known from the generator.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }
    /// All switches.
    pub fn switches(&self) -> &[Switch] {
        &self.switches
    }
    /// All endpoints.
    pub fn endpoints(&self) -> &[Endpoint] {
        &self.endpoints
    }
    /// All links.
    pub fn links(&self) -> &[Link] {
        &self.links
    }
    /// Number of switches.
    pub fn num_switches(&self) -> usize {
        self.switches.len()
    }
    /// Number of endpoints.
    pub fn num_endpoints(&self) -> usize {
        self.endpoints.len()
    }
    /// Port count of switch `s`.
    pub fn num_ports(&self, s: SwitchId) -> PortNum {
        self.switches[s.0 as usize].ports
    }
    /// Total number of switch ports (connected or not).
    pub fn total_switch_ports(&self) -> usize {
        self.switch_peers.len()
    }
    /// Dense index of (switch, port) in `0..total_switch_ports()`.
    pub fn port_index(&self, s: SwitchId, p: PortNum) -> usize {
        (self.switch_port_base[s.0 as usize] + p as u32) as usize
    }
    /// What port `p` of switch `s` is connected to, if anything.
    pub fn switch_peer(&self, s: SwitchId, p: PortNum) -> Option<Peer> {
        self.switch_peers[self.port_index(s, p)]
    }
    /// The switch port an endpoint is attached to, and the link.
    pub fn endpoint_peer(&self, e: EndpointId) -> Peer {
        self.endpoint_peers[e.0 as usize]
    }
    /// The switch and port endpoint `e` is attached to.
    pub fn endpoint_switch(&self, e: EndpointId) -> (SwitchId, PortNum) {
        let p = self.endpoint_peers[e.0 as usize].remote;
        match p.node {
            NodeId::Switch(s) => (SwitchId(s), p.port),
            NodeId::Endpoint(_) => unreachable!("validated in Topology::new"),
        }
    }
    /// Connected ports of switch `s` whose far end is another switch:
    /// `(port, neighbour switch, neighbour port)`.
    pub fn switch_neighbours(
        &self,
        s: SwitchId,
    ) -> impl Iterator<Item = (PortNum, SwitchId, PortNum)> + '_ {
        (0..self.num_ports(s)).filter_map(move |p| match self.switch_peer(s, p) {
            Some(Peer {
                remote:
                    PortRef {
                        node: NodeId::Switch(t),
                        port,
                    },
                ..
            }) => Some((p, SwitchId(t), port)),
            _ => None,
        })
    }
    /// Endpoints attached to switch `s`, as `(port, endpoint)`.
    pub fn switch_endpoints(
        &self,
        s: SwitchId,
    ) -> impl Iterator<Item = (PortNum, EndpointId)> + '_ {
        (0..self.num_ports(s)).filter_map(move |p| match self.switch_peer(s, p) {
            Some(Peer {
                remote:
                    PortRef {
                        node: NodeId::Endpoint(e),
                        ..
                    },
                ..
            }) => Some((p, EndpointId(e))),
            _ => None,
        })
    }
    /// Largest link latency (cycles).
    pub fn max_latency(&self) -> u32 {
        self.links.iter().map(|l| l.latency).max().unwrap_or(1)
    }
    /// True when every switch can reach every other switch.
    pub fn is_connected(&self) -> bool {
        if self.num_switches() == 0 {
            return true;
        }
        Bfs::default()
            .switches(self, [0])
            .iter()
            .all(|&d| d != Bfs::UNREACHED)
    }
}

/// Links as an order-independent set of normalised (end, end) pairs, for tests comparing
/// topologies link for link.
#[cfg(test)]
pub(crate) fn link_set(
    t: &Topology,
) -> std::collections::BTreeSet<(NodeId, PortNum, NodeId, PortNum)> {
    t.links()
        .iter()
        .map(|l| {
            let (a, b) = if (l.a.node, l.a.port) <= (l.b.node, l.b.port) {
                (l.a, l.b)
            } else {
                (l.b, l.a)
            };
            (a.node, a.port, b.node, b.port)
        })
        .collect()
}
