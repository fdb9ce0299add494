//! [`sls_by_x`]: the SLs Figure 5 needs for every `x` (unbounded SLs), each assignment derived
//! from the previous one instead of recomputed, with exactly the result of
//! [`compute_sls`](super::compute_sls) for each `x` (tested against it).
//!
//! Figure 5 is a greedy colouring of the paths in path order: path `q` takes the lowest SL
//! that no earlier path carries on a considered neighbour of one of `q`'s considered
//! 4-tuples. Considering one more 4-tuple `t` only adds constraints between paths through `t`
//! and paths through its considered neighbours. The state keeps, per considered 4-tuple and
//! SL, the ordered set of paths through it carrying that SL, so "does an earlier path carry
//! SL `s` on 4-tuple `u`" is the first element of a set. After adding `t`, the paths whose
//! constraints grew are checked in path order (is their SL now taken?), and a path whose SL
//! changes queues the later paths whose constraints it changes: those through a considered
//! neighbour of one of its 4-tuples, in the range of paths where the first carrier of its old
//! or new SL moved. Paths are settled in increasing order, so each is settled once per `x`
//! with every earlier path final — the greedy order.
//!
//! Cost: the greedy assignment is far from stable — each new 4-tuple changes about a hundred
//! paths' SLs on the paper's 32-switch networks — so this is only a few times faster than
//! rerunning Figure 5 for every `x`: 1.2 s against 6 s per 32-switch network, 35–52 s against
//! ≈ 60 s per 64-switch network. [`analyse`](super::analyse) does not need it: with a bounded
//! number of SLs the one-by-one search stops after a few hundred runs.
use super::TupleSet;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

/// The state of Figure 5 for the considered 4-tuples so far.
struct State<'a> {
    set: &'a TupleSet,
    /// Paths through each 4-tuple, ascending.
    through: Vec<Vec<u32>>,
    /// `carriers[t][sl]`: paths through considered `t` with that SL.
    carriers: Vec<BTreeMap<u32, BTreeSet<u32>>>,
    sl: Vec<u32>,
    considered: u32,
    /// Queue marks of [`State::consider_next`], all 0 between calls.
    mode: Vec<u8>,
}

impl State<'_> {
    /// Considered 4-tuples of path `q`.
    fn tuples(&self, q: u32) -> impl Iterator<Item = u32> + '_ {
        let c = self.considered;
        self.set
            .path(q as usize)
            .iter()
            .copied()
            .take_while(move |&t| t < c)
    }

    /// Considered neighbours of `t`.
    fn neighbours(&self, t: u32) -> impl Iterator<Item = u32> + '_ {
        let c = self.considered;
        self.set
            .group_of(t)
            .iter()
            .copied()
            .filter(move |&u| u != t && u < c)
    }

    fn first(&self, t: u32, s: u32) -> Option<u32> {
        self.carriers[t as usize]
            .get(&s)
            .and_then(|set| set.first().copied())
    }

    /// Whether an earlier path than `q` carries SL `s` on a considered neighbour of one of
    /// `q`'s considered 4-tuples.
    fn taken(&self, q: u32, s: u32) -> bool {
        self.tuples(q).any(|t| {
            self.neighbours(t)
                .any(|u| self.first(u, s).is_some_and(|p| p < q))
        })
    }

    /// The lowest SL free for `q`.
    fn lowest_free(&self, q: u32) -> u32 {
        let mut taken: Vec<u64> = Vec::new();
        for t in self.tuples(q) {
            for u in self.neighbours(t) {
                for (&s, paths) in &self.carriers[u as usize] {
                    if paths.first().is_some_and(|&p| p < q) {
                        let w = s as usize / 64;
                        if taken.len() <= w {
                            taken.resize(w + 1, 0);
                        }
                        taken[w] |= 1 << (s % 64);
                    }
                }
            }
        }
        taken
            .iter()
            .enumerate()
            .find(|(_, w)| **w != u64::MAX)
            .map_or(taken.len() * 64, |(i, w)| {
                i * 64 + w.trailing_ones() as usize
            }) as u32
    }

    fn carry(&mut self, t: u32, s: u32, q: u32, on: bool) {
        let m = &mut self.carriers[t as usize];
        if on {
            m.entry(s).or_default().insert(q);
        } else if let Some(set) = m.get_mut(&s) {
            set.remove(&q);
            if set.is_empty() {
                m.remove(&s);
            }
        }
    }

    /// Considers the next 4-tuple and settles every path.
    fn consider_next(&mut self) {
        let t = self.considered;
        self.considered += 1;
        // `mode[q]`: 0 not queued, CHECK (is its SL now taken?), FULL (a lower SL may be free).
        const CHECK: u8 = 1;
        const FULL: u8 = 2;
        let mut queue: BinaryHeap<Reverse<u32>> = BinaryHeap::new();
        let mode = &mut self.mode;
        let push = |q: u32, m: u8, queue: &mut BinaryHeap<Reverse<u32>>, mode: &mut [u8]| {
            if mode[q as usize] == 0 {
                queue.push(Reverse(q));
            }
            mode[q as usize] = mode[q as usize].max(m);
        };
        let through_t = std::mem::take(&mut self.through[t as usize]);
        for &q in &through_t {
            let s = self.sl[q as usize];
            self.carriers[t as usize].entry(s).or_default().insert(q);
        }
        // Paths through `t` now see its considered neighbours; paths through a considered
        // neighbour after the first path through `t` now see `t`.
        if let Some(&first_t) = through_t.first() {
            for &q in &through_t {
                push(q, CHECK, &mut queue, mode);
            }
            let c = self.considered;
            for &u in self.set.group_of(t) {
                if u == t || u >= c {
                    continue;
                }
                let list = &self.through[u as usize];
                let from = list.partition_point(|&p| p <= first_t);
                for &q in &list[from..] {
                    push(q, CHECK, &mut queue, mode);
                }
            }
        }
        self.through[t as usize] = through_t;
        while let Some(Reverse(q)) = queue.pop() {
            let m = std::mem::take(&mut self.mode[q as usize]);
            let old = self.sl[q as usize];
            if m == CHECK && !self.taken(q, old) {
                continue;
            }
            let new = self.lowest_free(q);
            if new == old {
                continue;
            }
            let tuples: Vec<u32> = self.tuples(q).collect();
            // (4-tuple, from, to, freed): later paths in (from, to] through a neighbour of
            // the 4-tuple may take `old` (freed) or lose `new`.
            let mut ranges: Vec<(u32, u32, u32, bool)> = Vec::new();
            for &u in &tuples {
                let first_old = self.first(u, old);
                let first_new = self.first(u, new);
                self.carry(u, old, q, false);
                self.carry(u, new, q, true);
                if first_old == Some(q) {
                    let next = self.first(u, old).unwrap_or(u32::MAX);
                    ranges.push((u, q, next, true));
                }
                if first_new.is_none_or(|p| p > q) {
                    ranges.push((u, q, first_new.unwrap_or(u32::MAX), false));
                }
            }
            self.sl[q as usize] = new;
            let c = self.considered;
            for (u, from, to, freed) in ranges {
                for &v in self.set.group_of(u) {
                    if v == u || v >= c {
                        continue;
                    }
                    let list = &self.through[v as usize];
                    let a = list.partition_point(|&p| p <= from);
                    let b = list.partition_point(|&p| p <= to);
                    for &r in &list[a..b] {
                        let sr = self.sl[r as usize];
                        if freed && sr > old {
                            push(r, FULL, &mut queue, &mut self.mode);
                        } else if !freed && sr == new {
                            push(r, CHECK, &mut queue, &mut self.mode);
                        }
                    }
                }
            }
        }
    }

    fn sls_used(&self) -> usize {
        self.sl.iter().max().map_or(1, |&m| m as usize + 1)
    }
}

/// `k[x]`: the SLs Figure 5 uses with the `x` heaviest 4-tuples considered and unbounded SLs,
/// for `x` = 0 ..= all used 4-tuples (`k[0] = 1`); identical to running
/// [`compute_sls`](super::compute_sls) for every `x`. Stops early (returning the counts so
/// far) once a count exceeds `stop_above`.
pub fn sls_by_x(set: &TupleSet, stop_above: Option<usize>) -> Vec<usize> {
    let mut k = Vec::new();
    walk(set, |_, _, used| {
        k.push(used);
        stop_above.is_none_or(|l| used <= l)
    });
    k
}

/// Runs the incremental Figure 5 for `x` = 0, 1, …, calling `f(x, sl, sls_used)` after each
/// `x` until it returns false or every 4-tuple is considered.
pub(super) fn walk(set: &TupleSet, mut f: impl FnMut(usize, &[u32], usize) -> bool) {
    let mut through: Vec<Vec<u32>> = vec![Vec::new(); set.len()];
    for p in 0..set.paths() {
        for &t in set.path(p) {
            through[t as usize].push(p as u32);
        }
    }
    let mut st = State {
        set,
        through,
        carriers: vec![BTreeMap::new(); set.len()],
        sl: vec![0; set.paths()],
        considered: 0,
        mode: vec![0; set.paths()],
    };
    if !f(0, &st.sl, 1) {
        return;
    }
    while (st.considered as usize) < set.len() {
        st.consider_next();
        if !f(st.considered as usize, &st.sl, st.sls_used()) {
            return;
        }
        if st.considered.is_multiple_of(256) && flitsim_topology::cancel::check().is_err() {
            return;
        }
    }
}
