//! NIC rate control (`nic.rate_control`, `[[traffic.flow]] idt`): backlogged flows share in
//! the ratio of their rates 1/IDT (the thesis's §5.4 experiments on one crossbar), and
//! without rate control they do not.
mod common;
use common::run;

/// One crossbar with 4 endpoints; 16-flit packets and T = 16 cycles, so B_max = MTU / T is
/// the link (1 flit/cycle). Every flow offers 0.95 flits/cycle (more than its share) until
/// the window ends.
fn exp(rate_control: bool, flows: &[(u32, u32, f64)]) -> String {
    let mut s = format!(
        r#"
[topology]
kind = "kary_ntree"
k = 4
n = 1

[nic]
rate_control = {rate_control}
dispatch_time = 16

[[traffic.class]]
name = "BE"
message_flits = 16

[run]
warmup = 2000
measure = 20000
"#
    );
    for &(src, dst, idt_in_t) in flows {
        s += &format!("\n[[traffic.flow]]\nsrc = {src}\ndst = {dst}\nrate = 0.95\nprocess = \"cbr\"\nstop = 22000\n");
        if rate_control {
            s += &format!("idt = {}\n", idt_in_t * 16.0);
        }
    }
    s
}

fn shares(text: &str) -> Vec<f64> {
    let r = run(text, "rc.toml", &[]);
    r.flows
        .unwrap()
        .iter()
        .map(|f| f.accepted_rate.unwrap())
        .collect()
}

fn assert_ratio(got: &[f64], want: &[f64]) {
    let g: f64 = got.iter().sum();
    let w: f64 = want.iter().sum();
    for (a, b) in got.iter().zip(want) {
        assert!(
            (a / g - b / w).abs() < 0.02 * (b / w).max(0.1),
            "shares {got:?}, want the ratio {want:?}"
        );
    }
}

#[test]
fn flows_from_one_node_share_in_the_ratio_of_their_rates() {
    for (idts, ratio) in [
        (vec![2.0, 2.0], vec![1.0, 1.0]),
        (vec![10.0 / 3.0, 10.0 / 7.0], vec![3.0, 7.0]),
        (vec![2.0, 4.0, 4.0], vec![2.0, 1.0, 1.0]),
    ] {
        let flows: Vec<(u32, u32, f64)> = idts
            .iter()
            .enumerate()
            .map(|(i, &idt)| (0, 1 + i as u32, idt))
            .collect();
        let got = shares(&exp(true, &flows));
        assert_ratio(&got, &ratio);
        // Each flow gets B_max / IDT (the link is 1 flit/cycle).
        for (g, idt) in got.iter().zip(&idts) {
            assert!((g - 1.0 / idt).abs() < 0.02, "{got:?} vs 1/{idt}");
        }
    }
}

#[test]
fn two_senders_to_one_receiver_share_it_as_requested() {
    let got = shares(&exp(true, &[(1, 0, 10.0), (2, 0, 10.0 / 9.0)]));
    assert_ratio(&got, &[1.0, 9.0]);
}

#[test]
fn without_rate_control_the_flows_split_evenly() {
    let got = shares(&exp(false, &[(0, 1, 10.0 / 3.0), (0, 2, 10.0 / 7.0)]));
    assert_ratio(&got, &[1.0, 1.0]);
    let got = shares(&exp(false, &[(1, 0, 10.0), (2, 0, 10.0 / 9.0)]));
    assert_ratio(&got, &[1.0, 1.0]);
}

#[test]
fn rate_control_errors_name_the_key() {
    let e = common::run_err(
        &exp(false, &[(0, 1, 1.0)]).replace("stop = 22000\n", "stop = 22000\nidt = 32\n"),
        "rc.toml",
        &[],
    );
    assert!(
        e.contains("traffic.flow[0].idt") && e.contains("needs nic.rate_control"),
        "{e}"
    );
    let e = common::run_err(&exp(true, &[(0, 1, 0.5)]), "rc.toml", &[]);
    assert!(e.contains("must be at least nic.dispatch_time = 16"), "{e}");
    let e = common::run_err(
        &exp(true, &[(0, 1, 1.0)]),
        "rc.toml",
        &["nic.dispatch_time=0"],
    );
    assert!(e.contains("nic.dispatch_time"), "{e}");
}

#[test]
fn a_nic_without_rate_control_is_unchanged() {
    // The example of the flows test, with rate control off explicitly: the same results.
    let a = run(&exp(false, &[(0, 1, 1.0)]), "rc.toml", &[]);
    let b = run(
        &exp(false, &[(0, 1, 1.0)]).replace("rate_control = false\n", ""),
        "rc.toml",
        &[],
    );
    assert_eq!(a.flows, b.flows);
}
