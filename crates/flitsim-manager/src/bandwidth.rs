//! A bandwidth manager with admission control and best-effort surplus sharing (Gulati, *A
//! Proportional Bandwidth Allocation Scheme for Myrinet Clusters*, M.S. thesis 2001, §3.3 and
//! §4.3).
//!
//! The manager keeps, over a topology and its routing, the flows it has admitted and the
//! bandwidth each one holds at every *resource* it uses: its source node, every switch output
//! port on its path and its destination node. Rates are in flits/cycle (a link carries its
//! width in flits per cycle, 1 unless wider).
//!
//! **Admission** (§3.3.1). A request for `B_req` from `src` to `dst` is granted when, with it,
//! 1. the reservations of all flows originating *or terminating* at the source node stay
//!    within the node's capacity B_node (the thesis's end-node contention: what a node
//!    receives lowers what it may send),
//! 2. the reservations of all flows through each switch output port on the path stay within
//!    the port's link capacity (its width),
//! 3. and likewise at the destination node.
//!
//! The checks run in that order (ports in path order); a refusal names the first criterion
//! that fails and the node or port (switch name and port number), with the reserved,
//! requested and capacity figures. An admitted flow gets `IDT = T · B_max / B_req` cycles,
//! where `B_max = MTU / T` is the most one flow of a NIC can get. A request above the source's
//! peak `min(B_max, B_node)` is an error, not a refusal.
//!
//! **Best effort** (§3.3.2, §4.3). A best-effort flow reserves nothing. At every node and
//! switch output port it crosses, the *surplus* — capacity minus the premium reservations
//! there — is split equally among the best-effort flows crossing it; the flow gets the
//! minimum of these shares over its resources (and at most B_max), and the IDT of that rate
//! (none when the share is 0: the flow may not send). This is the thesis's "simple
//! arbitration", not a max-min fair water-filling: a share a flow cannot use elsewhere is not
//! redistributed. Every change of the allocation recomputes the best-effort rates; the IDTs
//! that changed are queued for the NICs ([`BandwidthManager::take_updates`]).
//!
//! Every operation either succeeds or leaves the manager's state unchanged.
use crate::FabricConfig;
use flitsim_topology::{EndpointId, NodeId, PortNum, SwitchId, Topology};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// Slack of the capacity comparisons, flits/cycle (sums of rates are floating point).
pub const EPS: f64 = 1e-9;

/// `IDT = T · B_max / B_req`: the inter-packet dispatch time, cycles, that gives a flow
/// `b_req` when one flow alone gets `b_max` with dispatches every `t` cycles.
pub fn idt(t: f64, b_max: f64, b_req: f64) -> f64 {
    t * b_max / b_req
}

/// The manager's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct BandwidthParams {
    /// T: the least cycles between two dispatches of a NIC (`nic.dispatch_time`).
    pub dispatch_time: f64,
    /// The packet size, flits: one MTU per T is B_max.
    pub mtu: f64,
    /// B_node, flits/cycle: what a node may send and receive in total. `None`: the width of
    /// the node's link.
    pub node_capacity: Option<f64>,
}

impl BandwidthParams {
    /// B_max = MTU / T, flits/cycle.
    pub fn b_max(&self) -> f64 {
        self.mtu / self.dispatch_time
    }
}

/// Which admission criterion of §3.3.1 refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Criterion {
    /// 1: flows originating or terminating at the source node.
    SourceNode,
    /// 2: flows through a switch output port on the path.
    SwitchPort,
    /// 3: flows originating or terminating at the destination node.
    DestinationNode,
}

impl fmt::Display for Criterion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Criterion::SourceNode => "source node capacity",
            Criterion::SwitchPort => "switch output port capacity",
            Criterion::DestinationNode => "destination node capacity",
        })
    }
}

/// A node or a switch output port.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Place {
    /// An end node.
    Node {
        /// Endpoint index.
        endpoint: u32,
        /// Its name in the topology.
        name: String,
    },
    /// A switch output port.
    Port {
        /// Switch name.
        switch: String,
        /// Port number.
        port: PortNum,
    },
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Node { endpoint, name } => write!(f, "endpoint {endpoint} ({name:?})"),
            Place::Port { switch, port } => write!(f, "switch {switch:?} port {port}"),
        }
    }
}

/// Why a request was refused: the criterion, where, and the figures (flits/cycle).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Refusal {
    /// The criterion that failed.
    pub criterion: Criterion,
    /// The node or port where it failed.
    pub at: Place,
    /// Reserved there before the request.
    pub reserved: f64,
    /// The request.
    pub requested: f64,
    /// The capacity there.
    pub capacity: f64,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at {}: {} reserved + {} requested exceeds {} flits/cycle",
            self.criterion,
            self.at,
            num(self.reserved),
            num(self.requested),
            num(self.capacity)
        )
    }
}

/// `x` with at most 9 decimals, without trailing zeros (sums of rates print as 1, not
/// 0.9999999999999999).
pub(crate) fn num(x: f64) -> String {
    let s = format!("{x:.9}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// What went wrong with a request; the manager's state is unchanged.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BandwidthError {
    /// Admission control refused the request.
    #[error("refused: {0}")]
    Refused(Refusal),
    /// A flow from a node to itself.
    #[error("a flow from endpoint {0} to itself")]
    SelfFlow(u32),
    /// An endpoint the topology does not have.
    #[error("endpoint {endpoint} does not exist (the fabric has {endpoints} endpoints)")]
    UnknownEndpoint {
        /// The endpoint.
        endpoint: u32,
        /// How many there are.
        endpoints: usize,
    },
    /// A rate that is not a positive number.
    #[error("rate {0}: must be a positive number of flits/cycle")]
    BadRate(f64),
    /// A rate above what the source can send.
    #[error(
        "rate {rate} flits/cycle exceeds the peak {} of endpoint {endpoint} \
         (min of B_max = MTU/T and the node's capacity)", num(*peak)
    )]
    AbovePeak {
        /// The request.
        rate: f64,
        /// The source's peak.
        peak: f64,
        /// The source.
        endpoint: u32,
    },
    /// Releasing a flow that is not allocated.
    #[error("flow {0} is not allocated")]
    UnknownFlow(u64),
    /// The flow's path cannot be followed.
    #[error("no path: {0}")]
    NoPath(String),
    /// Parameters out of range.
    #[error("bad parameters: {0}")]
    Params(String),
}

/// How a flow's path is found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Via {
    /// The routing tables for traffic `class`, path index `path` (LMC offset). The class
    /// selects only the VLs (as in the engine, modulo the tables' classes); the path is the
    /// forwarding tables'.
    Tables {
        /// Class (SL).
        class: u8,
        /// Path index.
        path: usize,
    },
    /// An explicit source route: the output port at each switch from the source's.
    Route(Vec<PortNum>),
}

impl Default for Via {
    fn default() -> Self {
        Via::Tables { class: 0, path: 0 }
    }
}

/// A granted request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Allocation {
    /// The flow's id (for [`BandwidthManager::release`]).
    pub id: u64,
    /// Its inter-packet dispatch time, cycles.
    pub idt: f64,
}

/// A flow's kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FlowKind {
    /// A premium flow holding this many flits/cycle.
    Reserved(f64),
    /// A best-effort flow.
    BestEffort,
}

/// A flow of the manager, as [`BandwidthManager::flows`] shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowInfo {
    /// Id.
    pub id: u64,
    /// Source endpoint.
    pub src: u32,
    /// Destination endpoint.
    pub dst: u32,
    /// Premium or best effort.
    pub kind: FlowKind,
    /// Its rate now, flits/cycle: the reservation, or the best-effort share.
    pub rate: f64,
    /// Its IDT, cycles (`None`: a best-effort flow with no share, which may not send).
    pub idt: Option<f64>,
    /// The places it uses: source node, switch output ports in path order, destination node.
    pub places: Vec<Place>,
}

/// A change of a flow's IDT, for the NICs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IdtUpdate {
    /// The flow.
    pub id: u64,
    /// Its new IDT (`None`: it may not send).
    pub idt: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
struct Flow {
    src: u32,
    dst: u32,
    kind: FlowKind,
    /// Resource indices: source node, ports in path order, destination node.
    res: Vec<usize>,
    rate: f64,
    idt: Option<f64>,
}

/// The bandwidth manager of one fabric.
#[derive(Clone, Debug)]
pub struct BandwidthManager<'a> {
    topo: &'a Topology,
    fabric: Option<&'a FabricConfig>,
    params: BandwidthParams,
    /// Capacity per resource: nodes `0..n`, then switch ports at `n + port_index`.
    cap: Vec<f64>,
    /// Premium reservations per resource.
    reserved: Vec<f64>,
    /// Best-effort flows per resource.
    best_effort: Vec<u32>,
    flows: BTreeMap<u64, Flow>,
    next_id: u64,
    updates: Vec<IdtUpdate>,
}

impl<'a> BandwidthManager<'a> {
    /// A manager of `topo` with no flow. `fabric` gives the paths of [`Via::Tables`] flows
    /// (`None`: only source routes).
    pub fn new(
        topo: &'a Topology,
        fabric: Option<&'a FabricConfig>,
        params: BandwidthParams,
    ) -> Result<Self, BandwidthError> {
        let pos = |x: f64| x.is_finite() && x > 0.0;
        if !pos(params.dispatch_time) {
            return Err(BandwidthError::Params(format!(
                "dispatch time T = {}: must be positive",
                params.dispatch_time
            )));
        }
        if !pos(params.mtu) {
            return Err(BandwidthError::Params(format!(
                "MTU = {}: must be positive",
                params.mtu
            )));
        }
        if params.node_capacity.is_some_and(|c| !pos(c)) {
            return Err(BandwidthError::Params(format!(
                "node capacity {:?}: must be positive",
                params.node_capacity
            )));
        }
        let n = topo.num_endpoints();
        let mut cap = Vec::with_capacity(n + topo.total_switch_ports());
        for e in 0..n {
            let width = topo.links()[topo.endpoint_peer(EndpointId(e as u32)).link as usize].width;
            cap.push(params.node_capacity.unwrap_or(width as f64));
        }
        for s in 0..topo.num_switches() {
            let s = SwitchId(s as u32);
            for p in 0..topo.num_ports(s) {
                let w = topo
                    .switch_peer(s, p)
                    .map_or(0, |peer| topo.links()[peer.link as usize].width);
                cap.push(w as f64);
            }
        }
        let r = cap.len();
        Ok(BandwidthManager {
            topo,
            fabric,
            params,
            cap,
            reserved: vec![0.0; r],
            best_effort: vec![0; r],
            flows: BTreeMap::new(),
            next_id: 0,
            updates: Vec::new(),
        })
    }

    /// The parameters.
    pub fn params(&self) -> &BandwidthParams {
        &self.params
    }

    /// Requests `rate` flits/cycle from `src` to `dst` along path 0 of the tables for class
    /// 0.
    pub fn allocate(
        &mut self,
        src: u32,
        dst: u32,
        rate: f64,
    ) -> Result<Allocation, BandwidthError> {
        self.allocate_via(src, dst, rate, &Via::default())
    }

    /// Requests `rate` flits/cycle from `src` to `dst` along `via`.
    pub fn allocate_via(
        &mut self,
        src: u32,
        dst: u32,
        rate: f64,
        via: &Via,
    ) -> Result<Allocation, BandwidthError> {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(BandwidthError::BadRate(rate));
        }
        let res = self.resources(src, dst, via)?;
        let peak = self.params.b_max().min(self.cap[src as usize]);
        if rate > peak + EPS {
            return Err(BandwidthError::AbovePeak {
                rate,
                peak,
                endpoint: src,
            });
        }
        let last = res.len() - 1;
        for (i, &r) in res.iter().enumerate() {
            if self.reserved[r] + rate > self.cap[r] + EPS {
                let criterion = match i {
                    0 => Criterion::SourceNode,
                    i if i == last => Criterion::DestinationNode,
                    _ => Criterion::SwitchPort,
                };
                return Err(BandwidthError::Refused(Refusal {
                    criterion,
                    at: self.place(r),
                    reserved: self.reserved[r],
                    requested: rate,
                    capacity: self.cap[r],
                }));
            }
        }
        for &r in &res {
            self.reserved[r] += rate;
        }
        let id = self.next_id;
        self.next_id += 1;
        let t = idt(self.params.dispatch_time, self.params.b_max(), rate);
        self.flows.insert(
            id,
            Flow {
                src,
                dst,
                kind: FlowKind::Reserved(rate),
                res,
                rate,
                idt: Some(t),
            },
        );
        self.updates.push(IdtUpdate { id, idt: Some(t) });
        self.share_surplus();
        Ok(Allocation { id, idt: t })
    }

    /// Adds a best-effort flow from `src` to `dst` along path 0 of class 0; returns its id
    /// (its rate and IDT: [`flow`](Self::flow)).
    pub fn add_best_effort(&mut self, src: u32, dst: u32) -> Result<u64, BandwidthError> {
        self.add_best_effort_via(src, dst, &Via::default())
    }

    /// Adds a best-effort flow along `via`.
    pub fn add_best_effort_via(
        &mut self,
        src: u32,
        dst: u32,
        via: &Via,
    ) -> Result<u64, BandwidthError> {
        let res = self.resources(src, dst, via)?;
        for &r in &res {
            self.best_effort[r] += 1;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.flows.insert(
            id,
            Flow {
                src,
                dst,
                kind: FlowKind::BestEffort,
                res,
                rate: 0.0,
                idt: None,
            },
        );
        self.share_surplus();
        Ok(id)
    }

    /// Releases flow `id` (premium or best effort).
    pub fn release(&mut self, id: u64) -> Result<(), BandwidthError> {
        let f = self
            .flows
            .remove(&id)
            .ok_or(BandwidthError::UnknownFlow(id))?;
        match f.kind {
            FlowKind::Reserved(_) => {
                // Re-add the remaining reservations of the resources the flow used, in id
                // order, so that the sums do not drift with the history.
                for &r in &f.res {
                    self.reserved[r] = 0.0;
                }
                for g in self.flows.values() {
                    if let FlowKind::Reserved(b) = g.kind {
                        for &r in &g.res {
                            if f.res.contains(&r) {
                                self.reserved[r] += b;
                            }
                        }
                    }
                }
            }
            FlowKind::BestEffort => {
                for &r in &f.res {
                    self.best_effort[r] -= 1;
                }
            }
        }
        self.share_surplus();
        Ok(())
    }

    /// Flow `id`, if allocated.
    pub fn flow(&self, id: u64) -> Option<FlowInfo> {
        self.flows.get(&id).map(|f| self.info(id, f))
    }

    /// Every flow, by id.
    pub fn flows(&self) -> Vec<FlowInfo> {
        self.flows.iter().map(|(&id, f)| self.info(id, f)).collect()
    }

    /// The IDT changes since the last call, in order (every admitted premium flow's IDT, and
    /// every best-effort IDT that changed).
    pub fn take_updates(&mut self) -> Vec<IdtUpdate> {
        std::mem::take(&mut self.updates)
    }

    /// Premium reservations at `place`, flits/cycle (`None`: no such place).
    pub fn reserved_at(&self, place: &Place) -> Option<f64> {
        self.index(place).map(|r| self.reserved[r])
    }

    /// Capacity of `place`, flits/cycle.
    pub fn capacity_at(&self, place: &Place) -> Option<f64> {
        self.index(place).map(|r| self.cap[r])
    }

    fn index(&self, place: &Place) -> Option<usize> {
        let n = self.topo.num_endpoints();
        match place {
            Place::Node { endpoint, .. } => Some(*endpoint as usize).filter(|&e| e < n),
            Place::Port { switch, port } => {
                let s = self
                    .topo
                    .switches()
                    .iter()
                    .position(|s| &s.name == switch)?;
                let s = SwitchId(s as u32);
                (*port < self.topo.num_ports(s)).then(|| n + self.topo.port_index(s, *port))
            }
        }
    }

    fn info(&self, id: u64, f: &Flow) -> FlowInfo {
        FlowInfo {
            id,
            src: f.src,
            dst: f.dst,
            kind: f.kind,
            rate: f.rate,
            idt: f.idt,
            places: f.res.iter().map(|&r| self.place(r)).collect(),
        }
    }

    fn place(&self, r: usize) -> Place {
        let n = self.topo.num_endpoints();
        if r < n {
            return Place::Node {
                endpoint: r as u32,
                name: self.topo.endpoints()[r].name.clone(),
            };
        }
        // The switch whose ports hold index r − n: the last with port_index(s, 0) ≤ r − n.
        let i = r - n;
        let mut s = 0;
        while s + 1 < self.topo.num_switches()
            && self.topo.port_index(SwitchId(s as u32 + 1), 0) <= i
        {
            s += 1;
        }
        let sid = SwitchId(s as u32);
        Place::Port {
            switch: self.topo.switches()[s].name.clone(),
            port: (i - self.topo.port_index(sid, 0)) as PortNum,
        }
    }

    /// The resources of a flow: source node, switch output ports in path order, destination
    /// node.
    fn resources(&self, src: u32, dst: u32, via: &Via) -> Result<Vec<usize>, BandwidthError> {
        let n = self.topo.num_endpoints();
        for e in [src, dst] {
            if e as usize >= n {
                return Err(BandwidthError::UnknownEndpoint {
                    endpoint: e,
                    endpoints: n,
                });
            }
        }
        if src == dst {
            return Err(BandwidthError::SelfFlow(src));
        }
        let ports: Vec<(SwitchId, PortNum)> = match via {
            Via::Tables { class, path } => {
                let fabric = self.fabric.ok_or_else(|| {
                    BandwidthError::NoPath("no routing tables (give a source route)".into())
                })?;
                if *path >= fabric.num_paths() {
                    return Err(BandwidthError::NoPath(format!(
                        "path {path}: the fabric offers {} per destination",
                        fabric.num_paths()
                    )));
                }
                fabric
                    .trace_path(self.topo, EndpointId(src), EndpointId(dst), *class, *path)
                    .map_err(|e| BandwidthError::NoPath(e.to_string()))?
                    .into_iter()
                    .map(|h| (h.switch, h.out_port))
                    .collect()
            }
            Via::Route(route) => self.follow(src, dst, route)?,
        };
        let mut res = Vec::with_capacity(ports.len() + 2);
        res.push(src as usize);
        res.extend(ports.iter().map(|&(s, p)| n + self.topo.port_index(s, p)));
        res.push(dst as usize);
        Ok(res)
    }

    /// The switch output ports of a source route from `src`, which must end at `dst`.
    fn follow(
        &self,
        src: u32,
        dst: u32,
        route: &[PortNum],
    ) -> Result<Vec<(SwitchId, PortNum)>, BandwidthError> {
        let no = |m: String| Err(BandwidthError::NoPath(m));
        let (mut s, _) = self.topo.endpoint_switch(EndpointId(src));
        let mut out = Vec::with_capacity(route.len());
        for (i, &p) in route.iter().enumerate() {
            let name = &self.topo.switches()[s.0 as usize].name;
            if p >= self.topo.num_ports(s) {
                return no(format!("route[{i}]: switch {name:?} has no port {p}"));
            }
            out.push((s, p));
            match self.topo.switch_peer(s, p).map(|x| x.remote.node) {
                None => {
                    return no(format!(
                        "route[{i}]: port {p} of switch {name:?} is not connected"
                    ))
                }
                Some(NodeId::Endpoint(e)) if e == dst && i + 1 == route.len() => return Ok(out),
                Some(NodeId::Endpoint(e)) => {
                    return no(format!(
                        "route[{i}]: port {p} of switch {name:?} leads to endpoint {e}{}",
                        if e == dst {
                            " before the route ends"
                        } else {
                            ", not the destination"
                        }
                    ))
                }
                Some(NodeId::Switch(t)) => s = SwitchId(t),
            }
        }
        no(format!(
            "the route ends at switch {:?}, not at endpoint {dst}",
            self.topo.switches()[s.0 as usize].name
        ))
    }

    /// Recomputes every best-effort flow's share: at each of its resources the surplus
    /// (capacity − reservations, at least 0) divided by the best-effort flows there; the flow
    /// gets the least, at most B_max. Queues the IDTs that changed.
    fn share_surplus(&mut self) {
        let b_max = self.params.b_max();
        let t = self.params.dispatch_time;
        for (&id, f) in self.flows.iter_mut() {
            if f.kind != FlowKind::BestEffort {
                continue;
            }
            let share = f
                .res
                .iter()
                .map(|&r| (self.cap[r] - self.reserved[r]).max(0.0) / self.best_effort[r] as f64)
                .fold(b_max, f64::min);
            let new_idt = (share > EPS).then(|| idt(t, b_max, share));
            f.rate = if new_idt.is_some() { share } else { 0.0 };
            if new_idt != f.idt {
                f.idt = new_idt;
                self.updates.push(IdtUpdate { id, idt: new_idt });
            }
        }
    }
}

#[cfg(test)]
#[path = "bandwidth_tests.rs"]
mod tests;
