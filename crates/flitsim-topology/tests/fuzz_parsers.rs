//! Fuzz targets for the topology readers (ibnetdiscover dumps, ibsim net files, flitsim
//! topology JSON, through [`Topology::read_bytes`]) and the generator specs
//! ([`generators::from_spec`]). Property of every target: no panic, no abort, each case well
//! under a second, and every error names the file — and, for the line-based formats, a line.
//! An accepted topology must survive flitsim's own writers: its JSON and its ibnetdiscover
//! dump read back to the same fabric.
//!
//! `FLITSIM_FUZZ_CASES=20000 cargo test -p flitsim-topology --test fuzz_parsers` for a long
//! run; the default case counts keep the whole file a few seconds in a debug build.
use flitsim_topology::{generators, Topology, TopologyFormat};
use proptest::prelude::*;
use std::path::Path;
use std::time::Duration;

mod fuzz_common;
use fuzz_common::{config, mutated, names_a_line, timed, token_soup};

const LIMIT: Duration = Duration::from_secs(3);

const IBSIM: &str = r#"# ibsim net file
Switch	8 "Switch1"
[1]	"Hca1"[1]
[2]	"Hca1"[2]
[3]	"Switch2"[3]	w=4 s=2

Switch 8 "Switch2"
[1]	"Hca2"[1]
[2]	"Hca2"[2]
[3]	"Switch1"[3]

Hca	2 "Hca1"
[1]	"Switch1"[1]
[2]	"Switch1"[2]

Hca	2 "Hca2"
[1]	"Switch2"[1]
[2]	"Switch2"[2]
"#;

/// Lines a mutation may insert into an InfiniBand dump.
const IB_LINES: &[&str] = &[
    "Switch 65535 \"S-ffffffffffffffff\"",
    "Switch 65534 \"S-0000000000000001\" # \"big\" lid 49151",
    "Switch 4294967296 \"S-1\"",
    "Switch 0 \"S-2\"",
    "Ca 1 \"H-0002c90000000000\"",
    "Hca 3 \"Hca9\"",
    "[1] \"S-0002c90000000000\"[1]",
    "[65534] \"Switch1\"[65534]",
    "[1](ffffffffffffffff) \"S-f4521403001165a0\"[1] # lid 0 \"x\" lid 65535",
    "[2] \"H-24be05ffff980030\"[1](24be05ffff980031) # \"stage\" lid 99999",
    "switchguid=0xffffffffffffffff(ffffffffffffffff)",
    "caguid=0x0",
    "sysimgguid=0x1(2)",
    "include foo",
    "@alias",
    "Rt 2 \"R-1\"",
    "#",
    "",
    "[1] \"",
    "\"",
    "{",
];

/// Lines a mutation may insert into a JSON topology.
const JSON_LINES: &[&str] = &[
    "{",
    "}",
    "[",
    "],",
    "\"ports\": 65535,",
    "\"guid\": 18446744073709551615,",
    "\"lid\": 0,",
    "{\"name\": \"x\", \"ports\": 0},",
    "\"latency\": 0,",
    "\"kind\": \"torus\", \"sides\": [4294967295], \"wrap\": true, \"endpoints_per_switch\": 1, \"trunk\": 1",
    "null,",
];

/// Tokens of both grammars, for texts built from scratch.
const TOKENS: &[&str] = &[
    "Switch",
    "Ca",
    "Hca",
    " ",
    " ",
    "\t",
    "\n",
    "\n",
    "\"",
    "\"S-1\"",
    "\"S-2\"",
    "\"H-3\"",
    "\"Switch1\"",
    "[",
    "]",
    "(",
    ")",
    "#",
    " lid ",
    "1",
    "2",
    "3",
    "36",
    "65535",
    "0",
    "4294967296",
    "ffff",
    "0x",
    "=",
    "switchguid",
    "caguid",
    "@",
    "{",
    "}",
    ":",
    ",",
    "\"format\"",
    "\"flitsim-topology\"",
    "\"version\"",
    "\"switches\"",
    "\"endpoints\"",
    "\"links\"",
    "\"name\"",
    "\"ports\"",
    "[]",
    "\u{feff}",
    "é",
    "\r",
];

fn shared_dump() -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/testdata/fabrics/loginoff-8sw-145ca.topo");
    std::fs::read(&p).unwrap_or_else(|e| panic!("shared test fabric {}: {e}", p.display()))
}

fn small_topologies() -> Vec<Topology> {
    [
        "torus:3x2,endpoints=2",
        "kary-ntree:k=2,n=2",
        "xgft:h=2,m=2,2,w=1,2",
        "kautz:b=2,n=1,endpoints=1",
        "random:switches=5,ports=6,endpoints=1,links=6,seed=3",
    ]
    .iter()
    .map(|s| generators::from_spec(s).unwrap())
    .collect()
}

fn ib_seeds() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = small_topologies()
        .iter()
        .map(|t| t.to_ibnetdiscover().into_bytes())
        .collect();
    v.push(IBSIM.as_bytes().to_vec());
    v.push(shared_dump());
    v
}

fn json_seeds() -> Vec<Vec<u8>> {
    small_topologies()
        .iter()
        .map(|t| t.to_json().into_bytes())
        .collect()
}

/// The property every reader target checks.
fn check(bytes: &[u8], origin: &str) -> Result<(), TestCaseError> {
    let r = timed("reading", LIMIT, || Topology::read_bytes(bytes, origin));
    match r {
        Ok(t) => {
            // flitsim's own writers must produce files it reads back to the same fabric.
            let back = Topology::read_str(&t.to_json(), "back.json");
            let back = back
                .map_err(|e| TestCaseError::fail(format!("JSON of an accepted topology: {e}")))?;
            prop_assert_eq!(back.links(), t.links());
            prop_assert_eq!(back.switches(), t.switches());
            prop_assert_eq!(back.endpoints(), t.endpoints());
            let ib = Topology::read_str(&t.to_ibnetdiscover(), "back.topo").map_err(|e| {
                TestCaseError::fail(format!("ibnetdiscover dump of an accepted topology: {e}"))
            })?;
            prop_assert_eq!(ib.num_switches(), t.num_switches());
            prop_assert_eq!(ib.num_endpoints(), t.num_endpoints());
            prop_assert_eq!(ib.links().len(), t.links().len());
            let _ = t.is_connected();
        }
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(msg.starts_with(&format!("{origin}: ")), "no file: {}", msg);
            prop_assert!(!msg.contains("error:"), "{}", msg);
            let text = String::from_utf8_lossy(bytes);
            let line_based = Topology::detect_format(&text) == Some(TopologyFormat::InfiniBand);
            if line_based || std::str::from_utf8(bytes).is_err() {
                prop_assert!(names_a_line(&msg), "no line: {}", msg);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn ibnetdiscover_and_ibsim_mutations(bytes in mutated(ib_seeds(), IB_LINES, 8)) {
        check(&bytes, "fuzz.topo")?;
    }

    #[test]
    fn json_mutations(bytes in mutated(json_seeds(), JSON_LINES, 6)) {
        check(&bytes, "fuzz.json")?;
    }

    #[test]
    fn token_soup_texts(text in token_soup(TOKENS, 200)) {
        check(text.as_bytes(), "soup.topo")?;
    }

    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        check(&bytes, "bytes.topo")?;
    }
}

/// Specs of every generator family with small and boundary numbers (products of the small
/// ones stay small, any boundary value makes the spec too large or invalid), so every case
/// is quick whether it is accepted or refused.
fn spec() -> impl Strategy<Value = String> {
    let num = prop::sample::select(
        &[
            "0",
            "1",
            "2",
            "3",
            "4",
            "5",
            "7",
            "-1",
            "x",
            "",
            "2147483648",
            "4294967295",
            "4294967296",
            "18446744073709551616",
        ][..],
    );
    let nums = prop::collection::vec(num.clone(), 1..4).prop_map(|v| v.join(","));
    let family = prop::sample::select(
        &[
            "torus:{a}x{b},endpoints={c},trunk={d}",
            "mesh:{a}x{b}x{c}",
            "torus:{a}",
            "kary-ntree:k={a},n={n}",
            "fly:k={a},n={n},latency={c}",
            "min:endpoints={a},radix={b}",
            "xgft:h={a},m={l},w={m}",
            "xgft:h={a},m={l},w={m},endpoints={b}",
            "xgft:h={a},m={l},w={m},total_endpoints={b}",
            "kautz:b={a},n={n},endpoints={c}",
            "kautz:b={a},n={n},total_endpoints={c}",
            "random:switches={a},ports={b},endpoints={c},links={d},seed={e}",
            "random:switches={a},ports={b},endpoints={c},links={d},multi_links=1",
            "{a}:{b}",
        ][..],
    );
    // Exponents (`n` of the trees, the butterfly and Kautz) stay small or become huge.
    let exp =
        prop::sample::select(&["0", "1", "2", "3", "4", "-1", "4294967295", "4294967296"][..]);
    let nums = (nums.clone(), nums, exp);
    (
        family,
        num.clone(),
        num.clone(),
        num.clone(),
        num.clone(),
        num,
        nums,
    )
        .prop_map(|(f, a, b, c, d, e, (l, m, n))| {
            f.replace("{n}", n)
                .replace("{a}", a)
                .replace("{b}", b)
                .replace("{c}", c)
                .replace("{d}", d)
                .replace("{e}", e)
                .replace("{l}", &l)
                .replace("{m}", &m)
        })
}

proptest! {
    #![proptest_config(config(400))]

    #[test]
    fn generator_specs(spec in spec()) {
        let r = timed(&spec, LIMIT, || generators::from_spec(&spec));
        match r {
            Ok(t) => {
                prop_assert!(t.num_switches() as u64 <= flitsim_topology::MAX_SWITCHES);
                prop_assert!(t.num_endpoints() as u64 <= flitsim_topology::MAX_ENDPOINTS);
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(!msg.contains("error:"), "{}", msg);
            }
        }
    }

    #[test]
    fn arbitrary_specs(spec in "[a-z:=,x0-9-]{0,40}") {
        let _ = timed(&spec, LIMIT, || generators::from_spec(&spec));
    }
}
