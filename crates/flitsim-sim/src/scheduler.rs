//! Output-port schedulers: given the set of VLs that have a packet able to start on a port,
//! choose one. One scheduler instance per switch output port and per NIC. QoS schedulers
//! (SBT, DTable, IB VLArbitration, EDF) are further variants of [`OutputScheduler`]; the engine
//! only calls [`OutputScheduler::pick`] and [`OutputScheduler::sent`].
use crate::config::SchedulerConfig;

/// Bit set of VLs (bit v = VL v), up to 32 VLs.
pub type VlMask = u32;

/// A scheduler's state.
#[derive(Clone, Debug)]
pub enum OutputScheduler {
    /// Round robin: the first eligible VL after the last one served.
    RoundRobin {
        /// Last VL served.
        last: u8,
        /// Number of VLs.
        vls: u8,
    },
    /// Strict priority: `rank[v]` is VL v's priority (0 = highest).
    StrictPriority {
        /// VLs in priority order, highest first.
        order: Vec<u8>,
    },
}

impl OutputScheduler {
    /// Builds a scheduler for a port with `vls` VLs.
    pub fn new(cfg: &SchedulerConfig, vls: u8) -> Result<Self, String> {
        Ok(match cfg {
            SchedulerConfig::RoundRobin => OutputScheduler::RoundRobin { last: vls - 1, vls },
            SchedulerConfig::StrictPriority { order } => {
                if let Some(&v) = order.iter().find(|&&v| v >= vls) {
                    return Err(format!(
                        "scheduler.order names VL {v}, but there are only {vls} VLs"
                    ));
                }
                let mut full: Vec<u8> = Vec::with_capacity(vls as usize);
                for &v in order {
                    if !full.contains(&v) {
                        full.push(v);
                    }
                }
                for v in (0..vls).rev() {
                    if !full.contains(&v) {
                        full.push(v);
                    }
                }
                OutputScheduler::StrictPriority { order: full }
            }
        })
    }

    /// Chooses one VL from the non-empty `eligible` mask.
    #[inline]
    pub fn pick(&mut self, eligible: VlMask) -> u8 {
        debug_assert!(eligible != 0);
        match self {
            OutputScheduler::RoundRobin { last, vls } => {
                let start = (*last as u32 + 1) % *vls as u32;
                // Rotate so that `start` is bit 0, then take the lowest set bit.
                let n = *vls as u32;
                let full = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
                let rotated = if start == 0 {
                    eligible
                } else {
                    ((eligible >> start) | (eligible << (n - start))) & full
                };
                let v = ((rotated.trailing_zeros() + start) % n) as u8;
                *last = v;
                v
            }
            OutputScheduler::StrictPriority { order } => *order
                .iter()
                .find(|&&v| eligible & (1 << v) != 0)
                .expect("eligible VL in order"),
        }
    }

    /// Informs the scheduler that `flits` of a packet on `vl` were committed to the port
    /// (weighted schedulers charge them here).
    #[inline]
    pub fn sent(&mut self, _vl: u8, _flits: u32) {}
}

/// Round-robin arbiter over `n` requesters, granting the first requester after the last grant.
#[derive(Clone, Copy, Debug, Default)]
pub struct RoundRobinArbiter {
    last: u16,
}

impl RoundRobinArbiter {
    /// The requester index to start searching from.
    #[inline]
    pub fn start(&self, n: usize) -> usize {
        (self.last as usize + 1) % n.max(1)
    }
    /// Records a grant.
    #[inline]
    pub fn grant(&mut self, i: usize) {
        self.last = i as u16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference model: scan VLs last+1, last+2, … and take the first eligible one.
    fn reference_rr(last: u8, vls: u8, mask: u32) -> u8 {
        (1..=vls)
            .map(|d| (last + d) % vls)
            .find(|&v| mask & (1 << v) != 0)
            .unwrap()
    }

    #[test]
    fn round_robin_matches_reference_on_random_masks() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        for vls in [1u8, 2, 3, 4, 8, 15, 16, 31, 32] {
            let mut s = OutputScheduler::new(&SchedulerConfig::RoundRobin, vls).unwrap();
            let mut last = vls - 1;
            for _ in 0..2000 {
                let full = if vls == 32 {
                    u32::MAX
                } else {
                    (1u32 << vls) - 1
                };
                let mask = rng.gen::<u32>() & full;
                if mask == 0 {
                    continue;
                }
                let want = reference_rr(last, vls, mask);
                assert_eq!(s.pick(mask), want, "vls={vls} mask={mask:b} last={last}");
                last = want;
            }
        }
    }

    #[test]
    fn strict_priority_prefers_listed_then_highest() {
        let mut s =
            OutputScheduler::new(&SchedulerConfig::StrictPriority { order: vec![1] }, 4).unwrap();
        assert_eq!(s.pick(0b1111), 1);
        assert_eq!(s.pick(0b1101), 3);
        assert_eq!(s.pick(0b0001), 0);
        assert!(
            OutputScheduler::new(&SchedulerConfig::StrictPriority { order: vec![4] }, 4).is_err()
        );
    }
}
