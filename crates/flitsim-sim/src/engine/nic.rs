//! Endpoints: traffic sources, the NIC's queues and its injection scheduler.
//!
//! The pipeline of an endpoint, every cycle it has work:
//!
//! ```text
//! sources ─► application queue per class ─► NIC buffer, one queue per VL ─► scheduler ─► link
//!            (unbounded, messages)             (nic.buffer_flits per VL,    (same kinds as
//!                                               packets of ≤ MTU flits)      switch ports)
//! ```
//!
//! A message is cut into packets as they enter the NIC buffer; the scheduler picks the VL whose
//! head packet starts next, under the same credit rules as a switch output port.
use super::lane::{can_start, Lane};
use super::link::{Event, F_HEAD, F_SILENT, F_TRAIN};
use super::packet::{Packet, MSG_NONE, NO_FLOW, NO_TRACE};
use super::route::RouteSource;
use super::Network;
use crate::config::{InjectionKind, Switching};
use crate::ids::{Cycle, PacketId, PortIdx, Sl, Vl};
use crate::scheduler::Candidate;
use crate::traffic::ComponentRng;
use crate::workload::{Arrivals, SizeSampler};
use flitsim_topology::EndpointId;
use rand::Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Whether bit `i` of the bit set `bits` is on.
#[inline(always)]
pub(crate) fn has_bit(bits: &[u64], i: usize) -> bool {
    bits[i / 64] & (1 << (i % 64)) != 0
}

/// Sets (`on`) or clears bit `i` of a bit set.
#[inline(always)]
pub(crate) fn set_bit(bits: &mut [u64], i: usize, on: bool) {
    let (w, b) = (i / 64, 1u64 << (i % 64));
    if on {
        bits[w] |= b;
    } else {
        bits[w] &= !b;
    }
}

/// A bit set of `n` bits, all set.
pub(crate) fn all_bits(n: usize) -> Vec<u64> {
    let mut bits = vec![!0u64; n.div_ceil(64)];
    if let Some(last) = bits.last_mut() {
        if !n.is_multiple_of(64) {
            *last = (1u64 << (n % 64)) - 1;
        }
    }
    bits
}

/// The first bit set in `bits` at or after `from`.
#[inline(always)]
pub(crate) fn next_bit(bits: &[u64], from: usize) -> Option<usize> {
    let mut w = from / 64;
    let mut word = bits.get(w)? & (!0u64 << (from % 64));
    loop {
        if word != 0 {
            return Some(w * 64 + word.trailing_zeros() as usize);
        }
        w += 1;
        word = *bits.get(w)?;
    }
}

/// The bit set in `bits` `n` places after the first one at or after `from` (`n = 0`: that
/// first one): where a look-ahead of `n` places over a bit set starts.
#[inline]
pub(crate) fn bit_ahead(bits: &[u64], from: usize, n: usize) -> Option<usize> {
    let mut at = next_bit(bits, from);
    for _ in 0..n {
        at = next_bit(bits, at? + 1);
    }
    at
}

/// A scripted message: (cycle, order of scheduling, source, destination, class, flits).
pub(crate) type Scripted = (Cycle, u64, u32, u32, u8, u32);

/// A message waiting in an application queue.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Msg {
    pub gen: Cycle,
    pub dst: u32,
    /// Flits not yet packetised.
    pub left: u32,
    pub measured: bool,
    /// Entry in the message slab (`MSG_NONE` when not measured).
    pub msg: u32,
    /// The flow, path and source route it belongs to.
    pub tag: MsgTag,
}

/// What a message carries besides its class and destination: its flow, its path among the
/// destination's paths, and an explicit source route.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MsgTag {
    /// Flow id (`NO_FLOW`: a class source's message).
    pub flow: u32,
    /// Path index (the destination LID offset under LMC).
    pub path: u8,
    /// With source routing, an explicit route (`NO_ROUTE_ID`: the route of the path).
    pub route: u32,
    /// Its transfer of the replayed trace (`NO_TRACE`: none).
    pub trace: u32,
}

/// No explicit source route.
pub(crate) const NO_ROUTE_ID: u32 = u32::MAX;

impl MsgTag {
    /// A class source's or a scripted message: no flow, path 0.
    pub const CLASS: MsgTag = MsgTag {
        flow: NO_FLOW,
        path: 0,
        route: NO_ROUTE_ID,
        trace: NO_TRACE,
    };
}

/// A packet in a NIC buffer, with the facts its scheduler and start read (so that choosing
/// the next packet reads no packet records: on large fabrics each was a cache miss).
#[derive(Clone, Copy, Debug)]
pub(crate) struct NicPkt {
    pub id: PacketId,
    pub msg: u32,
    pub len: u16,
    pub class: Sl,
}

/// The cycles a lane's streaming NICs are visited again (see `Lane::nic_sleep`): a ring of
/// lists indexed by cycle for wake-ups less than a ring away — all of them when the ring is
/// longer than the longest packet — and a heap for any farther. An entry is a NIC to look
/// at in that cycle; whether it is still due is the caller's test (its `wake`).
pub(crate) struct NicWakes {
    slots: Vec<Vec<u32>>,
    far: BinaryHeap<Reverse<(Cycle, u32)>>,
}

impl NicWakes {
    /// A ring for packets of up to `longest` flits.
    pub fn new(longest: usize) -> Self {
        NicWakes {
            slots: vec![Vec::new(); (longest + 1).next_power_of_two()],
            far: BinaryHeap::new(),
        }
    }

    /// NIC `e` is to be visited in cycle `at` (after cycle `now`).
    #[inline]
    pub fn push(&mut self, now: Cycle, at: Cycle, e: u32) {
        let n = self.slots.len() as u64;
        if at - now < n {
            self.slots[(at % n) as usize].push(e);
        } else {
            self.far.push(Reverse((at, e)));
        }
    }

    /// Calls `f` with every NIC entered for cycle `t` (the lane takes them every cycle while
    /// any of its NICs streams), and with stale entries of earlier cycles.
    #[inline]
    pub fn take(&mut self, t: Cycle, mut f: impl FnMut(u32)) {
        let n = self.slots.len() as u64;
        let slot = &mut self.slots[(t % n) as usize];
        for &e in slot.iter() {
            f(e);
        }
        slot.clear();
        while let Some(&Reverse((at, e))) = self.far.peek() {
            if at > t {
                break;
            }
            self.far.pop();
            f(e);
        }
    }
}

/// One endpoint's NIC.
pub(crate) struct Nic {
    /// Application queue per class (per class and VL with `nic.send_queues = "vl"`: queue
    /// `class · lanes + VL`).
    pub app: Vec<VecDeque<Msg>>,
    pub app_msgs: u32,
    /// NIC buffer: packets per VL.
    pub queues: Vec<VecDeque<NicPkt>>,
    /// Flits in the NIC buffer.
    pub used: u32,
    /// The packet on the link, the flits of it sent, its length, its VL and its message
    /// (kept here: once its head is in the fabric, the packet's record belongs to the switch
    /// its head is at).
    pub cur: PacketId,
    pub cur_sent: u16,
    pub cur_len: u16,
    pub cur_vl: Vl,
    pub cur_msg: u32,
    /// The current packet goes as a train (see `queue::RX_TRAIN`).
    pub cur_train: bool,
    /// Of a streaming packet's flits between head and tail (see [`Lane::start_nic_stream`];
    /// one leaves per cycle), the first not yet taken off the NIC buffer's counts: the cycle
    /// it leaves in (0: the current packet does not stream), and how many are left. Its tail
    /// leaves in the cycle after the last of them ([`Nic::tail_at`]).
    pub stream_since: Cycle,
    pub stream_n: u32,
    /// While it streams, the cycle its lane visits it again (an entry of
    /// `LaneOwn::nic_wake` for another cycle is stale).
    pub wake: Cycle,
    /// Application queue the next refill round starts with.
    pub rr_class: u16,
    /// Packets created so far.
    pub seq: u64,
    /// Flits that must leave before a waiting head can fit (0: try the refill).
    pub skip: u32,
    /// The rate controller, with `nic.rate_control` (its flows replace the class queues).
    pub rate: Option<Box<super::rate::NicRate>>,
    /// The EDF host of deadline-based QoS (its queues replace the class queues).
    pub edf: Option<Box<super::deadline::HostEdf>>,
    /// Token buckets per class (`qos.class[].bucket_rate`): (tokens, last update cycle).
    pub buckets: Option<Vec<(f64, Cycle)>>,
    /// With `nic.receive_time`: flit batches that arrived and wait for the NIC's processor,
    /// in arrival order (packets never interleave on a link, so a head starts each packet).
    pub rx: VecDeque<Event>,
    /// Flits in `rx` (their credits are not yet returned).
    pub rx_flits: u32,
}

impl Nic {
    /// A NIC with `classes · lanes` application queues and `vls` NIC buffers.
    pub fn new(classes: usize, lanes: usize, vls: usize) -> Self {
        Nic {
            app: (0..classes * lanes).map(|_| VecDeque::new()).collect(),
            app_msgs: 0,
            queues: (0..vls).map(|_| VecDeque::new()).collect(),
            used: 0,
            cur: PacketId::NONE,
            cur_sent: 0,
            cur_len: 0,
            cur_vl: Vl(0),
            cur_msg: MSG_NONE,
            cur_train: false,
            stream_since: 0,
            stream_n: 0,
            wake: 0,
            rr_class: 0,
            seq: 0,
            skip: 0,
            rate: None,
            edf: None,
            buckets: None,
            rx: VecDeque::new(),
            rx_flits: 0,
        }
    }
}

impl Nic {
    /// The current packet streams.
    #[inline(always)]
    pub fn streaming(&self) -> bool {
        self.stream_since != 0
    }
    /// While it streams, the cycle its tail leaves in.
    #[inline(always)]
    pub fn tail_at(&self) -> Cycle {
        self.stream_since + self.stream_n as u64
    }
    /// Takes a streaming packet's flits that left by the end of cycle `through` off the NIC
    /// buffer's flit count; returns how many, for the caller to release from the buffer's
    /// account (and to count against `skip`).
    #[inline]
    pub fn settle(&mut self, through: Cycle) -> u32 {
        let k = (through + 1)
            .saturating_sub(self.stream_since)
            .min(self.stream_n as u64) as u32;
        self.stream_n -= k;
        self.stream_since += k as u64;
        self.used -= k;
        k
    }
}

/// A traffic source: one class of one endpoint.
pub(crate) struct Source {
    pub endpoint: u32,
    pub class: u8,
    /// Messages per cycle.
    pub p: f64,
    pub ln_q: f64,
    pub period: f64,
    pub acc: f64,
    pub rng: ComponentRng,
    /// Arrivals and sizes of a class with `size` or `process`, and of every flow (None: the
    /// fixed-size Bernoulli/CBR source above).
    pub workload: Option<Box<(Arrivals, SizeSampler)>>,
    /// A flow's id, destination, first cycle and stop cycle (`None`: a class source drawing
    /// destinations from the pattern).
    pub flow: Option<FlowSource>,
}

/// What a flow's source adds to a class source.
pub(crate) struct FlowSource {
    /// Its id, path and explicit route.
    pub tag: MsgTag,
    pub dst: u32,
    /// Arrival times are drawn relative to `start`.
    pub start: Cycle,
    /// No message at or after this cycle.
    pub stop: Cycle,
}

impl Source {
    /// Cycles to the next message of a Bernoulli process (≥ 1): geometric with parameter `p`.
    pub fn geometric_gap(&mut self) -> u64 {
        if self.p >= 1.0 {
            return 1;
        }
        let u: f64 = 1.0 - self.rng.gen::<f64>(); // (0, 1]
        1 + (u.ln() / self.ln_q).floor() as u64
    }
}

/// How many sources ahead the generation asks for the NIC record (see
/// `Network::prefetch_sources_ahead`).
const GEN_AHEAD: usize = 8;

impl Network {
    /// Sources and scripted messages due in cycle `t` put their messages into the
    /// application queues.
    #[inline(never)]
    pub(crate) fn generate(&mut self, t: Cycle, window: (Cycle, Cycle)) {
        while let Some(&(at, flow, idt)) = self.idt_schedule.get(self.idt_next) {
            if at > t {
                break;
            }
            self.idt_next += 1;
            let e = self.counters.flows[flow as usize].src as usize;
            let i = self.flow_local[flow as usize] as usize;
            if let Some(rc) = &mut self.nics[e].rate {
                rc.set_idt(i, idt, t);
            }
        }
        if let Some(r) = &mut self.replay {
            r.due(t, &mut self.replay_pending);
            let c = self.cfg.traffic.trace_class();
            for inj in std::mem::take(&mut self.replay_pending) {
                let tag = MsgTag {
                    trace: inj.id,
                    ..MsgTag::CLASS
                };
                self.enqueue_message(t, inj.src, inj.dst, c, inj.flits, window, tag);
            }
        }
        let cbr = self.cfg.traffic.injection == InjectionKind::Cbr;
        while let Some((_, id)) = self.gen_calendar.pop_due(t) {
            if self.prefetch_queues {
                self.prefetch_sources_ahead();
            }
            let src = &mut self.sources[id as usize];
            let e = src.endpoint;
            let c = src.class as usize;
            if let Some(f) = &src.flow {
                let (tag, dst, start, stop) = (f.tag, f.dst, f.start, f.stop);
                if t >= stop {
                    continue; // refused by admission control
                }
                let (arrivals, sizes) = &mut **src.workload.as_mut().expect("a flow's workload");
                let (_, size, next) = arrivals.fire(t - start, &mut src.rng, sizes, |_| dst);
                if next.saturating_add(start) < stop {
                    self.gen_calendar.push(next + start, id);
                }
                self.enqueue_message(t, e, dst, c, size, window, tag);
                continue;
            }
            if let Some(w) = src.workload.as_mut() {
                let pattern = &self.pattern;
                let (arrivals, sizes) = &mut **w;
                let (dst, size, next) =
                    arrivals.fire(t, &mut src.rng, sizes, |r| pattern.draw(e, r));
                self.gen_calendar.push(next, id);
                self.enqueue_message(t, e, dst, c, size, window, MsgTag::CLASS);
                continue;
            }
            let dst = self.pattern.draw(e, &mut src.rng);
            let next = if cbr {
                src.acc += src.period;
                (src.acc.floor() as u64).max(t + 1)
            } else {
                t + src.geometric_gap()
            };
            self.gen_calendar.push(next, id);
            let size = self.cfg.traffic.classes[c].message_flits;
            self.enqueue_message(t, e, dst, c, size, window, MsgTag::CLASS);
        }
        while let Some(&Reverse((at, _, e, dst, c, size))) = self.scripted.peek() {
            if at > t {
                break;
            }
            self.scripted.pop();
            self.enqueue_message(t, e, dst, c as usize, size, window, MsgTag::CLASS);
        }
    }

    /// On large fabrics, while a source generates, asks for the lines the next ones will
    /// touch: twice [`GEN_AHEAD`] places on, the source's record; [`GEN_AHEAD`] places on,
    /// the record of the NIC it feeds (whose index is in the source's record); half as far,
    /// that NIC's application queue (whose address is in the NIC's record).
    #[inline(always)]
    fn prefetch_sources_ahead(&self) {
        if let Some(src) = self.gen_calendar.ahead(2 * GEN_AHEAD) {
            super::prefetch_all(&self.sources[src as usize]);
        }
        if let Some(src) = self.gen_calendar.ahead(GEN_AHEAD) {
            super::prefetch_all(&self.nics[self.sources[src as usize].endpoint as usize]);
        }
        if let Some(src) = self.gen_calendar.ahead(GEN_AHEAD / 2) {
            let s = &self.sources[src as usize];
            let nic = &self.nics[s.endpoint as usize];
            if let Some(q) = nic.app.get(s.class as usize * self.app_lanes) {
                super::prefetch(q);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn enqueue_message(
        &mut self,
        t: Cycle,
        e: u32,
        dst: u32,
        c: usize,
        size: u32,
        window: (Cycle, Cycle),
        tag: MsgTag,
    ) {
        let measured = t >= window.0 && t < window.1;
        self.counters.flits_generated += size as u64;
        if tag.flow != NO_FLOW {
            self.counters.flow_generated(tag.flow, size, measured);
        }
        let mut msg = MSG_NONE;
        if measured {
            self.counters.window_generated[c] += size as u64;
            self.measured_outstanding += (size as u64).div_ceil(self.unit[c] as u64);
        }
        if measured || tag.trace != NO_TRACE {
            msg = self.messages.alloc(t, size, measured, tag.trace);
        }
        let m = Msg {
            gen: t,
            dst,
            left: size,
            measured,
            msg,
            tag,
        };
        let nic = &mut self.nics[e as usize];
        nic.skip = 0;
        nic.app_msgs += 1;
        set_bit(&mut self.nic_pending, e as usize, true);
        if let Some(rc) = &mut nic.rate {
            // A flow's own controller entry; everything else goes with its class.
            let i = if tag.flow != NO_FLOW {
                self.flow_local[tag.flow as usize] as usize
            } else {
                c
            };
            rc.enqueue(i, m, t);
            return;
        }
        if nic.edf.is_some() {
            self.edf_enqueue(e as usize, c, m, t);
            return;
        }
        let q = if self.app_lanes > 1 {
            c * self.app_lanes + self.nic_lane(e as usize, c, m.dst, m.tag.path).1.idx()
        } else {
            c
        };
        self.nics[e as usize].app[q].push_back(m);
    }

    /// The first part of endpoint `e`'s cycle, run for every NIC before the switch phase:
    /// take what arrived (with `nic.receive_time`), then refill the NIC buffer from the
    /// application queues. The rest (start a packet, send its flits) runs in the NIC's lane
    /// of the switch phase ([`Lane::nic_cycle`]); a NIC's two parts touch nothing another
    /// NIC's do, and both run in every cycle in this order, so the NIC's cycle is the same.
    #[inline(never)]
    pub(crate) fn prepare_nic(&mut self, e: usize, t: Cycle, in_window: bool) {
        self.prepare_nic_inner(e, t, in_window);
        self.update_pending(e);
    }

    /// Whether NIC `e` has something for [`Network::prepare_nic`] to do: it keeps a bit in
    /// `nic_pending`, updated wherever the fields below change (the NIC's lane reports when
    /// `skip` runs out).
    #[inline]
    pub(crate) fn update_pending(&mut self, e: usize) {
        let nic = &self.nics[e];
        let pending = nic.rx_flits > 0 || (nic.app_msgs > 0 && nic.skip == 0);
        set_bit(&mut self.nic_pending, e, pending);
    }

    /// NIC `e` has flits in its buffer: its lane visits it from now on, until they are sent.
    fn nic_sending(&mut self, e: usize) {
        let own = self
            .lanes
            .iter_mut()
            .find(|l| e < l.nics.1)
            .expect("a NIC belongs to a lane");
        set_bit(&mut own.nic_active, e - own.nics.0, true);
    }

    fn prepare_nic_inner(&mut self, e: usize, t: Cycle, in_window: bool) {
        if self.nics[e].rx_flits > 0 {
            self.receive(e, t, in_window);
        }
        if self.nics[e].app_msgs > 0 && self.nics[e].skip == 0 {
            // The refill reads the NIC buffer's room: a streaming packet's flits that left
            // before this cycle are out of it.
            let streaming = self.nics[e].streaming();
            if streaming {
                let nic = &mut self.nics[e];
                let k = nic.settle(t.saturating_sub(1));
                let v = nic.cur_vl;
                self.nic_buf.release(e, v, k);
            }
            if self.nics[e].rate.is_some() {
                self.dispatch(e, t);
            } else if self.nics[e].edf.is_some() {
                self.edf_dispatch(e, t);
            } else {
                self.refill(e, t);
            }
            if streaming && self.nics[e].skip > 0 {
                // Its lane must count the flits that leave against `skip` from now on:
                // it visits the NIC this cycle, which puts it back to sleep until `skip`
                // runs out or the tail leaves.
                self.nic_sending(e);
            }
        }
    }

    /// With `nic.receive_time`: the received flits waiting at NIC `e` reach the host, in
    /// order, as far as the processor allows. A head takes the processor (if free) for
    /// `receive_time` cycles; the rest of its packet then flows at once. Each flit delivered
    /// returns its credit to the switch. Runs before the NIC's dispatch: receiving goes first.
    fn receive(&mut self, e: usize, t: Cycle, in_window: bool) {
        let g = PortIdx(self.nic_base + e as u32);
        loop {
            let nic = &mut self.nics[e];
            let Some(&ev) = nic.rx.front() else {
                break;
            };
            if ev.flags & F_HEAD != 0 {
                let rc = nic
                    .rate
                    .as_mut()
                    .expect("nic.receive_time needs rate control");
                if !rc.receive(t) {
                    break;
                }
                self.last_progress = t;
            }
            let nic = &mut self.nics[e];
            nic.rx.pop_front();
            nic.rx_flits -= ev.n as u32;
            self.eject(&ev, t, in_window);
            self.return_credits(t, g, ev.n as u32, ev.vl);
        }
    }

    /// Application queues → NIC buffer (a queue per VL, `nic.buffer_flits` each), one packet
    /// per class per round while they fit. A head that does not fit blocks its VL for the rest
    /// of the refill, so small packets of another class cannot overtake it into that VL and
    /// starve it. `skip` counts flits that must leave the NIC before any waiting head can fit
    /// (0 = try now); a new message resets it.
    ///
    /// With `qos.discard_after`, a message that waited longer is discarded when it reaches
    /// the front; with token buckets, a class's head waits for `len` tokens.
    fn refill(&mut self, e: usize, t: Cycle) {
        let lanes = self.app_lanes;
        let queues = self.mtu.len() * lanes;
        let mut blocked: u32 = 0;
        let mut shortfall = u32::MAX;
        let discard_after = self.dl.as_deref().and_then(|d| d.discard_after);
        loop {
            let mut moved = false;
            let mut last = None;
            for k in 0..queues {
                let nic = &self.nics[e];
                let q = (nic.rr_class as usize + k) % queues;
                let c = q / lanes;
                let Some(msg) = nic.app[q].front() else {
                    continue;
                };
                if discard_after.is_some_and(|limit| t.saturating_sub(msg.gen) > limit) {
                    let m = *msg;
                    let nic = &mut self.nics[e];
                    nic.app[q].pop_front();
                    nic.app_msgs -= 1;
                    self.discard(c, m);
                    moved = true;
                    continue;
                }
                let len = msg.left.min(self.unit[c] as u32);
                let dst = msg.dst;
                let path = msg.tag.path;
                if !self.take_tokens(e, c, len, t) {
                    continue;
                }
                let (wire_sl, vl) = self.nic_lane(e, c, dst, path);
                if blocked & vl.bit() != 0 {
                    continue;
                }
                let free = self.nic_buf.room(e, vl, u32::MAX);
                if len > free {
                    blocked |= vl.bit();
                    shortfall = shortfall.min(len - free);
                    continue;
                }
                let nic = &mut self.nics[e];
                if let Some(b) = nic.buckets.as_mut() {
                    b[c].0 -= len as f64;
                }
                let msg = nic.app[q].front_mut().unwrap();
                let m = *msg;
                msg.left -= len;
                if msg.left == 0 {
                    nic.app[q].pop_front();
                    nic.app_msgs -= 1;
                }
                self.make_packet(e, c, m, len, wire_sl, vl);
                moved = true;
                last = Some(q);
            }
            // The next pass starts after the last queue served (or, when none was, where this
            // one started): classes sharing a VL take turns at its free space.
            let nic = &mut self.nics[e];
            if let Some(q) = last {
                nic.rr_class = ((q + 1) % queues) as u16;
            }
            if !moved || nic.app_msgs == 0 {
                if nic.app_msgs > 0 && shortfall != u32::MAX {
                    nic.skip = shortfall;
                }
                break;
            }
        }
    }

    /// The SL a packet of class `c` from NIC `e` to `dst` on path `path` carries, and the VL it
    /// takes on the NIC's link.
    pub(crate) fn nic_lane(&self, e: usize, c: usize, dst: u32, path: u8) -> (Sl, Vl) {
        let wire_sl = self.fabric.wire_sl_on(
            Sl(c as u8),
            EndpointId(e as u32),
            EndpointId(dst),
            self.n_endpoints,
            path as usize,
        );
        (wire_sl, Vl(self.nic_sl2vl[wire_sl.idx()]))
    }

    /// Whether class `c`'s token bucket at NIC `e` holds `len` tokens at cycle `t` (refilled
    /// first; always true without buckets or for a class without one). Takes nothing.
    fn take_tokens(&mut self, e: usize, c: usize, len: u32, t: Cycle) -> bool {
        let Some(b) = self.nics[e].buckets.as_mut() else {
            return true;
        };
        let Some(q) = self.cfg.qos.classes.get(c) else {
            return true;
        };
        let Some(rate) = q.bucket_rate else {
            return true;
        };
        let depth = q.bucket_depth.unwrap_or(self.mtu[c] as u32).max(len) as f64;
        let (tokens, last) = &mut b[c];
        *tokens = (*tokens + rate * t.saturating_sub(*last) as f64).min(depth);
        *last = t;
        *tokens >= len as f64
    }

    /// Cuts a packet of `len` flits of message `m` (class `c`) into the NIC buffer's queue of
    /// VL `vl` (which has room), and returns it.
    pub(crate) fn make_packet(
        &mut self,
        e: usize,
        c: usize,
        m: Msg,
        len: u32,
        wire_sl: Sl,
        vl: Vl,
    ) -> PacketId {
        let path = m.tag.path;
        let nic = &mut self.nics[e];
        if nic.used == 0 {
            self.nic_sending(e);
        }
        let nic = &mut self.nics[e];
        nic.used += len;
        let seq = nic.seq;
        nic.seq += 1;
        self.nic_buf.reserve(e, vl, len);
        let route = match &mut self.routes {
            RouteSource::SourceRoute(r) if m.tag.route == NO_ROUTE_ID => {
                r.of_pair(&self.fabric, e as u32, m.dst, path)
            }
            _ => m.tag.route,
        };
        let id = self.packets.alloc(Packet {
            src: e as u32,
            dst: m.dst,
            gen: m.gen,
            inject: 0,
            seq,
            len: len as u16,
            class: Sl(c as u8),
            wire_sl,
            hops: 0,
            measured: m.measured,
            msg: m.msg,
            flow: m.tag.flow,
            path,
            exit_vl: 0,
            route,
            deadline: 0,
            delivered: 0,
        });
        self.nics[e].queues[vl.idx()].push_back(NicPkt {
            id,
            msg: m.msg,
            len: len as u16,
            class: Sl(c as u8),
        });
        id
    }

    /// Rate control: dispatches one packet from the due flow with the smallest next dispatch
    /// time when the NIC buffer has room for it (see [`super::rate`]).
    fn dispatch(&mut self, e: usize, t: Cycle) {
        let Some(i) = self.nics[e].rate.as_ref().and_then(|r| r.pick(t)) else {
            return;
        };
        let rc = self.nics[e].rate.as_ref().unwrap();
        let c = rc.flows[i].class as usize;
        let msg = *rc.flows[i].queue.front().unwrap();
        let len = msg.left.min(self.unit[c] as u32);
        let (wire_sl, vl) = self.nic_lane(e, c, msg.dst, msg.tag.path);
        if len > self.nic_buf.room(e, vl, u32::MAX) {
            return; // waits for room; the flow keeps its turn
        }
        let nic = &mut self.nics[e];
        let rc = nic.rate.as_mut().unwrap();
        let head = rc.flows[i].queue.front_mut().unwrap();
        head.left -= len;
        if head.left == 0 {
            rc.flows[i].queue.pop_front();
            nic.app_msgs -= 1;
        }
        rc.dispatched(i, t);
        self.make_packet(e, c, msg, len, wire_sl, vl);
    }
}

impl Lane<'_> {
    /// The second part of endpoint `e`'s cycle (see [`Network::prepare_nic`]), in the lane
    /// that holds the NIC: start a packet when the link is free, send flits of the current
    /// packet.
    #[inline(never)]
    pub(crate) fn nic_cycle(&mut self, e: usize, t: Cycle, in_window: bool) {
        let g = self.nic_base as usize + e;
        if self.nic.nics[e].streaming() && self.stream_visit(e, t) {
            return;
        }
        if self.nic.nics[e].cur == PacketId::NONE && !self.start_packet(e, g, t) {
            return;
        }
        self.send_from_nic(e, g, t, in_window);
    }

    /// A visit to a NIC whose packet streams: takes the flits that left by the end of this
    /// cycle off its counts, and, before its tail's cycle, puts it back to sleep (true).
    #[inline(never)]
    fn stream_visit(&mut self, e: usize, t: Cycle) -> bool {
        self.settle_stream(e, t);
        if t >= self.nic.nics[e].tail_at() {
            self.nic.nics[e].stream_since = 0;
            return false;
        }
        self.nic_sleep(e, t);
        true
    }

    /// Takes NIC `e`'s streaming flits that left by the end of cycle `through` off its
    /// buffer's counts and off `skip`, as sending them one by one would have.
    fn settle_stream(&mut self, e: usize, through: Cycle) {
        let nic = &mut self.nic.nics[e];
        let k = nic.settle(through);
        if k == 0 {
            return;
        }
        let v = nic.cur_vl;
        if nic.skip > 0 {
            nic.skip = nic.skip.saturating_sub(k);
            if nic.skip == 0 {
                self.own.ready.push(e as u32);
            }
        }
        self.nic.buf.release(e, v, k);
    }

    /// Takes streaming NIC `e` out of its lane's visits until its tail's cycle, or the cycle
    /// its `skip` runs out if that comes first (after cycle `t`).
    fn nic_sleep(&mut self, e: usize, t: Cycle) {
        let nic = &mut self.nic.nics[e];
        let mut wake = nic.tail_at();
        if nic.skip > 0 {
            // The `j`-th flit still to leave does so in cycle `stream_since + j − 1`.
            wake = wake.min(nic.stream_since + nic.skip as u64 - 1);
        }
        debug_assert!(wake > t, "a streaming NIC sleeps past its cycle");
        nic.wake = wake;
        set_bit(&mut self.own.nic_active, e - self.own.nics.0, false);
        self.own.nic_wake.push(t, wake, e as u32);
    }

    /// The head of NIC `e`'s train left in cycle `t`: its flits up to the tail leave one per
    /// cycle without a visit each. They count as sent now (progress; a NIC's link is not a
    /// flit-hop, nor in the `ports` table), are taken off the NIC buffer's counts as
    /// they leave (when the NIC is visited again or its buffer is read: [`Nic::settle`]), and
    /// the NIC sleeps until its tail's cycle (see [`Self::nic_sleep`]).
    #[inline(never)]
    fn start_nic_stream(&mut self, e: usize, g: usize, t: Cycle) {
        let nic = &mut self.nic.nics[e];
        let len = nic.cur_len;
        let body = len as u32 - 2;
        nic.cur_sent = len - 1;
        nic.stream_since = t + 1;
        nic.stream_n = body;
        debug_assert!(!self.ports[g].to_switch());
        self.own.stream_until = self.own.stream_until.max(t + body as u64);
        self.nic_sleep(e, t);
    }

    /// The NIC's scheduler picks the VL whose head packet goes on the link next. Returns false
    /// when none can start. The packets in a NIC's buffer are not yet in the fabric: no
    /// switch touches their records.
    fn start_packet(&mut self, e: usize, g: usize, t: Cycle) -> bool {
        let mut cands = std::mem::take(&mut self.own.cands);
        cands.clear();
        for v in 0..self.vls {
            if let Some(&pk) = self.nic.nics[e].queues[v].front() {
                if can_start(
                    self.switching,
                    &self.nic.credits,
                    &self.nic.vl_owner,
                    self.vls,
                    g,
                    Vl(v as u8),
                    if self.mtu_room {
                        self.nic.sched[g].room_needed(v as u8, pk.class.0, pk.len as u32)
                    } else {
                        pk.len as u32
                    },
                ) {
                    cands.push(Candidate {
                        vl: v as u8,
                        sl: pk.class.0,
                    });
                }
            }
        }
        let chosen = self.nic.sched[g].choose(&cands);
        self.own.cands = cands;
        let Some(chosen) = chosen else {
            return false;
        };
        let v = Vl(chosen.vl);
        let NicPkt {
            id: p, len, msg, ..
        } = self.nic.nics[e].queues[v.idx()].pop_front().unwrap();
        self.packets.update(p, |pk| pk.inject = t);
        self.nic.sched[g].sent(chosen, len as u32);
        if self.switching == Switching::Vct {
            self.nic.credits.reserve(g, v, len as u32);
        }
        // Under virtual cut-through a NIC sends its packet from its buffer at one flit per
        // cycle once it has started: a train.
        let train = self.trains && len > 1 && self.ports[g].width == 1;
        let nic = &mut self.nic.nics[e];
        nic.cur_train = train;
        nic.cur = p;
        nic.cur_sent = 0;
        nic.cur_len = len;
        nic.cur_vl = v;
        nic.cur_msg = msg;
        true
    }

    /// Sends up to `width` flits of the NIC's current packet.
    fn send_from_nic(&mut self, e: usize, g: usize, t: Cycle, in_window: bool) {
        let nic = &self.nic.nics[e];
        let (p, v, sent, len) = (nic.cur, nic.cur_vl, nic.cur_sent, nic.cur_len);
        let mut n = (len - sent).min(self.ports[g].width) as u32;
        if self.switching == Switching::Wormhole {
            n = self.nic.credits.room(g, v, n);
            self.nic.credits.reserve(g, v, n);
        }
        if n == 0 {
            return;
        }
        let mut ev = Event::flits(p, v, sent, n, len);
        if nic.cur_train {
            ev.flags |= if sent == 0 { F_TRAIN } else { F_SILENT };
        }
        self.transmit(t, PortIdx(g as u32), ev, in_window);
        self.own.progress = t;
        self.nic.buf.release(e, v, n);
        let nic = &mut self.nic.nics[e];
        nic.cur_sent += n as u16;
        nic.used -= n;
        if nic.skip > 0 {
            nic.skip = nic.skip.saturating_sub(n);
            if nic.skip == 0 {
                // The refill may try again: the network learns it at the end of the phase.
                self.own.ready.push(e as u32);
            }
        }
        if nic.used == 0 {
            let i = e - self.own.nics.0;
            set_bit(&mut self.own.nic_active, i, false);
        }
        if sent == 0 && nic.cur_train && len > 2 && self.nic_streams {
            self.start_nic_stream(e, g, t);
            return;
        }
        if nic.cur_sent == len {
            nic.cur = PacketId::NONE;
            if nic.cur_msg != MSG_NONE {
                // The message's count of flits sent is kept with the network's messages:
                // handed over at the end of the phase.
                self.own.sent.push((nic.cur_msg, len as u32));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{all_bits, has_bit, next_bit, set_bit};

    #[test]
    fn bit_sets_visit_exactly_their_members() {
        for n in [0, 1, 63, 64, 65, 130] {
            let mut bits = all_bits(n);
            let visited: Vec<usize> =
                std::iter::successors(next_bit(&bits, 0), |&k| next_bit(&bits, k + 1)).collect();
            assert_eq!(visited, (0..n).collect::<Vec<_>>(), "all {n} bits");
            for k in (0..n).step_by(3) {
                set_bit(&mut bits, k, false);
            }
            let left: Vec<usize> = (0..n).filter(|&k| has_bit(&bits, k)).collect();
            assert_eq!(left, (0..n).filter(|k| k % 3 != 0).collect::<Vec<_>>());
            assert_eq!(next_bit(&bits, n), None);
            // `bit_ahead` is the `k`-th of the visited bits.
            for k in 0..left.len() + 2 {
                assert_eq!(
                    super::bit_ahead(&bits, 0, k),
                    left.get(k).copied(),
                    "{n} bits, {k}"
                );
            }
        }
    }
}
