//! Typed lane identifiers shared by the fabric manager and the simulator.
//!
//! * [`Vl`]: a virtual lane (buffer lane of a link).
//! * [`Sl`]: a service level, carried end to end; in the simulator, also the traffic class of a
//!   packet.
//!
//! Both are `Copy` newtypes over `u8`; `.idx()` gives the `usize` for indexing.
use std::fmt;

/// A virtual lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Vl(pub u8);

/// A service level (the packet's traffic class in the simulator).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Sl(pub u8);

impl Vl {
    /// No VL (an output port with no packet on its link).
    pub const NONE: Vl = Vl(u8::MAX);

    /// The VL as a `usize`, for indexing.
    #[inline(always)]
    pub fn idx(self) -> usize {
        self.0 as usize
    }

    /// The bit of this VL in a per-port VL mask.
    #[inline(always)]
    pub fn bit(self) -> u32 {
        1 << self.0
    }
}

impl Sl {
    /// The SL as a `usize`, for indexing.
    #[inline(always)]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Vl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for Sl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
