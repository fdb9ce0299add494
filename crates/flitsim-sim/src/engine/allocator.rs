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
    /// The request's rank among the requests for its output, smaller first: the head
    /// packet's deadline (deadline-based QoS), the cycle it was routed (FIFO arbiter), or 0
    /// (round robin alone decides).
    pub key: i64,
}

/// What an output's scheduler may answer: any request, whatever its VL and SL (the FIFO
/// arbiter in front of an output buffer lets the oldest go).
pub(crate) const ANY: Candidate = Candidate {
    vl: u8::MAX,
    sl: u8::MAX,
};

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

/// Visits the set bits of `mask` in round-robin order: bit `start` and up, then the rest
/// (from bit 0 when `start` is 32 or more). Each item is a bit index.
#[inline(always)]
pub(crate) fn round_robin_bits(mask: u32, start: u32) -> impl Iterator<Item = u32> {
    // Rotated so that bit `start` is bit 0: ascending order is then round-robin order.
    let s = if start >= 32 { 0 } else { start };
    let mut rot = mask.rotate_right(s);
    std::iter::from_fn(move || {
        if rot == 0 {
            return None;
        }
        let b = rot.trailing_zeros();
        rot &= rot - 1;
        Some((b + s) & 31)
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

    /// Grants at most one request per output port (per output port and VL with `PER_VL`, a
    /// non-multiplexed crossbar), outputs in the order of their first request.
    /// `choose(output, candidates)` is the output's scheduler (it may refuse all, or answer
    /// [`ANY`]); `rr_start(output)` is the input port its round-robin arbiter looks at first.
    /// Among the requests matching the chosen candidate the smallest `key` wins, round-robin
    /// order breaking ties. With `BY_VL`, a request matches when its VL is the chosen one,
    /// whatever its SL (Martínez et al. 2008: the switch serves the smallest head deadline of
    /// the VL). Returns whether some request lost (then allocation should run again next
    /// cycle).
    pub fn allocate<const BY_VL: bool, const PER_VL: bool>(
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
            let ovl = reqs[i].out_vl;
            // The crossbar output a request competes for.
            let same = |r: &Request| r.output == op && (!PER_VL || r.out_vl == ovl);
            // All requests for this output, from index i on (earlier ones were other outputs).
            self.cands.clear();
            let mut many = false;
            for r in &reqs[i..] {
                let c = r.candidate();
                if same(r) {
                    many |= !self.cands.is_empty();
                    if !self.cands.contains(&c) {
                        self.cands.push(c);
                    }
                }
            }
            let Some(chosen) = choose(op, &self.cands) else {
                // The scheduler lets none of them go now: try again next cycle.
                for r in reqs[i..].iter_mut().filter(|r| same(r)) {
                    r.output = DONE;
                }
                lost = true;
                continue;
            };
            // The output's only request (the common case) is what the scheduler chose; no
            // later request is for this output, so none needs marking.
            if !many {
                self.grants.push(reqs[i]);
                continue;
            }
            let start = rr_start(op);
            let mut best = usize::MAX;
            let mut best_key = (i64::MAX, usize::MAX);
            for (j, r) in reqs.iter().enumerate().skip(i) {
                let matches = same(r)
                    && (chosen == ANY
                        || if BY_VL {
                            r.out_vl.0 == chosen.vl
                        } else {
                            r.candidate() == chosen
                        });
                if matches {
                    let rr = (r.input as usize + ports - start) % ports;
                    let key = (r.key, rr);
                    if key < best_key {
                        best_key = key;
                        best = j;
                    }
                }
            }
            let grant = reqs[best];
            for r in reqs[i..].iter_mut().filter(|r| same(r)) {
                lost |= r.input != grant.input || r.in_vl != grant.in_vl;
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

    /// The reference model: group the requests by crossbar output (the output port, or the
    /// output port and VL with `per_vl`) in order of first appearance, let the scheduler pick
    /// a candidate, and give the output to the matching request with the smallest key, then
    /// the input that comes first in round-robin order from the arbiter's start.
    fn reference(
        reqs: &[Request],
        ports: usize,
        choose: &dyn Fn(PortNum, &[Candidate]) -> Option<Candidate>,
        starts: &[usize],
        per_vl: bool,
    ) -> (Vec<Request>, bool) {
        let mut order = Vec::new();
        let mut by_output: BTreeMap<(PortNum, u8), Vec<Request>> = BTreeMap::new();
        for r in reqs {
            let k = (r.output, if per_vl { r.out_vl.0 } else { 0 });
            if !by_output.contains_key(&k) {
                order.push(k);
            }
            by_output.entry(k).or_default().push(*r);
        }
        let (mut grants, mut lost) = (Vec::new(), false);
        for k in order {
            let op = k.0;
            let rs = &by_output[&k];
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
                .filter(|r| c == ANY || r.candidate() == c)
                .min_by_key(|r| (r.key, rank(r)))
                .unwrap();
            lost |= rs.len() > 1;
            grants.push(*winner);
        }
        (grants, lost)
    }

    proptest! {
        /// The allocator grants what the reference model grants, in the same order, from a
        /// few requests to the dozens of a 48-port switch or a hierarchical switch's central
        /// crossbar at saturation, below and above 64 ports; no crossbar input (input port,
        /// or input VL with a non-multiplexed crossbar) or crossbar output is granted twice.
        /// Keys model FIFO ages (or deadlines), `any` the FIFO arbiter's scheduler in front
        /// of output buffers.
        #[test]
        fn matches_reference_model(
            ports in 1usize..80,
            raw in proptest::collection::vec(
                (0u16..80, 0u8..4, 0u16..80, 0u8..4, 0u8..3, 0i64..4), 0..70),
            starts in proptest::collection::vec(0usize..80, 80),
            refuse in any::<u64>(),
            salt in 0u8..8,
            per_vl in any::<bool>(),
            any_cand in any::<bool>(),
        ) {
            // One request per input port (per input VL with `per_vl`), ports in range.
            let mut seen = std::collections::HashSet::new();
            let reqs: Vec<Request> = raw
                .into_iter()
                .filter(|r| {
                    (r.0 as usize) < ports
                        && (r.2 as usize) < ports
                        && seen.insert((r.0, if per_vl { r.1 } else { 0 }))
                })
                .map(|(i, iv, o, ov, sl, key)| Request {
                    input: i, in_vl: Vl(iv), output: o, out_vl: Vl(ov), sl: Sl(sl), key,
                })
                .collect();
            let starts: Vec<usize> = starts.iter().map(|s| s % ports).collect();
            let sched = scheduler(refuse & 0xF0F, salt);
            let choose = |op: PortNum, c: &[Candidate]| {
                if any_cand { sched(op, c).map(|_| ANY) } else { sched(op, c) }
            };
            let (want, want_lost) = reference(&reqs, ports, &choose, &starts, per_vl);
            let mut alloc = SeparableAllocator::default();
            alloc.clear();
            for r in &reqs {
                alloc.request(*r);
            }
            let lost = if per_vl {
                alloc.allocate::<false, true>(ports, choose, |op| starts[op as usize])
            } else {
                alloc.allocate::<false, false>(ports, choose, |op| starts[op as usize])
            };
            prop_assert_eq!(alloc.grants(), &want[..]);
            prop_assert_eq!(lost, want_lost);
            let outs: std::collections::HashSet<_> =
                want.iter().map(|g| (g.output, per_vl.then_some(g.out_vl))).collect();
            let ins: std::collections::HashSet<_> =
                want.iter().map(|g| (g.input, per_vl.then_some(g.in_vl))).collect();
            prop_assert_eq!(outs.len(), want.len());
            prop_assert_eq!(ins.len(), want.len());
        }

        /// With keys, the oldest request for an output wins whatever the round-robin start:
        /// the FIFO arbiter's rule.
        #[test]
        fn smallest_key_wins(
            keys in proptest::collection::vec(0i64..1000, 1..8),
            start in 0usize..8,
        ) {
            let ports = 8;
            let mut alloc = SeparableAllocator::default();
            alloc.clear();
            for (i, &key) in keys.iter().enumerate() {
                alloc.request(Request {
                    input: i as u16, in_vl: Vl(0), output: 7, out_vl: Vl(i as u8 % 4),
                    sl: Sl(0), key,
                });
            }
            alloc.allocate::<false, false>(ports, |_, _| Some(ANY), |_| start);
            let g = alloc.grants()[0];
            let oldest = *keys.iter().min().unwrap();
            prop_assert_eq!(g.key, oldest);
            // Ties go to the first input at or after the round-robin start.
            let first = (0..ports)
                .map(|k| (start + k) % ports)
                .find(|&i| i < keys.len() && keys[i] == oldest)
                .unwrap();
            prop_assert_eq!(g.input as usize, first);
        }

        /// `round_robin_bits` visits every set bit once, from `start` upwards, then wraps.
        #[test]
        fn round_robin_bits_order(mask in any::<u32>(), start in 0u32..40) {
            let got: Vec<u32> = round_robin_bits(mask, start).collect();
            let s = if start >= 32 { 0 } else { start };
            let want: Vec<u32> = (s..32).chain(0..s).filter(|b| mask & (1 << b) != 0).collect();
            prop_assert_eq!(got, want);
        }
    }
}
