//! A switch's cycle: allocation, crossbar traversal, and the output-buffer stage.
//!
//! * [`Lane::allocate`] runs the input stage of the separable allocator (each input port's
//!   round-robin arbiter offers one VL whose head may start) and hands the requests to the
//!   [`SeparableAllocator`](super::allocator::SeparableAllocator) for the output stage; each
//!   grant opens a crossbar connection.
//! * [`Lane::advance`] moves flits over every open connection: onto the output link, or
//!   into the output buffer when the port has one.
//! * [`Lane::drain_outputs`] is the link stage of ports with output buffers: each output
//!   port's scheduler picks the VL whose head packet goes next on the link.
use super::allocator::{round_robin_bits, Request, ANY};
use super::lane::{can_start, Lane};
use super::link::{Event, F_SILENT, F_TRAIN};
use super::queue::{BufPkt, LOCKSTEP, STREAM, TX_TRAIN};
use super::Egress;
use crate::config::Switching;
use crate::ids::{Cycle, PacketId, PortIdx, Vl, NEVER};
use crate::scheduler::Candidate;

/// An open crossbar connection: a packet moving from an input VL to an output VL.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Conn {
    pub input: PortIdx,
    pub output: PortIdx,
    pub in_vl: Vl,
    pub out_vl: Vl,
    /// A streaming packet's flits between head and tail still to leave (see
    /// `queue::STREAM`): the connection only counts them down, one per cycle.
    pub left: u16,
}

const _: () = assert!(std::mem::size_of::<Conn>() == 12);

/// The open crossbar connections of a switch, in the order they opened (with
/// `swap_remove`'s reordering): the first four in line, the rest in a vector.
#[derive(Clone, Debug)]
#[repr(C)]
pub(crate) struct ConnList {
    n: u16,
    inline: [Conn; ConnList::INLINE],
    more: Vec<Conn>,
}

impl Default for ConnList {
    fn default() -> Self {
        let none = Conn {
            input: PortIdx::NONE,
            output: PortIdx::NONE,
            in_vl: Vl(0),
            out_vl: Vl(0),
            left: 0,
        };
        ConnList {
            n: 0,
            inline: [none; ConnList::INLINE],
            more: Vec::new(),
        }
    }
}

impl ConnList {
    const INLINE: usize = 4;

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.n as usize
    }
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    #[inline(always)]
    pub fn push(&mut self, c: Conn) {
        let n = self.n as usize;
        if n < Self::INLINE {
            self.inline[n] = c;
        } else {
            self.more.push(c);
        }
        self.n += 1;
    }
    /// Asks for the first lines of the connections beyond those in line, if any.
    #[inline(always)]
    pub fn prefetch_more(&self) {
        if self.n as usize > Self::INLINE {
            let p = self.more.as_ptr();
            super::prefetch_ptr(p);
            super::prefetch_ptr(p.wrapping_add(64 / std::mem::size_of::<Conn>()));
        }
    }
    /// Removes connection `i`; the last one takes its place.
    #[inline(always)]
    pub fn swap_remove(&mut self, i: usize) {
        let n = self.n as usize;
        let last = if n > Self::INLINE {
            self.more
                .pop()
                .expect("connections beyond the in-line ones")
        } else {
            self.inline[n - 1]
        };
        if i + 1 < n {
            self[i] = last;
        }
        self.n -= 1;
    }
}

impl std::ops::Index<usize> for ConnList {
    type Output = Conn;
    #[inline(always)]
    fn index(&self, i: usize) -> &Conn {
        debug_assert!(i < self.n as usize);
        if i < Self::INLINE {
            &self.inline[i]
        } else {
            &self.more[i - Self::INLINE]
        }
    }
}

impl std::ops::IndexMut<usize> for ConnList {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut Conn {
        if i < Self::INLINE {
            &mut self.inline[i]
        } else {
            &mut self.more[i - Self::INLINE]
        }
    }
}

/// The state of one simulated switch (a crossbar with its ports). What every cycle reads
/// (`wake_at`, `dirty`, the connection count and the first connections) shares the first
/// cache line.
#[repr(C, align(64))]
pub(crate) struct SwitchState {
    /// The next cycle a head becomes ready.
    pub wake_at: Cycle,
    /// Global index of its port 0.
    pub base: u32,
    /// Flits in this switch's output buffers.
    pub obuffered: u32,
    pub nports: u16,
    /// Flits per cycle a crossbar connection moves into an output buffer.
    pub speedup: u16,
    /// Crossbar connections an input port may hold at once.
    pub max_conns: u8,
    /// Something changed: allocation must run.
    pub dirty: bool,
    /// A ready head waits for credits: a credit arrival must re-run allocation.
    pub credit_blocked: bool,
    /// The last allocation left no ready head waiting (each one it saw was granted) and no
    /// waiting head at an input too busy to offer it: until `wake_at`, when the next head
    /// becomes ready, an allocation would grant nothing and change nothing (see
    /// `Lane::switch_cycle`). A head that comes to wait at a busy input, or takes the place
    /// of a waiting head (a take-over queue), clears it.
    pub settled: bool,
    /// The cycle (its low 32 bits) the switch went to sleep in, or [`AWAKE`]: its connections
    /// all stream and it has nothing else to do, so it left its lane's active set with a
    /// wake-up event for the cycle the first of them steps again (see `Lane::sleep`). In the
    /// first line: every visit reads it.
    pub slept: u32,
    /// The cycle (low 32 bits) of the wake-up event it last put on the wheel, or [`AWAKE`].
    pub wake_event: u32,
    /// Bit `p` (of ports 0–63): input port `p` has a waiting head. The allocator visits only
    /// these inputs among ports 0–63, and every port from 64 on (the Omni-Path central
    /// crossbar's 72 ports have their inputs first, all below 64).
    pub in_waiting: u64,
    /// Bit `p` (of ports 0–63): output port `p` has packets in its output buffer and is not
    /// stalled. The output-buffer stage visits only these among ports 0–63, and every port
    /// from 64 on.
    pub out_ready: u64,
    pub conns: ConnList,
}

const _: () = assert!(std::mem::size_of::<SwitchState>() == 128);
// What a visit reads, the connection count and the first connection included, is in the
// first line (`ConnList` is `repr(C)`: Rust had put its vector first and the count in the
// second line).
const _: () = assert!(
    std::mem::offset_of!(SwitchState, conns)
        + std::mem::offset_of!(ConnList, inline)
        + std::mem::size_of::<Conn>()
        <= 64
);

/// [`SwitchState::slept`] and [`SwitchState::wake_event`]: none.
pub(crate) const AWAKE: u32 = u32::MAX;

impl SwitchState {
    /// Input port `p` (of this switch) has a waiting head now.
    #[inline(always)]
    pub fn input_waits(&mut self, p: usize) {
        self.in_waiting |= port_bit(p);
    }
}

/// The bit of port `p` in a switch's port sets: none from port 64 on.
#[inline(always)]
pub(crate) fn port_bit(p: usize) -> u64 {
    if p < 64 {
        1 << p
    } else {
        0
    }
}

/// The ports of a switch a stage visits, in increasing order: those of a bit set among
/// ports 0–63, then every port from 64 to `np`.
pub(crate) struct PortSet {
    bits: u64,
    next: usize,
    np: usize,
}

impl PortSet {
    #[inline(always)]
    pub(crate) fn new(waiting: u64, np: usize) -> Self {
        PortSet {
            bits: waiting,
            next: np.min(64),
            np,
        }
    }
}

impl Iterator for PortSet {
    type Item = usize;
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.bits != 0 {
            let p = self.bits.trailing_zeros() as usize;
            self.bits &= self.bits - 1;
            return Some(p);
        }
        if self.next < self.np {
            self.next += 1;
            return Some(self.next - 1);
        }
        None
    }
}

/// Switches of at most this many ports serve their output buffers port by port, out of line
/// (see `Lane::drain_outputs`).
const FEW_PORTS: usize = 16;

/// In `allocate`'s count of ready heads: an input with waiting heads is busy.
const BUSY_WAITING: u32 = 1 << 31;

impl Lane<'_> {
    /// Separable input-first allocation for switch `s` (see the module docs).
    #[inline(never)]
    pub(crate) fn allocate(&mut self, s: usize, t: Cycle) {
        let vls = self.vls;
        let base = self.switches[s].base as usize;
        let np = self.switches[s].nports as usize;
        let max_conns = self.switches[s].max_conns;
        let vct = self.switching == Switching::Vct;
        let mut wake = NEVER;
        let mut credit_blocked = false;
        // With credit trains, the cycle a credit-blocked head will have its room: the switch
        // wakes then, not on each credit of a train.
        let mut room_at = NEVER;
        let credit_trains = self.credit_trains;
        // The ready heads seen, plus `BUSY_WAITING` when an input with waiting heads was too
        // busy to look at (or is after a grant).
        let mut unsettled = 0u32;
        let alloc = &mut self.own.alloc;
        alloc.clear();
        // Input stage: each input offers its first eligible VL in round-robin order (its
        // oldest with the FIFO arbiter; every eligible VL with a non-multiplexed crossbar).
        let (fifo, per_vl) = (self.fifo_arbiter, self.per_vl_crossbar);
        // An MPort whose packets may take any of its links to the central crossbar: (external
        // ports, links).
        let free_links = self.organisation.opa().and_then(|l| l.free_links(s));
        let mtu_room = self.mtu_room;
        // On large fabrics with output buffers, ask for every waiting head's queue first, so
        // that their cache misses overlap instead of stalling the scan below one after
        // another (without output buffers the switch phase asked for them two switches ago).
        let prefetch = if self.prefetch_queues && !self.look_ahead {
            PortSet::new(self.switches[s].in_waiting, np)
        } else {
            PortSet::new(0, 0)
        };
        for ip in prefetch {
            let input = base + ip;
            if self.xbar[input].in_conns < max_conns {
                for v in round_robin_bits(self.xbar[input].waiting, 0) {
                    super::prefetch(&self.inputs[input * vls + v as usize]);
                }
            }
        }
        for ip in PortSet::new(self.switches[s].in_waiting, np) {
            let input = base + ip;
            if self.xbar[input].waiting == 0 {
                continue;
            }
            if self.xbar[input].in_conns >= max_conns {
                unsettled |= BUSY_WAITING;
                continue;
            }
            let start = if self.prio_inputs {
                0
            } else if let Some(m) = self
                .mgmt_vl
                .filter(|&m| self.xbar[input].waiting & (1 << m) != 0)
            {
                m as u32
            } else {
                self.xbar[input].rr_in.start(vls) as u32
            };
            let mut chosen = false;
            let mut oldest: Option<Request> = None;
            for v in round_robin_bits(self.xbar[input].waiting, start) {
                let h = self.inputs[input * vls + v as usize]
                    .head()
                    .expect("waiting VL has a head");
                debug_assert!(!h.busy);
                if h.ready > t {
                    wake = wake.min(h.ready);
                    continue;
                }
                unsettled += 1;
                if chosen {
                    continue;
                }
                // Whether link `output` can start `n` flits of this head now.
                let link_fits = |output: usize, n: u32| {
                    can_start(
                        self.switching,
                        &self.credits,
                        &self.vl_owner,
                        vls,
                        output,
                        h.out_vl,
                        n,
                    )
                };
                let fits = |output: usize| match self.ports[output].egress() {
                    Egress::OutputBuffer => {
                        let need = if vct { h.remaining() } else { 1 };
                        self.obuf.account.fits(output, h.out_vl, need)
                    }
                    Egress::Link => link_fits(output, h.remaining()),
                };
                let mut out_port = h.out_port;
                let busy = self.xbar[base + out_port as usize].out_busy & h.out_vl.bit() != 0;
                let mut ok = !busy && fits(base + out_port as usize);
                // A DTable port that keeps MTUs together: a head that would begin an MTU needs
                // room for all of it (DTable ports are external: never a `free_links` choice).
                if ok && mtu_room {
                    let output = base + out_port as usize;
                    if self.ports[output].egress() == Egress::Link {
                        let sched = &self.sched[output];
                        ok = link_fits(
                            output,
                            sched.room_needed(h.out_vl.0, h.class.0, h.remaining()),
                        );
                    }
                }
                let mut some_free = !busy;
                // `link_choice = "free"`: a head bound for a busy or full link to the central
                // crossbar takes another link of its MPort that can start it.
                if let Some((ppm, nl)) = free_links.filter(|&(ppm, nl)| {
                    !ok && (ip as u16) < ppm && out_port >= ppm && out_port < ppm + nl
                }) {
                    for d in 1..nl {
                        let alt = ppm + (out_port - ppm + d) % nl;
                        if self.xbar[base + alt as usize].out_busy & h.out_vl.bit() != 0 {
                            continue;
                        }
                        some_free = true;
                        if fits(base + alt as usize) {
                            out_port = alt;
                            ok = true;
                            break;
                        }
                    }
                }
                if !some_free {
                    continue;
                }
                if ok {
                    let req = Request {
                        input: ip as u16,
                        in_vl: Vl(v as u8),
                        output: out_port,
                        out_vl: h.out_vl,
                        sl: h.class,
                        key: if fifo { h.ready as i64 } else { h.dl },
                    };
                    if per_vl {
                        alloc.request(req);
                    } else if fifo {
                        // Oldest first; round-robin order breaks ties.
                        if oldest.is_none_or(|o| req.key < o.key) {
                            oldest = Some(req);
                        }
                    } else {
                        alloc.request(req);
                        chosen = true;
                        if max_conns == 1 {
                            // The input's other heads would be read only for when the switch
                            // wakes, and with one connection per input none of them can move
                            // before this request is settled: if it wins, the input is busy
                            // until its tail leaves, and closing the connection makes the
                            // switch allocate again; if it loses, the switch allocates again
                            // next cycle. Either way they are read then.
                            break;
                        }
                    }
                } else {
                    credit_blocked = true;
                    if credit_trains {
                        let output = base + out_port as usize;
                        room_at =
                            room_at.min(self.credits.room_at(output, h.out_vl, h.remaining()));
                    }
                }
            }
            if let Some(r) = oldest {
                alloc.request(r);
            }
        }
        // Output stage: the output's scheduler picks a candidate (the crossbar-stage round
        // robin when the output is buffered; any request for the FIFO arbiter then), its
        // arbiter the input.
        let (sched, xsched, xbar) = (&mut self.sched, &mut self.obuf.xsched, &self.xbar);
        let ports = &self.ports;
        // The same call for every arbitration rule, each with its own closures (inlined).
        macro_rules! allocate {
            ($by_vl:literal, $per_vl:literal) => {
                alloc.allocate::<$by_vl, $per_vl>(
                    np,
                    |op, cands| {
                        let output = base + op as usize;
                        match ports[output].egress() {
                            Egress::OutputBuffer if fifo => Some(ANY),
                            Egress::OutputBuffer => xsched[output].choose(cands),
                            Egress::Link => sched[output].choose(cands),
                        }
                    },
                    |op| xbar[base + op as usize].rr_out.start(np),
                )
            };
        }
        let lost = match (self.dl.as_deref().is_some_and(|d| d.edf), per_vl) {
            (true, false) => allocate!(true, false),
            (true, true) => allocate!(true, true),
            (false, false) => allocate!(false, false),
            (false, true) => allocate!(false, true),
        };
        let grants = alloc.grants().len();
        for k in 0..grants {
            let g = self.own.alloc.grants()[k];
            self.open_connection(s, &g, vct);
            let input = &self.xbar[base + g.input as usize];
            if input.in_conns >= max_conns && input.waiting != 0 {
                unsettled |= BUSY_WAITING;
            }
        }
        let sw = &mut self.switches[s];
        sw.settled = unsettled as usize == grants;
        sw.wake_at = wake.min(room_at);
        sw.credit_blocked = credit_blocked;
        // A request that lost may win elsewhere next cycle: allocate again then.
        sw.dirty = lost;
    }

    /// Opens the crossbar connection of a grant: reserves room downstream (the whole packet
    /// under virtual cut-through; the output VL under wormhole) and marks input and output busy.
    fn open_connection(&mut self, s: usize, g: &Request, vct: bool) {
        let vls = self.vls;
        let base = self.switches[s].base as usize;
        let input = base + g.input as usize;
        let output = base + g.output as usize;
        if self.dl.is_some() {
            self.count_order_error(input * vls + g.in_vl.idx(), true);
        }
        let iq = &mut self.inputs[input * vls + g.in_vl.idx()];
        iq.prefetch_next();
        let q = iq.head_mut().unwrap();
        q.busy = true;
        self.xbar[input].waiting &= !g.in_vl.bit();
        if self.xbar[input].waiting == 0 {
            self.switches[s].in_waiting &= !port_bit(g.input as usize);
        }
        let pkt = q.pkt;
        let remaining = q.remaining();
        self.xbar[input].in_conns += 1;
        self.xbar[output].out_busy = if self.per_vl_crossbar {
            self.xbar[output].out_busy | g.out_vl.bit()
        } else {
            u32::MAX
        };
        match self.ports[output].egress() {
            Egress::OutputBuffer => {
                if vct {
                    self.obuf.account.reserve(output, g.out_vl, remaining);
                }
            }
            Egress::Link => {
                if vct {
                    self.credits.reserve(output, g.out_vl, remaining);
                } else {
                    self.vl_owner[output * vls + g.out_vl.idx()] = pkt;
                }
                let c = Candidate {
                    vl: g.out_vl.0,
                    sl: g.sl.0,
                };
                self.sched[output].sent(c, remaining);
            }
        }
        self.xbar[input].rr_in.grant(g.in_vl.idx());
        self.xbar[output].rr_out.grant(g.input as usize);
        self.switches[s].conns.push(Conn {
            input: PortIdx(input as u32),
            output: PortIdx(output as u32),
            in_vl: g.in_vl,
            out_vl: g.out_vl,
            left: 0,
        });
    }

    /// Moves flits of every connection of switch `s`.
    #[inline(always)]
    /// `TRAINS`: `self.trains` (a constant, so that fabrics without trains run the loop
    /// without their tests).
    pub(crate) fn advance<const TRAINS: bool>(&mut self, s: usize, t: Cycle, in_window: bool) {
        let general = self.switching == Switching::Wormhole;
        let mut i = 0;
        while i < self.switches[s].conns.len() {
            let c = self.switches[s].conns[i];
            if TRAINS && c.left > 0 {
                // A streaming packet's flit leaves (counted when its head left).
                self.switches[s].conns[i].left -= 1;
                i += 1;
                continue;
            }
            let out = self.ports[c.output.idx()];
            let moved = if general || out.egress() == Egress::OutputBuffer {
                self.advance_general(s, c, t, in_window)
            } else {
                // Virtual cut-through straight onto the link (the common case): the packet's
                // room downstream was reserved when it started, so what is present goes.
                let q = &mut self.inputs[c.input.idx() * self.vls + c.in_vl.idx()];
                let h = q.head_mut().expect("a connection's input VL has a head");
                // A packet in lock step moves one flit per cycle (see below).
                let n = if TRAINS && h.train & LOCKSTEP != 0 {
                    1
                } else {
                    h.present(t).min(out.width as u32)
                };
                if n > 0 {
                    let mut ev = Event::flits(h.pkt, c.out_vl, h.sent, n, h.len);
                    // Credits for the flits that leave: these, all of the packet's as a
                    // train, or none (the train has them).
                    let mut credit = n;
                    let mut stream = 0;
                    if !TRAINS {
                    } else if h.sent > 0 {
                        // (A train's tail to an endpoint is an event: it completes the packet
                        // there.)
                        if h.train & TX_TRAIN != 0
                            && !(out.to_endpoint() && h.sent as u32 + n == h.len as u32)
                        {
                            ev.flags |= F_SILENT;
                        }
                        if h.train & LOCKSTEP != 0 && self.credit_trains {
                            credit = 0;
                        }
                    } else if h.recv == h.len && h.len > 1 && out.width == 1 {
                        // Every flit is here or arrives one per cycle, and nothing stops a
                        // started packet under virtual cut-through: the packet leaves one
                        // flit per cycle. A switch downstream needs only the head's event
                        // (a train), and the sender upstream gets its credits as one.
                        h.train |= LOCKSTEP;
                        if !out.to_endpoint() || self.eject_trains {
                            h.train |= TX_TRAIN;
                            ev.flags |= F_TRAIN;
                        }
                        if self.credit_trains {
                            credit = h.len as u32;
                            if h.train & TX_TRAIN != 0 && h.len > 2 && self.stream {
                                // Nothing of the flits between head and tail is seen one
                                // by one: count them now and step only the tail.
                                h.train |= STREAM;
                                h.ready = t;
                                stream = h.len as u32 - 2;
                            }
                        }
                    }
                    h.sent += (n + stream) as u16;
                    let tail = h.sent == h.len;
                    *q.occ_mut() -= n + stream;
                    self.transmit(t, c.output, ev, in_window);
                    self.own.buffered -= (n + stream) as i64;
                    if TRAINS && stream > 0 {
                        self.count_stream(t, c, stream);
                        self.switches[s].conns[i].left = stream as u16;
                    }
                    if !TRAINS || credit == n {
                        self.return_credits(t, c.input, n, c.in_vl);
                    } else if credit > 0 {
                        let inp = self.ports[c.input.idx()];
                        let mut cr = Event::credits(inp.peer, credit, c.in_vl);
                        cr.flags |= F_TRAIN;
                        self.push(t + inp.latency as u64, cr);
                    }
                    self.own.progress = t;
                    Some(tail)
                } else {
                    None
                }
            };
            match moved {
                Some(true) => self.close_connection(s, i, c, t),
                _ => i += 1,
            }
        }
    }

    /// One cycle of connection `c` of switch `s` where flits go into an output buffer or
    /// under wormhole switching (credits are taken flit by flit). Returns `None` when nothing
    /// moved, else whether the tail did.
    #[inline(always)]
    fn advance_general(&mut self, s: usize, c: Conn, t: Cycle, in_window: bool) -> Option<bool> {
        let vls = self.vls;
        let wormhole = self.switching == Switching::Wormhole;
        let (input, output) = (c.input.idx(), c.output.idx());
        let bi = input * vls + c.in_vl.idx();
        let h = *self.inputs[bi].head().unwrap();
        let out = self.ports[output];
        let to_obuf = out.egress() == Egress::OutputBuffer;
        let mut n = if to_obuf {
            h.present_untimed().min(self.switches[s].speedup as u32)
        } else {
            h.present_untimed().min(out.width as u32)
        };
        if wormhole && n > 0 {
            let account = if to_obuf {
                &mut self.obuf.account
            } else {
                &mut self.credits
            };
            n = account.room(output, c.out_vl, n);
            account.reserve(output, c.out_vl, n);
        }
        if n == 0 {
            return None;
        }
        let tail = h.sent as u32 + n == h.len as u32;
        if to_obuf {
            let q = &mut self.obuf.queues[output * vls + c.out_vl.idx()];
            if h.sent == 0 {
                q.push(BufPkt {
                    recv: n as u16,
                    sent: 0,
                    busy: false,
                    train: 0,
                    ..h
                });
            } else {
                q.receive(h.pkt, n as u16);
            }
            self.obuf.waiting[output] |= c.out_vl.bit();
            self.obuf.stalled[output] = false;
            let sw = &mut self.switches[s];
            sw.out_ready |= port_bit(output - sw.base as usize);
            sw.obuffered += n;
        } else {
            let ev = Event::flits(h.pkt, c.out_vl, h.sent, n, h.len);
            self.transmit(t, c.output, ev, in_window);
            self.own.buffered -= n as i64;
        }
        self.return_credits(t, c.input, n, c.in_vl);
        let q = &mut self.inputs[bi];
        *q.occ_mut() -= n;
        q.head_mut().unwrap().sent += n as u16;
        self.own.progress = t;
        Some(tail)
    }

    /// The tail of connection `i` of switch `s` has crossed: free input and output, and let
    /// the next packet of the input VL become its head.
    #[inline(always)]
    fn close_connection(&mut self, s: usize, i: usize, c: Conn, t: Cycle) {
        let vls = self.vls;
        let bi = c.input.idx() * vls + c.in_vl.idx();
        self.xbar[c.input.idx()].in_conns -= 1;
        self.xbar[c.output.idx()].out_busy = if self.per_vl_crossbar {
            self.xbar[c.output.idx()].out_busy & !c.out_vl.bit()
        } else {
            0
        };
        if self.switching == Switching::Wormhole {
            self.vl_owner[c.output.idx() * vls + c.out_vl.idx()] = PacketId::NONE;
        }
        let sw = &mut self.switches[s];
        sw.dirty = true;
        if let Some(nh) = self.inputs[bi].pop_head() {
            self.xbar[c.input.idx()].waiting |= c.in_vl.bit();
            sw.input_waits(c.input.idx() - sw.base as usize);
            nh.ready = (nh.arrived + self.ports[c.input.idx()].delay as u64).max(t + 1);
            sw.wake_at = sw.wake_at.min(nh.ready);
        }
        sw.conns.swap_remove(i);
    }

    /// Link stage of ports with output buffers: each output port sends from its output
    /// buffers, one packet at a time, choosing the VL with its scheduler among those whose
    /// head packet the next buffer can take.
    #[inline(always)]
    pub(crate) fn drain_outputs(&mut self, s: usize, t: Cycle, in_window: bool) {
        if self.switches[s].nports as usize <= FEW_PORTS {
            self.drain_few_outputs(s, t, in_window);
        } else {
            self.drain_all_outputs(s, t, in_window);
        }
    }

    /// [`Self::drain_outputs`] on a switch of many ports: the compiler loads every part of
    /// the lane a port's step may touch once, before the loop.
    #[inline(never)]
    fn drain_all_outputs(&mut self, s: usize, t: Cycle, in_window: bool) {
        let (vls, vct) = (self.vls, self.switching == Switching::Vct);
        let base = self.switches[s].base as usize;
        let np = self.switches[s].nports as usize;
        for p in PortSet::new(self.switches[s].out_ready, np) {
            self.drain_port(s, p, base + p, vls, vct, t, in_window);
        }
    }

    /// [`Self::drain_outputs`] on a node of a few ports (an Omni-Path MPort), which serves one
    /// or two of them per call: each port's step out of line loads only what its path reads.
    #[inline(never)]
    fn drain_few_outputs(&mut self, s: usize, t: Cycle, in_window: bool) {
        let np = self.switches[s].nports as usize;
        for p in PortSet::new(self.switches[s].out_ready, np) {
            self.drain_port_apart(s, p, t, in_window);
        }
    }

    /// [`Self::drain_port`], out of line.
    #[inline(never)]
    fn drain_port_apart(&mut self, s: usize, p: usize, t: Cycle, in_window: bool) {
        let (vls, vct) = (self.vls, self.switching == Switching::Vct);
        let go = self.switches[s].base as usize + p;
        self.drain_port(s, p, go, vls, vct, t, in_window);
    }

    /// Output port `p` of switch `s` (global index `go`) sends from its output buffers, if it
    /// can.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn drain_port(
        &mut self,
        s: usize,
        p: usize,
        go: usize,
        vls: usize,
        vct: bool,
        t: Cycle,
        in_window: bool,
    ) {
        if self.obuf.waiting[go] == 0 || self.obuf.stalled[go] {
            return;
        }
        if self.obuf.cur[go] == Vl::NONE && !self.start_from_output_buffer(go, vct) {
            if self.obuf.stalled[go] {
                self.switches[s].out_ready &= !port_bit(p);
            }
            return;
        }
        let v = self.obuf.cur[go];
        let oi = go * vls + v.idx();
        let h = *self.obuf.queues[oi].head().unwrap();
        let mut n = h.present_untimed().min(self.ports[go].width as u32);
        if !vct && n > 0 {
            n = self.credits.room(go, v, n);
            self.credits.reserve(go, v, n);
        }
        if n == 0 {
            return;
        }
        let tail = h.sent as u32 + n == h.len as u32;
        let ev = Event::flits(h.pkt, v, h.sent, n, h.len);
        self.transmit(t, PortIdx(go as u32), ev, in_window);
        self.obuf.account.release(go, v, n);
        self.own.buffered -= n as i64;
        self.own.progress = t;
        let sw = &mut self.switches[s];
        sw.obuffered -= n;
        // Space freed in an output buffer may admit a waiting packet.
        sw.dirty |= sw.credit_blocked;
        if tail {
            let q = &mut self.obuf.queues[oi];
            q.pop_head();
            self.obuf.cur[go] = Vl::NONE;
            if !vct {
                self.vl_owner[oi] = PacketId::NONE;
            }
            if q.is_empty() {
                self.obuf.waiting[go] &= !v.bit();
                if self.obuf.waiting[go] == 0 {
                    self.switches[s].out_ready &= !port_bit(p);
                }
            }
        } else {
            self.obuf.queues[oi].head_mut().unwrap().sent += n as u16;
        }
    }

    /// Output port `go`'s scheduler picks the output-buffer VL whose head packet goes on the
    /// link next. Returns false when none can start (the port stalls until credits arrive or
    /// a packet enters). Out of line: once per packet, and what it reads (schedulers, credits)
    /// would otherwise be loaded on every call of the output-buffer stage.
    #[inline(never)]
    fn start_from_output_buffer(&mut self, go: usize, vct: bool) -> bool {
        let vls = self.vls;
        if let Some(state) = self.sched[go].boxed_state() {
            super::prefetch_ptr(state);
        }
        let mut cands = std::mem::take(&mut self.own.cands);
        cands.clear();
        let mut bits = self.obuf.waiting[go];
        while bits != 0 {
            let v = Vl(bits.trailing_zeros() as u8);
            bits &= bits - 1;
            let h = self.obuf.queues[go * vls + v.idx()]
                .head()
                .expect("waiting output VL");
            let need = if self.mtu_room {
                self.sched[go].room_needed(v.0, h.class.0, h.remaining())
            } else {
                h.remaining()
            };
            if self.can_start(go, v, need) {
                cands.push(Candidate {
                    vl: v.0,
                    sl: h.class.0,
                });
            }
        }
        self.obuf.stalled[go] = cands.is_empty();
        let chosen = self.sched[go].choose(&cands);
        self.own.cands = cands;
        let Some(chosen) = chosen else {
            return false;
        };
        let v = Vl(chosen.vl);
        if self.dl.is_some() {
            self.count_order_error(go * vls + v.idx(), false);
        }
        let oq = &mut self.obuf.queues[go * vls + v.idx()];
        oq.prefetch_next();
        let h = oq.head_mut().unwrap();
        h.busy = true;
        let h = *h;
        let remaining = h.remaining();
        if vct {
            self.credits.reserve(go, v, remaining);
        } else {
            self.vl_owner[go * vls + v.idx()] = h.pkt;
        }
        self.sched[go].sent(chosen, remaining);
        self.obuf.cur[go] = v;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A switch of any size: the set visits every marked port below 64 and every port
        /// from 64 on, each once, in increasing order; a port's bit is its own below 64.
        #[test]
        fn port_set_visits_marked_ports_then_the_rest(
            np in 1usize..200,
            marks in proptest::collection::vec(0usize..200, 0..40),
        ) {
            let marked: std::collections::BTreeSet<usize> =
                marks.into_iter().filter(|&p| p < np).collect();
            let bits = marked.iter().fold(0u64, |b, &p| b | port_bit(p));
            let visited: Vec<usize> = PortSet::new(bits, np).collect();
            let want: Vec<usize> = (0..np).filter(|&p| p >= 64 || marked.contains(&p)).collect();
            prop_assert_eq!(visited, want);
            prop_assert!((0..64).all(|p| port_bit(p).count_ones() == 1));
            prop_assert!((64..200).all(|p| port_bit(p) == 0));
        }
    }
}
