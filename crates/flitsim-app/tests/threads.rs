//! One run on several threads (`run.threads`, issue 19 item 2): the switches split into lanes
//! that run at once, and the results are byte-identical to the one-thread run for any thread
//! count, on every switch organisation, switching mode, buffer organisation and scheduler.
mod common;
use common::{
    example, run, run_err, same_on_any_threads, same_on_threads, short_with, MINHOP_8X8_DEADLOCK,
    TORUS, TORUS_VARIANTS,
};

#[test]
fn crossbars_vct_and_wormhole() {
    let torus = example("torus-8x8-uniform.toml");
    for extra in TORUS_VARIANTS {
        same_on_any_threads(&torus, "torus-8x8-uniform.toml", &short_with(extra));
    }
    same_on_any_threads(
        &example("fattree-4ary3-uniform.toml"),
        "fattree-4ary3-uniform.toml",
        &short_with(&["traffic.load=0.8"]),
    );
}

#[test]
fn omni_path_voqsw_and_source_routes() {
    same_on_threads(
        &example("opa-qos-torus2d.toml"),
        "opa-qos-torus2d.toml",
        &[
            "run.warmup=300",
            "run.measure=700",
            "units.flit_bytes=64",
            "traffic.load=0.9",
        ],
        &[1, 3],
    );
    same_on_any_threads(
        &example("voqsw-iba-8sw.toml"),
        "voqsw-iba-8sw.toml",
        &short_with(&[]),
    );
    // Myrinet source routes over a 4-ary 3-tree (the example is one crossbar).
    same_on_any_threads(
        &example("myrinet-best-effort.toml"),
        "myrinet-best-effort.toml",
        &short_with(&["topology.k=4", "topology.n=3"]),
    );
}

/// A deadlock is found at the same cycle, with the same blocked buffers.
#[test]
fn deadlock_report_does_not_depend_on_threads() {
    let one = run(TORUS, "test", MINHOP_8X8_DEADLOCK);
    assert!(one.deadlock.is_some(), "the reference run must deadlock");
    same_on_any_threads(TORUS, "test", MINHOP_8X8_DEADLOCK);
}

/// Deadline-based QoS keeps one thread; `run.threads = 0` is an error naming the key; the
/// key is not part of the resolved config.
#[test]
fn deadline_qos_runs_on_one_thread_and_zero_is_an_error() {
    let r = run(
        &example("deadline-qos-advanced_2vc.toml"),
        "deadline-qos-advanced_2vc.toml",
        &["run.threads=4", "run.warmup=200", "run.measure=500"],
    );
    assert_eq!(r.performance.threads, 1);
    let e = run_err(TORUS, "test", &["run.threads=0"]);
    assert!(e.contains("run.threads"), "{e}");
    let a = run(TORUS, "test", &["run.threads=2", "run.measure=300"]);
    let b = run(TORUS, "test", &["run.measure=300"]);
    assert_eq!(a.config_hash, b.config_hash);
}

/// Unset, `run.threads` is every core (up to the cap a sweep sets) from 2048 simulated switch
/// ports on (a 32×32 torus has 5 120), and 1 below (a 4×4 torus has 80).
#[test]
fn default_threads_follow_fabric_size_and_cap() {
    use flitsim_sim::engine::lane::{default_threads, set_thread_cap, PARALLEL_FROM_PORTS};
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(default_threads(PARALLEL_FROM_PORTS - 1), 1);
    assert_eq!(default_threads(PARALLEL_FROM_PORTS), cores);
    set_thread_cap(1);
    assert_eq!(default_threads(PARALLEL_FROM_PORTS), 1);
    set_thread_cap(0);
    let r = run(
        TORUS,
        "test",
        &[
            "topology.sides=[32,32]",
            "traffic.load=0.05",
            "run.warmup=50",
            "run.measure=100",
        ],
    );
    assert_eq!(r.performance.threads as usize, cores.min(1024));
    let r = run(TORUS, "test", &["run.warmup=50", "run.measure=100"]);
    assert_eq!(r.performance.threads, 1);
}

/// The NICs send in their switches' lanes; what they hand back (messages sent, for the trace
/// replay) and what stays on the loop's thread (receiving under `nic.receive_time`, rate
/// control's dispatch) give the same results on any number of threads: a closed-loop trace
/// on a 4-ary 2-tree whose second messages wait for the first ones' arrival, and
/// rate-controlled flows across it with a receive processor.
#[test]
fn nics_in_lanes_with_trace_replay_rate_control_and_receive_time() {
    let dir = std::env::temp_dir().join(format!("flitsim-threads-nics-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 16 tasks: task i sends to i + 5; each receiver then sends on to i + 11, 3 ns after
    // the first message arrived (dependency kind 2: after the sender received `dep`); and
    // task i sends to i + 3, 2 ns after its first message left (kind 1: after it sent `dep`).
    let mut vef = String::from("VEF 16 48 1 0 0 FALSE\nC0");
    for i in 0..16 {
        vef += &format!(" {i}");
    }
    vef += "\n";
    for i in 0..16u32 {
        vef += &format!("{i} {i} {} {} 0 0 -1\n", (i + 5) % 16, 64 * (1 + i % 7));
    }
    for i in 0..16u32 {
        let (src, dst) = ((i + 5) % 16, (i + 11) % 16);
        vef += &format!("{} {src} {dst} {} 2 3 {i}\n", 16 + i, 64 * (2 + i % 5));
    }
    for i in 0..16u32 {
        vef += &format!(
            "{} {i} {} {} 1 2 {i}\n",
            32 + i,
            (i + 3) % 16,
            64 * (1 + i % 3)
        );
    }
    std::fs::write(dir.join("trace.vef"), vef).unwrap();
    let tree = "[topology]\nkind = \"kary_ntree\"\nk = 4\nn = 2\n";
    let replay = format!(
        "[units]\nflit_bytes = 64\ncycle_ns = 1\n{tree}\n[[traffic.class]]\nname = \"BE\"\n\
         message_flits = 16\n\n[traffic.trace]\npath = \"trace.vef\"\n\n[run]\nwarmup = 0\n\
         measure = 10\n"
    );
    let origin = dir.join("replay.toml").display().to_string();
    std::fs::write(&origin, &replay).unwrap();
    let one = run(&replay, &origin, &[]);
    let t = one.trace.as_ref().expect("trace results");
    assert!(t.complete && t.messages == 48, "{t:?}");
    same_on_any_threads(&replay, &origin, &[]);

    let mut flows = format!(
        "{tree}\n[nic]\nrate_control = true\ndispatch_time = 40\nreceive_time = 60\n\n\
         [[traffic.class]]\nname = \"DATA\"\nmessage_flits = 32\n\n[run]\nwarmup = 500\n\
         measure = 3000\n"
    );
    for (src, dst, idt) in [(0, 15, 50.0), (1, 15, 70.0), (5, 10, 40.0), (12, 3, 90.0)] {
        flows += &format!(
            "\n[[traffic.flow]]\nsrc = {src}\ndst = {dst}\nrate = 0.9\nprocess = \"cbr\"\n\
             stop = 3500\nidt = {idt}\n"
        );
    }
    same_on_any_threads(&flows, "flows.toml", &[]);
    std::fs::remove_dir_all(dir).ok();
}
