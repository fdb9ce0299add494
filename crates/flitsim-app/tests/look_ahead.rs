//! Prefetching and looking ahead (issue 19): on fabrics whose input queues outgrow the cache,
//! the switch phase asks ahead for the lines it will read (`Network::look_ahead`,
//! `look_further`). Those requests change no state, so a run must give the same results with
//! them as without. The fabrics of the tests are far too small to turn them on, so a test hook
//! (process-wide: hence a test binary of its own) forces them, and each run, on one and on
//! three threads, must give the results of the same run without them, byte for byte — which
//! also runs every look-ahead path, lanes' edges included, where an index out of range would
//! panic.
mod common;
use common::{
    example, opa_case, parse, run, same_in_shuffled_orders, short_with, without_performance,
    MINHOP_8X8_DEADLOCK, OPA_QOS_TORUS, OPA_TORUS_SHORT, TORUS, TORUS_VARIANTS,
};
use flitsim_sim::engine::lane::force_look_ahead;

/// The results of `sets` on `threads` threads, with the look-ahead forced or not.
fn results(text: &str, origin: &str, sets: &[&str], threads: usize, forced: bool) -> String {
    force_look_ahead(forced);
    let n = format!("run.threads={threads}");
    let mut all: Vec<&str> = sets.to_vec();
    all.push(&n);
    let json = without_performance(&run(text, origin, &all));
    force_look_ahead(false);
    json
}

fn same_with_and_without(text: &str, origin: &str, sets: &[&str]) {
    let plain = results(text, origin, sets, 1, false);
    for threads in [1, 3] {
        assert!(
            results(text, origin, sets, threads, true) == plain,
            "{origin} {sets:?}: looking ahead on {threads} threads changes the results"
        );
    }
}

#[test]
fn looking_ahead_does_not_change_results() {
    let torus = example("torus-8x8-uniform.toml");
    for extra in TORUS_VARIANTS {
        same_with_and_without(&torus, "torus-8x8-uniform.toml", &short_with(extra));
    }
    same_with_and_without(
        &example("fattree-4ary3-uniform.toml"),
        "fattree-4ary3-uniform.toml",
        &short_with(&["traffic.load=0.8"]),
    );
    same_with_and_without(
        &example("opa-qos-torus2d.toml"),
        "opa-qos-torus2d.toml",
        OPA_TORUS_SHORT,
    );
    assert!(run(TORUS, "test", MINHOP_8X8_DEADLOCK).deadlock.is_some());
    same_with_and_without(TORUS, "test", MINHOP_8X8_DEADLOCK);
    shuffled_order_with_look_ahead();
    random_omni_path_fabrics_with_look_ahead();
}

/// Random hierarchical Omni-Path fabrics (those of `tests/opa_random.rs`): the output-buffer
/// requests of the look-ahead and of the delivery, on MPorts and central crossbars of every
/// size, change no result on one or three threads.
/// (Called from the test above: the hook is process-wide, and tests run in parallel.)
fn random_omni_path_fabrics_with_look_ahead() {
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new(Config {
        cases: 6,
        ..Config::default()
    });
    runner
        .run(&opa_case(), |case| {
            let sets = case.sets();
            let all: Vec<&str> = sets.iter().map(String::as_str).collect();
            same_with_and_without(OPA_QOS_TORUS, "opa_random", &all);
            Ok(())
        })
        .unwrap();
}

/// A shuffled visiting order (the engine tests' check that the order of visits within a cycle
/// does not matter) with the look-ahead on: the look-ahead then asks about switches by index,
/// among them sleeping switches and ones that went to sleep earlier in the same cycle, whose
/// countdowns it must read without overflowing (debug builds check), and the results stay
/// those of the plain run.
/// (Called from the test above: the hook is process-wide, and tests run in parallel.)
fn shuffled_order_with_look_ahead() {
    let torus = example("torus-8x8-uniform.toml");
    let cfg = parse(
        &torus,
        "torus-8x8-uniform.toml",
        &short_with(&["traffic.load=0.3", "run.check_invariants=16"]),
    );
    // (The run in index order with the look-ahead gives the plain run's results: above.)
    force_look_ahead(true);
    same_in_shuffled_orders(&cfg, "torus-8x8-uniform.toml with the look-ahead");
    force_look_ahead(false);
}
