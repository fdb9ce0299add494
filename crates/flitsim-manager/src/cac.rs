//! Connection admission control (CAC) for deadline-based QoS (Martínez, Alfaro, Sánchez,
//! Quiles and Duato, "Efficient Deadline-Based QoS Algorithms for High-Performance Networks",
//! IEEE TC 2008, §2.2 and §4.1): bandwidth reservation at one central point over a routed
//! fabric, with least-occupied path selection. Usable without the simulator.
//!
//! **What is reserved.** Every flow travels over directed links: the injection link from its
//! source NIC, the switch-to-switch links of its path and the ejection link to its
//! destination. A link is known by its sending end — the source endpoint for an injection
//! link, a switch output port otherwise — and carries its width in flits/cycle (its
//! *capacity*; 1 for a base-width link). A flow's `rate` is in flits/cycle, so on a width-1
//! link it is the fraction of the link's bandwidth it takes. The *load* of a link is its
//! reserved rate divided by its capacity.
//!
//! **Admission** (§4.1: "The CAC guarantees that less than 70 percent of bandwidth is used by
//! QoS traffic at any link … assigning the least occupied route among the possible paths").
//! QoS flows are taken in input order. A flow's candidates are every path the fabric offers
//! between its endpoints ([`FabricConfig::num_paths`]: path 0 and, with LMC or multipath, the
//! [`alt_paths`](FabricConfig::alt_paths)), traced through the tables for class 0. A candidate
//! is *feasible* when, with the flow's rate added, every link on it stays within
//! `limit × capacity`. Among the feasible candidates the flow gets the least occupied one: the
//! smallest maximum link load along the path after adding the rate. A tie on the maximum
//! (within [`EPS`]) goes to the smaller second-highest load, and so on down the path's loads
//! sorted from the highest (a link a path lacks counts as load 0), then to the lowest path
//! index. The tie-break matters: the injection and ejection links are on every candidate, so
//! once they are the most loaded links of a flow all its candidates share the same maximum,
//! and only the next loads tell a busy spine from an idle one. The flow's rate is then
//! reserved on every link of the chosen path (a link the path crosses twice, twice).
//!
//! **Rejection.** When no candidate is feasible the flow is rejected and nothing is reserved.
//! The report names the link that refused: on the least-bad candidate (in the same order as
//! above), the link whose load after adding would be the highest (the first in path order on
//! ties), with its load before the request and the limit.
//!
//! **Unregulated flows.** Flows that are not QoS flows (control traffic in the paper, which
//! "is not subject to the CAC or load balancing", and best effort) are neither admitted nor
//! counted; they are reported as unregulated and reserve nothing.
//!
//! Malformed requests (an endpoint the fabric does not have, a flow to itself, a rate that is
//! not a positive number, a pair the tables cannot route) are errors naming the flow and the
//! field ([`CacError::Flow`]), not rejections. Results are deterministic: they depend only on
//! the topology, the tables, the flows in order and the limit.
//!
//! ```
//! use flitsim_manager::cac::{admit, FlowRequest};
//! use flitsim_manager::{route, RoutingRequest};
//! use flitsim_topology::generators;
//!
//! // Two endpoints on one switch: every flow from 0 to 1 shares endpoint 1's link.
//! let topo = generators::kary_ntree(2, 1, 1).unwrap();
//! let fabric = route(&topo, "minhop", &RoutingRequest { vls: 1, classes: 1 }).unwrap();
//! let flows: Vec<FlowRequest> = (0..3).map(|_| FlowRequest::qos(0, 1, 0.3)).collect();
//! let r = admit(&topo, &fabric, &flows, 0.7).unwrap();
//! assert_eq!((r.admitted.len(), r.rejected.len()), (2, 1));
//! ```
use crate::bandwidth::{num, Place, EPS};
use crate::FabricConfig;
use flitsim_topology::{EndpointId, NodeId, SwitchId, Topology};
use serde::Serialize;
use std::cmp::Ordering;
use std::fmt;

/// One flow asking for bandwidth.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowRequest {
    /// Source endpoint index.
    pub src: u32,
    /// Destination endpoint index.
    pub dst: u32,
    /// Average rate, flits/cycle (the fraction of a width-1 link's bandwidth).
    pub rate: f64,
    /// A name for reports (optional).
    pub name: Option<String>,
    /// Subject to admission control (QoS); `false`: unregulated, never admitted or counted.
    pub qos: bool,
}

impl FlowRequest {
    /// An unnamed QoS flow.
    pub fn qos(src: u32, dst: u32, rate: f64) -> Self {
        FlowRequest {
            src,
            dst,
            rate,
            name: None,
            qos: true,
        }
    }

    /// An unnamed unregulated flow.
    pub fn unregulated(src: u32, dst: u32, rate: f64) -> Self {
        FlowRequest {
            qos: false,
            ..FlowRequest::qos(src, dst, rate)
        }
    }
}

/// A directed link, by its two ends: the sending end (a source endpoint for an injection
/// link, else a switch output port) and the receiving end (a switch input port or the
/// destination endpoint).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkRef {
    /// `from → to`, as in messages: `switch "s0" port 9 → switch "s1" port 0`.
    pub name: String,
    /// The sending end.
    pub from: Place,
    /// The receiving end.
    pub to: Place,
    /// Capacity, flits/cycle (the link's width).
    pub capacity: f64,
}

impl fmt::Display for LinkRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// An admitted QoS flow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Admitted {
    /// Index of the flow in the request list.
    pub flow: usize,
    /// Its name, if it has one.
    pub name: Option<String>,
    /// Source endpoint.
    pub src: u32,
    /// Destination endpoint.
    pub dst: u32,
    /// Reserved rate, flits/cycle.
    pub rate: f64,
    /// The path it was given (index among the fabric's paths per destination).
    pub path: usize,
    /// Candidate paths it had (the fabric's paths per destination).
    pub candidates: usize,
    /// The highest link load along its path after its admission.
    pub max_load: f64,
}

/// A rejected QoS flow and the link that refused it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rejected {
    /// Index of the flow in the request list.
    pub flow: usize,
    /// Its name, if it has one.
    pub name: Option<String>,
    /// Source endpoint.
    pub src: u32,
    /// Destination endpoint.
    pub dst: u32,
    /// Requested rate, flits/cycle.
    pub rate: f64,
    /// The least-bad candidate path, on which `link` refused.
    pub path: usize,
    /// The link that refused.
    pub link: LinkRef,
    /// Its load before the request (reserved / capacity).
    pub load: f64,
    /// The limit on a link's load.
    pub limit: f64,
    /// The refusal in words.
    pub message: String,
}

/// A flow left out of admission control.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unregulated {
    /// Index of the flow in the request list.
    pub flow: usize,
    /// Its name, if it has one.
    pub name: Option<String>,
    /// Source endpoint.
    pub src: u32,
    /// Destination endpoint.
    pub dst: u32,
    /// Its rate, flits/cycle (not reserved).
    pub rate: f64,
}

/// The verdict on one flow.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Admitted on a path.
    Admitted(Admitted),
    /// Refused.
    Rejected(Rejected),
    /// Not subject to admission control.
    Unregulated(Unregulated),
}

/// The reservations on one link.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkLoad {
    /// The link.
    #[serde(flatten)]
    pub link: LinkRef,
    /// Reserved rate, flits/cycle.
    pub reserved: f64,
    /// `reserved / capacity`.
    pub load: f64,
    /// Admitted flows crossing it (a flow crossing twice counts twice).
    pub flows: u32,
}

/// Everything [`admit`] decides, in a deterministic order: `admitted`, `rejected` and
/// `unregulated` by flow index, `links` (only those with a reservation) by endpoint for
/// injection links, then by switch and port.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CacReport {
    /// The limit on a link's load.
    pub limit: f64,
    /// Paths the fabric offers per destination.
    pub paths: usize,
    /// Admitted QoS flows.
    pub admitted: Vec<Admitted>,
    /// Rejected QoS flows.
    pub rejected: Vec<Rejected>,
    /// Unregulated flows.
    pub unregulated: Vec<Unregulated>,
    /// Reserved load per link.
    pub links: Vec<LinkLoad>,
}

/// A request admission control cannot judge; nothing was reserved for it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CacError {
    /// The limit is not in `(0, 1]`.
    #[error("limit {0}: must be a number greater than 0 and at most 1 (a share of each link)")]
    Limit(f64),
    /// A malformed flow: `flow[index].key: message`.
    #[error("flow[{index}]{}: {message}", key.map(|k| format!(".{k}")).unwrap_or_default())]
    Flow {
        /// Index of the flow in the request list.
        index: usize,
        /// The field at fault (`src`, `dst`, `rate`), if one.
        key: Option<&'static str>,
        /// What is wrong.
        message: String,
    },
}

/// Admission control over one routed fabric, flow by flow ([`request`](Self::request)); see
/// the [module documentation](self) for the rules. [`admit`] runs a whole list.
#[derive(Clone, Debug)]
pub struct AdmissionControl<'a> {
    topo: &'a Topology,
    fabric: &'a FabricConfig,
    limit: f64,
    /// Capacity per link: injection links of endpoints `0..n`, then switch output ports at
    /// `n + port_index` (0 for an unconnected port).
    cap: Vec<f64>,
    reserved: Vec<f64>,
    flows: Vec<u32>,
    next: usize,
}

impl<'a> AdmissionControl<'a> {
    /// Admission control over `fabric`'s paths in `topo`, every link's load kept within
    /// `limit` (0.7 in the paper; at most 1).
    pub fn new(topo: &'a Topology, fabric: &'a FabricConfig, limit: f64) -> Result<Self, CacError> {
        check_limit(limit)?;
        let n = topo.num_endpoints();
        let mut cap = Vec::with_capacity(n + topo.total_switch_ports());
        for e in 0..n {
            let peer = topo.endpoint_peer(EndpointId(e as u32));
            cap.push(f64::from(topo.links()[peer.link as usize].width));
        }
        for s in 0..topo.num_switches() {
            let s = SwitchId(s as u32);
            for p in 0..topo.num_ports(s) {
                cap.push(topo.switch_peer(s, p).map_or(0.0, |peer| {
                    f64::from(topo.links()[peer.link as usize].width)
                }));
            }
        }
        let r = cap.len();
        Ok(AdmissionControl {
            topo,
            fabric,
            limit,
            cap,
            reserved: vec![0.0; r],
            flows: vec![0; r],
            next: 0,
        })
    }

    /// The limit on a link's load.
    pub fn limit(&self) -> f64 {
        self.limit
    }

    /// Judges the next flow and, when it is admitted, reserves its rate along the chosen
    /// path. Its index is the number of requests made before (errors included); an error
    /// reserves nothing.
    pub fn request(&mut self, f: &FlowRequest) -> Result<Decision, CacError> {
        let index = self.next;
        self.next += 1;
        let candidates = self.candidates(index, f)?;
        if !f.qos {
            return Ok(Decision::Unregulated(Unregulated {
                flow: index,
                name: f.name.clone(),
                src: f.src,
                dst: f.dst,
                rate: f.rate,
            }));
        }
        // (path, its link loads after adding, highest first): the best feasible path and the
        // least-bad path.
        let mut best: Option<(usize, Vec<f64>)> = None;
        let mut least_bad: Option<(usize, Vec<f64>)> = None;
        for (k, links) in candidates.iter().enumerate() {
            let mut loads: Vec<f64> = links.iter().map(|&r| self.load_after(r, f.rate)).collect();
            loads.sort_by(|a, b| b.total_cmp(a));
            let better = |cur: &Option<(usize, Vec<f64>)>| {
                cur.as_ref()
                    .is_none_or(|(_, m)| less_occupied(&loads, m) == Ordering::Less)
            };
            let feasible = links
                .iter()
                .all(|&r| self.reserved[r] + f.rate <= self.limit * self.cap[r] + EPS);
            if feasible && better(&best) {
                best = Some((k, loads.clone()));
            }
            if better(&least_bad) {
                least_bad = Some((k, loads));
            }
        }
        if let Some((k, loads)) = best {
            let max_load = loads.first().copied().unwrap_or(0.0);
            for &r in &candidates[k] {
                self.reserved[r] += f.rate;
                self.flows[r] += 1;
            }
            return Ok(Decision::Admitted(Admitted {
                flow: index,
                name: f.name.clone(),
                src: f.src,
                dst: f.dst,
                rate: f.rate,
                path: k,
                candidates: candidates.len(),
                max_load,
            }));
        }
        let Some((k, _)) = least_bad else {
            unreachable!("a fabric offers at least one path per destination")
        };
        // The link with the highest load after adding, the first in path order on ties.
        let mut at = candidates[k][0];
        for &r in &candidates[k][1..] {
            if self.load_after(r, f.rate) > self.load_after(at, f.rate) + EPS {
                at = r;
            }
        }
        let link = self.link(at);
        let load = self.reserved[at] / self.cap[at];
        let message = format!(
            "{link}: load {} + {} requested exceeds the limit {} of its capacity {} flits/cycle",
            num(load),
            num(f.rate / self.cap[at]),
            num(self.limit),
            num(self.cap[at])
        );
        Ok(Decision::Rejected(Rejected {
            flow: index,
            name: f.name.clone(),
            src: f.src,
            dst: f.dst,
            rate: f.rate,
            path: k,
            link,
            load,
            limit: self.limit,
            message,
        }))
    }

    /// The links with a reservation, injection links by endpoint first, then switch output
    /// ports by switch and port.
    pub fn links(&self) -> Vec<LinkLoad> {
        (0..self.cap.len())
            .filter(|&r| self.flows[r] > 0)
            .map(|r| LinkLoad {
                link: self.link(r),
                reserved: self.reserved[r],
                load: self.reserved[r] / self.cap[r],
                flows: self.flows[r],
            })
            .collect()
    }

    fn load_after(&self, r: usize, rate: f64) -> f64 {
        (self.reserved[r] + rate) / self.cap[r]
    }

    /// Checks the request and returns the links of each of its candidate paths.
    fn candidates(&self, index: usize, f: &FlowRequest) -> Result<Vec<Vec<usize>>, CacError> {
        let bad = |key: &'static str, message: String| CacError::Flow {
            index,
            key: Some(key),
            message,
        };
        let n = self.topo.num_endpoints();
        for (key, e) in [("src", f.src), ("dst", f.dst)] {
            if e as usize >= n {
                return Err(bad(
                    key,
                    format!("endpoint {e} does not exist (the fabric has {n} endpoints)"),
                ));
            }
        }
        if f.src == f.dst {
            return Err(bad(
                "dst",
                format!("a flow from endpoint {} to itself", f.src),
            ));
        }
        if !(f.rate.is_finite() && f.rate > 0.0) {
            return Err(bad(
                "rate",
                format!("{}: must be a positive number of flits/cycle", f.rate),
            ));
        }
        (0..self.fabric.num_paths())
            .map(|k| {
                let hops = self
                    .fabric
                    .trace_path(self.topo, EndpointId(f.src), EndpointId(f.dst), 0, k)
                    .map_err(|e| CacError::Flow {
                        index,
                        key: None,
                        message: format!("path {k} from {} to {}: {e}", f.src, f.dst),
                    })?;
                let mut links = Vec::with_capacity(hops.len() + 1);
                links.push(f.src as usize);
                links.extend(
                    hops.iter()
                        .map(|h| n + self.topo.port_index(h.switch, h.out_port)),
                );
                Ok(links)
            })
            .collect()
    }

    /// The link of resource `r`.
    fn link(&self, r: usize) -> LinkRef {
        let t = self.topo;
        let n = t.num_endpoints();
        let endpoint = |e: u32| Place::Node {
            endpoint: e,
            name: t.endpoints()[e as usize].name.clone(),
        };
        let port = |s: SwitchId, p| Place::Port {
            switch: t.switches()[s.0 as usize].name.clone(),
            port: p,
        };
        let (from, to) = if r < n {
            let (s, p) = t.endpoint_switch(EndpointId(r as u32));
            (endpoint(r as u32), port(s, p))
        } else {
            let (s, p) = self.port_of(r - n);
            let to = match t.switch_peer(s, p).map(|peer| peer.remote) {
                Some(remote) => match remote.node {
                    NodeId::Endpoint(e) => endpoint(e),
                    NodeId::Switch(x) => port(SwitchId(x), remote.port),
                },
                // Paths leave only through connected ports.
                None => port(s, p),
            };
            (port(s, p), to)
        };
        LinkRef {
            name: format!("{from} → {to}"),
            from,
            to,
            capacity: self.cap[r],
        }
    }

    /// The switch and port of switch-port index `i` (the last switch whose first port index
    /// is at most `i`).
    fn port_of(&self, i: usize) -> (SwitchId, flitsim_topology::PortNum) {
        let t = self.topo;
        let (mut lo, mut hi) = (0usize, t.num_switches());
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if t.port_index(SwitchId(mid as u32), 0) <= i {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let s = SwitchId(lo as u32);
        (s, (i - t.port_index(s, 0)) as flitsim_topology::PortNum)
    }
}

/// Checks a limit on a link's load: a number in `(0, 1]`.
pub fn check_limit(limit: f64) -> Result<(), CacError> {
    if limit.is_finite() && limit > 0.0 && limit <= 1.0 {
        Ok(())
    } else {
        Err(CacError::Limit(limit))
    }
}

/// Orders two paths by their link loads sorted from the highest, compared position by position
/// within [`EPS`] (a missing position is load 0): `Less` when `a` is the less occupied.
fn less_occupied(a: &[f64], b: &[f64]) -> Ordering {
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (
            a.get(i).copied().unwrap_or(0.0),
            b.get(i).copied().unwrap_or(0.0),
        );
        if x < y - EPS {
            return Ordering::Less;
        }
        if x > y + EPS {
            return Ordering::Greater;
        }
    }
    Ordering::Equal
}

/// Runs admission control over `flows` in order on `fabric`'s paths in `topo`, keeping every
/// link's QoS load within `limit`; see the [module documentation](self).
pub fn admit(
    topo: &Topology,
    fabric: &FabricConfig,
    flows: &[FlowRequest],
    limit: f64,
) -> Result<CacReport, CacError> {
    let mut cac = AdmissionControl::new(topo, fabric, limit)?;
    let mut report = CacReport {
        limit,
        paths: fabric.num_paths(),
        admitted: Vec::new(),
        rejected: Vec::new(),
        unregulated: Vec::new(),
        links: Vec::new(),
    };
    for f in flows {
        match cac.request(f)? {
            Decision::Admitted(a) => report.admitted.push(a),
            Decision::Rejected(r) => report.rejected.push(r),
            Decision::Unregulated(u) => report.unregulated.push(u),
        }
    }
    report.links = cac.links();
    Ok(report)
}

#[cfg(test)]
#[path = "cac_tests.rs"]
mod tests;
