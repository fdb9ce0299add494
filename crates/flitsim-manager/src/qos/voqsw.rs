//! VOQsw: SL→VL tables and per-destination SLs that emulate virtual output queues on
//! InfiniBand switches (Gómez et al., *VOQsw: A Methodology to Reduce HOL Blocking in
//! InfiniBand Networks*, `shared/papers/003_4413e6af2e2b3309.txt`, §3, Figures 4 and 5), and
//! the virtual-network baseline of its §4.2 ([`virtual_networks`]).
//!
//! A *4-tuple* `(switch, in, out, next_out)` names a hop: a packet enters `switch` by port
//! `in`, leaves by `out` towards another switch, and leaves that next switch by `next_out`.
//! VOQ at the next switch means that packets of the same input link headed for different
//! output ports sit in different VLs. The VL a packet uses at the next switch is chosen at
//! `switch` by its SL→VL table, indexed by `(in, out, SL)` only, so two *neighbour* 4-tuples
//! (same `switch`, `in`, `out`, different `next_out`) must be travelled with different SLs;
//! the SL is set once by the sender, per destination, for the whole path.
//!
//! The five stages of Figure 4 ([`analyse`] runs 1–4, [`Voqsw::tables`] stage 5):
//!
//! 1. trace every ordered endpoint pair `src ≠ dst` through the forwarding tables (per
//!    destination, so each switch's next hop is looked up once) and collect the 4-tuples the
//!    paths use; hops that deliver to an endpoint have no next switch and no 4-tuple;
//! 2. weigh each 4-tuple by the number of paths through it (unused ones weigh 0 and are not
//!    kept);
//! 3. sort by weight, heaviest first; **ties are broken by the 4-tuple itself in increasing
//!    order of `(switch, in, out, next_out, path_sl)`**, so the result is deterministic;
//! 4. Figure 5 over the `x` heaviest 4-tuples, paths visited in the order `src`-major then
//!    `dst` (`src · endpoints + dst`), each path taking the lowest SL that no considered
//!    neighbour of one of its considered 4-tuples already carries; `x` grows from 1 one by
//!    one until an assignment needs more SLs than are available, and the last successful
//!    assignment is kept (full VOQ when `x` reaches the number of used 4-tuples). With an
//!    unbounded number of SLs ([`VoqswSls::Full`]) the procedure never fails, so it is run
//!    once, at `x` = all used 4-tuples: its SL count is the *SLs for full VOQ*;
//! 5. the SL→VL table of `(switch, in, out)` maps each SL that a considered 4-tuple
//!    `(switch, in, out, n)` carries to the VL of port `n` at the next switch; every other SL
//!    `sl` maps to `sl mod vls` (non-considered 4-tuples spread the SLs uniformly over the
//!    VLs), as does every NIC. Output ports share VLs when there are fewer VLs than ports:
//!    port `n` uses VL `n mod vls`. (For a single-layer routing; layered ones below.)
//!
//! **How much VOQ**: [`Voqsw::percent`] counts considered 4-tuples among the used ones;
//! [`Voqsw::weighted_percent`] counts path hops (the weights) instead. The paper's Table 1
//! ("Perc.") matches the second on our random networks (`docs/validation/voqsw.md`).
//!
//! **The guarantee** (checked by the tests): a packet whose path uses a considered 4-tuple
//! `(s, i, o, n)` is stored at the next switch in VL `n mod vls`, whatever its source and
//! destination; so, with at least as many VLs as ports, packets that arrive over the same
//! link on considered 4-tuples and leave the next switch by different ports never share a VL.
//!
//! **Deadlock freedom**: VOQsw changes VLs only, never paths, and works inside the routing's
//! layers. A routing keeps its paths apart on [`lanes`] VLs (1 for up*/down*, fat-tree, …;
//! the virtual layers of LASH and DFSSSP; DOR's dateline VLs); its channel dependency graph
//! over (link, VL) is acyclic. VOQsw keeps the routing's path SL in the wire SL
//! (`VOQsw SL × routing_sls + path SL`), tells 4-tuples of different path SLs apart (they use
//! different table entries), and splits each routing VL `v` into `g = vls / lanes` VLs:
//! `v · g + next_out mod g` for considered 4-tuples, `v · g + VOQsw SL mod g` otherwise. Every
//! dependency of the new tables maps onto one of the routing's, so a cycle would map onto a
//! cycle of the routing: none. The tests certify it with [`crate::cdg::verify`] for up*/down*,
//! LASH, DFSSSP and DOR. Several traffic classes and LMC > 0 are refused.
//!
//! **Cost**: stage 1–3 are O(endpoints² × hops). One run of Figure 5 is O(paths × considered
//! hops × neighbours × SLs/64); the search runs it once per `x` up to the first failure, i.e.
//! quadratic in the number of 4-tuples reached. Paths with no considered 4-tuple take SL 0
//! and mark nothing, so a run skips them after one comparison. Few SLs stop the search
//! early (≈ 70 runs for 8 SLs on 64 switches), and [`VoqswSls::Full`] needs a single run, so
//! the one-by-one search is kept: on the paper's 64-switch networks the whole methodology takes
//! under 0.1 s (release build).
//!
//! ```
//! use flitsim_manager::qos::voqsw::{analyse, VoqswSls};
//! use flitsim_manager::{cdg, route, RoutingRequest};
//! use flitsim_topology::generators;
//!
//! let topo = generators::random(&generators::RandomParams {
//!     switches: 8, ports: 8, endpoints_per_switch: 4, links: 16,
//!     multi_links: false, latency: 1, seed: 2,
//! }).unwrap();
//! let updn = route(&topo, "updn", &RoutingRequest { vls: 1, classes: 1 }).unwrap();
//! let v = analyse(&topo, &updn, VoqswSls::Limit(8)).unwrap();
//! assert!(v.considered() <= v.tuples() && v.sls_used() <= 8);
//! let fabric = v.tables(&topo, &updn, 8).unwrap();
//! assert!(cdg::verify(&topo, &fabric).unwrap().deadlock_free);
//! ```
use crate::{FabricConfig, RoutingError, NO_ROUTE};
use flitsim_topology::{EndpointId, NodeId, PortNum, SwitchId, Topology};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Most SLs a VOQsw table can hold (the path SL of [`FabricConfig`] is a byte below
/// `routing_sls`).
pub const MAX_TABLE_SLS: usize = 255;

/// How many SLs VOQsw may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum VoqswSls {
    /// At most this many SLs (≥ 1): partial VOQ when they do not suffice.
    Limit(usize),
    /// As many as full VOQ needs.
    Full,
}

/// A 4-tuple: a packet enters `switch` by `in_port`, leaves by `out_port` to another switch and
/// leaves that one by `next_out`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Tuple {
    /// The switch.
    pub switch: u32,
    /// Input port at `switch`.
    pub in_port: PortNum,
    /// Output port at `switch` (leads to a switch).
    pub out_port: PortNum,
    /// Output port at the next switch.
    pub next_out: PortNum,
    /// The routing's path SL of the packets (its virtual layer; 0 for single-layer routings).
    pub path_sl: u8,
}

/// Stages 1–3: the used 4-tuples sorted by weight and every path as the ranks of its 4-tuples.
#[derive(Clone, Debug)]
pub struct TupleSet {
    /// Used 4-tuples, heaviest first (rank = index).
    pub tuples: Vec<Tuple>,
    /// `weights[r]`: paths through the 4-tuple of rank `r`.
    pub weights: Vec<u64>,
    /// Endpoints of the fabric; path `src · endpoints + dst`.
    endpoints: usize,
    /// CSR: the ranks of path `p`'s 4-tuples are `ranks[start[p]..start[p + 1]]`, ascending.
    start: Vec<usize>,
    ranks: Vec<u32>,
    /// `group[r]`: the neighbour group of rank `r`: its `(switch, in, out, path_sl)`.
    group: Vec<u32>,
    /// CSR of neighbour groups: members of group `g` are `members[gstart[g]..gstart[g + 1]]`.
    gstart: Vec<usize>,
    members: Vec<u32>,
}

impl TupleSet {
    /// Number of used 4-tuples.
    pub fn len(&self) -> usize {
        self.tuples.len()
    }

    /// True when no path crosses a switch-to-switch link.
    pub fn is_empty(&self) -> bool {
        self.tuples.is_empty()
    }

    /// Number of paths (ordered endpoint pairs, `src == dst` included as empty paths).
    pub fn paths(&self) -> usize {
        self.start.len() - 1
    }

    /// The ranks of path `p`'s 4-tuples, ascending.
    pub fn path(&self, p: usize) -> &[u32] {
        &self.ranks[self.start[p]..self.start[p + 1]]
    }

    /// The 4-tuples sharing `(switch, in, out)` with rank `r`, `r` included.
    fn group_of(&self, r: u32) -> &[u32] {
        let g = self.group[r as usize] as usize;
        &self.members[self.gstart[g]..self.gstart[g + 1]]
    }
}

/// Per destination: each switch's output port and, when it leads to a switch, that switch
/// and the port the packet enters it by.
type DstTree = (Vec<PortNum>, Vec<Option<(u32, PortNum)>>);

/// Checks that VOQsw can work on `fabric`'s tables; the reason when it cannot.
fn check_input(fabric: &FabricConfig) -> Result<(), RoutingError> {
    let refuse = |m: String| Err(RoutingError::InvalidTables(m));
    if fabric.classes > 1 {
        return refuse(format!(
            "VOQsw uses every SL it is given for VOQ, so the tables cannot also carry {} traffic \
             classes: route with one class",
            fabric.classes
        ));
    }
    if fabric.rule.is_some() {
        return refuse(
            "VOQsw reads the forwarding tables, but these are computed by a rule: route with \
             stored tables (FabricConfig::with_tables)"
                .into(),
        );
    }
    if !fabric.alt_paths.is_empty() {
        return refuse(format!(
            "VOQsw assigns one SL per destination and path, but the tables hold {} paths per \
             destination: route with a single path (no LMC)",
            fabric.num_paths()
        ));
    }
    Ok(())
}

/// Stages 1–3 of Figure 4: the used 4-tuples of `fabric`'s forwarding tables, weighed by the
/// number of paths through them and sorted (heaviest first, ties by the 4-tuple).
pub fn tuple_set(topo: &Topology, fabric: &FabricConfig) -> Result<TupleSet, RoutingError> {
    fabric.check_shape(topo)?;
    fabric.check_routes(topo)?;
    let n = topo.num_endpoints();
    let nsw = topo.num_switches();
    let mut ids: HashMap<Tuple, u32> = HashMap::new();
    let mut tuples: Vec<Tuple> = Vec::new();
    let mut weights: Vec<u64> = Vec::new();
    let mut start = Vec::with_capacity(n * n + 1);
    let mut raw: Vec<u32> = Vec::new();
    // Per destination: each switch's output port and, when it leads to a switch, that switch
    // and the port the packet enters by.
    let mut per_dst: Vec<DstTree> = Vec::with_capacity(n);
    for d in 0..n {
        let out: Vec<PortNum> = (0..nsw).map(|s| fabric.lft[s][d]).collect();
        let next = (0..nsw)
            .map(|s| {
                let o = out[s];
                if o == NO_ROUTE {
                    return None;
                }
                match topo.switch_peer(SwitchId(s as u32), o).map(|p| p.remote) {
                    Some(r) => match r.node {
                        NodeId::Switch(t) => Some((t, r.port)),
                        NodeId::Endpoint(_) => None,
                    },
                    None => None,
                }
            })
            .collect();
        per_dst.push((out, next));
    }
    start.push(0);
    for src in 0..n {
        let (s0, p0) = topo.endpoint_switch(EndpointId(src as u32));
        for (dst, (out, next)) in per_dst.iter().enumerate() {
            if src != dst {
                let e = if fabric.routing_sls > 1 {
                    fabric.path_sl[src * n + dst]
                } else {
                    0
                };
                let (mut s, mut i) = (s0.0, p0);
                let mut steps = 0;
                while let Some((t, j)) = next[s as usize] {
                    let t_key = Tuple {
                        switch: s,
                        in_port: i,
                        out_port: out[s as usize],
                        next_out: out[t as usize],
                        path_sl: e,
                    };
                    let id = *ids.entry(t_key).or_insert_with(|| {
                        tuples.push(t_key);
                        weights.push(0);
                        (tuples.len() - 1) as u32
                    });
                    weights[id as usize] += 1;
                    raw.push(id);
                    (s, i) = (t, j);
                    steps += 1;
                    if steps > nsw {
                        return Err(RoutingError::Loop(format!(
                            "path from endpoint {src} to {dst} loops"
                        )));
                    }
                }
            }
            start.push(raw.len());
        }
        flitsim_topology::cancel::check()?;
    }
    // Stage 3: rank by weight, heaviest first, ties by the 4-tuple.
    let mut order: Vec<u32> = (0..tuples.len() as u32).collect();
    order.sort_by(|&a, &b| {
        weights[b as usize]
            .cmp(&weights[a as usize])
            .then(tuples[a as usize].cmp(&tuples[b as usize]))
    });
    let mut rank_of = vec![0u32; tuples.len()];
    for (r, &id) in order.iter().enumerate() {
        rank_of[id as usize] = r as u32;
    }
    let mut ranks: Vec<u32> = raw.iter().map(|&id| rank_of[id as usize]).collect();
    for p in 0..start.len() - 1 {
        ranks[start[p]..start[p + 1]].sort_unstable();
    }
    let tuples: Vec<Tuple> = order.iter().map(|&id| tuples[id as usize]).collect();
    let weights: Vec<u64> = order.iter().map(|&id| weights[id as usize]).collect();
    // Neighbour groups: (switch, in, out).
    let mut gid: HashMap<(u32, PortNum, PortNum, u8), u32> = HashMap::new();
    let mut group = Vec::with_capacity(tuples.len());
    let mut gmembers: Vec<Vec<u32>> = Vec::new();
    for (r, t) in tuples.iter().enumerate() {
        let g = *gid
            .entry((t.switch, t.in_port, t.out_port, t.path_sl))
            .or_insert_with(|| {
                gmembers.push(Vec::new());
                (gmembers.len() - 1) as u32
            });
        gmembers[g as usize].push(r as u32);
        group.push(g);
    }
    let mut gstart = vec![0];
    let mut members = Vec::with_capacity(tuples.len());
    for m in gmembers {
        members.extend(m);
        gstart.push(members.len());
    }
    Ok(TupleSet {
        tuples,
        weights,
        endpoints: n,
        start,
        ranks,
        group,
        gstart,
        members,
    })
}

/// One SL bit set per 4-tuple, `words` 64-bit words each, widened on demand.
struct SlBits {
    words: usize,
    data: Vec<u64>,
}

impl SlBits {
    fn new(n: usize, words: usize) -> Self {
        SlBits {
            words,
            data: vec![0; n * words],
        }
    }
    fn row(&self, r: u32) -> &[u64] {
        let w = self.words;
        &self.data[r as usize * w..(r as usize + 1) * w]
    }
    fn set(&mut self, r: u32, sl: usize) {
        self.data[r as usize * self.words + sl / 64] |= 1 << (sl % 64);
    }
    fn widen(&mut self, words: usize) {
        let n = self.data.len() / self.words.max(1);
        let mut data = vec![0; n * words];
        for r in 0..n {
            data[r * words..r * words + self.words]
                .copy_from_slice(&self.data[r * self.words..(r + 1) * self.words]);
        }
        self.words = words;
        self.data = data;
    }
}

/// The SLs of one run of Figure 5.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// Number of heaviest 4-tuples considered.
    pub x: usize,
    /// `sl[src · endpoints + dst]`.
    pub sl: Vec<u32>,
    /// SLs used: the highest SL + 1 (1 when nothing is considered).
    pub sls_used: usize,
}

/// Figure 5: assigns SLs to every path considering the `x` heaviest 4-tuples of `set`, with at
/// most `limit` SLs (`None`: unbounded). `None` when some path finds no free SL.
pub fn compute_sls(set: &TupleSet, x: usize, limit: Option<usize>) -> Option<Assignment> {
    let paths = set.paths();
    let x = x.min(set.len()) as u32;
    // One word to start with, widened as SLs are taken (a huge `limit` costs nothing).
    let mut words = 1;
    let mut used = SlBits::new(x as usize, words);
    let mut forbidden = vec![0u64; words];
    let mut sl = vec![0u32; paths];
    let mut top = 0u32;
    for (p, slot) in sl.iter_mut().enumerate() {
        let path = set.path(p);
        if path.first().is_none_or(|&r| r >= x) {
            continue; // no considered 4-tuple: SL 0, nothing marked
        }
        forbidden.iter_mut().for_each(|w| *w = 0);
        for &t in path.iter().take_while(|&&r| r < x) {
            for &nt in set.group_of(t) {
                if nt != t && nt < x {
                    for (f, u) in forbidden.iter_mut().zip(used.row(nt)) {
                        *f |= u;
                    }
                }
            }
        }
        let free = forbidden
            .iter()
            .enumerate()
            .find(|(_, w)| **w != u64::MAX)
            .map_or(words * 64, |(i, w)| i * 64 + w.trailing_ones() as usize);
        if limit.is_some_and(|l| free >= l) {
            return None;
        }
        if free >= words * 64 {
            words *= 2;
            used.widen(words);
            forbidden.resize(words, 0);
        }
        for &t in path.iter().take_while(|&&r| r < x) {
            used.set(t, free);
        }
        *slot = free as u32;
        top = top.max(free as u32);
    }
    Some(Assignment {
        x: x as usize,
        sl,
        sls_used: top as usize + 1,
    })
}

/// Stage 4 as the paper describes it: `x` = 1, 2, … until [`compute_sls`] fails with `limit`
/// SLs or every used 4-tuple is considered; the last successful assignment. `x` = 0 (nothing
/// considered, every path on SL 0) when even the heaviest 4-tuple alone fails, which cannot
/// happen with `limit ≥ 1`.
pub fn search_one_by_one(set: &TupleSet, limit: usize) -> Assignment {
    let mut best = Assignment {
        x: 0,
        sl: vec![0; set.paths()],
        sls_used: 1,
    };
    for x in 1..=set.len() {
        match compute_sls(set, x, Some(limit)) {
            Some(a) => best = a,
            None => break,
        }
        if x % 64 == 0 && flitsim_topology::cancel::check().is_err() {
            break;
        }
    }
    best
}

/// The outcome of stages 1–4 ([`analyse`]).
#[derive(Clone, Debug)]
pub struct Voqsw {
    /// The used 4-tuples, weighed and sorted.
    pub set: TupleSet,
    /// The SLs of every path.
    pub assignment: Assignment,
    /// The SLs VOQsw was given (for [`VoqswSls::Full`], the SLs full VOQ needs).
    pub sls: usize,
    /// With [`VoqswSls::Full`]: the SLs full VOQ needs.
    pub sls_for_full: Option<usize>,
}

impl Voqsw {
    /// Used 4-tuples.
    pub fn tuples(&self) -> usize {
        self.set.len()
    }
    /// Considered 4-tuples (the `x` of the paper).
    pub fn considered(&self) -> usize {
        self.assignment.x
    }
    /// Gives every path that crosses no considered 4-tuple the SL `destination mod SLs`
    /// instead of SL 0 (Figure 5's lowest free SL). Such a path marks no SL at any 4-tuple,
    /// so no SL→VL table constraint changes: the considered 4-tuples, the share of VOQ and
    /// the guarantee on considered 4-tuples stay; only the unconstrained traffic spreads over
    /// the VLs (SL `s` maps to VL `s mod vls` wherever no considered 4-tuple claims it).
    pub fn spread_unconstrained(&mut self) {
        let x = self.assignment.x as u32;
        let sls = self.sls.max(1);
        let e = self.set.endpoints;
        for p in 0..self.set.paths() {
            if self.set.path(p).first().is_none_or(|&r| r >= x) {
                let sl = ((p % e) % sls) as u32;
                self.assignment.sl[p] = sl;
                self.assignment.sls_used = self.assignment.sls_used.max(sl as usize + 1);
            }
        }
    }

    /// Considered 4-tuples as a percentage of the used ones (100 when none is used).
    pub fn percent(&self) -> f64 {
        if self.set.is_empty() {
            100.0
        } else {
            100.0 * self.considered() as f64 / self.tuples() as f64
        }
    }
    /// The share of path hops (4-tuple uses, i.e. weights) that cross a considered 4-tuple,
    /// in percent (100 when none is used).
    pub fn weighted_percent(&self) -> f64 {
        let total: u64 = self.set.weights.iter().sum();
        if total == 0 {
            return 100.0;
        }
        let covered: u64 = self.set.weights[..self.considered()].iter().sum();
        100.0 * covered as f64 / total as f64
    }

    /// SLs the assignment uses.
    pub fn sls_used(&self) -> usize {
        self.assignment.sls_used
    }
    /// Whether every used 4-tuple is considered.
    pub fn full(&self) -> bool {
        self.considered() == self.tuples()
    }

    /// The report of the `voqsw` section of `flitsim route`.
    pub fn report(&self) -> VoqswReport {
        VoqswReport {
            tuples: self.tuples(),
            considered: self.considered(),
            percent: self.percent(),
            weighted_percent: self.weighted_percent(),
            sls_used: self.sls_used(),
            full: self.full(),
            sls_for_full: self.sls_for_full,
        }
    }

    /// Stage 5: `fabric` with the VOQsw SL→VL tables for `vls` VLs and the per-destination
    /// path SLs (`routing_sls` = the SLs VOQsw was given). Paths and forwarding tables are
    /// unchanged.
    pub fn tables(
        &self,
        topo: &Topology,
        fabric: &FabricConfig,
        vls: u8,
    ) -> Result<FabricConfig, RoutingError> {
        check_input(fabric)?;
        if vls == 0 {
            return Err(RoutingError::NotEnoughVls(
                "VOQsw needs at least 1 VL".into(),
            ));
        }
        let k = self.sls;
        let r = fabric.routing_sls.max(1) as usize;
        if k * r > MAX_TABLE_SLS {
            return Err(RoutingError::InvalidTables(format!(
                "VOQsw needs {k} SLs here{}, {} wire SLs, but the tables hold at most \
                 {MAX_TABLE_SLS}: give it {} SLs or fewer for partial VOQ",
                if r > 1 {
                    format!(
                        " in each of the {r} path SLs of the {} routing",
                        fabric.engine
                    )
                } else {
                    String::new()
                },
                k * r,
                MAX_TABLE_SLS / r
            )));
        }
        let n = topo.num_endpoints();
        let foreign = self.set.tuples.iter().any(|t| {
            t.switch as usize >= topo.num_switches()
                || t.in_port.max(t.out_port) >= topo.num_ports(SwitchId(t.switch))
                || t.path_sl as usize >= r
        });
        if self.set.endpoints != n || self.assignment.sl.len() != n * n || foreign {
            return Err(RoutingError::InvalidTables(
                "the VOQsw analysis is for another topology or routing: analyse these tables"
                    .into(),
            ));
        }
        let lanes = lanes(fabric);
        let g = vls as usize / lanes;
        if g == 0 {
            return Err(RoutingError::NotEnoughVls(format!(
                "the {} routing keeps its paths apart on {lanes} VLs for deadlock freedom and \
                 VOQsw splits each of them: give at least {lanes} VLs (VOQsw then has \
                 VLs / {lanes} per routing VL)",
                fabric.engine
            )));
        }
        // VL = the routing's VL (lane) × g + a VL among the lane's g: the next output port's
        // for considered 4-tuples, the VOQsw SL's otherwise.
        let sub = |v: u8, x: usize| (v as usize * g + x % g) as u8;
        let wire = k * r;
        let mut sl2vl = FabricConfig::build_sl2vl(topo, wire, |s, i, o, w| {
            let (q, e) = (w as usize / r, w as usize % r);
            sub(fabric.vl(s, i, o, flitsim_topology::Sl(e as u8)).0, q)
        });
        let x = self.assignment.x as u32;
        for (p, &q) in self.assignment.sl.iter().enumerate() {
            for &t in self.set.path(p).iter().take_while(|&&t| t < x) {
                let tu = self.set.tuples[t as usize];
                let s = SwitchId(tu.switch);
                let ports = topo.num_ports(s) as usize;
                let w = q as usize * r + tu.path_sl as usize;
                let i = (tu.in_port as usize * ports + tu.out_port as usize) * wire + w;
                let lane = fabric.vl(s, tu.in_port, tu.out_port, flitsim_topology::Sl(tu.path_sl));
                sl2vl[tu.switch as usize][i] = sub(lane.0, tu.next_out as usize);
            }
        }
        let path_sl = if wire > 1 {
            self.assignment
                .sl
                .iter()
                .enumerate()
                .map(|(p, &q)| {
                    let e = if r > 1 { fabric.path_sl[p] as usize } else { 0 };
                    (q as usize * r + e) as u8
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok(FabricConfig {
            engine: fabric.engine.clone(),
            num_vls: vls,
            classes: 1,
            routing_sls: wire as u8,
            layers: fabric.layers,
            lft: fabric.lft.clone(),
            path_sl,
            sl2vl,
            nic_sl2vl: (0..wire)
                .map(|w| sub(fabric.nic_sl2vl[w % r], w / r))
                .collect(),
            ports: FabricConfig::port_counts(topo),
            rule: None,
            alt_paths: Vec::new(),
        })
    }
}

/// VLs the routing's tables name (1 + the highest VL of its SL→VL tables): the lanes VOQsw
/// must keep apart for deadlock freedom.
pub fn lanes(fabric: &FabricConfig) -> usize {
    1 + fabric
        .sl2vl
        .iter()
        .flatten()
        .chain(fabric.nic_sl2vl.iter())
        .copied()
        .max()
        .unwrap_or(0) as usize
}

/// The `voqsw` section of the route report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VoqswReport {
    /// Used 4-tuples.
    pub tuples: usize,
    /// Considered 4-tuples.
    pub considered: usize,
    /// `considered / tuples` in percent.
    pub percent: f64,
    /// Share of the path hops that cross a considered 4-tuple, in percent — the measure
    /// that reproduces the paper's Table 1 (`docs/validation/voqsw.md`).
    pub weighted_percent: f64,
    /// SLs the assignment uses.
    pub sls_used: usize,
    /// Every used 4-tuple considered.
    pub full: bool,
    /// SLs for full VOQ (asked for with `--sls full`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sls_for_full: Option<usize>,
}

/// Stages 1–4 on `fabric`'s forwarding tables with the SLs `sls`.
pub fn analyse(
    topo: &Topology,
    fabric: &FabricConfig,
    sls: VoqswSls,
) -> Result<Voqsw, RoutingError> {
    check_input(fabric)?;
    let set = tuple_set(topo, fabric)?;
    match sls {
        VoqswSls::Limit(0) => Err(RoutingError::InvalidTables(
            "VOQsw needs at least 1 SL (give --sls 1 or more, or full)".into(),
        )),
        VoqswSls::Limit(limit) => {
            let assignment = search_one_by_one(&set, limit);
            flitsim_topology::cancel::check()?;
            Ok(Voqsw {
                set,
                assignment,
                sls: limit,
                sls_for_full: None,
            })
        }
        VoqswSls::Full => {
            let assignment = compute_sls(&set, set.len(), None).ok_or_else(|| {
                RoutingError::InvalidTables("VOQsw: unbounded SL assignment failed".into())
            })?;
            let k = assignment.sls_used;
            Ok(Voqsw {
                set,
                assignment,
                sls: k,
                sls_for_full: Some(k),
            })
        }
    }
}

/// What picks a packet's virtual network ([`virtual_networks_by`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum VnKey {
    /// Destination `d` on network `d mod n`: a destination's packets share one network.
    #[default]
    Destination,
    /// Source `s` on network `s mod n`: a source's packets share one network, every network
    /// carries packets to every destination.
    Source,
}

/// The virtual-network baseline of §4.2: `n` SLs on `n` VLs, a packet keeps the VL of its SL
/// on every hop, and destination `d` is reached with SL `d mod n`, which spreads the
/// destinations evenly over the networks. A routing that keeps paths apart on several VLs
/// (its [`lanes`]) keeps them: each lane gets `n / lanes` networks, destination `d` uses
/// network `d mod (n / lanes)` of its lane on every hop.
pub fn virtual_networks(
    topo: &Topology,
    fabric: &FabricConfig,
    n: u8,
) -> Result<FabricConfig, RoutingError> {
    virtual_networks_by(topo, fabric, n, VnKey::Destination)
}

/// [`virtual_networks`] with the network chosen by destination or by source (`key`).
pub fn virtual_networks_by(
    topo: &Topology,
    fabric: &FabricConfig,
    n: u8,
    key: VnKey,
) -> Result<FabricConfig, RoutingError> {
    check_input(fabric)?;
    fabric.check_shape(topo)?;
    let lanes = lanes(fabric);
    let g = n as usize / lanes;
    if g == 0 {
        return Err(RoutingError::NotEnoughVls(format!(
            "the {} routing keeps its paths apart on {lanes} VLs for deadlock freedom: virtual \
             networks need at least {lanes} VLs",
            fabric.engine
        )));
    }
    let r = fabric.routing_sls.max(1) as usize;
    let wire = g * r;
    if wire > MAX_TABLE_SLS {
        return Err(RoutingError::InvalidTables(format!(
            "{g} virtual networks in each of {r} path SLs need {wire} SLs; the tables hold at \
             most {MAX_TABLE_SLS}"
        )));
    }
    let e = topo.num_endpoints();
    let path_sl = if wire > 1 {
        (0..e * e)
            .map(|p| {
                let layer = if r > 1 { fabric.path_sl[p] as usize } else { 0 };
                let node = match key {
                    VnKey::Destination => p % e,
                    VnKey::Source => p / e,
                };
                (node % g * r + layer) as u8
            })
            .collect()
    } else {
        Vec::new()
    };
    let sub = |v: u8, w: usize| (v as usize * g + w / r) as u8;
    Ok(FabricConfig {
        engine: fabric.engine.clone(),
        num_vls: n,
        classes: 1,
        routing_sls: wire as u8,
        layers: fabric.layers,
        lft: fabric.lft.clone(),
        path_sl,
        sl2vl: FabricConfig::build_sl2vl(topo, wire, |s, i, o, w| {
            let e = w as usize % r;
            sub(
                fabric.vl(s, i, o, flitsim_topology::Sl(e as u8)).0,
                w as usize,
            )
        }),
        nic_sl2vl: (0..wire).map(|w| sub(fabric.nic_sl2vl[w % r], w)).collect(),
        ports: FabricConfig::port_counts(topo),
        rule: None,
        alt_paths: Vec::new(),
    })
}

#[path = "voqsw_incremental.rs"]
mod incremental;
pub use incremental::sls_by_x;

#[cfg(test)]
#[path = "voqsw_tests.rs"]
mod tests;
