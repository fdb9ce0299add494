//! QoS schedulers on a whole fabric (Cano-Cano et al. 2022, `shared/papers/000_942770a54f7010fd.txt`).
//! Every endpoint of a 4-ary 2-tree sends to one hot endpoint, whose link is the bottleneck;
//! class A sends 2-flit packets (MTU 2), class B 16-flit packets (MTU 16), both backlogged.
//! Switches are combined input/output queued with crossbar speedup 2, as Omni-Path switches
//! (with speedup 1 the crossbar into the output buffers runs at link rate, the output buffers
//! never fill, and the crossbar's round robin, not the port scheduler, decides the order).
//! The shares of accepted traffic then depend only on the schedulers:
//! - DTable (table built by the DTable methodology for shares 25 % / 75 %) delivers 25/75;
//! - RR (an SBT table with equal weights) serves packets alternately, so flits split 2:16;
//! - SBT weights count packets, so weights 25/75 give flits 25·2 : 75·16 — far from 25/75.
mod common;
use common::{hotspot_tree, run_err};
use flitsim_sim::RunResult;

/// The hot-spot tree on combined input/output-queued crossbars with speedup 2, with SBT
/// weights 25/75 for `qos.scheduler = "sbt"`.
fn qos() -> String {
    hotspot_tree("speedup = 2", "[qos.sbt]\nweights = [25, 75]")
}

fn run(sets: &[&str]) -> RunResult {
    common::run(&qos(), "qos", sets)
}

fn share_a(r: &RunResult) -> f64 {
    r.per_sl[0].share.unwrap()
}

#[test]
fn dtable_delivers_the_configured_shares_when_saturated() {
    let r = run(&[]);
    assert!(r.saturated);
    assert!(
        (share_a(&r) - 0.25).abs() <= 0.02,
        "DTable share of A: {:.4}",
        share_a(&r)
    );
    let r = run(&["qos.dtable.shares=[0.6,0.4]"]);
    assert!(
        (share_a(&r) - 0.6).abs() <= 0.02,
        "DTable share of A: {:.4}",
        share_a(&r)
    );
}

#[test]
fn round_robin_and_sbt_split_by_packets() {
    let rr = share_a(&run(&["qos.scheduler=\"rr\""]));
    assert!((rr - 2.0 / 18.0).abs() <= 0.02, "RR share of A: {rr:.4}");
    let sbt = share_a(&run(&["qos.scheduler=\"sbt\""]));
    let by_packets = 25.0 * 2.0 / (25.0 * 2.0 + 75.0 * 16.0);
    assert!(
        (sbt - by_packets).abs() <= 0.02,
        "SBT share of A: {sbt:.4}, expected {by_packets:.4}"
    );
}

#[test]
fn vl_arbitration_serves_the_high_priority_table_first() {
    // A's VL (0) in the high table, B's VL (1) in the low table, no limit: A gets all it
    // offers (1.0 of the 1.0 link), B only what A leaves.
    let r = run(&[
        "qos.scheduler=\"vl_arb\"",
        "qos.vlarb={high=[[0,64]], low=[[1,64]], limit_of_high_priority=255}",
    ]);
    assert!(
        share_a(&r) > 0.9,
        "A's share under strict high priority: {:.3}",
        share_a(&r)
    );
}

#[test]
fn qos_configuration_errors_name_the_key() {
    let err = |sets: &[&str]| run_err(&qos(), "qos.toml", sets);
    let e = err(&["qos.dtable.max_distance=[2]"]);
    assert!(e.contains("qos.dtable.max_distance"), "{e}");
    let e = err(&["qos.dtable.shares=[0.001,0.999]"]);
    assert!(e.contains("qos.dtable") && e.contains("\"A\""), "{e}");
    let e = err(&["qos.scheduler=\"sbt\"", "qos.sbt.weights=[1,2,3]"]);
    assert!(e.contains("qos.sbt.weights"), "{e}");
    let e = err(&[
        "qos.scheduler=\"vl_arb\"",
        "qos.vlarb={high=[[7,1]], low=[]}",
    ]);
    assert!(e.contains("VL 7"), "{e}");
}
