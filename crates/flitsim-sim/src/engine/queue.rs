//! The packets queued in one VL of a buffer, and the discipline that says which may move next.
//!
//! Every input buffer, Omni-Path central buffer and output buffer of a switch holds one
//! [`VlQueue`] per VL. The allocator never looks inside a queue: it asks for the
//! [`head`](VlQueue::head), the packet the discipline lets move next. Today the only
//! discipline is FIFO (InfiniBand and Omni-Path VLs are FIFOs); deadline-based QoS adds
//! ordered + take-over and heap queues here, as new [`Discipline`] variants, without touching
//! the allocator.
use crate::ids::{Cycle, PacketId, Vl};
use flitsim_topology::PortNum;
use std::collections::VecDeque;

/// A packet (partly) held in a VL buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BufPkt {
    pub pkt: PacketId,
    /// Packet length, flits.
    pub len: u16,
    /// Flits received so far.
    pub recv: u16,
    /// Flits forwarded so far.
    pub sent: u16,
    /// The port of this switch it leaves by, and the VL it takes there.
    pub out_port: PortNum,
    pub out_vl: Vl,
    /// Holds a crossbar connection (or, in an output buffer, the link).
    pub busy: bool,
    /// Cycle its head arrived.
    pub arrived: Cycle,
    /// First cycle it may request the crossbar (`NEVER` while it is not the head).
    pub ready: Cycle,
}

impl BufPkt {
    /// Flits still to forward.
    #[inline(always)]
    pub fn remaining(&self) -> u32 {
        (self.len - self.sent) as u32
    }
    /// Flits present and not yet forwarded.
    #[inline(always)]
    pub fn present(&self) -> u32 {
        (self.recv - self.sent) as u32
    }
}

/// Which packet of a VL queue may move next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Discipline {
    /// First in, first out.
    #[default]
    Fifo,
}

/// The packets of one VL of one buffer.
#[derive(Clone, Debug, Default)]
pub(crate) struct VlQueue {
    pkts: VecDeque<BufPkt>,
    discipline: Discipline,
}

impl VlQueue {
    /// An empty queue with the given discipline.
    pub fn new(discipline: Discipline) -> Self {
        VlQueue {
            pkts: VecDeque::new(),
            discipline,
        }
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.pkts.is_empty()
    }

    /// The packet the discipline lets move next.
    #[inline(always)]
    pub fn head(&self) -> Option<&BufPkt> {
        match self.discipline {
            Discipline::Fifo => self.pkts.front(),
        }
    }

    #[inline(always)]
    pub fn head_mut(&mut self) -> Option<&mut BufPkt> {
        match self.discipline {
            Discipline::Fifo => self.pkts.front_mut(),
        }
    }

    /// Removes the head (its tail has left) and returns the new head.
    #[inline]
    pub fn pop_head(&mut self) -> Option<&mut BufPkt> {
        match self.discipline {
            Discipline::Fifo => {
                self.pkts.pop_front();
                self.pkts.front_mut()
            }
        }
    }

    /// A new packet's head flits arrive. Returns whether it is the head at once.
    #[inline]
    pub fn push(&mut self, b: BufPkt) -> bool {
        match self.discipline {
            Discipline::Fifo => {
                self.pkts.push_back(b);
                self.pkts.len() == 1
            }
        }
    }

    /// `n` more flits of packet `pkt`, the one being received (flits of different packets
    /// never interleave on a VL of a link), arrive.
    #[inline]
    pub fn receive(&mut self, pkt: PacketId, n: u16) {
        let b = self.pkts.back_mut().expect("body flit follows its head");
        debug_assert_eq!(b.pkt, pkt);
        b.recv += n;
    }

    /// Every packet in the queue (in no particular order).
    pub fn iter(&self) -> impl Iterator<Item = &BufPkt> {
        self.pkts.iter()
    }
}
