//! The VEF trace format (see `TRACES.md` of the project's shared data, and `docs/traces.md`):
//! a header, communicator lines, then point-to-point and collective records with their
//! dependencies, times in nanoseconds. The reader goes through the text once, line by line,
//! and checks as it goes that every dependency names an earlier record of the right task;
//! errors name the origin and the line.
use super::{Collective, CollectiveOp, Dep, Message, Participation, TraceProgram};
use std::collections::HashMap;
use std::io::BufRead;

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
    let mut r = Reader {
        origin,
        cycle_ns,
        scale,
        line: 0,
        tasks: 0,
        comms: Vec::new(),
        program: TraceProgram::default(),
        msg_index: HashMap::new(),
        coll_index: HashMap::new(),
        last_msg_id: None,
        last_coll_id: None,
        locals: 0,
        digest: 0xcbf2_9ce4_8422_2325,
    };
    let mut header: Option<[u64; 5]> = None;
    let mut comms_left = 0u64;
    for line in input.lines() {
        r.line += 1;
        let line = line.map_err(|e| format!("{origin}: line {}: {e}", r.line))?;
        for b in line.bytes().chain(std::iter::once(b'\n')) {
            r.digest ^= b as u64;
            r.digest = r.digest.wrapping_mul(0x0100_0000_01b3);
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        let Some(h) = header else {
            header = Some(r.header(&f)?);
            comms_left = header.unwrap()[1];
            continue;
        };
        let _ = h;
        if comms_left > 0 {
            r.communicator(&f)?;
            comms_left -= 1;
            continue;
        }
        if f[0].starts_with('G') {
            r.collective(&f)?;
        } else if f[0].starts_with('C') {
            return Err(r.err(format!(
                "communicator line {:?} after the {} the header announced",
                f[0],
                r.comms.len()
            )));
        } else {
            r.message(&f)?;
        }
    }
    let Some([messages, comms, globals, locals, _]) = header else {
        return Err(format!(
            "{origin}: empty file: expected the header `VEF <tasks> …`"
        ));
    };
    let end = |m: String| format!("{origin}: at the end: {m}");
    if (r.comms.len() as u64) < comms {
        return Err(end(format!(
            "the header announces {comms} communicators, the file has {} (truncated?)",
            r.comms.len()
        )));
    }
    if r.program.messages.len() as u64 != messages {
        return Err(end(format!(
            "the header announces {messages} messages, the file has {} (truncated?)",
            r.program.messages.len()
        )));
    }
    if r.program.collectives.len() as u64 != globals || r.locals != locals {
        return Err(end(format!(
            "the header announces {globals} collectives with {locals} participations, the \
             file has {} with {} (truncated?)",
            r.program.collectives.len(),
            r.locals
        )));
    }
    let names: HashMap<u32, u64> = r.coll_index.iter().map(|(&id, &i)| (i, id)).collect();
    for (i, c) in r.program.collectives.iter_mut().enumerate() {
        if c.parts.len() != c.comm.len() {
            return Err(end(format!(
                "collective G{} has {} of its communicator's {} tasks",
                names[&(i as u32)],
                c.parts.len(),
                c.comm.len()
            )));
        }
        let rank: HashMap<u32, usize> = c.comm.iter().enumerate().map(|(i, &t)| (t, i)).collect();
        c.parts.sort_by_key(|p| rank[&p.task]);
    }
    r.program.tasks = r.tasks;
    r.program.digest = r.digest;
    Ok(r.program)
}

struct Reader<'a> {
    origin: &'a str,
    cycle_ns: f64,
    scale: f64,
    line: usize,
    tasks: u32,
    comms: Vec<Vec<u32>>,
    program: TraceProgram,
    /// VEF message id → index in `program.messages`.
    msg_index: HashMap<u64, u32>,
    /// VEF collective id → index in `program.collectives`.
    coll_index: HashMap<u64, u32>,
    last_msg_id: Option<u64>,
    last_coll_id: Option<u64>,
    locals: u64,
    digest: u64,
}

impl Reader<'_> {
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
    /// <only_send_deps>`; returns messages, communicators, globals, locals, 0.
    fn header(&mut self, f: &[&str]) -> Result<[u64; 5], String> {
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
        Ok([
            self.num(f[2], "message count")?,
            self.num(f[3], "communicator count")?,
            self.num(f[4], "collective count")?,
            self.num(f[5], "participation count")?,
            0,
        ])
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
        self.comms.push(tasks);
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
    /// read so far.
    fn dep(&self, task: u32, dep: &str, dep_id: &str) -> Result<Dep, String> {
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
                let Some(&i) = self.msg_index.get(&id) else {
                    return Err(self.err(format!(
                        "depends on message {id}, which is not an earlier message"
                    )));
                };
                let m = &self.program.messages[i as usize];
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
                    Dep::Sent(i)
                } else {
                    Dep::Received(i)
                })
            }
            3 => {
                let Some(&i) = self.coll_index.get(&id) else {
                    return Err(self.err(format!(
                        "depends on collective G{id}, which is not an earlier collective"
                    )));
                };
                if !self.program.collectives[i as usize].comm.contains(&task) {
                    return Err(self.err(format!(
                        "task {task} depends on collective G{id}, which it is not part of"
                    )));
                }
                Ok(Dep::Collective(i))
            }
            _ => Err(self.err(format!("dependency kind {code}: expected 0, 1, 2 or 3"))),
        }
    }

    /// `<id> <src> <dst> <bytes> <dep> <time> <dep_id>`.
    fn message(&mut self, f: &[&str]) -> Result<(), String> {
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
        self.msg_index
            .insert(id, self.program.messages.len() as u32);
        self.program.messages.push(Message {
            src,
            dst,
            bytes,
            dep,
            delay,
        });
        Ok(())
    }

    /// `G<id> <comm> <op> <task> <send_bytes> <recv_bytes> <dep> <time> <dep_id>`.
    fn collective(&mut self, f: &[&str]) -> Result<(), String> {
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
        if !members.contains(&task) {
            return Err(self.err(format!("task {task} is not in communicator C{comm}")));
        }
        let send_bytes = self.num(f[4], "send size")?;
        let recv_bytes = self.num(f[5], "receive size")?;
        let dep = self.dep(task, f[6], f[8])?;
        if dep == Dep::Collective(self.coll_index.get(&id).copied().unwrap_or(u32::MAX)) {
            return Err(self.err(format!("collective G{id} depends on itself")));
        }
        let delay = self.delay(f[7])?;
        let index = match self.coll_index.get(&id) {
            Some(&i) => i,
            None => {
                if self.last_coll_id.is_some_and(|l| id <= l) {
                    return Err(
                        self.err(format!("collective id G{id} is not above the previous one"))
                    );
                }
                self.last_coll_id = Some(id);
                let i = self.program.collectives.len() as u32;
                self.coll_index.insert(id, i);
                self.program.collectives.push(Collective {
                    op,
                    comm: members.clone(),
                    parts: Vec::new(),
                });
                i
            }
        };
        let c = &self.program.collectives[index as usize];
        if c.op != op || c.comm != members {
            return Err(self.err(format!(
                "collective G{id} changes its operation or communicator"
            )));
        }
        if c.parts.iter().any(|p| p.task == task) {
            return Err(self.err(format!("task {task} takes part in G{id} twice")));
        }
        self.locals += 1;
        self.program.collectives[index as usize]
            .parts
            .push(Participation {
                task,
                send_bytes,
                recv_bytes,
                dep,
                delay,
            });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "VEF 4 2 2 1 4 FALSE\nC0 0 1 2 3\nC1 0 1\n0 0 1 1024 0 0 -1\n1 1 2 2048 2 500 0\nG0 0 2 0 8 8 1 0 0\nG0 0 2 1 8 8 2 100 0\nG0 0 2 2 8 8 2 0 1\nG0 0 2 3 8 8 0 0 -1\n";

    fn parse(text: &str) -> Result<TraceProgram, String> {
        read(text.as_bytes(), "t.vef", 1.0)
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
