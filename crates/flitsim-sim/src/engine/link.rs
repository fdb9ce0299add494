//! Links: fixed-latency delay lines for flits and credits.
//!
//! A flit batch sent in cycle `t` over a link of latency `L` is in the receiver's buffer at the
//! start of cycle `t + L`; the credit for a flit that leaves a buffer in cycle `t` is back at
//! the sender at `t + L`. Links share [`TimeWheel`]s indexed by arrival cycle (one per lane of
//! the switch phase, see [`super::lane`], and one for the NICs' ports): events of
//! one slot are already in time order, so no heap is needed. Every effect between components
//! has a latency of at least one cycle, which is what makes each cycle evaluate-then-commit.
use super::Network;
use crate::ids::{Cycle, PacketId, PortIdx, Vl};

/// The event carries flits (otherwise it is a credit return).
pub(crate) const EV_FLIT: u8 = 1;
/// The batch holds the packet's head flit.
pub(crate) const F_HEAD: u8 = 2;
/// The batch holds the packet's tail flit.
pub(crate) const F_TAIL: u8 = 4;
/// A head flit whose packet follows as a train: one flit per cycle, without events (see
/// [`super::queue::RX_TRAIN`]).
pub(crate) const F_TRAIN: u8 = 8;
/// A train's body flit: sent and counted, but it puts no event on the link.
pub(crate) const F_SILENT: u8 = 16;
/// Not a link event: the switch of the target port wakes (see `Lane::sleep`).
pub(crate) const F_WAKE: u8 = 32;

/// A flit batch or a credit return in flight on a link.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Event {
    /// The port that receives the event: the receiver's input port for flits, the sender's
    /// output port for credits.
    pub target: PortIdx,
    pub pkt: PacketId,
    /// Flits (or credits, one per flit).
    pub n: u16,
    pub vl: Vl,
    pub flags: u8,
}

impl Event {
    #[inline(always)]
    pub fn is_flit(&self) -> bool {
        self.flags & EV_FLIT != 0
    }
}

impl Event {
    /// `n` flits of packet `pkt` on VL `vl`, starting at flit `sent` of its `len`; the
    /// target is set when the batch is transmitted.
    #[inline(always)]
    pub fn flits(pkt: PacketId, vl: Vl, sent: u16, n: u32, len: u16) -> Event {
        let n = n as u16;
        let head = if sent == 0 { F_HEAD } else { 0 };
        let tail = if sent + n == len { F_TAIL } else { 0 };
        Event {
            target: PortIdx::NONE,
            pkt,
            n,
            vl,
            flags: EV_FLIT | head | tail,
        }
    }
}

impl Event {
    /// Wakes the switch of port `target` in the cycle it is delivered.
    #[inline(always)]
    pub fn wake(target: PortIdx) -> Event {
        Event {
            target,
            pkt: PacketId(0),
            n: 0,
            vl: Vl(0),
            flags: F_WAKE,
        }
    }

    /// `n` credits of VL `vl` for output port `target`.
    #[inline(always)]
    pub fn credits(target: PortIdx, n: u32, vl: Vl) -> Event {
        Event {
            target,
            pkt: PacketId(0),
            n: n as u16,
            vl,
            flags: 0,
        }
    }
}

/// Delay lines of links, as a time wheel indexed by arrival cycle (one per lane of the
/// switch phase, holding the events for its ports, and one for the NICs' ports).
pub(crate) struct TimeWheel {
    pub slots: Vec<Vec<Event>>,
    pub mask: u64,
    /// Events in the wheel.
    pub pending: u64,
}

impl TimeWheel {
    /// A wheel long enough for links of up to `max_latency` cycles.
    pub fn new(max_latency: u32) -> Self {
        let size = (max_latency as usize + 1).next_power_of_two();
        TimeWheel {
            slots: (0..size).map(|_| Vec::new()).collect(),
            mask: size as u64 - 1,
            pending: 0,
        }
    }

    #[inline(always)]
    pub fn push(&mut self, at: Cycle, ev: Event) {
        self.slots[(at & self.mask) as usize].push(ev);
        self.pending += 1;
    }

    /// Takes the events arriving in cycle `t`; give the vector back with [`Self::restore`].
    #[inline]
    pub fn take(&mut self, t: Cycle) -> Vec<Event> {
        let events = std::mem::take(&mut self.slots[(t & self.mask) as usize]);
        self.pending -= events.len() as u64;
        events
    }

    /// Returns the (processed) vector of slot `t`, keeping its allocation.
    #[inline]
    pub fn restore(&mut self, t: Cycle, mut events: Vec<Event>) {
        events.clear();
        self.slots[(t & self.mask) as usize] = events;
    }

    /// Flits on all links before the deliveries of cycle `t`; `train(head, arrival)` counts
    /// those of a train whose head arrives in cycle `arrival` (its body flits travel
    /// without events).
    pub fn flits_in_flight(&self, t: Cycle, train: impl Fn(&Event, Cycle) -> u64) -> u64 {
        let mut n = 0;
        for (i, slot) in self.slots.iter().enumerate() {
            let at = t + ((i as u64).wrapping_sub(t) & self.mask);
            for e in slot.iter().filter(|e| e.is_flit()) {
                n += if e.flags & F_TRAIN != 0 {
                    train(e, at)
                } else {
                    e.n as u64
                };
            }
        }
        n
    }
}

impl Network {
    /// Returns `n` credits of VL `vl` from NIC input port `g` to the switch at its other end.
    #[inline(always)]
    pub(crate) fn return_credits(&mut self, t: Cycle, g: PortIdx, n: u32, vl: Vl) {
        let inp = self.ports[g.idx()];
        self.push_event(t + inp.latency as u64, Event::credits(inp.peer, n, vl));
    }
}
