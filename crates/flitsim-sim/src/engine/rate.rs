//! NIC rate control (Gulati, *A Proportional Bandwidth Allocation Scheme for Myrinet
//! Clusters*, §3.2.2 and Figure 3.3): per flow an inter-packet dispatch time IDT and a next
//! dispatch time NDT. A flow is *valid* while it has messages queued; when a message arrives at
//! an empty flow, NDT = max(NDT, now). The NIC dispatches one packet — from the valid flow with
//! the smallest NDT, once that NDT ≤ now — then advances that flow's NDT by its IDT, and waits
//! at least T cycles (`nic.dispatch_time`) before the next dispatch, so no flow exceeds
//! B_max = MTU / T. Ties go to the lowest flow index: each class's own traffic first (index =
//! class), then the endpoint's flows in id order.
//!
//! The wait of T is the time the NIC's processor spends on a dispatch. With
//! `nic.receive_time` = R > 0 the same processor also spends R on every packet the NIC
//! receives (the thesis's end-node contention, §5.3 and Figure 5.4): a packet's head arriving
//! at the NIC waits until the processor is free, takes it for R cycles, and only then flows
//! into the host. Receiving goes first: in a cycle where the processor is free, a waiting head
//! is taken before any dispatch (without preempting a dispatch or a receive under way). With a
//! backlogged sender and packets arriving at λ per cycle the processor is never idle, so the
//! NIC dispatches (1 − λ·R) / T packets per cycle, and nothing while λ·R ≥ 1; heads that the
//! processor cannot take yet hold their flits in the NIC's receive buffer, whose credits stop
//! the switch (lossless backpressure).
use super::nic::Msg;
use crate::ids::Cycle;
use std::collections::VecDeque;

/// One rate-controlled flow of a NIC.
pub(crate) struct RateFlow {
    /// Its class.
    pub class: u8,
    /// Cycles between its dispatches.
    pub idt: f64,
    /// Next dispatch time.
    pub ndt: f64,
    /// Its messages waiting for dispatch.
    pub queue: VecDeque<Msg>,
}

/// A NIC's rate controller: its flows and when it may dispatch next.
pub(crate) struct NicRate {
    pub flows: Vec<RateFlow>,
    /// Minimum cycles between two dispatches (T).
    pub dispatch_time: u64,
    /// The first cycle the NIC's processor is free (for the next dispatch or receive).
    pub next_free: Cycle,
    /// Processor cycles per received packet (R, `nic.receive_time`; 0: receiving is free).
    pub receive_time: u64,
}

impl NicRate {
    /// A controller with one flow per `(class, idt)`.
    pub fn new(flows: impl IntoIterator<Item = (u8, f64)>, dispatch_time: u64) -> Self {
        NicRate {
            flows: flows
                .into_iter()
                .map(|(class, idt)| RateFlow {
                    class,
                    idt,
                    ndt: 0.0,
                    queue: VecDeque::new(),
                })
                .collect(),
            dispatch_time,
            next_free: 0,
            receive_time: 0,
        }
    }

    /// The head of a received packet asks for the processor at `now`: when it is free, takes
    /// it for `receive_time` cycles and returns true; otherwise the head waits (false).
    pub fn receive(&mut self, now: Cycle) -> bool {
        if now < self.next_free {
            return false;
        }
        self.next_free = now + self.receive_time;
        true
    }

    /// Queues `m` on flow `i` at cycle `now`.
    pub fn enqueue(&mut self, i: usize, m: Msg, now: Cycle) {
        let f = &mut self.flows[i];
        if f.queue.is_empty() {
            f.ndt = f.ndt.max(now as f64);
        }
        f.queue.push_back(m);
    }

    /// The flow to dispatch from at `now`, if any: the valid flow with the smallest NDT (the
    /// lowest index among equals) once it is due.
    pub fn pick(&self, now: Cycle) -> Option<usize> {
        if now < self.next_free {
            return None;
        }
        let mut best: Option<(f64, usize)> = None;
        for (i, f) in self.flows.iter().enumerate() {
            if !f.queue.is_empty() && best.is_none_or(|(ndt, _)| f.ndt < ndt) {
                best = Some((f.ndt, i));
            }
        }
        best.filter(|&(ndt, _)| ndt <= now as f64).map(|(_, i)| i)
    }

    /// Flow `i` dispatched a packet at `now`.
    pub fn dispatched(&mut self, i: usize, now: Cycle) {
        self.flows[i].ndt += self.flows[i].idt;
        self.next_free = now + self.dispatch_time;
    }

    /// Flow `i` gets a new IDT at `now` (the bandwidth manager's update). Its NDT is pulled in
    /// to at most one new IDT ahead, so a flow whose IDT was infinite (no share) restarts at
    /// once and a faster flow does not wait out its old, longer gap.
    pub fn set_idt(&mut self, i: usize, idt: f64, now: Cycle) {
        let f = &mut self.flows[i];
        f.idt = idt;
        let cap = now as f64 + idt;
        if f.ndt > cap {
            f.ndt = cap;
        }
    }

    /// Messages queued on every flow.
    pub fn queued(&self) -> impl Iterator<Item = &Msg> {
        self.flows.iter().flat_map(|f| f.queue.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::nic::{Msg, MsgTag};

    fn msg() -> Msg {
        Msg {
            gen: 0,
            dst: 0,
            left: 1,
            measured: false,
            msg: u32::MAX,
            tag: MsgTag::CLASS,
        }
    }

    /// Dispatches over `t = 0..cycles` with every flow always backlogged; returns the flow of
    /// each cycle ('-' for none) and the NDTs after each cycle.
    fn run(idts: &[f64], cycles: u64) -> (String, Vec<Vec<f64>>) {
        let mut rc = NicRate::new(idts.iter().map(|&i| (0, i)), 1);
        for i in 0..idts.len() {
            rc.enqueue(i, msg(), 0);
        }
        let mut seq = String::new();
        let mut ndts = Vec::new();
        for t in 0..cycles {
            match rc.pick(t) {
                Some(i) => {
                    seq.push((b'A' + i as u8) as char);
                    rc.dispatched(i, t);
                }
                None => seq.push('-'),
            }
            ndts.push(rc.flows.iter().map(|f| f.ndt).collect());
        }
        (seq, ndts)
    }

    #[test]
    fn table_3_1_of_the_thesis() {
        // Flows A and B with IDTs 2 and 3 (in units of T = 1 cycle), NDTs from 0.
        let (seq, ndts) = run(&[2.0, 3.0], 12);
        assert_eq!(seq, "ABABA-ABABA-");
        // The NDT rows of the table, after each cycle's dispatch.
        let a: Vec<f64> = ndts.iter().map(|r| r[0]).collect();
        let b: Vec<f64> = ndts.iter().map(|r| r[1]).collect();
        assert_eq!(a, [2., 2., 4., 4., 6., 6., 8., 8., 10., 10., 12., 12.]);
        assert_eq!(b, [0., 3., 3., 6., 6., 6., 6., 9., 9., 12., 12., 12.]);
    }

    #[test]
    fn backlogged_flows_share_in_the_ratio_of_their_rates() {
        for (idts, want) in [
            (vec![2.0, 2.0], vec![1.0, 1.0]),
            (vec![10.0 / 3.0, 10.0 / 7.0], vec![3.0, 7.0]),
            (vec![2.0, 4.0, 4.0], vec![2.0, 1.0, 1.0]),
        ] {
            let (seq, _) = run(&idts, 100_000);
            let counts: Vec<f64> = (0..idts.len())
                .map(|i| seq.bytes().filter(|&c| c == b'A' + i as u8).count() as f64)
                .collect();
            let total: f64 = want.iter().sum();
            let n: f64 = counts.iter().sum();
            for (c, w) in counts.iter().zip(&want) {
                assert!((c / n - w / total).abs() < 0.001, "{idts:?}: {counts:?}");
            }
        }
    }

    #[test]
    fn an_idle_flow_does_not_bank_credit() {
        // B arrives late: its NDT starts at its arrival, not at 0.
        let mut rc = NicRate::new([(0, 2.0), (0, 2.0)], 1);
        rc.enqueue(0, msg(), 0);
        for t in 0..10 {
            if let Some(i) = rc.pick(t) {
                rc.dispatched(i, t);
                rc.enqueue(i, msg(), t);
            }
        }
        rc.enqueue(1, msg(), 10);
        assert_eq!(rc.flows[1].ndt, 10.0);
    }
}
