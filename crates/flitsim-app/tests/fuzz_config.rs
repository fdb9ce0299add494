//! Fuzzing the experiment file's reader (issue 11): arbitrary text and structured mutations of
//! the example files (lines deleted, duplicated or truncated; numbers replaced by 0, −1, huge
//! values or strings) go through `ExperimentConfig::parse`, and those that parse through the
//! topology checks and the memory estimate. Nothing may panic, and every error must name a
//! place (a line, a `--set`, or a key).
//!
//! `FLITSIM_FUZZ_CASES` sets the number of cases per property (default 300, a few seconds in
//! a debug build).
use flitsim_app::config::TopologyConfig;
use flitsim_app::{memory, ExperimentConfig};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("FLITSIM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

fn examples() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

/// Parses, then runs what needs no allocation proportional to the fabric: the topology's
/// checks and the memory estimate. Errors must name a place.
fn check(text: &str, sets: &[String]) {
    match ExperimentConfig::parse(text, "fuzz.toml", sets, None) {
        Ok(cfg) => {
            if let Some(size) = memory::FabricSize::of_config(&cfg.topology) {
                let _ = size.experiment_bytes(
                    cfg.routing.vls,
                    cfg.traffic.classes.len(),
                    cfg.routing.engine.as_deref(),
                    false,
                    false,
                );
            }
            if let Err(e) = memory::check(&cfg, None) {
                let e = e.to_string();
                assert!(e.contains("key `"), "{e}");
            }
            // Small generated fabrics are built too: their checks run after generation.
            if let Some(size) = memory::FabricSize::of_config(&cfg.topology) {
                let small = size.switches <= 4096 && size.endpoints <= 4096;
                if small && !matches!(cfg.topology, TopologyConfig::File { .. }) {
                    if let Err(e) = flitsim_app::build_topology(&cfg, None) {
                        let e = e.to_string();
                        assert!(e.contains("key `") || e.contains("topology"), "{e}");
                    }
                }
            }
        }
        Err(e) => {
            let e = e.to_string();
            assert!(
                e.starts_with("fuzz.toml: ")
                    && (e.contains("line ") || e.contains("--set") || e.contains("key `")),
                "an error without a place: {e}"
            );
        }
    }
}

/// One structured mutation of a file's lines.
#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize),
    Duplicate(usize),
    Truncate(usize),
    /// Replace the `k`-th number of the line with one of the nasty values.
    Number(usize, usize, usize),
    /// Replace the value of the line's `key = value` with a string.
    Stringify(usize),
}

const NASTY: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "65536",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "1e308",
    "nan",
    "inf",
    "-0.0",
    "0.5",
    "\"x\"",
    "[]",
    "{}",
    "[0, 0]",
    "true",
];

fn mutate(text: &str, muts: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for m in muts {
        if lines.is_empty() {
            break;
        }
        let at = |i: usize| i % lines.len();
        match *m {
            Mutation::Delete(i) => {
                let i = at(i);
                lines.remove(i);
            }
            Mutation::Duplicate(i) => {
                let i = at(i);
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            Mutation::Truncate(i) => {
                let i = at(i);
                let l = &lines[i];
                let cut = l
                    .char_indices()
                    .nth(l.chars().count() / 2)
                    .map_or(0, |c| c.0);
                lines[i] = l[..cut].to_string();
            }
            Mutation::Number(i, k, v) => {
                let i = at(i);
                let l = &lines[i];
                let starts: Vec<usize> = l
                    .char_indices()
                    .filter(|&(j, c)| {
                        c.is_ascii_digit()
                            && (j == 0 || !l.as_bytes()[j - 1].is_ascii_alphanumeric())
                    })
                    .map(|(j, _)| j)
                    .collect();
                if starts.is_empty() {
                    continue;
                }
                let s = starts[k % starts.len()];
                let e = l[s..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
                    .map_or(l.len(), |x| s + x);
                lines[i] = format!("{}{}{}", &l[..s], NASTY[v % NASTY.len()], &l[e..]);
            }
            Mutation::Stringify(i) => {
                let i = at(i);
                if let Some((k, v)) = lines[i].split_once('=') {
                    lines[i] = format!("{k}= \"{}\"", v.trim().replace('"', ""));
                }
            }
        }
    }
    lines.join("\n")
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Duplicate),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(i, k, v)| Mutation::Number(i, k, v)),
        any::<usize>().prop_map(Mutation::Stringify),
    ]
}

/// `--set` overrides of real keys with nasty values.
fn override_() -> impl Strategy<Value = String> {
    let keys = prop::sample::select(vec![
        "topology.sides",
        "topology.k",
        "topology.n",
        "topology.endpoints_per_switch",
        "topology.link_latency",
        "topology.trunk",
        "routing.vls",
        "routing.engine",
        "switch.vl_buffer_flits",
        "switch.speedup",
        "switch.output_buffer_flits",
        "switch.opa.mport_links",
        "switch.opa.ports_per_mport",
        "nic.buffer_flits",
        "traffic.load",
        "traffic.pattern",
        "run.warmup",
        "run.measure",
        "run.drain_max",
        "run.stall_cycles",
        "run.max_memory",
        "run.saturation_tolerance",
    ]);
    (keys, prop::sample::select(NASTY.to_vec())).prop_map(|(k, v)| format!("{k}={v}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,300}") {
        check(&text, &[]);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        check(&String::from_utf8_lossy(&bytes), &[]);
    }

    #[test]
    fn mutated_examples_never_panic(
        file in any::<prop::sample::Index>(),
        muts in prop::collection::vec(mutation(), 1..6),
        sets in prop::collection::vec(override_(), 0..3),
    ) {
        let files = examples();
        let text = mutate(&files[file.index(files.len())], &muts);
        check(&text, &sets);
    }
}
