//! The replay state: which records are released, which collective rounds run, and when every
//! task finishes. The engine asks it for the transfers due at a cycle ([`Replay::due`]) and
//! tells it when a transfer has been sent ([`Replay::on_sent`]) or received
//! ([`Replay::on_received`]).
use super::collectives::{expand, Step};
use super::{Dep, TraceProgram};
use crate::ids::Cycle;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

/// A record of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Rec {
    /// Point-to-point message (index).
    Msg(u32),
    /// Participation of communicator rank `rank` in collective `coll`.
    Part { coll: u32, rank: u32 },
}

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

/// What a transfer is.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Msg(u32),
    /// A step of collective `coll`, round `round`, from rank `from` to rank `to`.
    Step {
        coll: u32,
        round: u32,
        from: u32,
        to: u32,
    },
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

/// The state of a trace being replayed.
pub struct Replay {
    program: Arc<TraceProgram>,
    /// Per collective, per rank, its rounds of steps.
    rounds: Vec<Vec<Vec<Vec<Step>>>>,
    /// Records released by each message having been sent / received / each (collective,
    /// rank) finished, by index.
    on_sent: Vec<Vec<Rec>>,
    on_recv: Vec<Vec<Rec>>,
    on_coll: Vec<Vec<Vec<Rec>>>,
    ranks: Vec<Vec<RankState>>,
    /// Endpoint of each task.
    endpoint: Vec<u32>,
    flit_bytes: u64,
    queue: BinaryHeap<Reverse<(Cycle, u64, Action)>>,
    seq: u64,
    kinds: Vec<Kind>,
    /// Records of each task not yet complete, and when each task finished.
    remaining: Vec<u64>,
    finish: Vec<Option<Cycle>>,
    unfinished: u32,
    /// Transfers whose source and destination share an endpoint, completed at once.
    local: Vec<(u32, Cycle)>,
    /// Latency of every transfer (injection → last flit received), cycles.
    pub(crate) latency: crate::stats::FlowLatency,
    release_time: Vec<Cycle>,
    /// Transfers injected, bytes of the point-to-point messages.
    pub(crate) transfers: u64,
}

impl Replay {
    /// The replay of `program` with task `t` on endpoint `endpoint[t]` and flits of
    /// `flit_bytes` bytes.
    pub fn new(program: Arc<TraceProgram>, endpoint: Vec<u32>, flit_bytes: u32) -> Self {
        let tasks = program.tasks as usize;
        let mut on_sent = vec![Vec::new(); program.messages.len()];
        let mut on_recv = vec![Vec::new(); program.messages.len()];
        let mut on_coll: Vec<Vec<Vec<Rec>>> = program
            .collectives
            .iter()
            .map(|c| vec![Vec::new(); c.comm.len()])
            .collect();
        let mut remaining = vec![0u64; tasks];
        let mut starts = Vec::new();
        let mut add = |dep: Dep, task: u32, rec: Rec, delay: Cycle| match dep {
            Dep::Start => starts.push((delay, rec)),
            Dep::Sent(m) => on_sent[m as usize].push(rec),
            Dep::Received(m) => on_recv[m as usize].push(rec),
            Dep::Collective(c) => {
                let rank = program.collectives[c as usize]
                    .comm
                    .iter()
                    .position(|&x| x == task)
                    .expect("the reader checked membership");
                on_coll[c as usize][rank].push(rec)
            }
        };
        for (i, m) in program.messages.iter().enumerate() {
            add(m.dep, m.src, Rec::Msg(i as u32), m.delay);
            remaining[m.src as usize] += 1;
            remaining[m.dst as usize] += 1;
        }
        for (c, coll) in program.collectives.iter().enumerate() {
            for (rank, p) in coll.parts.iter().enumerate() {
                let rec = Rec::Part {
                    coll: c as u32,
                    rank: rank as u32,
                };
                add(p.dep, p.task, rec, p.delay);
                remaining[p.task as usize] += 1;
            }
        }
        let rounds: Vec<_> = program.collectives.iter().map(expand).collect();
        let ranks = program
            .collectives
            .iter()
            .map(|c| vec![RankState::default(); c.comm.len()])
            .collect();
        let finish: Vec<Option<Cycle>> = remaining
            .iter()
            .map(|&r| if r == 0 { Some(0) } else { None })
            .collect();
        let unfinished = finish.iter().filter(|f| f.is_none()).count() as u32;
        let kinds = (0..program.messages.len() as u32).map(Kind::Msg).collect();
        let mut r = Replay {
            release_time: vec![0; program.messages.len()],
            program,
            rounds,
            on_sent,
            on_recv,
            on_coll,
            ranks,
            endpoint,
            flit_bytes: flit_bytes.max(1) as u64,
            queue: BinaryHeap::new(),
            seq: 0,
            kinds,
            remaining,
            finish,
            unfinished,
            local: Vec::new(),
            latency: Default::default(),
            transfers: 0,
        };
        for (delay, rec) in starts {
            r.push(delay, Action::Release(rec));
        }
        r
    }

    fn push(&mut self, at: Cycle, a: Action) {
        self.queue.push(Reverse((at, self.seq, a)));
        self.seq += 1;
    }

    /// The cycle of the next pending action.
    pub fn next_time(&self) -> Option<Cycle> {
        self.queue.peek().map(|r| r.0 .0)
    }

    /// Every task has finished.
    pub fn done(&self) -> bool {
        self.unfinished == 0
    }

    /// Per task, the cycle it finished (`None`: not yet).
    pub fn finish(&self) -> &[Option<Cycle>] {
        &self.finish
    }

    /// The trace replayed.
    pub fn program(&self) -> &TraceProgram {
        &self.program
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
                    let msg = &self.program.messages[m as usize];
                    let (src, dst, bytes) = (msg.src, msg.dst, msg.bytes);
                    self.release_time[m as usize] = t;
                    self.inject(m, src, dst, bytes, t, out);
                }
                Action::Release(Rec::Part { coll, rank }) => {
                    self.ranks[coll as usize][rank as usize].started = true;
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
        let (c, r) = (coll as usize, rank as usize);
        if round as usize >= self.rounds[c][r].len() {
            self.finish_collective(coll, rank, t);
            return;
        }
        let steps = self.rounds[c][r][round as usize].clone();
        let comm = &self.program.collectives[c].comm;
        let sends: Vec<(u32, u32, u64, u32)> = steps
            .iter()
            .filter_map(|s| match *s {
                Step::Send { peer, bytes } => Some((comm[r], comm[peer as usize], bytes, peer)),
                Step::Recv { .. } => None,
            })
            .collect();
        let st = &mut self.ranks[c][r];
        st.round = round;
        st.sends_left = sends.len() as u32;
        for (a, b, bytes, peer) in sends {
            let id = self.kinds.len() as u32;
            self.kinds.push(Kind::Step {
                coll,
                round,
                from: rank,
                to: peer,
            });
            self.release_time.push(t);
            self.inject(id, a, b, bytes, t, out);
        }
        self.check_round(coll, rank, t, out);
    }

    /// Moves `rank` past its current round of `coll` when every send has been sent and every
    /// receive received.
    fn check_round(&mut self, coll: u32, rank: u32, t: Cycle, out: &mut Vec<Injection>) {
        let (c, r) = (coll as usize, rank as usize);
        let st = &self.ranks[c][r];
        if !st.started || st.done {
            return;
        }
        let round = st.round as usize;
        let recvs = self.rounds[c][r][round]
            .iter()
            .filter(|s| matches!(s, Step::Recv { .. }))
            .count() as u32;
        let got = st.received.get(round).copied().unwrap_or(0);
        if st.sends_left == 0 && got >= recvs {
            self.start_round(coll, rank, round as u32 + 1, t, out);
        }
    }

    fn finish_collective(&mut self, coll: u32, rank: u32, t: Cycle) {
        let (c, r) = (coll as usize, rank as usize);
        self.ranks[c][r].done = true;
        let task = self.program.collectives[c].comm[r];
        let deps = std::mem::take(&mut self.on_coll[c][r]);
        self.release_all(&deps, t);
        self.complete(task, t);
    }

    fn release_all(&mut self, recs: &[Rec], t: Cycle) {
        for &rec in recs {
            let delay = match rec {
                Rec::Msg(m) => self.program.messages[m as usize].delay,
                Rec::Part { coll, rank } => {
                    self.program.collectives[coll as usize].parts[rank as usize].delay
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

    /// Transfer `id` has left its source NIC (its last flit) at `t`.
    pub fn on_sent(&mut self, id: u32, t: Cycle, out: &mut Vec<Injection>) {
        match self.kinds[id as usize] {
            Kind::Msg(m) => {
                let deps = std::mem::take(&mut self.on_sent[m as usize]);
                self.release_all(&deps, t);
                let src = self.program.messages[m as usize].src;
                self.complete(src, t);
            }
            Kind::Step { coll, from, .. } => {
                self.ranks[coll as usize][from as usize].sends_left -= 1;
                self.check_round(coll, from, t, out);
            }
        }
        self.settle_local(t, out);
    }

    /// Transfer `id` has been received (its last flit) at `t`; `gen` is the cycle it was
    /// queued at its source.
    pub fn on_received(&mut self, id: u32, t: Cycle, _gen: Cycle, out: &mut Vec<Injection>) {
        self.received(id, t, true, out);
    }

    fn received(&mut self, id: u32, t: Cycle, network: bool, out: &mut Vec<Injection>) {
        if network {
            self.latency
                .add(t.saturating_sub(self.release_time[id as usize]));
        }
        match self.kinds[id as usize] {
            Kind::Msg(m) => {
                let deps = std::mem::take(&mut self.on_recv[m as usize]);
                self.release_all(&deps, t);
                let dst = self.program.messages[m as usize].dst;
                self.complete(dst, t);
            }
            Kind::Step {
                coll, round, to, ..
            } => {
                let st = &mut self.ranks[coll as usize][to as usize];
                if st.received.len() <= round as usize {
                    st.received.resize(round as usize + 1, 0);
                }
                st.received[round as usize] += 1;
                self.check_round(coll, to, t, out);
            }
        }
        self.settle_local(t, out);
    }

    /// The result record of the replay so far.
    pub fn result(&self) -> crate::stats::TraceResult {
        let complete = self.done();
        crate::stats::TraceResult {
            tasks: self.program.tasks,
            messages: self.program.messages.len() as u64,
            bytes: self.program.p2p_bytes(),
            collectives: self.program.collectives.len() as u64,
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
