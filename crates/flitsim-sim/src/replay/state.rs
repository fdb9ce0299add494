//! The replay state: which records are released, which collective rounds run, and when every
//! task finishes. The engine asks it for the transfers due at a cycle ([`Replay::due`]) and
//! tells it when a transfer has been sent ([`Replay::on_sent`]) or received
//! ([`Replay::on_received`]).
//!
//! The state holds only the records in flight: a message from when it is read until it has
//! been sent and received, a collective until every rank has finished it. A streamed trace
//! ([`super::vef::StreamPlan`]) is read as the replay goes: after an event of message `m`
//! (collective `g`), up to the last record that may depend on it (the plan's look-back), so
//! that every record is known before the event that releases it; a record released at an
//! absolute time is read when that time comes. An in-memory trace is taken whole at the start.
//! Records falling due together are released in [`Rec`] order either way, so the two give the
//! same runs.
use super::collectives::{expand, Step};
use super::vef::{Reader, Record};
use super::IdMap;
use super::{Collective, Dep, Message, Participation, Rec, TraceProgram};
use crate::ids::Cycle;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

/// What to do at a cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Action {
    /// A record's delay has passed: inject the message, or start the collective.
    Release(Rec),
}

/// A transfer the engine must inject: transfer id, source and destination endpoints, flits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Injection {
    /// Transfer id (point-to-point messages keep their index; collective steps follow).
    pub id: u32,
    /// Source endpoint.
    pub src: u32,
    /// Destination endpoint.
    pub dst: u32,
    /// Size, flits (at least 1).
    pub flits: u32,
}

/// A step of collective `coll`, round `round`, from rank `from` to rank `to`.
#[derive(Clone, Copy, Debug)]
struct StepKind {
    coll: u32,
    round: u32,
    from: u32,
    to: u32,
}

/// A rank's progress in a collective.
#[derive(Clone, Debug, Default)]
struct RankState {
    started: bool,
    round: u32,
    /// Sends of the current round not yet sent.
    sends_left: u32,
    /// Receives that arrived, per round (they may arrive before the rank gets there).
    received: Vec<u32>,
    done: bool,
}

/// A message read and not yet both sent and received.
#[derive(Debug)]
struct MsgState {
    /// VEF id (for the read-ahead).
    id: u64,
    msg: Message,
    /// Records released by its send / its receive.
    on_sent: Vec<Rec>,
    on_recv: Vec<Rec>,
    sent: bool,
    received: bool,
}

/// A collective read (perhaps not whole yet) and not finished by every rank.
#[derive(Debug)]
struct CollState {
    id: u64,
    coll: Collective,
    /// Participations by communicator rank, until all are read.
    parts: Vec<Option<Participation>>,
    read: u32,
    /// Per rank, its rounds of steps (once whole).
    rounds: Vec<Vec<Vec<Step>>>,
    ranks: Vec<RankState>,
    /// Records released by each rank finishing it.
    on_coll: Vec<Vec<Rec>>,
    finished: u32,
}

impl CollState {
    fn whole(&self) -> bool {
        self.read as usize == self.parts.len()
    }
}

/// Where records come from.
enum Source {
    /// Everything has been read.
    Done,
    /// A checked VEF file, and the look-back (message ids, collective ids).
    File {
        reader: Box<Reader<std::io::BufReader<std::fs::File>>>,
        look: (u64, u64),
    },
}

/// The state of a trace being replayed.
pub struct Replay {
    source: Source,
    /// Why the streamed trace could not be read on (it changed after it was checked).
    failure: Option<String>,
    tasks: u32,
    n_messages: u64,
    n_collectives: u64,
    bytes: u64,
    msgs: IdMap<u32, MsgState>,
    colls: IdMap<u32, CollState>,
    /// Messages read so far (the next index), the last message / collective id read.
    msgs_read: u32,
    last_msg_id: Option<u64>,
    last_coll_id: Option<u64>,
    /// Endpoint of each task.
    endpoint: Vec<u32>,
    flit_bytes: u64,
    queue: BinaryHeap<Reverse<(Cycle, u64, Action)>>,
    seq: u64,
    /// Collective steps in flight by transfer id, and the next such id.
    steps: IdMap<u32, StepKind>,
    next_step: u32,
    /// Records of each task not yet complete, and when each task finished.
    remaining: Vec<u64>,
    finish: Vec<Option<Cycle>>,
    unfinished: u32,
    /// Transfers whose source and destination share an endpoint, completed at once.
    local: Vec<(u32, Cycle)>,
    /// Latency of every transfer (injection → last flit received), cycles.
    pub(crate) latency: crate::stats::FlowLatency,
    release_time: IdMap<u32, Cycle>,
    /// Transfers injected, bytes of the point-to-point messages.
    pub(crate) transfers: u64,
}

impl Replay {
    /// The replay of `program` with task `t` on endpoint `endpoint[t]` and flits of
    /// `flit_bytes` bytes.
    pub fn new(
        program: Arc<TraceProgram>,
        endpoint: Vec<u32>,
        flit_bytes: u32,
    ) -> Result<Self, String> {
        let tasks = program.tasks as usize;
        let mut r = Replay {
            source: Source::Done,
            failure: None,
            tasks: program.tasks,
            n_messages: program.message_count(),
            n_collectives: program.collective_count(),
            bytes: program.p2p_bytes(),
            msgs: IdMap::default(),
            colls: IdMap::default(),
            msgs_read: 0,
            last_msg_id: None,
            last_coll_id: None,
            endpoint,
            flit_bytes: flit_bytes.max(1) as u64,
            queue: BinaryHeap::new(),
            seq: 0,
            steps: IdMap::default(),
            next_step: program.message_count() as u32,
            remaining: vec![0; tasks],
            finish: Vec::new(),
            unfinished: 0,
            local: Vec::new(),
            latency: Default::default(),
            release_time: IdMap::default(),
            transfers: 0,
        };
        let mut starts: Vec<(Rec, Cycle)> = Vec::new();
        match &program.stream {
            Some(plan) => {
                r.remaining.clone_from(&plan.per_task);
                starts.clone_from(&plan.starts);
                r.source = Source::File {
                    reader: Box::new(plan.reopen()?),
                    look: (plan.look_msgs, plan.look_colls),
                };
            }
            None => {
                // The whole trace: create every record's state, then link the dependencies
                // (a message may depend on a collective that comes later in the lists).
                let mut records = Vec::new();
                for (i, m) in program.messages.iter().enumerate() {
                    records.push(Record::Msg {
                        index: i as u32,
                        id: i as u64,
                        msg: m.clone(),
                    });
                }
                for (c, coll) in program.collectives.iter().enumerate() {
                    let comm = Arc::new(coll.comm.clone());
                    for (rank, p) in coll.parts.iter().enumerate() {
                        records.push(Record::Part {
                            coll: c as u32,
                            id: c as u64,
                            op: coll.op,
                            comm: comm.clone(),
                            rank: rank as u32,
                            part: p.clone(),
                        });
                    }
                }
                for rec in &records {
                    r.create(rec.clone());
                    match rec {
                        Record::Msg { index, msg, .. } => {
                            r.remaining[msg.src as usize] += 1;
                            r.remaining[msg.dst as usize] += 1;
                            if msg.dep == Dep::Start {
                                starts.push((Rec::Msg(*index), msg.delay));
                            }
                        }
                        Record::Part {
                            coll, rank, part, ..
                        } => {
                            r.remaining[part.task as usize] += 1;
                            if part.dep == Dep::Start {
                                let rec = Rec::Part {
                                    coll: *coll,
                                    rank: *rank,
                                };
                                starts.push((rec, part.delay));
                            }
                        }
                    }
                }
                for rec in &records {
                    r.link(rec);
                }
            }
        }
        r.finish = r
            .remaining
            .iter()
            .map(|&n| if n == 0 { Some(0) } else { None })
            .collect();
        r.unfinished = r.finish.iter().filter(|f| f.is_none()).count() as u32;
        for (rec, delay) in starts {
            r.push(delay, Action::Release(rec));
        }
        Ok(r)
    }

    /// Adds a record read to the state (without its dependency).
    fn create(&mut self, rec: Record) {
        match rec {
            Record::Msg { index, id, msg } => {
                self.msgs_read = index + 1;
                self.last_msg_id = Some(id);
                self.msgs.insert(
                    index,
                    MsgState {
                        id,
                        msg,
                        on_sent: Vec::new(),
                        on_recv: Vec::new(),
                        sent: false,
                        received: false,
                    },
                );
            }
            Record::Part {
                coll,
                id,
                op,
                comm,
                rank,
                part,
            } => {
                self.last_coll_id = Some(id);
                let n = comm.len();
                let c = self.colls.entry(coll).or_insert_with(|| CollState {
                    id,
                    coll: Collective {
                        op,
                        comm: comm.to_vec(),
                        parts: Vec::new(),
                    },
                    parts: vec![None; n],
                    read: 0,
                    rounds: Vec::new(),
                    ranks: vec![RankState::default(); n],
                    on_coll: vec![Vec::new(); n],
                    finished: 0,
                });
                c.parts[rank as usize] = Some(part);
                c.read += 1;
                if c.whole() {
                    c.coll.parts = c.parts.iter().map(|p| p.clone().unwrap()).collect();
                    c.rounds = expand(&c.coll);
                }
            }
        }
    }

    /// Registers a record read with the record whose event releases it.
    fn link(&mut self, rec: &Record) {
        let (me, task, dep) = match rec {
            Record::Msg { index, msg, .. } => (Rec::Msg(*index), msg.src, msg.dep),
            Record::Part {
                coll, rank, part, ..
            } => (
                Rec::Part {
                    coll: *coll,
                    rank: *rank,
                },
                part.task,
                part.dep,
            ),
        };
        let gone = "the reader checked that a dependency names an earlier record";
        match dep {
            Dep::Start => {}
            Dep::Sent(m) => self.msgs.get_mut(&m).expect(gone).on_sent.push(me),
            Dep::Received(m) => self.msgs.get_mut(&m).expect(gone).on_recv.push(me),
            Dep::Collective(c) => {
                let cs = self.colls.get_mut(&c).expect(gone);
                let rank = cs
                    .coll
                    .comm
                    .iter()
                    .position(|&x| x == task)
                    .expect("the reader checked membership");
                cs.on_coll[rank].push(me);
            }
        }
    }

    /// Reads one more record of a streamed trace; false at the end.
    fn read_one(&mut self) -> bool {
        let Source::File { reader, .. } = &mut self.source else {
            return false;
        };
        let rec = match reader.next_record() {
            Ok(Some(rec)) => rec,
            Ok(None) => {
                self.source = Source::Done;
                return false;
            }
            Err(e) => {
                self.failure = Some(format!("the trace changed while being replayed: {e}"));
                self.source = Source::Done;
                return false;
            }
        };
        // The dependency is an earlier record: link before moving the record in.
        self.link(&rec);
        self.create(rec);
        true
    }

    /// Reads until no unread record can depend on message id `id` / collective id `id`.
    fn read_past(&mut self, msg_id: Option<u64>, coll_id: Option<u64>) {
        while let Source::File { look, .. } = self.source {
            let need_m = msg_id.is_some_and(|m| self.last_msg_id.is_none_or(|l| l <= m + look.0));
            let need_c = coll_id.is_some_and(|g| self.last_coll_id.is_none_or(|l| l <= g + look.1));
            if !(need_m || need_c) || !self.read_one() {
                break;
            }
        }
    }

    fn push(&mut self, at: Cycle, a: Action) {
        self.queue.push(Reverse((at, self.seq, a)));
        self.seq += 1;
    }

    /// The cycle of the next pending action.
    pub fn next_time(&self) -> Option<Cycle> {
        self.queue.peek().map(|r| r.0 .0)
    }

    /// Why reading the streamed trace failed during the run, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Every task has finished.
    pub fn done(&self) -> bool {
        self.unfinished == 0
    }

    /// Per task, the cycle it finished (`None`: not yet).
    pub fn finish(&self) -> &[Option<Cycle>] {
        &self.finish
    }

    /// The transfers due at `t`, appended to `out`.
    pub fn due(&mut self, t: Cycle, out: &mut Vec<Injection>) {
        while let Some(&Reverse((at, _, a))) = self.queue.peek() {
            if at > t {
                break;
            }
            self.queue.pop();
            match a {
                Action::Release(Rec::Msg(m)) => {
                    // A message released at an absolute time may not have been read yet.
                    while self.msgs_read <= m && self.read_one() {}
                    let msg = &self.msgs[&m].msg;
                    let (src, dst, bytes) = (msg.src, msg.dst, msg.bytes);
                    self.release_time.insert(m, t);
                    self.inject(m, src, dst, bytes, t, out);
                }
                Action::Release(Rec::Part { coll, rank }) => {
                    while !self.colls.get(&coll).is_some_and(|c| c.whole()) && self.read_one() {}
                    let c = self.colls.get_mut(&coll).expect("read above");
                    c.ranks[rank as usize].started = true;
                    self.start_round(coll, rank, 0, t, out);
                }
            }
            self.settle_local(t, out);
        }
    }

    fn inject(
        &mut self,
        id: u32,
        src: u32,
        dst: u32,
        bytes: u64,
        t: Cycle,
        out: &mut Vec<Injection>,
    ) {
        let (se, de) = (self.endpoint[src as usize], self.endpoint[dst as usize]);
        self.transfers += 1;
        if se == de {
            // Tasks sharing an endpoint talk through memory: sent and received at once.
            self.local.push((id, t));
            return;
        }
        let flits = bytes.div_ceil(self.flit_bytes).clamp(1, u32::MAX as u64) as u32;
        out.push(Injection {
            id,
            src: se,
            dst: de,
            flits,
        });
    }

    fn settle_local(&mut self, t: Cycle, out: &mut Vec<Injection>) {
        while let Some((id, at)) = self.local.pop() {
            self.on_sent(id, t.max(at), out);
            self.received(id, t.max(at), false, out);
        }
    }

    /// Starts `round` of `rank` in collective `coll` at `t`: injects its sends and checks
    /// whether it is already complete (no steps, or its receives arrived early).
    fn start_round(
        &mut self,
        coll: u32,
        rank: u32,
        round: u32,
        t: Cycle,
        out: &mut Vec<Injection>,
    ) {
        let r = rank as usize;
        let c = self.colls.get_mut(&coll).expect("in flight");
        if round as usize >= c.rounds[r].len() {
            self.finish_collective(coll, rank, t);
            return;
        }
        let comm = &c.coll.comm;
        let sends: Vec<(u32, u32, u64, u32)> = c.rounds[r][round as usize]
            .iter()
            .filter_map(|s| match *s {
                Step::Send { peer, bytes } => Some((comm[r], comm[peer as usize], bytes, peer)),
                Step::Recv { .. } => None,
            })
            .collect();
        let st = &mut c.ranks[r];
        st.round = round;
        st.sends_left = sends.len() as u32;
        for (a, b, bytes, peer) in sends {
            let id = self.next_step;
            self.next_step += 1;
            self.steps.insert(
                id,
                StepKind {
                    coll,
                    round,
                    from: rank,
                    to: peer,
                },
            );
            self.release_time.insert(id, t);
            self.inject(id, a, b, bytes, t, out);
        }
        self.check_round(coll, rank, t, out);
    }

    /// Moves `rank` past its current round of `coll` when every send has been sent and every
    /// receive received.
    fn check_round(&mut self, coll: u32, rank: u32, t: Cycle, out: &mut Vec<Injection>) {
        let r = rank as usize;
        let Some(c) = self.colls.get(&coll) else {
            return;
        };
        let st = &c.ranks[r];
        if !st.started || st.done {
            return;
        }
        let round = st.round as usize;
        let recvs = c.rounds[r][round]
            .iter()
            .filter(|s| matches!(s, Step::Recv { .. }))
            .count() as u32;
        let got = st.received.get(round).copied().unwrap_or(0);
        if st.sends_left == 0 && got >= recvs {
            self.start_round(coll, rank, round as u32 + 1, t, out);
        }
    }

    fn finish_collective(&mut self, coll: u32, rank: u32, t: Cycle) {
        let gid = self.colls[&coll].id;
        self.read_past(None, Some(gid));
        let c = self.colls.get_mut(&coll).expect("in flight");
        let r = rank as usize;
        c.ranks[r].done = true;
        c.finished += 1;
        let task = c.coll.comm[r];
        let deps = std::mem::take(&mut c.on_coll[r]);
        let all = c.finished as usize == c.ranks.len();
        self.release_all(deps, t);
        self.complete(task, t);
        if all {
            // Every step has been received: nothing refers to it any more.
            self.colls.remove(&coll);
        }
    }

    fn release_all(&mut self, mut recs: Vec<Rec>, t: Cycle) {
        if recs.is_empty() {
            return;
        }
        recs.sort_unstable();
        for rec in recs {
            let delay = match rec {
                Rec::Msg(m) => self.msgs[&m].msg.delay,
                Rec::Part { coll, rank } => {
                    let c = &self.colls[&coll];
                    match &c.parts[rank as usize] {
                        Some(p) => p.delay,
                        None => unreachable!("a linked participation has been read"),
                    }
                }
            };
            self.push(t + delay, Action::Release(rec));
        }
    }

    fn complete(&mut self, task: u32, t: Cycle) {
        let left = &mut self.remaining[task as usize];
        *left -= 1;
        if *left == 0 {
            self.finish[task as usize] = Some(t);
            self.unfinished -= 1;
        }
    }

    /// Forgets message `m` once it has been sent and received (nothing can depend on it any
    /// more: its dependents were read before its events).
    fn forget_msg(&mut self, m: u32) {
        if self.msgs.get(&m).is_some_and(|s| s.sent && s.received) {
            self.msgs.remove(&m);
        }
    }

    /// Transfer `id` has left its source NIC (its last flit) at `t`.
    pub fn on_sent(&mut self, id: u32, t: Cycle, out: &mut Vec<Injection>) {
        if (id as u64) < self.n_messages {
            let mid = self.msgs[&id].id;
            self.read_past(Some(mid), None);
            let s = self.msgs.get_mut(&id).expect("in flight");
            s.sent = true;
            let deps = std::mem::take(&mut s.on_sent);
            let src = s.msg.src;
            self.release_all(deps, t);
            self.complete(src, t);
            self.forget_msg(id);
        } else {
            let k = self.steps[&id];
            let c = self.colls.get_mut(&k.coll).expect("in flight");
            c.ranks[k.from as usize].sends_left -= 1;
            self.check_round(k.coll, k.from, t, out);
        }
        self.settle_local(t, out);
    }

    /// Transfer `id` has been received (its last flit) at `t`; `gen` is the cycle it was
    /// queued at its source.
    pub fn on_received(&mut self, id: u32, t: Cycle, _gen: Cycle, out: &mut Vec<Injection>) {
        self.received(id, t, true, out);
    }

    fn received(&mut self, id: u32, t: Cycle, network: bool, out: &mut Vec<Injection>) {
        let released = self.release_time.remove(&id).unwrap_or(0);
        if network {
            self.latency.add(t.saturating_sub(released));
        }
        if (id as u64) < self.n_messages {
            let mid = self.msgs[&id].id;
            self.read_past(Some(mid), None);
            let s = self.msgs.get_mut(&id).expect("in flight");
            s.received = true;
            let deps = std::mem::take(&mut s.on_recv);
            let dst = s.msg.dst;
            self.release_all(deps, t);
            self.complete(dst, t);
            self.forget_msg(id);
        } else {
            let k = self.steps.remove(&id).expect("a step in flight");
            let c = self.colls.get_mut(&k.coll).expect("in flight");
            let st = &mut c.ranks[k.to as usize];
            if st.received.len() <= k.round as usize {
                st.received.resize(k.round as usize + 1, 0);
            }
            st.received[k.round as usize] += 1;
            self.check_round(k.coll, k.to, t, out);
        }
        self.settle_local(t, out);
    }

    /// The result record of the replay so far.
    pub fn result(&self) -> crate::stats::TraceResult {
        let complete = self.done();
        crate::stats::TraceResult {
            tasks: self.tasks,
            messages: self.n_messages,
            bytes: self.bytes,
            collectives: self.n_collectives,
            transfers: self.transfers,
            complete,
            execution_time: complete
                .then(|| self.finish.iter().flatten().copied().max().unwrap_or(0)),
            finish: self.finish.clone(),
            message_latency: self.latency.summary(),
            execution_time_ns: None,
        }
    }
}
