//! The bandwidth manager in a run (`[[traffic.flow]] reserve` / `best_effort` with
//! `nic.rate_control`): admitted flows get the IDT of their reservation and achieve it, a
//! best-effort flow gets the surplus, a request over a node's capacity is refused and named.
mod common;
use common::run;
use flitsim_sim::stats::BandwidthFlow;

/// One crossbar with 4 endpoints; 16-flit packets and T = 16 cycles, so B_max = MTU / T is
/// the link (1 flit/cycle). Every flow offers 0.95 flits/cycle (more than its share).
fn exp(flows: &[(u32, u32, Option<f64>)]) -> String {
    let mut s = r#"
[topology]
kind = "kary_ntree"
k = 4
n = 1

[nic]
rate_control = true
dispatch_time = 16

[[traffic.class]]
name = "BE"
message_flits = 16

[run]
warmup = 2000
measure = 20000
"#
    .to_string();
    for &(src, dst, reserve) in flows {
        s += &format!(
            "\n[[traffic.flow]]\nsrc = {src}\ndst = {dst}\nrate = 0.95\nprocess = \"cbr\"\nstop = 22000\n"
        );
        s += &match reserve {
            Some(r) => format!("reserve = {r}\n"),
            None => "best_effort = true\n".to_string(),
        };
    }
    s
}

fn bandwidth(text: &str) -> Vec<BandwidthFlow> {
    run(text, "bw.toml", &[])
        .bandwidth
        .expect("a bandwidth section")
}

fn near(got: Option<f64>, want: f64) -> bool {
    got.is_some_and(|g| (g - want).abs() <= 0.02 * want)
}

#[test]
fn premium_flows_achieve_their_reservations() {
    let b = bandwidth(&exp(&[(0, 1, Some(0.3)), (0, 2, Some(0.7))]));
    assert_eq!(b.len(), 2);
    assert!(b.iter().all(|v| v.admitted && v.refused_by.is_none()));
    assert!((b[0].idt.unwrap() - 16.0 / 0.3).abs() < 1e-9);
    assert!((b[1].idt.unwrap() - 16.0 / 0.7).abs() < 1e-9);
    assert!(near(b[0].accepted_rate, 0.3), "{b:?}");
    assert!(near(b[1].accepted_rate, 0.7), "{b:?}");
}

#[test]
fn a_best_effort_flow_gets_the_surplus() {
    let b = bandwidth(&exp(&[(0, 1, Some(0.4)), (0, 2, None)]));
    assert!(b[1].best_effort && b[1].admitted && b[1].requested.is_none());
    assert!((b[1].granted - 0.6).abs() < 1e-9);
    assert!((b[1].idt.unwrap() - 16.0 / 0.6).abs() < 1e-9);
    assert!(near(b[0].accepted_rate, 0.4), "{b:?}");
    assert!(near(b[1].accepted_rate, 0.6), "{b:?}");
}

#[test]
fn a_request_over_a_node_capacity_is_refused_and_named() {
    // Node 1 receives 0.6; its own request of 0.5 exceeds what it may send and receive (the
    // thesis's end-node contention), so it is refused; its flow sends nothing.
    let r = run(
        &exp(&[(0, 1, Some(0.6)), (1, 2, Some(0.5)), (3, 2, Some(0.3))]),
        "bw.toml",
        &[],
    );
    let b = r.bandwidth.unwrap();
    assert!(b[0].admitted && b[2].admitted);
    assert!(!b[1].admitted && b[1].idt.is_none() && b[1].granted == 0.0);
    let why = b[1].refused_by.as_ref().unwrap();
    assert_eq!(why.criterion, "source_node");
    assert_eq!(why.node, Some(1));
    assert!(why.message.contains("endpoint 1"), "{}", why.message);
    assert_eq!(b[1].accepted_rate, Some(0.0));
    assert_eq!(r.flows.unwrap()[1].generated_flits, 0);
    assert!(
        near(b[0].accepted_rate, 0.6) && near(b[2].accepted_rate, 0.3),
        "{b:?}"
    );
}

#[test]
fn bandwidth_keys_are_checked() {
    let text = exp(&[(0, 1, Some(0.3))]);
    let e = common::run_err(&text, "bw.toml", &["nic.rate_control=false"]);
    assert!(
        e.contains("traffic.flow[0].reserve") && e.contains("needs nic.rate_control"),
        "{e}"
    );
    let e = common::run_err(
        &text.replace("reserve = 0.3", "reserve = 0.3\nidt = 32"),
        "bw.toml",
        &[],
    );
    assert!(
        e.contains("traffic.flow[0].idt") && e.contains("must not be given"),
        "{e}"
    );
    let e = common::run_err(
        &text.replace("reserve = 0.3", "reserve = 1.5"),
        "bw.toml",
        &[],
    );
    assert!(
        e.contains("traffic.flow[0].reserve") && e.contains("B_max"),
        "{e}"
    );
    let e = common::run_err(&text.replace("dst = 1", "dst = 0"), "bw.toml", &[]);
    assert!(
        e.contains("traffic.flow[0].reserve") && e.contains("to itself"),
        "{e}"
    );
    let e = common::run_err(
        &text.replace("reserve = 0.3", "reserve = 0.3\nbest_effort = true"),
        "bw.toml",
        &[],
    );
    assert!(e.contains("not both"), "{e}");
}

#[test]
fn reserve_takes_a_rate_with_units() {
    // 1 flit = 16 B and a 1 GB/s link: 300 MB/s is 0.3 flits/cycle.
    let text = exp(&[(0, 1, Some(0.3))]).replace("reserve = 0.3", "reserve = \"300MB/s\"")
        + "\n[units]\nflit_bytes = 16\nlink_rate = \"1GB/s\"\n";
    let b = bandwidth(&text);
    assert_eq!(b[0].requested, Some(0.3));
}

#[test]
fn runs_without_managed_flows_have_no_bandwidth_section() {
    let r = run(
        &exp(&[]).replace("[run]", "[traffic]\nload = 0.1\n\n[run]"),
        "bw.toml",
        &[],
    );
    assert!(r.bandwidth.is_none());
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains("\"bandwidth\""));
}

/// Gulati §5.6, on one crossbar: a best-effort flow 0 → 1 at peak, then premium flows from
/// the same node of 40 % (cycles 20 000–40 000) and 20 % (30 000–50 000) of B_max, each
/// sending at its reservation, joining and leaving; the best-effort flow's share steps 1 → 0.6 → 0.4 → 0.8 → 1 (of which it uses
/// what it offers, 0.95).
#[test]
fn a_best_effort_flow_steps_down_and_back_up_as_premium_flows_come_and_go() {
    let text = r#"
[topology]
kind = "kary_ntree"
k = 4
n = 1

[nic]
rate_control = true
dispatch_time = 16

[bandwidth_manager]
update_delay = 100

[[traffic.class]]
name = "BE"
message_flits = 16

[[traffic.flow]]
src = 0
dst = 1
rate = 0.95
process = "cbr"
best_effort = true
stop = 60000

[[traffic.flow]]
src = 0
dst = 2
rate = 0.4
process = "cbr"
reserve = 0.4
start = 20000
stop = 40000

[[traffic.flow]]
src = 0
dst = 3
rate = 0.2
process = "cbr"
reserve = 0.2
start = 30000
stop = 50000

[run]
warmup = 0
measure = 60000
timeseries_bin = 1000
"#;
    let r = run(text, "dyn.toml", &[]);
    let b = r.bandwidth.as_ref().unwrap();
    // The best-effort flow's rate changes 4 times, each 100 cycles after the event.
    let steps: Vec<(u64, f64)> = b[0].changes.iter().map(|c| (c.cycle, c.granted)).collect();
    let want = [(20100, 0.6), (30100, 0.4), (40100, 0.8), (50100, 1.0)];
    assert_eq!(steps.len(), 4, "{steps:?}");
    for ((c, g), (wc, wg)) in steps.iter().zip(want) {
        assert_eq!(*c, wc);
        assert!((g - wg).abs() < 1e-9, "{steps:?}");
    }
    // The time series shows it: mean delivered rate of the best-effort flow per interval,
    // leaving out the bins around each change. At first it gets what it offers (0.95); at
    // the end its whole B_max, working off the backlog of the throttled intervals.
    let s = &r.timeseries.as_ref().unwrap().flows[0].flits;
    let mean = |a: usize, z: usize| s[a..z].iter().sum::<u64>() as f64 / ((z - a) * 1000) as f64;
    for ((a, z), rate) in [
        ((2, 19), 0.95),
        ((22, 29), 0.6),
        ((32, 39), 0.4),
        ((42, 49), 0.8),
        ((52, 59), 1.0),
    ] {
        let got = mean(a, z);
        assert!((got - rate).abs() < 0.02, "bins {a}..{z}: {got} vs {rate}");
    }
    // The premium flows get their reservations while they run.
    let p = &r.timeseries.as_ref().unwrap().flows[1].flits;
    let got = p[22..39].iter().sum::<u64>() as f64 / 17_000.0;
    assert!((got - 0.4).abs() < 0.02, "{got}");
}
