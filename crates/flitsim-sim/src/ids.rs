//! Typed identifiers of the engine.
//!
//! Every index into the engine's flat arrays has its own type, so a global port index cannot be
//! passed where a VL or a packet is expected. All are `Copy` newtypes over the smallest integer
//! that holds them; `.idx()` gives the `usize` for indexing.
//!
//! * [`PortIdx`]: a port of the *engine*, numbered globally: every switch port of the simulated
//!   network first (`Topology::port_index` of the expanded topology), then one port per endpoint
//!   (its NIC). A switch's own port number is a [`PortNum`](flitsim_topology::PortNum).
//! * [`Vl`]: a virtual lane (buffer lane of a link).
//! * [`Sl`]: a service level; in the engine, the traffic class of a packet.
//!
//! [`Vl`] and [`Sl`] are defined in `flitsim_topology` (the fabric manager's tables use them
//! too) and re-exported here.
//! * [`PacketId`]: a packet's slot in the packet slab.
//! * [`Cycle`]: simulated time. It stays a plain `u64`: it is added to latencies and flit counts
//!   in every hot-loop expression, and it is never used as an index, so a newtype would bring
//!   conversions without catching a real class of mix-ups.
use std::fmt;

pub use flitsim_topology::{Sl, Vl};

/// Simulated time in cycles (one flit on a width-1 link per cycle).
pub type Cycle = u64;

/// A cycle that never comes.
pub(crate) const NEVER: Cycle = u64::MAX;

macro_rules! id {
    ($(#[$m:meta])* $name:ident($t:ty)) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub $t);

        impl $name {
            /// The index as a `usize`, for indexing the engine's arrays.
            #[inline(always)]
            pub fn idx(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id!(
    /// A port of the engine, numbered globally (switch ports, then one NIC port per endpoint).
    PortIdx(u32)
);
id!(
    /// A packet's slot in the packet slab.
    PacketId(u32)
);

impl PortIdx {
    /// No port (an unconnected port's peer).
    pub const NONE: PortIdx = PortIdx(u32::MAX);
}

impl PacketId {
    /// No packet.
    pub const NONE: PacketId = PacketId(u32::MAX);
}
