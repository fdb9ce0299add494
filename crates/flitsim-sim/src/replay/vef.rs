//! The VEF trace format (see `TRACES.md` of the project's shared data, and `docs/traces.md`):
//! a header, communicator lines, then point-to-point and collective records with their
//! dependencies, times in nanoseconds. Errors name the origin and the line.
//!
//! Two ways in:
//! - [`read`] / [`read_scaled`] build the whole trace in memory (a [`TraceProgram`] with its
//!   lists of messages and collectives), checking as they go that every dependency names an
//!   earlier record of the right task;
//! - [`open_scaled`] streams a file: it goes through the text twice before the run, holding
//!   only what is in flight, and the replay reads it a third time as it needs records
//!   ([`StreamPlan`]). The first pass ([`Mode::Scan`]) counts the records of every task,
//!   keeps the records released at an absolute time, and measures how far back a dependency
//!   reaches in record ids (the *look-back*); the second ([`Mode::Check`]) makes every check
//!   of the in-memory reader, keeping only the records within the look-back and the
//!   collectives still incomplete. The replay then reads ahead only as far as a dependency
//!   can reach: after message `m`'s send or receive, up to message id `m + look-back`.
use super::{Collective, CollectiveOp, Dep, Message, Participation, Rec, TraceProgram};
use std::collections::{HashMap, VecDeque};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Reads a VEF trace from `input` (`origin` names it in errors). Times become cycles of
/// `cycle_ns` nanoseconds, rounded up.
pub fn read(input: impl BufRead, origin: &str, cycle_ns: f64) -> Result<TraceProgram, String> {
    read_scaled(input, origin, cycle_ns, 1.0)
}

/// [`read`] with every time (delays and absolute start times) multiplied by `scale` ≥ 0
/// before rounding: 0 replays the communication alone, without the compute phases.
pub fn read_scaled(
    input: impl BufRead,
    origin: &str,
    cycle_ns: f64,
    scale: f64,
) -> Result<TraceProgram, String> {
    let mut r = Reader::new(input, origin, cycle_ns, scale, Mode::Memory);
    let mut program = TraceProgram::default();
    while let Some(rec) = r.next_record()? {
        match rec {
            Record::Msg { msg, .. } => program.messages.push(msg),
            Record::Part {
                coll,
                comm,
                op,
                part,
                ..
            } => {
                if coll as usize == program.collectives.len() {
                    program.collectives.push(Collective {
                        op,
                        comm: comm.to_vec(),
                        parts: Vec::new(),
                    });
                }
                program.collectives[coll as usize].parts.push(part);
            }
        }
    }
    r.finish()?;
    for c in &mut program.collectives {
        let rank: HashMap<u32, usize> = c.comm.iter().enumerate().map(|(i, &t)| (t, i)).collect();
        c.parts.sort_by_key(|p| rank[&p.task]);
    }
    program.tasks = r.tasks;
    program.digest = r.digest;
    Ok(program)
}

/// What [`open_scaled`] learnt of a VEF file for the replay to stream it.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamPlan {
    /// The file and the name errors give it.
    pub path: PathBuf,
    pub(crate) origin: String,
    pub(crate) cycle_ns: f64,
    pub(crate) scale: f64,
    /// Point-to-point messages, collectives, bytes of the messages.
    pub messages: u64,
    /// Collective operations.
    pub collectives: u64,
    /// Bytes of the point-to-point messages.
    pub bytes: u64,
    /// Records of each task (messages count for their source and their destination).
    pub(crate) per_task: Vec<u64>,
    /// The records released at an absolute time, in [`Rec`] order, with that time (cycles).
    pub(crate) starts: Vec<(Rec, u64)>,
    /// How many message ids / collective ids back a dependency reaches at most.
    pub(crate) look_msgs: u64,
    pub(crate) look_colls: u64,
}

/// Opens the VEF file `path` for streaming (`origin` names it in errors): two passes that
/// check it as [`read_scaled`] does and measure it, holding only what is in flight. The
/// returned program has empty lists and a [`StreamPlan`].
pub fn open_scaled(
    path: &Path,
    origin: &str,
    cycle_ns: f64,
    scale: f64,
) -> Result<TraceProgram, String> {
    let open = || {
        std::fs::File::open(path)
            .map(std::io::BufReader::new)
            .map_err(|e| format!("{origin}: {e}"))
    };
    // Pass 1: counts, absolute starts, look-back.
    let mut r = Reader::new(open()?, origin, cycle_ns, scale, Mode::Scan);
    let mut starts = Vec::new();
    while let Some(rec) = r.next_record()? {
        if let Some(s) = rec.start() {
            starts.push(s);
        }
    }
    r.finish()?;
    starts.sort();
    let (tasks, digest) = (r.tasks, r.digest);
    let mut plan = StreamPlan {
        path: path.to_path_buf(),
        origin: origin.to_string(),
        cycle_ns,
        scale,
        messages: r.n_msgs as u64,
        collectives: r.n_colls as u64,
        bytes: r.bytes,
        per_task: std::mem::take(&mut r.per_task),
        starts,
        look_msgs: r.look_msgs,
        look_colls: r.look_colls,
    };
    // Pass 2: every check, with the look-back as window.
    let mut r = plan.reader(open()?, Mode::Check);
    while r.next_record()?.is_some() {}
    r.finish()?;
    plan.path = path.to_path_buf();
    Ok(TraceProgram {
        tasks,
        digest,
        stream: Some(Arc::new(plan)),
        ..Default::default()
    })
}

impl StreamPlan {
    pub(crate) fn reader<R: BufRead>(&self, input: R, mode: Mode) -> Reader<R> {
        let mut r = Reader::new(input, &self.origin, self.cycle_ns, self.scale, mode);
        r.window = Some((self.look_msgs, self.look_colls));
        r
    }

    /// The file again, for the replay (checked already).
    pub(crate) fn reopen(&self) -> Result<Reader<std::io::BufReader<std::fs::File>>, String> {
        let f = std::fs::File::open(&self.path).map_err(|e| {
            format!(
                "{}: cannot reopen the trace for its replay: {e}",
                self.origin
            )
        })?;
        let mut r = self.reader(std::io::BufReader::new(f), Mode::Check);
        r.digesting = false;
        Ok(r)
    }
}

/// What a [`Reader`] keeps and checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Everything, forever (the in-memory reader).
    Memory,
    /// Counts and look-back; dependencies checked only against the ids seen so far.
    Scan,
    /// Every check, keeping the records within the look-back window.
    Check,
}

/// One record of the body, dependencies resolved to indexes (messages and collectives
/// numbered from 0 in the order of the file).
#[derive(Clone, Debug)]
pub(crate) enum Record {
    Msg {
        index: u32,
        id: u64,
        msg: Message,
    },
    Part {
        coll: u32,
        id: u64,
        op: CollectiveOp,
        comm: Arc<Vec<u32>>,
        rank: u32,
        part: Participation,
    },
}

impl Record {
    /// The record and its time when it is released at an absolute time.
    fn start(&self) -> Option<(Rec, u64)> {
        match self {
            Record::Msg { index, msg, .. } if msg.dep == Dep::Start => {
                Some((Rec::Msg(*index), msg.delay))
            }
            Record::Part {
                coll, rank, part, ..
            } if part.dep == Dep::Start => Some((
                Rec::Part {
                    coll: *coll,
                    rank: *rank,
                },
                part.delay,
            )),
            _ => None,
        }
    }
}

/// A message as later records see it.
#[derive(Clone, Copy, Debug)]
struct MsgInfo {
    index: u32,
    src: u32,
    dst: u32,
}

/// A collective as later records see it.
#[derive(Clone, Debug)]
struct CollInfo {
    index: u32,
    op: CollectiveOp,
    comm: usize,
    /// Which ranks of the communicator have their participation line.
    seen: Vec<bool>,
    parts: u32,
}

pub(crate) struct Reader<R> {
    input: R,
    buf: String,
    origin: String,
    cycle_ns: f64,
    scale: f64,
    mode: Mode,
    pub(crate) line: usize,
    pub(crate) tasks: u32,
    comms: Vec<Arc<Vec<u32>>>,
    /// Messages / collectives by VEF id (within the window in `Check` mode) and their ids in
    /// file order for the window.
    msgs: super::IdMap<u64, MsgInfo>,
    msg_order: VecDeque<u64>,
    colls: super::IdMap<u64, CollInfo>,
    coll_order: VecDeque<u64>,
    pub(crate) last_msg_id: Option<u64>,
    pub(crate) last_coll_id: Option<u64>,
    pub(crate) n_msgs: u32,
    pub(crate) n_colls: u32,
    locals: u64,
    bytes: u64,
    pub(crate) digest: u64,
    header: Option<[u64; 4]>,
    comms_left: u64,
    /// Incomplete collectives (their parts still to come).
    open_colls: u64,
    per_task: Vec<u64>,
    look_msgs: u64,
    look_colls: u64,
    /// The look-back (message ids, collective ids) of `Check` mode.
    window: Option<(u64, u64)>,
    pub(crate) eof: bool,
    /// Whether to digest the text (not when the replay reads a checked file again).
    digesting: bool,
}

impl<R: BufRead> Reader<R> {
    pub(crate) fn new(input: R, origin: &str, cycle_ns: f64, scale: f64, mode: Mode) -> Self {
        Reader {
            input,
            buf: String::new(),
            origin: origin.to_string(),
            cycle_ns,
            scale,
            mode,
            line: 0,
            tasks: 0,
            comms: Vec::new(),
            msgs: Default::default(),
            msg_order: VecDeque::new(),
            colls: Default::default(),
            coll_order: VecDeque::new(),
            last_msg_id: None,
            last_coll_id: None,
            n_msgs: 0,
            n_colls: 0,
            locals: 0,
            bytes: 0,
            digest: 0xcbf2_9ce4_8422_2325,
            header: None,
            comms_left: 0,
            open_colls: 0,
            per_task: Vec::new(),
            look_msgs: 0,
            look_colls: 0,
            window: None,
            eof: false,
            digesting: true,
        }
    }

    /// The next record of the body (`None` at the end of the file).
    pub(crate) fn next_record(&mut self) -> Result<Option<Record>, String> {
        loop {
            if self.eof {
                return Ok(None);
            }
            self.buf.clear();
            let n = self
                .input
                .read_line(&mut self.buf)
                .map_err(|e| format!("{}: line {}: {e}", self.origin, self.line + 1))?;
            if n == 0 {
                self.eof = true;
                return Ok(None);
            }
            self.line += 1;
            let text = std::mem::take(&mut self.buf);
            let line = text.strip_suffix('\n').unwrap_or(&text);
            let line = line.strip_suffix('\r').unwrap_or(line);
            if self.digesting {
                for b in line.bytes().chain(std::iter::once(b'\n')) {
                    self.digest ^= b as u64;
                    self.digest = self.digest.wrapping_mul(0x0100_0000_01b3);
                }
            }
            let f: Vec<&str> = line.split_whitespace().collect();
            let out = if f.is_empty() {
                None
            } else if self.header.is_none() {
                let h = self.header(&f)?;
                self.comms_left = h[1];
                self.header = Some(h);
                None
            } else if self.comms_left > 0 {
                self.communicator(&f)?;
                self.comms_left -= 1;
                None
            } else if f[0].starts_with('G') {
                Some(self.collective(&f)?)
            } else if f[0].starts_with('C') {
                return Err(self.err(format!(
                    "communicator line {:?} after the {} the header announced",
                    f[0],
                    self.comms.len()
                )));
            } else {
                Some(self.message(&f)?)
            };
            self.buf = text;
            if out.is_some() {
                return Ok(out);
            }
        }
    }

    /// The checks at the end of the file.
    pub(crate) fn finish(&mut self) -> Result<(), String> {
        let origin = self.origin.clone();
        let Some([messages, comms, globals, locals]) = self.header else {
            return Err(format!(
                "{origin}: empty file: expected the header `VEF <tasks> …`"
            ));
        };
        let end = |m: String| format!("{origin}: at the end: {m}");
        if (self.comms.len() as u64) < comms {
            return Err(end(format!(
                "the header announces {comms} communicators, the file has {} (truncated?)",
                self.comms.len()
            )));
        }
        if self.n_msgs as u64 != messages {
            return Err(end(format!(
                "the header announces {messages} messages, the file has {} (truncated?)",
                self.n_msgs
            )));
        }
        if self.n_colls as u64 != globals || self.locals != locals {
            return Err(end(format!(
                "the header announces {globals} collectives with {locals} participations, the \
                 file has {} with {} (truncated?)",
                self.n_colls, self.locals
            )));
        }
        if self.open_colls > 0 {
            let mut open: Vec<(u64, &CollInfo)> = self
                .colls
                .iter()
                .filter(|(_, c)| (c.parts as usize) < c.seen.len())
                .map(|(&id, c)| (id, c))
                .collect();
            open.sort_by_key(|&(id, _)| id);
            if let Some((id, c)) = open.first() {
                return Err(end(format!(
                    "collective G{id} has {} of its communicator's {} tasks",
                    c.parts,
                    c.seen.len()
                )));
            }
        }
        Ok(())
    }

    fn err(&self, m: String) -> String {
        format!("{}: line {}: {m}", self.origin, self.line)
    }

    fn num<T: std::str::FromStr>(&self, s: &str, what: &str) -> Result<T, String> {
        s.parse()
            .map_err(|_| self.err(format!("{what} {s:?} is not a whole number")))
    }

    fn task(&self, s: &str, what: &str) -> Result<u32, String> {
        let t: u32 = self.num(s, what)?;
        if t >= self.tasks {
            return Err(self.err(format!(
                "{what} {t} does not exist (the trace has {} tasks)",
                self.tasks
            )));
        }
        Ok(t)
    }

    /// `VEF <tasks> <messages> <communicators> <global_collectives> <local_collectives>
    /// <only_send_deps>`; returns messages, communicators, globals, locals.
    fn header(&mut self, f: &[&str]) -> Result<[u64; 4], String> {
        if f[0] != "VEF" || f.len() != 7 {
            return Err(self.err(format!(
                "expected the header `VEF <tasks> <messages> <communicators> \
                 <global_collectives> <local_collectives> <only_send_deps>`, found {:?}",
                f.join(" ")
            )));
        }
        self.tasks = self.num(f[1], "task count")?;
        if self.tasks == 0 {
            return Err(self.err("a trace needs at least one task".into()));
        }
        if !matches!(f[6], "TRUE" | "FALSE") {
            return Err(self.err(format!("only_send_deps {:?}: expected TRUE or FALSE", f[6])));
        }
        let h = [
            self.num(f[2], "message count")?,
            self.num(f[3], "communicator count")?,
            self.num(f[4], "collective count")?,
            self.num(f[5], "participation count")?,
        ];
        if self.mode == Mode::Scan {
            self.per_task = vec![0; self.tasks as usize];
        }
        Ok(h)
    }

    /// `C<id> <task> …`, ids from 0 in order.
    fn communicator(&mut self, f: &[&str]) -> Result<(), String> {
        let id = f[0]
            .strip_prefix('C')
            .and_then(|x| x.parse::<usize>().ok())
            .ok_or_else(|| {
                self.err(format!(
                    "expected a communicator line `C<id> <task> …`, found {:?}",
                    f[0]
                ))
            })?;
        if id != self.comms.len() {
            return Err(self.err(format!(
                "communicator C{id} out of order: expected C{}",
                self.comms.len()
            )));
        }
        let mut tasks = Vec::with_capacity(f.len() - 1);
        for s in &f[1..] {
            let t = self.task(s, "task")?;
            if tasks.contains(&t) {
                return Err(self.err(format!("task {t} is twice in communicator C{id}")));
            }
            tasks.push(t);
        }
        if tasks.is_empty() {
            return Err(self.err(format!("communicator C{id} has no task")));
        }
        self.comms.push(Arc::new(tasks));
        Ok(())
    }

    fn delay(&self, s: &str) -> Result<u64, String> {
        let ns: f64 = s
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| self.err(format!("time {s:?} is not a non-negative number of ns")))?;
        Ok((ns * self.scale / self.cycle_ns).ceil() as u64)
    }

    /// The dependency (`dep`, `dep_id`) of a record of `task`, checked against the records
    /// read so far (in `Scan` mode only against the ids, measuring the look-back).
    fn dep(&mut self, task: u32, dep: &str, dep_id: &str) -> Result<Dep, String> {
        let code: u32 = self.num(dep, "dependency kind")?;
        if code == 0 {
            if dep_id != "-1" {
                return Err(self.err(format!("dependency 0 takes dep_id -1, not {dep_id}")));
            }
            return Ok(Dep::Start);
        }
        let id: u64 = dep_id
            .parse()
            .map_err(|_| self.err(format!("dep_id {dep_id:?} is not a record id")))?;
        match code {
            1 | 2 => {
                if self.mode == Mode::Scan {
                    // `last_msg_id` is this record's own id when it is a message: checked
                    // below by the caller (a message cannot depend on itself).
                    if self.last_msg_id.is_none_or(|l| id > l) {
                        return Err(self.err(format!(
                            "depends on message {id}, which is not an earlier message"
                        )));
                    }
                    self.look_msgs = self.look_msgs.max(self.last_msg_id.unwrap_or(0) - id);
                    return Ok(Dep::Sent(u32::MAX));
                }
                let Some(&m) = self.msgs.get(&id) else {
                    return Err(self.err(format!(
                        "depends on message {id}, which is not an earlier message"
                    )));
                };
                let (who, role) = if code == 1 {
                    (m.src, "sent")
                } else {
                    (m.dst, "received")
                };
                if who != task {
                    return Err(self.err(format!(
                        "task {task} depends on having {role} message {id}, which task {who} {role}"
                    )));
                }
                Ok(if code == 1 {
                    Dep::Sent(m.index)
                } else {
                    Dep::Received(m.index)
                })
            }
            3 => {
                let missing = || {
                    self.err(format!(
                        "depends on collective G{id}, which is not an earlier collective"
                    ))
                };
                if self.mode == Mode::Scan {
                    if self.last_coll_id.is_none_or(|l| id > l) {
                        return Err(missing());
                    }
                    self.look_colls = self.look_colls.max(self.last_coll_id.unwrap_or(0) - id);
                    return Ok(Dep::Collective(
                        self.colls.get(&id).map_or(u32::MAX, |c| c.index),
                    ));
                }
                let Some(c) = self.colls.get(&id) else {
                    return Err(missing());
                };
                if !self.comms[c.comm].contains(&task) {
                    return Err(self.err(format!(
                        "task {task} depends on collective G{id}, which it is not part of"
                    )));
                }
                Ok(Dep::Collective(c.index))
            }
            _ => Err(self.err(format!("dependency kind {code}: expected 0, 1, 2 or 3"))),
        }
    }

    /// Forgets what no later record can refer to (`Check` mode).
    fn prune(&mut self) {
        let Some((lm, lc)) = self.window else { return };
        if let Some(last) = self.last_msg_id {
            while self.msg_order.front().is_some_and(|&id| id + lm < last) {
                let id = self.msg_order.pop_front().unwrap();
                self.msgs.remove(&id);
            }
        }
        if let Some(last) = self.last_coll_id {
            while let Some(&id) = self.coll_order.front() {
                let c = &self.colls[&id];
                if id + lc >= last || (c.parts as usize) < c.seen.len() {
                    break;
                }
                self.coll_order.pop_front();
                self.colls.remove(&id);
            }
        }
    }

    /// `<id> <src> <dst> <bytes> <dep> <time> <dep_id>`.
    fn message(&mut self, f: &[&str]) -> Result<Record, String> {
        if f.len() != 7 {
            return Err(self.err(format!(
                "expected a message `<id> <src> <dst> <bytes> <dep> <time> <dep_id>` or a \
                 collective `G<id> …`, found {:?}",
                f.join(" ")
            )));
        }
        let id: u64 = self.num(f[0], "message id")?;
        if self.last_msg_id.is_some_and(|l| id <= l) {
            return Err(self.err(format!("message id {id} is not above the previous one")));
        }
        let src = self.task(f[1], "source task")?;
        let dst = self.task(f[2], "destination task")?;
        let bytes = self.num(f[3], "size")?;
        let dep = self.dep(src, f[4], f[6])?;
        let delay = self.delay(f[5])?;
        self.last_msg_id = Some(id);
        if self.mode == Mode::Scan {
            // The look-back counts from this record's own id (the replay reads ahead by ids).
            if matches!(f[4], "1" | "2") {
                let d: u64 = f[6].parse().unwrap_or(0);
                self.look_msgs = self.look_msgs.max(id - d);
            }
            self.per_task[src as usize] += 1;
            self.per_task[dst as usize] += 1;
        }
        let index = self.n_msgs;
        self.n_msgs += 1;
        self.bytes += bytes;
        if self.mode != Mode::Scan {
            self.msgs.insert(id, MsgInfo { index, src, dst });
            if self.window.is_some() {
                self.msg_order.push_back(id);
                self.prune();
            }
        }
        Ok(Record::Msg {
            index,
            id,
            msg: Message {
                src,
                dst,
                bytes,
                dep,
                delay,
            },
        })
    }

    /// `G<id> <comm> <op> <task> <send_bytes> <recv_bytes> <dep> <time> <dep_id>`.
    fn collective(&mut self, f: &[&str]) -> Result<Record, String> {
        if f.len() != 9 {
            return Err(self.err(format!(
                "expected a collective `G<id> <comm> <op> <task> <send_bytes> <recv_bytes> \
                 <dep> <time> <dep_id>`, found {:?}",
                f.join(" ")
            )));
        }
        let id: u64 = self.num(&f[0][1..], "collective id")?;
        let comm: usize = self.num(f[1], "communicator")?;
        let Some(members) = self.comms.get(comm).cloned() else {
            return Err(self.err(format!(
                "communicator {comm} does not exist ({} were declared)",
                self.comms.len()
            )));
        };
        let code: u32 = self.num(f[2], "operation")?;
        let op = CollectiveOp::from_code(code)
            .ok_or_else(|| self.err(format!("collective operation {code}: expected 0 to 7")))?;
        let task = self.task(f[3], "task")?;
        let Some(rank) = members.iter().position(|&t| t == task) else {
            return Err(self.err(format!("task {task} is not in communicator C{comm}")));
        };
        let send_bytes = self.num(f[4], "send size")?;
        let recv_bytes = self.num(f[5], "receive size")?;
        // A new id (above the last) opens a collective; the id of an open or recent one adds
        // a participation. A scan keeps only the open ones.
        if !self.colls.contains_key(&id) {
            if self.last_coll_id.is_some_and(|l| id <= l) {
                return Err(self.err(if self.mode == Mode::Scan {
                    format!(
                        "collective id G{id} is not above the previous one, or G{id} is \
                         complete and task {task} takes part in it twice"
                    )
                } else {
                    format!("collective id G{id} is not above the previous one")
                }));
            }
            self.last_coll_id = Some(id);
            self.colls.insert(
                id,
                CollInfo {
                    index: self.n_colls,
                    op,
                    comm,
                    seen: vec![false; members.len()],
                    parts: 0,
                },
            );
            if self.window.is_some() {
                self.coll_order.push_back(id);
            }
            self.n_colls += 1;
            self.open_colls += 1;
        }
        let dep = self.dep(task, f[6], f[8])?;
        let delay = self.delay(f[7])?;
        let c = self.colls.get_mut(&id).expect("inserted above");
        let index = c.index;
        if dep == Dep::Collective(index) && f[6] == "3" {
            return Err(self.err(format!("collective G{id} depends on itself")));
        }
        if c.op != op || c.comm != comm {
            return Err(self.err(format!(
                "collective G{id} changes its operation or communicator"
            )));
        }
        if c.seen[rank] {
            return Err(self.err(format!("task {task} takes part in G{id} twice")));
        }
        c.seen[rank] = true;
        c.parts += 1;
        if c.parts as usize == c.seen.len() {
            self.open_colls -= 1;
            if self.mode == Mode::Scan {
                self.colls.remove(&id);
            }
        }
        if self.mode == Mode::Scan {
            self.per_task[task as usize] += 1;
        } else {
            self.prune();
        }
        self.locals += 1;
        Ok(Record::Part {
            coll: index,
            id,
            op,
            comm: members,
            rank: rank as u32,
            part: Participation {
                task,
                send_bytes,
                recv_bytes,
                dep,
                delay,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "VEF 4 2 2 1 4 FALSE\nC0 0 1 2 3\nC1 0 1\n0 0 1 1024 0 0 -1\n1 1 2 2048 2 500 0\nG0 0 2 0 8 8 1 0 0\nG0 0 2 1 8 8 2 100 0\nG0 0 2 2 8 8 2 0 1\nG0 0 2 3 8 8 0 0 -1\n";

    fn parse(text: &str) -> Result<TraceProgram, String> {
        read(text.as_bytes(), "t.vef", 1.0)
    }

    /// [`open_scaled`] on `text` written to a file.
    fn stream(text: &str, scale: f64) -> Result<TraceProgram, String> {
        let dir = std::env::temp_dir().join(format!("flitsim-vef-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = dir.join(format!("{n}.vef"));
        std::fs::write(&path, text).unwrap();
        let r = open_scaled(&path, "t.vef", 1.0, scale);
        std::fs::remove_file(&path).unwrap();
        r
    }
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

    #[test]
    fn the_streaming_plan_counts_and_measures() {
        let p = stream(EXAMPLE, 1.0).unwrap();
        let s = p.stream.as_ref().unwrap();
        assert_eq!(
            (p.tasks, p.message_count(), p.collective_count()),
            (4, 2, 1)
        );
        assert_eq!(p.p2p_bytes(), 3072);
        assert_eq!(p.digest, parse(EXAMPLE).unwrap().digest);
        // Task 0: message 0 and its part of G0; task 1: messages 0 and 1 and G0; …
        assert_eq!(s.per_task, vec![2, 3, 2, 1]);
        assert_eq!(
            s.starts,
            vec![(Rec::Msg(0), 0), (Rec::Part { coll: 0, rank: 3 }, 0)]
        );
        // Message 1 depends on message 0 (1 back); parts of G0 reach back to message 1 from
        // message id 1 (0 back) and 0 (1 back); no collective depends on a collective.
        assert_eq!((s.look_msgs, s.look_colls), (1, 0));
    }

    #[test]
    fn the_documented_example_reads() {
        let p = parse(EXAMPLE).unwrap();
        assert_eq!(p.tasks, 4);
        assert_eq!(p.messages.len(), 2);
        assert_eq!(p.messages[1].dep, Dep::Received(0));
        assert_eq!(p.messages[1].delay, 500);
        assert_eq!(p.collectives.len(), 1);
        let c = &p.collectives[0];
        assert_eq!(c.op, CollectiveOp::Allreduce);
        assert_eq!(c.parts[0].dep, Dep::Sent(0));
        assert_eq!(c.parts[2].dep, Dep::Received(1));
        assert_eq!(c.parts[3].dep, Dep::Start);
        assert_eq!(p.p2p_bytes(), 3072);
        // 3 ns cycles: 500 ns → 167 cycles (rounded up).
        let q = read(EXAMPLE.as_bytes(), "t.vef", 3.0).unwrap();
        assert_eq!(q.messages[1].delay, 167);
        // Scaled: 500 ns × 0.1 = 50 ns; × 0 = nothing.
        let q = read_scaled(EXAMPLE.as_bytes(), "t.vef", 1.0, 0.1).unwrap();
        assert_eq!(
            (q.messages[1].delay, q.collectives[0].parts[1].delay),
            (50, 10)
        );
        let q = read_scaled(EXAMPLE.as_bytes(), "t.vef", 1.0, 0.0).unwrap();
        assert_eq!(q.messages[1].delay, 0);
    }

    #[test]
    fn bad_traces_name_file_and_line() {
        for (text, want) in [
            ("", "t.vef: empty file"),
            (
                "VEF 2 1 1 0 0 TRUE\nC0 0 1\n",
                "t.vef: at the end: the header announces 1 messages, the file has 0",
            ),
            (
                "VEF 2 1 1 0 0 TRUE\nC0 0 1\n0 0 1 8 1 0 5\n",
                "t.vef: line 3: depends on message 5, which is not an earlier message",
            ),
            (
                "VEF 2 2 1 0 0 TRUE\nC0 0 1\n0 0 1 8 0 0 -1\n1 0 1 8 2 0 0\n",
                "line 4: task 0 depends on having received message 0, which task 1 received",
            ),
            (
                "VEF 2 1 1 0 0 TRUE\nC0 0 1\n0 0 7 8 0 0 -1\n",
                "line 3: destination task 7 does not exist",
            ),
            (
                "VEF 2 1 1 0 0 TRUE\nC0 0 1\nX 0 1 8 0 0 -1\n",
                "line 3: message id \"X\"",
            ),
            (
                "VEF 2 1 1 0 0 TRUE\nC0 0 1\n0 0 1 8 0 0\n",
                "line 3: expected a message",
            ),
            (
                "VEF 2 0 1 1 2 TRUE\nC0 0 1\nG0 0 9 0 8 8 0 0 -1\n",
                "line 3: collective operation 9",
            ),
            (
                "VEF 2 0 1 1 2 TRUE\nC0 0 1\nG0 0 2 0 8 8 0 0 -1\n",
                "at the end: the header announces 1 collectives with 2 participations",
            ),
            (
                "VEF 2 0 1 1 1 TRUE\nC0 0 1\nG0 0 2 0 8 8 0 0 -1\n",
                "collective G0 has 1 of its communicator's 2 tasks",
            ),
            (
                "VEF 2 0 1 0 0 TRUE\nC0 0 1\n0 0 1 8 3 0 4\n",
                "line 3: depends on collective G4",
            ),
            ("VEF 2 0 1 0 0 MAYBE\n", "line 1: only_send_deps"),
            ("VEF x\n", "line 1: expected the header"),
            (
                "VEF 2 2 1 0 0 TRUE\nC0 0 1\n1 0 1 8 0 0 -1\n0 0 1 8 0 0 -1\n",
                "line 4: message id 0 is not above",
            ),
            (
                "VEF 2 1 1 0 0 TRUE\nC0 0 1\n0 0 1 8 0 -5 -1\n",
                "line 3: time \"-5\"",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(want), "want {want:?} in {e:?}");
            assert!(e.starts_with("t.vef: "), "{e}");
            let e = stream(text, 1.0).unwrap_err();
            assert!(e.contains(want), "streamed: want {want:?} in {e:?}");
        }
    }

    #[test]
    fn the_digest_follows_the_text() {
        let a = parse(EXAMPLE).unwrap().digest;
        assert_eq!(a, parse(EXAMPLE).unwrap().digest);
        let b = parse(&EXAMPLE.replace("1024", "1025")).unwrap().digest;
        assert_ne!(a, b);
    }
}
