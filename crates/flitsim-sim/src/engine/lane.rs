//! The switch phase of a cycle, split into lanes that may run on several threads.
//!
//! A *lane* is a contiguous range of switches (and so of ports: a switch's ports are
//! numbered together) and the NICs attached to them. In the switch phase of cycle `t` each
//! lane first lets its NICs send (start a packet, put flits on the link), then takes the link
//! events that reach its ports at `t` (credits, flits), then runs the cycle of each of its
//! switches. Everything a lane changes belongs to its own ports, switches and NICs, with
//! three exceptions that wait for the end of the phase: events for other lanes' ports or for
//! NICs (every link has a latency of at least one cycle, so none is due before `t + 1`), the
//! counters every lane adds to (kept per lane and summed), and the packets' `hops`,
//! `deadline` and `inject` (changed only where the packet's head is: see [`PacketCells`]).
//! Before the phase, on the calling thread, the NICs take what reached them and refill their
//! buffers from the application queues (creating packets), and the sources generate.
//!
//! Since a cycle is evaluate-then-commit (see the [module docs](super)), neither the order in
//! which lanes run nor the order in which their events enter a time-wheel slot changes a
//! result: a run gives byte-identical results for any number of lanes (`run.threads`; tested).
//! Route tracing, deadline-based QoS and the random visiting order of the tests keep one lane.
use super::allocator::SeparableAllocator;
use super::buffer::{AccountView, BufferOrg};
use super::deadline::DeadlineState;
use super::link::{Event, TimeWheel, F_HEAD, F_SILENT, F_TRAIN, F_WAKE};
use super::nic::{all_bits, bit_ahead, has_bit, next_bit, set_bit, Nic, NicWakes};
use super::packet::PacketCells;
use super::packet::NO_FLOW;
use super::queue::VlQueue;
use super::queue::{BufPkt, RX_TRAIN};
use super::route::{Organisation, RouteSource, Sl2VlTables};
use super::switch::{Conn, SwitchState};
use super::XbarPort;
use super::{
    Network, PortInfo, VisitOrder, FURTHER_QUEUE_AHEAD, HEADS_AHEAD, LOOK, PREFETCH_AHEAD,
    PREFETCH_CONNS, XBAR_AHEAD,
};
use crate::config::Switching;
use crate::ids::{Cycle, PacketId, PortIdx, Vl, NEVER};
use crate::scheduler::{Candidate, OutputScheduler};
use crate::stats::RouteHop;
use flitsim_topology::PortNum;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// How many link events ahead the switches' delivery loop asks for the lines an event will
/// touch. Applying a body flit or a credit takes a few dozen instructions, so a lead of two
/// events hid little of a miss; sixteen keep many misses in flight at once. Measured
/// (`docs/performance.md`, session 23, concurrent pairs): 2 → 16 took 7–10 % off the 4-ary
/// 6-tree, 2–5 % off the 64×64 torus and 5–18 % off the 256×256 torus; the Omni-Path torus
/// and the 16-ary 4-tree moved within the pairs' spread; 32 and 64 gained no more.
pub(super) const DELIVER_AHEAD: usize = 16;
/// The same for the NICs' delivery, where each event (an ejection) is heavier (8 was tried in
/// session 23: no gain).
pub(super) const NIC_DELIVER_AHEAD: usize = 2;
/// How many of the lane's NICs with flits to send ahead the NICs' phase asks for a NIC's
/// record, on the largest fabrics (`Network::look_further`).
const NIC_AHEAD: usize = 4;
/// The lanes' wheels reach at least this many cycles ahead, so that a switch whose packets
/// stream can sleep until the first of them steps again (`Lane::sleep`; a stream of a
/// packet longer than this keeps its switch awake).
const WAKE_HORIZON: u32 = 31;

/// A part of a per-port (or per-switch) vector, indexed by the global index.
pub(crate) struct Span<'a, T> {
    base: usize,
    items: &'a mut [T],
}

impl<T> Span<'_, T> {
    /// The element at global index `i`, if this span has it.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<&T> {
        self.items.get(i.wrapping_sub(self.base))
    }
    /// The element at global index `i`, if this span has it, to change.
    #[inline(always)]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.items.get_mut(i.wrapping_sub(self.base))
    }
}

impl<T> std::ops::Index<usize> for Span<'_, T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        &self.items[i.wrapping_sub(self.base)]
    }
}

impl<T> std::ops::IndexMut<usize> for Span<'_, T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.items[i.wrapping_sub(self.base)]
    }
}

/// Something the switch phase cuts into consecutive ranges of ports (or switches, or NICs),
/// one per lane: a per-port vector ([`SliceCut`]) or a credit account
/// ([`super::buffer::AccountCut`]). Cutting is lazy and allocates nothing, since it happens
/// every cycle.
pub(crate) trait Carve: Sized {
    type Piece;
    /// The piece for items `from..to` (`from` at or after the end of the last piece).
    fn carve(&mut self, from: usize, to: usize) -> Self::Piece;
    /// Splits what is left at item `at`: the items before it, and from it on.
    fn split_at_item(self, at: usize) -> (Self, Self);
}

/// The pieces of a [`Carve`] between consecutive cuts: an iterator, one piece per lane.
pub(crate) struct Pieces<'c, R> {
    res: R,
    cuts: &'c [usize],
}

impl<'c, R: Carve> Pieces<'c, R> {
    pub fn new(res: R, cuts: &'c [usize]) -> Self {
        Pieces { res, cuts }
    }
    /// The pieces before cut `n`, and those from it on.
    pub fn split_at(self, n: usize) -> (Self, Self) {
        let at = self.cuts.get(n).copied().unwrap_or(usize::MAX);
        let (a, b) = self.res.split_at_item(at);
        let n = n.min(self.cuts.len().saturating_sub(1));
        (
            Pieces::new(a, &self.cuts[..=n]),
            Pieces::new(b, &self.cuts[n..]),
        )
    }
}

impl<R: Carve> Iterator for Pieces<'_, R> {
    type Item = R::Piece;
    fn next(&mut self) -> Option<R::Piece> {
        let (&from, rest) = self.cuts.split_first()?;
        let &to = rest.first()?;
        self.cuts = rest;
        Some(self.res.carve(from, to))
    }
}

/// A per-item vector with `stride` entries per item, cut into [`Span`]s (an empty vector, a
/// table the fabric does not use, gives empty spans).
pub(crate) struct SliceCut<'a, T> {
    /// The item `rest` starts at.
    at: usize,
    rest: &'a mut [T],
    stride: usize,
}

impl<'a, T> Carve for SliceCut<'a, T> {
    type Piece = Span<'a, T>;
    fn carve(&mut self, from: usize, to: usize) -> Span<'a, T> {
        let items = if self.rest.is_empty() {
            &mut []
        } else {
            let rest = std::mem::take(&mut self.rest);
            let (_, rest) = rest.split_at_mut((from - self.at) * self.stride);
            let (items, rest) = rest.split_at_mut((to - from) * self.stride);
            self.rest = rest;
            items
        };
        self.at = to;
        Span {
            base: from * self.stride,
            items,
        }
    }
    fn split_at_item(self, at: usize) -> (Self, Self) {
        let k = ((at.max(self.at) - self.at) * self.stride).min(self.rest.len());
        let (a, b) = self.rest.split_at_mut(k);
        let stride = self.stride;
        (
            SliceCut {
                at: self.at,
                rest: a,
                stride,
            },
            SliceCut {
                at: self.at + k / stride.max(1),
                rest: b,
                stride,
            },
        )
    }
}

/// The spans `cuts[k] · stride .. cuts[k + 1] · stride` of `v`, one per lane.
fn spans<'a, 'c, T>(
    v: &'a mut [T],
    cuts: &'c [usize],
    stride: usize,
) -> Pieces<'c, SliceCut<'a, T>> {
    Pieces::new(
        SliceCut {
            at: 0,
            rest: v,
            stride,
        },
        cuts,
    )
}

/// The lanes' boundaries, as the switch phase cuts the fabric's vectors: switch ports,
/// switches, NICs, and the switch ports of every lane followed by the NIC ports of every
/// lane (port numbers). Refilled every phase into the same vectors.
#[derive(Default)]
pub(crate) struct PhaseCuts {
    pub ports: Vec<usize>,
    pub switches: Vec<usize>,
    pub nics: Vec<usize>,
    pub all: Vec<usize>,
}

impl PhaseCuts {
    fn fill(&mut self, lanes: &[LaneOwn], nic_base: usize) {
        let (first, all) = (&lanes[0], lanes.iter());
        self.ports.clear();
        self.ports.push(first.ports.0);
        self.ports.extend(all.clone().map(|l| l.ports.1));
        self.switches.clear();
        self.switches.push(first.switches.0);
        self.switches.extend(all.clone().map(|l| l.switches.1));
        self.nics.clear();
        self.nics.push(first.nics.0);
        self.nics.extend(all.map(|l| l.nics.1));
        self.all.clear();
        self.all.extend_from_slice(&self.ports);
        self.all
            .extend(self.nics[1..].iter().map(|&e| nic_base + e));
    }
}

/// What a lane keeps from cycle to cycle: its time wheel, scratch space, and what it hands
/// over at the end of each phase. Aligned so that no two lanes' counters, which their threads
/// update all the time, share a cache line (or the pair of lines a core fetches together).
#[repr(align(128))]
pub(crate) struct LaneOwn {
    /// Switches `switches.0 .. switches.1`, ports `ports.0 .. ports.1`, and the NICs
    /// (endpoints) `nics.0 .. nics.1`, those attached to the lane's switches where the
    /// endpoints are numbered in the order of their switches.
    pub switches: (usize, usize),
    pub ports: (usize, usize),
    pub nics: (usize, usize),
    /// Events reaching this lane's ports.
    pub wheel: TimeWheel,
    pub alloc: SeparableAllocator,
    pub cands: Vec<Candidate>,
    /// Events for other lanes' ports and for NICs, sent in this phase.
    pub out: Vec<(Cycle, Event)>,
    /// Counters of this phase: flit-hops, change of the flits in switch buffers, the last cycle
    /// a flit moved (0: none).
    pub flit_hops: u64,
    pub buffered: i64,
    pub progress: Cycle,
    /// The last cycle a credit train that reached this lane returns a credit.
    pub credits_until: Cycle,
    /// The last cycle a streaming packet of this lane sends a flit between head and tail.
    pub stream_until: Cycle,
    /// Flits sent per (port, cycle) for the port time series, when it is on.
    pub port_log: Vec<(u32, Cycle, u32)>,
    /// Routing decisions, when route tracing is on (one lane then).
    pub route_log: Vec<RouteHop>,
    /// Messages whose flits the lane's NICs sent: (message entry, flits), in NIC order.
    pub sent: Vec<(u32, u32)>,
    /// The lane's NICs with flits in their buffers (bit `e − nics.0`), and those whose
    /// `skip` ran out in this phase.
    pub nic_active: Vec<u64>,
    /// The lane's streaming NICs, asleep, by the cycle they are visited again (see
    /// `Lane::nic_sleep`; an entry whose NIC's `wake` differs is stale).
    pub nic_wake: NicWakes,
    /// The lane's switches that may have something to do (bit `s − switches.0`): a switch
    /// leaves the set after a cycle in which it ends idle (nothing to allocate, no
    /// connection, no wake-up time, empty output buffers) and rejoins it when an event makes
    /// it dirty or gives it a wake-up time. A superset is harmless: an idle switch costs one
    /// look.
    pub sw_active: Vec<u64>,
    pub ready: Vec<u32>,
    /// Time the lane's runs took since the lanes were last balanced (nanoseconds; measured
    /// only when there are several lanes).
    pub busy_ns: u64,
    pub timed: bool,
}

impl LaneOwn {
    pub fn new(
        switches: (usize, usize),
        ports: (usize, usize),
        nics: (usize, usize),
        max_latency: u32,
        longest: usize,
    ) -> Self {
        LaneOwn {
            switches,
            ports,
            nics,
            wheel: TimeWheel::new(max_latency),
            alloc: SeparableAllocator::default(),
            cands: Vec::new(),
            out: Vec::new(),
            flit_hops: 0,
            buffered: 0,
            progress: 0,
            credits_until: 0,
            stream_until: 0,
            port_log: Vec::new(),
            route_log: Vec::new(),
            sent: Vec::new(),
            nic_active: vec![0; (nics.1 - nics.0).div_ceil(64)],
            nic_wake: NicWakes::new(longest),
            sw_active: all_bits(switches.1 - switches.0),
            ready: Vec::new(),
            busy_ns: 0,
            timed: false,
        }
    }
}

/// The output buffers of a lane's ports (see [`super::OutputBuffers`]).
pub(crate) struct ObufView<'a> {
    pub queues: Span<'a, VlQueue>,
    pub account: AccountView<'a>,
    pub waiting: Span<'a, u32>,
    pub cur: Span<'a, Vl>,
    pub stalled: Span<'a, bool>,
    pub xsched: Span<'a, OutputScheduler>,
}

/// The NICs of a lane: their state, their NIC buffers' accounts (indexed by endpoint), and
/// their ports' output side (indexed by port).
pub(crate) struct NicPart<'a> {
    pub nics: Span<'a, Nic>,
    pub buf: AccountView<'a>,
    pub credits: AccountView<'a>,
    pub vl_owner: Span<'a, PacketId>,
    pub sched: Span<'a, OutputScheduler>,
}

/// Whether a packet with `remaining` flits may start on output `g`, VL `vl`: room for all of
/// it under virtual cut-through; one credit and the VL not held by another packet under
/// wormhole.
#[inline]
pub(crate) fn can_start(
    switching: Switching,
    credits: &AccountView<'_>,
    vl_owner: &Span<'_, PacketId>,
    vls: usize,
    g: usize,
    vl: Vl,
    remaining: u32,
) -> bool {
    match switching {
        Switching::Vct => credits.fits(g, vl, remaining),
        Switching::Wormhole => {
            vl_owner[g * vls + vl.idx()] == PacketId::NONE && credits.fits(g, vl, 1)
        }
    }
}

/// One lane of the switch phase: read-only views of the fabric and the lane's own part of
/// the switch state. Field names follow [`Network`]'s, indexed by the same global indices.
pub(crate) struct Lane<'a> {
    pub vls: usize,
    pub switching: Switching,
    pub nic_base: u32,
    pub ports: &'a [PortInfo],
    pub port_names: &'a [(u32, PortNum)],
    pub organisation: &'a Organisation,
    pub routes: &'a RouteSource,
    pub sl2vl: &'a Sl2VlTables,
    pub in_orgs: &'a [BufferOrg],
    pub prio_inputs: bool,
    pub mgmt_vl: Option<u8>,
    pub fifo_arbiter: bool,
    pub per_vl_crossbar: bool,
    pub prefetch_queues: bool,
    /// See `Network::look_ahead`.
    pub look_ahead: bool,
    /// See `Network::look_further`.
    pub look_further: bool,
    /// See `Network::trains`.
    pub trains: bool,
    /// See `Network::credit_trains`.
    pub credit_trains: bool,
    /// See `Network::eject_trains`.
    pub eject_trains: bool,
    /// Trains may stream (`queue::STREAM`): credit trains, and no port time series (which
    /// logs each flit's cycle).
    pub stream: bool,
    /// NICs' trains stream (see `Lane::start_nic_stream`): trains, and no port time series.
    pub nic_streams: bool,
    /// The measurement window, cycles `[.0, .1)`.
    pub window: (Cycle, Cycle),
    /// See `Network::mtu_room`.
    pub mtu_room: bool,
    /// The port time series is on: log the flits sent.
    pub port_series: bool,
    /// Route tracing is on: log the routing decisions.
    pub trace_routes: bool,
    pub credits: AccountView<'a>,
    pub vl_owner: Span<'a, PacketId>,
    pub sched: Span<'a, OutputScheduler>,
    pub inputs: Span<'a, VlQueue>,
    pub xbar: Span<'a, XbarPort>,
    pub obuf: ObufView<'a>,
    pub switches: Span<'a, SwitchState>,
    /// Per (port, VL), flits sent in the window (`Collector::vl_flits`), for the `ports`
    /// table (`run.per_port_stats`; empty without it).
    pub vl_flits: Span<'a, u64>,
    pub port_stats: bool,
    pub packets: PacketCells<'a>,
    pub nic: NicPart<'a>,
    /// Deadline-based QoS state (one lane then).
    pub dl: Option<&'a mut DeadlineState>,
    pub own: &'a mut LaneOwn,
}

impl Lane<'_> {
    /// The switch phase of cycle `t` for this lane: its NICs' sending, link events, then
    /// every switch (NICs and switches in `order` when given, else in index order).
    pub fn run(&mut self, t: Cycle, in_window: bool, order: Option<&VisitOrder>) {
        let started = self.own.timed.then(std::time::Instant::now);
        let base = self.own.nics.0;
        // Streaming NICs due this cycle rejoin the visits (before they start: the visits
        // keep their order).
        let (nics, active) = (&self.nic.nics, &mut self.own.nic_active);
        self.own.nic_wake.take(t, |e| {
            let nic = &nics[e as usize];
            if nic.wake == t && nic.streaming() {
                set_bit(active, e as usize - base, true);
            }
        });
        match order {
            Some(order) => {
                for &e in &order.nics {
                    let i = e as usize - base;
                    if has_bit(&self.own.nic_active, i) {
                        self.nic_cycle(e as usize, t, in_window);
                    }
                }
            }
            None => {
                // (A NIC's cycle clears at most its own bit: the next ones are known before.)
                let bits = |from: usize, own: &LaneOwn| next_bit(&own.nic_active, from);
                let mut next = bits(0, self.own);
                // On the largest fabrics, the record of the NIC `NIC_AHEAD` places on (its
                // lines) while this one works.
                let mut ahead = self
                    .look_further
                    .then(|| bit_ahead(&self.own.nic_active, 0, NIC_AHEAD))
                    .flatten();
                // Half as far, and then one NIC on, the next stages for a NIC that will
                // start a packet (see `prefetch_nic_start`).
                let mut mid = self
                    .look_further
                    .then(|| bit_ahead(&self.own.nic_active, 0, NIC_AHEAD / 2))
                    .flatten();
                while let Some(k) = next {
                    next = bits(k + 1, self.own);
                    if let Some(a) = ahead {
                        if let Some(nic) = self.nic.nics.get(base + a) {
                            super::prefetch_all(nic);
                        }
                        ahead = bits(a + 1, self.own);
                    }
                    if let Some(m) = mid {
                        self.prefetch_nic_start(base + m, false);
                        mid = bits(m + 1, self.own);
                        if let Some(n) = next {
                            self.prefetch_nic_start(base + n, true);
                        }
                    }
                    self.nic_cycle(base + k, t, in_window);
                }
            }
        }
        self.run_switches(t, in_window, order.map(|o| o.switches.as_slice()));
        if let Some(started) = started {
            self.own.busy_ns += started.elapsed().as_nanos() as u64;
        }
    }

    fn run_switches(&mut self, t: Cycle, in_window: bool, order: Option<&[u32]>) {
        self.deliver(t);
        match order {
            Some(order) => {
                for &s in order {
                    let s = s as usize;
                    self.switch_cycle(s, t, in_window, std::array::from_fn(|j| s + 1 + j));
                }
            }
            None => {
                // Only the switches of the active set, in index order (the order of a run
                // over all of them: an idle switch does nothing). A switch's cycle clears at
                // most its own bit, so the next ones to visit are known before: the
                // look-ahead asks for their lines.
                let base = self.own.switches.0;
                let bits = |from: usize, own: &LaneOwn| next_bit(&own.sw_active, from);
                let at = |k: Option<usize>| k.map_or(usize::MAX, |k| base + k);
                let mut next = bits(0, self.own);
                // (Where the look-ahead asks for one switch's queues only — output buffers,
                // no trains, nobody sleeps — the next switches by index do.)
                let follow = self.look_ahead;
                let mut ahead = [None; LOOK];
                if follow {
                    let mut a = next;
                    for slot in ahead.iter_mut() {
                        a = a.and_then(|k| bits(k + 1, self.own));
                        *slot = a;
                    }
                }
                while let Some(k) = next {
                    if follow {
                        next = ahead[0];
                        let far = ahead[LOOK - 1].and_then(|k| bits(k + 1, self.own));
                        if let Some(sw) = far.and_then(|f| self.switches.get(base + f)) {
                            super::prefetch_all(sw);
                        }
                        let visits: [usize; LOOK] = std::array::from_fn(|j| at(ahead[j]));
                        self.switch_cycle(base + k, t, in_window, visits);
                        ahead.copy_within(1.., 0);
                        ahead[LOOK - 1] = far;
                    } else {
                        let s = base + k;
                        self.switch_cycle(s, t, in_window, std::array::from_fn(|j| s + 1 + j));
                        next = bits(k + 1, self.own);
                    }
                }
            }
        }
    }

    /// Puts an event on the wheel of the lane that owns its target, or hands it over.
    #[inline(always)]
    pub fn push(&mut self, at: Cycle, ev: Event) {
        let g = ev.target.idx();
        if g >= self.own.ports.0 && g < self.own.ports.1 {
            self.own.wheel.push(at, ev);
        } else {
            self.own.out.push((at, ev));
        }
    }

    /// Delivers the link events of cycle `t` to this lane's ports: credits to output ports,
    /// flits to input buffers.
    #[inline(never)]
    fn deliver(&mut self, t: Cycle) {
        let events = self.own.wheel.take(t);
        for (k, ev) in events.iter().enumerate() {
            // The VL queue (and, for a head, the packet) that the event `DELIVER_AHEAD`
            // places on reaches: their lines arrive while the events between are applied.
            if !self.prefetch_queues {
            } else if let Some(next) = events.get(k + DELIVER_AHEAD) {
                if self.look_further {
                    // Twice as far, the port name of a head or a credit, which the step
                    // below reads.
                    if let Some(far) = events.get(k + 2 * DELIVER_AHEAD) {
                        if far.flags & F_HEAD != 0 || !far.is_flit() {
                            super::prefetch(&self.port_names[far.target.idx()]);
                        }
                    }
                }
                if next.is_flit() {
                    let i = next.target.idx() * self.vls + next.vl.idx();
                    if let Some(q) = self.inputs.get(i) {
                        super::prefetch(q);
                    }
                    if next.flags & F_HEAD != 0 {
                        self.packets.prefetch(next.pkt);
                        if self.look_further {
                            // The head's switch and port facts, read when it is routed.
                            let g = next.target.idx();
                            let (s, _) = self.port_names[g];
                            if let Some(sw) = self.switches.get(s as usize) {
                                super::prefetch(sw);
                            }
                            self.sl2vl.prefetch(s);
                            super::prefetch(&self.ports[g]);
                            // Its input's crossbar record, which it marks waiting.
                            if let Some(x) = self.xbar.get(g) {
                                super::prefetch(x);
                            }
                        }
                    }
                } else if self.look_further {
                    // A credit: the count it returns to, and its port's switch (whose state
                    // it may mark to allocate again).
                    self.credits.prefetch(next.target.idx(), next.vl);
                    let (s, _) = self.port_names[next.target.idx()];
                    if let Some(sw) = self.switches.get(s as usize) {
                        super::prefetch(sw);
                    }
                }
            }
            let g = ev.target.idx();
            if !ev.is_flit() {
                let (s, p) = self.port_names[g];
                let sw = &mut self.switches[s as usize];
                if ev.flags & F_WAKE != 0 {
                    // A sleeping switch's connection steps again.
                    if sw.wake_event == t as u32 {
                        sw.wake_event = super::switch::AWAKE;
                    }
                    set_bit(
                        &mut self.own.sw_active,
                        s as usize - self.own.switches.0,
                        true,
                    );
                    continue;
                }
                if ev.flags & F_TRAIN != 0 {
                    // One credit per cycle from now on: the account counts them as it is
                    // read, and a blocked head wakes its switch when its room is back.
                    self.credits.start_train(g, ev.vl, ev.n as u32, t);
                    self.own.credits_until = self.own.credits_until.max(t + ev.n as u64 - 1);
                } else {
                    self.credits.release(g, ev.vl, ev.n as u32);
                }
                sw.dirty |= sw.credit_blocked;
                if sw.dirty {
                    set_bit(
                        &mut self.own.sw_active,
                        s as usize - self.own.switches.0,
                        true,
                    );
                }
                // With output buffers, the port may send from them again.
                if let Some(stalled) = self.obuf.stalled.get_mut(g) {
                    *stalled = false;
                    if self.obuf.waiting[g] != 0 {
                        sw.out_ready |= super::switch::port_bit(p as usize);
                    }
                }
            } else {
                self.arrive(ev, t);
            }
        }
        self.own.wheel.restore(t, events);
    }

    /// Flits arrive in a switch input buffer; a head flit is routed at once.
    #[inline(always)]
    fn arrive(&mut self, ev: &Event, t: Cycle) {
        if ev.flags & F_HEAD != 0 {
            return self.arrive_head(ev, t);
        }
        let g = ev.target.idx();
        let i = g * self.vls + ev.vl.idx();
        let q = &mut self.inputs[i];
        q.receive(ev.pkt, ev.n);
        *q.occ_mut() += ev.n as u32;
        self.check_room(g, ev.vl);
        self.own.buffered += ev.n as i64;
    }

    /// The buffer of input port `g`, VL `vl` holds no more than its organisation allows
    /// (debug builds).
    #[inline(always)]
    fn check_room(&self, g: usize, vl: Vl) {
        debug_assert!(
            self.inputs[g * self.vls + vl.idx()].occ()
                <= self.in_orgs[self.ports[g].in_org as usize].max,
            "buffer overflow"
        );
    }

    /// A packet's head flits arrive: the packet is routed and joins its VL queue.
    #[inline(never)]
    fn arrive_head(&mut self, ev: &Event, t: Cycle) {
        let g = ev.target.idx();
        let (s, in_port) = self.port_names[g];
        let i = g * self.vls + ev.vl.idx();
        let dl = self.deadline_arrive(ev.pkt, g, t);
        let p = self.packets.get(ev.pkt);
        let sw = &mut self.switches[s as usize];
        let (out_port, out_vl, exit_vl) =
            self.organisation
                .route(self.routes, self.sl2vl, s, in_port, &p, ev.vl);
        // A switch hop is counted when the head enters an input that counts one (it will
        // cross the crossbar from there: nothing is dropped), while the packet's record is
        // in cache for routing, not at the grant, often long after.
        let hop = self.ports[g].hop();
        if hop || exit_vl.is_some() {
            self.packets.update(ev.pkt, |p| {
                p.hops += hop as u16;
                if let Some(x) = exit_vl {
                    p.exit_vl = x;
                }
            });
        }
        if self.trace_routes {
            self.own.route_log.push(RouteHop {
                src: p.src,
                dst: p.dst,
                seq: p.seq,
                flow: (p.flow != NO_FLOW).then_some(p.flow),
                path: p.path,
                switch: s,
                in_port,
                out_port,
                vl: out_vl.0,
            });
        }
        // A packet entering an empty VL is its head at once; otherwise it becomes the head
        // (and starts waiting) when the packet before it leaves.
        // A train's body flits come without events: the queue counts them now, and
        // `BufPkt::received` says which have arrived by when.
        let (recv, train) = if ev.flags & F_TRAIN != 0 {
            (p.len, RX_TRAIN)
        } else {
            (ev.n, 0)
        };
        let head = self.inputs[i].push(BufPkt {
            pkt: ev.pkt,
            len: p.len,
            recv,
            sent: 0,
            out_port,
            out_vl,
            busy: false,
            class: p.class,
            train,
            arrived: t,
            ready: NEVER,
            dl,
        });
        if head {
            let r = t + self.ports[g].delay as u64;
            self.inputs[i].head_mut().unwrap().ready = r;
            sw.wake_at = sw.wake_at.min(r);
            // A busy input's heads are not looked at, and a head that takes the place of
            // another (a take-over queue) takes its ready cycle out of `wake_at`: either way
            // the next allocation may find what the last one did not.
            let x = &self.xbar[g];
            if sw.settled && (x.in_conns >= sw.max_conns || x.waiting & ev.vl.bit() != 0) {
                sw.settled = false;
            }
            self.xbar[g].waiting |= ev.vl.bit();
            sw.input_waits(in_port as usize);
            set_bit(
                &mut self.own.sw_active,
                s as usize - self.own.switches.0,
                true,
            );
        }
        *self.inputs[i].occ_mut() += recv as u32;
        self.check_room(g, ev.vl);
        self.own.buffered += recv as i64;
    }

    /// One cycle of switch `s`; `ahead` are the next [`LOOK`] switches the lane visits (those
    /// it may ask for lines of).
    #[inline(always)]
    fn switch_cycle(&mut self, s: usize, t: Cycle, in_window: bool, ahead: [usize; LOOK]) {
        // On large fabrics, ask for the lines the next switches will read: they arrive
        // while this switch works.
        if self.prefetch_queues {
            self.prefetch_ahead(t, ahead);
        }
        let sw = &mut self.switches[s];
        if sw.slept != super::switch::AWAKE {
            // Its streaming connections count down the cycles it was not visited in (at
            // most as many as the first of them had left: it woke no later).
            let skipped = (t as u32).wrapping_sub(sw.slept) - 1;
            for k in 0..sw.conns.len() {
                sw.conns[k].left -= skipped as u16;
            }
            sw.slept = super::switch::AWAKE;
            // Awake (an event woke it, or a visiting order that visits every switch).
            set_bit(&mut self.own.sw_active, s - self.own.switches.0, true);
        }
        let allocate = sw.dirty || sw.wake_at <= t;
        if !allocate && sw.conns.is_empty() && sw.obuffered == 0 {
            // Nothing to do (most switches at low load): one look at the switch, and none
            // from the next cycle on until an event wakes it.
            if sw.wake_at == NEVER {
                set_bit(&mut self.own.sw_active, s - self.own.switches.0, false);
            }
            return;
        }
        if allocate {
            if sw.in_waiting == 0 && sw.nports <= 64 {
                // No input has a waiting head (the set is exact up to 64 ports): what an
                // allocation would conclude, without its scan.
                sw.wake_at = NEVER;
                sw.credit_blocked = false;
                sw.dirty = false;
            } else if sw.settled && sw.wake_at > t {
                // No head has become ready since the last allocation, which left none
                // waiting (a connection closing or a credit arriving made the switch dirty):
                // an allocation would find no request and leave `wake_at` as it is.
                sw.dirty = false;
            } else {
                self.allocate(s, t);
            }
        }
        if self.switches[s].conns.is_empty() {
        } else if self.trains {
            self.advance::<true>(s, t, in_window);
        } else {
            self.advance::<false>(s, t, in_window);
        }
        if self.switches[s].obuffered > 0 {
            self.drain_outputs(s, t, in_window);
        }
        if self.trains {
            self.sleep(s, t);
        }
    }

    /// A switch whose connections all stream (`queue::STREAM`: they only count down) and
    /// that has nothing else to do — no allocation due or pending, no output buffer —
    /// leaves the active set until the first of them steps again, with a wake-up event on
    /// the lane's wheel for that cycle; its countdowns catch up when it is next visited
    /// (whatever woke it). At load a switch with a streaming packet has nothing else to do
    /// in most cycles of it: visiting it cost a look at its state and the look-ahead for
    /// the switches after it. Only where the wheel reaches that far (`WAKE_HORIZON`).
    #[inline(always)]
    fn sleep(&mut self, s: usize, t: Cycle) {
        let sw = &mut self.switches[s];
        if sw.dirty || sw.wake_at != NEVER || sw.obuffered > 0 || sw.conns.is_empty() {
            return;
        }
        let mut first = u16::MAX;
        for k in 0..sw.conns.len() {
            first = first.min(sw.conns[k].left);
        }
        // (A connection that steps in the next cycle keeps the switch awake.)
        if first == 0 || first as u64 + 1 > self.own.wheel.mask {
            return;
        }
        let at = t + first as u64 + 1;
        sw.slept = t as u32;
        if sw.wake_event != at as u32 {
            sw.wake_event = at as u32;
            let base = PortIdx(sw.base);
            self.own.wheel.push(at, Event::wake(base));
        }
        set_bit(&mut self.own.sw_active, s - self.own.switches.0, false);
    }

    /// On large fabrics, while a switch works, asks for the lines the switches the lane
    /// visits next (`ahead`: the next [`LOOK`] of its active set) will read:
    /// [`PREFETCH_AHEAD`] places on ([`FURTHER_QUEUE_AHEAD`] with `look_further`), the input
    /// queues of its connections and (`look_ahead`) of its waiting heads, and its
    /// connections' output ports (and output-buffer queues, with output buffers);
    /// [`HEADS_AHEAD`] place on, whose queues were asked for in the same way switches
    /// earlier, the credit counts and output schedulers its waiting heads will check; and
    /// (`look_further`) [`XBAR_AHEAD`] places on, the lines of its per-port crossbar state
    /// that the look at its queues and its own allocation read. (The switch state itself is
    /// asked for one place beyond `ahead`, by `run_switches`.)
    #[inline(always)]
    fn prefetch_ahead(&self, t: Cycle, ahead: [usize; LOOK]) {
        let vls = self.vls;
        let queues_at = if self.look_further {
            FURTHER_QUEUE_AHEAD
        } else {
            PREFETCH_AHEAD
        };
        if let Some(next) = self.switches.get(ahead[queues_at - 1]) {
            self.prefetch_conn_inputs(next, t, 0, PREFETCH_CONNS);
            if self.look_further {
                // The connections beyond those in line (many on high-radix switches), which
                // the look one ahead reads.
                next.conns.prefetch_more();
            }
            if self.look_ahead {
                let base = next.base as usize;
                for ip in super::switch::PortSet::new(next.in_waiting, 0) {
                    let w = self.xbar[base + ip].waiting;
                    for v in super::allocator::round_robin_bits(w, 0) {
                        super::prefetch(&self.inputs[(base + ip) * vls + v as usize]);
                    }
                }
            }
        }
        if !self.look_ahead {
            return;
        }
        // On the largest fabrics: the lines of its ports' crossbar state that the look at its
        // queues and its own allocation read (a switch's ports are contiguous).
        if !self.look_further {
        } else if let Some(next) = self.switches.get(ahead[XBAR_AHEAD - 1]) {
            let (base, np) = (next.base as usize, next.nports as usize);
            prefetch_lines(&self.xbar, base, np);
        }
        if let Some(next) = self.switches.get(ahead[HEADS_AHEAD - 1]) {
            if self.look_further {
                self.prefetch_conn_inputs(next, t, PREFETCH_CONNS, usize::MAX);
            }
            let base = next.base as usize;
            for ip in super::switch::PortSet::new(next.in_waiting, 0) {
                let w = self.xbar[base + ip].waiting;
                for v in super::allocator::round_robin_bits(w, 0) {
                    if let Some(h) = self.inputs[(base + ip) * vls + v as usize].head() {
                        let out = base + h.out_port as usize;
                        self.credits.prefetch(out, h.out_vl);
                        if let Some(sched) = self.sched.get(out) {
                            super::prefetch(sched);
                        }
                        // The port's count of flits sent, which its transmission adds to.
                        if let Some(n) = self.vl_flits.get(out * vls + h.out_vl.idx()) {
                            super::prefetch(n);
                        }
                        // The facts of both ports, which its first step reads.
                        super::prefetch(&self.ports[out]);
                        super::prefetch(&self.ports[base + ip]);
                    }
                }
            }
        }
    }

    /// For NIC `e` of this lane, if its visit will start a packet (no current packet, not
    /// streaming), asks for what [`Self::start_packet`] reads beyond the NIC's record (asked
    /// for [`NIC_AHEAD`] NICs before): first (`fronts` false) its buffer's queue headers,
    /// its port's scheduler and credit counts; then (`fronts`, one NIC before) the first
    /// packet of each of its queues, whose address the headers give.
    #[inline(always)]
    fn prefetch_nic_start(&self, e: usize, fronts: bool) {
        let Some(nic) = self.nic.nics.get(e) else {
            return;
        };
        if nic.cur != PacketId::NONE || nic.streaming() {
            return;
        }
        if fronts {
            for q in &nic.queues {
                if let Some(f) = q.front() {
                    super::prefetch(f);
                }
            }
            return;
        }
        let q = nic.queues.as_slice();
        super::prefetch_ptr(q.as_ptr());
        super::prefetch_ptr(q.as_ptr().wrapping_add(q.len().saturating_sub(1)));
        let g = self.nic_base as usize + e;
        if let Some(sched) = self.nic.sched.get(g) {
            super::prefetch(sched);
        }
        self.nic.credits.prefetch(g, Vl(0));
    }

    /// Asks for the lines connections `from .. to` of switch `sw` (those it has) will read
    /// when they step: the input queue and the output's count of flits sent, and
    /// (`look_ahead`) the facts of both ports, or (with output buffers, where there is no
    /// `look_ahead`) the output-buffer queue a step into one writes and the output's facts.
    /// A streaming connection (`left > 0`) only counts down in this cycle: it reads none of
    /// them.
    #[inline(always)]
    fn prefetch_conn_inputs(&self, sw: &SwitchState, t: Cycle, from: usize, to: usize) {
        // A sleeping switch's countdowns are behind by the cycles it slept (caught up at
        // its visit): the connections that step are those they have run out by now. (Only
        // a request for lines: a switch that went to sleep in this very cycle, which a
        // shuffled visiting order can put here, or one asleep for long, asks for nothing
        // wrong.)
        let skipped = if sw.slept == super::switch::AWAKE {
            0
        } else {
            (t as u32)
                .wrapping_sub(sw.slept)
                .saturating_sub(1)
                .min(u16::MAX as u32) as u16
        };
        for k in from..sw.conns.len().min(to) {
            let c = sw.conns[k];
            if c.left > skipped {
                continue;
            }
            super::prefetch(&self.inputs[c.input.idx() * self.vls + c.in_vl.idx()]);
            if let Some(n) = self
                .vl_flits
                .get(c.output.idx() * self.vls + c.out_vl.idx())
            {
                super::prefetch(n);
            }
            if self.look_ahead {
                super::prefetch(&self.ports[c.output.idx()]);
                super::prefetch(&self.ports[c.input.idx()]);
            } else if let Some(q) = self
                .obuf
                .queues
                .get(c.output.idx() * self.vls + c.out_vl.idx())
            {
                // With output buffers: the queue a step into one writes, and the output's
                // facts that say whether it does.
                super::prefetch(q);
                super::prefetch(&self.ports[c.output.idx()]);
            }
        }
    }

    /// Whether a packet with `remaining` flits may start on output `g`, VL `vl`: room for all
    /// of it under virtual cut-through; one credit and the VL not held by another packet
    /// under wormhole.
    #[inline]
    pub(crate) fn can_start(&self, g: usize, vl: Vl, remaining: u32) -> bool {
        can_start(
            self.switching,
            &self.credits,
            &self.vl_owner,
            self.vls,
            g,
            vl,
            remaining,
        )
    }

    /// Sends the flit batch `ev` over the link of output port `g` (a switch's, or one of the
    /// lane's NICs') and counts it (a switch port's flits per VL for the `ports` table; a
    /// NIC's link is in no table).
    #[inline(always)]
    pub(crate) fn transmit(&mut self, t: Cycle, g: PortIdx, mut ev: Event, in_window: bool) {
        if ev.flags & super::link::F_HEAD != 0 && self.dl.is_some() {
            self.deadline_depart(ev.pkt, g.idx(), t);
        }
        let out = self.ports[g.idx()];
        ev.target = out.peer;
        if ev.flags & F_SILENT == 0 {
            self.push(t + out.latency as u64, ev);
        }
        if in_window && self.port_stats && g.0 < self.nic_base {
            self.vl_flits[g.idx() * self.vls + ev.vl.idx()] += ev.n as u64;
        }
        if self.port_series {
            self.own.port_log.push((g.0, t, ev.n as u32));
        }
        if out.to_switch() {
            self.own.flit_hops += ev.n as u64;
        }
    }

    /// Counts, when a streaming packet's head leaves in cycle `t` over connection `c`, its
    /// `k` flits between head and tail, which leave in cycles `t + 1 ..= t + k` without a
    /// step each (see `queue::STREAM`): flit-hops, the port's flits of the window, progress.
    #[inline(never)]
    pub(crate) fn count_stream(&mut self, t: Cycle, c: Conn, k: u32) {
        let out = self.ports[c.output.idx()];
        if out.to_switch() {
            self.own.flit_hops += k as u64;
        }
        if self.port_stats {
            let (w0, w1) = self.window;
            let inside = (t + 1 + k as u64).min(w1).saturating_sub((t + 1).max(w0));
            self.vl_flits[c.output.idx() * self.vls + c.out_vl.idx()] += inside;
        }
        self.own.stream_until = self.own.stream_until.max(t + k as u64);
    }

    /// Returns `n` credits of VL `vl` from input port `g` to the sender at its other end.
    #[inline(always)]
    pub(crate) fn return_credits(&mut self, t: Cycle, g: PortIdx, n: u32, vl: Vl) {
        let inp = self.ports[g.idx()];
        self.push(t + inp.latency as u64, Event::credits(inp.peer, n, vl));
    }
}

impl Network {
    /// The lane that owns port `g`'s events (`None`: a NIC's port).
    #[inline(always)]
    pub(crate) fn lane_of_port(&self, g: PortIdx) -> Option<usize> {
        if g.0 >= self.nic_base {
            return None;
        }
        Some(
            self.lanes
                .iter()
                .position(|l| (g.idx()) < l.ports.1)
                .expect("a switch port belongs to a lane"),
        )
    }

    /// Puts an event on the wheel of its target: a lane's, or the NICs'.
    #[inline(always)]
    pub(crate) fn push_event(&mut self, at: Cycle, ev: Event) {
        match self.lane_of_port(ev.target) {
            Some(k) => self.lanes[k].wheel.push(at, ev),
            None => self.wheel.push(at, ev),
        }
    }

    /// Events on all links (every wheel).
    pub(crate) fn events_pending(&self) -> u64 {
        self.wheel.pending + self.lanes.iter().map(|l| l.wheel.pending).sum::<u64>()
    }

    /// The switch phase of cycle `t`: every lane (the first on this thread, the others on
    /// `crew`'s), then what the lanes handed over.
    pub(crate) fn switch_phase(&mut self, t: Cycle, in_window: bool, crew: Option<&Crew>) {
        // The lanes' cuts: switch ports, switches, NICs, and the switch ports followed by
        // the NIC ports (kept from phase to phase, so no allocation).
        let mut cuts = std::mem::take(&mut self.phase_cuts);
        cuts.fill(&self.lanes, self.nic_base as usize);
        let n = self.lanes.len();
        let vls = self.vls;
        let shuffle = self.shuffle.take();
        {
            // Views over the switch ports of each lane, then over its NIC ports.
            let (mut credits, nic_credits) = self.credits.split(&cuts.all, t).split_at(n);
            let (mut vl_owner, nic_vl_owner) =
                spans(&mut self.vl_owner, &cuts.all, vls).split_at(n);
            let (mut sched, nic_sched) = spans(&mut self.sched, &cuts.all, 1).split_at(n);
            let mut vl_flits = spans(&mut self.counters.vl_flits, &cuts.all, vls)
                .split_at(n)
                .0;
            let mut nic_parts = std::iter::zip(
                std::iter::zip(
                    spans(&mut self.nics, &cuts.nics, 1),
                    self.nic_buf.split(&cuts.nics, t),
                ),
                std::iter::zip(std::iter::zip(nic_credits, nic_vl_owner), nic_sched),
            )
            .map(|((nics, buf), ((credits, vl_owner), sched))| NicPart {
                nics,
                buf,
                credits,
                vl_owner,
                sched,
            });
            let ports = &cuts.ports;
            let mut xbar = spans(&mut self.xbar, ports, 1);
            let mut inputs = spans(&mut self.inputs, ports, vls);
            let mut oq = spans(&mut self.obuf.queues, ports, vls);
            let mut oa = self.obuf.account.split(ports, t);
            let mut ow = spans(&mut self.obuf.waiting, ports, 1);
            let mut oc = spans(&mut self.obuf.cur, ports, 1);
            let mut os = spans(&mut self.obuf.stalled, ports, 1);
            let mut ox = spans(&mut self.obuf.xsched, ports, 1);
            let mut switches = spans(&mut self.switches, &cuts.switches, 1);
            let packets = self.packets.cells();
            let mut dl = self.dl.as_deref_mut();
            let port_series = self.counters.port_ts_ports != 0;
            let trace_routes = self.counters.route_trace.is_some();
            let mut lanes = self.lanes.iter_mut().map(|own| Lane {
                vls,
                switching: self.switching,
                nic_base: self.nic_base,
                ports: &self.ports,
                port_names: &self.port_names,
                organisation: &self.organisation,
                routes: &self.routes,
                sl2vl: &self.sl2vl,
                in_orgs: &self.in_orgs,
                prio_inputs: self.prio_inputs,
                mgmt_vl: self.mgmt_vl,
                fifo_arbiter: self.fifo_arbiter,
                per_vl_crossbar: self.per_vl_crossbar,
                prefetch_queues: self.prefetch_queues,
                look_ahead: self.look_ahead,
                look_further: self.look_further,
                trains: self.trains,
                credit_trains: self.credit_trains,
                stream: self.credit_trains && !port_series,
                nic_streams: self.trains && !port_series,
                eject_trains: self.eject_trains,
                window: (
                    self.cfg.run.warmup,
                    self.cfg.run.warmup + self.cfg.run.measure,
                ),
                mtu_room: self.mtu_room,
                port_series,
                trace_routes,
                credits: credits.next().unwrap(),
                vl_owner: vl_owner.next().unwrap(),
                sched: sched.next().unwrap(),
                inputs: inputs.next().unwrap(),
                xbar: xbar.next().unwrap(),
                obuf: ObufView {
                    queues: oq.next().unwrap(),
                    account: oa.next().unwrap(),
                    waiting: ow.next().unwrap(),
                    cur: oc.next().unwrap(),
                    stalled: os.next().unwrap(),
                    xsched: ox.next().unwrap(),
                },
                switches: switches.next().unwrap(),
                vl_flits: vl_flits.next().unwrap(),
                port_stats: self.cfg.run.per_port_stats,
                packets,
                nic: nic_parts.next().unwrap(),
                dl: dl.take(),
                own,
            });
            if n == 1 {
                let mut lane = lanes.next().expect("one lane");
                lane.run(t, in_window, shuffle.as_ref());
            } else {
                let mut lanes: Vec<Lane> = lanes.collect();
                match (lanes.as_mut_slice(), crew) {
                    ([first, rest @ ..], Some(crew)) => crew.phase(first, rest, t, in_window),
                    // Several lanes but no threads (not reached from `run`): one after the
                    // other.
                    (lanes, _) => {
                        for lane in lanes {
                            lane.run(t, in_window, None);
                        }
                    }
                }
            }
        }
        self.phase_cuts = cuts;
        self.shuffle = shuffle;
        // What the lanes handed over, lane by lane.
        for k in 0..self.lanes.len() {
            let own = &mut self.lanes[k];
            let out = std::mem::take(&mut own.out);
            self.counters.flit_hops += std::mem::take(&mut own.flit_hops);
            let b = std::mem::take(&mut own.buffered);
            self.buffered_total = (self.buffered_total as i64 + b) as u64;
            self.last_progress = self.last_progress.max(std::mem::take(&mut own.progress));
            self.credits_until = self.credits_until.max(own.credits_until);
            self.streams_until = self.streams_until.max(own.stream_until);
            let log = std::mem::take(&mut own.port_log);
            if let Some(rt) = &mut self.counters.route_trace {
                rt.append(&mut own.route_log);
            }
            for &(g, at, n) in &log {
                self.counters.add_to_port_series(g as usize, at, n as u64);
            }
            // A flit for an endpoint: its packet's record, which the ejection on this thread
            // reads (at the earliest in the next cycle; the lane that routed it last may hold
            // the line in another core's cache).
            let ask = self.prefetch_packets();
            for &(at, ev) in &out {
                if ask && ev.is_flit() && ev.target.0 >= self.nic_base {
                    self.packets.prefetch(ev.pkt);
                }
                self.push_event(at, ev);
            }
            let ready = std::mem::take(&mut self.lanes[k].ready);
            for &e in &ready {
                self.update_pending(e as usize);
            }
            let sent = std::mem::take(&mut self.lanes[k].sent);
            for &(m, flits) in &sent {
                if let Some(tr) = self.messages.sent(m, flits) {
                    if let Some(r) = &mut self.replay {
                        r.on_sent(tr, t, &mut self.replay_pending);
                    }
                }
            }
            // Keep the allocations.
            let own = &mut self.lanes[k];
            own.out = out;
            own.out.clear();
            own.sent = sent;
            own.sent.clear();
            own.ready = ready;
            own.ready.clear();
            own.port_log = log;
            own.port_log.clear();
        }
        if self.lanes.len() > 1 {
            self.balance_lanes();
        }
    }

    /// Every [`BALANCE_EVERY`] switch phases (the first times sooner: after [`BALANCE_FIRST`]
    /// phases, then twice as many each time), moves the lanes' boundaries so that the lanes
    /// take about equally long: from the time each lane's runs took, assumed spread over its
    /// switches by their weights (`lane_weights`: a 16-ary 4-tree's leaves carry all its
    /// NICs), the cuts that would split that time evenly, moved half way there.
    /// Results do not depend on the cuts (see [`Network::recut_lanes`]); only speed does.
    fn balance_lanes(&mut self) {
        self.balance_phases += 1;
        let forced = FORCED_RECUT.load(std::sync::atomic::Ordering::Relaxed);
        if forced > 0 {
            if self.balance_phases.is_multiple_of(forced) {
                self.recut_lanes(&pseudo_random_cuts(
                    self.switches.len(),
                    self.lanes.len(),
                    self.balance_phases,
                ));
            }
            return;
        }
        if self.balance_phases < self.balance_every {
            return;
        }
        self.balance_phases = 0;
        self.balance_every = (self.balance_every * 2).min(BALANCE_EVERY);
        let n = self.lanes.len();
        let nsw = self.switches.len();
        let busy: Vec<f64> = self
            .lanes
            .iter_mut()
            .map(|l| std::mem::take(&mut l.busy_ns) as f64)
            .collect();
        let total: f64 = busy.iter().sum();
        let most = busy.iter().copied().fold(0.0, f64::max);
        // Within 3 % of an even split: leave the lanes alone.
        if total <= 0.0 || most * n as f64 <= 1.03 * total {
            return;
        }
        let target = total / n as f64;
        let mut cuts = vec![0usize];
        let mut acc = 0.0;
        for (k, l) in self.lanes.iter().enumerate() {
            // The lane's time spread over its switches by their weights.
            let weights = &self.lane_weight[l.switches.0..l.switches.1];
            let per_weight = busy[k] / weights.iter().sum::<f64>().max(f64::MIN_POSITIVE);
            for (s, w) in (l.switches.0..l.switches.1).zip(weights) {
                acc += per_weight * w;
                let j = cuts.len();
                if j < n && acc >= target * j as f64 && nsw - (s + 1) >= n - j {
                    cuts.push(s + 1);
                }
            }
        }
        while cuts.len() < n {
            // Rounding left a lane without a cut: one switch each for those still to come.
            let j = cuts.len();
            cuts.push(nsw - (n - j));
        }
        cuts.push(nsw);
        // Half way from the current cuts (both strictly increasing, so the mean is too).
        let moved: Vec<usize> = cuts
            .iter()
            .zip(std::iter::once(0).chain(self.lanes.iter().map(|l| l.switches.1)))
            .map(|(&new, old)| (new + old) / 2)
            .collect();
        let unchanged = moved
            .iter()
            .skip(1)
            .zip(&self.lanes)
            .all(|(&c, l)| c == l.switches.1);
        if !unchanged {
            self.recut_lanes(&moved);
        }
    }

    /// Moves the lanes' boundaries to the switches `cuts` (`0 = cuts[0] < cuts[1] < … =
    /// switches`), handing the link events still in flight to the lane that now owns their
    /// target port. A port's events keep their order; events of different ports in one cycle
    /// touch different state, so their order does not matter (the lanes already receive them
    /// in an order that depends on the cuts), and the results are those of any other cuts.
    pub(crate) fn recut_lanes(&mut self, cuts: &[usize]) {
        let mask = self.lanes[0].wheel.mask;
        let old = std::mem::take(&mut self.lanes);
        self.lanes = self.lanes_at(cuts, mask as u32, true);
        for mut lane in old {
            for (slot, events) in lane.wheel.slots.iter_mut().enumerate() {
                for ev in events.drain(..) {
                    let k = self
                        .lane_of_port(ev.target)
                        .expect("a lane's events reach switch ports");
                    let wheel = &mut self.lanes[k].wheel;
                    wheel.slots[slot].push(ev);
                    wheel.pending += 1;
                }
            }
        }
        debug_assert!(self.lanes.iter().all(|l| l.wheel.mask == mask));
    }
}

/// Switch phases between two balancings of the lanes.
const BALANCE_EVERY: u32 = 1024;

/// Switch phases before the first balancing. The first cuts split the switches' ports evenly,
/// which leaves the lanes with the NICs (a fat tree's leaves) the heavier ones; a run of a few
/// thousand cycles of a large fabric used to keep them nearly to its end.
pub(super) const BALANCE_FIRST: u32 = 32;
/// A NIC's weight in the lanes' cuts, in switch ports (see `Network::lane_weights`).
const NIC_WEIGHT: f64 = 4.0;

/// Test hook: every this many phases, cut the lanes at pseudo-random switches instead of
/// balancing them (0: off).
static FORCED_RECUT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// For tests: every `phases` switch phases, runs with several lanes move the lanes'
/// boundaries to pseudo-random switches (0: balance them by time, as normally). Results must
/// not change.
#[doc(hidden)]
pub fn force_recut_every(phases: u32) {
    FORCED_RECUT.store(phases, std::sync::atomic::Ordering::Relaxed);
}

/// Asks for the cache lines of `span[base .. base + n]` (at most eight).
#[inline(always)]
fn prefetch_lines<T>(span: &Span<'_, T>, base: usize, n: usize) {
    let per_line = (64 / std::mem::size_of::<T>().max(1)).max(1);
    for k in (0..n.min(8 * per_line)).step_by(per_line) {
        if let Some(x) = span.get(base + k) {
            super::prefetch(x);
        }
    }
}

/// Test hook: build every network as if its input queues outgrew the cache, so that the
/// switch phase prefetches and looks ahead (`Network::look_ahead`, `look_further`) on small
/// fabrics too.
pub(crate) static FORCED_LOOK_AHEAD: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// For tests: networks built from now on prefetch and look ahead whatever their size (only
/// speed may depend on it; results must not change).
#[doc(hidden)]
pub fn force_look_ahead(on: bool) {
    FORCED_LOOK_AHEAD.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// `lanes` + 1 strictly increasing cuts from 0 to `switches`, drawn from `seed`.
fn pseudo_random_cuts(switches: usize, lanes: usize, seed: u32) -> Vec<usize> {
    let mut x = (seed as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut cuts = vec![0usize];
    for j in 1..lanes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let lo = cuts[j - 1] + 1;
        let hi = switches - (lanes - j); // leave a switch for each lane still to come
        cuts.push(lo + (x % (hi - lo + 1) as u64) as usize);
    }
    cuts.push(switches);
    cuts
}

impl Network {
    /// Splits the switch phase into `n` lanes of contiguous switches of about equal weight
    /// each — ports, and the NICs attached (`lane_weights`) — each run on its own thread
    /// when `n > 1`. Call before [`Network::run`]; results do not depend on `n`.
    pub(crate) fn set_lanes(&mut self, n: usize) -> Result<(), String> {
        let nsw = self.switches.len();
        let n = n.clamp(1, nsw.max(1));
        // Lanes are port ranges: a switch's ports must follow the previous switch's.
        let contiguous = self
            .switches
            .windows(2)
            .all(|w| w[1].base == w[0].base + w[0].nports as u32);
        let n = if contiguous { n } else { 1 };
        self.lane_weight = if n > 1 {
            self.lane_weights()
        } else {
            Vec::new()
        };
        let total: f64 = self.lane_weight.iter().sum();
        let mut cuts = vec![0usize];
        let mut acc = 0.0;
        for (s, w) in self.lane_weight.iter().enumerate() {
            acc += w;
            let k = cuts.len();
            // Close lane k − 1 after the switch that reaches its share of the weight, leaving
            // at least one switch for each lane still to come.
            if k < n && acc * n as f64 >= total * k as f64 && nsw - (s + 1) >= n - k {
                cuts.push(s + 1);
            }
        }
        while cuts.len() < n {
            let k = cuts.len();
            cuts.push(nsw - (n - k));
        }
        cuts.push(nsw);
        let latency = self.ports.iter().map(|p| p.latency).max().unwrap_or(1);
        // With trains the wheels also carry sleeping switches' wake-up events (`Lane::sleep`).
        // (Not longer otherwise: each slot keeps its own vector of events, and a saturated
        // Omni-Path torus's events outgrew the cache with four times as many slots.)
        let latency = if self.trains {
            latency.max(WAKE_HORIZON)
        } else {
            latency
        };
        self.lanes = self.lanes_at(&cuts, latency, cuts.len() > 2);
        self.balance_phases = 0;
        self.balance_every = BALANCE_FIRST;
        Ok(())
    }

    /// Per switch, the share of a lane's time the cuts assume it takes: its ports, and
    /// [`NIC_WEIGHT`] for each NIC attached to it (whose cycles run in the switch's lane).
    fn lane_weights(&self) -> Vec<f64> {
        let mut w: Vec<f64> = self.switches.iter().map(|sw| sw.nports as f64).collect();
        for e in 0..self.n_endpoints {
            let peer = self.ports[self.nic_base as usize + e].peer;
            if let Some(&(s, _)) = self.port_names.get(peer.idx()) {
                if let Some(x) = w.get_mut(s as usize) {
                    *x += NIC_WEIGHT;
                }
            }
        }
        w
    }

    /// Lanes of the switches `cuts[k] .. cuts[k + 1]`, their ports, and the NICs attached to
    /// them: NIC `e` goes with the lanes that hold the switches before its own when it
    /// comes after the NICs of those switches (where endpoints are numbered in the order of
    /// their switches, as in every generated fabric, each lane gets its switches' NICs; the
    /// cuts are valid in any case, and only speed depends on them).
    fn lanes_at(&self, cuts: &[usize], max_latency: u32, timed: bool) -> Vec<LaneOwn> {
        let port = |s: usize| {
            self.switches
                .get(s)
                .map_or(self.nic_base as usize, |sw| sw.base as usize)
        };
        let nic_switch: Vec<usize> = (0..self.n_endpoints)
            .map(|e| {
                let peer = self.ports[self.nic_base as usize + e].peer;
                self.port_names
                    .get(peer.idx())
                    .map_or(0, |&(s, _)| s as usize)
            })
            .collect();
        let nic = |s: usize| nic_switch.iter().filter(|&&sw| sw < s).count();
        let mut nic_cuts: Vec<usize> = cuts.iter().map(|&s| nic(s)).collect();
        if let Some(last) = nic_cuts.last_mut() {
            *last = self.n_endpoints;
        }
        if let Some(first) = nic_cuts.first_mut() {
            *first = 0;
        }
        cuts.windows(2)
            .zip(nic_cuts.windows(2))
            .map(|(w, e)| {
                let mut own = LaneOwn::new(
                    (w[0], w[1]),
                    (port(w[0]), port(w[1])),
                    (e[0], e[1]),
                    max_latency,
                    self.unit.iter().copied().max().unwrap_or(1) as usize,
                );
                own.timed = timed;
                for n in e[0]..e[1] {
                    if self.nics[n].used > 0 {
                        set_bit(&mut own.nic_active, n - e[0], true);
                    }
                }
                own
            })
            .collect()
    }

    /// The number of lanes (threads) the switch phase runs on.
    pub fn threads(&self) -> usize {
        self.lanes.len()
    }
}

/// Fabrics of at least this many simulated switch ports run on every core by default (below,
/// a cycle's work is too small for the threads to gain: on two cores a 16×16 torus, 1 280
/// ports, runs as fast on one thread; a 24×24, 2 880 ports, 1.25× faster on two; see
/// `docs/performance.md`).
pub const PARALLEL_FROM_PORTS: usize = 2048;

/// The most threads a run takes by default (0: no limit).
static THREAD_CAP: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Limits the threads a run takes when `run.threads` is not set, for this process: a sweep
/// that runs `jobs` experiments at once on `c` cores sets `c / jobs` (0 lifts the limit).
pub fn set_thread_cap(n: usize) {
    THREAD_CAP.store(n, std::sync::atomic::Ordering::Relaxed);
}

/// The limit [`set_thread_cap`] set (0: none).
pub fn thread_cap() -> usize {
    THREAD_CAP.load(std::sync::atomic::Ordering::Relaxed)
}

/// The threads a run of `ports` simulated switch ports (end-node ports not counted) takes when
/// `run.threads` is not set: every core (up to the cap) from [`PARALLEL_FROM_PORTS`] on, else 1.
pub fn default_threads(ports: usize) -> usize {
    if ports < PARALLEL_FROM_PORTS {
        return 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match thread_cap() {
        0 => cores,
        cap => cores.min(cap),
    }
}

/// The threads of lanes 1.. of a run and the gate they wait at between phases.
///
/// The thread of the run loop posts the lanes of a phase, runs lane 0, and waits until the
/// others report done; the lanes borrow the network only for that phase, and the loop does
/// not touch what they borrow before every thread has finished with it. Waiting threads
/// spin, then yield: a phase of a large fabric lasts tens of microseconds to milliseconds,
/// too short to put threads to sleep and wake them every cycle.
pub(crate) struct Crew {
    /// Phase number: a change starts a phase (or ends the run, with `stop`).
    epoch: AtomicU64,
    /// Lanes of the current phase done.
    done: AtomicUsize,
    /// Per thread, the lane of the current phase (a `*mut Lane`), the cycle and the window.
    jobs: Vec<AtomicPtr<()>>,
    t: AtomicU64,
    in_window: AtomicBool,
    stop: AtomicBool,
    /// A lane thread panicked (an engine bug): the loop panics too.
    panicked: AtomicBool,
}

/// Spins until `ready` holds, yielding the core after a while.
#[inline]
fn wait_until(ready: impl Fn() -> bool) {
    let mut spins = 0u32;
    while !ready() {
        if spins < 4096 {
            spins += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

impl Crew {
    /// A crew for `lanes` lanes (threads for lanes 1..).
    pub fn new(lanes: usize) -> Self {
        Crew {
            epoch: AtomicU64::new(0),
            done: AtomicUsize::new(0),
            jobs: (0..lanes)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            t: AtomicU64::new(0),
            in_window: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            panicked: AtomicBool::new(false),
        }
    }

    /// The loop of the thread of lane `k`: run each phase's lane until the run stops.
    pub fn work(&self, k: usize) {
        let mut seen = 0;
        loop {
            wait_until(|| self.epoch.load(Ordering::Acquire) != seen);
            seen = self.epoch.load(Ordering::Acquire);
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            let job = self.jobs[k].load(Ordering::Acquire).cast::<Lane<'_>>();
            let (t, in_window) = (
                self.t.load(Ordering::Relaxed),
                self.in_window.load(Ordering::Relaxed),
            );
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                // SAFETY: `phase` posted a pointer to a lane that stays alive, and that no
                // other thread touches, until this thread counts itself done below.
                let lane = unsafe { &mut *job };
                lane.run(t, in_window, None);
            }));
            if ok.is_err() {
                self.panicked.store(true, Ordering::Release);
            }
            self.done.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Runs one phase: `rest` on the crew's threads, `first` on this one; returns when all
    /// are done.
    pub fn phase(&self, first: &mut Lane<'_>, rest: &mut [Lane<'_>], t: Cycle, in_window: bool) {
        fn send<T: Send>(_: &T) {}
        send(first); // what a lane holds may move to another thread
        self.t.store(t, Ordering::Relaxed);
        self.in_window.store(in_window, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        for (k, lane) in rest.iter_mut().enumerate() {
            let p: *mut Lane<'_> = lane;
            self.jobs[k + 1].store(p.cast(), Ordering::Relaxed);
        }
        self.epoch.fetch_add(1, Ordering::Release);
        // The other lanes borrow what this thread's caller owns: wait for them even if this
        // lane panics.
        let mine = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            first.run(t, in_window, None)
        }));
        wait_until(|| self.done.load(Ordering::Acquire) == rest.len());
        if let Err(p) = mine {
            std::panic::resume_unwind(p);
        }
        if self.panicked.load(Ordering::Acquire) {
            panic!("a lane thread of the switch phase panicked");
        }
    }

    /// A guard that stops the crew's threads when dropped.
    pub fn stop_on_drop(&self) -> impl Drop + '_ {
        struct Stop<'c>(&'c Crew);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.stop.store(true, Ordering::Release);
                self.0.epoch.fetch_add(1, Ordering::Release);
            }
        }
        Stop(self)
    }
}
