//! The sources' schedule: which source generates next, as a calendar queue.
//!
//! Every source has one pending entry `(cycle, source id)`, and the loop takes the due ones in
//! `(cycle, id)` order each cycle. A binary heap of 65 536 sources costs each message a pop and
//! a push through 16 levels of a 1 MiB heap, on the loop's thread (issue 19: 83 % of
//! `generate`'s time on the 16-ary 4-tree). Here the next [`WINDOW`] cycles are buckets of ids,
//! one bucket per cycle: a push appends to its cycle's bucket, and the first pop of a cycle
//! sorts that bucket once. Entries outside the window (a source that waits longer, or one
//! pushed into the past) go to a heap, and every pop compares the two, so the order is exactly
//! the heap's (checked against [`BinaryHeap`] by a proptest).
use crate::ids::Cycle;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Cycles covered by buckets (a power of two).
const WINDOW: usize = 4096;
const MASK: u64 = WINDOW as u64 - 1;

/// A min-queue of `(cycle, id)` entries (see the module docs).
#[derive(Debug)]
pub(crate) struct Calendar {
    /// Every bucket entry's cycle is in `now .. now + WINDOW`: bucket `c & MASK` holds the ids
    /// due in cycle `c`.
    now: Cycle,
    buckets: Vec<Vec<u32>>,
    /// Bit `k`: bucket `k` is not empty.
    full: Vec<u64>,
    /// Entries in buckets.
    in_buckets: usize,
    /// The earliest bucket entry's cycle, when known (`None` after its bucket emptied).
    first: Option<Cycle>,
    /// The cycle whose bucket is sorted (descending, so that its smallest id is last).
    sorted: Option<Cycle>,
    /// Entries outside the window.
    far: BinaryHeap<Reverse<(Cycle, u32)>>,
}

impl Default for Calendar {
    fn default() -> Self {
        Calendar {
            now: 0,
            buckets: vec![Vec::new(); WINDOW],
            full: vec![0; WINDOW / 64],
            in_buckets: 0,
            first: None,
            sorted: None,
            far: BinaryHeap::new(),
        }
    }
}

impl Calendar {
    pub fn is_empty(&self) -> bool {
        self.in_buckets == 0 && self.far.is_empty()
    }

    /// Adds source `id`, due in cycle `at`.
    pub fn push(&mut self, at: Cycle, id: u32) {
        if at < self.now || at - self.now >= WINDOW as u64 {
            self.far.push(Reverse((at, id)));
            return;
        }
        let k = (at & MASK) as usize;
        let bucket = &mut self.buckets[k];
        if self.sorted == Some(at) {
            // The bucket being taken: keep it sorted.
            let i = bucket.partition_point(|&x| x > id);
            bucket.insert(i, id);
        } else {
            bucket.push(id);
        }
        self.full[k / 64] |= 1 << (k % 64);
        if self.in_buckets == 0 {
            self.first = Some(at);
        } else if let Some(f) = self.first {
            self.first = Some(f.min(at));
        }
        self.in_buckets += 1;
    }

    /// The cycle of the earliest bucket entry.
    fn first_bucket(&mut self) -> Option<Cycle> {
        if self.in_buckets == 0 {
            return None;
        }
        if self.first.is_none() {
            self.first = Some(self.scan());
        }
        self.first
    }

    /// The cycle of the earliest bucket entry, from the bit set (some bucket holds one).
    fn scan(&self) -> Cycle {
        let start = (self.now & MASK) as usize;
        // The words from `start`'s on, wrapping around once (the start word twice: first its
        // bits from `start` on, last those before).
        let words = WINDOW / 64;
        for step in 0..=words {
            let w = (start / 64 + step) % words;
            let mut bits = self.full[w];
            if step == 0 {
                bits &= !0u64 << (start % 64);
            } else if step == words {
                bits &= (1u64 << (start % 64)).wrapping_sub(1);
            }
            if bits != 0 {
                let k = w * 64 + bits.trailing_zeros() as usize;
                return self.now + ((k as u64).wrapping_sub(self.now) & MASK);
            }
        }
        unreachable!("a bucket entry is in some bucket")
    }

    /// The cycle of the earliest entry.
    pub fn next_time(&mut self) -> Option<Cycle> {
        let far = self.far.peek().map(|r| r.0 .0);
        match (self.first_bucket(), far) {
            (Some(b), Some(f)) => Some(b.min(f)),
            (b, f) => b.or(f),
        }
    }

    /// The id `k` places after the next one in the bucket being taken, if any: which sources
    /// come next (a hint for prefetching; it may be out of date).
    pub fn ahead(&self, k: usize) -> Option<u32> {
        let bucket = &self.buckets[(self.sorted? & MASK) as usize];
        bucket.len().checked_sub(1 + k).map(|i| bucket[i])
    }

    /// Takes the far heap's first entry, which comes before every bucket entry: the window
    /// moves on to it (so that the sources of a quiet stretch return to buckets).
    fn pop_far(&mut self) {
        let Reverse((at, _)) = self.far.pop().expect("a far entry");
        self.now = self.now.max(at);
    }

    /// Takes the smallest `(cycle, id)` if its cycle is `t` or earlier.
    pub fn pop_due(&mut self, t: Cycle) -> Option<(Cycle, u32)> {
        let far = self.far.peek().map(|r| r.0);
        let Some(b) = self.first_bucket().filter(|&b| b <= t) else {
            return far.filter(|f| f.0 <= t).inspect(|_| self.pop_far());
        };
        let k = (b & MASK) as usize;
        if self.sorted != Some(b) {
            self.buckets[k].sort_unstable_by(|x, y| y.cmp(x));
            self.sorted = Some(b);
        }
        let id = *self.buckets[k].last().expect("a full bucket");
        if far.is_some_and(|f| f < (b, id)) {
            self.pop_far();
            return far;
        }
        self.buckets[k].pop();
        self.in_buckets -= 1;
        if self.buckets[k].is_empty() {
            self.full[k / 64] &= !(1 << (k % 64));
            self.first = None;
        }
        // Nothing is due before `b` in the buckets any more.
        self.now = b;
        Some((b, id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any mix of pushes (near, far, in the past, into the cycle being taken) and pops
        /// gives exactly the order of a binary heap of `(cycle, id)`.
        #[test]
        fn pops_in_the_order_of_a_heap(
            ops in prop::collection::vec((0u8..4, 0u64..3 * WINDOW as u64, 0u32..64), 1..400),
            first in prop::collection::vec((0u64..2 * WINDOW as u64, 0u32..64), 0..64),
        ) {
            let mut cal = Calendar::default();
            let mut heap = BinaryHeap::new();
            for (at, id) in first {
                cal.push(at, id);
                heap.push(Reverse((at, id)));
            }
            let mut t = 0;
            for (op, x, id) in ops {
                match op {
                    // Advance the clock and take what is due.
                    0 => {
                        t += x % 300;
                        loop {
                            let want = heap.peek().map(|r| r.0).filter(|e: &(u64, u32)| e.0 <= t);
                            if want.is_some() {
                                heap.pop();
                            }
                            prop_assert_eq!(cal.pop_due(t), want);
                            if want.is_none() {
                                break;
                            }
                        }
                    }
                    // Push at `t + x` (or, for op 2, at `t`, or in the past).
                    1 => {
                        cal.push(t + x, id);
                        heap.push(Reverse((t + x, id)));
                    }
                    2 => {
                        let at = t.saturating_sub(x % 3);
                        cal.push(at, id);
                        heap.push(Reverse((at, id)));
                    }
                    // Take one entry due by `t`.
                    _ => {
                        let want = heap.peek().map(|r| r.0).filter(|e: &(u64, u32)| e.0 <= t);
                        if want.is_some() {
                            heap.pop();
                        }
                        prop_assert_eq!(cal.pop_due(t), want);
                    }
                }
                prop_assert_eq!(cal.next_time(), heap.peek().map(|r| r.0 .0));
                prop_assert_eq!(cal.is_empty(), heap.is_empty());
            }
        }
    }
}
