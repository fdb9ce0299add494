//! Collective operations expanded into rounds of point-to-point steps, with the algorithms MPI
//! libraries use: binomial trees for broadcast and reduce, recursive doubling (power-of-two
//! communicators) or a ring for allreduce, linear gather and scatter, a ring for allgather,
//! pairwise exchange for all-to-all and dissemination for the barrier.
//!
//! A task runs its rounds in order; a round is done when all its sends have been sent and all
//! its receives received, and the next round starts then. A zero-byte step still moves one
//! flit (the header).
use super::{Collective, Participation};

/// The collective operations of VEF (its op codes 0 to 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollectiveOp {
    /// 0: the root (`send_bytes` > 0) sends X bytes to everyone.
    Broadcast,
    /// 1: everyone sends X bytes to the root (`recv_bytes` > 0), combined on the way.
    Reduce,
    /// 2: everyone contributes and receives X bytes.
    Allreduce,
    /// 3: every task sends Xi bytes to the root (`recv_bytes` = ΣXi).
    Gather,
    /// 4: the root (`send_bytes` = ΣXi) sends Xi bytes to every task.
    Scatter,
    /// 5: every task's Xi bytes reach every other task.
    Allgather,
    /// 6: no data.
    Barrier,
    /// 7: every task sends to every other task: `send_bytes` to each (`recv_bytes` = 0) or
    /// `send_bytes` split over all (`recv_bytes` = 1).
    AllToAll,
}

impl CollectiveOp {
    /// The operation of VEF op code `code`.
    pub fn from_code(code: u32) -> Option<Self> {
        use CollectiveOp::*;
        Some(match code {
            0 => Broadcast,
            1 => Reduce,
            2 => Allreduce,
            3 => Gather,
            4 => Scatter,
            5 => Allgather,
            6 => Barrier,
            7 => AllToAll,
            _ => return None,
        })
    }

    /// Its name (`allreduce`).
    pub fn name(self) -> &'static str {
        use CollectiveOp::*;
        match self {
            Broadcast => "broadcast",
            Reduce => "reduce",
            Allreduce => "allreduce",
            Gather => "gather",
            Scatter => "scatter",
            Allgather => "allgather",
            Barrier => "barrier",
            AllToAll => "alltoall",
        }
    }
}

/// One step of a task's round: a send of `bytes` bytes to communicator rank `peer`, or a
/// receive from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send `bytes` to rank `peer`.
    Send {
        /// Communicator rank of the receiver.
        peer: u32,
        /// Payload, bytes.
        bytes: u64,
    },
    /// Receive from rank `peer`.
    Recv {
        /// Communicator rank of the sender.
        peer: u32,
    },
}

fn root_by(parts: &[Participation], f: impl Fn(&Participation) -> bool) -> u32 {
    parts.iter().position(f).unwrap_or(0) as u32
}

/// The rounds of every rank of `c`: `rounds[rank][round]` is that round's steps. Every send
/// has the matching receive at its peer in the round of the same index, so a sender and its
/// receiver agree on which transfer is which (see `Replay`).
pub fn expand(c: &Collective) -> Vec<Vec<Vec<Step>>> {
    let p = c.parts.len() as u32;
    let mut rounds: Vec<Vec<Vec<Step>>> = vec![Vec::new(); p as usize];
    if p <= 1 {
        return rounds;
    }
    // Adds a transfer in round `r` from rank `a` to rank `b`.
    let mut add = |r: usize, a: u32, b: u32, bytes: u64| {
        for (x, step) in [
            (a, Step::Send { peer: b, bytes }),
            (b, Step::Recv { peer: a }),
        ] {
            let rs = &mut rounds[x as usize];
            if rs.len() <= r {
                rs.resize(r + 1, Vec::new());
            }
            rs[r].push(step);
        }
    };
    let parts = &c.parts;
    match c.op {
        CollectiveOp::Broadcast | CollectiveOp::Reduce => {
            // Binomial tree over ranks relative to the root: in round k, relative rank r < 2^k
            // sends to r + 2^k (broadcast); a reduce runs the same tree backwards.
            let bcast = c.op == CollectiveOp::Broadcast;
            let root = if bcast {
                root_by(parts, |x| x.send_bytes > 0)
            } else {
                root_by(parts, |x| x.recv_bytes > 0)
            };
            let bytes = if bcast {
                parts[root as usize].send_bytes
            } else {
                parts.iter().map(|x| x.send_bytes).max().unwrap_or(0)
            };
            let levels = 32 - (p - 1).leading_zeros();
            for k in 0..levels {
                let step = 1u32 << k;
                for r in 0..step.min(p) {
                    if r + step < p {
                        let (a, b) = ((r + root) % p, (r + step + root) % p);
                        if bcast {
                            add(k as usize, a, b, bytes);
                        } else {
                            add((levels - 1 - k) as usize, b, a, bytes);
                        }
                    }
                }
            }
        }
        CollectiveOp::Allreduce => {
            let bytes = parts.iter().map(|x| x.send_bytes).max().unwrap_or(0);
            if p.is_power_of_two() {
                for k in 0..p.trailing_zeros() {
                    for r in 0..p {
                        add(k as usize, r, r ^ (1 << k), bytes);
                    }
                }
            } else {
                // Ring: reduce-scatter then allgather, 2(p − 1) rounds of X/p bytes.
                let chunk = bytes.div_ceil(p as u64);
                for k in 0..2 * (p - 1) {
                    for r in 0..p {
                        add(k as usize, r, (r + 1) % p, chunk);
                    }
                }
            }
        }
        CollectiveOp::Gather => {
            let root = root_by(parts, |x| x.recv_bytes > 0);
            for r in (0..p).filter(|&r| r != root) {
                add(0, r, root, parts[r as usize].send_bytes);
            }
        }
        CollectiveOp::Scatter => {
            let root = root_by(parts, |x| x.send_bytes > 0);
            for r in (0..p).filter(|&r| r != root) {
                add(0, root, r, parts[r as usize].recv_bytes);
            }
        }
        CollectiveOp::Allgather => {
            // Ring: in round k rank r forwards the block that started at rank r − k.
            for k in 0..p - 1 {
                for r in 0..p {
                    let origin = (r + p - k) % p;
                    add(
                        k as usize,
                        r,
                        (r + 1) % p,
                        parts[origin as usize].send_bytes,
                    );
                }
            }
        }
        CollectiveOp::Barrier => {
            // Dissemination: in round k rank r signals r + 2^k.
            let levels = 32 - (p - 1).leading_zeros();
            for k in 0..levels {
                for r in 0..p {
                    add(k as usize, r, (r + (1 << k)) % p, 0);
                }
            }
        }
        CollectiveOp::AllToAll => {
            // Pairwise exchange: in round k − 1 rank r sends to r + k and receives from r − k.
            for k in 1..p {
                for r in 0..p {
                    let x = &parts[r as usize];
                    let bytes = if x.recv_bytes == 1 {
                        x.send_bytes / p as u64
                    } else {
                        x.send_bytes
                    };
                    add((k - 1) as usize, r, (r + k) % p, bytes);
                }
            }
        }
    }
    rounds
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Dep, Participation};

    fn coll(op: CollectiveOp, p: u32, f: impl Fn(u32) -> (u64, u64)) -> Collective {
        Collective {
            op,
            comm: (0..p).collect(),
            parts: (0..p)
                .map(|t| {
                    let (send_bytes, recv_bytes) = f(t);
                    Participation {
                        task: t,
                        send_bytes,
                        recv_bytes,
                        dep: Dep::Start,
                        delay: 0,
                    }
                })
                .collect(),
        }
    }

    fn sends(r: &[Vec<Vec<Step>>]) -> Vec<(usize, u32, u32)> {
        let mut v = Vec::new();
        for (rank, rounds) in r.iter().enumerate() {
            for (k, steps) in rounds.iter().enumerate() {
                for s in steps {
                    if let Step::Send { peer, .. } = s {
                        v.push((k, rank as u32, *peer));
                    }
                }
            }
        }
        v.sort();
        v
    }

    #[test]
    fn broadcast_is_a_binomial_tree_reaching_everyone_once() {
        for p in 2..=13u32 {
            for root in [0, p - 1, p / 2] {
                let c = coll(CollectiveOp::Broadcast, p, |t| {
                    if t == root {
                        (100, 0)
                    } else {
                        (0, 100)
                    }
                });
                let r = expand(&c);
                let s = sends(&r);
                assert_eq!(s.len() as u32, p - 1, "p−1 transfers");
                // Every non-root receives once, and only after it has the data.
                let mut has = vec![false; p as usize];
                has[root as usize] = true;
                for k in 0..8 {
                    let now: Vec<_> = s.iter().filter(|x| x.0 == k).collect();
                    for &&(_, a, _) in &now {
                        assert!(
                            has[a as usize],
                            "p {p} root {root}: {a} sends before receiving"
                        );
                    }
                    for &&(_, _, b) in &now {
                        assert!(!has[b as usize]);
                        has[b as usize] = true;
                    }
                }
                assert!(has.iter().all(|&h| h));
                // ⌈log2 p⌉ rounds.
                let rounds = s.iter().map(|x| x.0).max().unwrap() + 1;
                assert_eq!(rounds as u32, 32 - (p - 1).leading_zeros());
            }
        }
    }

    #[test]
    fn reduce_runs_the_tree_backwards_to_the_root() {
        let c = coll(CollectiveOp::Reduce, 8, |t| {
            if t == 3 {
                (8, 8)
            } else {
                (8, 0)
            }
        });
        let s = sends(&expand(&c));
        assert_eq!(s.len(), 7);
        // The last round sends into the root.
        let last = s.iter().map(|x| x.0).max().unwrap();
        assert!(s.iter().filter(|x| x.0 == last).all(|x| x.2 == 3));
    }

    #[test]
    fn every_send_has_its_receive_in_the_same_round() {
        let ops = [
            CollectiveOp::Broadcast,
            CollectiveOp::Reduce,
            CollectiveOp::Allreduce,
            CollectiveOp::Gather,
            CollectiveOp::Scatter,
            CollectiveOp::Allgather,
            CollectiveOp::Barrier,
            CollectiveOp::AllToAll,
        ];
        for op in ops {
            for p in [2u32, 3, 4, 6, 8] {
                let c = coll(op, p, |t| if t == 0 { (64, 64) } else { (64, 0) });
                let r = expand(&c);
                for (rank, rounds) in r.iter().enumerate() {
                    for (k, steps) in rounds.iter().enumerate() {
                        for s in steps {
                            if let Step::Send { peer, .. } = *s {
                                let back = &r[peer as usize][k];
                                assert!(
                                    back.contains(&Step::Recv { peer: rank as u32 }),
                                    "{op:?} p {p}: {rank} → {peer} in round {k}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn transfer_counts_match_the_algorithms() {
        let n = |op, p| {
            sends(&expand(&coll(op, p, |t| {
                if t == 0 {
                    (64, 64)
                } else {
                    (64, 0)
                }
            })))
            .len()
        };
        assert_eq!(n(CollectiveOp::Allreduce, 8), 8 * 3, "recursive doubling");
        assert_eq!(
            n(CollectiveOp::Allreduce, 6),
            6 * 10,
            "ring: 2(p − 1) rounds"
        );
        assert_eq!(
            n(CollectiveOp::Barrier, 5),
            5 * 3,
            "dissemination: ⌈log2 5⌉ rounds"
        );
        assert_eq!(n(CollectiveOp::AllToAll, 5), 5 * 4);
        assert_eq!(n(CollectiveOp::Allgather, 5), 5 * 4);
        assert_eq!(n(CollectiveOp::Gather, 5), 4);
    }
}
