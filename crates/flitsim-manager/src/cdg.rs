//! Channel dependency graph (CDG): the deadlock-freedom check for routing tables.
//!
//! A *channel* is one VL of a directed switch-to-switch link, named by the switch output port
//! it leaves from. A packet holding channel `a` that next requests channel `b` creates the
//! *dependency* `a → b`. For deterministic routing on a lossless network, the tables are
//! deadlock-free exactly when this graph has no cycle (Dally & Seitz 1987, "Deadlock-free
//! message routing in multiprocessor interconnection networks"; see also Duato, Yalamanchili &
//! Ni, *Interconnection Networks: An Engineering Approach*, for the general theory). Links
//! from and to endpoints are left out: an injection link has no incoming dependency and an
//! ejection link no outgoing one (endpoints always consume), so neither can lie on a cycle.
//!
//! The graph is built from the tables themselves, from every (source, destination, class,
//! path) route as [`FabricConfig::trace`] follows it, so it checks exactly what a simulator
//! or a switch would execute, VL changes included. Routes to one destination that share a
//! channel share everything after it, so each channel is followed once per destination,
//! path and SL rather than once per source (see [`build_cdg`]).
//!
//! ```
//! use flitsim_manager::{cdg, route, RoutingRequest};
//! use flitsim_topology::generators;
//!
//! let topo = generators::torus(&[4, 4], 1, 1, 1).unwrap();
//! let fabric = route(&topo, "minhop", &RoutingRequest { vls: 1, classes: 1 }).unwrap();
//! let report = cdg::verify(&topo, &fabric).unwrap();
//! assert!(!report.deadlock_free);
//! println!("cycle: {:?}", report.cycle.unwrap());
//! ```
use crate::{FabricConfig, RoutingError, NO_ROUTE};
use flitsim_topology::{EndpointId, NodeId, PortNum, Sl, SwitchId, Topology};
use serde::{Deserialize, Serialize};

/// One VL of the directed link that leaves `switch` through `port`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Channel {
    /// Switch the link leaves from.
    pub switch: SwitchId,
    /// Output port of that switch.
    pub port: PortNum,
    /// Virtual lane on the link.
    pub vl: u8,
}

/// Verdict for the dependencies that stay on one VL.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VlVerdict {
    /// The VL.
    pub vl: u8,
    /// Channels on this VL that carry at least one path.
    pub channels: usize,
    /// Dependencies between two channels of this VL.
    pub dependencies: usize,
    /// The subgraph of same-VL dependencies has no cycle.
    pub acyclic: bool,
}

/// Result of [`verify`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CdgReport {
    /// The whole graph, including dependencies that change VL, is acyclic: the tables cannot
    /// deadlock.
    pub deadlock_free: bool,
    /// Channels that carry at least one path.
    pub channels: usize,
    /// Distinct dependencies.
    pub dependencies: usize,
    /// One verdict per VL, in VL order (`num_vls` entries). Every VL acyclic is necessary for
    /// deadlock freedom but not sufficient when paths change VL; `deadlock_free` decides.
    pub per_vl: Vec<VlVerdict>,
    /// One dependency cycle when not deadlock-free: each channel depends on the next and the
    /// last on the first (which is not repeated at the end).
    pub cycle: Option<Vec<Channel>>,
}

/// A channel dependency graph in compressed sparse row form.
///
/// Channel `(switch, port, vl)` is node `topo.port_index(switch, port) · num_vls + vl`; the
/// successors of a node are sorted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cdg {
    num_vls: usize,
    /// First dense port index of each switch, then the total number of ports.
    port_base: Vec<u32>,
    /// The switch owning each dense port index.
    port_switch: Vec<u32>,
    /// Whether each node carries at least one path.
    used: Vec<bool>,
    /// `targets[offsets[u]..offsets[u + 1]]` are the successors of node `u`.
    offsets: Vec<usize>,
    targets: Vec<u32>,
}

/// Raw edge lists are compacted (sorted and deduplicated) whenever they grow past twice their
/// last compacted size, and never below this many entries.
const COMPACT_MIN: usize = 1 << 20;

/// Builds the channel dependency graph of `fabric` on `topo` from every (source, destination,
/// class, path) route — every path of a multipath fabric, as all LIDs of an LMC port. Fails if the tables do not fit the topology ([`FabricConfig::check_shape`]) or
/// if any path is unroutable or loops ([`FabricConfig::trace`]).
///
/// The paths are not traced one by one. For a fixed destination, path index and wire SL, the
/// channel a packet takes next is a function of the channel it holds (the switch and port
/// the channel leads to, the table entry for the destination there, the SL→VL entry for that
/// in-port, out-port and SL). So once a path reaches a channel that an earlier path of the
/// same (destination, path, SL) already took, the rest of its dependencies are known: each
/// channel is walked once per (destination, path, SL) instead of once per source —
/// O(destinations · channels) instead of O(endpoints² · hops). Every path's length is still
/// checked (each channel keeps the length of the path that remains from it). On any error
/// the paths are traced one by one in (source, destination, class, path) order, so the error
/// is the one the first failing path gives.
pub fn build_cdg(topo: &Topology, fabric: &FabricConfig) -> Result<Cdg, RoutingError> {
    let (nv, nodes) = channel_space(topo, fabric)?;
    match walk_cdg(topo, fabric, nv, nodes)? {
        Some(edges) => Ok(assemble(topo, nv, edges)),
        None => build_cdg_by_paths(topo, fabric),
    }
}

/// The VLs per link and the number of channels (CDG nodes) of `fabric` on `topo`, once the
/// tables are checked to fit it.
fn channel_space(topo: &Topology, fabric: &FabricConfig) -> Result<(usize, usize), RoutingError> {
    fabric.check_shape(topo)?;
    let nv = fabric.num_vls as usize;
    let nodes = topo.total_switch_ports() * nv;
    if nodes > u32::MAX as usize {
        return Err(RoutingError::InvalidTables(format!(
            "{nodes} channels are too many for the CDG"
        )));
    }
    Ok((nv, nodes))
}

/// The channels used and the dependencies (packed `from << 32 | to`) of a fabric, or `None`
/// when some path fails.
type Walked = Option<(Vec<bool>, Vec<u64>)>;

/// Channels reached once per (destination, path, SL); see [`build_cdg`]. Destinations are
/// shared out among threads, each with its own marks; the union of their channels and
/// dependencies does not depend on how. `Ok(None)` when some path fails (the caller traces
/// them one by one for the error).
fn walk_cdg(
    topo: &Topology,
    fabric: &FabricConfig,
    nv: usize,
    nodes: usize,
) -> Result<Walked, RoutingError> {
    use rayon::prelude::*;
    let n_ep = topo.num_endpoints() as u32;
    let pieces = 4 * rayon::current_num_threads();
    (0..n_ep)
        .into_par_iter()
        .with_min_len((n_ep as usize / pieces).max(1))
        .fold(
            || Walker::new(nodes, fabric.wire_sls()),
            |mut w, dst| {
                if w.state.is_none() {
                    if let Err(e) = flitsim_topology::cancel::check() {
                        w.state = Some(Err(e.into()));
                    } else if !w.destination(topo, fabric, nv, dst) {
                        w.state = Some(Ok(()));
                    }
                }
                w
            },
        )
        .map(Walker::finish)
        .reduce(|| Ok(Some((Vec::new(), Vec::new()))), merge_walks)
}

/// The union of two threads' walks: an error (cancellation) wins, then a failing path.
fn merge_walks(
    a: Result<Walked, RoutingError>,
    b: Result<Walked, RoutingError>,
) -> Result<Walked, RoutingError> {
    let (Some((mut used, mut edges)), Some((used_b, edges_b))) = (a?, b?) else {
        return Ok(None);
    };
    if used.is_empty() {
        return Ok(Some((used_b, edges_b)));
    }
    if !used_b.is_empty() {
        used.iter_mut().zip(&used_b).for_each(|(x, y)| *x |= *y);
    }
    edges.extend(edges_b);
    edges.sort_unstable();
    edges.dedup();
    Ok(Some((used, edges)))
}

/// What a thread's walks know of a channel.
#[derive(Clone, Copy)]
struct Mark {
    /// The last (destination, path, SL) that took the channel, and the channels from it to
    /// the destination then (itself included).
    group: u32,
    rest: u32,
    /// The last path that took it (a path that takes a channel twice loops).
    walk: u32,
    /// The last dependency recorded from it.
    succ: u32,
}

impl Default for Mark {
    fn default() -> Self {
        Mark {
            group: 0,
            rest: 0,
            walk: 0,
            succ: u32::MAX,
        }
    }
}

/// One thread's part of [`walk_cdg`]: its marks and what it found.
struct Walker {
    used: Vec<bool>,
    edges: Vec<u64>,
    compact_at: usize,
    /// Per channel, what the walks know of it (one line of memory per channel visited).
    marks: Vec<Mark>,
    g: u32,
    w: u32,
    /// Scratch: each source's wire SL, the sources ordered by SL, sources per SL.
    sls: Vec<u8>,
    by_sl: Vec<u32>,
    count: Vec<u32>,
    taken: Vec<u32>,
    /// `Some(Ok(()))`: a path failed; `Some(Err(_))`: cancelled; `None`: going on.
    state: Option<Result<(), RoutingError>>,
}

impl Walker {
    fn new(nodes: usize, wire_sls: usize) -> Self {
        Walker {
            used: vec![false; nodes],
            edges: Vec::new(),
            compact_at: COMPACT_MIN,
            marks: vec![Mark::default(); nodes],
            g: 0,
            w: 0,
            sls: Vec::new(),
            by_sl: Vec::new(),
            count: vec![0; wire_sls + 1],
            taken: Vec::new(),
            state: None,
        }
    }

    fn finish(mut self) -> Result<Walked, RoutingError> {
        match self.state {
            Some(Err(e)) => Err(e),
            Some(Ok(())) => Ok(None),
            None => {
                self.edges.sort_unstable();
                self.edges.dedup();
                Ok(Some((self.used, self.edges)))
            }
        }
    }

    /// Every path to `dst`, of every class and path index. False when one fails.
    fn destination(&mut self, topo: &Topology, fabric: &FabricConfig, nv: usize, dst: u32) -> bool {
        let n_ep = topo.num_endpoints();
        let n_sw = topo.num_switches();
        for class in 0..fabric.classes {
            for k in 0..fabric.num_paths() {
                // The sources by wire SL (a counting sort: SLs are few).
                self.sls.clear();
                self.sls.extend((0..n_ep as u32).map(|src| {
                    fabric
                        .wire_sl_on(Sl(class), EndpointId(src), EndpointId(dst), n_ep, k)
                        .0
                }));
                self.count.fill(0);
                for &sl in &self.sls {
                    self.count[sl as usize + 1] += 1;
                }
                for i in 1..self.count.len() {
                    self.count[i] += self.count[i - 1];
                }
                self.by_sl.resize(n_ep, 0);
                for (src, &sl) in self.sls.iter().enumerate() {
                    let at = &mut self.count[sl as usize];
                    self.by_sl[*at as usize] = src as u32;
                    *at += 1;
                }
                let mut last_sl = None;
                for i in 0..n_ep {
                    let src = self.by_sl[i];
                    let sl = self.sls[src as usize];
                    if last_sl != Some(sl) {
                        last_sl = Some(sl);
                        self.g = next_stamp(self.g, &mut self.marks, |m| m.group = 0);
                    }
                    if !self.path(topo, fabric, nv, n_sw, (src, dst), k, Sl(sl)) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// The path `src → dst` (path `k`, wire SL `sl`) up to the first channel of its group
    /// already walked. False when it fails.
    #[allow(clippy::too_many_arguments)]
    fn path(
        &mut self,
        topo: &Topology,
        fabric: &FabricConfig,
        nv: usize,
        n_sw: usize,
        (src, dst): (u32, u32),
        k: usize,
        sl: Sl,
    ) -> bool {
        self.w = next_stamp(self.w, &mut self.marks, |m| m.walk = 0);
        self.taken.clear();
        let (mut s, mut in_port) = topo.endpoint_switch(EndpointId(src));
        // The channels after the last one taken (0: the path ends there).
        let mut beyond = 0u32;
        loop {
            let out = fabric.port(k, s.0, dst);
            if out == NO_ROUTE {
                return false;
            }
            let Some(r) = topo.switch_peer(s, out).map(|p| p.remote) else {
                return false;
            };
            let t = match r.node {
                NodeId::Endpoint(e) if e == dst => break,
                NodeId::Endpoint(_) => return false,
                NodeId::Switch(t) => t,
            };
            let vl = fabric.vl(s, in_port, out, sl).0 as usize;
            let c = (topo.port_index(s, out) * nv + vl) as u32;
            if let Some(&p) = self.taken.last() {
                // Paths to many destinations share a dependency: skip the repeat of the last.
                let m = &mut self.marks[p as usize];
                if m.succ != c {
                    m.succ = c;
                    self.edges.push((p as u64) << 32 | c as u64);
                }
            }
            let m = &mut self.marks[c as usize];
            if m.walk == self.w {
                return false; // the path loops
            }
            if m.group == self.g {
                beyond = m.rest;
                break;
            }
            m.walk = self.w;
            self.used[c as usize] = true;
            self.taken.push(c);
            if self.taken.len() > n_sw {
                return false; // longer than any path without a loop
            }
            s = SwitchId(t);
            in_port = r.port;
        }
        if self.taken.len() + beyond as usize > n_sw {
            return false;
        }
        let n = self.taken.len();
        for (i, &c) in self.taken.iter().enumerate() {
            let m = &mut self.marks[c as usize];
            m.group = self.g;
            m.rest = (n - i) as u32 + beyond;
        }
        if self.edges.len() >= self.compact_at {
            self.edges.sort_unstable();
            self.edges.dedup();
            self.compact_at = (2 * self.edges.len()).max(COMPACT_MIN);
        }
        true
    }
}

/// The next stamp after `s`; when the counter would wrap, every mark's stamp is cleared
/// first (by `clear`).
fn next_stamp(s: u32, marks: &mut [Mark], clear: impl Fn(&mut Mark)) -> u32 {
    if s == u32::MAX {
        marks.iter_mut().for_each(clear);
        return 1;
    }
    s + 1
}

/// The CDG from its used channels and raw edges.
fn assemble(topo: &Topology, nv: usize, (used, mut edges): (Vec<bool>, Vec<u64>)) -> Cdg {
    edges.sort_unstable();
    edges.dedup();
    let mut port_base: Vec<u32> = (0..topo.num_switches() as u32)
        .map(|s| topo.port_index(SwitchId(s), 0) as u32)
        .collect();
    port_base.push(topo.total_switch_ports() as u32);
    let mut port_switch = Vec::with_capacity(topo.total_switch_ports());
    for (s, w) in port_base.windows(2).enumerate() {
        port_switch.resize(port_switch.len() + (w[1] - w[0]) as usize, s as u32);
    }
    Cdg::from_sorted_edges(nv, port_base, port_switch, used, &edges)
}

/// [`build_cdg`] by tracing every path with [`FabricConfig::trace_path`], in (source,
/// destination, class, path) order: the reference the walk is tested against, and what
/// names the first failing path.
fn build_cdg_by_paths(topo: &Topology, fabric: &FabricConfig) -> Result<Cdg, RoutingError> {
    let fabric = &*fabric.stored();
    let (nv, nodes) = channel_space(topo, fabric)?;
    let mut used = vec![false; nodes];
    // Edge (a, b) is packed as a << 32 | b, so sorting orders by source, then target.
    let mut edges: Vec<u64> = Vec::new();
    let mut compact_at = COMPACT_MIN;
    let mut path_channels: Vec<u32> = Vec::new();
    let n_ep = topo.num_endpoints() as u32;
    for src in 0..n_ep {
        flitsim_topology::cancel::check()?;
        for (dst, class, k) in (0..n_ep).flat_map(|d| {
            (0..fabric.classes).flat_map(move |c| (0..fabric.num_paths()).map(move |k| (d, c, k)))
        }) {
            {
                let hops = fabric.trace_path(topo, EndpointId(src), EndpointId(dst), class, k)?;
                path_channels.clear();
                // Every hop but the last leaves towards another switch; the last one ejects.
                path_channels.extend(
                    hops[..hops.len() - 1].iter().map(|h| {
                        (topo.port_index(h.switch, h.out_port) * nv + h.vl as usize) as u32
                    }),
                );
                for &c in &path_channels {
                    used[c as usize] = true;
                }
                edges.extend(
                    path_channels
                        .windows(2)
                        .map(|w| (w[0] as u64) << 32 | w[1] as u64),
                );
                if edges.len() >= compact_at {
                    edges.sort_unstable();
                    edges.dedup();
                    compact_at = (2 * edges.len()).max(COMPACT_MIN);
                }
            }
        }
    }
    Ok(assemble(topo, nv, (used, edges)))
}

/// Builds the CDG of `fabric` on `topo` and analyses it; see [`Cdg::report`]. Fails with
/// [`RoutingError::Cancelled`] when [`flitsim_topology::cancel`] is requested meanwhile.
pub fn verify(topo: &Topology, fabric: &FabricConfig) -> Result<CdgReport, RoutingError> {
    let report = build_cdg(topo, fabric)?.report();
    // The searches of `report` stop early, with an incomplete verdict, when cancelled.
    flitsim_topology::cancel::check()?;
    Ok(report)
}

impl Cdg {
    /// Assembles the CSR arrays from packed, sorted, deduplicated edges.
    fn from_sorted_edges(
        num_vls: usize,
        port_base: Vec<u32>,
        port_switch: Vec<u32>,
        used: Vec<bool>,
        edges: &[u64],
    ) -> Self {
        let nodes = used.len();
        let mut offsets = vec![0usize; nodes + 1];
        for &e in edges {
            offsets[(e >> 32) as usize + 1] += 1;
        }
        for i in 0..nodes {
            offsets[i + 1] += offsets[i];
        }
        let targets = edges.iter().map(|&e| e as u32).collect();
        Cdg {
            num_vls,
            port_base,
            port_switch,
            used,
            offsets,
            targets,
        }
    }

    /// Number of VLs per link.
    pub fn num_vls(&self) -> u8 {
        self.num_vls as u8
    }

    /// Number of channels that carry at least one path.
    pub fn num_channels(&self) -> usize {
        self.used.iter().filter(|&&u| u).count()
    }

    /// Number of distinct dependencies.
    pub fn num_dependencies(&self) -> usize {
        self.targets.len()
    }

    /// The channel of node `i`.
    fn channel(&self, i: usize) -> Channel {
        let (p, vl) = (i / self.num_vls, i % self.num_vls);
        let s = self.port_switch[p];
        Channel {
            switch: SwitchId(s),
            port: (p as u32 - self.port_base[s as usize]) as PortNum,
            vl: vl as u8,
        }
    }

    /// The node of channel `c`, if the switch, port and VL exist.
    fn node(&self, c: Channel) -> Option<usize> {
        let s = c.switch.0 as usize;
        let base = *self.port_base.get(s)? as usize;
        let ports = *self.port_base.get(s + 1)? as usize - base;
        ((c.port as usize) < ports && (c.vl as usize) < self.num_vls)
            .then(|| (base + c.port as usize) * self.num_vls + c.vl as usize)
    }

    fn successor_nodes(&self, u: usize) -> &[u32] {
        &self.targets[self.offsets[u]..self.offsets[u + 1]]
    }

    /// Whether channel `c` carries at least one path.
    pub fn contains(&self, c: Channel) -> bool {
        self.node(c).is_some_and(|i| self.used[i])
    }

    /// Whether some path uses channel `to` right after channel `from`.
    pub fn has_dependency(&self, from: Channel, to: Channel) -> bool {
        match (self.node(from), self.node(to)) {
            (Some(a), Some(b)) => self.successor_nodes(a).binary_search(&(b as u32)).is_ok(),
            _ => false,
        }
    }

    /// Channels that carry at least one path, in node order.
    pub fn channels(&self) -> impl Iterator<Item = Channel> + '_ {
        self.used
            .iter()
            .enumerate()
            .filter(|(_, &u)| u)
            .map(|(i, _)| self.channel(i))
    }

    /// The channels that some path uses right after `c`.
    pub fn successors(&self, c: Channel) -> impl Iterator<Item = Channel> + '_ {
        self.node(c)
            .map_or(&[][..], |i| self.successor_nodes(i))
            .iter()
            .map(|&j| self.channel(j as usize))
    }

    /// Every dependency `(from, to)`, sorted by node order.
    pub fn dependencies(&self) -> impl Iterator<Item = (Channel, Channel)> + '_ {
        (0..self.used.len()).flat_map(move |u| {
            self.successor_nodes(u)
                .iter()
                .map(move |&v| (self.channel(u), self.channel(v as usize)))
        })
    }

    /// Iterative three-colour depth-first search over the dependencies accepted by `keep`.
    /// For every back edge `path.last() → v` (with `v` on `path`, the grey chain from the
    /// search root) it calls `on_back_edge(path, v)`, and stops as soon as that returns true.
    /// Runs in O(nodes + dependencies) without recursion, so graph size is not limited by the
    /// call stack. Stops early when [`flitsim_topology::cancel`] is requested.
    fn search(
        &self,
        keep: impl Fn(usize, usize) -> bool,
        mut on_back_edge: impl FnMut(&[u32], usize) -> bool,
    ) {
        const WHITE: u8 = 0;
        const GREY: u8 = 1;
        const BLACK: u8 = 2;
        let nodes = self.used.len();
        let mut colour = vec![WHITE; nodes];
        let mut path: Vec<u32> = Vec::new();
        let mut cursor: Vec<usize> = Vec::new();
        for root in 0..nodes {
            if flitsim_topology::cancel::is_requested() {
                return;
            }
            // A node without successors cannot start a cycle.
            if colour[root] != WHITE || self.offsets[root] == self.offsets[root + 1] {
                continue;
            }
            colour[root] = GREY;
            path.push(root as u32);
            cursor.push(self.offsets[root]);
            while let (Some(&u), Some(next)) = (path.last(), cursor.last_mut()) {
                let u = u as usize;
                if *next == self.offsets[u + 1] {
                    colour[u] = BLACK;
                    path.pop();
                    cursor.pop();
                    continue;
                }
                let v = self.targets[*next] as usize;
                *next += 1;
                if !keep(u, v) {
                    continue;
                }
                match colour[v] {
                    WHITE => {
                        colour[v] = GREY;
                        path.push(v as u32);
                        cursor.push(self.offsets[v]);
                    }
                    GREY if on_back_edge(&path, v) => return,
                    _ => {}
                }
            }
        }
    }

    /// One dependency cycle, if the graph has any: each channel depends on the next and the
    /// last on the first.
    pub fn find_cycle(&self) -> Option<Vec<Channel>> {
        let mut cycle = None;
        self.search(
            |_, _| true,
            |path, v| {
                let start = path
                    .iter()
                    .rposition(|&x| x as usize == v)
                    .expect("a grey node is on the DFS path");
                cycle = Some(
                    path[start..]
                        .iter()
                        .map(|&i| self.channel(i as usize))
                        .collect(),
                );
                true
            },
        );
        cycle
    }

    /// Analyses the graph: per-VL acyclicity of the same-VL dependencies, and acyclicity of
    /// the whole graph (the deadlock-freedom verdict) with a witness cycle if it fails.
    pub fn report(&self) -> CdgReport {
        let nv = self.num_vls;
        let mut per_vl: Vec<VlVerdict> = (0..nv)
            .map(|vl| VlVerdict {
                vl: vl as u8,
                channels: 0,
                dependencies: 0,
                acyclic: true,
            })
            .collect();
        for (i, _) in self.used.iter().enumerate().filter(|(_, &u)| u) {
            per_vl[i % nv].channels += 1;
        }
        for u in 0..self.used.len() {
            for &v in self.successor_nodes(u) {
                if u % nv == v as usize % nv {
                    per_vl[u % nv].dependencies += 1;
                }
            }
        }
        // Nodes of different VLs are disjoint, so one search over same-VL edges checks every
        // VL's subgraph; a back edge marks its VL cyclic and the search goes on.
        self.search(
            |u, v| u % nv == v % nv,
            |_, v| {
                per_vl[v % nv].acyclic = false;
                false
            },
        );
        let cycle = self.find_cycle();
        CdgReport {
            deadlock_free: cycle.is_none(),
            channels: self.num_channels(),
            dependencies: self.num_dependencies(),
            per_vl,
            cycle,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NO_ROUTE;
    use flitsim_topology::generators;

    /// Tables for a unidirectional ring: every switch forwards remote destinations "+"
    /// (port 0). With `routing_sls` path SLs, `path_sl(src, dst)` picks a path's SL and
    /// `vl_of(switch, sl)` the VL of a switch's outgoing hops.
    fn clockwise_ring(
        sides: u32,
        vls: u8,
        routing_sls: u8,
        path_sl: impl Fn(u32, u32) -> u8,
        vl_of: impl Fn(u32, u8) -> u8,
    ) -> (Topology, FabricConfig) {
        let topo = generators::torus(&[sides], 1, 1, 1).unwrap();
        let lft = (0..sides)
            .map(|s| (0..sides).map(|e| if e == s { 2 } else { 0 }).collect())
            .collect();
        let sl2vl =
            FabricConfig::build_sl2vl(&topo, routing_sls as usize, |s, _, _, sl| vl_of(s.0, sl));
        let path_sl = if routing_sls > 1 {
            (0..sides * sides)
                .map(|i| path_sl(i / sides, i % sides))
                .collect()
        } else {
            vec![]
        };
        let fabric = FabricConfig {
            alt_paths: Vec::new(),
            engine: "test".into(),
            num_vls: vls,
            classes: 1,
            routing_sls,
            layers: 0,
            lft,
            path_sl,
            sl2vl,
            nic_sl2vl: vec![0; routing_sls as usize],
            ports: FabricConfig::port_counts(&topo),
            rule: None,
        };
        (topo, fabric)
    }

    /// One VL, one SL: the plain unidirectional ring.
    fn plain_ring() -> (Topology, FabricConfig) {
        clockwise_ring(4, 1, 1, |_, _| 0, |_, _| 0)
    }

    #[test]
    fn a_clockwise_ring_has_exactly_the_ring_cycle() {
        let (topo, fabric) = plain_ring();
        let graph = build_cdg(&topo, &fabric).unwrap();
        assert_eq!(graph.num_channels(), 4);
        assert_eq!(graph.num_dependencies(), 4);
        let report = graph.report();
        assert!(!report.deadlock_free);
        assert_eq!(
            report.per_vl,
            [VlVerdict {
                vl: 0,
                channels: 4,
                dependencies: 4,
                acyclic: false
            }]
        );
        let mut cycle = report.cycle.unwrap();
        assert_eq!(cycle.len(), 4);
        let first = cycle.iter().position(|c| c.switch == SwitchId(0)).unwrap();
        cycle.rotate_left(first);
        let expected: Vec<Channel> = (0..4)
            .map(|s| Channel {
                switch: SwitchId(s),
                port: 0,
                vl: 0,
            })
            .collect();
        assert_eq!(cycle, expected);
        for (i, &c) in expected.iter().enumerate() {
            assert!(graph.has_dependency(c, expected[(i + 1) % 4]));
            assert_eq!(
                graph.successors(c).collect::<Vec<_>>(),
                [expected[(i + 1) % 4]]
            );
        }
        assert!(!graph.has_dependency(expected[1], expected[0]));
        assert_eq!(graph.channels().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn a_cycle_through_vl_changes_is_caught_though_every_vl_is_acyclic() {
        // Even switches send on VL 0, odd ones on VL 1: no dependency stays on one VL, yet the
        // dependencies still go round the ring.
        let (topo, fabric) = clockwise_ring(4, 2, 1, |_, _| 0, |s, _| (s % 2) as u8);
        let report = verify(&topo, &fabric).unwrap();
        assert!(report
            .per_vl
            .iter()
            .all(|v| v.acyclic && v.dependencies == 0 && v.channels == 2));
        assert!(!report.deadlock_free);
        let cycle = report.cycle.unwrap();
        assert_eq!(cycle.len(), 4);
        assert!(cycle.iter().all(|c| c.vl == (c.switch.0 % 2) as u8));
    }

    #[test]
    fn a_dateline_breaks_the_ring_cycle() {
        // Dally & Seitz's dateline: packets start on VL 0 and move to VL 1 once they have
        // crossed the wrap link 3 → 0. The path SL carries the source switch, and switch `s`
        // sends on VL 1 exactly when `s < src`, i.e. after the wrap.
        let (topo, fabric) =
            clockwise_ring(4, 2, 4, |src, _| src as u8, |s, sl| u8::from(s < sl as u32));
        let graph = build_cdg(&topo, &fabric).unwrap();
        let report = graph.report();
        assert!(report.deadlock_free, "{:?}", report.cycle);
        let c = |s: u32, vl: u8| Channel {
            switch: SwitchId(s),
            port: 0,
            vl,
        };
        // VL 0 is the chain 0 → 1 → 2 → 3, cut at the wrap link, which hands over to VL 1.
        assert!(graph.has_dependency(c(2, 0), c(3, 0)));
        assert!(graph.has_dependency(c(3, 0), c(0, 1)));
        assert!(!graph.has_dependency(c(3, 0), c(0, 0)));
        assert_eq!(report.per_vl[0].dependencies, 3);
        assert_eq!(report.per_vl[1].dependencies, 1);
        // Without the VL change the same paths close the ring.
        let (topo, fabric) = clockwise_ring(4, 2, 4, |src, _| src as u8, |_, _| 0);
        assert!(!verify(&topo, &fabric).unwrap().deadlock_free);
    }

    /// `build_cdg` (each channel walked once per destination, path and SL) gives the graph
    /// tracing every path gives, on tori, meshes, trees and random fabrics routed by every
    /// engine that routes them, with several VLs, classes, paths per destination and by rule.
    #[test]
    fn the_walk_gives_the_graph_of_every_path() {
        use crate::routing::{engine_by_name, rule::route_computed, RoutingRequest, ENGINE_NAMES};
        use flitsim_topology::generators::{random, RandomParams};
        let mut topos = vec![
            generators::torus(&[4, 4], 2, 1, 1).unwrap(),
            generators::torus(&[5, 3], 1, 2, 1).unwrap(),
            generators::torus_or_mesh(&[3, 4], 2, 1, 1, false).unwrap(),
            generators::kary_ntree(2, 3, 1).unwrap(),
            generators::kary_ntree(4, 2, 1).unwrap(),
        ];
        for seed in 1..=3 {
            topos.push(
                random(&RandomParams {
                    switches: 12,
                    ports: 8,
                    endpoints_per_switch: 2,
                    links: 18,
                    multi_links: false,
                    latency: 1,
                    seed,
                })
                .unwrap(),
            );
        }
        let mut compared = 0;
        for topo in &topos {
            for name in ENGINE_NAMES {
                let engine = engine_by_name(name).unwrap();
                for (vls, classes) in [(1, 1), (2, 1), (4, 2), (8, 1)] {
                    let req = RoutingRequest { vls, classes };
                    for paths in [1, 2] {
                        let Ok(fabric) = engine.route_paths(topo, &req, paths) else {
                            continue;
                        };
                        let what = format!("{} {name} {req:?} paths {paths}", topo.name());
                        let walked = build_cdg(topo, &fabric).map_err(|e| e.to_string());
                        let traced = build_cdg_by_paths(topo, &fabric).map_err(|e| e.to_string());
                        assert_eq!(walked, traced, "{what}");
                        compared += 1;
                    }
                    if let Ok(Some(f)) = route_computed(topo, name, &req) {
                        let walked = build_cdg(topo, &f).unwrap();
                        assert_eq!(walked, build_cdg_by_paths(topo, &f).unwrap());
                        assert!(f.rule.is_some());
                    }
                }
            }
        }
        assert!(compared > 100, "only {compared} fabrics compared");
    }

    /// Broken tables give the error of the first failing path, as tracing every path does.
    #[test]
    fn the_walk_reports_the_first_failing_path() {
        let (topo, mut fabric) = plain_ring();
        fabric.lft[1][2] = 1;
        fabric.lft[3][0] = NO_ROUTE;
        let walked = build_cdg(&topo, &fabric).unwrap_err().to_string();
        let traced = build_cdg_by_paths(&topo, &fabric).unwrap_err().to_string();
        assert_eq!(walked, traced);
        assert!(
            walked.contains("no route") || walked.contains("loops"),
            "{walked}"
        );
    }

    #[test]
    fn table_errors_are_reported() {
        let (topo, mut fabric) = plain_ring();
        // 0 → 1 → 0 → … for endpoint 2.
        fabric.lft[1][2] = 1;
        assert!(matches!(
            build_cdg(&topo, &fabric),
            Err(RoutingError::Loop(_))
        ));
        fabric.lft[1][2] = NO_ROUTE;
        assert!(matches!(
            build_cdg(&topo, &fabric),
            Err(RoutingError::Unroutable(_))
        ));
        let (topo, mut fabric) = plain_ring();
        fabric.sl2vl[0][0] = 3;
        assert!(matches!(
            verify(&topo, &fabric),
            Err(RoutingError::InvalidTables(_))
        ));
    }

    #[test]
    fn deep_graphs_do_not_exhaust_the_stack() {
        // A single chain of 300 000 channels closed into a cycle, one port per switch.
        let n = 300_000usize;
        let port_base: Vec<u32> = (0..=n as u32).collect();
        let port_switch: Vec<u32> = (0..n as u32).collect();
        let edges: Vec<u64> = (0..n as u64)
            .map(|i| i << 32 | ((i + 1) % n as u64))
            .collect();
        let mut sorted = edges.clone();
        sorted.sort_unstable();
        let graph = Cdg::from_sorted_edges(
            1,
            port_base.clone(),
            port_switch.clone(),
            vec![true; n],
            &sorted,
        );
        let report = graph.report();
        assert!(!report.deadlock_free && !report.per_vl[0].acyclic);
        assert_eq!(report.cycle.unwrap().len(), n);
        // Without the closing edge the chain is acyclic.
        let graph =
            Cdg::from_sorted_edges(1, port_base, port_switch, vec![true; n], &sorted[..n - 1]);
        let report = graph.report();
        assert!(report.deadlock_free && report.per_vl[0].acyclic && report.cycle.is_none());
    }
}
