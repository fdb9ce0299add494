//! Deadline-based QoS (Martínez et al. 2008): host deadline stamping, the switch VL
//! disciplines, time to deadline under clock skew, discards and the five architectures, on a
//! small fabric whose runs take a fraction of a second.
mod common;
use common::{run, run_err};
use flitsim_sim::RunResult;

/// One 8-port crossbar (8 endpoints), 64-byte flits on 8 Gb/s links; control, video (flows
/// stamped for a 50 µs frame latency, frames every 100 µs) and two best-effort classes of 20 % load each, with
/// best-effort bandwidths 2:1. `{arch}` is `qos.architecture`.
fn scenario(arch: &str, extra: &str) -> String {
    format!(
        r#"
[units]
flit_bytes = 64
link_rate = "8Gb/s"

[topology]
kind = "kary_ntree"
k = 8
n = 1

[routing]
vls = 4

[switch]
vl_buffer_flits = "8KB"

[nic]
buffer_flits = "8KB"

[qos]
architecture = "{arch}"
eligibility_factor = "10us"
{extra}

[[qos.class]]
stamp = "link"
regulated = true

[[qos.class]]
stamp = "frame"
frame_latency = "50us"
regulated = true
eligible = true
bucket_rate = "1Gb/s"
bucket_depth = "64KB"

[[qos.class]]
stamp = "rate"
bandwidth = "100MB/s"
bucket_rate = "2Gb/s"
bucket_depth = "64KB"

[[qos.class]]
stamp = "rate"
bandwidth = "50MB/s"

[[traffic.class]]
name = "control"
rate = "1.6Gb/s"
mtu_flits = "2KB"
size = {{ dist = "uniform", min = "128B", max = "2KB" }}

[[traffic.class]]
name = "video"
rate = 0
mtu_flits = "2KB"

[[traffic.flow_set]]
kind = "random"
dests = 4
class = "video"
rate = "400Mb/s"
process = {{ kind = "video", frame_period = "100us", min = "1KB", max = "32KB" }}

[[traffic.class]]
name = "besteffort"
rate = "2.4Gb/s"
mtu_flits = "2KB"
size = {{ dist = "pareto", alpha = 1.5, min = "128B", max = "32KB" }}
process = {{ kind = "onoff", on_alpha = 1.4, off_alpha = 1.4, on_mean = "5us", off_mean = "5us" }}

[[traffic.class]]
name = "background"
rate = "2.4Gb/s"
mtu_flits = "2KB"
size = {{ dist = "pareto", alpha = 1.5, min = "128B", max = "32KB" }}
process = {{ kind = "onoff", on_alpha = 1.4, off_alpha = 1.4, on_mean = "5us", off_mean = "5us" }}

[run]
warmup = "200us"
measure = "1ms"
"#
    )
}

fn class<'a>(r: &'a RunResult, name: &str) -> &'a flitsim_sim::stats::ClassResult {
    r.per_sl.iter().find(|c| c.name == name).unwrap()
}

/// The figures that must not depend on clocks: per-class results, flows and deadline counts.
fn figures(r: &RunResult) -> String {
    let mut d = r.deadline.clone().unwrap();
    d.max_ttd_ns = None;
    serde_json::to_string(&(&r.per_sl, &r.flows, &d, r.cycles.total)).unwrap()
}

#[test]
fn edf_video_frames_arrive_at_their_configured_latency() {
    let r = run(&scenario("advanced_2vc", ""), "dl.toml", &[]);
    let v = class(&r, "video");
    let mean = v.message_latency.mean.unwrap();
    // 50 µs = 781.25 cycles of 64 ns: frames are smoothed to finish near their deadline.
    assert!(
        (mean - 781.0).abs() < 0.1 * 781.0,
        "mean frame latency {mean} cycles, want ≈ 781"
    );
    // Control latency stays within a few packet times.
    let c = class(&r, "control").message_latency.mean.unwrap();
    assert!(c < 200.0, "control latency {c}");
    // The two best-effort classes share one VC and still get 2:1 (their stamping bandwidths).
    let be = class(&r, "besteffort").accepted_load.unwrap();
    let bg = class(&r, "background").accepted_load.unwrap();
    assert!(be > 1.5 * bg, "besteffort {be} vs background {bg}");
    let d = r.deadline.as_ref().unwrap();
    assert_eq!(d.architecture.as_deref(), Some("advanced_2vc"));
    assert!(d.max_ttd.unwrap() > 0 && d.max_ttd_ns.is_some());
}

#[test]
fn results_do_not_depend_on_clock_skew() {
    for arch in ["simple_2vc", "advanced_2vc", "ideal"] {
        let base = run(&scenario(arch, ""), "dl.toml", &[]);
        let skewed = run(&scenario(arch, "clock_skew = \"1ms\""), "dl.toml", &[]);
        assert_eq!(figures(&base), figures(&skewed), "{arch}");
    }
}

#[test]
fn take_over_queues_cut_order_errors_and_heaps_remove_them() {
    // The regulated VC: VLs 0 and 1 (two VCs over routing.vls = 4, two lanes each).
    let errors = |arch: &str| {
        let d = run(&scenario(arch, ""), "dl.toml", &[]).deadline.unwrap();
        assert_eq!(d.order_errors, d.order_errors_by_vl.iter().sum::<u64>());
        d.order_errors_by_vl[..2].iter().sum::<u64>()
    };
    let (simple, advanced, ideal) = (
        errors("simple_2vc"),
        errors("advanced_2vc"),
        errors("ideal"),
    );
    assert!(simple > 0, "the scenario makes order errors with FIFO VCs");
    assert!(
        2 * advanced < simple,
        "advanced {advanced} vs simple {simple}"
    );
    assert_eq!(ideal, 0);
}

#[test]
fn traditional_two_vcs_cannot_tell_best_effort_classes_apart_but_edf_can() {
    let r = run(&scenario("traditional_2vc", ""), "dl.toml", &[]);
    let be = class(&r, "besteffort").accepted_load.unwrap();
    let bg = class(&r, "background").accepted_load.unwrap();
    assert!(
        (be / bg - 1.0).abs() < 0.25,
        "besteffort {be} vs background {bg}"
    );
    // No deadlines: no TTD is reported.
    assert_eq!(r.deadline.unwrap().max_ttd, None);
}

#[test]
fn host_discards_packets_that_wait_too_long() {
    // Overload the unregulated VC so best-effort messages wait; a 50 µs limit discards some.
    let text = scenario("simple_2vc", "discard_after = \"50us\"");
    let text = text.replacen("rate = \"2.4Gb/s\"", "rate = \"3.9Gb/s\"", 2);
    let r = run(&text, "dl.toml", &[]);
    let d = r.deadline.unwrap();
    let bg = d
        .discarded
        .iter()
        .find(|c| c.class == "background")
        .unwrap();
    assert!(bg.packets > 0 && bg.flits >= bg.packets, "{d:?}");
    let ctl = d.discarded.iter().find(|c| c.class == "control").unwrap();
    assert_eq!(ctl.packets, 0);
    // The run still ends and accounts for what it discarded.
    assert!(r.cycles.total < 1_000_000);
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let a = run(&scenario("advanced_2vc", ""), "dl.toml", &[]);
    let b = run(&scenario("advanced_2vc", ""), "dl.toml", &[]);
    assert_eq!(figures(&a), figures(&b));
}

#[test]
fn deadline_keys_are_checked_with_their_names() {
    let text = scenario("advanced_2vc", "");
    let e = run_err(&text, "dl.toml", &["qos.scheduler=\"dtable\""]);
    assert!(
        e.contains("qos.scheduler") && e.contains("qos.architecture"),
        "{e}"
    );
    let e = run_err(&text, "dl.toml", &["routing.vls=1"]);
    assert!(e.contains("routing.vls = 1") && e.contains("2 VLs"), "{e}");
    let e = run_err(&text, "dl.toml", &["switch.vl_discipline=\"heap\""]);
    assert!(e.contains("switch.vl_discipline"), "{e}");
    let no_latency = text.replace("frame_latency = \"50us\"\n", "");
    let e = run_err(&no_latency, "dl.toml", &[]);
    assert!(e.contains("qos.class[1].frame_latency"), "{e}");
    let e = run_err(&text, "dl.toml", &["qos.admission_limit=1.5"]);
    assert!(
        e.contains("qos.admission_limit") && e.contains("(0, 1]"),
        "{e}"
    );
    let e = run_err(&text, "dl.toml", &["nic.rate_control=true"]);
    assert!(
        e.contains("nic.rate_control") && e.contains("deadline"),
        "{e}"
    );
    let e = run_err(&text, "dl.toml", &["qos.architecture=\"edf\""]);
    assert!(e.contains("qos.architecture"), "{e}");
}

#[test]
fn user_built_heap_vls_with_deadline_classes() {
    // No architecture: [[qos.class]] turns on EDF hosts, `switch.vl_discipline` orders VLs.
    let text = scenario("advanced_2vc", "")
        .replace("architecture = \"advanced_2vc\"\n", "")
        .replace("[switch]\n", "[switch]\nvl_discipline = \"heap\"\n");
    let r = run(&text, "dl.toml", &[]);
    let d = r.deadline.unwrap();
    assert_eq!(d.architecture, None);
    assert_eq!(d.order_errors, 0);
    assert!(d.max_ttd.is_some());
}
