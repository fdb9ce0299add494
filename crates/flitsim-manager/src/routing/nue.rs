//! Nue: deadlock-free destination routing on the channel dependency graph within any VL
//! budget, one VL included.
use super::tables::{lane_fabric, path_sls, PathSls};
use super::{fit_lanes, RoutingEngine, RoutingRequest, VlBlocks};
use crate::{FabricConfig, RoutingError, NO_ROUTE};
use flitsim_topology::{EndpointId, PortNum, SwitchId, Topology};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Nue routing (Domke, Hoefler & Matsuoka, "Routing on the Dependency Graph: A New Approach to
/// Deadlock-Free High-Performance Routing", HPDC 2016), written for flitsim from the paper's
/// description; OpenSM's `nue` engine implements the same idea.
///
/// **Virtual layers.** The engine uses every VL it is given: with `L` VLs per traffic class
/// ([`super::VlBlocks`], capped by `max_layers` and by the number of switches with
/// endpoints) the destinations (endpoints) are split over `L` layers by switch: the switches
/// are partitioned into `L` connected regions of about equal endpoint counts, grown breadth
/// first and simultaneously from `L` spread-out seeds (a peripheral switch, then repeatedly
/// the switch farthest from all seeds so far; the region with the fewest endpoints grows
/// next), and every endpoint belongs to its switch's region's layer. This stands in for the
/// METIS graph partitioning that OpenSM's `nue` uses when built with METIS (without it, OpenSM
/// deals destinations out round robin; keeping a switch's endpoints and neighbouring switches
/// in one layer gave markedly better bandwidth, see `docs/validation/routing.md`). All traffic
/// towards a destination travels on its layer's VL: path SL = layer, wire SL =
/// `class · L + layer`, VL = `base(class) + layer` on every hop and on the injection link.
/// [`FabricConfig::layers`] and `routing_sls` are `L`, the VLs used per class.
///
/// **Routing on the CDG.** Each layer keeps its own channel dependency graph (channels =
/// directed switch-to-switch links). Layers are routed one after the other, and the
/// destinations of a layer one after the other in id order (interleaving them over their
/// switches balanced random networks up to 2 % better at 1 VL, but a 3-level fat tree 9 %
/// worse, where id order gives exactly SSSP's paths). Each destination gets a Dijkstra
/// search that starts at its switch and grows a tree outwards, one switch at a time: a switch
/// `x` may join the tree through the channel `x → p` of an already settled neighbour `p` only
/// if the dependency of that channel on `p`'s own channel (towards the destination) is already
/// in the layer's CDG or can be added without closing a cycle. Dependencies that would close a
/// cycle are blocked for the rest of the layer (the CDG only grows from one destination to the
/// next, so they stay cyclic). Acyclicity is kept incrementally with the dynamic topological
/// order of Pearce & Kelly: adding `a → b` with `a` already before `b` is free, otherwise only
/// the channels ordered between them are searched.
///
/// **Cost and balance.** A path's cost is the pair (hops, accumulated link weight), compared
/// lexicographically as in [`super::SsspEngine`]; among candidates of equal cost those whose
/// dependency is already in the CDG win (they constrain later destinations less). After each
/// destination every channel's weight grows by the number of endpoint paths routed over it,
/// so later destinations avoid loaded links; weights carry over from layer to layer.
///
/// **Escape paths.** Before a layer's first destination, a spanning tree of the switch graph
/// (breadth first, links in port order) is rooted at the layer's central switch: the one with
/// the smallest largest distance to the layer's destination switches (ties: smallest total
/// distance, then lowest id). The dependencies of up*/down* routes in this tree towards every
/// destination of the layer (up towards the root, turn once, down towards the destination)
/// are put into the layer's CDG first; they are acyclic (no route goes up after going down).
/// Hence every destination can always be routed. If the search reaches an impasse (some
/// switch cannot join the tree without closing a cycle), the dependencies it added for this
/// destination are taken out again, every unreached switch and every switch on its escape
/// route towards the destination are held to their escape routes (whose dependencies are in
/// the CDG), and the search runs again around them; this repeats until every switch is
/// reached, at worst with every switch on its escape route. (The paper and OpenSM first try a
/// local backtracking and then fall back to the escape paths for the whole destination;
/// flitsim's partial fallback keeps the searched routes of the other switches. The number of
/// impasses is reported in [`NueStats`].)
///
/// **Deadlock freedom.** Every layer's CDG is acyclic by construction and no route changes VL,
/// so the fabric's CDG, the disjoint union of the layers' CDGs, is acyclic (Dally & Seitz
/// 1987) for any number of VLs, 1 included. Fails with [`RoutingError::Unroutable`] when
/// switches with endpoints cannot reach each other.
#[derive(Clone, Copy, Debug, Default)]
pub struct NueEngine {
    /// Use at most this many VLs (layers) per class.
    pub max_layers: Option<u8>,
}

/// What Nue did, besides its tables (see [`NueEngine::route_with_stats`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NueStats {
    /// Virtual layers (VLs per class) used.
    pub layers: u8,
    /// Destinations per layer.
    pub destinations: Vec<u32>,
    /// Destinations for which the search on the CDG reached an impasse (some switch could
    /// not be reached), so that some switches use their escape routes.
    pub fallbacks: u32,
    /// Switches held to their escape routes, summed over the destinations.
    pub escape_switches: u64,
    /// Channel dependencies blocked because they would have closed a cycle (summed over the
    /// layers).
    pub blocked: u64,
    /// Channel dependencies in the layers' CDGs at the end (summed over the layers).
    pub dependencies: u64,
}

impl RoutingEngine for NueEngine {
    fn name(&self) -> &'static str {
        "nue"
    }

    fn route(&self, topo: &Topology, req: &RoutingRequest) -> Result<FabricConfig, RoutingError> {
        self.route_with_stats(topo, req).map(|(f, _)| f)
    }
}

impl NueEngine {
    /// [`RoutingEngine::route`], also returning what the algorithm did.
    pub fn route_with_stats(
        &self,
        topo: &Topology,
        req: &RoutingRequest,
    ) -> Result<(FabricConfig, NueStats), RoutingError> {
        let blocks = VlBlocks::new(req, 1, "nue")?;
        let limit = blocks.per_class.min(self.max_layers.unwrap_or(u8::MAX));
        if limit == 0 {
            return Err(RoutingError::NotEnoughVls(
                "nue needs at least 1 VL per traffic class, but max_layers is 0".into(),
            ));
        }
        let lanes = fit_lanes(limit, 1, req.classes, "nue")?;
        let n_ep = topo.num_endpoints();
        let net = Net::new(topo)?;
        // Regions are made of switches, so there are at most as many as switches with
        // endpoints; layers left empty are dropped, so that `layers` is the VLs used.
        let sources = net.eps.iter().filter(|&&k| k > 0).count();
        let mut layer_of = partition(topo, &net, (lanes as usize).min(sources.max(1)) as u8);
        let mut rank = [u8::MAX; 256];
        let mut layers = 0u8;
        for l in layer_of.iter_mut() {
            if rank[*l as usize] == u8::MAX {
                rank[*l as usize] = layers;
                layers += 1;
            }
            *l = rank[*l as usize];
        }
        let layers = layers.max(1);
        let mut stats = NueStats {
            layers,
            ..NueStats::default()
        };
        let lft = route_layers(topo, &net, layers, &layer_of, &mut stats)?;
        let sls = PathSls {
            routing_sls: layers,
            layers,
            path_sl: path_sls(n_ep, layers, |_, dst| layer_of[dst]),
        };
        Ok((
            lane_fabric(self.name(), topo, req, &blocks, lft, sls),
            stats,
        ))
    }
}

/// The switch graph as Nue sees it: arcs (directed switch-to-switch links, the channels of the
/// CDG) in CSR form, each with its reverse, and the index of every possible dependency
/// ("turn": arriving on one arc, leaving by an arc of the switch it leads to).
struct Net {
    /// Arcs leaving switch `s`: `off[s]..off[s + 1]`, in port order.
    off: Vec<u32>,
    /// Switch each arc leaves from / leads to, and its output port.
    from: Vec<u32>,
    to: Vec<u32>,
    port: Vec<PortNum>,
    /// The arc of the same link in the other direction.
    back: Vec<u32>,
    /// Endpoints attached to each switch.
    eps: Vec<u32>,
    /// Turns of arc `a` (continuing by each arc of `to[a]`): `turn_off[a]..turn_off[a] + deg`.
    turn_off: Vec<u32>,
}

impl Net {
    /// Fails when the possible dependencies (the sum over switches of in-degree × out-degree)
    /// do not fit the 32-bit turn index.
    fn new(topo: &Topology) -> Result<Self, RoutingError> {
        let n = topo.num_switches();
        let mut off = Vec::with_capacity(n + 1);
        let (mut from, mut to, mut port, mut to_port) = (vec![], vec![], vec![], vec![]);
        let mut eps = Vec::with_capacity(n);
        off.push(0u32);
        for s in 0..n as u32 {
            let sid = SwitchId(s);
            for (p, t, tp) in topo.switch_neighbours(sid) {
                from.push(s);
                to.push(t.0);
                port.push(p);
                to_port.push(tp);
            }
            off.push(from.len() as u32);
            eps.push(topo.switch_endpoints(sid).count() as u32);
        }
        // The reverse arc: the arc leaving `to` by port `to_port`.
        let back: Vec<u32> = (0..from.len())
            .map(|a| {
                let t = to[a] as usize;
                (off[t]..off[t + 1])
                    .find(|&b| port[b as usize] == to_port[a] && to[b as usize] == from[a])
                    .unwrap_or(a as u32)
            })
            .collect();
        let mut turn_off = Vec::with_capacity(from.len() + 1);
        let mut acc = 0u64;
        for &t in &to {
            turn_off.push(acc as u32);
            acc += (off[t as usize + 1] - off[t as usize]) as u64;
            if acc > u32::MAX as u64 {
                return Err(RoutingError::Unroutable(format!(
                    "nue: the switch graph has more than {} possible channel dependencies \
                     (switch-to-switch links arriving × leaving at every switch), more than \
                     nue's dependency graph can index",
                    u32::MAX
                )));
            }
        }
        turn_off.push(acc as u32);
        Ok(Net {
            off,
            from,
            to,
            port,
            back,
            eps,
            turn_off,
        })
    }

    fn switches(&self) -> usize {
        self.eps.len()
    }

    fn arcs(&self, s: u32) -> std::ops::Range<u32> {
        self.off[s as usize]..self.off[s as usize + 1]
    }

    /// The turn index of the dependency `a → b` (`b` leaves the switch `a` leads to).
    fn turn(&self, a: u32, b: u32) -> usize {
        (self.turn_off[a as usize] + b - self.off[self.to[a as usize] as usize]) as usize
    }

    fn turns(&self) -> usize {
        *self.turn_off.last().unwrap_or(&0) as usize
    }

    /// Hop distances from `s` (`u32::MAX` if unreached), written into `dist`.
    fn bfs(&self, s: u32, dist: &mut [u32], queue: &mut VecDeque<u32>) {
        dist.fill(u32::MAX);
        dist[s as usize] = 0;
        queue.clear();
        queue.push_back(s);
        while let Some(x) = queue.pop_front() {
            for a in self.arcs(x) {
                let y = self.to[a as usize] as usize;
                if dist[y] == u32::MAX {
                    dist[y] = dist[x as usize] + 1;
                    queue.push_back(y as u32);
                }
            }
        }
    }
}

/// State of a turn in the current layer's CDG.
const ABSENT: u8 = 0;
const PRESENT: u8 = 1;
const BLOCKED: u8 = 2;

/// One layer's channel dependency graph, kept acyclic with the dynamic topological order of
/// Pearce & Kelly ("A dynamic topological sort algorithm for directed acyclic graphs",
/// ACM JEA 11, 2006).
struct LayerCdg {
    state: Vec<u8>,
    out: Vec<Vec<u32>>,
    inn: Vec<Vec<u32>>,
    /// Position of each channel in the topological order.
    ord: Vec<u32>,
    mark: Vec<u32>,
    stamp: u32,
    stack: Vec<u32>,
    fwd: Vec<u32>,
    bwd: Vec<u32>,
    slots: Vec<u32>,
    blocked: u64,
    present: u64,
    /// Turns added (`true`) or blocked (`false`) since [`LayerCdg::begin`], for
    /// [`LayerCdg::rollback`].
    log: Vec<(u32, u32, bool)>,
}

impl LayerCdg {
    fn new(channels: usize, turns: usize) -> Self {
        LayerCdg {
            state: vec![ABSENT; turns],
            out: vec![Vec::new(); channels],
            inn: vec![Vec::new(); channels],
            ord: (0..channels as u32).collect(),
            mark: vec![0; channels],
            stamp: 0,
            stack: Vec::new(),
            fwd: Vec::new(),
            bwd: Vec::new(),
            slots: Vec::new(),
            blocked: 0,
            present: 0,
            log: Vec::new(),
        }
    }

    /// Starts recording the changes a destination's search makes.
    fn begin(&mut self) {
        self.log.clear();
    }

    /// Undoes every change since [`LayerCdg::begin`]: added dependencies are removed (a
    /// topological order stays valid for a subgraph) and blocked ones may be tried again.
    fn rollback(&mut self, net: &Net) {
        for &(a, b, added) in &self.log {
            self.state[net.turn(a, b)] = ABSENT;
            if added {
                self.present -= 1;
                self.out[a as usize].retain(|&x| x != b);
                self.inn[b as usize].retain(|&x| x != a);
            } else {
                self.blocked -= 1;
            }
        }
        self.log.clear();
    }

    /// Empties the graph for the next layer.
    fn clear(&mut self) {
        self.state.fill(ABSENT);
        self.out.iter_mut().for_each(Vec::clear);
        self.inn.iter_mut().for_each(Vec::clear);
        self.blocked = 0;
        self.present = 0;
    }

    /// Adds the dependency `a → b` (turn index `t`) unless it closes a cycle; whether the
    /// dependency is in the graph afterwards.
    fn try_add(&mut self, t: usize, a: u32, b: u32) -> bool {
        match self.state[t] {
            PRESENT => return true,
            BLOCKED => return false,
            _ => {}
        }
        if a == b || !self.reorder(a, b) {
            self.state[t] = BLOCKED;
            self.blocked += 1;
            self.log.push((a, b, false));
            return false;
        }
        self.state[t] = PRESENT;
        self.present += 1;
        self.log.push((a, b, true));
        self.out[a as usize].push(b);
        self.inn[b as usize].push(a);
        true
    }

    /// Pearce–Kelly: makes the order admit `u → v`; false if `v` reaches `u` (a cycle).
    fn reorder(&mut self, u: u32, v: u32) -> bool {
        let (lb, ub) = (self.ord[v as usize], self.ord[u as usize]);
        if ub < lb {
            return true;
        }
        if self.stamp >= u32::MAX - 2 {
            self.mark.fill(0);
            self.stamp = 0;
        }
        self.stamp += 2;
        let (f, b) = (self.stamp - 1, self.stamp);
        // Forward from v among channels ordered before u.
        self.fwd.clear();
        self.stack.clear();
        self.stack.push(v);
        self.mark[v as usize] = f;
        while let Some(w) = self.stack.pop() {
            self.fwd.push(w);
            for &x in &self.out[w as usize] {
                if x == u {
                    return false;
                }
                if self.mark[x as usize] != f && self.ord[x as usize] < ub {
                    self.mark[x as usize] = f;
                    self.stack.push(x);
                }
            }
        }
        // Backward from u among channels ordered after v.
        self.bwd.clear();
        self.stack.push(u);
        self.mark[u as usize] = b;
        while let Some(w) = self.stack.pop() {
            self.bwd.push(w);
            for &x in &self.inn[w as usize] {
                if self.mark[x as usize] != b && self.ord[x as usize] > lb {
                    self.mark[x as usize] = b;
                    self.stack.push(x);
                }
            }
        }
        // The backward set goes first, then the forward set, into their old positions.
        let ord = &self.ord;
        self.bwd.sort_unstable_by_key(|&x| ord[x as usize]);
        self.fwd.sort_unstable_by_key(|&x| ord[x as usize]);
        self.slots.clear();
        self.slots
            .extend(self.bwd.iter().chain(&self.fwd).map(|&x| ord[x as usize]));
        self.slots.sort_unstable();
        for (i, &x) in self.bwd.iter().chain(&self.fwd).enumerate() {
            self.ord[x as usize] = self.slots[i];
        }
        true
    }
}

/// The escape tree of a layer: parent arcs towards the root.
struct EscapeTree {
    /// Arc from each switch to its parent (`u32::MAX` for the root and unreached switches).
    up: Vec<u32>,
    children: Vec<Vec<u32>>,
}

impl EscapeTree {
    fn new(net: &Net, root: u32) -> Self {
        let n = net.switches();
        let mut up = vec![u32::MAX; n];
        let mut seen = vec![false; n];
        let mut children = vec![Vec::new(); n];
        let mut queue = VecDeque::new();
        seen[root as usize] = true;
        queue.push_back(root);
        while let Some(x) = queue.pop_front() {
            for a in net.arcs(x) {
                let y = net.to[a as usize];
                if !seen[y as usize] {
                    seen[y as usize] = true;
                    // The child's arc towards x is the reverse of x → y.
                    up[y as usize] = net.back[a as usize];
                    children[x as usize].push(y);
                    queue.push_back(y);
                }
            }
        }
        EscapeTree { up, children }
    }

    /// The escape route towards switch `t`: the arc each switch leaves by (up to the first
    /// ancestor of `t`, then down), written into `chan` (`u32::MAX` for `t`).
    fn routes_to(&self, net: &Net, t: u32, chan: &mut [u32]) {
        chan.copy_from_slice(&self.up);
        // Walk from t to the root; every ancestor goes down towards t instead.
        let mut below = t;
        chan[t as usize] = u32::MAX;
        while self.up[below as usize] != u32::MAX {
            let up = self.up[below as usize];
            let w = net.to[up as usize];
            chan[w as usize] = net.back[up as usize];
            below = w;
        }
    }

    /// Adds the dependencies of every escape route towards the destination switches `dests`
    /// to `cdg`; false if that fails (it cannot: the routes are up*/down*).
    fn seed(&self, net: &Net, dests: &[u32], cdg: &mut LayerCdg) -> bool {
        let mut ok = true;
        // Up then up: child a → v → parent of v.
        for (v, &pv) in self.up.iter().enumerate() {
            if pv == u32::MAX {
                continue;
            }
            for &a in &self.children[v] {
                let ua = self.up[a as usize];
                ok &= cdg.try_add(net.turn(ua, pv), ua, pv);
            }
        }
        for &t in dests {
            let mut below = t;
            let mut down_below: Option<u32> = None;
            while self.up[below as usize] != u32::MAX {
                let up = self.up[below as usize];
                let w = net.to[up as usize];
                let down = net.back[up as usize];
                // Turns at w: up from any other child, then down towards t.
                for &a in &self.children[w as usize] {
                    if a != below {
                        let ua = self.up[a as usize];
                        ok &= cdg.try_add(net.turn(ua, down), ua, down);
                    }
                }
                // Down then down.
                if let Some(d) = down_below {
                    ok &= cdg.try_add(net.turn(down, d), down, d);
                }
                down_below = Some(down);
                below = w;
            }
        }
        ok
    }
}

/// The switches in the component of the first switch with endpoints; fails if a switch with
/// endpoints lies outside it.
fn main_component(topo: &Topology, net: &Net) -> Result<Vec<bool>, RoutingError> {
    let n = net.switches();
    let mut inside = vec![false; n];
    let Some(first) = (0..n).find(|&s| net.eps[s] > 0) else {
        return Ok(inside);
    };
    let mut dist = vec![u32::MAX; n];
    net.bfs(first as u32, &mut dist, &mut VecDeque::new());
    for s in 0..n {
        inside[s] = dist[s] != u32::MAX;
        if !inside[s] && net.eps[s] > 0 {
            return Err(super::layered::disconnected(
                "nue",
                topo,
                s as u32,
                first as u32,
            ));
        }
    }
    Ok(inside)
}

/// The root of every layer's escape tree: the switch of the main component with the smallest
/// largest distance to the layer's destination switches, then the smallest total distance
/// (weighted by destinations), then the lowest id.
fn central_switches(
    net: &Net,
    inside: &[bool],
    dest_weight: &[Vec<u32>],
) -> Result<Vec<u32>, RoutingError> {
    let n = net.switches();
    let mut best: Vec<Option<(u32, u64, u32)>> = vec![None; dest_weight.len()];
    let mut dist = vec![u32::MAX; n];
    let mut queue = VecDeque::new();
    for s in (0..n as u32).filter(|&s| inside[s as usize]) {
        flitsim_topology::cancel::check()?;
        net.bfs(s, &mut dist, &mut queue);
        for (l, w) in dest_weight.iter().enumerate() {
            let mut far = 0u32;
            let mut sum = 0u64;
            for (t, &k) in w.iter().enumerate() {
                if k > 0 {
                    far = far.max(dist[t]);
                    sum += k as u64 * dist[t] as u64;
                }
            }
            let key = (far, sum, s);
            if best[l].is_none_or(|b| key < b) {
                best[l] = Some(key);
            }
        }
    }
    Ok(best.iter().map(|b| b.map_or(0, |b| b.2)).collect())
}

/// The layer of every endpoint as a destination: the switches are split into `layers`
/// connected regions of about equal endpoint counts, and all endpoints of a switch go to its
/// region's layer (see [`NueEngine`]).
fn partition(topo: &Topology, net: &Net, layers: u8) -> Vec<u8> {
    let n_ep = topo.num_endpoints();
    let l = layers as usize;
    let n = net.switches();
    if l <= 1 || n == 0 {
        return vec![0; n_ep];
    }
    // Seeds: a peripheral switch (the farthest from switch 0, lowest id on ties), then
    // repeatedly the switch with endpoints farthest from all seeds so far.
    let mut queue = VecDeque::new();
    let mut dist = vec![u32::MAX; n];
    let mut nearest = vec![u32::MAX; n];
    net.bfs(0, &mut dist, &mut queue);
    let first = (0..n as u32)
        .max_by_key(|&s| (dist[s as usize].wrapping_add(1), Reverse(s)))
        .unwrap_or(0);
    let mut seeds = vec![first];
    net.bfs(first, &mut dist, &mut queue);
    nearest.copy_from_slice(&dist);
    while seeds.len() < l {
        let next = (0..n as u32)
            .filter(|&s| nearest[s as usize] != u32::MAX && net.eps[s as usize] > 0)
            .max_by_key(|&s| (nearest[s as usize], Reverse(s)))
            .unwrap_or(first);
        seeds.push(next);
        net.bfs(next, &mut dist, &mut queue);
        for (m, &d) in nearest.iter_mut().zip(&dist) {
            *m = (*m).min(d);
        }
    }
    // Balanced growth: the region with the fewest endpoints that can still grow takes the
    // next unowned neighbour of its oldest frontier switch (ties to the lower region).
    let mut owner = vec![u8::MAX; n];
    let mut fronts: Vec<VecDeque<u32>> = vec![VecDeque::new(); l];
    let mut load = vec![0u64; l];
    for (k, &sd) in seeds.iter().enumerate() {
        if owner[sd as usize] == u8::MAX {
            owner[sd as usize] = k as u8;
            load[k] += net.eps[sd as usize] as u64;
            fronts[k].push_back(sd);
        }
    }
    let free_arc = |owner: &[u8], x: u32| {
        net.arcs(x)
            .find(|&a| owner[net.to[a as usize] as usize] == u8::MAX)
    };
    loop {
        let mut best: Option<(usize, u32)> = None;
        for k in 0..l {
            while let Some(&x) = fronts[k].front() {
                if let Some(a) = free_arc(&owner, x) {
                    if best.is_none_or(|(b, _)| load[k] < load[b]) {
                        best = Some((k, net.to[a as usize]));
                    }
                    break;
                }
                fronts[k].pop_front();
            }
        }
        let Some((k, y)) = best else { break };
        owner[y as usize] = k as u8;
        load[k] += net.eps[y as usize] as u64;
        fronts[k].push_back(y);
    }
    // Switches no region reached have no endpoints (other components).
    (0..n_ep as u32)
        .map(|e| {
            let o = owner[topo.endpoint_switch(EndpointId(e)).0 .0 as usize];
            if o == u8::MAX {
                0
            } else {
                o
            }
        })
        .collect()
}

/// Routes every layer; returns the LFTs.
fn route_layers(
    topo: &Topology,
    net: &Net,
    layers: u8,
    layer_of: &[u8],
    stats: &mut NueStats,
) -> Result<Vec<Vec<PortNum>>, RoutingError> {
    let n = net.switches();
    let n_ep = topo.num_endpoints();
    let mut lft = vec![vec![NO_ROUTE; n_ep]; n];
    stats.destinations = vec![0; layers as usize];
    if n_ep == 0 || n == 0 {
        return Ok(lft);
    }
    let inside = main_component(topo, net)?;
    let need: usize = inside.iter().filter(|&&i| i).count();
    let home: Vec<(u32, PortNum)> = (0..n_ep as u32)
        .map(|e| {
            let (s, p) = topo.endpoint_switch(EndpointId(e));
            (s.0, p)
        })
        .collect();
    let l_count = layers as usize;
    let mut dest_weight = vec![vec![0u32; n]; l_count];
    for (e, &(s, _)) in home.iter().enumerate() {
        dest_weight[layer_of[e] as usize][s as usize] += 1;
        stats.destinations[layer_of[e] as usize] += 1;
    }
    let roots = central_switches(net, &inside, &dest_weight)?;
    let channels = net.to.len();
    let mut cdg = LayerCdg::new(channels, net.turns());
    let mut weight = vec![0u64; channels];
    let mut search = Search::new(n);
    // Switches held to their escape routes for the current destination, and those routes.
    let mut fixed = vec![u32::MAX; n];
    let mut fixed_list: Vec<u32> = Vec::new();
    let mut esc = vec![u32::MAX; n];
    for l in 0..l_count {
        cdg.clear();
        let tree = EscapeTree::new(net, roots[l]);
        let dest_switches: Vec<u32> = (0..n as u32)
            .filter(|&t| dest_weight[l][t as usize] > 0)
            .collect();
        if !tree.seed(net, &dest_switches, &mut cdg) {
            return Err(RoutingError::Unroutable(
                "nue: the escape paths of a layer form a dependency cycle (internal error)".into(),
            ));
        }
        for e in (0..n_ep).filter(|&e| layer_of[e] as usize == l) {
            flitsim_topology::cancel::check()?;
            let (t, eport) = home[e];
            cdg.begin();
            let mut escaped = false;
            loop {
                if search.run(net, &mut cdg, &weight, t, &fixed, &fixed_list) == need {
                    break;
                }
                // An impasse: the unreached switches, and every switch on their escape
                // routes, take the escape routes; the search runs again around them.
                cdg.rollback(net);
                if !escaped {
                    escaped = true;
                    stats.fallbacks += 1;
                    tree.routes_to(net, t, &mut esc);
                }
                let unreached = (0..n).filter(|&u| inside[u] && !search.done[u]);
                for u in unreached.collect::<Vec<_>>() {
                    let mut v = u;
                    while v != t as usize && fixed[v] == u32::MAX {
                        fixed[v] = esc[v];
                        fixed_list.push(v as u32);
                        v = net.to[esc[v] as usize] as usize;
                    }
                }
            }
            stats.escape_switches += fixed_list.len() as u64;
            for &x in &fixed_list {
                fixed[x as usize] = u32::MAX;
            }
            fixed_list.clear();
            lft[t as usize][e] = eport;
            search.commit(net, &mut weight, |x, a| lft[x][e] = net.port[a as usize]);
        }
        stats.blocked += cdg.blocked;
        stats.dependencies += cdg.present;
    }
    Ok(lft)
}

/// A switch's offer to join the tree: (hops, cost, 1 if its dependency is not yet in the CDG,
/// switch, arc towards the tree); the smallest wins.
type Candidate = (u32, u64, u8, u32, u32);

/// Buffers of the per-destination search.
struct Search {
    /// Arc each switch forwards by (`u32::MAX`: the destination's switch or unreached).
    chan: Vec<u32>,
    done: Vec<bool>,
    hops: Vec<u32>,
    cost: Vec<u64>,
    /// Switches in the order they joined the tree (parents before children).
    order: Vec<u32>,
    acc: Vec<u64>,
    heap: BinaryHeap<Reverse<Candidate>>,
}

impl Search {
    fn new(n: usize) -> Self {
        Search {
            chan: vec![u32::MAX; n],
            done: vec![false; n],
            hops: vec![0; n],
            cost: vec![0; n],
            order: Vec::with_capacity(n),
            acc: vec![0; n],
            heap: BinaryHeap::new(),
        }
    }

    /// The modified Dijkstra search from switch `t` on the layer's CDG, the switches of
    /// `fixed_list` being held to the arcs `fixed` gives them (routes towards `t` whose
    /// dependencies are in the CDG); returns the number of switches reached (`t` included).
    fn run(
        &mut self,
        net: &Net,
        cdg: &mut LayerCdg,
        weight: &[u64],
        t: u32,
        fixed: &[u32],
        fixed_list: &[u32],
    ) -> usize {
        self.chan.fill(u32::MAX);
        self.done.fill(false);
        self.order.clear();
        self.heap.clear();
        self.done[t as usize] = true;
        self.hops[t as usize] = 0;
        self.cost[t as usize] = 0;
        self.order.push(t);
        // Held switches join first, each after the switch it forwards to.
        let mut chain = Vec::new();
        for &x in fixed_list {
            let mut v = x;
            while !self.done[v as usize] {
                chain.push(v);
                v = net.to[fixed[v as usize] as usize];
            }
            while let Some(v) = chain.pop() {
                let a = fixed[v as usize];
                let p = net.to[a as usize] as usize;
                self.done[v as usize] = true;
                self.chan[v as usize] = a;
                self.hops[v as usize] = self.hops[p] + 1;
                self.cost[v as usize] = self.cost[p] + weight[a as usize];
                self.order.push(v);
            }
        }
        for i in 0..self.order.len() {
            let x = self.order[i];
            self.relax(net, cdg, weight, x);
        }
        while let Some(Reverse((h, c, _, x, a))) = self.heap.pop() {
            if self.done[x as usize] {
                continue;
            }
            let p = net.to[a as usize];
            let pa = self.chan[p as usize];
            if pa != u32::MAX && !cdg.try_add(net.turn(a, pa), a, pa) {
                continue;
            }
            self.done[x as usize] = true;
            self.chan[x as usize] = a;
            self.hops[x as usize] = h;
            self.cost[x as usize] = c;
            self.order.push(x);
            self.relax(net, cdg, weight, x);
        }
        self.order.len()
    }

    /// Offers every unsettled neighbour `y` of the settled switch `x` the arc `y → x`.
    fn relax(&mut self, net: &Net, cdg: &LayerCdg, weight: &[u64], x: u32) {
        let xa = self.chan[x as usize];
        let (h, c) = (self.hops[x as usize] + 1, self.cost[x as usize]);
        for a in net.arcs(x) {
            let b = net.back[a as usize];
            let y = net.from[b as usize];
            if self.done[y as usize] || net.to[b as usize] != x {
                continue;
            }
            let absent = if xa == u32::MAX {
                0
            } else {
                match cdg.state[net.turn(b, xa)] {
                    PRESENT => 0,
                    BLOCKED => continue,
                    _ => 1,
                }
            };
            self.heap
                .push(Reverse((h, c + weight[b as usize], absent, y, b)));
        }
    }

    /// Writes the routes of the tree in `order`/`chan` with `set(switch, arc)` and adds the
    /// endpoint paths over each arc to its weight.
    fn commit(&mut self, net: &Net, weight: &mut [u64], mut set: impl FnMut(usize, u32)) {
        for &x in &self.order {
            self.acc[x as usize] = 0;
        }
        for &x in self.order.iter().rev() {
            let a = self.chan[x as usize];
            if a == u32::MAX {
                continue;
            }
            let paths = self.acc[x as usize] + net.eps[x as usize] as u64;
            weight[a as usize] += paths;
            self.acc[net.to[a as usize] as usize] += paths;
            set(x as usize, a);
        }
    }
}

#[cfg(test)]
#[path = "nue_tests.rs"]
mod tests;
