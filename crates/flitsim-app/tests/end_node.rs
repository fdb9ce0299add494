//! End-node contention (`nic.receive_time`): a rate-controlled NIC whose one processor spends
//! T = `nic.dispatch_time` per packet sent and R = `nic.receive_time` per packet received,
//! receiving first. What a node receives then lowers what it can send (Gulati's thesis, §5.3,
//! Figure 5.4), and the flows a node sends share what is left in the ratio of their rates
//! (§5.4.3, Figure 5.8); without `receive_time` the NIC is full duplex and nothing is lost.
//!
//! Scale (the thesis's LANai 4.3 on 160 MB/s Myrinet, as in `examples/myrinet-end-node.toml`):
//! 64-flit packets (4 KB of 64-byte flits), one flit per cycle per link (a cycle is 400 ns),
//! T = 125 cycles (50 µs: a flow alone gets 64/125 = 0.512 flits/cycle = 81.9 MB/s, the
//! thesis's 81.8) and R = 128 cycles (51.2 µs), calibrated on the one point of Figure 5.4 the
//! thesis quotes (docs/validation/rate-control.md).
mod common;
use common::{run, run_err};

/// Packet size, flits.
const MTU: f64 = 64.0;
/// Processor cycles per dispatch (T) and per received packet (R).
const T: f64 = 125.0;
const R: u64 = 128;

const WARMUP: u64 = 5_000;
const MEASURE: u64 = 50_000;

/// One crossbar with 4 endpoints; every flow `(src, dst, idt)` offers 0.95 flits/cycle (more
/// than any share) until the window ends.
fn exp(receive_time: u64, flows: &[(u32, u32, f64)]) -> String {
    let mut s = format!(
        r#"
[topology]
kind = "kary_ntree"
k = 4
n = 1

[nic]
rate_control = true
dispatch_time = {T}
receive_time = {receive_time}

[[traffic.class]]
name = "DATA"
message_flits = 64

[run]
warmup = {WARMUP}
measure = {MEASURE}
check_invariants = 64
"#
    );
    for &(src, dst, idt) in flows {
        s += &format!(
            "\n[[traffic.flow]]\nsrc = {src}\ndst = {dst}\nrate = 0.95\nprocess = \"cbr\"\n\
             stop = {}\nidt = {idt}\n",
            WARMUP + MEASURE
        );
    }
    s
}

/// Each flow's accepted rate in the window, flits/cycle.
fn rates(text: &str) -> Vec<f64> {
    let r = run(text, "end-node.toml", &[]);
    r.flows
        .unwrap()
        .iter()
        .map(|f| f.accepted_rate.unwrap())
        .collect()
}

/// The most a node can send, flits/cycle, while it receives `lambda` packets per cycle: the
/// processor is never idle, so λ·R + (dispatches per cycle)·T = 1.
fn out_max(lambda: f64) -> f64 {
    (1.0 - lambda * R as f64).max(0.0) / T * MTU
}

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs().max(1e-9)
}

/// Figure 5.4: flow 1 from A to B at a swept IDT, flow 2 from B to C unregulated (IDT = T).
/// Flow 1 gets its rate as if flow 2 did not exist; flow 2 gets what B's processor has left,
/// within 2 % of the closed form.
#[test]
fn an_incoming_flow_lowers_what_a_node_can_send() {
    for idt_in in [
        150.0,
        200.0,
        250.0,
        312.5,
        1250.0 / 3.0,
        625.0,
        1250.0,
        2500.0,
    ] {
        let got = rates(&exp(R, &[(0, 1, idt_in), (1, 2, T)]));
        let lambda = 1.0 / idt_in;
        assert!(
            close(got[0], MTU * lambda, 0.02),
            "IDT {idt_in}: incoming {} vs {}",
            got[0],
            MTU * lambda
        );
        assert!(
            close(got[1], out_max(lambda), 0.02),
            "IDT {idt_in}: outgoing {} vs the closed form {}",
            got[1],
            out_max(lambda)
        );
    }
}

/// Without `receive_time` (the full-duplex NIC of before) the outgoing flow keeps its B_max
/// whatever B receives.
#[test]
fn without_receive_time_receiving_costs_nothing() {
    for idt_in in [150.0, 625.0] {
        let got = rates(&exp(0, &[(0, 1, idt_in), (1, 2, T)]));
        assert!(close(got[0], MTU / idt_in, 0.02), "{got:?}");
        assert!(close(got[1], MTU / T, 0.02), "{got:?}");
    }
}

/// Packets arriving faster than the processor can take them (IDT T < R): the receiver's
/// credits hold the sender back to one packet per R, B sends nothing (receiving goes first),
/// and every flit generated is delivered.
#[test]
fn a_receiver_that_cannot_keep_up_backpressures_without_loss() {
    let got = rates(&exp(R, &[(0, 1, T), (1, 2, T)]));
    assert!(close(got[0], MTU / R as f64, 0.02), "{got:?}");
    assert!(got[1] < 0.005, "{got:?}");
    // A short burst that must drain: nothing lost, nothing left behind.
    let text = exp(R, &[(0, 1, T), (1, 2, T)])
        .replace(&format!("stop = {}", WARMUP + MEASURE), "stop = 3000")
        .replace(&format!("measure = {MEASURE}"), "measure = 1000")
        .replace(&format!("warmup = {WARMUP}"), "warmup = 2000");
    let r = run(&text, "end-node.toml", &[]);
    assert!(r.drained, "the run did not drain");
    assert!(r.deadlock.is_none());
    for f in r.flows.unwrap() {
        assert!(f.generated_flits > 0);
        assert_eq!(f.generated_flits, f.delivered_flits, "flow {}", f.id);
    }
}

/// Figure 5.8: node 1 receives from node 0 and sends to nodes 2 and 3; its two send flows
/// share what the incoming flow leaves in the ratio of their rates. Without the coupling they
/// do not lose that capacity.
#[test]
fn send_flows_share_what_the_incoming_flow_leaves() {
    let idt_in = 625.0; // the thesis's IDT 500 RTC units (250 µs)
    let left = out_max(1.0 / idt_in);
    for (a, b, ratio) in [
        (312.5, 312.5, 1.0),           // the thesis's (250, 250) RTC units
        (T, T, 1.0),                   // both unregulated
        (4.0 * T / 3.0, 4.0 * T, 3.0), // 3 : 1
    ] {
        let flows = [(0, 1, idt_in), (1, 2, a), (1, 3, b)];
        let got = rates(&exp(R, &flows));
        assert!(close(got[0], MTU / idt_in, 0.02), "{got:?}");
        let want = [left * ratio / (ratio + 1.0), left / (ratio + 1.0)];
        for (g, w) in got[1..].iter().zip(want) {
            assert!(
                close(*g, w, 0.02),
                "IDTs ({a}, {b}): {got:?}, want {want:?}"
            );
        }
        assert!(close(got[1] / got[2], ratio, 0.02), "{got:?}");
        // Full duplex: each send flow gets its own rate, up to B_max between them.
        let free = rates(&exp(0, &flows));
        let (ra, rb) = (MTU / a, MTU / b);
        let scale = (MTU / T / (ra + rb)).min(1.0);
        assert!(close(free[1], ra * scale, 0.02), "{free:?}");
        assert!(close(free[2], rb * scale, 0.02), "{free:?}");
        assert!(free[1] + free[2] > got[1] + got[2], "{free:?} vs {got:?}");
    }
}

#[test]
fn receive_time_errors_name_the_key() {
    let good = exp(R, &[(0, 1, T)]);
    let e = run_err(
        &good.replace("rate_control = true", "rate_control = false"),
        "end-node.toml",
        &[],
    );
    assert!(
        e.contains("nic.receive_time") && e.contains("needs nic.rate_control"),
        "{e}"
    );
    for bad in ["-1", "\"abc\"", "2.5"] {
        let e = run_err(
            &good.replace(
                &format!("receive_time = {R}"),
                &format!("receive_time = {bad}"),
            ),
            "end-node.toml",
            &[],
        );
        assert!(e.contains("nic.receive_time"), "{bad}: {e}");
    }
    // With [units] the key takes a time; anything else names it.
    let units = format!("[units]\nflit_bytes = 64\nlink_rate = \"1.28Gb/s\"\n{good}");
    let r = run(
        &units.replace(&format!("receive_time = {R}"), "receive_time = \"51.2us\""),
        "end-node.toml",
        &[],
    );
    assert!(r.flows.is_some());
    let e = run_err(
        &units.replace(&format!("receive_time = {R}"), "receive_time = \"2MB\""),
        "end-node.toml",
        &[],
    );
    assert!(e.contains("nic.receive_time"), "{e}");
}
