//! `routing.forwarding`: switches that evaluate the routing engine's rule give the same
//! results as switches reading stored tables; `auto` takes the rule where nothing needs the
//! tables; keys that need the tables refuse `computed` by name.
mod common;
use common::{example, run, run_err, short_with, without_performance};

/// Runs `text` with `sets` on stored tables and on the rule: same results, and each run says
/// which it used.
fn same_by_rule(text: &str, origin: &str, sets: &[&str]) {
    let with = |mode: &'static str| {
        let mut all = short_with(&[]);
        all.extend_from_slice(sets);
        all.push(mode);
        run(text, origin, &all)
    };
    let tables = with("routing.forwarding=\"tables\"");
    let computed = with("routing.forwarding=\"computed\"");
    // Source routes are walked once per pair (from the tables or the rule), then carried.
    let source = sets.contains(&"switch.source_routing=true");
    let (a, b) = if source {
        ("source", "source")
    } else {
        ("tables", "computed")
    };
    assert_eq!(tables.performance.forwarding, a, "{origin} {sets:?}");
    assert_eq!(computed.performance.forwarding, b, "{origin} {sets:?}");
    assert!(tables.performance.flit_hops > 0, "{origin} {sets:?}");
    assert!(
        without_performance(&tables) == without_performance(&computed),
        "{origin} {sets:?}: the rule gives other results than the tables"
    );
}

#[test]
fn dor_by_rule_gives_the_results_of_dor_tables() {
    let t = example("torus-8x8-uniform.toml");
    same_by_rule(&t, "torus", &["traffic.load=0.6"]);
    // Four VLs (two dateline lanes), two classes with their own MTUs.
    same_by_rule(
        &t,
        "torus, classes",
        &[
            "routing.vls=8",
            "traffic.load=0.7",
            "traffic.class=[{name=\"hi\",share=1,message_flits=8},{name=\"lo\",share=3,message_flits=32,mtu_flits=16}]",
        ],
    );
    // A mesh with two endpoints per switch and trunks of two links, transpose traffic.
    same_by_rule(
        &t,
        "mesh",
        &[
            "topology={kind=\"mesh\",sides=[4,3],endpoints_per_switch=2,trunk=2}",
            "traffic.load=0.4",
        ],
    );
    // Source routes are computed from the rule.
    same_by_rule(&t, "source routes", &["switch.source_routing=true"]);
    // The channel dependency verdict (in the results as `cdg`) is the same from the rule.
    same_by_rule(
        &t,
        "verified",
        &["routing.verify=true", "routing.require_deadlock_free=true"],
    );
}

#[test]
fn dmodk_by_rule_gives_the_results_of_dmodk_tables() {
    let t = example("fattree-4ary3-uniform.toml");
    same_by_rule(&t, "4-ary 3-tree", &["traffic.load=0.8"]);
    same_by_rule(
        &t,
        "3-ary 3-tree, hot spot",
        &[
            "topology.k=3",
            "traffic.pattern=\"hotspot\"",
            "traffic.hotspot={endpoints=2,fraction=0.2}",
        ],
    );
    // The Omni-Path switch model reads the same ports.
    let opa = example("opa-qos-tree8ary3.toml");
    let mut sets = vec!["run.warmup=200", "run.measure=500"];
    sets.push("routing.forwarding=\"computed\"");
    let e = run_err(&opa, "opa", &sets);
    assert!(e.contains("routing.forwarding") && e.contains("qos"), "{e}");
}

#[test]
fn auto_takes_the_rule_where_nothing_needs_the_tables() {
    let t = example("torus-8x8-uniform.toml");
    let tiny = [
        "run.warmup=5",
        "run.measure=20",
        "run.drain_max=50",
        "traffic.load=0.01",
    ];
    let with = |extra: &[&'static str]| {
        let mut all = tiny.to_vec();
        all.extend_from_slice(extra);
        run(&t, "8x8", &all).performance.forwarding
    };
    assert_eq!(with(&[]), "computed");
    assert_eq!(with(&["routing.lmc=1"]), "tables");
    // The channel dependency check reads the rule as it reads tables.
    assert_eq!(with(&["routing.verify=true"]), "computed");
    assert_eq!(with(&["routing.engine=\"minhop\""]), "tables");
    // 128×128: 768 MiB of tables, which are not built.
    let r = run(
        &t,
        "128x128",
        &[
            &tiny[..],
            &["topology.sides=[128,128]", "run.per_port_stats=false"],
        ]
        .concat(),
    );
    assert_eq!(r.performance.forwarding, "computed");
    assert!(
        r.performance.build_seconds < 5.0,
        "{}",
        r.performance.build_seconds
    );
}

#[test]
fn computed_forwarding_is_refused_where_tables_are_needed() {
    let t = example("torus-8x8-uniform.toml");
    let computed = "routing.forwarding=\"computed\"";
    for (key, set) in [
        ("routing.lmc", "routing.lmc=1"),
        ("routing.vl_assignment", "routing.vl_assignment=\"vn\""),
    ] {
        let e = run_err(&t, "torus", &[computed, set]);
        assert!(
            e.contains("key `routing.forwarding`") && e.contains(key) && e.contains("\"tables\""),
            "{key}: {e}"
        );
    }
    let e = run_err(&t, "torus", &[computed, "routing.engine=\"minhop\""]);
    assert!(
        e.contains("key `routing.forwarding`") && e.contains("no routing rule"),
        "{e}"
    );
    let e = run_err(&t, "torus", &["routing.forwarding=\"rule\""]);
    assert!(e.contains("routing.forwarding"), "{e}");
}
