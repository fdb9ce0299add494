//! DTable arbitration-table configurator.
//!
//! Source: the Omni-Path QoS paper, `000_942770a54f7010fd.txt` in the shared papers,
//! §3.3 (DTable scheduler, Algorithm 2), §3.3.2 (configuration methodology, Table 4),
//! §3.3.3 (bandwidth correction, Tables 5 and 6) and §4.1/§4.2.2 (Tables 9 and 10).
//!
//! A DTable arbitration table has `N` entries; each entry belongs to one SL and carries a
//! weight (in the same units as the MTUs, e.g. 64-byte credits). The scheduler walks the table
//! round-robin, so the *maximum distance* between two consecutive entries of an SL bounds its
//! latency, while the weights set its bandwidth. The configurator decouples the two:
//!
//! 1. **Placement** ([`place_entries`]): an SL with maximum distance `d` gets
//!    `n_i = ⌈N / d⌉` entries, the fewest that can keep every cyclic gap `≤ d`. SLs are placed
//!    tightest first (stable on ties). Each SL first tries an evenly spaced pattern
//!    `o + ⌊j·N/n_i⌋` at the smallest offset `o` whose slots are all free; failing that, its
//!    entries are shifted to the free slots nearest that pattern that still keep the distance
//!    bound with exactly `n_i` entries; failing that, [`QosError::Placement`] names the SL.
//!    With §4.1's distances (2, 4, 8, 16, 16) this fills all 128 entries with 64, 32, 16, 8
//!    and 8 entries (Table 9).
//! 2. **Ranges** (§3.3.2): `M = GMTU · w` (maximum entry weight), `pool = N · GMTU · k`
//!    (`k ≤ w`), and the assignable shares are
//!    `min φ_i = n_i · MTU_i / pool` and `max φ_i = n_i · M / pool = n_i · w / (N · k)`.
//!    A requested share outside the range is a [`QosError::ShareOutOfRange`].
//! 3. **Weights** (§3.3.3): `Tweight_i = φ_i · pool`, entry weight
//!    `E.W._i = ⌈Tweight_i / n_i⌉` (rounded up so that it is an integer able to deliver one
//!    MTU), table weight of the SL `W_i = n_i · E.W._i`, table total `W = Σ_j W_j`, and the
//!    bandwidth the SL would really get `Rφ_i = W_i / W`.
//! 4. **Correction** (§3.3.3): `Dweight_i = −Round((Rφ_i − φ_i) · W)`, computed as the
//!    algebraically identical `Round(φ_i · W − W_i)` (one rounding error fewer);
//!    `Fweight_i = W_i + Dweight_i`, final share `Fφ_i = Fweight_i / Σ_j Fweight_j`.
//!    `Dweight_i` is spread over the SL's entries one unit at a time, round-robin, walking the
//!    SL's entries backwards from the end of the table ([`apply_bandwidth_correction`],
//!    Table 6). An entry is never decremented below the SL's MTU ("the system checks during
//!    the increasing process if the weight on the entries is enough to deliver a
//!    packet/MTU"); if no entry can absorb the decrement, [`QosError::WeightBelowMtu`].
//!
//! Numbers reproduced (see `tests/dtable_golden.rs`):
//! - Table 5 (`N = 128, GMTU = 3, w = 4, k = 3`): pool 1152, `min φ` 0.05556/0.05556/0.08333,
//!   `max φ` 0.66667/0.33333/0.33333, E.W. 7/12/12, `W_i` 448/384/384 (`W` = 1216),
//!   `Rφ` 0.36842/0.31579/0.31579, Dweight −43/21/21, Fweight 405 each (1215), `Fφ` 0.33333.
//! - Table 9 (`N = 128, GMTU = 16 units of 64 B, w = 8, k = 2`): pool 4096, M = 128,
//!   entries 64/32/16/8/8, `min φ` 0.03125 each, `max φ` 2/1/0.5/0.25/0.25.
//! - Table 10 (shares 0.1/0.3/0.5/0.05/0.05): E.W. 7/39/128/26/26, `W` = 4160,
//!   `Rφ` ≈ 0.11/0.3/0.49/0.05/0.05, Dweight −32/0/+32/0/0, final VO weights 7 (first 32
//!   entries) and 6 (last 32) = 416, CL 16 × 130 = 2080, total 4160, `Fφ` = 0.1/0.3/0.5/0.05/0.05.
//!
//! Notes on the paper's printed numbers:
//! - Table 5 prints `φ` = 0.33334/0.33333/0.33333 but its `Tweight` (384.0768, 383.9616) and
//!   `Rφ − φ` (0.03502, −0.01751) columns were computed with `φ` = 0.3334/0.3333/0.3333; the
//!   integer results (E.W., Dweight, Fweight) are the same with either. `Rφ_2` is printed
//!   truncated (0.31578 for 384/1216 = 0.315789…). The text says "each SL will get
//!   `φ_i = 1/pool`" where `φ_i ≈ 1/3` is meant, and calls the column "`φ_i − Rφ_i`" although
//!   both the table header and the values are `Rφ_i − φ_i`.
//! - Table 10: after correction the CL entries weigh 130, above `M = GMTU · w = 128`. The
//!   paper accepts this, so the configurator enforces `M` only through the `max φ` check, not
//!   after the correction.
//! - Weights are in MTU units (64-byte credits in §4.1), although §3.2 speaks of packets.
use super::QosError;
use serde::{Deserialize, Serialize};
use std::collections::{HashSet, VecDeque};

/// Relative tolerance for the `[min φ, max φ]` check, `Σ φ ≤ 1` and near-integer rounding.
const EPS: f64 = 1e-9;

/// Most table entries `N` the configurator takes (4096; arbitration tables in hardware have
/// tens to hundreds: InfiniBand's VLArb tables 64 each, the paper's DTable 128). Placement
/// costs up to O(N²) per SL, so the limit keeps every configuration to a fraction of a second
/// instead of running away on, say, `N = 10⁸`.
pub const MAX_DTABLE_ENTRIES: u32 = 4096;
/// Most SLs a configuration may have (64; InfiniBand has 16 SLs, Omni-Path 32).
pub const MAX_DTABLE_SLS: usize = 64;

/// What one SL asks of the arbitration table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlRequirement {
    /// Name of the SL (non-empty, unique within a configuration).
    pub name: String,
    /// Maximum distance between two consecutive table entries of this SL, cyclically
    /// (latency requirement; ≥ 1).
    pub max_distance: u32,
    /// `MTU_i`, in units of [`DTableParams::unit_bytes`] (1 ≤ `mtu` ≤ GMTU).
    pub mtu: u32,
    /// Requested bandwidth fraction `φ_i`.
    pub share: f64,
}

/// Arbitration-table parameters of §3.3.2 (Table 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DTableParams {
    /// `N`: number of table entries.
    pub entries: u32,
    /// `GMTU`: general maximum transfer unit, in units of `unit_bytes`.
    pub gmtu: u32,
    /// `w`: maximum-weight decoupling parameter (`M = GMTU · w`).
    pub w: u32,
    /// `k`: bandwidth-pool decoupling parameter (`pool = N · GMTU · k`, `k ≤ w`).
    pub k: u32,
    /// Size of one weight/MTU unit in bytes (64: the credit size of §4.1).
    #[serde(default = "default_unit_bytes")]
    pub unit_bytes: u32,
}

fn default_unit_bytes() -> u32 {
    64
}

impl Default for DTableParams {
    /// The configuration of §4.1 / Table 9: `N = 128, GMTU = 16` (1 KiB in 64-byte units),
    /// `w = 8, k = 2`.
    fn default() -> Self {
        DTableParams {
            entries: 128,
            gmtu: 16,
            w: 8,
            k: 2,
            unit_bytes: default_unit_bytes(),
        }
    }
}

impl DTableParams {
    /// Checks `1 ≤ N ≤` [`MAX_DTABLE_ENTRIES`], `GMTU ≥ 1`, `1 ≤ k ≤ w`, `unit_bytes ≥ 1`, and that the pool and the
    /// maximum table weight `N · M` fit comfortably in integers.
    pub fn validate(&self) -> Result<(), QosError> {
        let bad = |m: &str| Err(QosError::InvalidParams(m.to_string()));
        if self.entries == 0 {
            return bad("the table needs at least one entry (N ≥ 1)");
        }
        if self.entries > MAX_DTABLE_ENTRIES {
            return Err(QosError::InvalidParams(format!(
                "N = {} entries is more than the limit of {MAX_DTABLE_ENTRIES}",
                self.entries
            )));
        }
        if self.gmtu == 0 {
            return bad("GMTU must be ≥ 1");
        }
        if self.k == 0 || self.w == 0 {
            return bad("w and k must be ≥ 1");
        }
        if self.k > self.w {
            return Err(QosError::InvalidParams(format!(
                "k = {} > w = {}: the pool N·GMTU·k must not exceed N·M = N·GMTU·w",
                self.k, self.w
            )));
        }
        if self.unit_bytes == 0 {
            return bad("unit_bytes must be ≥ 1");
        }
        if self.max_entry_weight() > u64::from(u32::MAX / 2)
            || self.entries as u64 * self.max_entry_weight() > 1 << 52
        {
            return bad("GMTU · w is too large for entry weights");
        }
        Ok(())
    }

    /// `M = GMTU · w`: maximum weight per table entry.
    pub fn max_entry_weight(&self) -> u64 {
        self.gmtu as u64 * self.w as u64
    }

    /// `pool = N · GMTU · k`: the total weight the shares are taken from.
    pub fn pool(&self) -> u64 {
        self.entries as u64 * self.gmtu as u64 * self.k as u64
    }

    /// `⌈N / d⌉`: the number of entries an SL with maximum distance `d ≥ 1` needs.
    pub fn entries_for_distance(&self, max_distance: u32) -> u32 {
        self.entries.div_ceil(max_distance.max(1))
    }

    /// `(min φ, max φ) = (n_i · MTU_i / pool, n_i · w / (N · k))` for an SL with `n_i`
    /// entries and MTU `mtu` (units).
    pub fn phi_range(&self, n_i: u32, mtu: u32) -> (f64, f64) {
        let pool = self.pool() as f64;
        (
            n_i as f64 * mtu as f64 / pool,
            n_i as f64 * self.max_entry_weight() as f64 / pool,
        )
    }

    /// Converts a size in bytes to units of `unit_bytes`, rounding up (e.g. 128 B → 2 units
    /// of 64 B).
    pub fn units(&self, bytes: u32) -> u32 {
        bytes.div_ceil(self.unit_bytes.max(1))
    }
}

/// Configuration computed for one SL (one row of Tables 5, 9 and 10).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlConfig {
    /// Name of the SL.
    pub name: String,
    /// Its maximum distance between consecutive entries.
    pub max_distance: u32,
    /// `MTU_i` in units.
    pub mtu: u32,
    /// `n_i`: number of table entries of the SL.
    pub entries: u32,
    /// Table positions of its entries, ascending.
    pub entry_ids: Vec<u32>,
    /// Final (corrected) weight of each entry, parallel to `entry_ids`.
    pub weights: Vec<u32>,
    /// `Fweight_i`: sum of `weights` after the correction.
    pub total_weight: u64,
    /// `min φ_i = n_i · MTU_i / pool`.
    pub min_phi: f64,
    /// `max φ_i = n_i · w / (N · k)`.
    pub max_phi: f64,
    /// `φ_i`: the requested share.
    pub requested_phi: f64,
    /// `Tweight_i = φ_i · pool`.
    pub tweight: f64,
    /// `E.W.`: entry weight before the correction, `⌈Tweight_i / n_i⌉`.
    pub entry_weight: u32,
    /// `Σ weight_j` of the SL before the correction, `n_i · E.W.`.
    pub raw_weight: u64,
    /// `Rφ_i`: share before the correction, `raw_weight / Σ_j raw_weight_j`.
    pub raw_phi: f64,
    /// `Dweight_i`: weight added (negative: removed) by the correction.
    pub dweight: i64,
    /// `Fφ_i`: achieved share after the correction, `total_weight / Σ_j total_weight_j`.
    pub phi: f64,
}

/// A configured DTable arbitration table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DTable {
    /// `pool = N · GMTU · k`.
    pub pool: u64,
    /// `M = GMTU · w` (the correction may exceed it, as in Table 10).
    pub max_entry_weight: u64,
    /// `Σ` of all weights before the correction (1216 in Table 5).
    pub raw_total_weight: u64,
    /// `Σ` of all weights after the correction (1215 in Table 5), equal to the sum of the
    /// `table` weights.
    pub total_weight: u64,
    /// Per-SL configuration, in the order of the requirements.
    pub sls: Vec<SlConfig>,
    /// The `N` entries in table order as `(SL name, weight)`. Entries no SL needs (when
    /// `Σ n_i < N`) are unassigned and appear as `("", 0)`; the scheduler skips them like
    /// entries of inactive SLs.
    pub table: Vec<(String, u32)>,
}

impl DTable {
    /// The configuration of the SL called `name`.
    pub fn sl(&self, name: &str) -> Option<&SlConfig> {
        self.sls.iter().find(|s| s.name == name)
    }
}

/// Places the entries of every SL in a table of `entries` slots (step 1 of the module
/// documentation). Only `name` and `max_distance` of the requirements are used. Returns, per
/// requirement (in input order), the ascending table positions of its `⌈N / d⌉` entries, with
/// every cyclic gap between consecutive entries `≤ d`. At most [`MAX_DTABLE_ENTRIES`] entries
/// and [`MAX_DTABLE_SLS`] SLs.
pub fn place_entries(entries: u32, sls: &[SlRequirement]) -> Result<Vec<Vec<u32>>, QosError> {
    if entries == 0 {
        return Err(QosError::InvalidParams(
            "the table needs at least one entry (N ≥ 1)".into(),
        ));
    }
    if entries > MAX_DTABLE_ENTRIES {
        return Err(QosError::InvalidParams(format!(
            "N = {entries} entries is more than the limit of {MAX_DTABLE_ENTRIES}"
        )));
    }
    if sls.len() > MAX_DTABLE_SLS {
        return Err(QosError::InvalidParams(format!(
            "{} SLs is more than the limit of {MAX_DTABLE_SLS}",
            sls.len()
        )));
    }
    let nt = entries as usize;
    let mut free = vec![true; nt];
    let mut order: Vec<usize> = (0..sls.len()).collect();
    order.sort_by_key(|&i| sls[i].max_distance); // stable: ties keep input order
    let mut out = vec![Vec::new(); sls.len()];
    for i in order {
        let sl = &sls[i];
        if sl.max_distance == 0 {
            return Err(QosError::InvalidSl {
                sl: sl.name.clone(),
                reason: "max_distance must be ≥ 1".into(),
            });
        }
        let d = (sl.max_distance as usize).min(nt);
        let n = nt.div_ceil(d);
        let available = free.iter().filter(|&&f| f).count();
        let fail = |reason: String| QosError::Placement {
            sl: sl.name.clone(),
            max_distance: sl.max_distance,
            reason,
        };
        if n > available {
            return Err(fail(format!(
                "needs {n} of the {nt} entries but only {available} are free"
            )));
        }
        let pos = place_even(&free, n)
            .or_else(|| place_shifted(&free, n, d))
            .ok_or_else(|| {
                fail(format!(
                    "no choice of {n} of the {available} free entries keeps consecutive \
                     entries within distance {d}"
                ))
            })?;
        for &p in &pos {
            free[p] = false;
        }
        out[i] = pos.into_iter().map(|p| p as u32).collect();
    }
    Ok(out)
}

/// Evenly spaced pattern `o + ⌊j·N/n⌋` at the smallest offset `o` whose slots are all free.
/// Its gaps are `⌊N/n⌋` or `⌈N/n⌉ ≤ d` because `n = ⌈N/d⌉`.
fn place_even(free: &[bool], n: usize) -> Option<Vec<usize>> {
    let nt = free.len();
    (0..nt).find_map(|o| {
        let mut pos: Vec<usize> = (0..n).map(|j| (o + j * nt / n) % nt).collect();
        if pos.iter().all(|&p| free[p]) {
            pos.sort_unstable();
            Some(pos)
        } else {
            None
        }
    })
}

/// Exactly `n` free slots with every cyclic gap `≤ d`, as close as possible to the evenly
/// spaced pattern anchored at the first entry.
///
/// Any valid placement has an entry among the first `d` slots, so only those are tried as the
/// first entry `s`. For a start `s`, in coordinates `t = 0..N` relative to `s`, `hops[t]` is
/// the fewest further entries after one at `t` that close the cycle (reach `t = N`, i.e. `s`
/// again, within distance `d`); it is computed backwards with a sliding-window minimum. A
/// start works if `hops[0] = n − 1` (it cannot be smaller: `n = ⌈N/d⌉` is a lower bound).
/// The walk then picks, among the next slots that stay on a fewest-entries path, the one
/// nearest the even target `⌊j·N/n⌋` (ties: the earlier slot).
fn place_shifted(free: &[bool], n: usize, d: usize) -> Option<Vec<usize>> {
    let nt = free.len();
    const INF: usize = usize::MAX;
    'starts: for s in 0..d.min(nt) {
        if !free[s] {
            continue;
        }
        let ok = |t: usize| free[(s + t) % nt];
        let mut hops = vec![INF; nt];
        // Candidates t' > t for the window (t, t + d], front = smallest hops.
        let mut window: VecDeque<usize> = VecDeque::new();
        for t in (0..nt).rev() {
            let cand = t + 1;
            if cand < nt && ok(cand) && hops[cand] != INF {
                while window.back().is_some_and(|&b| hops[b] >= hops[cand]) {
                    window.pop_back();
                }
                window.push_back(cand);
            }
            while window.front().is_some_and(|&f| f > t + d) {
                window.pop_front();
            }
            if t != 0 && !ok(t) {
                continue;
            }
            hops[t] = if nt - t <= d {
                0
            } else {
                window.front().map_or(INF, |&f| hops[f] + 1)
            };
        }
        if hops[0] != n - 1 {
            continue;
        }
        let mut pos = vec![s];
        let mut t = 0;
        for j in 1..n {
            let target = j * nt / n;
            let need = n - 1 - j;
            let Some(next) = (t + 1..=(t + d).min(nt - 1))
                .filter(|&c| ok(c) && hops[c] <= need)
                .min_by_key(|&c| (c.abs_diff(target), c))
            else {
                continue 'starts; // unreachable: hops[t] = need + 1 guarantees a successor
            };
            pos.push((s + next) % nt);
            t = next;
        }
        pos.sort_unstable();
        return Some(pos);
    }
    None
}

/// The bandwidth correction of §3.3.3 on an arbitrary table (Table 6).
///
/// `table[e] = (sl, weight)` in table order; `dweights[sl]` is added to SL `sl`'s entries one
/// unit at a time, round-robin over that SL's entries, walking backwards from the end of the
/// table (and wrapping round to its last entry again). A decrement skips entries that would
/// fall below `mtus[sl]`; [`QosError::WeightBelowMtu`] (naming the SL `"SL<sl>"`) if none can
/// take it, or if an entry already weighs less than its MTU. Entries whose `sl` has no
/// `dweights` element are left alone. `mtus` must be at least as long as `dweights`.
pub fn apply_bandwidth_correction(
    table: &mut [(usize, u32)],
    dweights: &[i64],
    mtus: &[u32],
) -> Result<(), QosError> {
    assert!(
        mtus.len() >= dweights.len(),
        "one MTU per corrected SL is needed"
    );
    let mut weights: Vec<u32> = table.iter().map(|&(_, w)| w).collect();
    for (sl, &dw) in dweights.iter().enumerate() {
        let ids: Vec<u32> = (0..table.len() as u32)
            .filter(|&e| table[e as usize].0 == sl)
            .collect();
        correct_sl(&mut weights, &ids, dw, mtus[sl], &format!("SL{sl}"))?;
    }
    for (entry, w) in table.iter_mut().zip(weights) {
        entry.1 = w;
    }
    Ok(())
}

/// Adds `dweight` to the entries `ids` (ascending) of one SL, walking them backwards
/// round-robin; see [`apply_bandwidth_correction`].
fn correct_sl(
    weights: &mut [u32],
    ids: &[u32],
    dweight: i64,
    mtu: u32,
    name: &str,
) -> Result<(), QosError> {
    let below_by = |weight: i64| QosError::WeightBelowMtu {
        sl: name.to_string(),
        weight,
        mtu,
    };
    if let Some(&e) = ids.iter().find(|&&e| weights[e as usize] < mtu) {
        return Err(below_by(weights[e as usize] as i64));
    }
    if dweight == 0 {
        return Ok(());
    }
    if ids.is_empty() {
        return Err(QosError::InvalidSl {
            sl: name.to_string(),
            reason: format!("Dweight {dweight} but the SL has no table entries"),
        });
    }
    // One unit at a time would take |Dweight| steps (10⁹ with a large GMTU); whole rounds
    // over the entries are applied at once instead, with the same result.
    let n = ids.len() as u64;
    let mut left = dweight.unsigned_abs();
    if dweight > 0 {
        // Every entry gets ⌊left/n⌋; the walk's first `left mod n` entries (the SL's last
        // entries, backwards) one more.
        let (q, r) = (left / n, (left % n) as usize);
        for (j, &e) in ids.iter().rev().enumerate() {
            let add = q + u64::from(j < r);
            let w = &mut weights[e as usize];
            *w = u32::try_from(u64::from(*w) + add).map_err(|_| {
                QosError::InvalidParams(format!("SL {name:?}: entry weight overflow"))
            })?;
        }
        return Ok(());
    }
    let mut idx = ids.len() - 1; // the SL's last entry in the table
    while left > 0 {
        let above: Vec<u32> = ids
            .iter()
            .map(|&e| weights[e as usize])
            .filter(|&w| w > mtu)
            .map(|w| w - mtu)
            .collect();
        if above.is_empty() {
            return Err(below_by(mtu as i64 - 1));
        }
        let active = above.len() as u64;
        // Whole rounds: each decrements every entry above the MTU once and ends where it
        // started; at most until the first of them reaches the MTU.
        let rounds = (left / active).min(u64::from(*above.iter().min().expect("non-empty")));
        if rounds > 0 {
            for &e in ids {
                let w = &mut weights[e as usize];
                if *w > mtu {
                    *w -= rounds as u32;
                }
            }
            left -= rounds * active;
            continue;
        }
        // Fewer units left than entries that can take one: a part of one round.
        while left > 0 {
            let w = &mut weights[ids[idx] as usize];
            if *w > mtu {
                *w -= 1;
                left -= 1;
            }
            idx = if idx == 0 { ids.len() - 1 } else { idx - 1 };
        }
    }
    Ok(())
}

/// `⌈x⌉`, except that values within floating-point noise of an integer round to it (so that
/// `0.1 · 40960` is 4096, not 4097).
fn ceil_tol(x: f64) -> f64 {
    let r = x.round();
    if (x - r).abs() <= EPS * x.abs().max(1.0) {
        r
    } else {
        x.ceil()
    }
}

/// Configures a DTable arbitration table for `sls` (steps 1–4 of the module documentation).
///
/// Errors: [`QosError::InvalidParams`] / [`QosError::InvalidSl`] for malformed input
/// (no SL, empty or duplicate name, distance 0, MTU 0 or above GMTU, non-finite share),
/// [`QosError::Oversubscribed`] if `Σ φ_i > 1`, [`QosError::Placement`] if an SL's entries
/// do not fit, [`QosError::ShareOutOfRange`] if `φ_i ∉ [min φ_i, max φ_i]`, and
/// [`QosError::WeightBelowMtu`] if an entry weight cannot deliver one MTU (before or after
/// the correction; with `Σ φ_i = 1` and shares in range this cannot happen, but with
/// `Σ φ_i < 1` the correction shrinks the table and can hit it).
///
/// Shares summing to less than 1 are allowed: the correction then aims at `φ_i · W` and the
/// achieved `Fφ_i` are those targets normalised, i.e. the unrequested bandwidth is shared in
/// proportion (DTable is work-conserving).
pub fn configure_dtable(params: &DTableParams, sls: &[SlRequirement]) -> Result<DTable, QosError> {
    configure(params, sls)
}

/// [`configure_dtable`], serialised as JSON (`pool`, `total_weight`, `sls`, `table`, …).
pub fn configure_dtable_json(
    params: &DTableParams,
    sls: &[SlRequirement],
) -> Result<String, QosError> {
    let table = configure(params, sls)?;
    Ok(serde_json::to_string(&table).expect("a DTable serialises"))
}

fn configure(params: &DTableParams, sls: &[SlRequirement]) -> Result<DTable, QosError> {
    params.validate()?;
    if sls.is_empty() {
        return Err(QosError::InvalidParams("no SL requirements".into()));
    }
    if sls.len() > MAX_DTABLE_SLS {
        return Err(QosError::InvalidParams(format!(
            "{} SLs is more than the limit of {MAX_DTABLE_SLS}",
            sls.len()
        )));
    }
    let mut seen = HashSet::new();
    for sl in sls {
        let bad = |reason: String| {
            Err(QosError::InvalidSl {
                sl: sl.name.clone(),
                reason,
            })
        };
        if sl.name.is_empty() {
            return bad("the name must not be empty".into());
        }
        if !seen.insert(sl.name.as_str()) {
            return bad("duplicate SL name".into());
        }
        if sl.max_distance == 0 {
            return bad("max_distance must be ≥ 1".into());
        }
        if sl.mtu == 0 || sl.mtu > params.gmtu {
            return bad(format!(
                "MTU {} must be in 1..={} (GMTU)",
                sl.mtu, params.gmtu
            ));
        }
        if !sl.share.is_finite() {
            return bad(format!("share {} is not a number", sl.share));
        }
    }
    let total_share: f64 = sls.iter().map(|s| s.share).sum();
    if total_share > 1.0 + EPS {
        return Err(QosError::Oversubscribed(total_share));
    }

    let placement = place_entries(params.entries, sls)?;
    let pool = params.pool();

    // Ranges, Tweight and rounded-up entry weights.
    let mut rows = Vec::with_capacity(sls.len());
    for (sl, ids) in sls.iter().zip(&placement) {
        let n = ids.len() as u32;
        let (min_phi, max_phi) = params.phi_range(n, sl.mtu);
        if sl.share < min_phi * (1.0 - EPS) || sl.share > max_phi * (1.0 + EPS) {
            return Err(QosError::ShareOutOfRange {
                sl: sl.name.clone(),
                share: sl.share,
                min_phi,
                max_phi,
            });
        }
        let tweight = sl.share * pool as f64;
        let ew = ceil_tol(tweight / n as f64);
        if ew < sl.mtu as f64 {
            return Err(QosError::WeightBelowMtu {
                sl: sl.name.clone(),
                weight: ew as i64,
                mtu: sl.mtu,
            });
        }
        // ew ≤ ⌈M⌉ thanks to the max φ check, and M fits (validate()).
        let ew = ew as u32;
        rows.push((min_phi, max_phi, tweight, ew, n as u64 * ew as u64));
    }
    let raw_total: u64 = rows.iter().map(|r| r.4).sum();

    // Pre-arbitration table, then the correction SL by SL.
    let mut weights = vec![0u32; params.entries as usize];
    for (ids, row) in placement.iter().zip(&rows) {
        for &e in ids {
            weights[e as usize] = row.3;
        }
    }
    let mut dweights = Vec::with_capacity(sls.len());
    for ((sl, ids), row) in sls.iter().zip(&placement).zip(&rows) {
        let dw = (sl.share * raw_total as f64 - row.4 as f64).round() as i64;
        correct_sl(&mut weights, ids, dw, sl.mtu, &sl.name)?;
        dweights.push(dw);
    }
    let fweights: Vec<u64> = placement
        .iter()
        .map(|ids| ids.iter().map(|&e| weights[e as usize] as u64).sum())
        .collect();
    let total: u64 = fweights.iter().sum();

    let mut table = vec![(String::new(), 0u32); params.entries as usize];
    for (sl, ids) in sls.iter().zip(&placement) {
        for &e in ids {
            table[e as usize] = (sl.name.clone(), weights[e as usize]);
        }
    }
    let configs = sls
        .iter()
        .zip(placement)
        .zip(rows)
        .zip(dweights.into_iter().zip(fweights))
        .map(
            |(((sl, ids), (min_phi, max_phi, tweight, ew, raw)), (dweight, fw))| SlConfig {
                name: sl.name.clone(),
                max_distance: sl.max_distance,
                mtu: sl.mtu,
                entries: ids.len() as u32,
                weights: ids.iter().map(|&e| weights[e as usize]).collect(),
                entry_ids: ids,
                total_weight: fw,
                min_phi,
                max_phi,
                requested_phi: sl.share,
                tweight,
                entry_weight: ew,
                raw_weight: raw,
                raw_phi: raw as f64 / raw_total as f64,
                dweight,
                phi: fw as f64 / total as f64,
            },
        )
        .collect();
    Ok(DTable {
        pool,
        max_entry_weight: params.max_entry_weight(),
        raw_total_weight: raw_total,
        total_weight: total,
        sls: configs,
        table,
    })
}

#[cfg(test)]
#[path = "dtable_tests.rs"]
mod tests;
