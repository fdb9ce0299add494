//! Video size traces (`process = { kind = "video", trace = "…" }`) replace the frame model.
mod common;
use std::path::PathBuf;

/// A fresh directory holding `trace.txt`: frames of 4, 8, 12 and 16 flits of 64 bytes.
fn dir_with_trace(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flitsim-vtrace-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace =
        "# frame type time(ms) size(bytes)\n0 I 0 1000\n1 B 40 500\n\n2 B 80 200\n3 P 120 700\n";
    std::fs::write(dir.join("trace.txt"), trace).unwrap();
    dir
}

const EXP: &str = r#"
seed = 5
[units]
flit_bytes = 64
cycle_ns = 1
[topology]
kind = "kary_ntree"
k = 4
n = 2
[[traffic.class]]
name = "VID"
process = { kind = "video", trace = "trace.txt", frame_period = 50 }
[run]
warmup = 1000
measure = 20000
"#;

#[test]
fn a_trace_sets_the_frames_and_the_rate() {
    let dir = dir_with_trace("rate");
    let origin = dir.join("exp.toml").display().to_string();
    // Frames of ⌈1000/64⌉, ⌈500/64⌉, ⌈200/64⌉, ⌈700/64⌉ = 16, 8, 4, 11 flits: a mean of 9.75
    // flits every 50 cycles.
    let cfg = common::parse(EXP, &origin, &[]);
    assert_eq!(
        cfg.traffic.classes[0].trace_frames(),
        Some(&[16, 8, 4, 11][..])
    );
    let rate = 9.75 / 50.0;
    assert!((cfg.traffic.class_rate(0) - rate).abs() < 1e-12);
    let r = common::run(EXP, &origin, &[]);
    let got = r.offered_load.unwrap();
    assert!((got - rate).abs() < 0.02 * rate, "offered {got} vs {rate}");
    let m = &r.per_sl[0].message_latency;
    assert!(m.count > 1000, "{} messages", m.count);
    // Deterministic.
    let again = common::run(EXP, &origin, &[]);
    assert_eq!(r.flits.generated, again.flits.generated);
    assert_eq!(r.per_sl[0].message_latency, again.per_sl[0].message_latency);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn trace_errors_name_the_key_file_and_line() {
    let dir = dir_with_trace("errors");
    let origin = dir.join("exp.toml").display().to_string();
    std::fs::write(dir.join("bad.txt"), "0 I 0 100\n1 Q 40 100\n").unwrap();
    let bad = EXP.replace("trace.txt", "bad.txt");
    let e = common::run_err(&bad, &origin, &[]);
    assert!(e.contains("traffic.class[0].process.trace"), "{e}");
    assert!(e.contains("bad.txt: line 2"), "{e}");
    let e = common::run_err(&EXP.replace("trace.txt", "missing.txt"), &origin, &[]);
    assert!(e.contains("missing.txt"), "{e}");
    let no_units = EXP.replace("[units]\nflit_bytes = 64\ncycle_ns = 1\n", "");
    let e = common::run_err(&no_units, &origin, &[]);
    assert!(
        e.contains("traffic.class[0].process.trace") && e.contains("flit_bytes"),
        "{e}"
    );
    let e = common::run_err(
        &EXP.replace("name = \"VID\"", "name = \"VID\"\nrate = 0.1"),
        &origin,
        &[],
    );
    assert!(e.contains("traffic.class[0].rate"), "{e}");
    let e = common::run_err(EXP, &origin, &["traffic.load=0.1"]);
    assert!(e.contains("traffic.load"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_config_hash_covers_the_trace_contents() {
    let dir = dir_with_trace("hash");
    let origin = dir.join("exp.toml").display().to_string();
    let a = common::parse(EXP, &origin, &[]).hash();
    assert_eq!(a, common::parse(EXP, &origin, &[]).hash(), "stable");
    // Same path, different frames: a different hash.
    std::fs::write(dir.join("trace.txt"), "0 I 0 1000\n1 B 40 501\n").unwrap();
    let b = common::parse(EXP, &origin, &[]).hash();
    assert_ne!(a, b);
    // A change that rounds to the same flits leaves the frames, and the hash, as they were.
    std::fs::write(dir.join("trace.txt"), "0 I 0 1000\n1 B 40 502\n").unwrap();
    assert_eq!(b, common::parse(EXP, &origin, &[]).hash());
    std::fs::remove_dir_all(&dir).ok();
}
