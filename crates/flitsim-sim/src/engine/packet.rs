//! Packets in flight, kept in a slab and referred to by [`PacketId`].
//!
//! Glossary: an application sends a *message*; the NIC cuts it into *packets* of at most the
//! class MTU (the routed unit, which never interleaves with another packet on a link); a
//! packet moves as *flits* (one flit crosses a width-1 link per cycle); a *credit* returns
//! buffer space for one flit.
use crate::ids::{Cycle, PacketId, Sl};

/// A packet between its creation in a NIC and the delivery of its tail.
#[derive(Clone, Copy, Debug)]
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
