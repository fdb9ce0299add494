//! Output-port schedulers: when a port is free to start a packet, choose which VL sends next.
//! One instance per switch output port and per NIC.
//!
//! The engine offers [`Candidate`]s: the VLs whose head packet could start now, each with the
//! SL (traffic class) of that head packet. SL-based schedulers (SBT, DTable) need the SL because
//! bandwidth is distributed per SL, not per VL, and several SLs may share a VL (Cano-Cano et
//! al. 2022, `shared/papers/000_942770a54f7010fd.txt`, §3.2 and Table 7).
//!
//! A scheduler is *work conserving* here: an SL is "active" when one of its packets can start
//! now (its head is routed to this port and the next buffer has room for it).
use crate::config::SchedulerConfig;
use smallvec::SmallVec;
use std::sync::Arc;

/// Per-SL counters of a table scheduler, in line for up to 8 SLs: a port's scheduler is read
/// once per packet it starts, long after its last packet, so every separate allocation on the
/// way (the boxed state, then a vector) is one more cache miss.
type PerSl<T> = SmallVec<[T; 8]>;

/// A VL that can start a packet now, and the SL (class) of its head packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The VL.
    pub vl: u8,
    /// SL (traffic class) of the packet at the head of the VL.
    pub sl: u8,
}

/// State of the SBT scheduler (Algorithm 1 of the paper above). One cache line (aligned, so
/// that the boxed state never straddles two).
#[derive(Clone, Debug)]
#[repr(align(64))]
pub struct Sbt {
    weights: Arc<[u32]>,
    remaining: PerSl<u32>,
    last_vl: u8,
    vls: u8,
}

// A port's scheduler slot stays small (at most 32 bytes: several share a cache line), and
// SBT's boxed state is one line.
const _: () = assert!(std::mem::size_of::<Sbt>() == 64);
const _: () = assert!(std::mem::size_of::<OutputScheduler>() <= 32);

/// State of the DTable scheduler (Algorithm 2 of the paper above).
#[derive(Clone, Debug)]
#[repr(align(64))]
pub struct DTable {
    /// Table entries in order: (SL, weight in flits).
    entries: Arc<[(u8, u32)]>,
    /// MTU of each SL, flits: the weight one message consumes.
    mtu: Arc<[u32]>,
    deficit: PerSl<u32>,
    acc: u32,
    cur_sl: Option<u8>,
    cur_entry: usize,
    /// Per SL, the last VL served (round robin among the VLs of an SL).
    last_vl: PerSl<u8>,
    vls: u8,
    /// The engine moves packets, not whole messages (`atomic = "link"` with packets inside
    /// messages): a chosen SL's MTU goes as consecutive packets of one VL.
    packets: bool,
    /// Flits of the chosen MTU still to start, and their VL (Algorithm 2's `pending_pkts`).
    pending: u32,
    lock_vl: u8,
}

/// State of InfiniBand VL arbitration (high and low priority tables, LimitOfHighPriority).
#[derive(Clone, Debug)]
pub struct VlArb {
    high: Arc<[(u8, u32)]>,
    low: Arc<[(u8, u32)]>,
    /// Flits of high-priority data that may be sent while low-priority packets wait
    /// (`None`: unlimited).
    high_limit: Option<u64>,
    cur: [usize; 2],
    credit: [i64; 2],
    high_sent: u64,
    last_table: usize,
}

/// A scheduler's state. Built-in variants are an enum so the engine dispatches statically.
#[derive(Clone, Debug)]
pub enum OutputScheduler {
    /// Round robin among VLs.
    RoundRobin {
        /// Last VL served.
        last: u8,
        /// Number of VLs.
        vls: u8,
    },
    /// Strict priority among VLs, highest first.
    StrictPriority {
        /// VLs in priority order, highest first.
        order: Vec<u8>,
    },
    /// Simple Bandwidth Table.
    Sbt(Box<Sbt>),
    /// DTable with deficit counters.
    DTable(Box<DTable>),
    /// InfiniBand VLArbitration tables.
    VlArb(Box<VlArb>),
    /// Management traffic first: a packet on the management VL (InfiniBand VL15, Omni-Path
    /// SC15) always wins; the wrapped scheduler chooses among the data VLs and never sees the
    /// management VL.
    Management {
        /// The management VL.
        vl: u8,
        /// The scheduler of the data VLs.
        inner: Box<OutputScheduler>,
    },
}

impl OutputScheduler {
    /// Builds a scheduler for a port with `vls` VLs; `mtu[sl]` is each SL's MTU in flits.
    pub fn new(cfg: &SchedulerConfig, vls: u8, mtu: &[u32]) -> Result<Self, String> {
        let sls = mtu.len();
        Ok(match cfg {
            SchedulerConfig::RoundRobin => OutputScheduler::RoundRobin { last: vls - 1, vls },
            SchedulerConfig::StrictPriority { order } => {
                if let Some(&v) = order.iter().find(|&&v| v >= vls) {
                    return Err(format!(
                        "scheduler.order names VL {v}, but there are only {vls} VLs"
                    ));
                }
                let mut full: Vec<u8> = Vec::with_capacity(vls as usize);
                for &v in order {
                    if !full.contains(&v) {
                        full.push(v);
                    }
                }
                for v in (0..vls).rev() {
                    if !full.contains(&v) {
                        full.push(v);
                    }
                }
                OutputScheduler::StrictPriority { order: full }
            }
            SchedulerConfig::Sbt { weights } => {
                if weights.len() != sls {
                    return Err(format!(
                        "sbt: {} weights for {sls} SLs (one weight per traffic class)",
                        weights.len()
                    ));
                }
                if weights.iter().all(|&w| w == 0) {
                    return Err("sbt: all weights are zero".into());
                }
                OutputScheduler::Sbt(Box::new(Sbt {
                    weights: weights.clone().into(),
                    remaining: weights.iter().copied().collect(),
                    last_vl: 0,
                    vls,
                }))
            }
            SchedulerConfig::Dtable { entries, .. } => {
                if entries.is_empty() {
                    return Err("dtable: the table has no entries".into());
                }
                for (i, e) in entries.iter().enumerate() {
                    if e.sl as usize >= sls {
                        return Err(format!(
                            "dtable: entry {i} names SL {}, but there are {sls} SLs",
                            e.sl
                        ));
                    }
                    if e.weight > 0 && e.weight < mtu[e.sl as usize] {
                        return Err(format!(
                            "dtable: entry {i} of SL {} has weight {}, which cannot deliver one MTU ({} flits)",
                            e.sl, e.weight, mtu[e.sl as usize]
                        ));
                    }
                }
                OutputScheduler::DTable(Box::new(DTable {
                    entries: entries.iter().map(|e| (e.sl, e.weight)).collect(),
                    mtu: mtu.into(),
                    deficit: smallvec::smallvec![0; sls],
                    acc: 0,
                    cur_sl: None,
                    cur_entry: entries.len() - 1,
                    last_vl: smallvec::smallvec![vls - 1; sls],
                    vls,
                    packets: false,
                    pending: 0,
                    lock_vl: 0,
                }))
            }
            SchedulerConfig::VlArb {
                high,
                low,
                limit_of_high_priority,
            } => {
                for &(v, _) in high.iter().chain(low.iter()) {
                    if v >= vls {
                        return Err(format!(
                            "vlarb: a table names VL {v}, but there are only {vls} VLs"
                        ));
                    }
                }
                if high.iter().chain(low.iter()).all(|&(_, w)| w == 0) {
                    return Err("vlarb: both tables are empty".into());
                }
                OutputScheduler::VlArb(Box::new(VlArb {
                    high: high.clone().into(),
                    low: low.clone().into(),
                    // LimitOfHighPriority counts 4096-byte units; with 64-byte flits, 64 flits each.
                    high_limit: (*limit_of_high_priority != 255)
                        .then(|| *limit_of_high_priority as u64 * 64),
                    cur: [0, 0],
                    credit: [0, 0],
                    high_sent: 0,
                    last_table: 1,
                }))
            }
        })
    }

    /// Chooses one of the non-empty `cands`; returns its index, or `None` when the scheduler
    /// lets none of them send now (DTable and VLArb when no active SL/VL has a table entry).
    #[inline]
    pub fn pick(&mut self, cands: &[Candidate]) -> Option<usize> {
        debug_assert!(!cands.is_empty());
        match self {
            OutputScheduler::RoundRobin { last, vls } => {
                let n = *vls as usize;
                if let [c] = cands {
                    // A lone candidate is the first after any VL.
                    *last = c.vl;
                    return Some(0);
                }
                if n <= 32 && cands.len() <= 256 {
                    // The first candidate VL after the last one served, over a bit set of
                    // the candidates' VLs (a VL stands for its first candidate).
                    let (mask, first) = vl_set(cands);
                    let vl = crate::engine::allocator::round_robin_bits(mask, *last as u32 + 1)
                        .next()?;
                    *last = vl as u8;
                    return Some(first[vl as usize] as usize);
                }
                let mut best = None;
                let mut best_d = usize::MAX;
                for (i, c) in cands.iter().enumerate() {
                    let d = (c.vl as usize + n - *last as usize - 1) % n;
                    if d < best_d {
                        best_d = d;
                        best = Some(i);
                    }
                }
                let i = best?;
                *last = cands[i].vl;
                Some(i)
            }
            OutputScheduler::StrictPriority { order } => order
                .iter()
                .find_map(|&v| cands.iter().position(|c| c.vl == v)),
            OutputScheduler::Sbt(s) => s.pick(cands),
            OutputScheduler::DTable(d) => d.pick(cands),
            OutputScheduler::VlArb(a) => a.pick(cands),
            OutputScheduler::Management { vl, inner } => {
                match cands.iter().position(|c| c.vl == *vl) {
                    Some(i) => Some(i),
                    None => inner.pick(cands),
                }
            }
        }
    }

    /// Wraps `self` so that VL `vl` (the management VL) has absolute priority.
    pub fn with_management(self, vl: u8) -> Self {
        OutputScheduler::Management {
            vl,
            inner: Box::new(self),
        }
    }

    /// Whether the scheduler of the data VLs is DTable (which keeps each MTU together, on its
    /// links or along the whole path: `qos.dtable.atomic`).
    pub fn is_dtable(&self) -> bool {
        match self {
            OutputScheduler::DTable(_) => true,
            OutputScheduler::Management { inner, .. } => inner.is_dtable(),
            _ => false,
        }
    }

    /// Makes a DTable scheduler (also inside a management wrapper) keep each MTU together over
    /// packets: the engine moves packets smaller than a message (`qos.dtable.atomic = "link"`
    /// with `traffic.packet_flits`). Other schedulers are unchanged.
    pub fn with_packets(mut self) -> Self {
        self.set_packets();
        self
    }

    fn set_packets(&mut self) {
        match self {
            OutputScheduler::DTable(d) => d.packets = true,
            OutputScheduler::Management { inner, .. } => inner.set_packets(),
            _ => {}
        }
    }

    /// Flits the next buffer must have room for before a head packet of `len` flits on VL
    /// `vl`, SL `sl`, counts as able to start: `len`, except under a DTable that keeps MTUs
    /// together over packets, where a packet that would begin a new MTU needs room for the
    /// SL's whole MTU (§3.3.1: "the entire message fits onto the neighbour receiving buffer").
    /// The engine asks only in runs with such a DTable (`Network::mtu_room`); out of line and
    /// cold, so that the allocator's common path does not carry it.
    #[cold]
    #[inline(never)]
    pub fn room_needed(&self, vl: u8, sl: u8, len: u32) -> u32 {
        match self {
            OutputScheduler::DTable(d) if d.packets => d.room_needed(vl, sl, len),
            OutputScheduler::Management { vl: m, inner } if *m != vl => {
                inner.room_needed(vl, sl, len)
            }
            _ => len,
        }
    }

    /// Where the state [`pick`](Self::pick) reads lives when it is not in the scheduler's own
    /// slot (the boxed state of a table scheduler): the engine prefetches it before it looks
    /// for candidates, so that its cache miss overlaps theirs.
    #[inline(always)]
    pub(crate) fn boxed_state(&self) -> Option<*const u8> {
        match self {
            OutputScheduler::Sbt(s) => Some((&**s as *const Sbt).cast()),
            OutputScheduler::DTable(d) => Some((&**d as *const DTable).cast()),
            OutputScheduler::VlArb(a) => Some((&**a as *const VlArb).cast()),
            OutputScheduler::Management { inner, .. } => Some((&**inner as *const Self).cast()),
            OutputScheduler::RoundRobin { .. } | OutputScheduler::StrictPriority { .. } => None,
        }
    }

    /// Like [`pick`](Self::pick) but returns the chosen candidate, and `None` for no candidates.
    #[inline]
    pub fn choose(&mut self, cands: &[Candidate]) -> Option<Candidate> {
        if cands.is_empty() {
            return None;
        }
        self.pick(cands).map(|i| cands[i])
    }

    /// Informs the scheduler that a packet of `flits` started on `c.vl`.
    #[inline]
    pub fn sent(&mut self, c: Candidate, flits: u32) {
        match self {
            OutputScheduler::VlArb(a) => a.sent(c, flits),
            OutputScheduler::DTable(d) => d.sent(c, flits),
            OutputScheduler::Management { vl, inner } if c.vl != *vl => inner.sent(c, flits),
            _ => {}
        }
    }
}

impl Sbt {
    /// Algorithm 1: visit VLs from the last one served; the first active SL with weight left
    /// sends one packet (weight − 1). If no active SL has weight left, an active SL without
    /// weight may still send (no starvation, no idle link) — unless every weight is used up,
    /// in which case the table is restored first and the choice is made with the restored
    /// weights. (The listing returns the weightless VL even after the restore, which hands one
    /// uncharged packet per round to some SL; with the equal weights of the round-robin
    /// baseline, e.g. 1 per SL, that would give one SL twice the packets of another. The text
    /// says equal weights give round robin whatever their value, so the restore comes first.)
    fn pick(&mut self, cands: &[Candidate]) -> Option<usize> {
        if self.remaining.iter().all(|&w| w == 0) {
            self.remaining.copy_from_slice(&self.weights);
        }
        if let [c] = cands {
            // A lone candidate goes, charged if its SL has weight left.
            let sl = c.sl as usize;
            if self.remaining[sl] > 0 {
                self.remaining[sl] -= 1;
            }
            self.last_vl = c.vl;
            return Some(0);
        }
        if self.vls <= 32 && cands.len() <= 256 {
            // The candidates' VLs as a bit set, visited from the last one served.
            let (mask, first) = vl_set(cands);
            let order = crate::engine::allocator::round_robin_bits(mask, self.last_vl as u32)
                .map(|vl| first[vl as usize] as usize);
            return self.serve_first(cands, order);
        }
        // Beyond what a set indexes: each VL's first candidate, searched for.
        let (last, vls) = (self.last_vl, self.vls);
        let order = (0..vls).filter_map(|i| {
            let vl = (last + i) % vls;
            cands.iter().position(|c| c.vl == vl)
        });
        self.serve_first(cands, order)
    }

    /// Of the candidates in the visiting `order`, the first whose SL has weight left sends
    /// (weight − 1); if none has, the last one visited sends without weight.
    #[inline(always)]
    fn serve_first(
        &mut self,
        cands: &[Candidate],
        order: impl Iterator<Item = usize>,
    ) -> Option<usize> {
        let mut without_weight = None;
        for ci in order {
            let sl = cands[ci].sl as usize;
            if self.remaining[sl] > 0 {
                self.last_vl = cands[ci].vl;
                self.remaining[sl] -= 1;
                return Some(ci);
            }
            without_weight = Some(ci);
        }
        let ci = without_weight?;
        self.last_vl = cands[ci].vl;
        Some(ci)
    }
}

/// `x % n` for `x < 2 n` (an index below `n` plus an offset of at most `n`), without a
/// division.
#[inline(always)]
fn wrap(x: usize, n: usize) -> usize {
    debug_assert!(x < 2 * n, "wrap({x}, {n})");
    if x >= n {
        x - n
    } else {
        x
    }
}

/// The VLs of `cands` (VLs below 32, at most 256 candidates) as a bit set, and each VL's
/// first candidate.
#[inline(always)]
fn vl_set(cands: &[Candidate]) -> (u32, [u8; 32]) {
    let mut mask = 0u32;
    let mut first = [0u8; 32];
    for (i, c) in cands.iter().enumerate() {
        let bit = 1u32 << (c.vl & 31);
        if mask & bit == 0 {
            mask |= bit;
            first[(c.vl & 31) as usize] = i as u8;
        }
    }
    (mask, first)
}

impl DTable {
    /// Algorithm 2: keep serving the current SL while its accumulated weight covers an MTU;
    /// otherwise save the rest as its deficit (or drop it when the SL went idle) and move to the
    /// next table entry of an active SL, whose weight plus the SL's deficit becomes the
    /// accumulated weight. Each message costs the SL's MTU. Among the VLs of one SL, round robin.
    ///
    /// With packets (`packets`), an MTU is sent as consecutive packets of the chosen VL: while
    /// `pending` flits of it remain and that VL can start its next packet, the VL goes again
    /// without a new choice (Algorithm 2, lines 6–7). When it cannot (the rest of the MTU has
    /// not reached the port yet, or was shorter), the MTU ends there: a work-conserving port
    /// does not idle for it.
    fn pick(&mut self, cands: &[Candidate]) -> Option<usize> {
        if self.pending > 0 {
            if let Some(i) = cands.iter().position(|c| c.vl == self.lock_vl) {
                return Some(i);
            }
            self.pending = 0;
        }
        // The SLs with candidates, as a bit set (a search of the candidates per SL beyond 64).
        let (sls, small) = cands.iter().fold((0u64, true), |(m, small), c| {
            (m | 1u64.wrapping_shl(c.sl as u32), small & (c.sl < 64))
        });
        let active = |sl: u8| {
            if small {
                sl < 64 && sls & (1u64 << sl) != 0
            } else {
                cands.iter().any(|c| c.sl == sl)
            }
        };
        if let Some(sl) = self.cur_sl {
            if !active(sl) {
                self.acc = 0;
                self.deficit[sl as usize] = 0;
                self.cur_sl = None;
            } else if self.mtu[sl as usize] > self.acc {
                self.deficit[sl as usize] = self.acc;
                self.cur_sl = None;
            }
        }
        let sl = match self.cur_sl {
            Some(sl) => sl,
            None => {
                let n = self.entries.len();
                let e = (1..=n)
                    .map(|d| wrap(self.cur_entry + d, n))
                    .find(|&e| self.entries[e].1 > 0 && active(self.entries[e].0))?;
                self.cur_entry = e;
                let (sl, weight) = self.entries[e];
                self.acc = self.deficit[sl as usize] + weight;
                self.cur_sl = Some(sl);
                sl
            }
        };
        self.acc = self.acc.saturating_sub(self.mtu[sl as usize]);
        // Round robin among the VLs of this SL.
        let n = self.vls as usize;
        let last = self.last_vl[sl as usize] as usize;
        let ci = cands
            .iter()
            .enumerate()
            .filter(|(_, c)| c.sl == sl)
            .min_by_key(|(_, c)| wrap(c.vl as usize + n - last - 1, n))
            .map(|(i, _)| i)?;
        self.last_vl[sl as usize] = cands[ci].vl;
        if self.packets {
            self.pending = self.mtu[sl as usize];
            self.lock_vl = cands[ci].vl;
        }
        Some(ci)
    }

    /// A packet of `flits` started on `c.vl`: it counts against the MTU in progress.
    fn sent(&mut self, c: Candidate, flits: u32) {
        if self.pending > 0 && c.vl == self.lock_vl {
            self.pending = self.pending.saturating_sub(flits);
        }
    }

    /// See [`OutputScheduler::room_needed`].
    #[inline]
    fn room_needed(&self, vl: u8, sl: u8, len: u32) -> u32 {
        if self.pending > 0 && vl == self.lock_vl {
            len
        } else {
            len.max(self.mtu[sl as usize])
        }
    }
}

impl VlArb {
    /// InfiniBand VL arbitration: the high-priority table is served first, entry by entry, each
    /// entry's VL sending while its weight (flits) lasts; after `high_limit` flits of high
    /// priority with low-priority packets waiting, one low-priority packet goes.
    fn pick(&mut self, cands: &[Candidate]) -> Option<usize> {
        let has = |t: &[(u8, u32)]| {
            cands
                .iter()
                .any(|c| t.iter().any(|&(v, w)| w > 0 && v == c.vl))
        };
        let high_ok = has(&self.high);
        let low_ok = has(&self.low);
        let table = if high_ok && !(low_ok && self.high_limit.is_some_and(|l| self.high_sent >= l))
        {
            0
        } else if low_ok {
            1
        } else {
            return None;
        };
        let entries = if table == 0 {
            self.high.clone()
        } else {
            self.low.clone()
        };
        let n = entries.len();
        // Continue the current entry while it has weight and its VL can send.
        let (cur_vl, cur_weight) = entries[self.cur[table]];
        if self.credit[table] > 0 && cur_weight > 0 {
            if let Some(ci) = cands.iter().position(|c| c.vl == cur_vl) {
                self.last_table = table;
                return Some(ci);
            }
        }
        for d in 1..=n {
            let i = (self.cur[table] + d) % n;
            let (v, w) = entries[i];
            if w > 0 {
                if let Some(ci) = cands.iter().position(|c| c.vl == v) {
                    self.cur[table] = i;
                    self.credit[table] = w as i64;
                    self.last_table = table;
                    return Some(ci);
                }
            }
        }
        None
    }

    fn sent(&mut self, _c: Candidate, flits: u32) {
        let t = self.last_table;
        self.credit[t] -= flits as i64;
        if t == 0 {
            self.high_sent += flits as u64;
        } else {
            self.high_sent = 0;
        }
    }
}

/// Round-robin arbiter over `n` requesters, granting the first requester after the last grant.
#[derive(Clone, Copy, Debug, Default)]
pub struct RoundRobinArbiter {
    last: u16,
}

impl RoundRobinArbiter {
    /// The requester index to start searching from.
    #[inline]
    pub fn start(&self, n: usize) -> usize {
        (self.last as usize + 1) % n.max(1)
    }
    /// Records a grant.
    #[inline]
    pub fn grant(&mut self, i: usize) {
        self.last = i as u16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DTableEntryConfig;
    use rand::{Rng, SeedableRng};

    fn cands(vls: &[(u8, u8)]) -> Vec<Candidate> {
        vls.iter().map(|&(vl, sl)| Candidate { vl, sl }).collect()
    }

    #[test]
    fn the_management_vl_always_wins_and_the_data_scheduler_never_sees_it() {
        // SBT on VLs 0–1 (weights 1/1; the management SL 2 has weight 0), management VL 2.
        let inner = OutputScheduler::new(
            &SchedulerConfig::Sbt {
                weights: vec![1, 1, 0],
            },
            3,
            &[2, 2, 4],
        )
        .unwrap();
        let mut plain = inner.clone();
        let mut s = inner.with_management(2);
        let all = cands(&[(0, 0), (1, 1), (2, 2)]);
        for _ in 0..10 {
            let c = s.choose(&all).unwrap();
            assert_eq!(c.vl, 2);
            s.sent(c, 4);
        }
        // Without management packets the data VLs are served exactly as by SBT alone: the
        // management packets charged nothing.
        let data = cands(&[(0, 0), (1, 1)]);
        for _ in 0..8 {
            assert_eq!(s.choose(&data), plain.choose(&data));
        }
    }

    /// Reference model: scan VLs last+1, last+2, … and take the first eligible one.
    fn reference_rr(last: u8, vls: u8, mask: u32) -> u8 {
        (1..=vls)
            .map(|d| (last + d) % vls)
            .find(|&v| mask & (1 << v) != 0)
            .unwrap()
    }

    #[test]
    fn round_robin_takes_the_first_candidate_of_the_next_vl() {
        // Candidate lists in any order, with VLs repeated under other SLs, up to 32 VLs (the
        // bit set) and 40 (the search): the first candidate of the first VL after the last
        // one served, as a plain minimum of the round-robin distance finds it.
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5);
        for vls in [1u8, 2, 5, 8, 16, 32, 40] {
            let mut s = OutputScheduler::new(&SchedulerConfig::RoundRobin, vls, &[1]).unwrap();
            let mut last = vls - 1;
            for _ in 0..2000 {
                let n = rng.gen_range(1..=6);
                let c: Vec<Candidate> = (0..n)
                    .map(|_| Candidate {
                        vl: rng.gen_range(0..vls),
                        sl: rng.gen_range(0..3),
                    })
                    .collect();
                let dist = |vl: u8| (vl as usize + vls as usize - last as usize - 1) % vls as usize;
                let want = (0..n).min_by_key(|&i| (dist(c[i].vl), i)).unwrap();
                assert_eq!(s.pick(&c), Some(want), "vls={vls} last={last} {c:?}");
                last = c[want].vl;
            }
        }
    }

    #[test]
    fn round_robin_matches_reference_on_random_masks() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        for vls in [1u8, 2, 3, 4, 8, 15, 16, 31, 32] {
            let mut s = OutputScheduler::new(&SchedulerConfig::RoundRobin, vls, &[1]).unwrap();
            let mut last = vls - 1;
            for _ in 0..2000 {
                let full = if vls == 32 {
                    u32::MAX
                } else {
                    (1u32 << vls) - 1
                };
                let mask = rng.gen::<u32>() & full;
                if mask == 0 {
                    continue;
                }
                let c: Vec<Candidate> = (0..vls)
                    .filter(|v| mask & (1 << v) != 0)
                    .map(|vl| Candidate { vl, sl: 0 })
                    .collect();
                let want = reference_rr(last, vls, mask);
                assert_eq!(
                    c[s.pick(&c).unwrap()].vl,
                    want,
                    "vls={vls} mask={mask:b} last={last}"
                );
                last = want;
            }
        }
    }

    #[test]
    fn strict_priority_prefers_listed_then_highest() {
        let mut s =
            OutputScheduler::new(&SchedulerConfig::StrictPriority { order: vec![1] }, 4, &[1])
                .unwrap();
        let all = cands(&[(0, 0), (1, 0), (2, 0), (3, 0)]);
        assert_eq!(all[s.pick(&all).unwrap()].vl, 1);
        let c = cands(&[(0, 0), (2, 0), (3, 0)]);
        assert_eq!(c[s.pick(&c).unwrap()].vl, 3);
        assert!(
            OutputScheduler::new(&SchedulerConfig::StrictPriority { order: vec![4] }, 4, &[1])
                .is_err()
        );
    }

    /// SBT against Algorithm 1 written out plainly (visit VLs from the last one served, each
    /// VL's first candidate; the first SL with weight left sends; else the last weightless
    /// one visited; the table restored once all weights are spent): the same choices over
    /// random candidate lists (duplicate VLs, any order), weights and VL counts up to 40.
    #[test]
    fn sbt_matches_a_plain_algorithm_1() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(23);
        for _ in 0..300 {
            let vls: u8 = if rng.gen_bool(0.2) {
                32
            } else if rng.gen_bool(0.1) {
                40 // beyond the bit set: the search per VL
            } else {
                rng.gen_range(1..=8)
            };
            let sls = rng.gen_range(1..=4usize);
            let mut weights: Vec<u32> = (0..sls).map(|_| rng.gen_range(0..4)).collect();
            weights[0] += 1; // not all zero (refused at construction)
            let mut s = OutputScheduler::new(
                &SchedulerConfig::Sbt {
                    weights: weights.clone(),
                },
                vls,
                &vec![1; sls],
            )
            .unwrap();
            let (mut remaining, mut last) = (weights.clone(), 0u8);
            for _ in 0..100 {
                let n = rng.gen_range(1..=6);
                let c: Vec<Candidate> = (0..n)
                    .map(|_| Candidate {
                        vl: rng.gen_range(0..vls),
                        sl: rng.gen_range(0..sls as u8),
                    })
                    .collect();
                if remaining.iter().all(|&w| w == 0) {
                    remaining.clone_from(&weights);
                }
                let mut want = None;
                let mut weightless = None;
                for i in 0..vls as usize {
                    let vl = ((last as usize + i) % vls as usize) as u8;
                    let Some(ci) = c.iter().position(|x| x.vl == vl) else {
                        continue;
                    };
                    if remaining[c[ci].sl as usize] > 0 {
                        remaining[c[ci].sl as usize] -= 1;
                        want = Some(ci);
                        break;
                    }
                    weightless = Some(ci);
                }
                let want = want.or(weightless);
                if let Some(ci) = want {
                    last = c[ci].vl;
                }
                assert_eq!(s.pick(&c), want, "vls {vls}, weights {weights:?}, {c:?}");
            }
        }
    }

    /// With every SL always active, SBT serves each SL its weight in packets per table round.
    #[test]
    fn sbt_splits_packets_by_weight_when_all_active() {
        let mut s = OutputScheduler::new(
            &SchedulerConfig::Sbt {
                weights: vec![55, 45],
            },
            2,
            &[1, 1],
        )
        .unwrap();
        let c = cands(&[(0, 0), (1, 1)]);
        let mut count = [0u32; 2];
        for _ in 0..1000 {
            count[c[s.pick(&c).unwrap()].sl as usize] += 1;
        }
        assert_eq!(count, [550, 450]);
        // Equal weights are packet round robin, whatever the weight (the scan starts at the VL
        // served last, so with weight 1 the order is A B B A A B …).
        for w in [1, 7] {
            let mut rr = OutputScheduler::new(
                &SchedulerConfig::Sbt {
                    weights: vec![w, w],
                },
                2,
                &[1, 1],
            )
            .unwrap();
            let mut count = [0u32; 2];
            for _ in 0..1000 {
                count[c[rr.pick(&c).unwrap()].sl as usize] += 1;
            }
            assert!(
                count[0].abs_diff(count[1]) <= 2 * w,
                "weights {w}: {count:?}"
            );
        }
    }

    /// A lone active SL keeps sending after its weight is gone (no starvation, no idle link);
    /// once all weights are used, the table is restored.
    #[test]
    fn sbt_lone_active_sl_sends_without_weight_and_table_resets() {
        let mut s = OutputScheduler::new(
            &SchedulerConfig::Sbt {
                weights: vec![2, 3],
            },
            2,
            &[1, 1],
        )
        .unwrap();
        let only0 = cands(&[(0, 0)]);
        for _ in 0..5 {
            assert_eq!(s.pick(&only0), Some(0));
        }
        let OutputScheduler::Sbt(st) = &s else {
            unreachable!()
        };
        assert_eq!(st.remaining.as_slice(), [0, 3]);
        let only1 = cands(&[(1, 1)]);
        for _ in 0..3 {
            s.pick(&only1);
        }
        // All weights used: the next pick restores the table and charges the restored weight.
        s.pick(&only1);
        let OutputScheduler::Sbt(st) = &s else {
            unreachable!()
        };
        assert_eq!(st.remaining.as_slice(), [2, 2]);
    }

    fn dtable(entries: &[(u8, u32)], mtu: &[u32], vls: u8) -> OutputScheduler {
        let entries = entries
            .iter()
            .map(|&(sl, weight)| DTableEntryConfig { sl, weight })
            .collect();
        OutputScheduler::new(
            &SchedulerConfig::Dtable {
                entries,
                atomic: Default::default(),
            },
            vls,
            mtu,
        )
        .unwrap()
    }

    /// With every SL always active, DTable serves flits in proportion to the table weights,
    /// carrying what is left below one MTU over as a deficit.
    #[test]
    fn dtable_shares_follow_weights_with_deficits() {
        // SL0: MTU 2, weight 7 per entry (3 messages + 1 deficit); SL1: MTU 16, weight 26.
        let mut s = dtable(&[(0, 7), (1, 26), (0, 7), (1, 26)], &[2, 16], 2);
        let c = cands(&[(0, 0), (1, 1)]);
        let mut flits = [0u64; 2];
        for _ in 0..100_000 {
            let sl = c[s.pick(&c).unwrap()].sl as usize;
            flits[sl] += [2, 16][sl];
        }
        let share0 = flits[0] as f64 / (flits[0] + flits[1]) as f64;
        assert!((share0 - 14.0 / 66.0).abs() < 0.01, "{share0}");
    }

    #[test]
    fn dtable_drops_the_deficit_of_an_idle_sl_and_round_robins_its_vls() {
        let mut s = dtable(&[(0, 4), (1, 4)], &[4, 4, 4], 4);
        // SL0 on VLs 0 and 2: successive messages alternate between them.
        let c = cands(&[(0, 0), (2, 0)]);
        let a = c[s.pick(&c).unwrap()].vl;
        let b = c[s.pick(&c).unwrap()].vl;
        assert_ne!(a, b);
        // Only an SL without table entries (SL 2) is active: nothing may send.
        assert_eq!(s.pick(&cands(&[(3, 2)])), None);
    }

    /// With packets inside messages (`atomic = "link"`), a chosen SL's MTU goes as
    /// consecutive packets of one VL, charged once; a packet that would begin a new MTU needs
    /// room for all of it; a VL that cannot go on ends the MTU early.
    #[test]
    fn dtable_keeps_each_mtu_together_over_packets() {
        // SL0: MTU 8 (four 2-flit packets), weight 8 per entry; SL1: MTU 2, weight 2.
        let mut s = dtable(&[(0, 8), (1, 2)], &[8, 2], 2).with_packets();
        let c = cands(&[(0, 0), (1, 1)]);
        let mut order = Vec::new();
        for _ in 0..10 {
            let ch = s.choose(&c).unwrap();
            s.sent(ch, 2);
            order.push(ch.sl);
        }
        // Four packets of SL0 (one MTU, one entry's weight), then one of SL1, and again.
        assert_eq!(order, [0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
        // Room: a new MTU of SL0 needs 8 flits; within an MTU the packet's own length.
        assert_eq!(s.room_needed(0, 0, 2), 8);
        assert_eq!(s.room_needed(1, 1, 2), 2);
        let ch = s.choose(&c).unwrap();
        assert_eq!(ch.vl, 0);
        s.sent(ch, 2);
        assert_eq!(s.room_needed(0, 0, 2), 2);
        assert_eq!(s.room_needed(1, 1, 2), 2);
        // SL0's VL has nothing ready: the MTU ends and SL1 goes (work conserving).
        let only1 = cands(&[(1, 1)]);
        assert_eq!(s.choose(&only1).unwrap().sl, 1);
        assert_eq!(s.room_needed(0, 0, 2), 8);
        // Without packets (the message is the unit), room is the packet's own length.
        let plain = dtable(&[(0, 8), (1, 2)], &[8, 2], 2);
        assert_eq!(plain.room_needed(0, 0, 2), 2);
        // Under a management wrapper the management VL needs only its packet.
        let m = dtable(&[(0, 8), (1, 2)], &[8, 2], 2)
            .with_management(2)
            .with_packets();
        assert_eq!(m.room_needed(2, 0, 2), 2);
        assert_eq!(m.room_needed(0, 0, 2), 8);
    }

    #[test]
    fn dtable_rejects_weights_below_one_mtu() {
        let entries = vec![DTableEntryConfig { sl: 0, weight: 1 }];
        let e = OutputScheduler::new(
            &SchedulerConfig::Dtable {
                entries,
                atomic: Default::default(),
            },
            1,
            &[4],
        )
        .unwrap_err();
        assert!(e.contains("cannot deliver one MTU"), "{e}");
    }

    #[test]
    fn vlarb_serves_high_first_and_honours_the_limit() {
        let cfg = SchedulerConfig::VlArb {
            high: vec![(1, 4)],
            low: vec![(0, 4)],
            limit_of_high_priority: 1,
        };
        let mut s = OutputScheduler::new(&cfg, 2, &[16]).unwrap();
        let c = cands(&[(0, 0), (1, 0)]);
        let mut order = Vec::new();
        for _ in 0..10 {
            let i = s.pick(&c).unwrap();
            s.sent(c[i], 16);
            order.push(c[i].vl);
        }
        // 64 flits (one 4 KB unit) of high priority, then one low packet, and again.
        assert_eq!(order, vec![1, 1, 1, 1, 0, 1, 1, 1, 1, 0]);
        let mut unlimited = OutputScheduler::new(
            &SchedulerConfig::VlArb {
                high: vec![(1, 4)],
                low: vec![(0, 4)],
                limit_of_high_priority: 255,
            },
            2,
            &[16],
        )
        .unwrap();
        for _ in 0..10 {
            let i = unlimited.pick(&c).unwrap();
            unlimited.sent(c[i], 16);
            assert_eq!(c[i].vl, 1);
        }
    }
}
