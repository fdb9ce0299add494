//! Deadline-based QoS (Martínez et al. 2008, `shared/papers/001_35fa54e686c80f21.txt`): the
//! hosts' deadline stamping and EDF scheduling (§3.1–3.2), time to deadline on the wire with
//! per-node clocks (§3.3), discards at the host, and the token buckets of the traditional
//! four-VC architecture.
//!
//! A packet's `deadline` field holds its deadline in the clock of the node that holds it; while
//! its head crosses a link it holds the time to deadline (TTD) instead: `TTD = D − T_local` is
//! taken when the head leaves a node, and the next node rebuilds `D = TTD + T_local` from its
//! own clock when the head arrives (see
//! [`Lane::deadline_depart`](super::lane::Lane::deadline_depart) and
//! [`Lane::deadline_arrive`](super::lane::Lane::deadline_arrive)). Clock offsets therefore
//! never change a comparison, which the tests check by running with and without skew.
//!
//! The host keeps, per NIC, the messages not yet cut into packets in three heaps: the
//! eligible-time queue (packets of classes with `eligible = true` wait there until
//! `D − qos.eligibility_factor`), and a deadline-ordered ready queue per VC (regulated,
//! unregulated). Whenever the NIC buffer queue of a VL is empty, the ready packet with the
//! smallest deadline for that VC is cut into it; the NIC's scheduler (strict priority) then
//! sends the regulated VC first.
use super::lane::Lane;
use super::nic::Msg;
use super::Network;
use crate::config::{DeadlineStamp, SimParams};
use crate::ids::{Cycle, PacketId};
use crate::stats::{DeadlineResult, DiscardCount};
use flitsim_topology::PortNum;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Fabric-wide state of deadline-based QoS.
pub(crate) struct DeadlineState {
    /// Hosts stamp deadlines; switches arbitrate among inputs by head deadline.
    pub edf: bool,
    /// Clock offset of every simulated switch and of every endpoint, cycles.
    pub sw_off: Vec<i64>,
    pub nic_off: Vec<i64>,
    /// Largest TTD put on a link.
    pub max_ttd: i64,
    /// Order errors per VL.
    pub order_errors: Vec<u64>,
    /// Per class: packets and flits discarded at the hosts.
    pub discarded: Vec<(u64, u64)>,
    /// `qos.discard_after`.
    pub discard_after: Option<Cycle>,
    /// `qos.architecture`, for the result.
    pub architecture: Option<&'static str>,
}

impl DeadlineState {
    /// The state for `cfg`, or `None` when no deadline feature is configured.
    pub fn new(cfg: &SimParams, switches: usize, endpoints: usize, vls: usize) -> Option<Self> {
        let q = &cfg.qos;
        let on = q.architecture.is_some()
            || !q.classes.is_empty()
            || q.discard_after.is_some()
            || !cfg.switch.vl_discipline.is_fifo();
        if !on {
            return None;
        }
        let mut rng = crate::traffic::stream(cfg.seed, crate::traffic::StreamKind::Clock, 0);
        let skew = q.clock_skew as i64;
        let mut offsets = |n: usize| -> Vec<i64> {
            use rand::Rng;
            (0..n)
                .map(|_| {
                    if skew == 0 {
                        0
                    } else {
                        rng.gen_range(-skew..=skew)
                    }
                })
                .collect()
        };
        let sw_off = offsets(switches);
        let nic_off = offsets(endpoints);
        Some(DeadlineState {
            edf: q.deadlines(),
            sw_off,
            nic_off,
            max_ttd: i64::MIN,
            order_errors: vec![0; vls],
            discarded: vec![(0, 0); cfg.traffic.classes.len()],
            discard_after: q.discard_after,
            architecture: q.architecture.map(|a| a.name()),
        })
    }

    /// The result, with class names.
    pub fn result(&self, names: impl Iterator<Item = String>) -> DeadlineResult {
        DeadlineResult {
            architecture: self.architecture.map(str::to_string),
            discarded: names
                .zip(&self.discarded)
                .map(|(class, &(packets, flits))| DiscardCount {
                    class,
                    packets,
                    flits,
                })
                .collect(),
            order_errors: self.order_errors.iter().sum(),
            order_errors_by_vl: self.order_errors.clone(),
            max_ttd: (self.edf && self.max_ttd != i64::MIN).then_some(self.max_ttd),
            max_ttd_ns: None,
        }
    }
}

/// How one class's (or flow's) packets are stamped.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StampRule {
    pub stamp: DeadlineStamp,
    /// Cycles per flit (`rate`, `link`) or the frame latency in cycles (`frame`).
    pub step: f64,
    pub regulated: bool,
    pub eligible: bool,
}

/// A message waiting at an EDF host, with the deadline of its next packet.
#[derive(Clone, Copy, Debug)]
struct EdfMsg {
    msg: Msg,
    class: u8,
    /// Deadline base: max(D of the flow's previous packet, arrival time).
    base: f64,
    /// Per flit (`rate`, `link`) or per packet (`frame`).
    step: f64,
    per_packet: bool,
    /// Packets and flits already cut.
    pkts_cut: u32,
    flits_cut: u32,
    regulated: bool,
    eligible: bool,
}

/// A heap key: (time, arrival order, message slot).
type Key = Reverse<(i64, u64, u32)>;

/// One host's EDF scheduler.
pub(crate) struct HostEdf {
    /// Per local flow (the NIC's classes, then its flows): the deadline of the last packet
    /// stamped.
    last: Vec<f64>,
    /// Stamping rule per local flow.
    rules: Vec<StampRule>,
    msgs: Vec<EdfMsg>,
    free: Vec<u32>,
    /// Eligible-time queue.
    waiting: BinaryHeap<Key>,
    /// Ready queues: regulated (0) and unregulated (1), by deadline.
    ready: [BinaryHeap<Key>; 2],
    seq: u64,
}

impl HostEdf {
    pub fn new(rules: Vec<StampRule>) -> Self {
        HostEdf {
            last: vec![f64::NEG_INFINITY; rules.len()],
            rules,
            msgs: Vec::new(),
            free: Vec::new(),
            waiting: BinaryHeap::new(),
            ready: [BinaryHeap::new(), BinaryHeap::new()],
            seq: 0,
        }
    }

    /// Stamps a message of local flow `i` (class `class`, `mtu` flits per packet) arriving at
    /// local time `now` and queues it.
    pub fn enqueue(&mut self, i: usize, class: u8, m: Msg, mtu: u32, now: i64, ef: i64) {
        let r = self.rules[i];
        let base = self.last[i].max(now as f64);
        let parts = m.left.div_ceil(mtu).max(1);
        let (step, per_packet, end) = match r.stamp {
            DeadlineStamp::Frame => {
                let s = r.step / parts as f64;
                (s, true, base + r.step)
            }
            _ => (r.step, false, base + r.step * m.left as f64),
        };
        self.last[i] = end;
        let e = EdfMsg {
            msg: m,
            class,
            base,
            step,
            per_packet,
            pkts_cut: 0,
            flits_cut: 0,
            regulated: r.regulated,
            eligible: r.eligible,
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.msgs[s as usize] = e;
                s
            }
            None => {
                self.msgs.push(e);
                self.msgs.len() as u32 - 1
            }
        };
        self.queue(slot, mtu, now, ef);
    }

    /// The deadline of message `slot`'s next packet of `len` flits.
    fn next_deadline(&self, slot: u32, len: u32) -> i64 {
        let e = &self.msgs[slot as usize];
        let d = if e.per_packet {
            e.base + e.step * (e.pkts_cut + 1) as f64
        } else {
            e.base + e.step * (e.flits_cut + len) as f64
        };
        d.ceil() as i64
    }

    /// Puts message `slot` into the eligible-time queue or its ready queue.
    fn queue(&mut self, slot: u32, mtu: u32, now: i64, ef: i64) {
        let e = self.msgs[slot as usize];
        let len = e.msg.left.min(mtu);
        let d = self.next_deadline(slot, len);
        self.seq += 1;
        if e.eligible && d - ef > now {
            self.waiting.push(Reverse((d - ef, self.seq, slot)));
        } else {
            let vc = usize::from(!e.regulated);
            self.ready[vc].push(Reverse((d, self.seq, slot)));
        }
    }

    /// Moves the messages whose next packet became eligible at local time `now` to their
    /// ready queues.
    fn promote(&mut self, now: i64, mtu: &[u16]) {
        while let Some(&Reverse((at, _, slot))) = self.waiting.peek() {
            if at > now {
                break;
            }
            self.waiting.pop();
            let e = self.msgs[slot as usize];
            let d = self.next_deadline(slot, e.msg.left.min(mtu[e.class as usize] as u32));
            self.seq += 1;
            let vc = usize::from(!e.regulated);
            self.ready[vc].push(Reverse((d, self.seq, slot)));
        }
    }

    /// Every message still queued.
    pub fn queued(&self) -> impl Iterator<Item = &Msg> {
        self.waiting
            .iter()
            .chain(self.ready[0].iter())
            .chain(self.ready[1].iter())
            .map(|Reverse((_, _, s))| &self.msgs[*s as usize].msg)
    }
}

/// Local clock of the node that owns port `g` at cycle `t`.
#[inline]
fn clock_at(
    dl: &DeadlineState,
    nic_base: u32,
    port_names: &[(u32, PortNum)],
    g: usize,
    t: Cycle,
) -> i64 {
    let off = if g >= nic_base as usize {
        dl.nic_off[g - nic_base as usize]
    } else {
        dl.sw_off[port_names[g].0 as usize]
    };
    t as i64 + off
}

/// A packet's head leaves a node whose clock reads `clock`: its deadline becomes its time
/// to deadline.
#[inline]
fn depart(dl: &mut DeadlineState, deadline: &mut i64, clock: i64) {
    *deadline -= clock;
    dl.max_ttd = dl.max_ttd.max(*deadline);
}

impl Lane<'_> {
    /// The head of packet `p` leaves switch port `g` at cycle `t` (see [`depart`]).
    #[inline(never)]
    pub(crate) fn deadline_depart(&mut self, p: PacketId, g: usize, t: Cycle) {
        let (nic_base, names) = (self.nic_base, self.port_names);
        let Some(dl) = self.dl.as_deref_mut().filter(|d| d.edf) else {
            return;
        };
        let clock = clock_at(dl, nic_base, names, g, t);
        self.packets
            .update(p, |pk| depart(dl, &mut pk.deadline, clock));
    }

    /// The head of packet `p` arrives at input port `g` at cycle `t`: the deadline is rebuilt
    /// from the time to deadline and the local clock. Returns it.
    #[inline]
    pub(crate) fn deadline_arrive(&mut self, p: PacketId, g: usize, t: Cycle) -> i64 {
        match self.dl.as_deref() {
            Some(dl) if dl.edf => {
                let clock = clock_at(dl, self.nic_base, self.port_names, g, t);
                self.packets.update(p, |pk| {
                    pk.deadline += clock;
                    pk.deadline
                })
            }
            _ => 0,
        }
    }

    /// Counts an order error if a packet with an earlier deadline waits behind the head of
    /// queue `q` (an input VL when `input`, else an output-buffer VL).
    #[inline]
    pub(crate) fn count_order_error(&mut self, q: usize, input: bool) {
        let vls = self.vls;
        let Some(dl) = self.dl.as_deref_mut() else {
            return;
        };
        let queue = if input {
            &self.inputs[q]
        } else {
            &self.obuf.queues[q]
        };
        if queue.earlier_waiting() {
            dl.order_errors[q % vls] += 1;
        }
    }
}

impl Network {
    /// Stamps message `m` of class `c` at EDF host `e` (local flow: the class, or the flow).
    pub(crate) fn edf_enqueue(&mut self, e: usize, c: usize, m: Msg, t: Cycle) {
        let dl = self.dl.as_deref().expect("EDF hosts have deadline state");
        let now = t as i64 + dl.nic_off[e];
        let ef = self.cfg.qos.eligibility_factor as i64;
        let i = if m.tag.flow != super::packet::NO_FLOW {
            self.cfg.traffic.classes.len() + self.flow_local[m.tag.flow as usize] as usize
        } else {
            c
        };
        let mtu = self.unit[c] as u32;
        let edf = self.nics[e].edf.as_mut().expect("EDF host");
        edf.enqueue(i, c as u8, m, mtu, now, ef);
    }

    /// EDF host `e` at cycle `t`: promotes eligible packets, then for each VC whose next
    /// packet's NIC VL queue is empty, cuts the ready packet with the smallest deadline into
    /// it. Packets that waited longer than `qos.discard_after` are discarded.
    pub(crate) fn edf_dispatch(&mut self, e: usize, t: Cycle) {
        let dl = self.dl.as_deref().expect("EDF hosts have deadline state");
        let now = t as i64 + dl.nic_off[e];
        let discard_after = dl.discard_after;
        let ef = self.cfg.qos.eligibility_factor as i64;
        self.nics[e].edf.as_mut().unwrap().promote(now, &self.unit);
        for vc in 0..2 {
            loop {
                let edf = self.nics[e].edf.as_ref().unwrap();
                let Some(&Reverse((d, _, slot))) = edf.ready[vc].peek() else {
                    break;
                };
                let em = edf.msgs[slot as usize];
                let c = em.class as usize;
                if discard_after.is_some_and(|limit| t.saturating_sub(em.msg.gen) > limit) {
                    let edf = self.nics[e].edf.as_mut().unwrap();
                    edf.ready[vc].pop();
                    edf.free.push(slot);
                    self.nics[e].app_msgs -= 1;
                    self.discard(c, em.msg);
                    continue;
                }
                let len = em.msg.left.min(self.unit[c] as u32);
                let (wire_sl, vl) = self.nic_lane(e, c, em.msg.dst, em.msg.tag.path);
                if !self.nics[e].queues[vl.idx()].is_empty()
                    || len > self.nic_buf.room(e, vl, u32::MAX)
                {
                    break;
                }
                let mtu = self.unit[c] as u32;
                let nic = &mut self.nics[e];
                let edf = nic.edf.as_mut().unwrap();
                edf.ready[vc].pop();
                let m = {
                    let x = &mut edf.msgs[slot as usize];
                    let m = x.msg;
                    x.msg.left -= len;
                    x.pkts_cut += 1;
                    x.flits_cut += len;
                    m
                };
                if edf.msgs[slot as usize].msg.left == 0 {
                    edf.free.push(slot);
                    nic.app_msgs -= 1;
                } else {
                    edf.queue(slot, mtu, now, ef);
                }
                let id = self.make_packet(e, c, m, len, wire_sl, vl);
                self.packets[id].deadline = d;
                break;
            }
        }
    }

    /// Discards what is left of message `m` (class `c`) at its host.
    pub(crate) fn discard(&mut self, c: usize, m: Msg) {
        let mtu = self.unit[c] as u32;
        let packets = m.left.div_ceil(mtu) as u64;
        if let Some(dl) = self.dl.as_deref_mut() {
            dl.discarded[c].0 += packets;
            dl.discarded[c].1 += m.left as u64;
        }
        if m.measured {
            self.measured_outstanding -= packets;
        }
        if m.msg != super::packet::MSG_NONE {
            self.messages.discard(m.msg, m.left);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::nic::MsgTag;

    fn msg(gen: Cycle, flits: u32) -> Msg {
        Msg {
            gen,
            dst: 1,
            left: flits,
            measured: false,
            msg: super::super::packet::MSG_NONE,
            tag: MsgTag::CLASS,
        }
    }

    fn rule(stamp: DeadlineStamp, step: f64, regulated: bool, eligible: bool) -> StampRule {
        StampRule {
            stamp,
            step,
            regulated,
            eligible,
        }
    }

    /// Cuts every packet of the queued messages in EDF order at time `now`; returns
    /// (deadline, flits) per packet.
    fn drain(h: &mut HostEdf, mtu: u32, now: i64) -> Vec<(i64, u32)> {
        let mut out = Vec::new();
        h.promote(now, &[mtu as u16]);
        for vc in 0..2 {
            while let Some(Reverse((d, _, slot))) = h.ready[vc].pop() {
                let len = h.msgs[slot as usize].msg.left.min(mtu);
                let x = &mut h.msgs[slot as usize];
                x.msg.left -= len;
                x.pkts_cut += 1;
                x.flits_cut += len;
                out.push((d, len));
                if h.msgs[slot as usize].msg.left > 0 {
                    h.queue(slot, mtu, now, 0);
                }
            }
        }
        out
    }

    /// §3.1: D(Pᵢ) = max(D(Pᵢ₋₁), T_now) + L(Pᵢ)/BW_avg, packet by packet and across messages
    /// of one flow.
    #[test]
    fn rate_stamping_follows_the_virtual_clock() {
        // BW = 0.5 flits/cycle: 2 cycles per flit; MTU 4.
        let mut h = HostEdf::new(vec![rule(DeadlineStamp::Rate, 2.0, false, false)]);
        h.enqueue(0, 0, msg(0, 10), 4, 0, 0);
        assert_eq!(drain(&mut h, 4, 0), vec![(8, 4), (16, 4), (20, 2)]);
        // The next message arrives before the flow's last deadline: it continues from 20.
        h.enqueue(0, 0, msg(5, 4), 4, 5, 0);
        assert_eq!(drain(&mut h, 4, 5), vec![(28, 4)]);
        // After an idle gap the clock restarts from now.
        h.enqueue(0, 0, msg(100, 2), 4, 100, 0);
        assert_eq!(drain(&mut h, 4, 100), vec![(104, 2)]);
    }

    /// §3.1: a video frame's packets share the frame latency evenly.
    #[test]
    fn frame_stamping_spreads_the_frame_latency() {
        let mut h = HostEdf::new(vec![rule(DeadlineStamp::Frame, 90.0, true, false)]);
        h.enqueue(0, 0, msg(0, 10), 4, 0, 0); // 3 packets: 30 cycles each
        assert_eq!(drain(&mut h, 4, 0), vec![(30, 4), (60, 4), (90, 2)]);
    }

    /// Eligible time: a smoothed packet waits until D − factor; EDF picks the earliest
    /// deadline among ready packets, regulated ones in their own queue.
    #[test]
    fn eligibility_holds_packets_and_edf_orders_the_rest() {
        let mut h = HostEdf::new(vec![
            rule(DeadlineStamp::Frame, 1000.0, true, true),
            rule(DeadlineStamp::Rate, 1.0, false, false),
            rule(DeadlineStamp::Rate, 4.0, false, false),
        ]);
        h.enqueue(0, 0, msg(0, 4), 4, 0, 100); // D = 1000, eligible at 900
        h.enqueue(2, 2, msg(0, 4), 4, 0, 100); // D = 16
        h.enqueue(1, 1, msg(0, 4), 4, 0, 100); // D = 4
        assert!(h.ready[0].is_empty() && h.waiting.len() == 1);
        assert_eq!(drain(&mut h, 4, 0), vec![(4, 4), (16, 4)]);
        assert_eq!(drain(&mut h, 4, 899), vec![]);
        assert_eq!(drain(&mut h, 4, 900), vec![(1000, 4)]);
    }
}
