//! The flow-control invariant checker and the deadlock report.
use super::nic::has_bit;
use super::{Egress, Network};
use crate::ids::{Cycle, PortIdx, Vl, NEVER};
use crate::stats::{BlockedBuffer, DeadlockReport};

impl Network {
    /// Checks the flow-control invariants; returns the first violation. [`Network::run`] checks
    /// them every 64 cycles in debug builds, and at the interval set by
    /// [`Network::check_invariants_every`] in any build (a violation is a bug: it panics).
    ///
    /// * a receiver VL never holds more than its maximum, nor a port more than its total;
    /// * a sender's outstanding count (flits sent or reserved, not yet credited) is never
    ///   below what the receiver holds in that VL, and never above the VL maximum;
    /// * output buffers stay within their capacity;
    /// * with `nic.receive_time`, likewise for each NIC's receive buffer and its switch port;
    /// * an input VL is marked waiting exactly when it has a head that is not forwarding, and
    ///   an input port (of a switch of at most 64 ports) when one of its VLs is, and an output
    ///   port as draining when its output buffer holds packets and it is not stalled;
    /// * a switch outside its lane's active set is idle: nothing to allocate, no connection,
    ///   no wake-up time, empty output buffers;
    /// * a settled switch (its last allocation left no ready head waiting) has no busy input
    ///   with a waiting head, and its wake-up time is the ready cycle of its first waiting
    ///   head (so skipping its allocations until then changes nothing).
    ///
    /// `t` is the cycle about to run: the state is that of the end of cycle `t − 1`.
    pub fn check_invariants(&self, t: Cycle) -> Result<(), String> {
        let v = self.vls;
        let done = t.saturating_sub(1);
        for (s, sw) in self.switches.iter().enumerate() {
            // The ready cycle of the switch's first waiting head.
            let mut first = NEVER;
            for g in sw.base as usize..(sw.base + sw.nports as u32) as usize {
                let mut port_total = 0;
                let org = &self.in_orgs[self.ports[g].in_org as usize];
                for vl in 0..v {
                    let i = g * v + vl;
                    // (A train's flits count from its head's arrival, a streaming packet's
                    // until its head left; the buffer holds those that have arrived and
                    // not left.)
                    let occ = self.inputs[i].occ_at(done);
                    port_total += occ;
                    if occ > org.max {
                        return Err(format!("port {g} VL {vl}: {occ} flits exceed the maximum"));
                    }
                    let queued: u32 = self.inputs[i].iter().map(|b| b.present_exact(done)).sum();
                    if queued != occ {
                        return Err(format!(
                            "port {g} VL {vl}: occupancy {occ} != queued {queued}"
                        ));
                    }
                    let peer = self.ports[g].peer;
                    if peer != PortIdx::NONE {
                        let used = self.credits.used(peer.idx(), Vl(vl as u8), done);
                        if used < occ || used > org.max {
                            return Err(format!(
                                "port {g} VL {vl}: sender counts {used}, receiver holds {occ}"
                            ));
                        }
                    }
                    let head_waits = self.inputs[i].head().is_some_and(|h| !h.busy);
                    if head_waits != (self.xbar[g].waiting & (1 << vl) != 0) {
                        return Err(format!("port {g} VL {vl}: waiting mask out of date"));
                    }
                    if head_waits {
                        first = first.min(self.inputs[i].head().map_or(NEVER, |h| h.ready));
                    }
                    if self.ports[g].egress() == Egress::OutputBuffer {
                        let held = self.obuf.account.used(g, Vl(vl as u8), done);
                        let max = self.obuf.account.org(g).map_or(u32::MAX, |o| o.max);
                        if held > max {
                            return Err(format!("port {g} VL {vl}: output buffer over capacity"));
                        }
                    }
                }
                let p = g - sw.base as usize;
                if p < 64 && (sw.in_waiting >> p & 1 != 0) != (self.xbar[g].waiting != 0) {
                    return Err(format!(
                        "port {g}: the switch's waiting-input set is out of date"
                    ));
                }
                let drains = self.obuf.waiting.get(g).is_some_and(|&w| w != 0)
                    && !self.obuf.stalled.get(g).is_some_and(|&b| b);
                if p < 64 && (sw.out_ready >> p & 1 != 0) != drains {
                    return Err(format!(
                        "port {g}: the switch's draining-output set is out of date"
                    ));
                }
                if sw.settled && self.xbar[g].waiting != 0 && self.xbar[g].in_conns >= sw.max_conns
                {
                    return Err(format!(
                        "port {g}: settled switch, busy input with a waiting head"
                    ));
                }
                let cap = org.total();
                if port_total > cap {
                    return Err(format!(
                        "port {g}: {port_total} flits exceed the port's {cap}"
                    ));
                }
            }
            // A settled switch has nothing to allocate before `wake_at`.
            if sw.settled && first != sw.wake_at {
                return Err(format!(
                    "switch {s}: settled with wake-up {} but its first head is ready at {first}",
                    sw.wake_at
                ));
            }
        }
        // A switch out of its lane's active set has nothing to do until an event wakes it.
        for lane in &self.lanes {
            for s in lane.switches.0..lane.switches.1 {
                let sw = &self.switches[s];
                let idle =
                    !sw.dirty && sw.wake_at == NEVER && sw.conns.is_empty() && sw.obuffered == 0;
                // Or asleep: only streaming connections, woken when the first steps again.
                let asleep = !sw.dirty
                    && sw.wake_at == NEVER
                    && sw.obuffered == 0
                    && sw.slept != super::switch::AWAKE
                    && sw.wake_event != super::switch::AWAKE
                    && (0..sw.conns.len()).all(|k| {
                        let wake = sw.wake_event.wrapping_sub(sw.slept) as u64;
                        sw.conns[k].left as u64 + 1 >= wake
                    });
                if !idle && !asleep && !has_bit(&lane.sw_active, s - lane.switches.0) {
                    return Err(format!("switch {s}: busy but out of the active set"));
                }
            }
        }
        if self.nic_receive {
            // A NIC's receive buffer: the switch counts at least the flits it holds, and
            // never more than the buffer.
            for (e, nic) in self.nics.iter().enumerate() {
                let peer = self.ports[self.nic_base as usize + e].peer;
                let Some(org) = self.credits.org(peer.idx()) else {
                    return Err(format!("NIC {e}: its switch port counts no credits"));
                };
                for vl in 0..v {
                    let held: u32 = nic
                        .rx
                        .iter()
                        .filter(|ev| ev.vl.idx() == vl)
                        .map(|ev| ev.n as u32)
                        .sum();
                    let used = self.credits.used(peer.idx(), Vl(vl as u8), done);
                    if used < held || used > org.max {
                        return Err(format!(
                            "NIC {e} VL {vl}: sender counts {used}, receive buffer holds {held}"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The non-empty input buffers when the stall detector fires at cycle `t`.
    pub(crate) fn deadlock_report(&self, t: Cycle) -> DeadlockReport {
        let mut blocked = Vec::new();
        for sw in &self.switches {
            for ip in 0..sw.nports as usize {
                let g = sw.base as usize + ip;
                for v in 0..self.vls {
                    if let Some(h) = self.inputs[g * self.vls + v].head() {
                        let (s, p) = self.port_names[g];
                        blocked.push(BlockedBuffer {
                            switch: self.switch_names[s as usize].clone(),
                            in_port: p as u32,
                            vl: v as u32,
                            out_port: h.out_port as u32,
                            out_vl: h.out_vl.0 as u32,
                            flits: self.inputs[g * self.vls + v].occ_at(t.saturating_sub(1)),
                        });
                    }
                }
            }
        }
        DeadlockReport {
            cycle: t,
            last_progress: self.progress_before(t),
            blocked,
        }
    }
}
