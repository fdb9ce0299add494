//! Shared machinery of the engines that route on a plain switch graph (`updn`, `sssp`) and of
//! the *layered* engines (`lash`, `dfsssp`): a compact switch graph, the set of paths that
//! destination-based tables induce, their channel dependencies, and the assignment of paths to
//! virtual layers so that every layer's channel dependency graph is acyclic.
//!
//! **Layers.** A virtual layer is one VL of a class's block, selected by the path SL (Lysne,
//! Skeie, Reinemo & Theiss, "Layered routing in irregular networks", IEEE TPDS 17(1), 2006).
//! Every hop of a path stays on its layer's VL, so the channel dependency graph (CDG) of the
//! whole fabric is the disjoint union of the layers' CDGs: it is acyclic exactly when each
//! layer's is (Dally & Seitz 1987).
//!
//! **Paths.** Links from and to endpoints never lie on a dependency cycle (see [`crate::cdg`]),
//! so a path is the sequence of directed switch-to-switch links ("channels") it uses. All
//! endpoints attached to one switch have the same channel sequence towards a destination, so
//! paths are kept per *unit* (source switch, destination) with a weight counting the endpoint
//! pairs the unit stands for, and expanded to endpoint pairs only when the path SL table is
//! written.
use super::tables::{lane_fabric, pair_lane, path_sls, PathSls};
use super::{fit_lanes, RoutingRequest, VlBlocks};
use crate::{FabricConfig, RoutingError, NO_ROUTE};
use flitsim_topology::{Bfs, EndpointId, NodeId, PortNum, SwitchId, Topology};

/// One directed switch-to-switch link as seen from its source switch.
#[derive(Clone, Copy, Debug)]
pub(super) struct Arc {
    /// Output port at the source switch.
    pub port: PortNum,
    /// The switch it leads to.
    pub to: u32,
    /// Port of the far switch the link arrives on.
    pub to_port: PortNum,
    /// Channel id of this direction: `topo.port_index(source, port)`.
    pub chan: u32,
    /// Channel id of the opposite direction: `topo.port_index(to, to_port)`.
    pub back: u32,
}

/// The switch graph in CSR form, with parallel links as separate arcs (in port order).
pub(super) struct SwitchGraph {
    offsets: Vec<u32>,
    arcs: Vec<Arc>,
    /// Endpoints attached to each switch.
    pub eps: Vec<u32>,
    /// Number of channel ids (`topo.total_switch_ports()`).
    pub channels: usize,
}

impl SwitchGraph {
    /// Builds the graph of `topo`'s switches.
    pub fn new(topo: &Topology) -> Self {
        let n = topo.num_switches();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut arcs = Vec::new();
        let mut eps = Vec::with_capacity(n);
        offsets.push(0);
        for s in 0..n as u32 {
            let sid = SwitchId(s);
            arcs.extend(topo.switch_neighbours(sid).map(|(p, t, tp)| Arc {
                port: p,
                to: t.0,
                to_port: tp,
                chan: topo.port_index(sid, p) as u32,
                back: topo.port_index(t, tp) as u32,
            }));
            offsets.push(arcs.len() as u32);
            eps.push(topo.switch_endpoints(sid).count() as u32);
        }
        SwitchGraph {
            offsets,
            arcs,
            eps,
            channels: topo.total_switch_ports(),
        }
    }

    /// Number of switches.
    pub fn len(&self) -> usize {
        self.eps.len()
    }

    /// Arcs leaving switch `s`, in port order.
    pub fn arcs(&self, s: u32) -> &[Arc] {
        &self.arcs[self.offsets[s as usize] as usize..self.offsets[s as usize + 1] as usize]
    }

    /// Hop distances from `sources` to every switch ([`Bfs::UNREACHED`] if none), searched
    /// with the buffers of `bfs`.
    pub fn distances<'b>(
        &self,
        bfs: &'b mut Bfs,
        sources: impl IntoIterator<Item = u32>,
    ) -> &'b [u32] {
        bfs.run(self.len(), sources, |u| self.arcs(u).iter().map(|a| a.to))
    }

    /// The first switch with endpoints that `dist` marks unreached, if any.
    pub fn unreached_endpoint_switch(&self, dist: &[u32]) -> Option<usize> {
        (0..self.len()).find(|&s| dist[s] == Bfs::UNREACHED && self.eps[s] > 0)
    }
}

/// Paths induced by destination-based tables, one per unit (source switch with endpoints,
/// destination). Unit `r · dests + d` starts at the `r`-th switch that has endpoints.
pub(super) struct PathSet {
    /// Row of each switch: its rank among the switches that have endpoints, in id order
    /// (`u32::MAX` if it has no endpoints).
    pub row: Vec<u32>,
    /// Number of destinations (columns).
    pub dests: usize,
    /// Endpoint pairs each unit stands for.
    pub weight: Vec<u32>,
    /// `chans[chan_off[u]..chan_off[u + 1]]` are the channels of unit `u`, in path order.
    chan_off: Vec<u32>,
    chans: Vec<u32>,
}

impl PathSet {
    /// Follows `lft` from every switch with endpoints to every destination. With
    /// `per_switch = false` the destinations are the endpoints; with `per_switch = true` they
    /// are the switches with endpoints (in `sources` order), followed through the LFT entry of
    /// their first endpoint, which the engine must route like all other endpoints of that
    /// switch. Fails naming the pair if the tables loop or end nowhere.
    pub fn from_lft(
        topo: &Topology,
        g: &SwitchGraph,
        lft: &[Vec<PortNum>],
        per_switch: bool,
    ) -> Result<Self, RoutingError> {
        let sources: Vec<u32> = (0..g.len() as u32)
            .filter(|&s| g.eps[s as usize] > 0)
            .collect();
        let mut row = vec![u32::MAX; g.len()];
        for (r, &s) in sources.iter().enumerate() {
            row[s as usize] = r as u32;
        }
        // (representative endpoint, its switch, endpoints it stands for) per destination.
        let targets: Vec<(u32, u32, u32)> = if per_switch {
            sources
                .iter()
                .map(|&t| {
                    let (_, e) = topo
                        .switch_endpoints(SwitchId(t))
                        .next()
                        .expect("source switches have endpoints");
                    (e.0, t, g.eps[t as usize])
                })
                .collect()
        } else {
            (0..topo.num_endpoints() as u32)
                .map(|e| (e, topo.endpoint_switch(EndpointId(e)).0 .0, 1))
                .collect()
        };
        let dests = targets.len();
        let units = sources.len() * dests;
        let mut weight = Vec::with_capacity(units);
        let mut chan_off = Vec::with_capacity(units + 1);
        let mut chans = Vec::new();
        chan_off.push(0u32);
        for &s in &sources {
            for &(e, t, w) in &targets {
                weight.push(g.eps[s as usize] * w);
                let mut at = s;
                let mut steps = 0;
                while at != t {
                    let port = lft[at as usize][e as usize];
                    let next = (port != NO_ROUTE)
                        .then(|| topo.switch_peer(SwitchId(at), port))
                        .flatten()
                        .map(|p| p.remote.node);
                    let Some(NodeId::Switch(next)) = next else {
                        return Err(RoutingError::Unroutable(format!(
                            "switch {} has no route towards endpoint {e}",
                            topo.switches()[at as usize].name
                        )));
                    };
                    steps += 1;
                    if steps > g.len() {
                        return Err(RoutingError::Loop(format!(
                            "traffic to endpoint {e} loops through switch {}",
                            topo.switches()[at as usize].name
                        )));
                    }
                    chans.push(topo.port_index(SwitchId(at), port) as u32);
                    at = next;
                }
                chan_off.push(chans.len() as u32);
            }
        }
        Ok(PathSet {
            row,
            dests,
            weight,
            chan_off,
            chans,
        })
    }

    /// Number of units.
    pub fn len(&self) -> usize {
        self.weight.len()
    }

    /// Channels of unit `u`.
    pub fn channels(&self, u: usize) -> &[u32] {
        &self.chans[self.chan_off[u] as usize..self.chan_off[u + 1] as usize]
    }
}

/// The distinct channel dependencies of a [`PathSet`], indexed both ways.
pub(super) struct Deps {
    /// Dependency `i` is `from[i] → to[i]`; sorted by `(from, to)`.
    from: Vec<u32>,
    to: Vec<u32>,
    /// Dependencies leaving channel `c` are `out_off[c]..out_off[c + 1]`.
    out_off: Vec<u32>,
    /// Dependencies entering channel `c` are `in_ids[in_off[c]..in_off[c + 1]]`.
    in_off: Vec<u32>,
    in_ids: Vec<u32>,
    /// Dependencies of unit `u`, in path order.
    unit_off: Vec<u32>,
    unit_deps: Vec<u32>,
    /// Units inducing dependency `i`.
    dep_off: Vec<u32>,
    dep_units: Vec<u32>,
}

impl Deps {
    /// Collects the dependencies of `paths` over `channels` channel ids.
    pub fn new(paths: &PathSet, channels: usize) -> Self {
        let key = |a: u32, b: u32| (a as u64) << 32 | b as u64;
        let mut keys: Vec<u64> = Vec::new();
        for u in 0..paths.len() {
            keys.extend(paths.channels(u).windows(2).map(|w| key(w[0], w[1])));
        }
        keys.sort_unstable();
        keys.dedup();
        let from: Vec<u32> = keys.iter().map(|&k| (k >> 32) as u32).collect();
        let to: Vec<u32> = keys.iter().map(|&k| k as u32).collect();
        // `from` is sorted, so the dependencies leaving a channel are already contiguous.
        let (out_off, _) = group_by_key(channels, ids(&from));
        let (in_off, in_ids) = group_by_key(channels, ids(&to));
        let mut unit_off = Vec::with_capacity(paths.len() + 1);
        let mut unit_deps = Vec::new();
        unit_off.push(0u32);
        for u in 0..paths.len() {
            for w in paths.channels(u).windows(2) {
                let (lo, hi) = (
                    out_off[w[0] as usize] as usize,
                    out_off[w[0] as usize + 1] as usize,
                );
                let i = lo
                    + to[lo..hi]
                        .binary_search(&w[1])
                        .expect("every dependency was collected");
                unit_deps.push(i as u32);
            }
            unit_off.push(unit_deps.len() as u32);
        }
        let (dep_off, dep_units) = group_by_key(
            keys.len(),
            (0..paths.len()).flat_map(|u| {
                unit_deps[unit_off[u] as usize..unit_off[u + 1] as usize]
                    .iter()
                    .map(move |&i| (i, u as u32))
            }),
        );
        Deps {
            from,
            to,
            out_off,
            in_off,
            in_ids,
            unit_off,
            unit_deps,
            dep_off,
            dep_units,
        }
    }

    /// Number of distinct dependencies.
    pub fn len(&self) -> usize {
        self.from.len()
    }

    /// Dependencies of unit `u`.
    pub fn of_unit(&self, u: usize) -> &[u32] {
        &self.unit_deps[self.unit_off[u] as usize..self.unit_off[u + 1] as usize]
    }

    /// Units inducing dependency `i`.
    fn units_of(&self, i: u32) -> &[u32] {
        &self.dep_units[self.dep_off[i as usize] as usize..self.dep_off[i as usize + 1] as usize]
    }

    /// Dependency ids leaving channel `c`.
    fn out(&self, c: u32) -> std::ops::Range<u32> {
        self.out_off[c as usize]..self.out_off[c as usize + 1]
    }

    /// Dependency ids entering channel `c`.
    fn into(&self, c: u32) -> &[u32] {
        &self.in_ids[self.in_off[c as usize] as usize..self.in_off[c as usize + 1] as usize]
    }
}

/// `(channel, dependency id)` for each dependency's end in `ends`.
fn ids(ends: &[u32]) -> impl Iterator<Item = (u32, u32)> + Clone + '_ {
    ends.iter().enumerate().map(|(i, &c)| (c, i as u32))
}

/// Groups `(key, value)` pairs by key (a stable counting sort): the values of key `k` are
/// `values[offsets[k]..offsets[k + 1]]`, in input order. Keys must be below `keys`.
fn group_by_key(
    keys: usize,
    pairs: impl Iterator<Item = (u32, u32)> + Clone,
) -> (Vec<u32>, Vec<u32>) {
    let mut offsets = vec![0u32; keys + 1];
    for (k, _) in pairs.clone() {
        offsets[k as usize + 1] += 1;
    }
    for k in 0..keys {
        offsets[k + 1] += offsets[k];
    }
    let mut fill = offsets.clone();
    let mut values = vec![0u32; offsets[keys] as usize];
    for (k, v) in pairs {
        values[fill[k as usize] as usize] = v;
        fill[k as usize] += 1;
    }
    (offsets, values)
}

/// Which edge of a dependency cycle the offline cycle breaking cuts (Domke, Hoefler & Nagel,
/// "Deadlock-Free Oblivious Routing for Arbitrary Topologies", IPDPS 2011, Section IV). All
/// paths inducing the chosen dependency move to the next layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CycleHeuristic {
    /// The dependency induced by the fewest paths (the paper's choice: it moves the fewest
    /// paths to the next layer).
    #[default]
    Weakest,
    /// The dependency induced by the most paths (hoping to break undiscovered cycles of the
    /// same paths at once).
    Strongest,
    /// The first dependency of the cycle the search discovered (the paper's "pseudo-random"
    /// heuristic).
    First,
}

impl CycleHeuristic {
    /// Lower-case name, as in option strings.
    pub fn name(self) -> &'static str {
        match self {
            CycleHeuristic::Weakest => "weakest",
            CycleHeuristic::Strongest => "strongest",
            CycleHeuristic::First => "first",
        }
    }
}

/// Layer of each unit and the number of layers used, or the number of layers reached when
/// the search gave up at `cap`.
pub(super) type LayerResult = Result<(Vec<u8>, usize), usize>;

/// Algorithm 2 of Domke, Hoefler & Nagel (IPDPS 2011): every path starts in layer 0; an
/// iterative depth-first search looks for a cycle in the current layer's CDG; when it finds
/// one it cuts the edge `heuristic` picks by moving every path of this layer that induces it
/// to the next layer, and resumes where it stopped. When the layer is acyclic, the next one
/// is processed the same way, until a layer keeps all its paths. Returns the layer of every
/// unit and the number of layers; fails with the number reached if more than `cap` layers
/// would be needed.
///
/// Resuming is sound: the search keeps the invariant that black (finished) channels only
/// depend on black channels, and the black part is acyclic. Cutting edges never breaks that.
/// Cutting may break the grey path the search is on; the path is then truncated before the
/// first edge that vanished, and the channels above return to white to be searched again.
pub(super) fn offline_layers(
    paths: &PathSet,
    deps: &Deps,
    channels: usize,
    heuristic: CycleHeuristic,
    cap: usize,
) -> LayerResult {
    const WHITE: u8 = 0;
    const GREY: u8 = 1;
    const BLACK: u8 = 2;
    let mut layer = vec![0u8; paths.len()];
    // Paths (endpoint pairs) of the current / next layer inducing each dependency.
    let mut cnt = vec![0u64; deps.len()];
    let mut next = vec![0u64; deps.len()];
    for u in 0..paths.len() {
        for &i in deps.of_unit(u) {
            cnt[i as usize] += paths.weight[u] as u64;
        }
    }
    let mut colour = vec![WHITE; channels];
    let mut position = vec![0u32; channels];
    // The grey path: channel, next dependency to look at, dependency it was entered by.
    let mut stack: Vec<(u32, u32, u32)> = Vec::new();
    let mut current: usize = 0;
    loop {
        colour.fill(WHITE);
        let mut moved_any = false;
        for root in 0..channels as u32 {
            if colour[root as usize] != WHITE || deps.out(root).is_empty() {
                continue;
            }
            colour[root as usize] = GREY;
            position[root as usize] = 0;
            stack.push((root, deps.out(root).start, u32::MAX));
            while let Some(top) = stack.last_mut() {
                let (u, cursor, _) = *top;
                if cursor == deps.out(u).end {
                    colour[u as usize] = BLACK;
                    stack.pop();
                    continue;
                }
                top.1 += 1;
                if cnt[cursor as usize] == 0 {
                    continue;
                }
                let v = deps.to[cursor as usize];
                match colour[v as usize] {
                    WHITE => {
                        colour[v as usize] = GREY;
                        position[v as usize] = stack.len() as u32;
                        stack.push((v, deps.out(v).start, cursor));
                    }
                    GREY => {
                        // Cycle: the dependencies the grey path entered v's successors by,
                        // then the back edge.
                        let start = position[v as usize] as usize + 1;
                        let cycle = stack[start..]
                            .iter()
                            .map(|&(_, _, d)| d)
                            .chain(std::iter::once(cursor));
                        let cut = match heuristic {
                            CycleHeuristic::First => {
                                stack.get(start).map_or(cursor, |&(_, _, d)| d)
                            }
                            CycleHeuristic::Weakest => cycle
                                .min_by_key(|&d| cnt[d as usize])
                                .expect("a cycle has edges"),
                            CycleHeuristic::Strongest => cycle
                                .rev()
                                .max_by_key(|&d| cnt[d as usize])
                                .expect("a cycle has edges"),
                        };
                        moved_any = true;
                        for &p in deps.units_of(cut) {
                            let p = p as usize;
                            if layer[p] as usize != current {
                                continue;
                            }
                            layer[p] = (current + 1).min(u8::MAX as usize) as u8;
                            let w = paths.weight[p] as u64;
                            for &i in deps.of_unit(p) {
                                cnt[i as usize] -= w;
                                next[i as usize] += w;
                            }
                        }
                        // Truncate the grey path before the first edge that vanished.
                        if let Some(j) = (1..stack.len()).find(|&j| cnt[stack[j].2 as usize] == 0) {
                            for &(c, _, _) in &stack[j..] {
                                colour[c as usize] = WHITE;
                            }
                            stack.truncate(j);
                        }
                    }
                    _ => {}
                }
            }
        }
        if !moved_any {
            return Ok((layer, current + 1));
        }
        current += 1;
        if current + 1 > cap {
            return Err(current + 1);
        }
        std::mem::swap(&mut cnt, &mut next);
        next.fill(0);
    }
}

/// The online assignment (Domke et al. 2011, Section IV, first approach; it is also how LASH
/// assigns paths, Skeie, Lysne & Theiss, "Layered Shortest Path (LASH) Routing in Irregular
/// System Area Networks", IPDPS 2002): units in index order go to the first layer whose CDG
/// stays acyclic with the unit's dependencies added; a new layer is opened when none does.
/// Fails with the number of layers reached if more than `cap` would be needed.
pub(super) fn online_layers(
    paths: &PathSet,
    deps: &Deps,
    channels: usize,
    cap: usize,
) -> LayerResult {
    let order: Vec<u32> = (0..paths.len() as u32).collect();
    first_fit_layers(paths, deps, channels, &order, cap, u64::MAX).map_err(|stop| match stop {
        FitStop::Cap(n) => n,
        FitStop::Budget => unreachable!("no budget"),
    })
}

/// Why [`first_fit_layers`] stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FitStop {
    /// It would need more than the cap: the number of layers reached.
    Cap(usize),
    /// Its searches visited more channels than the budget.
    Budget,
}

/// First-fit layering of the units in `order` (see [`online_layers`]).
///
/// Every layer keeps a topological order of its CDG and inserts dependencies one at a time
/// with the dynamic topological sort of Pearce & Kelly ("A dynamic topological sort algorithm
/// for directed acyclic graphs", ACM JEA 11, 2006): an edge `x → y` with `x` already before
/// `y` costs nothing; otherwise only the channels ordered between `y` and `x` are searched, and
/// reaching `x` from `y` is a cycle. A unit that closes a cycle is taken out of the layer again;
/// the order stays valid because it was valid for a superset of the remaining edges. This keeps
/// the first-fit cost near the size of the affected region instead of a search of the whole
/// layer per path, which the paper found too slow for large networks.
///
/// `budget` bounds the channels all searches may visit ([`FitStop::Budget`] beyond it).
pub(super) fn first_fit_layers(
    paths: &PathSet,
    deps: &Deps,
    channels: usize,
    order: &[u32],
    cap: usize,
    budget: u64,
) -> Result<(Vec<u8>, usize), FitStop> {
    let mut layer = vec![0u8; paths.len()];
    let mut layers: Vec<PkLayer> = vec![PkLayer::new(deps.len(), channels)];
    let mut search = PkSearch::new(channels);
    let mut added: Vec<u32> = Vec::new();
    for &u in order {
        let u = u as usize;
        let own = deps.of_unit(u);
        if own.is_empty() {
            continue;
        }
        let mut l = 0;
        loop {
            if l == layers.len() {
                if l + 1 > cap {
                    return Err(FitStop::Cap(l + 1));
                }
                layers.push(PkLayer::new(deps.len(), channels));
            }
            if search.steps > budget {
                return Err(FitStop::Budget);
            }
            let lay = &mut layers[l];
            added.clear();
            let mut fits = true;
            for &i in own {
                if lay.present[i as usize] {
                    continue;
                }
                lay.present[i as usize] = true;
                added.push(i);
                if !lay.insert(deps, &mut search, i) {
                    fits = false;
                    break;
                }
            }
            if fits {
                break;
            }
            for &i in &added {
                lay.present[i as usize] = false;
            }
            l += 1;
        }
        layer[u] = l as u8;
    }
    Ok((layer, layers.len()))
}

/// Channels a first-fit restart may visit per path dependency (see [`first_fit_restarts`]).
pub(super) const RESTART_STEPS_PER_DEP: u64 = 16;

/// Restarts of the first-fit layering (see [`super::DfssspEngine::restarts`]): run 0 takes the
/// units longest path first (ties in index order), run `k > 0` longest first with ties in a
/// random order drawn from seed `k`. The run with the fewest layers wins, ties to the lower
/// run; `None` when no run stays within `cap` layers.
///
/// Every run may visit at most [`RESTART_STEPS_PER_DEP`] channels per path dependency in its
/// searches (a deterministic work bound, not a time limit); on fabrics where first fit is that
/// expensive (Kautz graphs of 1000+ switches) restarts would cost many times the offline
/// algorithm. Run 0 goes first and alone: if it exceeds the bound, no other run is tried. The
/// others go in parallel in chunks of the thread count; after each chunk the cap drops to one
/// below the best count so far, so later runs stop as soon as they cannot win. The lowest run
/// with the minimum count is never stopped by the cap (every earlier run needed more), so the
/// result does not depend on the number of threads.
pub(super) fn first_fit_restarts(
    paths: &PathSet,
    deps: &Deps,
    channels: usize,
    runs: u32,
    cap: usize,
) -> Option<(Vec<u8>, usize)> {
    use rand::{seq::SliceRandom, SeedableRng};
    use rayon::prelude::*;
    let budget = RESTART_STEPS_PER_DEP.saturating_mul(deps.unit_deps.len() as u64);
    let run = |k: u32, cap: usize| {
        let mut order: Vec<u32> = (0..paths.len() as u32).collect();
        if k > 0 {
            order.shuffle(&mut rand_pcg::Pcg64::seed_from_u64(k as u64));
        }
        order.sort_by_key(|&u| std::cmp::Reverse(paths.channels(u as usize).len()));
        first_fit_layers(paths, deps, channels, &order, cap, budget)
    };
    // With a cap of 0 (the paper's assignment has one layer) nothing can win.
    if runs == 0 || cap == 0 {
        return None;
    }
    let mut best: Option<(Vec<u8>, usize)> = None;
    let mut cap = cap;
    match run(0, cap) {
        Ok(r) => {
            cap = r.1 - 1;
            best = Some(r);
        }
        Err(FitStop::Budget) => return None,
        Err(FitStop::Cap(_)) => {}
    }
    let chunk = rayon::current_num_threads().max(1) as u32;
    let mut k0 = 1;
    while k0 < runs && cap > 0 {
        let results: Vec<_> = (k0..runs.min(k0 + chunk))
            .into_par_iter()
            .map(|k| run(k, cap).ok())
            .collect();
        for r in results.into_iter().flatten() {
            if best.as_ref().is_none_or(|b| r.1 < b.1) {
                cap = r.1 - 1;
                best = Some(r);
            }
        }
        k0 += chunk;
    }
    best
}

/// One layer of [`first_fit_layers`]: its dependencies and a topological order of its CDG.
struct PkLayer {
    present: Vec<bool>,
    /// Position of every channel in the topological order.
    ord: Vec<u32>,
}

/// Scratch space of the Pearce–Kelly searches, shared by all layers.
struct PkSearch {
    /// Channels visited by all searches so far (the work measure of [`first_fit_layers`]).
    steps: u64,
    stamp: Vec<u32>,
    gen: u32,
    stack: Vec<u32>,
    forward: Vec<u32>,
    backward: Vec<u32>,
    slots: Vec<u32>,
}

impl PkSearch {
    fn new(channels: usize) -> Self {
        PkSearch {
            steps: 0,
            stamp: vec![0; channels],
            gen: 0,
            stack: Vec::new(),
            forward: Vec::new(),
            backward: Vec::new(),
            slots: Vec::new(),
        }
    }

    fn next_gen(&mut self) -> u32 {
        self.gen = self.gen.wrapping_add(1);
        if self.gen == 0 {
            self.stamp.fill(0);
            self.gen = 1;
        }
        self.gen
    }
}

impl PkLayer {
    fn new(deps: usize, channels: usize) -> Self {
        PkLayer {
            present: vec![false; deps],
            ord: (0..channels as u32).collect(),
        }
    }

    /// Adds the (already marked present) dependency `i`; false if it closes a cycle, in which
    /// case the order is unchanged.
    fn insert(&mut self, deps: &Deps, s: &mut PkSearch, i: u32) -> bool {
        let (x, y) = (deps.from[i as usize], deps.to[i as usize]);
        let (lb, ub) = (self.ord[y as usize], self.ord[x as usize]);
        if ub < lb {
            return true;
        }
        // Forward from y over channels ordered before x: reaching x is a cycle.
        let g = s.next_gen();
        s.forward.clear();
        s.stack.clear();
        s.stack.push(y);
        s.stamp[y as usize] = g;
        while let Some(c) = s.stack.pop() {
            s.steps += 1;
            s.forward.push(c);
            for d in deps.out(c) {
                if !self.present[d as usize] {
                    continue;
                }
                let w = deps.to[d as usize];
                if w == x {
                    return false;
                }
                if s.stamp[w as usize] != g && self.ord[w as usize] < ub {
                    s.stamp[w as usize] = g;
                    s.stack.push(w);
                }
            }
        }
        // Backward from x over channels ordered after y.
        let g = s.next_gen();
        s.backward.clear();
        s.stack.push(x);
        s.stamp[x as usize] = g;
        while let Some(c) = s.stack.pop() {
            s.steps += 1;
            s.backward.push(c);
            for &d in deps.into(c) {
                if !self.present[d as usize] {
                    continue;
                }
                let w = deps.from[d as usize];
                if s.stamp[w as usize] != g && self.ord[w as usize] > lb {
                    s.stamp[w as usize] = g;
                    s.stack.push(w);
                }
            }
        }
        // Reorder: the backward set, then the forward set, into their pooled positions.
        let ord = &mut self.ord;
        s.forward.sort_unstable_by_key(|&c| ord[c as usize]);
        s.backward.sort_unstable_by_key(|&c| ord[c as usize]);
        s.slots.clear();
        s.slots.extend(
            s.backward
                .iter()
                .chain(s.forward.iter())
                .map(|&c| ord[c as usize]),
        );
        s.slots.sort_unstable();
        for (&c, &p) in s.backward.iter().chain(s.forward.iter()).zip(&s.slots) {
            ord[c as usize] = p;
        }
        true
    }
}

/// Endpoint pairs per layer.
pub(super) fn layer_weights(paths: &PathSet, layer: &[u8], layers: usize) -> Vec<u64> {
    let mut w = vec![0u64; layers];
    for (u, &l) in layer.iter().enumerate() {
        w[l as usize] += paths.weight[u] as u64;
    }
    w
}

/// Layer balancing (Domke et al. 2011, end of Algorithm 2): with `lanes` VLs for `used`
/// layers, every layer keeps its own lane and each spare lane goes to the layer with the most
/// endpoint pairs per lane; a layer's paths are then spread over its lanes. Any subset of an
/// acyclic layer's paths is acyclic, so no further cycle search is needed. Returns the first
/// lane and the lane count of every layer.
pub(super) fn balance_groups(weights: &[u64], lanes: usize) -> Vec<(u8, u8)> {
    let mut size = vec![1u64; weights.len()];
    for _ in weights.len()..lanes {
        // Largest weight / size; ties to the lower layer.
        let best = (0..weights.len())
            .max_by(|&a, &b| {
                (weights[a] as u128 * size[b] as u128)
                    .cmp(&(weights[b] as u128 * size[a] as u128))
                    .then(b.cmp(&a))
            })
            .expect("at least one layer");
        size[best] += 1;
    }
    let mut base = 0u64;
    size.iter()
        .map(|&s| {
            let g = (base as u8, s as u8);
            base += s;
            g
        })
        .collect()
}

/// What a layered engine hands to [`layered_fabric`].
pub(super) struct LayerPlan<'a> {
    /// Engine name for the tables and messages.
    pub engine: &'static str,
    /// What the layers were computed with, for the error message.
    pub method: String,
    /// Layers needed (≥ 1), or `Err(n)`: the search gave up after `n` layers.
    pub needed: Result<usize, usize>,
    /// Endpoint pairs per layer.
    pub weights: Vec<u64>,
    /// Spread the layers over all VLs of a class's block.
    pub balance: bool,
    /// Use at most this many VLs per class.
    pub max_layers: Option<u8>,
    /// Layer of the path from `src` to `dst` (endpoints).
    pub layer_of: &'a dyn Fn(usize, usize) -> u8,
}

/// Builds the tables of a layered routing: path SL = lane of the path's layer, VL = first VL
/// of the class's block + path SL on every hop and on the injection link. Fails with
/// [`RoutingError::NotEnoughVls`] naming the number of layers needed when the VLs (or
/// `max_layers`) cannot hold them.
pub(super) fn layered_fabric(
    topo: &Topology,
    req: &RoutingRequest,
    lft: Vec<Vec<PortNum>>,
    plan: &LayerPlan,
) -> Result<FabricConfig, RoutingError> {
    let limit = req.vls.min(plan.max_layers.unwrap_or(u8::MAX));
    let limit_note = match plan.max_layers {
        Some(m) if m < req.vls => format!(" (max_layers = {m})"),
        _ => String::new(),
    };
    let needed = match plan.needed {
        Ok(n) if n <= limit as usize => n as u8,
        Ok(n) => {
            return Err(RoutingError::NotEnoughVls(format!(
                "{} needs {n} virtual layers ({}), but only {limit} VL{} {} available{limit_note}",
                plan.engine,
                plan.method,
                if limit == 1 { "" } else { "s" },
                if limit == 1 { "is" } else { "are" },
            )))
        }
        Err(n) => {
            return Err(RoutingError::NotEnoughVls(format!(
                "{} needs more than {} virtual layers ({}), but only {limit} VL{} {} available{limit_note}",
                plan.engine,
                n - 1,
                plan.method,
                if limit == 1 { "" } else { "s" },
                if limit == 1 { "is" } else { "are" },
            )))
        }
    };
    let blocks = VlBlocks::new(req, needed, plan.engine)?;
    let lanes = if plan.balance {
        fit_lanes(blocks.per_class.min(limit), 1, req.classes, plan.engine)?
    } else {
        needed
    };
    if lanes < needed {
        return Err(RoutingError::Unroutable(format!(
            "{}: {needed} layers with {} classes exceed the 256 wire SLs",
            plan.engine, req.classes
        )));
    }
    let groups = if plan.balance {
        balance_groups(&plan.weights, lanes as usize)
    } else {
        (0..needed).map(|l| (l, 1)).collect()
    };
    let routing_sls = lanes;
    let path_sl = path_sls(topo.num_endpoints(), routing_sls, |src, dst| {
        let (base, size) = groups[(plan.layer_of)(src, dst) as usize];
        base + pair_lane(src, dst, size)
    });
    let sls = PathSls {
        routing_sls,
        layers: needed,
        path_sl,
    };
    Ok(lane_fabric(plan.engine, topo, req, &blocks, lft, sls))
}

/// The error for a switch with endpoints that cannot reach a destination switch.
pub(super) fn disconnected(engine: &str, topo: &Topology, from: u32, to: u32) -> RoutingError {
    RoutingError::Unroutable(format!(
        "{engine}: switch {} cannot reach switch {}: the topology is disconnected",
        topo.switches()[from as usize].name,
        topo.switches()[to as usize].name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::sssp::sssp_lft;
    use flitsim_topology::generators::{self, RandomParams};
    use rand::{seq::SliceRandom, SeedableRng};

    /// Reference: is the graph of `edges` over `n` nodes acyclic (Kahn's algorithm)?
    fn acyclic(n: usize, edges: &[(u32, u32)]) -> bool {
        let mut indeg = vec![0u32; n];
        let mut out = vec![Vec::new(); n];
        for &(a, b) in edges {
            indeg[b as usize] += 1;
            out[a as usize].push(b);
        }
        let mut queue: Vec<u32> = (0..n as u32).filter(|&c| indeg[c as usize] == 0).collect();
        let mut seen = 0;
        while let Some(c) = queue.pop() {
            seen += 1;
            for &b in &out[c as usize] {
                indeg[b as usize] -= 1;
                if indeg[b as usize] == 0 {
                    queue.push(b);
                }
            }
        }
        seen == n
    }

    /// Reference first fit: rebuilds each candidate layer's edge set and runs Kahn's algorithm.
    fn naive_first_fit(paths: &PathSet, deps: &Deps, channels: usize, order: &[u32]) -> Vec<u8> {
        let mut layer = vec![0u8; paths.len()];
        let mut sets: Vec<std::collections::BTreeSet<(u32, u32)>> = vec![Default::default()];
        for &u in order {
            let own: Vec<(u32, u32)> = deps
                .of_unit(u as usize)
                .iter()
                .map(|&i| (deps.from[i as usize], deps.to[i as usize]))
                .collect();
            if own.is_empty() {
                continue;
            }
            let mut l = 0;
            loop {
                if l == sets.len() {
                    sets.push(Default::default());
                }
                let mut cand = sets[l].clone();
                cand.extend(own.iter().copied());
                if acyclic(channels, &cand.iter().copied().collect::<Vec<_>>()) {
                    sets[l] = cand;
                    break;
                }
                l += 1;
            }
            layer[u as usize] = l as u8;
        }
        layer
    }

    #[test]
    fn incremental_first_fit_matches_a_from_scratch_reference() {
        let topos = [
            generators::torus(&[4, 4], 1, 1, 1).unwrap(),
            generators::random(&RandomParams {
                switches: 12,
                ports: 8,
                endpoints_per_switch: 2,
                links: 22,
                multi_links: true,
                latency: 1,
                seed: 3,
            })
            .unwrap(),
        ];
        for topo in &topos {
            let g = SwitchGraph::new(topo);
            let lft = sssp_lft(topo, &g, "test").unwrap();
            let paths = PathSet::from_lft(topo, &g, &lft, false).unwrap();
            let deps = Deps::new(&paths, g.channels);
            for seed in 0..4u64 {
                let mut order: Vec<u32> = (0..paths.len() as u32).collect();
                if seed > 0 {
                    order.shuffle(&mut rand_pcg::Pcg64::seed_from_u64(seed));
                }
                let (fast, n) =
                    first_fit_layers(&paths, &deps, g.channels, &order, 255, u64::MAX).unwrap();
                let slow = naive_first_fit(&paths, &deps, g.channels, &order);
                assert_eq!(fast, slow, "{} order {seed}", topo.name());
                assert!(
                    n >= 2,
                    "{}: a torus or random net needs 2+ layers",
                    topo.name()
                );
                // A cap below the count fails with the count reached.
                assert_eq!(
                    first_fit_layers(&paths, &deps, g.channels, &order, n - 1, u64::MAX)
                        .unwrap_err(),
                    FitStop::Cap(n)
                );
                // A budget of nothing stops at the first search.
                assert_eq!(
                    first_fit_layers(&paths, &deps, g.channels, &order, 255, 0).unwrap_err(),
                    FitStop::Budget
                );
            }
        }
    }
}
