//! Packets in flight, kept in a slab and referred to by [`PacketId`].
//!
//! Glossary: an application sends a *message*; the NIC cuts it into *packets* of at most the
//! class MTU (the routed unit, which never interleaves with another packet on a link); a
//! packet moves as *flits* (one flit crosses a width-1 link per cycle); a *credit* returns
//! buffer space for one flit.
use crate::ids::{Cycle, PacketId, Sl};

/// A packet between its creation in a NIC and the delivery of its tail.
///
/// One cache line, aligned: a switch reads a packet's record when its head arrives (to route
/// it) and the destination when its flits arrive, each time long after anything else touched
/// it, and an unaligned 64-byte record straddled two lines seven times in eight.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub(crate) struct Packet {
    /// Source and destination endpoints.
    pub src: u32,
    pub dst: u32,
    /// Cycle its message was generated.
    pub gen: Cycle,
    /// Cycle its head left the NIC.
    pub inject: Cycle,
    /// Creation order at the source NIC.
    pub seq: u64,
    /// Length, flits.
    pub len: u16,
    /// Traffic class.
    pub class: Sl,
    /// The SL it carries on the wire (class and routing layer, see `FabricConfig::wire_sl`).
    pub wire_sl: Sl,
    /// Switches traversed so far.
    pub hops: u16,
    /// Generated inside the measurement window.
    pub measured: bool,
    /// Its message's entry in the [`MessageSlab`] ([`MSG_NONE`] for unmeasured messages).
    pub msg: u32,
    /// Its flow ([`NO_FLOW`] for a class source's packets).
    pub flow: u32,
    /// Its path among the destination's paths (the destination LID offset under LMC).
    pub path: u8,
    /// With the hierarchical Omni-Path switch: the VL it leaves the current fabric switch on,
    /// chosen at the switch's input port; the central buffer holds it under the VL it arrived
    /// on (see `engine::opa`).
    pub exit_vl: u8,
    /// With source routing, the index of its route's first hop (see `SourceRoutes`).
    pub route: u32,
    /// Deadline-based QoS: its deadline in the clock of the node holding it, or its time to
    /// deadline while its head crosses a link (see `engine::deadline`); 0 otherwise.
    pub deadline: i64,
    /// Flits delivered to the destination so far (counted only for an atomic DTable message
    /// of several packets, whose packets are counted one by one as their tails arrive).
    pub delivered: u16,
}

const _: () = assert!(std::mem::size_of::<Packet>() == 64);

/// No flow: the packet of a class source or a scripted message.
pub(crate) const NO_FLOW: u32 = u32::MAX;

/// No message entry: the message is neither measured nor a trace transfer.
pub(crate) const MSG_NONE: u32 = u32::MAX;

/// No trace transfer.
pub(crate) const NO_TRACE: u32 = u32::MAX;

/// A message in flight that is measured or belongs to a replayed trace.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MessageEntry {
    /// Cycle the message was generated.
    pub gen: Cycle,
    /// Flits not yet delivered.
    pub left: u32,
    /// Flits not yet sent by the source NIC.
    pub unsent: u32,
    /// Generated inside the measurement window.
    pub measured: bool,
    /// Its trace transfer ([`NO_TRACE`]: none).
    pub trace: u32,
}

/// The tracked messages in flight, with a free list (no allocation per message once grown):
/// a message's latency is known when the tail of its last packet is delivered.
#[derive(Default)]
pub(crate) struct MessageSlab {
    entries: Vec<MessageEntry>,
    free: Vec<u32>,
}

impl MessageSlab {
    /// Stores a message of `flits` flits generated at `gen` and returns its index.
    #[inline]
    pub fn alloc(&mut self, gen: Cycle, flits: u32, measured: bool, trace: u32) -> u32 {
        let e = MessageEntry {
            gen,
            left: flits,
            unsent: flits,
            measured,
            trace,
        };
        match self.free.pop() {
            Some(i) => {
                self.entries[i as usize] = e;
                i
            }
            None => {
                self.entries.push(e);
                (self.entries.len() - 1) as u32
            }
        }
    }

    /// Counts `flits` flits of message `i` sent by the source NIC; returns its trace transfer
    /// when they were its last.
    #[inline]
    pub fn sent(&mut self, i: u32, flits: u32) -> Option<u32> {
        let e = &mut self.entries[i as usize];
        e.unsent -= flits;
        (e.unsent == 0 && e.trace != NO_TRACE).then_some(e.trace)
    }

    /// Counts `flits` flits of message `i` discarded at its host: it will never complete,
    /// so it no longer counts as measured (its entry is freed with its last flit).
    #[inline]
    pub fn discard(&mut self, i: u32, flits: u32) {
        let e = &mut self.entries[i as usize];
        e.unsent -= flits;
        e.measured = false;
        e.left -= flits;
        if e.left == 0 {
            self.free.push(i);
        }
    }

    /// Asks for the line of message `i`'s entry (nothing for [`MSG_NONE`] or beyond).
    #[inline(always)]
    pub fn prefetch(&self, i: u32) {
        if let Some(e) = self.entries.get(i as usize) {
            super::prefetch(e);
        }
    }

    /// Counts `flits` delivered flits of message `i`; returns the entry (and frees it) when
    /// they were its last.
    #[inline]
    pub fn delivered(&mut self, i: u32, flits: u32) -> Option<MessageEntry> {
        let e = &mut self.entries[i as usize];
        e.left -= flits;
        if e.left == 0 {
            self.free.push(i);
            Some(*e)
        } else {
            None
        }
    }
}

/// Every packet in flight, with a free list: no allocation per packet once the slab has grown
/// to the largest number in flight.
#[derive(Default)]
pub(crate) struct PacketSlab {
    packets: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketSlab {
    /// Stores `p` and returns its id.
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PacketId {
        match self.free.pop() {
            Some(i) => {
                self.packets[i as usize] = p;
                PacketId(i)
            }
            None => {
                self.packets.push(p);
                PacketId((self.packets.len() - 1) as u32)
            }
        }
    }

    /// Frees the slot of a delivered packet.
    #[inline]
    pub fn free(&mut self, id: PacketId) {
        self.free.push(id.0);
    }

    /// Starts loading packet `id`'s record (nothing if there is no such packet).
    #[inline(always)]
    pub fn prefetch(&self, id: PacketId) {
        if let Some(p) = self.packets.get(id.idx()) {
            super::prefetch(p);
        }
    }
}

impl std::ops::Index<PacketId> for PacketSlab {
    type Output = Packet;
    #[inline(always)]
    fn index(&self, id: PacketId) -> &Packet {
        &self.packets[id.idx()]
    }
}

impl std::ops::IndexMut<PacketId> for PacketSlab {
    #[inline(always)]
    fn index_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.packets[id.idx()]
    }
}

/// The packet slab as the lanes of one switch phase see it ([`super::lane`]): every lane reads
/// packets and updates the few fields a switch changes (`hops`, `deadline`).
///
/// Lanes run at once on different threads, so this view hands out access to the elements of
/// a slab that several lanes share. It is sound because of how packets move: a lane touches a
/// packet only where the packet's head is — in one of its NICs' buffers (started onto the
/// link), routed on arrival in one of its input buffers, granted from one of them, or sent
/// from one of its output ports — and a packet's head is in one place at a time; everything
/// else a lane does with a packet (moving its body and tail) goes through the lane's own
/// buffers and its NICs' own records, not the slab. The slab neither grows nor frees during
/// the phase (NICs create and eject packets before it).
#[derive(Clone, Copy)]
pub(crate) struct PacketCells<'a> {
    ptr: *mut Packet,
    len: usize,
    _slab: std::marker::PhantomData<&'a mut [Packet]>,
}

// SAFETY: see the type's documentation: no two lanes access the same packet in one phase.
unsafe impl Send for PacketCells<'_> {}
// SAFETY: as for `Send`.
unsafe impl Sync for PacketCells<'_> {}

impl PacketSlab {
    /// The view of the slab the lanes of a switch phase share.
    pub fn cells(&mut self) -> PacketCells<'_> {
        PacketCells {
            ptr: self.packets.as_mut_ptr(),
            len: self.packets.len(),
            _slab: std::marker::PhantomData,
        }
    }
}

impl PacketCells<'_> {
    /// Asks for packet `id`'s line (a hint; any id is allowed).
    #[inline(always)]
    pub fn prefetch(&self, id: PacketId) {
        if id.idx() < self.len {
            super::prefetch_ptr(self.ptr.wrapping_add(id.idx()));
        }
    }

    /// A copy of packet `id` (its head is at the calling lane).
    #[inline(always)]
    pub fn get(&self, id: PacketId) -> Packet {
        assert!(id.idx() < self.len, "packet {} outside the slab", id.0);
        // SAFETY: in bounds (checked); no other lane writes this packet during the phase.
        unsafe { self.ptr.add(id.idx()).read() }
    }

    /// Updates packet `id` (its head is at the calling lane).
    #[inline(always)]
    pub fn update<R>(&self, id: PacketId, f: impl FnOnce(&mut Packet) -> R) -> R {
        assert!(id.idx() < self.len, "packet {} outside the slab", id.0);
        // SAFETY: in bounds (checked); only the lane holding the packet's head accesses it
        // during the phase, and the reference lives only for the call.
        f(unsafe { &mut *self.ptr.add(id.idx()) })
    }
}
