//! Closed-loop replay of MPI traces: the program a trace describes ([`TraceProgram`]), its
//! VEF reader ([`vef`]), the expansion of collectives into point-to-point steps
//! ([`collectives`]), and the replay state the engine drives ([`Replay`]).
//!
//! A trace is a set of *records* per task: point-to-point messages (sent by their source task)
//! and participations in collective operations. Each record is released by one event of its
//! own task — nothing (an absolute time), a message this task sent, a message it received, or
//! a collective it finished — plus a delay (the compute time in between). The engine injects a
//! released message at its source endpoint when the delay has passed; a message is *sent* when
//! its last flit has left the source NIC and *received* when its last flit reaches the
//! destination; a task has *finished* a collective when its last step is done. Congestion
//! therefore delays every later record: the replay is closed loop.
pub mod collectives;
pub mod vef;

pub mod state;

pub use collectives::{expand, CollectiveOp, Step};
pub use state::Replay;

/// What releases a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dep {
    /// Nothing: released at time 0 (the record's delay is then its absolute time).
    Start,
    /// The task sent point-to-point message `id`.
    Sent(u32),
    /// The task received point-to-point message `id`.
    Received(u32),
    /// The task finished its part of collective `id`.
    Collective(u32),
}

/// A point-to-point message of the trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// Sending task.
    pub src: u32,
    /// Receiving task.
    pub dst: u32,
    /// Payload, bytes.
    pub bytes: u64,
    /// What releases it (an event of `src`).
    pub dep: Dep,
    /// Delay after that event, cycles.
    pub delay: u64,
}

/// One task's part of a collective operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Participation {
    /// The task.
    pub task: u32,
    /// Bytes it sends / receives (their meaning depends on the operation; see
    /// [`CollectiveOp`]).
    pub send_bytes: u64,
    /// Bytes it receives.
    pub recv_bytes: u64,
    /// What releases it (an event of `task`).
    pub dep: Dep,
    /// Delay after that event, cycles.
    pub delay: u64,
}

/// A collective operation: its communicator's tasks and every participation.
#[derive(Clone, Debug, PartialEq)]
pub struct Collective {
    /// The operation.
    pub op: CollectiveOp,
    /// The communicator's tasks, in communicator order (ranks within it).
    pub comm: Vec<u32>,
    /// One participation per task of the communicator, in communicator order.
    pub parts: Vec<Participation>,
}

/// A trace, with times in cycles and sizes in bytes (converted to flits by the engine with its
/// flit size): in memory (its lists of messages and collectives), or streamed from a file
/// ([`vef::open_scaled`]: the lists are empty and `stream` says how to read it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceProgram {
    /// Number of tasks.
    pub tasks: u32,
    /// Point-to-point messages by index (in the order of the file).
    pub messages: Vec<Message>,
    /// Collectives by index (in the order their first line comes in the file).
    pub collectives: Vec<Collective>,
    /// A digest of the file's text (for the configuration hash).
    pub digest: u64,
    /// The file the replay streams the records from, when they are not in the lists.
    pub stream: Option<std::sync::Arc<vef::StreamPlan>>,
}

impl TraceProgram {
    /// Bytes of all point-to-point messages.
    pub fn p2p_bytes(&self) -> u64 {
        match &self.stream {
            Some(s) => s.bytes,
            None => self.messages.iter().map(|m| m.bytes).sum(),
        }
    }

    /// Number of point-to-point messages.
    pub fn message_count(&self) -> u64 {
        self.stream
            .as_ref()
            .map_or(self.messages.len() as u64, |s| s.messages)
    }

    /// Number of collective operations.
    pub fn collective_count(&self) -> u64 {
        self.stream
            .as_ref()
            .map_or(self.collectives.len() as u64, |s| s.collectives)
    }
}

/// A hasher for the integer keys of the replay's maps (record indexes and ids): one
/// multiplication, where the standard hasher's SipHash costs more than the rest of an event.
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// A map keyed by record index or id.
pub(crate) type IdMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<IdHasher>>;

/// A record of the trace, ordered as the replay releases records that fall due together:
/// messages by index, then participations by collective and communicator rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Rec {
    /// Point-to-point message (index).
    Msg(u32),
    /// Participation of communicator rank `rank` in collective `coll`.
    Part { coll: u32, rank: u32 },
}
