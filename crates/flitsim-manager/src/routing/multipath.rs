//! LMC multipath: further paths per destination for the engines that route by a legal
//! distance (`minhop`, `updn`, `ftree`, `dmodk`), in the manner of OpenSM, which routes every
//! LID of an LMC > 0 port and prefers, for the LIDs of one port, ports other LIDs of that port
//! do not use yet.
//!
//! **Paths.** Path 0 is the engine's own routing. For path `k ≥ 1` of destination `e` (on
//! switch `t`), every switch `s` that has a legal route to `t` chooses, among the ports the
//! engine itself allows there (the [`Steps`]: steps one closer by the engine's own legal
//! distance — plain hop distance for `minhop`, the up*/down*-legal distance for `updn` and the
//! fat-tree engines), the port
//! 1. used by the fewest of paths `0..k` of `e` at `s` (so the paths of one destination
//!    diverge wherever the topology lets them: on a fat tree the 2^L paths of a leaf leave by
//!    distinct up ports),
//! 2. then carrying the fewest destinations over all paths routed so far (the balancing of
//!    `minhop`),
//! 3. then the lowest port number.
//!
//! Destinations are handled in endpoint order and paths in index order, so the tables are
//! deterministic.
//!
//! **Loop and deadlock freedom.** Every step decreases the legal distance, so each path's
//! tables are loop-free. The up*/down* steps of `updn`, `ftree` and `dmodk` keep every path of
//! every LID an up*/down* path of one orientation, so the channel dependency graph of all
//! paths together stays acyclic with one VL (Schroeder et al. 1991); `cdg::verify` checks
//! every path. `minhop` promises nothing, as for one path.
use super::layered::{Arc, SwitchGraph};
use crate::{PathTables, RoutingError, NO_ROUTE};
use flitsim_topology::{Bfs, EndpointId, PortNum, Topology};

/// The legal steps of an engine towards one destination switch at a time.
pub(super) trait Steps {
    /// Prepares the steps towards destination switch `t`.
    fn towards(&mut self, g: &SwitchGraph, t: u32);
    /// Whether `s` has a legal route to the prepared destination.
    fn reaches(&self, s: u32) -> bool;
    /// Whether arc `a` leaving `s` is a legal step one closer to the prepared destination.
    fn ok(&self, s: u32, a: &Arc) -> bool;
}

/// Min-hop steps: any neighbour one hop closer.
pub(super) struct MinHopSteps {
    bfs: Bfs,
    dist: Vec<u32>,
}

impl MinHopSteps {
    pub fn new() -> Self {
        MinHopSteps {
            bfs: Bfs::default(),
            dist: Vec::new(),
        }
    }
}

impl Steps for MinHopSteps {
    fn towards(&mut self, g: &SwitchGraph, t: u32) {
        self.dist.clear();
        self.dist.extend_from_slice(g.distances(&mut self.bfs, [t]));
    }
    fn reaches(&self, s: u32) -> bool {
        self.dist[s as usize] != Bfs::UNREACHED
    }
    fn ok(&self, s: u32, a: &Arc) -> bool {
        self.dist[a.to as usize] != Bfs::UNREACHED
            && self.dist[a.to as usize] + 1 == self.dist[s as usize]
    }
}

/// Up*/Down* steps for an orientation given by a key per switch: the link `a → b` goes up when
/// `key[b] < key[a]`. The distance and mode (down: the switch reaches the destination going
/// down only) of every switch come from [`updown_search`].
pub(super) struct UpDownSteps {
    key: Vec<(u32, u32)>,
    dist: Vec<u32>,
    down: Vec<bool>,
    frontier: Vec<u32>,
    next: Vec<u32>,
}

/// Distance of a switch without a legal route.
pub(super) const FAR: u32 = u32::MAX;

impl UpDownSteps {
    /// Steps for the orientation of `key` (smaller key = higher up).
    pub fn new(key: Vec<(u32, u32)>) -> Self {
        let n = key.len();
        UpDownSteps {
            key,
            dist: vec![FAR; n],
            down: vec![false; n],
            frontier: Vec::new(),
            next: Vec::new(),
        }
    }

    /// Steps for a fat tree whose switches have the given levels (0 at the leaves): a link
    /// goes up when it leads to a higher level.
    pub fn fat_tree(level: &[u32]) -> Self {
        let top = level.iter().copied().max().unwrap_or(0);
        Self::new(
            level
                .iter()
                .enumerate()
                .map(|(s, &l)| (top - l, s as u32))
                .collect(),
        )
    }

    fn up(&self, a: u32, b: u32) -> bool {
        self.key[b as usize] < self.key[a as usize]
    }
}

/// The level-by-level search of `updn` from destination switch `t` (see
/// [`super::UpDownEngine`]): `dist[s]` is the legal distance of `s` to `t` ([`FAR`] if none)
/// and `down[s]` whether `s` reaches `t` going down only. `up(a, b)` says whether the link
/// `a → b` goes up.
pub(super) fn updown_search(
    g: &SwitchGraph,
    t: u32,
    up: impl Fn(u32, u32) -> bool,
    dist: &mut [u32],
    down: &mut [bool],
    frontier: &mut Vec<u32>,
    next: &mut Vec<u32>,
) {
    dist.fill(FAR);
    down.fill(false);
    dist[t as usize] = 0;
    down[t as usize] = true;
    frontier.clear();
    frontier.push(t);
    let mut d = 0;
    while !frontier.is_empty() {
        next.clear();
        for &x in frontier.iter() {
            // Arcs x → y are the reverse of the links y → x a packet would take.
            for a in g.arcs(x) {
                let y = a.to;
                if dist[y as usize] != FAR && dist[y as usize] != d + 1 {
                    continue;
                }
                let goes_down = !up(y, x);
                if goes_down && !down[x as usize] {
                    continue;
                }
                if dist[y as usize] == FAR {
                    dist[y as usize] = d + 1;
                    next.push(y);
                }
                down[y as usize] |= goes_down;
            }
        }
        std::mem::swap(frontier, next);
        d += 1;
    }
}

/// Whether the step `s → a.to` is legal and one closer, given the search's `dist` and `down`.
pub(super) fn updown_ok(
    up: impl Fn(u32, u32) -> bool,
    dist: &[u32],
    down: &[bool],
    s: u32,
    a: &Arc,
) -> bool {
    dist[a.to as usize] != FAR
        && dist[a.to as usize] + 1 == dist[s as usize]
        && if down[s as usize] {
            !up(s, a.to) && down[a.to as usize]
        } else {
            up(s, a.to)
        }
}

impl Steps for UpDownSteps {
    fn towards(&mut self, g: &SwitchGraph, t: u32) {
        let key = &self.key;
        updown_search(
            g,
            t,
            |a, b| key[b as usize] < key[a as usize],
            &mut self.dist,
            &mut self.down,
            &mut self.frontier,
            &mut self.next,
        );
    }
    fn reaches(&self, s: u32) -> bool {
        self.dist[s as usize] != FAR
    }
    fn ok(&self, s: u32, a: &Arc) -> bool {
        updown_ok(|x, y| self.up(x, y), &self.dist, &self.down, s, a)
    }
}

/// Paths `1..paths` of every destination (see the [module documentation](self)), given path
/// 0's tables `lft0` and the engine's legal `steps`; each path's SLs are `path_sl` (path 0's).
/// Fails when a switch with endpoints has no legal route to a destination.
pub(super) fn alt_paths(
    engine: &str,
    topo: &Topology,
    g: &SwitchGraph,
    lft0: &[Vec<PortNum>],
    path_sl: &[u8],
    paths: usize,
    steps: &mut dyn Steps,
) -> Result<Vec<PathTables>, RoutingError> {
    let n = g.len();
    let n_ep = topo.num_endpoints();
    let extra = paths.saturating_sub(1);
    if extra == 0 {
        return Ok(Vec::new());
    }
    // Destinations per channel over every path so far, path 0's first.
    let mut load = vec![0u64; g.channels];
    let mut chan_of: Vec<Option<u32>> = Vec::new();
    for s in 0..n as u32 {
        chan_of.clear();
        for a in g.arcs(s) {
            let p = a.port as usize;
            if chan_of.len() <= p {
                chan_of.resize(p + 1, None);
            }
            chan_of[p] = Some(a.chan);
        }
        for &p in &lft0[s as usize] {
            if let Some(Some(c)) = chan_of.get(p as usize) {
                load[*c as usize] += 1;
            }
        }
    }
    let mut lfts: Vec<Vec<Vec<PortNum>>> = vec![vec![vec![NO_ROUTE; n_ep]; n]; extra];
    let mut prepared = None;
    for e in 0..n_ep {
        flitsim_topology::cancel::check()?;
        let (t, eport) = topo.endpoint_switch(EndpointId(e as u32));
        let t = t.0;
        if prepared != Some(t) {
            steps.towards(g, t);
            prepared = Some(t);
        }
        for k in 0..extra {
            lfts[k][t as usize][e] = eport;
            for s in (0..n as u32).filter(|&s| s != t) {
                if !steps.reaches(s) {
                    if g.eps[s as usize] > 0 {
                        return Err(RoutingError::Unroutable(format!(
                            "{engine}: switch {} has no legal path to switch {} for a further LMC path",
                            topo.switches()[s as usize].name,
                            topo.switches()[t as usize].name
                        )));
                    }
                    continue;
                }
                let used = |p: PortNum| {
                    (lft0[s as usize][e] == p) as u32
                        + lfts[..k].iter().filter(|l| l[s as usize][e] == p).count() as u32
                };
                let Some(a) = g
                    .arcs(s)
                    .iter()
                    .filter(|a| steps.ok(s, a))
                    .min_by_key(|a| (used(a.port), load[a.chan as usize], a.port))
                else {
                    return Err(RoutingError::Unroutable(format!(
                        "{engine}: switch {} has no legal step towards switch {}",
                        topo.switches()[s as usize].name,
                        topo.switches()[t as usize].name
                    )));
                };
                load[a.chan as usize] += 1;
                lfts[k][s as usize][e] = a.port;
            }
        }
    }
    Ok(lfts
        .into_iter()
        .map(|lft| PathTables {
            lft,
            path_sl: path_sl.to_vec(),
        })
        .collect())
}

/// `fabric` (path 0) with paths `1..paths` added by [`alt_paths`].
pub(super) fn with_alt_paths(
    mut fabric: crate::FabricConfig,
    topo: &Topology,
    g: &SwitchGraph,
    paths: usize,
    steps: &mut dyn Steps,
) -> Result<crate::FabricConfig, RoutingError> {
    fabric.alt_paths = alt_paths(
        &fabric.engine,
        topo,
        g,
        &fabric.lft,
        &fabric.path_sl,
        paths,
        steps,
    )?;
    Ok(fabric)
}

/// `paths − 1` copies of path 0: for engines with one path per pair (`dor`), every LID of a
/// port gets the same route, as OpenSM's engines without multipath do.
pub(super) fn same_paths(lft: &[Vec<PortNum>], path_sl: &[u8], paths: usize) -> Vec<PathTables> {
    (1..paths)
        .map(|_| PathTables {
            lft: lft.to_vec(),
            path_sl: path_sl.to_vec(),
        })
        .collect()
}

/// The error of an engine that routes one path per destination only.
pub(super) fn unsupported(engine: &str) -> RoutingError {
    RoutingError::Unroutable(format!(
        "{engine} does not support LMC > 0 (several paths per destination); use LMC 0, or one \
         of the engines that do: {}",
        MULTIPATH_ENGINES.join(", ")
    ))
}

/// Engines that route LMC > 0 (several paths per destination).
pub const MULTIPATH_ENGINES: &[&str] =
    &["minhop", "updn", "ftree", "dmodk", "sssp", "dfsssp", "dor"];
