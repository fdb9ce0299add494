//! The Omni-Path QoS scenario's 8×8 torus (`examples/opa-qos-torus2d.toml`) under a long
//! overload: a scripted burst of Table 8's mix at about 1.27 flits/cycle per endpoint for
//! 40 000 cycles, then nothing. DOR with datelines and Table 7's SCs is deadlock-free
//! (`routing.verify`), so every flit must be delivered once the burst ends.
//!
//! Before session 18 the central buffers of the hierarchical switch were keyed by the VL a
//! packet leaves the switch on, and this burst deadlocked CL's, BE's and BK's VLs (14.0 M
//! flits stuck, the stall detector firing at cycle 71 286; crossbar switches drained the same
//! burst). It takes minutes (both DTable units) in a release
//! build, too long for the debug test run, so it is ignored there:
//!
//! ```sh
//! cargo test --release -p flitsim-app --test opa_overload -- --ignored
//! ```
//!
//! `tests/opa.rs` (`central_buffers_hold_packets_under_their_arrival_vl`) checks the keying
//! itself in every test run.
mod common;
use common::{example, network, parse};

#[test]
#[ignore = "1–7 minutes in a release build: cargo test --release -p flitsim-app --test opa_overload -- --ignored"]
fn overloaded_omni_path_torus_drains_after_the_burst() {
    // DTable's messages moved whole (as when the deadlock was found), and as packets that
    // cross the switches one by one (`atomic = "link"`, the default).
    for atomic in ["path", "link"] {
        drains_after_the_burst(atomic);
    }
}

fn drains_after_the_burst(atomic: &str) {
    let text = example("opa-qos-torus2d.toml");
    let atomic = format!("qos.dtable.atomic=\"{atomic}\"");
    // Small buffers fill in a few thousand cycles (the example's take tens of thousands).
    let mut cfg = parse(
        &text,
        "opa-qos-torus2d",
        &[
            // The example's fabric with 64-byte flits (the sizes below are in flits).
            "units.flit_bytes=64",
            &atomic,
            "qos.scheduler=\"dtable\"",
            "switch.shared_buffer={total_flits=256,min_per_vl=16,max_per_vl=256}",
            "switch.shared_output_buffer={total_flits=256,min_per_vl=16,max_per_vl=256}",
            "switch.opa.central_buffer_flits=512",
            "run.warmup=0",
            "run.measure=40000",
            "run.drain_max=400000",
            "run.per_port_stats=false",
        ],
    );
    cfg.traffic.load = Some(0.0);
    let (mut net, topo) = network(&cfg);
    let n = topo.num_endpoints() as u32;
    let sizes = [2u32, 4, 8, 16, 16];
    let mut x: u64 = 99;
    for t in (0..40_000u64).step_by(6) {
        for src in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mut dst = ((x >> 33) % n as u64) as u32;
            if dst == src {
                dst = (dst + 1) % n;
            }
            // Table 8's shares: VO 10 %, VI 30 %, CL 50 %, BE and BK 5 % each.
            let class = match (x >> 10) % 100 {
                0..=9 => 0,
                10..=39 => 1,
                40..=89 => 2,
                90..=94 => 3,
                _ => 4,
            };
            net.inject_message(t, src, dst, class as u8, sizes[class])
                .unwrap();
        }
    }
    let r = net.run().unwrap();
    assert!(
        r.deadlock.is_none(),
        "{atomic}: deadlock at cycle {:?}",
        r.deadlock.map(|d| d.cycle)
    );
    assert_eq!(r.flits.remaining, 0);
    assert_eq!(r.flits.delivered, r.flits.generated);
}
