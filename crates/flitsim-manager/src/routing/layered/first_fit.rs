//! First-fit layering: the online assignment of LASH and of DFSSSP's online variant, with
//! an incremental topological order per layer (Pearce & Kelly), and DFSSSP's first-fit
//! restarts.
use super::offline::LayerResult;
use super::paths::{Deps, PathSet};

/// The online assignment (Domke et al. 2011, Section IV, first approach; it is also how LASH
/// assigns paths, Skeie, Lysne & Theiss, "Layered Shortest Path (LASH) Routing in Irregular
/// System Area Networks", IPDPS 2002): units in index order go to the first layer whose CDG
/// stays acyclic with the unit's dependencies added; a new layer is opened when none does.
/// Fails with the number of layers reached if more than `cap` would be needed, or with
/// `cap + 1` when cancelled (callers check [`flitsim_topology::cancel`] after layering).
pub(in crate::routing) fn online_layers(
    paths: &PathSet,
    deps: &Deps,
    channels: usize,
    cap: usize,
) -> LayerResult {
    let order: Vec<u32> = (0..paths.len() as u32).collect();
    first_fit_layers(paths, deps, channels, &order, cap, u64::MAX).map_err(|stop| match stop {
        FitStop::Cap(n) => n,
        FitStop::Cancelled => cap + 1,
        FitStop::Budget => unreachable!("no budget"),
    })
}

/// Why [`first_fit_layers`] stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::routing) enum FitStop {
    /// It would need more than the cap: the number of layers reached.
    Cap(usize),
    /// Its searches visited more channels than the budget.
    Budget,
    /// A cancellation was requested ([`flitsim_topology::cancel`]).
    Cancelled,
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
pub(in crate::routing) fn first_fit_layers(
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
        if flitsim_topology::cancel::is_requested() {
            return Err(FitStop::Cancelled);
        }
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
pub(in crate::routing) const RESTART_STEPS_PER_DEP: u64 = 16;

/// Restarts of the first-fit layering (see [`DfssspEngine::restarts`](crate::routing::DfssspEngine::restarts)): run 0 takes the
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
/// result does not depend on the number of threads. Cancelled runs count as failed (callers
/// check [`flitsim_topology::cancel`] after layering).
pub(in crate::routing) fn first_fit_restarts(
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
        Err(FitStop::Budget | FitStop::Cancelled) => return None,
        Err(FitStop::Cap(_)) => {}
    }
    let chunk = rayon::current_num_threads().max(1) as u32;
    let mut k0 = 1;
    while k0 < runs && cap > 0 && !flitsim_topology::cancel::is_requested() {
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
#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::layered::paths::SwitchGraph;
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
