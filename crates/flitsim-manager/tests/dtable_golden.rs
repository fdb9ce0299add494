//! Golden tests of the DTable configurator against the Omni-Path QoS paper
//! (`000_942770a54f7010fd.txt` in the shared papers): Table 5 (configuration with adjustment
//! errors), Table 6 (bandwidth correction walk), Table 9 (decoupling methodology of §4.1) and
//! Table 10 (bandwidth configuration of DTable), plus error cases and property tests.
use flitsim_manager::qos::{
    apply_bandwidth_correction, configure_dtable, place_entries, DTable, DTableParams, QosError,
    SlRequirement,
};
use proptest::prelude::*;

fn req(name: &str, max_distance: u32, mtu: u32, share: f64) -> SlRequirement {
    SlRequirement {
        name: name.into(),
        max_distance,
        mtu,
        share,
    }
}

fn close(actual: f64, expected: f64, tol: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= tol,
        "{what}: {actual} vs {expected} (tolerance {tol})"
    );
}

/// Largest cyclic gap between consecutive entries of an SL in a table of `n` entries.
fn max_cyclic_gap(ids: &[u32], n: u32) -> u32 {
    let mut gap = n - ids[ids.len() - 1] + ids[0];
    for w in ids.windows(2) {
        gap = gap.max(w[1] - w[0]);
    }
    gap
}

/// Invariants every configured table must satisfy.
fn check_invariants(params: &DTableParams, sls: &[SlRequirement], dt: &DTable) {
    let n = params.entries;
    assert_eq!(dt.table.len(), n as usize);
    assert_eq!(dt.sls.len(), sls.len());
    let mut owner = vec![None; n as usize];
    for (r, c) in sls.iter().zip(&dt.sls) {
        assert_eq!(r.name, c.name);
        assert_eq!(c.entries, n.div_ceil(r.max_distance));
        assert_eq!(c.entry_ids.len(), c.entries as usize);
        assert_eq!(c.weights.len(), c.entries as usize);
        assert!(c.entry_ids.windows(2).all(|w| w[0] < w[1]));
        assert!(
            max_cyclic_gap(&c.entry_ids, n) <= r.max_distance,
            "SL {} breaks its distance {}: {:?}",
            c.name,
            r.max_distance,
            c.entry_ids
        );
        for (&e, &w) in c.entry_ids.iter().zip(&c.weights) {
            assert!(owner[e as usize].is_none(), "entry {e} assigned twice");
            owner[e as usize] = Some(&c.name);
            assert_eq!(dt.table[e as usize], (c.name.clone(), w));
            assert!(w >= r.mtu, "SL {}: weight {w} < MTU {}", c.name, r.mtu);
        }
        assert_eq!(
            c.total_weight,
            c.weights.iter().map(|&w| w as u64).sum::<u64>()
        );
        assert_eq!(c.total_weight as i64, c.raw_weight as i64 + c.dweight);
    }
    for (e, o) in owner.iter().enumerate() {
        if o.is_none() {
            assert_eq!(dt.table[e], (String::new(), 0), "unassigned entry {e}");
        }
    }
    let table_sum: u64 = dt.table.iter().map(|(_, w)| *w as u64).sum();
    assert_eq!(table_sum, dt.total_weight);
    assert_eq!(
        dt.sls.iter().map(|c| c.total_weight).sum::<u64>(),
        dt.total_weight
    );
    assert_eq!(
        dt.sls.iter().map(|c| c.raw_weight).sum::<u64>(),
        dt.raw_total_weight
    );
}

// ---------------------------------------------------------------------------------------
// Table 5: N = 128, GMTU = 3, w = 4, k = 3.

fn table5_params() -> DTableParams {
    DTableParams {
        entries: 128,
        gmtu: 3,
        w: 4,
        k: 3,
        unit_bytes: 64,
    }
}

/// Table 5 has 64, 32 and 32 entries: distances 2, 4, 4.
fn table5_sls(phi: [f64; 3]) -> Vec<SlRequirement> {
    vec![
        req("0", 2, 1, phi[0]),
        req("1", 4, 2, phi[1]),
        req("2", 4, 3, phi[2]),
    ]
}

/// Table 5, with the shares its Tweight and `Rφ − φ` columns were computed from
/// (0.3334, 0.3333, 0.3333): every printed number is reproduced.
#[test]
fn table5_configuration_with_adjustment_errors() {
    let params = table5_params();
    let sls = table5_sls([0.3334, 0.3333, 0.3333]);
    let dt = configure_dtable(&params, &sls).unwrap();
    check_invariants(&params, &sls, &dt);

    assert_eq!(dt.pool, 1152);
    let n: Vec<u32> = dt.sls.iter().map(|c| c.entries).collect();
    assert_eq!(n, [64, 32, 32]);
    for (c, (min, max)) in
        dt.sls
            .iter()
            .zip([(0.05556, 0.66667), (0.05556, 0.33333), (0.08333, 0.33333)])
    {
        close(c.min_phi, min, 5e-6, "min φ");
        close(c.max_phi, max, 5e-6, "max φ");
    }
    // Tweight column: 384.0768, 383.9616, 383.9616 (total 1152).
    for (c, t) in dt.sls.iter().zip([384.0768, 383.9616, 383.9616]) {
        close(c.tweight, t, 1e-9, "Tweight");
    }
    close(
        dt.sls.iter().map(|c| c.tweight).sum(),
        1152.0,
        1e-9,
        "ΣTweight",
    );
    // E.W. and Σweight_j columns: 7/12/12 and 448/384/384 (total 1216).
    let ew: Vec<u32> = dt.sls.iter().map(|c| c.entry_weight).collect();
    assert_eq!(ew, [7, 12, 12]);
    let raw: Vec<u64> = dt.sls.iter().map(|c| c.raw_weight).collect();
    assert_eq!(raw, [448, 384, 384]);
    assert_eq!(dt.raw_total_weight, 1216);
    // Rφ column: 0.36842, 0.31579, 0.31578 (the last is 384/1216 = 0.315789… truncated).
    close(dt.sls[0].raw_phi, 0.36842, 5e-6, "Rφ0");
    close(dt.sls[1].raw_phi, 0.31579, 5e-6, "Rφ1");
    close(dt.sls[2].raw_phi, 0.31578, 1e-5, "Rφ2");
    close(dt.sls[0].raw_phi, 448.0 / 1216.0, 1e-15, "Rφ0 exact");
    // Rφ − φ column: 0.03502, −0.01751, −0.01751.
    for (c, d) in dt.sls.iter().zip([0.03502, -0.01751, -0.01751]) {
        close(c.raw_phi - c.requested_phi, d, 5e-6, "Rφ − φ");
    }
    // Dweight −43, 21, 21; Fweight 405 each (total 1215); Fφ 0.33333.
    let dw: Vec<i64> = dt.sls.iter().map(|c| c.dweight).collect();
    assert_eq!(dw, [-43, 21, 21]);
    let fw: Vec<u64> = dt.sls.iter().map(|c| c.total_weight).collect();
    assert_eq!(fw, [405, 405, 405]);
    assert_eq!(dt.total_weight, 1215);
    for c in &dt.sls {
        close(c.phi, 0.33333, 5e-6, "Fφ");
    }
    // The correction walks each SL's entries backwards from the end of the table: SL0's last
    // 43 entries lose one unit, SL1's and SL2's last 21 entries gain one.
    assert_eq!(dt.sls[0].weights[..21], [7; 21]);
    assert_eq!(dt.sls[0].weights[21..], [6; 43]);
    assert_eq!(dt.sls[1].weights[..11], [12; 11]);
    assert_eq!(dt.sls[1].weights[11..], [13; 21]);
    assert_eq!(dt.sls[2].weights, dt.sls[1].weights);
}

/// Table 5 with its printed `φ` column (0.33334, 0.33333, 0.33333): the integer results
/// (E.W., Σweight, Dweight, Fweight) are the same.
#[test]
fn table5_printed_phi_gives_the_same_integers() {
    let params = table5_params();
    let sls = table5_sls([0.33334, 0.33333, 0.33333]);
    let dt = configure_dtable(&params, &sls).unwrap();
    check_invariants(&params, &sls, &dt);
    let ew: Vec<u32> = dt.sls.iter().map(|c| c.entry_weight).collect();
    assert_eq!(ew, [7, 12, 12]);
    assert_eq!(dt.raw_total_weight, 1216);
    let dw: Vec<i64> = dt.sls.iter().map(|c| c.dweight).collect();
    assert_eq!(dw, [-43, 21, 21]);
    let fw: Vec<u64> = dt.sls.iter().map(|c| c.total_weight).collect();
    assert_eq!(fw, [405, 405, 405]);
    assert_eq!(dt.total_weight, 1215);
    for c in &dt.sls {
        close(c.phi, 0.33333, 5e-6, "Fφ");
    }
}

// ---------------------------------------------------------------------------------------
// Table 6: Dweight −3, 1, 2 for SL0, SL1, SL2 on an 8-entry table.

const TABLE6_BEFORE: [(usize, u32); 8] = [
    (0, 4),
    (1, 2),
    (0, 4),
    (2, 3),
    (0, 4),
    (1, 2),
    (0, 4),
    (2, 3),
];
const TABLE6_AFTER: [(usize, u32); 8] = [
    (0, 4),
    (1, 2),
    (0, 3),
    (2, 4),
    (0, 3),
    (1, 3),
    (0, 3),
    (2, 4),
];

/// Table 6: entries 6, 4, 2 of SL0 lose one unit, entry 5 of SL1 and entries 7, 3 of SL2 gain
/// one.
#[test]
fn table6_bandwidth_correction_walk() {
    let mut table = TABLE6_BEFORE;
    apply_bandwidth_correction(&mut table, &[-3, 1, 2], &[1, 1, 1]).unwrap();
    assert_eq!(table, TABLE6_AFTER);
    // The MTU check does not interfere while every entry stays at or above its MTU.
    let mut table = TABLE6_BEFORE;
    apply_bandwidth_correction(&mut table, &[-3, 1, 2], &[3, 2, 3]).unwrap();
    assert_eq!(table, TABLE6_AFTER);
}

/// The SL layout of Table 6 (SL0 every 2 entries, SL1 and SL2 every 4) is what the placement
/// produces for distances 2, 4, 4 in an 8-entry table.
#[test]
fn table6_layout_matches_placement() {
    let sls = [
        req("0", 2, 1, 0.0),
        req("1", 4, 1, 0.0),
        req("2", 4, 1, 0.0),
    ];
    let placed = place_entries(8, &sls).unwrap();
    for (sl, ids) in placed.iter().enumerate() {
        for &e in ids {
            assert_eq!(TABLE6_BEFORE[e as usize].0, sl, "entry {e}");
        }
    }
    assert_eq!(placed.iter().map(Vec::len).sum::<usize>(), 8);
}

// ---------------------------------------------------------------------------------------
// Tables 9 and 10: §4.1, N = 128, GMTU = 16 (1 KiB in 64-byte units), w = 8, k = 2.

fn section41_sls(params: &DTableParams) -> Vec<SlRequirement> {
    let u = |bytes| params.units(bytes);
    vec![
        req("VO", 2, u(128), 0.10),
        req("VI", 4, u(256), 0.30),
        req("CL", 8, u(512), 0.50),
        req("BE", 16, u(1024), 0.05),
        req("BK", 16, u(1024), 0.05),
    ]
}

/// Table 9: distances 2/4/8/16/16 give 64/32/16/8/8 entries (50/25/12.5/6.25/6.25 % of the
/// 128), `min φ` 0.03125 each (total 0.15625) and `max φ` 2/1/0.5/0.25/0.25 (total 4).
#[test]
fn table9_decoupling_methodology() {
    let params = DTableParams::default();
    assert_eq!(
        params,
        DTableParams {
            entries: 128,
            gmtu: 16,
            w: 8,
            k: 2,
            unit_bytes: 64
        }
    );
    assert_eq!(params.pool(), 4096);
    assert_eq!(params.max_entry_weight(), 128);
    let sls = section41_sls(&params);
    let mtus: Vec<u32> = sls.iter().map(|s| s.mtu).collect();
    assert_eq!(mtus, [2, 4, 8, 16, 16]);
    let dt = configure_dtable(&params, &sls).unwrap();
    check_invariants(&params, &sls, &dt);

    let expected = [
        ("VO", 64, 50.0, 0.03125, 2.0),
        ("VI", 32, 25.0, 0.03125, 1.0),
        ("CL", 16, 12.5, 0.03125, 0.5),
        ("BE", 8, 6.25, 0.03125, 0.25),
        ("BK", 8, 6.25, 0.03125, 0.25),
    ];
    for (c, (name, n, pct, min, max)) in dt.sls.iter().zip(expected) {
        assert_eq!(c.name, name);
        assert_eq!(c.entries, n, "{name} #entr.");
        close(100.0 * c.entries as f64 / 128.0, pct, 1e-12, "%entr.");
        close(c.min_phi, min, 1e-12, "min φ");
        close(c.max_phi, max, 1e-12, "max φ");
        // Exactly the distance: the placement spreads the entries evenly.
        assert_eq!(max_cyclic_gap(&c.entry_ids, 128), c.max_distance);
    }
    assert_eq!(dt.sls.iter().map(|c| c.entries).sum::<u32>(), 128);
    close(
        dt.sls.iter().map(|c| c.min_phi).sum(),
        0.15625,
        1e-12,
        "Σmin φ",
    );
    close(dt.sls.iter().map(|c| c.max_phi).sum(), 4.0, 1e-12, "Σmax φ");
    assert!(dt.table.iter().all(|(name, _)| !name.is_empty()));
}

/// Table 10: E.W. 6–7/39/130/26/26, T.W. 416/1248/2080/208/208 (total 4160), `Rφ`
/// 0.11/0.3/0.49/0.05/0.05 and `Fφ` 0.1/0.3/0.5/0.05/0.05; VO has Dweight −32 (first 32
/// entries 7, next 32 entries 6) and CL Dweight +32 (each entry 130).
#[test]
fn table10_bandwidth_configuration() {
    let params = DTableParams::default();
    let sls = section41_sls(&params);
    let dt = configure_dtable(&params, &sls).unwrap();
    check_invariants(&params, &sls, &dt);

    let ew: Vec<u32> = dt.sls.iter().map(|c| c.entry_weight).collect();
    assert_eq!(ew, [7, 39, 128, 26, 26], "E.W. before the correction");
    assert_eq!(dt.raw_total_weight, 4160);
    let dw: Vec<i64> = dt.sls.iter().map(|c| c.dweight).collect();
    assert_eq!(dw, [-32, 0, 32, 0, 0]);
    let tw: Vec<u64> = dt.sls.iter().map(|c| c.total_weight).collect();
    assert_eq!(tw, [416, 1248, 2080, 208, 208], "T.W.");
    assert_eq!(dt.total_weight, 4160);

    let vo = dt.sl("VO").unwrap();
    assert_eq!(vo.weights[..32], [7; 32]);
    assert_eq!(vo.weights[32..], [6; 32]);
    assert_eq!(dt.sl("VI").unwrap().weights, vec![39; 32]);
    assert_eq!(dt.sl("CL").unwrap().weights, vec![130; 16]);
    assert_eq!(dt.sl("BE").unwrap().weights, vec![26; 8]);
    assert_eq!(dt.sl("BK").unwrap().weights, vec![26; 8]);
    // CL ends above M = GMTU · w = 128, as printed in the paper.
    assert!(130 > dt.max_entry_weight);

    for (c, (r, f)) in dt.sls.iter().zip([
        (0.11, 0.1),
        (0.3, 0.3),
        (0.49, 0.5),
        (0.05, 0.05),
        (0.05, 0.05),
    ]) {
        close(c.raw_phi, r, 0.005, "Rφ (2 decimals)");
        close(c.phi, f, 1e-12, "Fφ");
        close(c.phi, c.requested_phi, 1e-12, "Fφ = φ");
    }
    close(dt.sls[0].raw_phi, 448.0 / 4160.0, 1e-15, "Rφ VO");
    close(dt.sls[2].raw_phi, 2048.0 / 4160.0, 1e-15, "Rφ CL");

    let json = serde_json::to_string(&dt).unwrap();
    let back: DTable = serde_json::from_str(&json).unwrap();
    assert_eq!(back, dt);
}

// ---------------------------------------------------------------------------------------
// Errors.

#[test]
fn share_outside_range_names_the_sl() {
    let params = DTableParams::default();
    let mut sls = section41_sls(&params);
    sls[2].share = 0.6; // CL: max φ = 0.5
    sls[0].share = 0.0; // keep Σφ ≤ 1
    let err = configure_dtable(&params, &sls).unwrap_err();
    // VO is checked first and is below its minimum.
    assert!(
        matches!(&err, QosError::ShareOutOfRange { sl, .. } if sl == "VO"),
        "{err}"
    );
    sls[0].share = 0.04;
    sls[3].share = 0.03;
    sls[4].share = 0.03;
    let err = configure_dtable(&params, &sls).unwrap_err();
    match &err {
        QosError::ShareOutOfRange {
            sl,
            share,
            min_phi,
            max_phi,
        } => {
            assert_eq!(sl, "CL");
            assert_eq!(*share, 0.6);
            assert_eq!((*min_phi, *max_phi), (0.03125, 0.5));
        }
        other => panic!("unexpected {other}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("CL") && msg.contains("0.6") && msg.contains("0.03125, 0.5"),
        "{msg}"
    );
}

#[test]
fn weights_that_cannot_deliver_one_mtu_error() {
    // N = 4, GMTU = 2, w = 2, k = 1 → pool 8. A: 2 entries, MTU 2, φ = min φ = 0.5 → E.W. 2.
    // B: 1 entry, φ = 0.25 → E.W. 2. Σφ = 0.75, so W = 6 and Dweight_A = Round(3 − 4) = −1,
    // which would leave an A entry at 1 < MTU 2.
    let params = DTableParams {
        entries: 4,
        gmtu: 2,
        w: 2,
        k: 1,
        unit_bytes: 64,
    };
    let sls = [req("A", 2, 2, 0.5), req("B", 4, 1, 0.25)];
    let err = configure_dtable(&params, &sls).unwrap_err();
    assert!(
        matches!(&err, QosError::WeightBelowMtu { sl, mtu: 2, .. } if sl == "A"),
        "{err}"
    );
    assert!(err.to_string().contains("weights cannot deliver one MTU"));

    // The same check in the stand-alone correction.
    let mut table = [(0, 2), (1, 5), (0, 3)];
    let err = apply_bandwidth_correction(&mut table, &[-2, 0], &[2, 1]).unwrap_err();
    assert!(matches!(&err, QosError::WeightBelowMtu { sl, .. } if sl == "SL0"));
    let mut table = [(0, 1), (1, 5)];
    let err = apply_bandwidth_correction(&mut table, &[0, 0], &[2, 1]).unwrap_err();
    assert!(matches!(err, QosError::WeightBelowMtu { weight: 1, .. }));
}

#[test]
fn placement_failure_names_the_sl() {
    let sls = [
        req("A", 2, 1, 0.0),
        req("B", 2, 1, 0.0),
        req("C", 4, 1, 0.0),
    ];
    let err = place_entries(4, &sls).unwrap_err();
    assert!(
        matches!(&err, QosError::Placement { sl, max_distance: 4, .. } if sl == "C"),
        "{err}"
    );
    assert!(err.to_string().contains("\"C\""));
}

#[test]
fn invalid_inputs_are_rejected() {
    let params = DTableParams::default();
    let mut sls = section41_sls(&params);
    sls[1].share = 0.35; // Σφ = 1.05
    assert!(matches!(
        configure_dtable(&params, &sls),
        Err(QosError::Oversubscribed(_))
    ));
    let mut sls = section41_sls(&params);
    sls[4].name = "BE".into();
    assert!(matches!(
        configure_dtable(&params, &sls),
        Err(QosError::InvalidSl { sl, .. }) if sl == "BE"
    ));
    let mut sls = section41_sls(&params);
    sls[3].mtu = 17; // above GMTU
    assert!(matches!(
        configure_dtable(&params, &sls),
        Err(QosError::InvalidSl { .. })
    ));
    let bad = DTableParams { k: 9, ..params };
    assert!(matches!(
        configure_dtable(&bad, &section41_sls(&params)),
        Err(QosError::InvalidParams(_))
    ));
}

/// Entries no SL needs stay unassigned as `("", 0)`.
#[test]
fn unassigned_entries() {
    let params = DTableParams {
        entries: 8,
        gmtu: 4,
        w: 4,
        k: 1,
        unit_bytes: 64,
    };
    let sls = [req("A", 4, 1, 0.5), req("B", 8, 1, 0.5)];
    let dt = configure_dtable(&params, &sls).unwrap();
    check_invariants(&params, &sls, &dt);
    assert_eq!(dt.table.iter().filter(|(n, _)| n.is_empty()).count(), 5);
    close(dt.sls.iter().map(|c| c.phi).sum(), 1.0, 1e-9, "Σφ");
}

// ---------------------------------------------------------------------------------------
// Properties.

/// Power-of-two distances with `Σ 1/d ≤ 1` in a table whose size is a multiple of the largest
/// distance always fit.
fn feasible_case() -> impl Strategy<Value = (u32, Vec<(u32, u32, f64)>, u32)> {
    (
        prop::collection::vec((0u32..=5, 1u32..=8, 1.0f64..2.0), 1..=7),
        1u32..=4,
        1u32..=3,
    )
        .prop_map(|(raw, mult, k)| {
            let mut raw = raw;
            raw.sort_by_key(|r| r.0);
            // Keep SLs while Σ 1/d ≤ 1, in units of 1/32.
            let mut used = 0;
            let sls: Vec<_> = raw
                .into_iter()
                .filter(|&(e, _, _)| {
                    let cost = 32 >> e;
                    if used + cost <= 32 {
                        used += cost;
                        true
                    } else {
                        false
                    }
                })
                .map(|(e, mtu, r)| (1u32 << e, mtu, r))
                .collect();
            let max_d = sls.iter().map(|s| s.0).max().unwrap();
            (max_d * mult, sls, k)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Valid inputs (shares in range, summing to 1): distances honoured, Σ weights equal to
    /// the total weight, achieved shares summing to 1 and close to the requested ones.
    #[test]
    fn configured_tables_honour_distances_and_weights((n, raw, k) in feasible_case()) {
        let mut sls: Vec<SlRequirement> = raw
            .iter()
            .enumerate()
            .map(|(i, &(d, mtu, _))| req(&format!("sl{i}"), d, mtu, 0.0))
            .collect();
        let placed = place_entries(n, &sls).unwrap();
        let counts: Vec<u32> = placed.iter().map(|p| p.len() as u32).collect();
        let sum_n: u32 = counts.iter().sum();
        // Shares ∝ n_i · r_i with r_i ∈ [1, 2): share_i ≤ 2 n_i / Σn ≤ max φ_i once
        // w ≥ 2kN / Σn, and share_i ≥ n_i / (2Σn) ≥ min φ_i since MTU_i ≤ GMTU / 2.
        let mass: f64 = raw.iter().zip(&counts).map(|(r, &c)| c as f64 * r.2).sum();
        for ((s, r), &c) in sls.iter_mut().zip(&raw).zip(&counts) {
            s.share = c as f64 * r.2 / mass;
        }
        let w = k.max((2 * k * n).div_ceil(sum_n));
        let params = DTableParams { entries: n, gmtu: 16, w, k, unit_bytes: 64 };
        let dt = configure_dtable(&params, &sls).unwrap();
        check_invariants(&params, &sls, &dt);
        for (c, p) in dt.sls.iter().zip(&placed) {
            prop_assert_eq!(&c.entry_ids, p);
        }
        let phi_sum: f64 = dt.sls.iter().map(|c| c.phi).sum();
        prop_assert!((phi_sum - 1.0).abs() <= 1e-9);
        let s = sls.len() as f64;
        let bound = (0.5 + 0.5 * s) / (dt.raw_total_weight as f64 - 0.5 * s) + 1e-12;
        for c in &dt.sls {
            prop_assert!((c.phi - c.requested_phi).abs() <= bound,
                "{}: Fφ {} vs φ {}", c.name, c.phi, c.requested_phi);
        }
    }

    /// Arbitrary distances: whenever placement succeeds, every SL has ⌈N/d⌉ distinct entries
    /// within its distance; when it fails, the error names one of the SLs.
    #[test]
    fn placement_honours_distances(
        n in 1u32..=64,
        ds in prop::collection::vec(1u32..=70, 1..=5),
    ) {
        let sls: Vec<SlRequirement> = ds
            .iter()
            .enumerate()
            .map(|(i, &d)| req(&format!("sl{i}"), d, 1, 0.0))
            .collect();
        match place_entries(n, &sls) {
            Ok(placed) => {
                let mut used = vec![false; n as usize];
                for (ids, s) in placed.iter().zip(&sls) {
                    prop_assert_eq!(ids.len() as u32, n.div_ceil(s.max_distance));
                    prop_assert!(ids.windows(2).all(|w| w[0] < w[1]));
                    prop_assert!(max_cyclic_gap(ids, n) <= s.max_distance);
                    for &e in ids {
                        prop_assert!(!used[e as usize]);
                        used[e as usize] = true;
                    }
                }
            }
            Err(QosError::Placement { sl, .. }) => {
                prop_assert!(sls.iter().any(|s| s.name == sl));
            }
            Err(other) => prop_assert!(false, "unexpected error {}", other),
        }
    }
}
