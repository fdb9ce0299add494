//! Closed-loop trace replay (`[traffic.trace]`, VEF): execution times against closed forms on a
//! lone switch, where every message crosses one switch and takes T = 2L + R + P − 1 cycles
//! from its release to the arrival of its last flit (docs/model.md, "Latency of a lone
//! packet"), plus the trace's own bookkeeping and its errors.
mod common;
use std::path::PathBuf;

/// A fresh directory with `trace.vef` holding `vef` and `exp.toml` holding `exp`; returns
/// the experiment's path.
fn files(name: &str, vef: &str, exp: &str) -> (PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("flitsim-replay-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("trace.vef"), vef).unwrap();
    std::fs::write(dir.join("exp.toml"), exp).unwrap();
    let origin = dir.join("exp.toml").display().to_string();
    (dir, origin)
}

/// One switch with `k` endpoints, 64-byte flits, 1 ns cycles; the trace on class BE.
fn exp(k: u32, extra: &str) -> String {
    format!(
        r#"
[units]
flit_bytes = 64
cycle_ns = 1

[topology]
kind = "kary_ntree"
k = {k}
n = 1

[[traffic.class]]
name = "BE"
message_flits = 16

[traffic.trace]
path = "trace.vef"
{extra}

[run]
warmup = 0
measure = 10
"#
    )
}

fn replay(name: &str, vef: &str, exp: &str) -> flitsim_sim::RunResult {
    let (dir, origin) = files(name, vef, exp);
    let text = std::fs::read_to_string(&origin).unwrap();
    let r = common::run(&text, &origin, &[]);
    assert_eq!(
        without_timings(&r),
        without_timings(&in_memory(&text, &origin, &[])),
        "{name}: the streamed and the in-memory trace replay differently"
    );
    std::fs::remove_dir_all(dir).ok();
    r
}

/// The experiment run with its trace read whole into memory instead of streamed.
fn in_memory(text: &str, origin: &str, sets: &[String]) -> flitsim_sim::RunResult {
    let mut cfg = flitsim_app::ExperimentConfig::parse(text, origin, sets, None).unwrap();
    let tc = cfg.traffic.trace.as_mut().unwrap();
    let streamed = tc.program.as_ref().unwrap().stream.clone().unwrap();
    let file = std::io::BufReader::new(std::fs::File::open(&streamed.path).unwrap());
    let cycle_ns = cfg.units.as_ref().unwrap().cycle_ns();
    let p = flitsim_sim::replay::vef::read_scaled(file, "trace", cycle_ns, tc.compute_scale);
    tc.program = Some(std::sync::Arc::new(p.unwrap()));
    let base = std::path::Path::new(origin).parent();
    flitsim_app::run_experiment(&cfg, base).unwrap()
}

/// The result as JSON without its wall-clock timings.
fn without_timings(r: &flitsim_sim::RunResult) -> String {
    let mut v = serde_json::to_value(r).unwrap();
    v.as_object_mut().unwrap().remove("performance");
    v.to_string()
}

/// A ping-pong of `n` round trips of `bytes` bytes between tasks 0 and 1, each message
/// `delay` ns after the previous one arrived.
fn ping_pong(n: u32, bytes: u64, delay: u64) -> String {
    let mut s = format!(
        "VEF 2 {} 1 0 0 FALSE\nC0 0 1\n0 0 1 {bytes} 0 0 -1\n",
        2 * n
    );
    for i in 1..2 * n {
        let (src, dst) = if i % 2 == 1 { (1, 0) } else { (0, 1) };
        s += &format!("{i} {src} {dst} {bytes} 2 {delay} {}\n", i - 1);
    }
    s
}

#[test]
fn a_ping_pong_takes_2n_message_times_plus_the_delays() {
    for (n, flits, delay) in [(1u32, 1u64, 0u64), (3, 4, 10), (5, 16, 7)] {
        let r = replay(
            &format!("pp{n}"),
            &ping_pong(n, flits * 64, delay),
            &exp(4, ""),
        );
        let t = r.trace.as_ref().expect("trace results");
        let msg = flits + 2; // T = 2L + R + P − 1 with L = R = 1
        let want = 2 * n as u64 * msg + (2 * n as u64 - 1) * delay;
        assert!(t.complete, "{t:?}");
        assert_eq!(
            t.execution_time,
            Some(want),
            "n {n}, P {flits}, delay {delay}"
        );
        assert_eq!(t.finish[0], Some(want), "task 0 receives the last message");
        assert_eq!(
            (t.tasks, t.messages, t.transfers),
            (2, 2 * n as u64, 2 * n as u64)
        );
        assert_eq!(t.bytes, 2 * n as u64 * flits * 64);
        assert_eq!(t.message_latency.mean, Some(msg as f64));
        assert_eq!(t.execution_time_ns, Some(want as f64));
        assert!(r.drained);
    }
}

#[test]
fn a_token_ring_takes_one_message_time_per_hop() {
    // 4 tasks pass a token round the ring 3 times: 12 messages, each released by the previous
    // one's arrival.
    let tasks = 4u32;
    let hops = 12u32;
    let mut s = format!("VEF {tasks} {hops} 1 0 0 FALSE\nC0 0 1 2 3\n0 0 1 128 0 0 -1\n");
    for i in 1..hops {
        let src = i % tasks;
        s += &format!("{i} {src} {} 128 2 0 {}\n", (src + 1) % tasks, i - 1);
    }
    let r = replay("ring", &s, &exp(4, ""));
    let t = r.trace.unwrap();
    assert_eq!(t.execution_time, Some(hops as u64 * (2 + 2)));
}

#[test]
fn a_binomial_broadcast_takes_log2_p_message_times() {
    // 8 tasks, root 0, 4 flits: rounds of T = 6 cycles; the deepest rank receives at 3T.
    let mut s = String::from("VEF 8 0 1 1 8 FALSE\nC0 0 1 2 3 4 5 6 7\n");
    for task in 0..8 {
        let (send, recv) = if task == 0 { (256, 0) } else { (0, 256) };
        s += &format!("G0 0 0 {task} {send} {recv} 0 0 -1\n");
    }
    let r = replay("bcast", &s, &exp(8, ""));
    let t = r.trace.unwrap();
    assert_eq!(t.collectives, 1);
    assert_eq!(t.transfers, 7);
    assert_eq!(t.execution_time, Some(3 * 6));
    // Rank 7 hears last, at 3T. Rank 1 hears first, at T = 6, then forwards to ranks 3 and
    // 5: its 4-flit sends leave the NIC in cycles 6–9 and, released by the first one's last
    // flit (a send's dependants start the next cycle), 10–13.
    assert_eq!(t.finish[7], Some(18));
    assert_eq!(t.finish[1], Some(13));
    assert_eq!(
        t.finish[0],
        Some(11),
        "the root sends 3 × 4 flits back to back, cycles 0–11"
    );
}

#[test]
fn tasks_sharing_an_endpoint_talk_through_memory() {
    // Two tasks per endpoint: 0 and 1 on endpoint 0, 2 and 3 on endpoint 1. Message 0 → 1 is
    // local (instant), then 1 → 2 crosses the switch.
    let s = "VEF 4 2 1 0 0 FALSE\nC0 0 1 2 3\n0 0 1 64 0 5 -1\n1 1 2 64 2 0 0\n";
    let r = replay("local", s, &exp(4, "tasks_per_endpoint = 2"));
    let t = r.trace.unwrap();
    assert_eq!(t.finish[1], Some(5), "received at its release");
    assert_eq!(t.execution_time, Some(5 + 3));
    assert_eq!(t.message_latency.count, 1, "only the network transfer");
}

#[test]
fn background_traffic_slows_the_trace_down() {
    let vef = ping_pong(20, 16 * 64, 0);
    let alone = replay("bg0", &vef, &exp(4, "")).trace.unwrap();
    // The other two endpoints' traffic and the tasks' own endpoints share the switch.
    let loaded = exp(4, "").replace(
        "[[traffic.class]]\nname = \"BE\"\nmessage_flits = 16\n",
        "[[traffic.class]]\nname = \"BE\"\nmessage_flits = 16\n\n[[traffic.class]]\nname = \"BG\"\nmessage_flits = 16\nrate = 0.9\n",
    ).replace("measure = 10", "measure = 2000");
    let busy = replay("bg1", &vef, &loaded).trace.unwrap();
    assert!(busy.complete);
    assert!(
        busy.execution_time.unwrap() > alone.execution_time.unwrap(),
        "{busy:?} vs {alone:?}"
    );
}

#[test]
fn results_are_deterministic_and_the_hash_covers_the_trace() {
    let a = replay("det1", &ping_pong(3, 256, 3), &exp(4, ""));
    let b = replay("det2", &ping_pong(3, 256, 3), &exp(4, ""));
    assert_eq!(a.trace, b.trace);
    assert_eq!(a.config_hash, b.config_hash);
    let c = replay("det3", &ping_pong(3, 320, 3), &exp(4, ""));
    assert_ne!(a.config_hash, c.config_hash);
}

#[test]
fn bad_trace_experiments_are_named() {
    let err = |vef: &str, exp: &str| {
        let (dir, origin) = files("bad", vef, exp);
        let text = std::fs::read_to_string(&origin).unwrap();
        let e = common::run_err(&text, &origin, &[]);
        std::fs::remove_dir_all(dir).ok();
        e
    };
    let pp = ping_pong(1, 64, 0);
    let e = err(
        &pp,
        &exp(4, "").replace("[units]\nflit_bytes = 64\ncycle_ns = 1\n", ""),
    );
    assert!(
        e.contains("traffic.trace") && e.contains("needs [units]"),
        "{e}"
    );
    let e = err("VEF 2 1 1 0 0 FALSE\nC0 0 1\n0 0 1 64 2 0 7\n", &exp(4, ""));
    assert!(e.contains("trace.vef: line 3: depends on message 7"), "{e}");
    let e = err(&pp, &exp(4, "format = \"dumpi\""));
    assert!(e.contains("flitsim trace convert"), "{e}");
    let e = err(
        &pp.replace("VEF 2", "VEF 9")
            .replace("C0 0 1", "C0 0 1 2 3 4 5 6 7 8"),
        &exp(4, ""),
    );
    assert!(
        e.contains("tasks_per_endpoint") && e.contains("9 tasks do not fit on 4 endpoints"),
        "{e}"
    );
    let e = err(&pp, &exp(4, "class = \"VO\""));
    assert!(e.contains("traffic.trace.class"), "{e}");
    let e = err(&pp, &exp(4, "mapping = \"nowhere.txt\""));
    assert!(e.contains("not a readable mapping file"), "{e}");
}

#[test]
fn the_documented_example_replays_to_the_end() {
    // TRACES.md's 4-task example: 2 messages and an allreduce (recursive doubling: 2 rounds
    // of 4 transfers), whose participations wait for a send, receives and nothing.
    let vef = "VEF 4 2 2 1 4 FALSE\nC0 0 1 2 3\nC1 0 1\n0 0 1 1024 0 0 -1\n1 1 2 2048 2 500 0\nG0 0 2 0 8 8 1 0 0\nG0 0 2 1 8 8 2 100 0\nG0 0 2 2 8 8 2 0 1\nG0 0 2 3 8 8 0 0 -1\n";
    let r = replay("doc", vef, &exp(4, ""));
    let t = r.trace.unwrap();
    assert!(t.complete);
    assert_eq!((t.messages, t.collectives, t.transfers), (2, 1, 2 + 8));
    // Message 1 leaves 500 ns after message 0 (16 flits, T = 18) arrived, and takes 34
    // cycles (32 flits in two 16-flit packets back to back); the allreduce follows.
    assert!(t.execution_time.unwrap() > 18 + 500 + 34);
    assert!(t.finish.iter().all(Option::is_some));
}

#[test]
fn the_run_stops_when_the_trace_has_finished() {
    let r = replay("stop", &ping_pong(2, 64, 1000), &exp(4, ""));
    let t = r.trace.unwrap();
    // The window (10 cycles) is long over; the run ends the cycle after the last arrival.
    assert_eq!(r.cycles.total, t.execution_time.unwrap() + 1);
}

#[test]
fn compute_scale_shrinks_the_delays() {
    // Ping-pong with 1000 ns between messages: scale 0.5 halves the delays, 0 removes them.
    for (scale, d) in [(1.0, 1000u64), (0.5, 500), (0.0, 0)] {
        let r = replay(
            &format!("scale{d}"),
            &ping_pong(2, 64, 1000),
            &exp(4, &format!("compute_scale = {scale}")),
        );
        assert_eq!(r.trace.unwrap().execution_time, Some(4 * 3 + 3 * d));
    }
    let (dir, origin) = files(
        "badscale",
        &ping_pong(1, 64, 0),
        &exp(4, "compute_scale = -1"),
    );
    let e = common::run_err(&exp(4, "compute_scale = -1"), &origin, &[]);
    std::fs::remove_dir_all(dir).ok();
    assert!(
        e.contains("traffic.trace.compute_scale") && e.contains("non-negative"),
        "{e}"
    );
}

#[test]
fn a_dumpi_trace_runs_from_its_converted_vef() {
    // `format = "dumpi"` with `converted` (what the Python package sets) replays the VEF it
    // names; the resolved configuration and its hash leave the cache path out.
    let pp = ping_pong(2, 64, 10);
    let vef = replay("dumpi-vef", &pp, &exp(4, ""));
    let (dir, origin) = files("dumpi", &pp, &exp(4, "format = \"dumpi\""));
    let text = std::fs::read_to_string(&origin).unwrap();
    let converted = dir.join("trace.vef").display().to_string();
    let set = format!("traffic.trace.converted={converted:?}");
    let r = common::run(&text, &origin, &[set.as_str()]);
    assert_eq!(r.trace, vef.trace);
    let other = format!(
        "traffic.trace.converted={:?}",
        dir.join("copy.vef").display()
    );
    std::fs::copy(dir.join("trace.vef"), dir.join("copy.vef")).unwrap();
    assert_eq!(
        common::run(&text, &origin, &[other.as_str()]).config_hash,
        r.config_hash
    );
    std::fs::remove_dir_all(dir).ok();
}

/// A trace file that disappears or changes between its check and its replay is an error
/// naming the key, not a panic (the replay reads the file a second time, lazily).
#[test]
fn a_trace_that_changes_under_the_replay_is_an_error() {
    let vef = ping_pong(4000, 64, 5);
    for (name, change) in [
        ("gone", None),
        (
            "garbled",
            Some("VEF 2 8000 1 0 0 FALSE\nC0 0 1\n0 0 1 64 0 0 -1\nnot a record\n"),
        ),
    ] {
        let (dir, origin) = files(name, &vef, &exp(4, ""));
        let text = std::fs::read_to_string(&origin).unwrap();
        let cfg = flitsim_app::ExperimentConfig::parse(&text, &origin, &[], None).unwrap();
        match change {
            None => std::fs::remove_file(dir.join("trace.vef")).unwrap(),
            Some(t) => std::fs::write(dir.join("trace.vef"), t).unwrap(),
        }
        let e = flitsim_app::run_experiment(&cfg, Some(&dir))
            .expect_err("the changed trace must not replay")
            .to_string();
        assert!(e.contains("traffic.trace.path"), "{name}: {e}");
        let why = if change.is_none() {
            "cannot reopen"
        } else {
            "changed while being replayed"
        };
        assert!(e.contains(why), "{name}: {e}");
        std::fs::remove_dir_all(dir).ok();
    }
}
