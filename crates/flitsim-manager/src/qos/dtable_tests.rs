//! Tests of the DTable configurator (placement, ranges, bandwidth correction, limits).
use super::*;

fn req(name: &str, d: u32, mtu: u32, share: f64) -> SlRequirement {
    SlRequirement {
        name: name.into(),
        max_distance: d,
        mtu,
        share,
    }
}

#[test]
fn ceil_tol_ignores_noise() {
    assert_eq!(ceil_tol(0.1 * 40960.0), 4096.0);
    assert_eq!(ceil_tol(6.4), 7.0);
    assert_eq!(ceil_tol(6.000_12), 7.0);
}

#[test]
fn shifted_placement_when_even_pattern_is_blocked() {
    // A takes 0, 2, 4; B (d = 4, 2 entries) cannot use spacing 3 in a 6-entry table.
    let p = place_entries(6, &[req("A", 2, 1, 0.0), req("B", 4, 1, 0.0)]).unwrap();
    assert_eq!(p[0], vec![0, 2, 4]);
    assert_eq!(p[1], vec![1, 3]);
}

/// Cyclic gaps of `pos` (ascending) in a table of `nt` entries are all `≤ d`.
fn within(pos: &[usize], nt: usize, d: usize) -> bool {
    pos.windows(2).all(|w| w[1] - w[0] <= d) && nt - pos[pos.len() - 1] + pos[0] <= d
}

/// For every free-slot mask of small tables, the placement of one SL succeeds exactly
/// when some `⌈N/d⌉` free slots keep the distance (brute force over subsets).
#[test]
fn single_sl_placement_is_complete() {
    let (mut infeasible, mut shifted) = (0, 0);
    for nt in 1..=9usize {
        for mask in 0u32..(1 << nt) {
            let free: Vec<bool> = (0..nt).map(|i| mask & (1 << i) != 0).collect();
            for d in 1..=nt {
                let n = nt.div_ceil(d);
                let exists = (0u32..(1 << nt)).any(|sub| {
                    sub & !mask == 0 && sub.count_ones() as usize == n && {
                        let pos: Vec<usize> = (0..nt).filter(|&i| sub & (1 << i) != 0).collect();
                        within(&pos, nt, d)
                    }
                });
                let even = place_even(&free, n);
                shifted += (even.is_none() && exists) as u32;
                infeasible += !exists as u32;
                let got = even.or_else(|| place_shifted(&free, n, d));
                assert_eq!(got.is_some(), exists, "nt {nt} mask {mask:b} d {d}");
                if let Some(pos) = got {
                    assert_eq!(pos.len(), n);
                    assert!(pos.iter().all(|&p| free[p]));
                    assert!(pos.windows(2).all(|w| w[0] < w[1]));
                    assert!(within(&pos, nt, d), "nt {nt} mask {mask:b} d {d}: {pos:?}");
                }
            }
        }
    }
    assert!(infeasible > 1000 && shifted > 500, "{infeasible} {shifted}");
}

/// `flitsim qos dtable --entries 100000000` ran away (placement is O(N²)); sizes beyond
/// the limits are refused at once.
#[test]
fn oversized_tables_are_refused() {
    let t0 = std::time::Instant::now();
    let sls = [req("a", 2, 1, 0.5)];
    for entries in [MAX_DTABLE_ENTRIES + 1, 100_000_000, u32::MAX] {
        let p = DTableParams {
            entries,
            ..DTableParams::default()
        };
        let m = configure_dtable(&p, &sls).unwrap_err().to_string();
        assert!(m.contains("more than the limit of 4096"), "{m}");
        let m = place_entries(entries, &sls).unwrap_err().to_string();
        assert!(m.contains("more than the limit of 4096"), "{m}");
    }
    let many: Vec<SlRequirement> = (0..=MAX_DTABLE_SLS)
        .map(|i| req(&format!("s{i}"), 4096, 1, 0.0))
        .collect();
    let m = configure_dtable(&DTableParams::default(), &many)
        .unwrap_err()
        .to_string();
    assert!(m.contains("65 SLs is more than the limit of 64"), "{m}");
    // The largest table is configured quickly.
    let p = DTableParams {
        entries: MAX_DTABLE_ENTRIES,
        ..DTableParams::default()
    };
    let sls = [
        req("a", 2, 1, 0.5),
        req("b", 4, 1, 0.25),
        req("c", 8, 1, 0.125),
    ];
    configure_dtable(&p, &sls).unwrap();
    assert!(t0.elapsed().as_secs() < 10, "{:?}", t0.elapsed());
}

/// The correction one unit at a time, as the paper describes it (the reference for the
/// round-at-a-time [`correct_sl`]).
fn correct_sl_unit_steps(
    weights: &mut [u32],
    ids: &[u32],
    dweight: i64,
    mtu: u32,
) -> Result<(), ()> {
    if ids.iter().any(|&e| weights[e as usize] < mtu) {
        return Err(());
    }
    if dweight == 0 {
        return Ok(());
    }
    let mut left = dweight.unsigned_abs();
    let mut idx = ids.len() - 1;
    let mut idle = 0;
    while left > 0 {
        let w = &mut weights[ids[idx] as usize];
        if dweight > 0 {
            *w = w.checked_add(1).ok_or(())?;
            left -= 1;
        } else if *w > mtu {
            *w -= 1;
            left -= 1;
            idle = 0;
        } else {
            idle += 1;
            if idle == ids.len() {
                return Err(());
            }
        }
        idx = if idx == 0 { ids.len() - 1 } else { idx - 1 };
    }
    Ok(())
}

/// Found by fuzzing: GMTU = 9 525 807 made the correction walk 10⁸–10⁹ single units
/// (20 s); whole rounds give the same weights.
#[test]
fn correction_by_rounds_equals_unit_steps() {
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = |m: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % m
    };
    for _ in 0..5000 {
        let nt = 1 + next(12) as usize;
        let mtu = 1 + next(5) as u32;
        let weights: Vec<u32> = (0..nt).map(|_| mtu + next(8) as u32).collect();
        let ids: Vec<u32> = (0..nt as u32).filter(|_| next(3) != 0).collect();
        if ids.is_empty() {
            continue;
        }
        let dw = next(61) as i64 - 30;
        let (mut a, mut b) = (weights.clone(), weights.clone());
        let ra = correct_sl(&mut a, &ids, dw, mtu, "x").map_err(|_| ());
        let rb = correct_sl_unit_steps(&mut b, &ids, dw, mtu);
        assert_eq!(ra, rb, "{weights:?} {ids:?} {dw} {mtu}");
        if ra.is_ok() {
            assert_eq!(a, b, "{weights:?} {ids:?} {dw} {mtu}");
        }
    }
    let t0 = std::time::Instant::now();
    let p = DTableParams {
        entries: 128,
        gmtu: 9_525_807,
        w: 8,
        k: 2,
        unit_bytes: 64,
    };
    let _ = configure_dtable(&p, &[req("é", 4, 12, 0.662_694_761_630_160_4)]);
    assert!(t0.elapsed().as_secs() < 2, "{:?}", t0.elapsed());
}

#[test]
fn correction_skips_entries_at_mtu() {
    // Entries 0 and 2 of SL0; entry 2 is already at its MTU, so both units come from 0.
    let mut t = vec![(0, 5), (1, 1), (0, 2)];
    apply_bandwidth_correction(&mut t, &[-2, 0], &[2, 1]).unwrap();
    assert_eq!(t, vec![(0, 3), (1, 1), (0, 2)]);
    let err = apply_bandwidth_correction(&mut t, &[-2, 0], &[2, 1]).unwrap_err();
    assert!(matches!(err, QosError::WeightBelowMtu { ref sl, .. } if sl == "SL0"));
}
