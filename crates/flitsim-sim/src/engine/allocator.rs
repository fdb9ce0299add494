//! The switch allocator: a separable, input-first allocator with round-robin arbiters, kept
//! apart from the switch so it can be tested against a reference model.
//!
//! Each cycle in which something changed, every input port of a switch offers at most one
//! [`Request`] (its round-robin arbiter has picked one VL whose head packet may start: see
//! `switch.rs`). The output stage then grants, per output port, one request: the port's
//! output scheduler chooses a (VL, SL) among the requests' candidates, and a round-robin
//! arbiter over input ports chooses among the requests for that candidate. A request that
//! loses is offered again in a later cycle.
use crate::ids::{Sl, Vl};
use crate::scheduler::Candidate;
use flitsim_topology::PortNum;

/// A switch allocation request: input port and VL of a head packet, the output port and VL
/// it leaves by, and its SL (traffic class).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Request {
    pub input: PortNum,
    pub in_vl: Vl,
    pub output: PortNum,
    pub out_vl: Vl,
    pub sl: Sl,
    /// The head packet's deadline (deadline-based QoS; 0 otherwise).
    pub dl: i64,
}

/// Marks a request already served (granted, or its output decided).
const DONE: PortNum = PortNum::MAX;

impl Request {
    #[inline(always)]
    fn candidate(&self) -> Candidate {
        Candidate {
            vl: self.out_vl.0,
            sl: self.sl.0,
        }
    }
}

/// Visits the set bits of `mask` in round-robin order: bit `start` and up, then the rest. Each
/// item is a bit index.
#[inline(always)]
pub(crate) fn round_robin_bits(mask: u32, start: u32) -> impl Iterator<Item = u32> {
    let from_start = if start >= 32 {
        0
    } else {
        mask & (u32::MAX << start)
    };
    let mut parts = [from_start, mask & !from_start];
    let mut k = 0;
    std::iter::from_fn(move || {
        while k < 2 {
            let bits = parts[k];
            if bits != 0 {
                parts[k] = bits & (bits - 1);
                return Some(bits.trailing_zeros());
            }
            k += 1;
        }
        None
    })
}

/// The output stage of the separable allocator, with its scratch space (reused every cycle:
/// no allocation on the hot path).
#[derive(Default)]
pub(crate) struct SeparableAllocator {
    requests: Vec<Request>,
    cands: Vec<Candidate>,
    grants: Vec<Request>,
}

impl SeparableAllocator {
    /// Starts a new round.
    #[inline]
    pub fn clear(&mut self) {
        self.requests.clear();
        self.grants.clear();
    }

    /// Adds an input port's request (at most one per input port and round).
    #[inline]
    pub fn request(&mut self, r: Request) {
        self.requests.push(r);
    }

    /// Grants at most one request per output port, outputs in the order of their first
    /// request. `choose(output, candidates)` is the output's scheduler (it may refuse all);
    /// `rr_start(output)` is the input port its round-robin arbiter looks at first. With
    /// `BY_DEADLINE`, the output goes to the request for the chosen VL (any SL) with the
    /// smallest deadline, round-robin order breaking ties (Martínez et al. 2008: the switch
    /// serves the smallest head deadline). Returns whether some request lost (then allocation
    /// should run again next cycle).
    pub fn allocate<const BY_DEADLINE: bool>(
        &mut self,
        ports: usize,
        mut choose: impl FnMut(PortNum, &[Candidate]) -> Option<Candidate>,
        rr_start: impl Fn(PortNum) -> usize,
    ) -> bool {
        let reqs = &mut self.requests;
        let mut lost = false;
        for i in 0..reqs.len() {
            let op = reqs[i].output;
            if op == DONE {
                continue;
            }
            // All requests for this output, from index i on (earlier ones were other outputs).
            self.cands.clear();
            for r in &reqs[i..] {
                let c = r.candidate();
                if r.output == op && !self.cands.contains(&c) {
                    self.cands.push(c);
                }
            }
            let Some(chosen) = choose(op, &self.cands) else {
                // The scheduler lets none of them go now: try again next cycle.
                for r in reqs[i..].iter_mut().filter(|r| r.output == op) {
                    r.output = DONE;
                }
                lost = true;
                continue;
            };
            let start = rr_start(op);
            let mut best = usize::MAX;
            let mut best_key = (i64::MAX, usize::MAX);
            for (j, r) in reqs.iter().enumerate().skip(i) {
                let matches = if BY_DEADLINE {
                    r.output == op && r.out_vl.0 == chosen.vl
                } else {
                    r.output == op && r.candidate() == chosen
                };
                if matches {
                    let rr = (r.input as usize + ports - start) % ports;
                    let key = (if BY_DEADLINE { r.dl } else { 0 }, rr);
                    if key < best_key {
                        best_key = key;
                        best = j;
                    }
                }
            }
            let grant = reqs[best];
            for r in reqs[i..].iter_mut().filter(|r| r.output == op) {
                lost |= r.input != grant.input;
                r.output = DONE;
            }
            self.grants.push(grant);
        }
        lost
    }

    /// The grants of the last [`allocate`](Self::allocate), in order.
    #[inline]
    pub fn grants(&self) -> &[Request] {
        &self.grants
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// A deterministic stand-in for an output scheduler: refuses when `refuse` has the
    /// output's bit, otherwise takes the candidate with the smallest `(vl + salt) % 8`.
    fn scheduler(refuse: u64, salt: u8) -> impl Fn(PortNum, &[Candidate]) -> Option<Candidate> {
        move |op, cands| {
            if refuse & (1 << (op % 64)) != 0 {
                return None;
            }
            cands
                .iter()
                .copied()
                .min_by_key(|c| (c.vl.wrapping_add(salt) % 8, c.sl))
        }
    }

    /// The reference model: group the requests by output (in order of first appearance), let
    /// the scheduler pick a candidate, and give the output to the matching request whose
    /// input comes first in round-robin order from the arbiter's start.
    fn reference(
        reqs: &[Request],
        ports: usize,
        choose: &dyn Fn(PortNum, &[Candidate]) -> Option<Candidate>,
        starts: &[usize],
    ) -> (Vec<Request>, bool) {
        let mut order = Vec::new();
        let mut by_output: BTreeMap<PortNum, Vec<Request>> = BTreeMap::new();
        for r in reqs {
            if !by_output.contains_key(&r.output) {
                order.push(r.output);
            }
            by_output.entry(r.output).or_default().push(*r);
        }
        let (mut grants, mut lost) = (Vec::new(), false);
        for op in order {
            let rs = &by_output[&op];
            let mut cands: Vec<Candidate> = Vec::new();
            for r in rs {
                if !cands.contains(&r.candidate()) {
                    cands.push(r.candidate());
                }
            }
            let Some(c) = choose(op, &cands) else {
                lost = true;
                continue;
            };
            let rank = |r: &Request| (r.input as usize + ports - starts[op as usize]) % ports;
            let winner = rs
                .iter()
                .filter(|r| r.candidate() == c)
                .min_by_key(|r| rank(r))
                .unwrap();
            lost |= rs.len() > 1;
            grants.push(*winner);
        }
        (grants, lost)
    }

    proptest! {
        /// The allocator grants what the reference model grants, in the same order; no input
        /// or output is granted twice.
        #[test]
        fn matches_reference_model(
            ports in 1usize..12,
            raw in proptest::collection::vec((0u16..12, 0u8..4, 0u16..12, 0u8..4, 0u8..3), 0..12),
            starts in proptest::collection::vec(0usize..12, 12),
            refuse in any::<u64>(),
            salt in 0u8..8,
        ) {
            // One request per input port, ports in range.
            let mut seen = std::collections::HashSet::new();
            let reqs: Vec<Request> = raw
                .into_iter()
                .filter(|r| (r.0 as usize) < ports && (r.2 as usize) < ports && seen.insert(r.0))
                .map(|(i, iv, o, ov, sl)| Request {
                    input: i, in_vl: Vl(iv), output: o, out_vl: Vl(ov), sl: Sl(sl), dl: 0,
                })
                .collect();
            let starts: Vec<usize> = starts.iter().map(|s| s % ports).collect();
            let choose = scheduler(refuse & 0xF0F, salt);
            let (want, want_lost) = reference(&reqs, ports, &choose, &starts);
            let mut alloc = SeparableAllocator::default();
            alloc.clear();
            for r in &reqs {
                alloc.request(*r);
            }
            let lost = alloc.allocate::<false>(ports, &choose, |op| starts[op as usize]);
            prop_assert_eq!(alloc.grants(), &want[..]);
            prop_assert_eq!(lost, want_lost);
            let outs: std::collections::HashSet<_> = want.iter().map(|g| g.output).collect();
            let ins: std::collections::HashSet<_> = want.iter().map(|g| g.input).collect();
            prop_assert_eq!(outs.len(), want.len());
            prop_assert_eq!(ins.len(), want.len());
        }

        /// `round_robin_bits` visits every set bit once, from `start` upwards, then wraps.
        #[test]
        fn round_robin_bits_order(mask in any::<u32>(), start in 0u32..32) {
            let got: Vec<u32> = round_robin_bits(mask, start).collect();
            let want: Vec<u32> = (start..32).chain(0..start).filter(|b| mask & (1 << b) != 0).collect();
            prop_assert_eq!(got, want);
        }
    }
}
