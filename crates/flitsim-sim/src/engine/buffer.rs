//! Buffer organisations and the credit accounting over them.
//!
//! A [`BufferOrg`] describes one port's buffer: a reserved minimum and a maximum for each VL
//! (the same for all its VLs) and a shared pool above the minima (a static buffer is the
//! special case min = max, no pool). A [`VlAccount`] counts the flits held or promised in the
//! buffers of many ports, each with its organisation, and answers "do `n` more flits fit into
//! VL `v` of port `g`?". The engine keeps four accounts of the same type:
//!
//! * **credits**: the sender's view of the receiver's input buffer at the other end of each
//!   output port (flits sent or reserved and not yet credited back); this covers the switches'
//!   input buffers and the Omni-Path switch's central and staging buffers;
//! * **output buffers** of combined input/output-queued switches;
//! * **NIC buffers**, one per endpoint, a fixed number of flits per VL.
use super::lane::{Carve, Pieces};
use crate::config::SharedBufferConfig;
use crate::ids::{Cycle, Vl, NEVER};

/// Receiver buffer organisation: a minimum (reserved) and a maximum for every VL, and the
/// shared pool above the minima. Every VL of a port has the same minimum and maximum (the
/// configuration gives one of each), so they are kept once: the hot loop's checks read them
/// from the organisation itself, not through a per-VL table.
#[derive(Clone, Debug)]
pub(crate) struct BufferOrg {
    /// Flits reserved for each VL.
    pub min: u32,
    /// The most one VL may hold.
    pub max: u32,
    pub shared: u32,
    /// VLs (for the port's total).
    vls: u32,
}

impl BufferOrg {
    /// Static buffers: `per_vl` flits for each of `vls` VLs.
    pub fn fixed(vls: usize, per_vl: u32) -> Self {
        BufferOrg {
            min: per_vl,
            max: per_vl,
            shared: 0,
            vls: vls as u32,
        }
    }

    /// Dynamically shared buffers.
    pub fn shared(vls: usize, sb: &SharedBufferConfig) -> Self {
        BufferOrg {
            min: sb.min_per_vl,
            max: sb.max_per_vl,
            shared: sb.total_flits - sb.min_per_vl * vls as u32,
            vls: vls as u32,
        }
    }

    /// The most one VL can ever hold.
    pub fn vl_cap(&self) -> u32 {
        self.max.min(self.min + self.shared)
    }

    /// Flits of the whole port.
    pub fn total(&self) -> u32 {
        self.min * self.vls + self.shared
    }

    #[inline(always)]
    fn over_of(&self, used: u32) -> u32 {
        used.saturating_sub(self.min)
    }

    /// Whether `n` more flits fit into a VL holding `used`, with `over` of the pool taken.
    #[inline(always)]
    pub fn fits(&self, used: u32, over: u32, n: u32) -> bool {
        if used + n > self.max {
            return false;
        }
        self.shared == 0 || over + self.over_of(used + n) - self.over_of(used) <= self.shared
    }

    /// The largest `n` for which [`fits`](Self::fits) holds.
    #[inline(always)]
    pub fn room(&self, used: u32, over: u32) -> u32 {
        let by_max = self.max.saturating_sub(used);
        if self.shared == 0 {
            return by_max;
        }
        // over_of(used + n) ≤ shared − over + over_of(used)  ⇔  n ≤ that + min − used.
        let pool = (self.shared + self.over_of(used) + self.min)
            .saturating_sub(over)
            .saturating_sub(used);
        by_max.min(pool)
    }

    /// Pool flits taken when a VL grows from `used` by `n`.
    #[inline(always)]
    pub fn grow(&self, used: u32, n: u32) -> u32 {
        if self.shared == 0 {
            0
        } else {
            self.over_of(used + n) - self.over_of(used)
        }
    }
}

/// The organisation of a port whose receiver never refuses flits (an endpoint sinks at link
/// rate): every check passes and nothing is counted.
pub(crate) const UNLIMITED: u8 = u8::MAX;

/// A credit train under way for one (port, VL) of a [`VlAccount`] (accounts that have them:
/// the switches' and NICs' credits when trains are on; see [`VlAccount::enable_trains`]).
///
/// A credit train (`link::F_TRAIN` on a credit event) returns `n` credits one per cycle from
/// cycle `since` on: its receiver forwards the packet one flit per cycle from the head on.
/// The count keeps them until they are folded in, and readers take off those back by the
/// cycle they read in, so a train costs one event; the next train (or credit) for the VL
/// comes after its last credit, since a VL buffer sends its packets one after another, and
/// folds it in. (Kept apart from the counts, so that accounts without trains stay as small
/// as they were.)
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Train {
    n: u32,
    since: Cycle,
}

impl Train {
    /// Credits back by the end of cycle `now`.
    #[inline(always)]
    fn back(&self, now: Cycle) -> u32 {
        (now + 1).saturating_sub(self.since).min(self.n as u64) as u32
    }
}

/// Flits held (or promised) per (port, VL) in buffers of given organisations.
#[derive(Clone, Debug, Default)]
pub(crate) struct VlAccount {
    vls: usize,
    /// Per (port, VL).
    used: Vec<u32>,
    /// Per (port, VL), with credit trains; else empty.
    trains: Vec<Train>,
    /// Per port: pool flits taken.
    over: Vec<u32>,
    /// Per port: index into `orgs`, or [`UNLIMITED`].
    org: Vec<u8>,
    orgs: Vec<BufferOrg>,
}

impl VlAccount {
    /// An account of `ports` ports with `vls` VLs each; port `g` has organisation
    /// `orgs[org[g]]`.
    pub fn new(vls: usize, org: Vec<u8>, orgs: Vec<BufferOrg>) -> Self {
        VlAccount {
            vls,
            used: vec![0; org.len() * vls],
            trains: Vec::new(),
            over: vec![0; org.len()],
            org,
            orgs,
        }
    }

    /// No port has a shared pool.
    pub fn no_shared_pool(&self) -> bool {
        self.orgs.iter().all(|o| o.shared == 0)
    }

    /// Asks for the lines that VL `vl` of port `g` is counted on (its count, train and
    /// organisation, and its port's shared-pool count).
    #[inline(always)]
    pub fn prefetch(&self, g: usize, vl: Vl) {
        let i = g * self.vls + vl.idx();
        if let Some(u) = self.used.get(i) {
            super::prefetch(u);
        }
        if let Some(tr) = self.trains.get(i) {
            super::prefetch(tr);
        }
        if let Some(o) = self.org.get(g) {
            super::prefetch(o);
        }
        if let Some(o) = self.over.get(g) {
            super::prefetch(o);
        }
    }

    /// Lets credits return as trains ([`Train`]).
    pub fn enable_trains(&mut self) {
        self.trains = vec![Train::default(); self.used.len()];
    }

    /// Flits counted in VL `vl` of port `g` in cycle `now`.
    #[inline(always)]
    pub fn used(&self, g: usize, vl: Vl, now: Cycle) -> u32 {
        let i = g * self.vls + vl.idx();
        self.used[i] - self.trains.get(i).map_or(0, |tr| tr.back(now))
    }

    /// A credit train of `n` credits for VL `vl` of port `g`, one per cycle from `since` on
    /// (see [`Train`]; accounts without a shared pool only).
    pub fn start_train(&mut self, g: usize, vl: Vl, n: u32, since: Cycle) {
        debug_assert!(self.org(g).is_none_or(|o| o.shared == 0));
        let i = g * self.vls + vl.idx();
        start_train(&mut self.used[i], &mut self.trains[i], n, since);
    }

    /// The organisation of port `g` (`None`: unlimited).
    #[inline(always)]
    pub fn org(&self, g: usize) -> Option<&BufferOrg> {
        self.orgs.get(self.org[g] as usize)
    }

    /// Whether `n` more flits fit into VL `vl` of port `g` (the engine asks through
    /// [`AccountView::fits`]; the tests through this).
    #[cfg(test)]
    pub fn fits(&self, g: usize, vl: Vl, n: u32) -> bool {
        match self.org(g) {
            None => true,
            Some(o) => o.fits(self.used[g * self.vls + vl.idx()], self.over[g], n),
        }
    }

    /// The largest number of flits (≤ `want`) that fit into VL `vl` of port `g` now (an
    /// account without credit trains: the NICs' buffers; the switches' credits are asked
    /// through [`AccountView::room`]).
    #[inline(always)]
    pub fn room(&self, g: usize, vl: Vl, want: u32) -> u32 {
        match self.org(g) {
            None => want,
            Some(o) => o
                .room(self.used[g * self.vls + vl.idx()], self.over[g])
                .min(want),
        }
    }

    /// Counts `n` more flits in VL `vl` of port `g`.
    #[inline(always)]
    pub fn reserve(&mut self, g: usize, vl: Vl, n: u32) {
        let Some(o) = self.orgs.get(self.org[g] as usize) else {
            return;
        };
        let i = g * self.vls + vl.idx();
        let u = self.used[i];
        self.over[g] += o.grow(u, n);
        self.used[i] = u + n;
    }

    /// Counts `n` flits fewer in VL `vl` of port `g` (they left, or their credits came back).
    #[inline(always)]
    pub fn release(&mut self, g: usize, vl: Vl, n: u32) {
        let Some(o) = self.orgs.get(self.org[g] as usize) else {
            return;
        };
        let i = g * self.vls + vl.idx();
        let u = self.used[i];
        debug_assert!(u >= n, "release exceeds the flits counted");
        self.over[g] -= o.grow(u - n, n);
        self.used[i] = u - n;
    }
}

impl VlAccount {
    /// Views of the ports `cuts[k]..cuts[k + 1]` for each `k`, one per lane of a switch phase
    /// (the cuts increase; the ports outside them are left out).
    pub fn split<'c>(&mut self, cuts: &'c [usize], now: Cycle) -> Pieces<'c, AccountCut<'_>> {
        Pieces::new(
            AccountCut {
                now,
                vls: self.vls,
                at: 0,
                used: &mut self.used,
                trains: &mut self.trains,
                over: &mut self.over,
                org: &self.org,
                orgs: &self.orgs,
            },
            cuts,
        )
    }
}

/// A [`VlAccount`] being cut into [`AccountView`]s (see [`Carve`]).
pub(crate) struct AccountCut<'a> {
    now: Cycle,
    vls: usize,
    /// The port `used` and `over` start at.
    at: usize,
    used: &'a mut [u32],
    /// Empty without credit trains.
    trains: &'a mut [Train],
    over: &'a mut [u32],
    org: &'a [u8],
    orgs: &'a [BufferOrg],
}

impl<'a> Carve for AccountCut<'a> {
    type Piece = AccountView<'a>;
    fn carve(&mut self, from: usize, to: usize) -> AccountView<'a> {
        let vls = self.vls;
        // An account without ports (no output buffers) gives empty views.
        let (used, over, org): (&mut [u32], &mut [u32], &[u8]) = if self.over.is_empty() {
            (&mut [], &mut [], &[])
        } else {
            let (_, used) = std::mem::take(&mut self.used).split_at_mut((from - self.at) * vls);
            let (_, over) = std::mem::take(&mut self.over).split_at_mut(from - self.at);
            let (u, rest_u) = used.split_at_mut((to - from) * vls);
            let (o, rest_o) = over.split_at_mut(to - from);
            (self.used, self.over) = (rest_u, rest_o);
            (u, o, &self.org[from..to])
        };
        let trains: &mut [Train] = if self.trains.is_empty() {
            &mut []
        } else {
            let (_, tr) = std::mem::take(&mut self.trains).split_at_mut((from - self.at) * vls);
            let (tr, rest) = tr.split_at_mut((to - from) * vls);
            self.trains = rest;
            tr
        };
        self.at = to;
        AccountView {
            now: self.now,
            vls,
            base: from,
            used,
            trains,
            over,
            org,
            orgs: self.orgs,
        }
    }
    fn split_at_item(self, at: usize) -> (Self, Self) {
        let k = (at.max(self.at) - self.at).min(self.over.len());
        let (ua, ub) = self.used.split_at_mut(k * self.vls);
        let (oa, ob) = self.over.split_at_mut(k);
        let (ta, tb) = if self.trains.is_empty() {
            (&mut [][..], &mut [][..])
        } else {
            self.trains.split_at_mut(k * self.vls)
        };
        let part = |at, used, trains, over| AccountCut {
            now: self.now,
            vls: self.vls,
            at,
            used,
            trains,
            over,
            org: self.org,
            orgs: self.orgs,
        };
        (part(self.at, ua, ta, oa), part(self.at + k, ub, tb, ob))
    }
}

/// A [`VlAccount`] restricted to a range of ports, indexed by the global port numbers (see
/// [`VlAccount::split`]).
pub(crate) struct AccountView<'a> {
    /// The cycle the view is read in (credit trains count up to it).
    pub now: Cycle,
    vls: usize,
    /// The first port of the view.
    base: usize,
    used: &'a mut [u32],
    /// Empty without credit trains.
    trains: &'a mut [Train],
    over: &'a mut [u32],
    org: &'a [u8],
    orgs: &'a [BufferOrg],
}

impl AccountView<'_> {
    /// The count of (local) index `i` in the view's cycle.
    #[inline(always)]
    fn count(&self, i: usize) -> u32 {
        self.used[i] - self.trains.get(i).map_or(0, |tr| tr.back(self.now))
    }

    #[inline(always)]
    fn org(&self, g: usize) -> Option<&BufferOrg> {
        self.orgs.get(self.org[g - self.base] as usize)
    }

    /// Whether `n` more flits fit into VL `vl` of port `g`.
    #[inline(always)]
    pub fn fits(&self, g: usize, vl: Vl, n: u32) -> bool {
        let l = g - self.base;
        match self.org(g) {
            None => true,
            Some(o) => o.fits(self.count(l * self.vls + vl.idx()), self.over[l], n),
        }
    }

    /// As [`VlAccount::room`].
    #[inline(always)]
    pub fn room(&self, g: usize, vl: Vl, want: u32) -> u32 {
        let l = g - self.base;
        match self.org(g) {
            None => want,
            Some(o) => o
                .room(self.count(l * self.vls + vl.idx()), self.over[l])
                .min(want),
        }
    }

    /// As [`VlAccount::reserve`].
    #[inline(always)]
    pub fn reserve(&mut self, g: usize, vl: Vl, n: u32) {
        let l = g - self.base;
        let Some(o) = self.orgs.get(self.org[l] as usize) else {
            return;
        };
        let i = l * self.vls + vl.idx();
        let u = self.used[i];
        if o.shared != 0 {
            self.over[l] += o.grow(u, n);
        }
        self.used[i] = u + n;
    }

    /// As [`VlAccount::release`].
    #[inline(always)]
    pub fn release(&mut self, g: usize, vl: Vl, n: u32) {
        let l = g - self.base;
        let Some(o) = self.orgs.get(self.org[l] as usize) else {
            return;
        };
        let i = l * self.vls + vl.idx();
        let u = self.used[i];
        debug_assert!(u >= n, "release exceeds the flits counted");
        if o.shared != 0 {
            self.over[l] -= o.grow(u - n, n);
        }
        self.used[i] = u - n;
    }

    /// The first cycle from `now` on in which `n` flits fit into VL `vl` of port `g` with the
    /// credits of the train under way ([`NEVER`] if they need more; `now` if they fit). Ports
    /// without a shared pool.
    #[inline]
    pub fn room_at(&self, g: usize, vl: Vl, n: u32) -> Cycle {
        let l = g - self.base;
        let Some(o) = self.org(g) else {
            return self.now;
        };
        debug_assert_eq!(o.shared, 0);
        let i = l * self.vls + vl.idx();
        let tr = self.trains.get(i).copied().unwrap_or_default();
        // Credits still to come back before the flits fit.
        let back = (self.used[i] + n).saturating_sub(o.max);
        if back == 0 {
            return self.now;
        }
        if back > tr.n {
            return NEVER;
        }
        (tr.since + back as u64 - 1).max(self.now)
    }

    /// Asks for the lines of VL `vl` of port `g`'s count (and credit train), organisation and
    /// shared-pool count, if the view has the port (as [`VlAccount::prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, g: usize, vl: Vl) {
        let l = g.wrapping_sub(self.base);
        let i = l * self.vls + vl.idx();
        if let Some(u) = self.used.get(i) {
            super::prefetch(u);
        }
        if let Some(tr) = self.trains.get(i) {
            super::prefetch(tr);
        }
        if let Some(o) = self.org.get(l) {
            super::prefetch(o);
        }
        if let Some(o) = self.over.get(l) {
            super::prefetch(o);
        }
    }

    /// As [`VlAccount::start_train`].
    #[inline(always)]
    pub fn start_train(&mut self, g: usize, vl: Vl, n: u32, since: Cycle) {
        let l = g - self.base;
        if self.org[l] as usize >= self.orgs.len() {
            return;
        }
        let i = l * self.vls + vl.idx();
        start_train(&mut self.used[i], &mut self.trains[i], n, since);
    }
}

/// A train of `n` credits from cycle `since` on for the count `used` whose last train was
/// `tr` (ended by now: its credits are folded in).
#[inline(always)]
fn start_train(used: &mut u32, tr: &mut Train, n: u32, since: Cycle) {
    debug_assert!(tr.since + tr.n as u64 <= since, "credit trains overlap");
    *used -= tr.n;
    *tr = Train { n, since };
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// `room` is the largest `n` that `fits`, on random states of static and shared buffers.
    #[test]
    fn room_is_the_largest_fit() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        for _ in 0..2000 {
            let vls = rng.gen_range(1..5usize);
            let min = rng.gen_range(0..8u32);
            let max = rng.gen_range(min.max(1)..40);
            let total = min * vls as u32 + rng.gen_range(0..40);
            let org = if rng.gen_bool(0.3) {
                BufferOrg::fixed(vls, max)
            } else {
                BufferOrg::shared(
                    vls,
                    &SharedBufferConfig {
                        total_flits: total,
                        min_per_vl: min,
                        max_per_vl: max,
                    },
                )
            };
            let mut acc = VlAccount::new(vls, vec![0], vec![org]);
            // Fill VLs at random with what fits.
            for _ in 0..rng.gen_range(0..12) {
                let v = Vl(rng.gen_range(0..vls) as u8);
                let n = rng.gen_range(1..10);
                if acc.fits(0, v, n) {
                    acc.reserve(0, v, n);
                }
            }
            for v in 0..vls {
                let v = Vl(v as u8);
                let mut k = 0;
                while k < 100 && acc.fits(0, v, k + 1) {
                    k += 1;
                }
                assert_eq!(acc.room(0, v, 100), k, "vl {v}");
            }
        }
    }

    /// Reserving and releasing the same flits restores the pool.
    #[test]
    fn release_undoes_reserve() {
        let org = BufferOrg::shared(
            2,
            &SharedBufferConfig {
                total_flits: 40,
                min_per_vl: 4,
                max_per_vl: 30,
            },
        );
        let mut acc = VlAccount::new(2, vec![0, UNLIMITED], vec![org]);
        acc.reserve(0, Vl(0), 20);
        assert_eq!(acc.room(0, Vl(1), 100), 20);
        acc.release(0, Vl(0), 20);
        assert_eq!(acc.room(0, Vl(1), 100), 30);
        assert!(acc.fits(1, Vl(0), 1_000_000));
        acc.reserve(1, Vl(0), 5);
        assert_eq!(acc.used(1, Vl(0), 0), 0);
    }
}
