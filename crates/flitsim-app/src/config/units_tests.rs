//! Tests of quantity parsing, conversion and the `[units]` pass (expectations written out by
//! hand, not computed with the code under test).
use super::*;
use crate::config::ExperimentConfig;

fn q(num: u128, den: u128) -> Ratio {
    Ratio::new(num, den).unwrap()
}

#[test]
fn quantities_parse_to_exact_base_units() {
    // (text, dimension, value in bytes / ns / bytes per second)
    let table: &[(&str, Dimension, Ratio)] = &[
        ("32B", Size, q(32, 1)),
        ("2KiB", Size, q(2048, 1)),
        ("120KB", Size, q(120_000, 1)),
        ("120kB", Size, q(120_000, 1)),
        ("1MB", Size, q(1_000_000, 1)),
        ("1MiB", Size, q(1_048_576, 1)),
        ("1GiB", Size, q(1_073_741_824, 1)),
        ("1.5KiB", Size, q(1536, 1)),
        ("512b", Size, q(64, 1)),
        ("1b", Size, q(1, 8)),
        ("2 KiB", Size, q(2048, 1)),
        ("  64B ", Size, q(64, 1)),
        ("0B", Size, q(0, 1)),
        ("100ns", Time, q(100, 1)),
        ("20us", Time, q(20_000, 1)),
        ("20µs", Time, q(20_000, 1)),
        ("20μs", Time, q(20_000, 1)),
        ("40ms", Time, q(40_000_000, 1)),
        ("1s", Time, q(1_000_000_000, 1)),
        ("0.5ns", Time, q(1, 2)),
        ("250ps", Time, q(1, 4)),
        ("8Gb/s", Rate, q(1_000_000_000, 1)),
        ("3MB/s", Rate, q(3_000_000, 1)),
        ("1GiB/s", Rate, q(1_073_741_824, 1)),
        ("100Mb/s", Rate, q(12_500_000, 1)),
    ];
    for &(text, dim, value) in table {
        let got = parse_quantity(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!((got.dim, got.value), (dim, value), "{text}");
    }
}

#[test]
fn bad_quantities_are_refused_with_a_reason() {
    let table: &[(&str, &str)] = &[
        ("12 parsecs", "unknown unit `parsecs`"),
        ("-3B", "negative"),
        ("1.5.2KB", "not a number"),
        ("1.KB", "not a number"),
        (".5KB", "not a number"),
        ("high", "not a quantity"),
        ("", "not a quantity"),
        ("64", "has no unit"),
        ("3mb", "unknown unit `mb`"),
        ("3Xi B", "unknown unit"),
        ("1e3B", "unknown unit `e3B`"),
        ("999999999999999999999999999999999999999999B", "too large"),
        ("340282366920938463463374607431768211455TiB", "too large"),
    ];
    for &(text, reason) in table {
        let e = parse_quantity(text).unwrap_err();
        assert!(e.contains(reason), "{text}: {e}");
    }
}

fn units(flit_bytes: u64, cycle_ns: Ratio) -> Units {
    Units {
        flit_bytes,
        cycle_ns,
    }
}

fn conv(u: &Units, text: &str) -> toml::Value {
    u.convert(parse_quantity(text).unwrap()).unwrap()
}

#[test]
fn sizes_round_up_to_whole_flits_and_times_to_whole_cycles() {
    let u = units(64, q(64, 1));
    assert_eq!(conv(&u, "64B"), toml::Value::Integer(1));
    assert_eq!(conv(&u, "65B"), toml::Value::Integer(2));
    assert_eq!(conv(&u, "1B"), toml::Value::Integer(1));
    assert_eq!(conv(&u, "0B"), toml::Value::Integer(0));
    assert_eq!(conv(&u, "2KiB"), toml::Value::Integer(32));
    assert_eq!(conv(&u, "120KB"), toml::Value::Integer(1875));
    assert_eq!(conv(&u, "512b"), toml::Value::Integer(1));
    assert_eq!(conv(&u, "64ns"), toml::Value::Integer(1));
    assert_eq!(conv(&u, "65ns"), toml::Value::Integer(2));
    assert_eq!(conv(&u, "1.28ms"), toml::Value::Integer(20_000));
    // 8 Gb/s is one byte per ns: 64 bytes per 64-ns cycle = one flit per cycle.
    assert_eq!(conv(&u, "8Gb/s"), toml::Value::Float(1.0));
    assert_eq!(conv(&u, "4Gb/s"), toml::Value::Float(0.5));
    assert_eq!(conv(&u, "1GB/s"), toml::Value::Float(1.0));
    // A cycle that is not a whole number of ns (100 Gb/s, 64 B: 5.12 ns) stays exact.
    let u = units(64, q(512, 100));
    assert_eq!(conv(&u, "512ns"), toml::Value::Integer(100));
    assert_eq!(conv(&u, "5.12us"), toml::Value::Integer(1000));
    assert_eq!(conv(&u, "5.13ns"), toml::Value::Integer(2));
    assert_eq!(conv(&u, "100Gb/s"), toml::Value::Float(1.0));
}

#[test]
fn conversions_round_trip() {
    let int = |v: toml::Value| v.as_integer().unwrap() as u128;
    for fb in [1u64, 3, 8, 64, 100, 4096] {
        let u = units(fb, q(64, 1));
        for bytes in [0u128, 1, 7, 63, 64, 65, 1000, 4095, 4096, 123_457] {
            let flits = int(conv(&u, &format!("{bytes}B")));
            let back = flits * fb as u128;
            assert!(
                back >= bytes && back < bytes + fb as u128,
                "{bytes} B with {fb}-byte flits: {flits} flits"
            );
        }
    }
    // Times that are whole cycles convert exactly, both ways.
    for (cycle, cycles) in [(q(64, 1), 1u128), (q(64, 1), 12_345), (q(512, 100), 777)] {
        let u = units(64, cycle);
        let t = Ratio::int(cycles).checked_mul(cycle).unwrap();
        let text = format!("{}ps", t.checked_mul(Ratio::int(1000)).unwrap().ceil());
        assert_eq!(int(conv(&u, &text)), cycles, "{text}");
    }
}

#[test]
fn the_key_table_matches_paths() {
    assert_eq!(dimension_of("traffic.load"), Some(Rate));
    assert_eq!(dimension_of("traffic.class[3].message_flits"), Some(Size));
    assert_eq!(dimension_of("traffic.class[0].rate"), Some(Rate));
    assert_eq!(dimension_of("qos.vlarb.high[2][1]"), Some(Size));
    assert_eq!(dimension_of("qos.vlarb.high[2][0]"), None);
    assert_eq!(dimension_of("run.warmup"), Some(Time));
    assert_eq!(dimension_of("topology.link_latency"), Some(Time));
    assert_eq!(dimension_of("traffic.pattern"), None);
    assert_eq!(dimension_of("traffic.class[0].name"), None);
}

const PLAIN: &str = "[topology]\nkind = \"torus\"\nsides = [4, 4]\nlink_latency = 2\n[switch]\nvl_buffer_flits = 32\n[traffic]\nload = 0.25\n[[traffic.class]]\nname = \"A\"\nmessage_flits = 8\n[run]\nwarmup = 300\nmeasure = 1000\n";
const WITH_UNITS: &str = "[units]\nflit_bytes = 32\ncycle_ns = 2.5\n[topology]\nkind = \"torus\"\nsides = [4, 4]\nlink_latency = \"5ns\"\n[switch]\nvl_buffer_flits = \"1KiB\"\n[traffic]\nload = \"3.2GB/s\"\n[[traffic.class]]\nname = \"A\"\nmessage_flits = \"250B\"\n[run]\nwarmup = \"750ns\"\nmeasure = \"2.5us\"\n";

fn parse(text: &str, sets: &[&str]) -> Result<ExperimentConfig, String> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    ExperimentConfig::parse(text, "exp.toml", &sets, None).map_err(|e| e.to_string())
}

#[test]
fn a_config_with_units_resolves_to_the_same_engine_parameters() {
    let plain = parse(PLAIN, &[]).unwrap();
    let units = parse(WITH_UNITS, &[]).unwrap();
    let json = |c: &ExperimentConfig| {
        let mut v = serde_json::to_value(c).unwrap();
        v.as_object_mut().unwrap().remove("units");
        v
    };
    assert_eq!(json(&plain), json(&units));
    assert_eq!(
        units.units,
        Some(UnitsConfig {
            flit_bytes: 32,
            cycle_ns: Some(2.5),
            link_rate: None
        })
    );
    assert_ne!(plain.hash(), units.hash(), "the hash covers [units]");
    // Without [units] the resolved configuration has no `units` key at all.
    assert!(!serde_json::to_string(&plain).unwrap().contains("units"));
}

#[test]
fn link_rate_gives_the_cycle_and_must_agree_with_cycle_ns() {
    let t = |u: &str| WITH_UNITS.replace("cycle_ns = 2.5", u);
    // 32 B at 102.4 Gb/s: 256 bit / 102.4 Gb/s = 2.5 ns.
    let c = parse(&t("link_rate = \"102.4Gb/s\""), &[]).unwrap();
    assert_eq!(c.units.as_ref().unwrap().cycle_ns, Some(2.5));
    assert_eq!(c.traffic.load, Some(0.25));
    let c = parse(&t("cycle_ns = 2.5\nlink_rate = \"102.4Gb/s\""), &[]).unwrap();
    assert_eq!(c.run.measure, 1000);
    let e = parse(&t("cycle_ns = 2\nlink_rate = \"102.4Gb/s\""), &[]).unwrap_err();
    assert!(e.contains("units.cycle_ns") && e.contains("line 3"), "{e}");
    let e = parse(&t("cycle_ns = \"2.5ns\""), &[]).map(|c| c.run.warmup);
    assert_eq!(e, Ok(300));
    let e = parse(&t(""), &[]).unwrap_err();
    assert!(e.contains("needs `cycle_ns` or `link_rate`"), "{e}");
    let e = parse(&WITH_UNITS.replace("flit_bytes", "flit_byte"), &[]).unwrap_err();
    assert!(
        e.contains("line 2, ")
            && e.contains("key `units.flit_byte`")
            && e.contains("did you mean `flit_bytes`"),
        "{e}"
    );
    let e = parse(&WITH_UNITS.replace("flit_bytes = 32\n", ""), &[]).unwrap_err();
    assert!(e.contains("flit_bytes") && e.contains("required"), "{e}");
}

#[test]
fn errors_name_the_key_and_its_line() {
    let e = parse(
        &PLAIN.replace("link_latency = 2", "link_latency = \"5ns\""),
        &[],
    )
    .unwrap_err();
    assert!(
        e.starts_with("exp.toml: line 4, ")
            && e.contains(
                "key `topology.link_latency`: \"5ns\" needs [units] cycle_ns or link_rate"
            ),
        "{e}"
    );
    let e = parse(&PLAIN.replace("= 32", "= \"1KiB\""), &[]).unwrap_err();
    assert!(
        e.contains("line 6, ")
            && e.contains("key `switch.vl_buffer_flits`: \"1KiB\" needs [units] flit_bytes"),
        "{e}"
    );
    let e = parse(PLAIN, &["traffic.class[0].message_flits=\"2KiB\""]);
    // `--set` cannot index arrays; a whole class list can be replaced.
    assert!(e.is_err());
    let e = parse(
        PLAIN,
        &["traffic.class=[{name=\"A\",message_flits=\"2KiB\"}]"],
    )
    .unwrap_err();
    assert!(
        e.contains("--set ")
            && e.contains(
                "key `traffic.class[0].message_flits`: \"2KiB\" needs [units] flit_bytes"
            ),
        "{e}"
    );
    let e = parse(&WITH_UNITS.replace("\"2.5us\"", "\"100B\""), &[]).unwrap_err();
    assert!(
        e.contains("line 17, ") && e.contains("key `run.measure`: \"100B\" is not a time"),
        "{e}"
    );
    let e = parse(&WITH_UNITS.replace("\"250B\"", "\"12 parsecs\""), &[]).unwrap_err();
    assert!(
        e.contains("line 14, ")
            && e.contains("key `traffic.class[0].message_flits`")
            && e.contains("parsecs"),
        "{e}"
    );
    // A converted value out of its key's range is a type error, still with its line.
    let e = parse(&WITH_UNITS.replace("\"1KiB\"", "\"1TB\""), &[]).unwrap_err();
    assert!(
        e.contains("switch.vl_buffer_flits") && e.contains("line 9"),
        "{e}"
    );
    // A string that is no quantity at all is a wrong type, as without units.
    let e = parse(&WITH_UNITS.replace("\"3.2GB/s\"", "\"high\""), &[]).unwrap_err();
    assert!(
        e.contains("key `traffic.load`") && e.contains("invalid type") && e.contains("line 11"),
        "{e}"
    );
    // Other mistakes in a file with units keep their key and line.
    let e = parse(&WITH_UNITS.replace("[switch]", "[swich]"), &[]).unwrap_err();
    assert!(
        e.contains("did you mean `switch`") && e.contains("line 8"),
        "{e}"
    );
}

#[test]
fn overrides_take_units_too() {
    let c = parse(
        WITH_UNITS,
        &["traffic.load=\"1.6GB/s\"", "run.warmup=\"25ns\""],
    )
    .unwrap();
    assert_eq!((c.traffic.load, c.run.warmup), (Some(0.125), 10));
    // Units themselves can be overridden: 64-byte flits make 1 KiB 16 flits.
    let c = parse(WITH_UNITS, &["units.flit_bytes=64"]).unwrap();
    assert_eq!(c.switch.vl_buffer_flits, 16);
    let c = parse(
        PLAIN,
        &[
            "units.flit_bytes=\"16B\"",
            "units.cycle_ns=1",
            "switch.vl_buffer_flits=\"1KiB\"",
        ],
    )
    .unwrap();
    assert_eq!(c.switch.vl_buffer_flits, 64);
}

#[test]
fn the_schema_accepts_quantity_strings() {
    let schema: serde_json::Value = serde_json::from_str(&ExperimentConfig::json_schema()).unwrap();
    let load = &schema["definitions"]["TrafficConfig"]["properties"]["load"];
    assert_eq!(load["oneOf"][1]["type"], "string", "{load}");
    assert!(load["description"]
        .as_str()
        .unwrap()
        .contains("flits/cycle"));
    let warmup = &schema["definitions"]["RunConfig"]["properties"]["warmup"];
    assert_eq!(warmup["oneOf"][0]["type"], "integer", "{warmup}");
    let mf = &schema["definitions"]["ClassConfig"]["properties"]["message_flits"];
    assert_eq!(mf["oneOf"][1]["type"], "string", "{mf}");
    let weight =
        &schema["definitions"]["VlArbQosConfig"]["properties"]["high"]["items"]["items"][1];
    assert_eq!(weight["oneOf"][1]["type"], "string", "{weight}");
    let torus = &schema["definitions"]["TopologyConfig"]["oneOf"][0]["properties"];
    assert_eq!(
        torus["link_latency"]["oneOf"][1]["type"], "string",
        "{torus}"
    );
    assert!(schema["properties"]["units"].is_object());
    // Keys that take no quantity are unchanged.
    let vls = &schema["definitions"]["RoutingConfig"]["properties"]["vls"];
    assert_eq!(vls["type"], "integer");
}

#[test]
fn docs_list_exactly_the_quantity_keys() {
    let doc = include_str!("../../../../docs/model.md");
    let section = &doc[doc.find("## Physical units").expect("section")..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let rows: Vec<(String, String)> = section
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| {
            let (key, rest) = l.split_once("` | ")?;
            Some((key.to_string(), rest.trim_end_matches(" |").to_string()))
        })
        .collect();
    let expected: Vec<(String, String)> = QUANTITY_KEYS
        .iter()
        .map(|(k, d)| (k.to_string(), format!("{d:?}").to_lowercase()))
        .collect();
    assert_eq!(
        rows, expected,
        "docs/model.md, Physical units: the key table"
    );
}

#[test]
fn class_sizes_and_processes_take_units_and_are_in_the_schema() {
    // 64-byte flits, 10 ns cycles: 40 ms = 4e6 cycles, 1 KB = 16 flits, 120 KB = 1875 flits.
    let text = "[units]\nflit_bytes = 64\ncycle_ns = 10\n[topology]\nkind = \"torus\"\n\
                sides = [4, 4]\n[traffic]\n[[traffic.class]]\nname = \"V\"\nrate = \"1MB/s\"\n\
                mtu_flits = 64\n\
                process = { kind = \"video\", frame_period = \"40ms\", i_to_p = 2, p_to_b = 1.5, min = \"1KB\", max = \"120KB\" }\n\
                [[traffic.class]]\nname = \"B\"\nrate = 0.1\nmtu_flits = 64\n\
                size = { dist = \"pareto\", alpha = 1.5, min = \"128B\", max = \"64KiB\" }\n\
                process = { kind = \"onoff\", on_alpha = 1.4, off_alpha = 1.4, on_mean = \"20us\", off_mean = \"60us\" }\n";
    let cfg = parse(text, &[]).unwrap();
    let v = serde_json::to_value(&cfg.traffic.classes).unwrap();
    assert_eq!(v[0]["process"]["frame_period"], 4_000_000.0, "{v}");
    assert_eq!(v[0]["process"]["min"], 16.0, "{v}");
    assert_eq!(v[0]["process"]["max"], 1875.0, "{v}");
    assert_eq!(v[1]["size"]["min"], 2.0, "{v}");
    assert_eq!(v[1]["size"]["max"], 1024.0, "{v}");
    assert_eq!(v[1]["process"]["on_mean"], 2000.0, "{v}");
    assert!(v[1].get("message_flits").is_none(), "{v}");
    let schema: serde_json::Value = serde_json::from_str(&ExperimentConfig::json_schema()).unwrap();
    let s = schema.to_string();
    for key in [
        "onoff",
        "video",
        "frame_period",
        "empirical",
        "pareto",
        "poisson",
    ] {
        assert!(s.contains(key), "schema lacks {key}");
    }
}

#[test]
fn a_rate_per_link_is_its_share_of_the_link() {
    // 40 MB/s of a 1.28 Gb/s (160 MB/s) link is a quarter; 2 Gb/s of 8 Gb/s likewise.
    assert_eq!(rate_per_link("40MB/s", "1.28Gb/s"), Ok(0.25));
    assert_eq!(rate_per_link("2Gb/s", "8Gb/s"), Ok(0.25));
    assert_eq!(rate_per_link("1GiB/s", "1GiB/s"), Ok(1.0));
    for (rate, link, says) in [
        ("40MB", "1.28Gb/s", "the rate `40MB` is a size"),
        ("40MB/s", "1us", "the link rate `1us` is a time"),
        ("fast", "1.28Gb/s", "the rate `fast`"),
        ("40MB/s", "0Gb/s", "zero"),
        ("-1MB/s", "1Gb/s", "negative"),
    ] {
        let e = rate_per_link(rate, link).unwrap_err();
        assert!(e.contains(says), "{rate} / {link}: {e}");
    }
}
