//! The switch graph in compact form ([`SwitchGraph`]), the paths that destination-based
//! tables induce, per unit of (source switch, destination) ([`PathSet`]), and their channel
//! dependencies indexed both ways ([`Deps`]).
use crate::{RoutingError, NO_ROUTE};
use flitsim_topology::{Bfs, EndpointId, NodeId, PortNum, SwitchId, Topology};

/// One directed switch-to-switch link as seen from its source switch.
#[derive(Clone, Copy, Debug)]
pub(in crate::routing) struct Arc {
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
pub(in crate::routing) struct SwitchGraph {
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

    /// The arc leaving `s` with the least `load` among those `ok` accepts, ties to the lowest
    /// port: how every balancing engine chooses between equivalent ports.
    pub fn least_loaded<L: Ord>(
        &self,
        s: u32,
        load: impl Fn(&Arc) -> L,
        ok: impl FnMut(&&Arc) -> bool,
    ) -> Option<&Arc> {
        self.arcs(s)
            .iter()
            .filter(ok)
            .min_by_key(|a| (load(a), a.port))
    }

    /// The min-hop step of a destination switch `t`, `dist` being the hop distances to `t`:
    /// every other switch that reaches `t` forwards through its least-loaded arc one hop closer
    /// ([`SwitchGraph::least_loaded`] by `load` per channel), whose load then grows by
    /// `weight`; `set(s, port)` records the entry. Fails with the first switch that has
    /// endpoints but does not reach `t`.
    pub fn min_hop_towards(
        &self,
        t: u32,
        dist: &[u32],
        load: &mut [u64],
        weight: u64,
        mut set: impl FnMut(usize, PortNum),
    ) -> Result<(), u32> {
        for s in (0..self.len()).filter(|&s| s != t as usize) {
            if dist[s] == Bfs::UNREACHED {
                if self.eps[s] > 0 {
                    return Err(s as u32);
                }
                continue;
            }
            let a = self
                .least_loaded(
                    s as u32,
                    |a| load[a.chan as usize],
                    |a| dist[a.to as usize] + 1 == dist[s],
                )
                .expect("a switch at distance d > 0 has a neighbour at distance d - 1");
            load[a.chan as usize] += weight;
            set(s, a.port);
        }
        Ok(())
    }

    /// The first switch with endpoints that `dist` marks unreached, if any.
    pub fn unreached_endpoint_switch(&self, dist: &[u32]) -> Option<usize> {
        (0..self.len()).find(|&s| dist[s] == Bfs::UNREACHED && self.eps[s] > 0)
    }
}

/// Paths induced by destination-based tables, one per unit (source switch with endpoints,
/// destination). Unit `r · dests + d` starts at the `r`-th switch that has endpoints.
pub(in crate::routing) struct PathSet {
    /// Row of each switch: its rank among the switches that have endpoints, in id order
    /// (`u32::MAX` if it has no endpoints).
    pub row: Vec<u32>,
    /// Number of destinations (columns).
    pub dests: usize,
    /// Endpoint pairs each unit stands for.
    pub weight: Vec<u32>,
    /// The destinations are switches (`from_lft` with `per_switch`), not endpoints.
    pub per_switch: bool,
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
        Self::build(topo, g, &[lft], per_switch)
    }

    /// [`PathSet::from_lft`] of several paths per destination (endpoints, not per switch):
    /// the destinations are (path `k`, endpoint `e`), column `k · endpoints + e`, followed
    /// through `lfts[k]`.
    pub fn from_lfts(
        topo: &Topology,
        g: &SwitchGraph,
        lfts: &[Vec<Vec<PortNum>>],
    ) -> Result<Self, RoutingError> {
        let refs: Vec<&[Vec<PortNum>]> = lfts.iter().map(Vec::as_slice).collect();
        Self::build(topo, g, &refs, false)
    }

    fn build(
        topo: &Topology,
        g: &SwitchGraph,
        lfts: &[&[Vec<PortNum>]],
        per_switch: bool,
    ) -> Result<Self, RoutingError> {
        let sources: Vec<u32> = (0..g.len() as u32)
            .filter(|&s| g.eps[s as usize] > 0)
            .collect();
        let mut row = vec![u32::MAX; g.len()];
        for (r, &s) in sources.iter().enumerate() {
            row[s as usize] = r as u32;
        }
        // (path, representative endpoint, its switch, endpoints it stands for) per destination.
        let targets: Vec<(usize, u32, u32, u32)> = if per_switch {
            sources
                .iter()
                .map(|&t| {
                    let (_, e) = topo
                        .switch_endpoints(SwitchId(t))
                        .next()
                        .expect("source switches have endpoints");
                    (0, e.0, t, g.eps[t as usize])
                })
                .collect()
        } else {
            (0..lfts.len())
                .flat_map(|k| {
                    (0..topo.num_endpoints() as u32)
                        .map(move |e| (k, e, topo.endpoint_switch(EndpointId(e)).0 .0, 1))
                })
                .collect()
        };
        let dests = targets.len();
        let units = sources.len() * dests;
        let mut weight = Vec::with_capacity(units);
        let mut chan_off = Vec::with_capacity(units + 1);
        let mut chans = Vec::new();
        chan_off.push(0u32);
        for &s in &sources {
            flitsim_topology::cancel::check()?;
            for &(k, e, t, w) in &targets {
                let lft = lfts[k];
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
            per_switch,
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
pub(in crate::routing) struct Deps {
    /// Dependency `i` is `from[i] → to[i]`; sorted by `(from, to)`.
    pub(super) from: Vec<u32>,
    pub(super) to: Vec<u32>,
    /// Dependencies leaving channel `c` are `out_off[c]..out_off[c + 1]`.
    out_off: Vec<u32>,
    /// Dependencies entering channel `c` are `in_ids[in_off[c]..in_off[c + 1]]`.
    in_off: Vec<u32>,
    in_ids: Vec<u32>,
    /// Dependencies of unit `u`, in path order.
    unit_off: Vec<u32>,
    pub(super) unit_deps: Vec<u32>,
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
    pub(super) fn units_of(&self, i: u32) -> &[u32] {
        &self.dep_units[self.dep_off[i as usize] as usize..self.dep_off[i as usize + 1] as usize]
    }

    /// Dependency ids leaving channel `c`.
    pub(super) fn out(&self, c: u32) -> std::ops::Range<u32> {
        self.out_off[c as usize]..self.out_off[c as usize + 1]
    }

    /// Dependency ids entering channel `c`.
    pub(super) fn into(&self, c: u32) -> &[u32] {
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
