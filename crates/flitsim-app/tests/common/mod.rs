//! Helpers shared by the integration tests: experiments from TOML text (run, or their error
//! message), assembly into a network, scripted lone packets over a hand-routed line, and the
//! hot-spot fabric of the QoS tests.
#![allow(dead_code)]
use flitsim_app::{build_fabric, build_topology, run_experiment_str, ExperimentConfig};
use flitsim_manager::FabricConfig;
use flitsim_sim::{Delivery, Network, RunResult};
use flitsim_topology::{generators, Topology};

/// Owned `key=value` overrides.
pub fn sets(sets: &[&str]) -> Vec<String> {
    sets.iter().map(|s| s.to_string()).collect()
}

/// Parses an experiment with overrides; panics on a bad configuration.
pub fn parse(text: &str, origin: &str, overrides: &[&str]) -> ExperimentConfig {
    ExperimentConfig::parse(text, origin, &sets(overrides), None).unwrap()
}

/// Runs an experiment with overrides; panics on any error.
pub fn run(text: &str, origin: &str, overrides: &[&str]) -> RunResult {
    run_experiment_str(text, origin, &sets(overrides), None).unwrap()
}

/// The JSON of a result with its `performance` cleared (apart from the flit-hops), for
/// comparing runs that must give the same results.
pub fn without_performance(r: &RunResult) -> String {
    let mut r = r.clone();
    r.performance = flitsim_sim::stats::Performance {
        wall_seconds: 0.0,
        build_seconds: 0.0,
        routing_seconds: 0.0,
        cpu_seconds: None,
        threads: 1,
        forwarding: "tables".into(),
        cycles_per_second: 0.0,
        flit_hops: r.performance.flit_hops,
        flit_hops_per_second: 0.0,
        counters: None,
    };
    serde_json::to_string(&r).unwrap()
}

/// The text of `examples/NAME`.
pub fn example(name: &str) -> String {
    let path = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Runs `text` with `sets` on 1, 2, 3 and 5 threads; all results equal the first apart from
/// `performance`, which says how many threads ran.
pub fn same_on_any_threads(text: &str, origin: &str, sets: &[&str]) {
    same_on_threads(text, origin, sets, &[1, 2, 3, 5]);
}

pub fn same_on_threads(text: &str, origin: &str, sets: &[&str], counts: &[usize]) {
    let mut reference = None;
    for &threads in counts {
        let n = format!("run.threads={threads}");
        let mut all: Vec<&str> = sets.to_vec();
        all.push(&n);
        let r = run(text, origin, &all);
        let lanes = r.performance.threads;
        assert!(
            lanes as usize <= threads && (threads == 1 || lanes > 1),
            "{origin} {sets:?}: asked for {threads} threads, {lanes} ran"
        );
        let json = without_performance(&r);
        match &reference {
            None => reference = Some(json),
            Some(first) => assert!(
                *first == json,
                "{origin} {sets:?}: {threads} threads give other results than 1"
            ),
        }
    }
}

/// A short run (300 + 1 000 cycles) with `extra` overrides.
pub fn short_with(extra: &[&'static str]) -> Vec<&'static str> {
    ["run.warmup=300", "run.measure=1000"]
        .iter()
        .chain(extra)
        .copied()
        .collect()
}

/// Overrides of `examples/torus-8x8-uniform.toml` that exercise every buffer organisation
/// and switching mode of the crossbar switch (the thread tests run each).
pub const TORUS_VARIANTS: &[&[&str]] = &[
    &["traffic.load=0.5"],
    &["traffic.load=0.95"],
    &["traffic.load=0.6", "switch.switching=\"wormhole\""],
    &[
        "traffic.load=0.6",
        "switch.switching=\"wormhole\"",
        "switch.output_buffer_flits=32",
    ],
    &[
        "traffic.load=0.7",
        "switch.output_buffer_flits=48",
        "switch.speedup=2",
    ],
    &[
        "traffic.load=0.7",
        "switch.shared_buffer={total_flits=128,min_per_vl=16,max_per_vl=96}",
    ],
    &[
        "traffic.load=0.4",
        "traffic.pattern=\"hotspot\"",
        "traffic.hotspot={endpoints=2,fraction=0.2}",
        "run.timeseries_bin=100",
        "run.port_timeseries=true",
    ],
];

/// The error message of an experiment that must fail; panics when it runs.
pub fn run_err(text: &str, origin: &str, overrides: &[&str]) -> String {
    match run_experiment_str(text, origin, &sets(overrides), None) {
        Ok(_) => panic!("{overrides:?} should fail"),
        Err(e) => e.to_string(),
    }
}

/// The topology and the tables of an experiment (relative paths from the current directory),
/// stored: written out from the engine's rule where the experiment routes by one, for the
/// tests that read or edit them.
pub fn assemble(cfg: &ExperimentConfig) -> (Topology, FabricConfig) {
    let topo = build_topology(cfg, None).unwrap();
    let (fabric, _) = build_fabric(cfg, &topo).unwrap();
    (topo, fabric.with_tables())
}

/// An experiment run with its switches (and NICs) visited in two shuffled orders within each
/// cycle gives the results of the run in index order (`what` names it in a failure).
pub fn same_in_shuffled_orders(cfg: &ExperimentConfig, what: &str) {
    let (topo, fabric) = assemble(cfg);
    let params = cfg.params();
    let reference = Network::build(&params, &topo, fabric.clone())
        .unwrap()
        .run()
        .unwrap();
    for seed in [1, 2] {
        let mut net = Network::build(&params, &topo, fabric.clone()).unwrap();
        net.shuffle_visit_order(seed);
        let r = net.run().unwrap();
        assert_eq!(
            without_performance(&r),
            without_performance(&reference),
            "{what}, shuffle seed {seed}"
        );
    }
}

/// The built network of an experiment, and its topology.
pub fn network(cfg: &ExperimentConfig) -> (Network, Topology) {
    let (topo, fabric) = assemble(cfg);
    let net = Network::build(&cfg.params(), &topo, fabric).unwrap();
    (net, topo)
}

/// A line of `k` switches (a 1-D mesh) with two endpoints per switch, and its hand-made LFTs.
pub fn line(k: u32, latency: u32) -> (Topology, FabricConfig) {
    let t = generators::torus_or_mesh(&[k.max(2)], 2, 1, latency, false).unwrap();
    let n = t.num_endpoints();
    let lft = (0..t.num_switches() as u32)
        .map(|s| {
            (0..n as u32)
                .map(|d| {
                    let sd = d / 2;
                    if sd > s {
                        0 // + direction
                    } else if sd < s {
                        1 // − direction
                    } else {
                        2 + (d % 2) as u16 // endpoint ports
                    }
                })
                .collect()
        })
        .collect();
    let fabric = FabricConfig {
        alt_paths: Vec::new(),
        engine: "hand".into(),
        num_vls: 1,
        classes: 1,
        routing_sls: 1,
        layers: 1,
        lft,
        path_sl: vec![],
        sl2vl: (0..t.num_switches()).map(|_| vec![0; 16]).collect(),
        nic_sl2vl: vec![0],
        ports: FabricConfig::port_counts(&t),
        rule: None,
    };
    (t, fabric)
}

/// An experiment without offered traffic, for scripted packets: one class of `p`-flit
/// messages, switches with routing delay `r`, 32-flit VL buffers and `switching`; `switch`
/// adds lines to the `[switch]` table (and may open its sub-tables).
pub fn lone_packet_config(
    r: u32,
    p: u32,
    switching: &str,
    switch: &str,
    origin: &str,
) -> ExperimentConfig {
    let text = format!(
        r#"
[topology]
kind = "mesh"
sides = [2]
[switch]
routing_delay = {r}
vl_buffer_flits = 32
switching = "{switching}"
{switch}
[traffic]
load = 0.1
[[traffic.class]]
name = "BE"
message_flits = {p}
[run]
warmup = 0
measure = 10
"#
    );
    // No generated traffic: only the scripted messages. An experiment file cannot ask for
    // that (`traffic.load = 0` is an error), the engine can.
    let mut cfg = parse(&text, origin, &[]);
    cfg.traffic.load = Some(0.0);
    cfg
}

/// Messages `(at, size)` from endpoint 0 to the second endpoint of the last switch of
/// [`line`]`(k, l)`, run with tracing: the result and every delivery.
pub fn over_line(
    cfg: &ExperimentConfig,
    k: u32,
    l: u32,
    messages: &[(u64, u32)],
) -> (RunResult, Vec<Delivery>) {
    let (topo, fabric) = line(k, l);
    let mut net = Network::build(&cfg.params(), &topo, fabric).unwrap();
    net.enable_trace();
    let dst = (k - 1) * 2 + 1;
    for &(at, flits) in messages {
        net.inject_message(at, 0, dst, 0, flits).unwrap();
    }
    let res = net.run().unwrap();
    (res, net.deliveries().to_vec())
}

/// Every endpoint of a 4-ary 2-tree sends to one hot endpoint, whose link is the bottleneck;
/// class A sends 2-flit messages, class B 16-flit ones, both backlogged, under a DTable built
/// for shares 25 % / 75 %. `switch` holds the lines of the `[switch]` table (and its
/// sub-tables), `qos` lines added after `[qos.dtable]` (further `[qos.*]` tables).
pub fn hotspot_tree(switch: &str, qos: &str) -> String {
    format!(
        r#"
seed = 3
[topology]
kind = "kary_ntree"
k = 4
n = 2
[routing]
vls = 2
[switch]
vl_buffer_flits = 64
output_buffer_flits = 128
{switch}
[traffic]
load = 1.0
pattern = "hotspot"
hotspot = {{ endpoints = 1, fraction = 1.0 }}
[[traffic.class]]
name = "A"
message_flits = 2
[[traffic.class]]
name = "B"
message_flits = 16
[qos]
scheduler = "dtable"
[qos.dtable]
entries = 16
gmtu = 16
w = 8
k = 2
max_distance = [2, 4]
shares = [0.25, 0.75]
{qos}
[run]
warmup = 3000
measure = 15000
drain_max = 0
per_port_stats = false
"#
    )
}

/// Overrides of [`TORUS`]: MinHop with one VL on an 8x8 torus at load 0.9, which deadlocks
/// within a few hundred cycles.
pub const MINHOP_8X8_DEADLOCK: &[&str] = &[
    "routing.engine=\"minhop\"",
    "routing.vls=1",
    "topology.sides=[8,8]",
    "traffic.load=0.9",
    "run.stall_cycles=500",
];

/// Overrides of `examples/opa-qos-torus2d.toml` for a short run past saturation with
/// 64-byte flits (the lanes' tests of the Omni-Path switch).
pub const OPA_TORUS_SHORT: &[&str] = &[
    "run.warmup=200",
    "run.measure=400",
    "units.flit_bytes=64",
    "traffic.load=0.9",
];

/// A 4x4 torus, DOR tables on 4 VLs, one class of 16-flit messages at load 0.2.
pub const TORUS: &str = r#"
seed = 7
[topology]
kind = "torus"
sides = [4, 4]
[routing]
vls = 4
[switch]
vl_buffer_flits = 16
[traffic]
load = 0.2
[[traffic.class]]
name = "BE"
message_flits = 16
[run]
warmup = 1000
measure = 4000
"#;

/// A 4x4 torus of 11-port switches (three endpoints each, trunks of two links, DOR on 8 VLs)
/// with the Omni-Path QoS scenario's SL→SC→VL tables, DTable and Table 8's classes at CBR load
/// 1.0, sized in flits: the Omni-Path tests add `switch.organisation="opa"` (shared input and
/// output buffers of 256 flits, central buffers of 512).
pub const OPA_QOS_TORUS: &str = r#"
seed = 5
[topology]
kind = "torus"
sides = [4, 4]
endpoints_per_switch = 3
trunk = 2
[routing]
engine = "dor"
vls = 8
[switch]
shared_buffer = { total_flits = 256, min_per_vl = 16, max_per_vl = 256 }
shared_output_buffer = { total_flits = 256, min_per_vl = 16, max_per_vl = 256 }
[switch.opa]
central_buffer_flits = 512
[qos]
scheduler = "dtable"
[qos.sc]
sl2sc = [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
sc2vl = [0, 1, 2, 3, 4, 5, 6, 7, 6, 7]
[qos.dtable]
entries = 128
gmtu = 16
w = 8
k = 2
max_distance = [2, 4, 8, 16, 16]
[traffic]
load = 1.0
pattern = "uniform_others"
injection = "cbr"
[[traffic.class]]
name = "VO"
share = 0.10
message_flits = 2
[[traffic.class]]
name = "VI"
share = 0.30
message_flits = 4
[[traffic.class]]
name = "CL"
share = 0.50
message_flits = 8
[[traffic.class]]
name = "BE"
share = 0.05
message_flits = 16
[[traffic.class]]
name = "BK"
share = 0.05
message_flits = 16
[run]
warmup = 1000
measure = 3000
drain_max = 0
"#;

/// A random hierarchical Omni-Path fabric: [`OPA_QOS_TORUS`] reshaped by overrides (see
/// `tests/opa_random.rs`, which checks such fabrics, and `tests/look_ahead.rs`).
#[derive(Clone, Debug)]
pub struct OpaCase {
    pub seed: u64,
    pub sides: &'static str,
    pub per_switch: u32,
    pub trunk: u32,
    pub latency: u32,
    pub shared: bool,
    pub wormhole: bool,
    pub rdelay: u32,
    pub ppm: u32,
    pub links: u32,
    pub link_width: u32,
    pub central_width: u32,
    pub central_per_link: u32,
    pub staging: u32,
    pub internal_delay: Option<u32>,
    pub choice: &'static str,
    pub scheduler: &'static str,
    pub load: f64,
    pub cbr: bool,
}

/// The strategy of [`OpaCase`]s: MPorts of 1–4 ports with 1 to all of them as links to the
/// central crossbar, internal links of 1–4 and 1–5 flits per cycle, central buffers of 160–512
/// flits per link, staging buffers of 16–64, internal routing delays, every link choice and
/// scheduler, static or shared buffers, VCT or wormhole, links of 1–3 cycles, loads 0.05–1.3.
pub fn opa_case() -> impl proptest::strategy::Strategy<Value = OpaCase> {
    use proptest::prelude::*;
    let shape = (
        0u64..1000,
        prop::sample::select(vec!["[3]", "[2,3]", "[3,3]"]),
        1u32..4,
        1u32..3,
        1u32..4,
        any::<bool>(),
        prop::sample::select(vec![false, false, true]),
        0u32..4,
    );
    let inside = (
        prop::sample::select(vec![1u32, 2, 3, 4]),
        0u32..3,
        1u32..5,
        1u32..6,
        prop::sample::select(vec![160u32, 256, 512]),
        prop::sample::select(vec![16u32, 32, 64]),
        prop::sample::select(vec![None, Some(0u32), Some(1), Some(3)]),
        prop::sample::select(vec!["input", "flow", "free"]),
    );
    let traffic = (
        prop::sample::select(vec!["rr", "sbt", "dtable"]),
        0.05f64..1.3,
        any::<bool>(),
    );
    (shape, inside, traffic).prop_map(|(s, i, t)| OpaCase {
        seed: s.0,
        sides: s.1,
        per_switch: s.2,
        trunk: s.3,
        latency: s.4,
        shared: s.5,
        wormhole: s.6,
        rdelay: s.7,
        ppm: i.0,
        // At most one link per external port of the MPort.
        links: 1 + i.1 % i.0,
        link_width: i.2,
        central_width: i.3,
        central_per_link: i.4,
        staging: i.5,
        internal_delay: i.6,
        choice: i.7,
        scheduler: t.0,
        load: t.1,
        cbr: t.2,
    })
}

impl OpaCase {
    /// The overrides of [`OPA_QOS_TORUS`] that make this fabric (200 + 600 cycles, at most
    /// 5 000 of drain, the flow-control invariants checked every cycle).
    pub fn sets(&self) -> Vec<String> {
        // Shared input and output buffers, or static ones (each VL's minimum is its maximum).
        let buffer = if self.shared {
            "{total_flits=192,min_per_vl=16,max_per_vl=128}"
        } else {
            "{total_flits=192,min_per_vl=24,max_per_vl=24}"
        };
        let switching = if self.wormhole { "wormhole" } else { "vct" };
        let injection = if self.cbr { "cbr" } else { "bernoulli" };
        let mut sets = vec![
            format!("seed={}", self.seed),
            format!("topology.sides={}", self.sides),
            format!("topology.endpoints_per_switch={}", self.per_switch),
            format!("topology.trunk={}", self.trunk),
            format!("topology.link_latency={}", self.latency),
            "switch.organisation=\"opa\"".to_string(),
            format!("switch.switching=\"{switching}\""),
            format!("switch.routing_delay={}", self.rdelay),
            format!("switch.shared_buffer={buffer}"),
            format!("switch.shared_output_buffer={buffer}"),
            format!("switch.opa.ports_per_mport={}", self.ppm),
            format!("switch.opa.mport_links={}", self.links),
            format!("switch.opa.mport_link_width={}", self.link_width),
            format!("switch.opa.central_width={}", self.central_width),
            format!(
                "switch.opa.central_buffer_flits={}",
                self.central_per_link * self.links
            ),
            format!("switch.opa.central_output_flits={}", self.staging),
            format!("switch.opa.link_choice=\"{}\"", self.choice),
            format!("qos.scheduler=\"{}\"", self.scheduler),
            "qos.sbt={weights=[10,30,50,5,5]}".to_string(),
            format!("traffic.load={}", self.load),
            format!("traffic.injection=\"{injection}\""),
            "run.warmup=200".to_string(),
            "run.measure=600".to_string(),
            "run.drain_max=5000".to_string(),
            "run.check_invariants=1".to_string(),
        ];
        if let Some(d) = self.internal_delay {
            sets.push(format!("switch.opa.internal_routing_delay={d}"));
        }
        sets
    }
}
