//! Fuzz targets for what the manager reads: the OpenSM dumps ([`opensm::read_tables`]: LFT
//! dump, SL2VL dump, path SL table; the `guid2lid` cache is written, never read) and the
//! DTable configurator's arguments ([`configure_dtable`]: entries, GMTU, w, k, unit size and
//! per-SL maximum distance, MTU and share). Property: no panic, no abort, each case well under
//! a second; a malformed dump is an `invalid tables` error naming the file (and a line when a
//! line is at fault); accepted tables survive a write/read round trip; an accepted DTable is
//! consistent (every SL within its distance, weights summing to the total).
//!
//! `FLITSIM_FUZZ_CASES=20000 cargo test -p flitsim-manager --test fuzz_parsers` for a long
//! run; the default case counts keep the whole file a few seconds in a debug build.
use flitsim_manager::opensm::{
    read_tables, write_lfts, write_path_sl, write_sl2vl, LFTS_FILE, PATH_SL_FILE, SL2VL_FILE,
};
use flitsim_manager::qos::{configure_dtable, DTableParams, SlRequirement};
use flitsim_manager::{route, FabricConfig, RoutingError, RoutingRequest};
use flitsim_topology::{generators, Topology};
use proptest::prelude::*;
use std::sync::OnceLock;
use std::time::Duration;

#[path = "../../flitsim-topology/tests/fuzz_common/mod.rs"]
mod fuzz_common;
use fuzz_common::{config, mutated, names_a_line, timed, token_soup};

const LIMIT: Duration = Duration::from_secs(3);

/// A fabric with its tables and their dumps.
struct Case {
    topo: Topology,
    lfts: String,
    sl2vl: String,
    path_sl: String,
}

fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        [
            ("torus:3x3", "dor", 2, 2),
            ("kary-ntree:k=2,n=2", "minhop", 1, 1),
            (
                "random:switches=5,ports=6,endpoints=1,links=6,seed=3",
                "dfsssp",
                4,
                1,
            ),
        ]
        .iter()
        .map(|&(spec, engine, vls, classes)| {
            let topo = generators::from_spec(spec).unwrap();
            let f = route(&topo, engine, &RoutingRequest { vls, classes }).unwrap();
            Case {
                lfts: write_lfts(&topo, &f).unwrap(),
                sl2vl: write_sl2vl(&topo, &f).unwrap(),
                path_sl: write_path_sl(&topo, &f).unwrap(),
                topo,
            }
        })
        .collect()
    })
}

const DUMP_LINES: &[&str] = &[
    "Unicast lids [0-65535] of switch Lid 65535 guid 0xffffffffffffffff ('x'):",
    "Unicast lids [0x0-0x7] of switch Lid 1 guid 0x0002c90000000000 ('sw0'):",
    "0x0001 000 # Switch portguid 0x0002c90000000000: 'sw0'",
    "0xffff 255 # Channel Adapter portguid 0xffffffffffffffff: 'x'",
    "0x000a 254",
    "0x0000 001",
    "7 lids dumped",
    "Switch 0x0002c90000000000, base LID 1, \"sw0\"",
    "Channel Adapter 0x0002c90100000000, base LID 10, \"ep0\"",
    "#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15",
    "0   1   : 0  1  15 15 15 15 15 15 15 15 15 15 15 15 15 15",
    "255 255 : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15",
    "0   0   : 16 1",
    "# flitsim: classes 16, routing_sls 16",
    "# flitsim: classes 0, routing_sls 1",
    "10 11 15",
    "65535 65535 255",
    "1 1 0",
    "",
    "#",
];

const DUMP_TOKENS: &[&str] = &[
    "Unicast lids [",
    "0-",
    "] of switch Lid ",
    " guid 0x",
    "0002c90000000000",
    " ('sw0'):",
    "0x",
    "0001",
    "000",
    " ",
    " ",
    "\n",
    "\n",
    "#",
    " lids dumped",
    "Switch ",
    "Channel Adapter ",
    ", base LID ",
    "\"",
    ":",
    "15",
    "1",
    "0",
    "254",
    "65535",
    "4294967296",
    "# flitsim: classes ",
    ", routing_sls ",
    "portguid",
];

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Reads the three dumps of case `c`, one of them replaced, and checks the property.
fn check_tables(
    c: &Case,
    lfts: &str,
    sl2vl: Option<&str>,
    path_sl: Option<&str>,
    changed: &str,
) -> Result<(), TestCaseError> {
    let r = timed("read_tables", LIMIT, || {
        read_tables(&c.topo, lfts, sl2vl, path_sl)
    });
    match r {
        Ok(f) => roundtrip(&c.topo, &f)?,
        Err(RoutingError::InvalidTables(m)) => {
            prop_assert!(!m.contains("error:"), "{}", m);
            let names_file = [LFTS_FILE, SL2VL_FILE, PATH_SL_FILE]
                .iter()
                .any(|f| m.contains(f));
            prop_assert!(names_file, "no file named: {}", m);
            // A parse error in the changed file names its line.
            if m.starts_with(changed) && m[changed.len()..].starts_with(", line") {
                prop_assert!(names_a_line(&m), "{}", m);
            }
        }
        Err(e) => {
            // Semantic verdicts on parsed tables (a loop, an unreachable endpoint) are fine.
            prop_assert!(!e.to_string().contains("error:"), "{}", e);
        }
    }
    Ok(())
}

/// Accepted tables are written and read back to the same tables.
fn roundtrip(topo: &Topology, f: &FabricConfig) -> Result<(), TestCaseError> {
    let lfts = write_lfts(topo, f).map_err(|e| TestCaseError::fail(format!("write lfts: {e}")))?;
    let sl2vl =
        write_sl2vl(topo, f).map_err(|e| TestCaseError::fail(format!("write sl2vl: {e}")))?;
    let psl =
        write_path_sl(topo, f).map_err(|e| TestCaseError::fail(format!("write path sl: {e}")))?;
    let back = read_tables(topo, &lfts, Some(&sl2vl), Some(&psl))
        .map_err(|e| TestCaseError::fail(format!("reading written tables: {e}")))?;
    prop_assert_eq!(&back.lft, &f.lft);
    prop_assert_eq!(&back.path_sl, &f.path_sl);
    prop_assert_eq!(&back.nic_sl2vl, &f.nic_sl2vl);
    Ok(())
}

fn seeds(which: usize) -> Vec<Vec<u8>> {
    cases()
        .iter()
        .map(|c| match which {
            0 => c.lfts.clone(),
            1 => c.sl2vl.clone(),
            _ => c.path_sl.clone(),
        })
        .map(String::into_bytes)
        .collect()
}

proptest! {
    #![proptest_config(config(200))]

    #[test]
    fn lft_dump_mutations(c in 0..3usize, b in mutated(seeds(0), DUMP_LINES, 8)) {
        let c = &cases()[c];
        check_tables(c, &text(&b), Some(&c.sl2vl), Some(&c.path_sl), LFTS_FILE)?;
    }

    #[test]
    fn sl2vl_dump_mutations(c in 0..3usize, b in mutated(seeds(1), DUMP_LINES, 8)) {
        let c = &cases()[c];
        check_tables(c, &c.lfts, Some(&text(&b)), Some(&c.path_sl), SL2VL_FILE)?;
    }

    #[test]
    fn path_sl_mutations(c in 0..3usize, b in mutated(seeds(2), DUMP_LINES, 8)) {
        let c = &cases()[c];
        check_tables(c, &c.lfts, Some(&c.sl2vl), Some(&text(&b)), PATH_SL_FILE)?;
    }

    #[test]
    fn dumps_from_tokens(
        c in 0..3usize,
        which in 0..3usize,
        t in token_soup(DUMP_TOKENS, 120),
    ) {
        let c = &cases()[c];
        match which {
            0 => check_tables(c, &t, None, None, LFTS_FILE)?,
            1 => check_tables(c, &c.lfts, Some(&t), None, SL2VL_FILE)?,
            _ => check_tables(c, &c.lfts, None, Some(&t), PATH_SL_FILE)?,
        }
    }

    #[test]
    fn dumps_from_bytes(c in 0..3usize, b in prop::collection::vec(any::<u8>(), 0..300)) {
        let c = &cases()[c];
        check_tables(c, &text(&b), Some(&text(&b)), Some(&text(&b)), LFTS_FILE)?;
    }
}

// ---------------------------------------------------------------------------------- DTable

fn u32_arg() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => 0u32..=20,
        2 => prop::sample::select(&[1u32, 2, 3, 4, 8, 16, 32, 64, 128, 255, 256, 1024][..]),
        1 => prop::sample::select(
            &[4096u32, 65535, 65536, 1 << 20, 100_000_000, 1 << 31, u32::MAX][..]
        ),
        1 => any::<u32>(),
    ]
}

fn share() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => 0.0f64..=1.0,
        1 => prop::sample::select(
            &[0.0, 1.0, -1.0, -0.0, 1e-300, 1e300, f64::NAN, f64::INFINITY, f64::NEG_INFINITY,
              f64::MIN_POSITIVE, 0.5, 0.1][..]
        ),
        1 => any::<f64>(),
    ]
}

fn requirement() -> impl Strategy<Value = SlRequirement> {
    (
        prop::sample::select(&["VO", "CL", "BE", "a", "b", "c", "", "é"][..]),
        u32_arg(),
        u32_arg(),
        share(),
    )
        .prop_map(|(n, d, mtu, share)| SlRequirement {
            name: n.to_string(),
            max_distance: d,
            mtu,
            share,
        })
}

fn params() -> impl Strategy<Value = DTableParams> {
    prop_oneof![
        // Arbitrary.
        (u32_arg(), u32_arg(), u32_arg(), u32_arg(), u32_arg()).prop_map(
            |(entries, gmtu, w, k, unit_bytes)| DTableParams {
                entries,
                gmtu,
                w,
                k,
                unit_bytes
            }
        ),
        // One field of the paper's configuration changed.
        (0..5usize, u32_arg()).prop_map(|(i, v)| {
            let mut p = DTableParams::default();
            match i {
                0 => p.entries = v,
                1 => p.gmtu = v,
                2 => p.w = v,
                3 => p.k = v,
                _ => p.unit_bytes = v,
            }
            p
        }),
    ]
}

/// The requirements of §4.1 (Table 10) with some fields changed.
fn table10_mutated() -> impl Strategy<Value = Vec<SlRequirement>> {
    let base = [
        ("VO", 2u32, 1u32, 0.1f64),
        ("CL", 4, 16, 0.3),
        ("BE", 8, 16, 0.5),
        ("a", 16, 16, 0.05),
        ("b", 16, 16, 0.05),
    ];
    prop::collection::vec((0..5usize, 0..3usize, u32_arg(), share()), 0..4).prop_map(move |muts| {
        let mut v: Vec<SlRequirement> = base
            .iter()
            .map(|&(n, d, m, s)| SlRequirement {
                name: n.into(),
                max_distance: d,
                mtu: m,
                share: s,
            })
            .collect();
        for (i, f, x, s) in muts {
            match f {
                0 => v[i].max_distance = x,
                1 => v[i].mtu = x,
                _ => v[i].share = s,
            }
        }
        v
    })
}

fn check_dtable(p: &DTableParams, sls: &[SlRequirement]) -> Result<(), TestCaseError> {
    let r = timed("configure_dtable", LIMIT, || configure_dtable(p, sls));
    match r {
        Ok(t) => {
            prop_assert_eq!(t.table.len(), p.entries as usize);
            let sum: u64 = t.table.iter().map(|&(_, w)| w as u64).sum();
            prop_assert_eq!(sum, t.total_weight);
            for (sl, req) in t.sls.iter().zip(sls) {
                prop_assert_eq!(sl.entry_ids.len(), sl.entries as usize);
                prop_assert!(sl.weights.iter().all(|&w| w >= req.mtu), "{:?}", sl);
                // Every cyclic gap within the maximum distance.
                let n = p.entries as u64;
                for (j, &e) in sl.entry_ids.iter().enumerate() {
                    let next = sl.entry_ids[(j + 1) % sl.entry_ids.len()] as u64;
                    let gap = (next + n - e as u64 - 1) % n + 1;
                    prop_assert!(gap <= req.max_distance as u64, "{:?} gap {}", sl.name, gap);
                }
            }
        }
        Err(e) => {
            let m = e.to_string();
            prop_assert!(!m.contains("error:"), "{}", m);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn dtable_arguments(p in params(), sls in prop::collection::vec(requirement(), 0..8)) {
        check_dtable(&p, &sls)?;
    }

    #[test]
    fn dtable_table10_mutations(p in params(), sls in table10_mutated()) {
        check_dtable(&p, &sls)?;
    }
}
