//! Lanes re-cut in the middle of a run (issue 19 item 2): with several threads, the switch
//! phase moves its lanes' boundaries every so often to balance their time, handing the link
//! events in flight to the lanes that now own their ports. The cuts depend on timing, so the
//! results must not depend on them. Here the boundaries move to pseudo-random switches every
//! three cycles (a test hook, process-wide: hence a test binary of its own), and every run
//! must still give the one-thread results, byte for byte.
mod common;
use common::{
    example, run, same_on_threads, short_with, MINHOP_8X8_DEADLOCK, OPA_TORUS_SHORT, TORUS,
    TORUS_VARIANTS,
};
use flitsim_sim::engine::lane::force_recut_every;

#[test]
fn results_do_not_depend_on_where_the_lanes_are_cut() {
    force_recut_every(3);
    let torus = example("torus-8x8-uniform.toml");
    // Links of 3 cycles as well: events several cycles ahead move between lanes.
    for extra in TORUS_VARIANTS
        .iter()
        .chain([&["traffic.load=0.6", "topology.link_latency=3"][..]].iter())
    {
        same_on_threads(
            &torus,
            "torus-8x8-uniform.toml",
            &short_with(extra),
            &[1, 2, 5],
        );
    }
    same_on_threads(
        &example("fattree-4ary3-uniform.toml"),
        "fattree-4ary3-uniform.toml",
        &short_with(&["traffic.load=0.8"]),
        &[1, 3],
    );
    same_on_threads(
        &example("opa-qos-torus2d.toml"),
        "opa-qos-torus2d.toml",
        OPA_TORUS_SHORT,
        &[1, 3],
    );
    assert!(run(TORUS, "test", MINHOP_8X8_DEADLOCK).deadlock.is_some());
    same_on_threads(TORUS, "test", MINHOP_8X8_DEADLOCK, &[1, 4]);
}
