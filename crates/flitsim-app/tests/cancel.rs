//! Cancellation (`flitsim_topology::cancel`, Ctrl-C in the Python layer): the engine, the
//! routing engines, the CDG check and the reports stop with a `Cancelled` error. The flag is
//! process-wide, so these tests live in their own test binary and run one at a time.
mod common;
use flitsim_app::{build_fabric, build_topology, report, ExperimentConfig};
use flitsim_sim::{Network, SimError};
use flitsim_topology::cancel;
use std::sync::Mutex;

/// Overrides that make `common::TORUS` a run of hours: the tests stop it.
const LONG: &[&str] = &["run.warmup=1000", "run.measure=1000000000"];

/// Serialises the tests of this binary, and clears the flag however a test ends.
static FLAG: Mutex<()> = Mutex::new(());

struct Requested(#[allow(dead_code)] std::sync::MutexGuard<'static, ()>);

impl Requested {
    fn new() -> Self {
        let guard = FLAG.lock().unwrap_or_else(|e| e.into_inner());
        cancel::request();
        Requested(guard)
    }
}

impl Drop for Requested {
    fn drop(&mut self) {
        cancel::clear();
    }
}

#[test]
fn the_engine_returns_cancelled_when_the_flag_is_set() {
    // Built while holding the lock, so no other test's request stops the routing.
    let _serial = FLAG.lock().unwrap_or_else(|e| e.into_inner());
    let cfg = ExperimentConfig::parse(common::TORUS, "t", &common::sets(LONG), None).unwrap();
    let topo = build_topology(&cfg, None).unwrap();
    let (fabric, _) = build_fabric(&cfg, &topo).unwrap();
    let mut net = Network::build(&cfg.params(), &topo, fabric).unwrap();
    cancel::request();
    let e = net.run().unwrap_err();
    cancel::clear();
    assert!(matches!(e, SimError::Cancelled(_)), "{e}");
    assert_eq!(e.to_string(), "interrupted");
}

#[test]
fn a_cancel_request_from_another_thread_stops_a_billion_cycle_run_promptly() {
    let _serial = FLAG.lock().unwrap_or_else(|e| e.into_inner());
    let cfg = ExperimentConfig::parse(common::TORUS, "t", &common::sets(LONG), None).unwrap();
    let topo = build_topology(&cfg, None).unwrap();
    let (fabric, _) = build_fabric(&cfg, &topo).unwrap();
    let mut net = Network::build(&cfg.params(), &topo, fabric).unwrap();
    let started = std::time::Instant::now();
    let e = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(200));
            cancel::request();
        });
        net.run().unwrap_err()
    });
    cancel::clear();
    assert!(matches!(e, SimError::Cancelled(_)), "{e}");
    assert!(
        started.elapsed().as_secs_f64() < 5.0,
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn routing_cdg_and_reports_return_cancelled() {
    let _flag = Requested::new();
    for engine in ["minhop", "updn", "sssp", "dfsssp", "lash", "dor", "nue"] {
        let e = report::route_json("torus:6x6", engine, 8, 1, None, None).unwrap_err();
        assert_eq!(e.to_string(), "interrupted", "{engine}");
    }
    let e = report::topo_info_json("torus:6x6").unwrap_err();
    assert_eq!(e.to_string(), "interrupted");
    let e = report::ebb_json("torus:6x6", Some("dor"), None, 10, 1, 8).unwrap_err();
    assert_eq!(e.to_string(), "interrupted");
    let e = report::link_loads_json("torus:6x6", Some("dor"), None, 8).unwrap_err();
    assert_eq!(e.to_string(), "interrupted");
    let topo = flitsim_topology::generators::from_spec("torus:4x4").unwrap();
    let fabric = {
        cancel::clear();
        let f = flitsim_manager::route(
            &topo,
            "minhop",
            &flitsim_manager::RoutingRequest { vls: 1, classes: 1 },
        )
        .unwrap();
        cancel::request();
        f
    };
    let e = flitsim_manager::cdg::verify(&topo, &fabric).unwrap_err();
    assert!(
        matches!(e, flitsim_manager::RoutingError::Cancelled(_)),
        "{e}"
    );
}
