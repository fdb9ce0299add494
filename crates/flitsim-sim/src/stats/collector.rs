//! The counters the engine updates while it runs, and the [`RunResult`] made from them.
use super::*;
use crate::config::SimParams;

/// What the engine counts during a run. Window counts cover flits generated or delivered
/// inside the measurement window; latencies are of packets generated inside it.
#[derive(Default)]
pub(crate) struct Collector {
    pub flits_generated: u64,
    pub flits_delivered: u64,
    /// Flits sent over switch-to-switch links.
    pub flit_hops: u64,
    /// Per class, flits generated and delivered in the window.
    pub window_generated: Vec<u64>,
    pub window_accepted: Vec<u64>,
    /// Per class, end-to-end and network latency of measured packets.
    pub lat: Vec<Histogram>,
    pub net_lat: Vec<Histogram>,
    pub hops_sum: u64,
    pub hops_n: u64,
    /// Per (port, VL), flits sent on the port's link in the window.
    pub vl_flits: Vec<u64>,
    /// Every delivered packet, when tracing is on.
    pub trace: Option<Vec<Delivery>>,
}

/// What only the engine knows at the end of a run.
pub(crate) struct RunEnd<'a> {
    pub cfg: &'a SimParams,
    pub topology: &'a str,
    pub routing: &'a str,
    pub endpoints: usize,
    /// The cycle the run stopped.
    pub cycles: u64,
    pub wall_seconds: f64,
    pub build_seconds: f64,
    /// Every measured packet was delivered.
    pub all_measured_delivered: bool,
    pub deadlock: Option<DeadlockReport>,
    /// Flits still in the network (counted from the engine's state).
    pub remaining: u64,
    pub ports: Vec<PortResult>,
}

impl Collector {
    /// Counters for `classes` traffic classes and `port_vls` (port, VL) pairs.
    pub fn new(classes: usize, port_vls: usize) -> Self {
        Collector {
            window_generated: vec![0; classes],
            window_accepted: vec![0; classes],
            lat: vec![Histogram::default(); classes],
            net_lat: vec![Histogram::default(); classes],
            vl_flits: vec![0; port_vls],
            ..Default::default()
        }
    }

    /// The result record of the run.
    pub fn finish(&self, end: RunEnd<'_>) -> RunResult {
        let cfg = end.cfg;
        let n = end.endpoints as f64;
        let m = cfg.run.measure as f64;
        let mut lat_all = Histogram::default();
        let mut net_all = Histogram::default();
        for (a, b) in self.lat.iter().zip(&self.net_lat) {
            lat_all.merge(a);
            net_all.merge(b);
        }
        let total_acc: u64 = self.window_accepted.iter().sum();
        let total_gen: u64 = self.window_generated.iter().sum();
        let per_sl = cfg
            .traffic
            .classes
            .iter()
            .enumerate()
            .map(|(c, cc)| ClassResult {
                sl: c as u32,
                name: cc.name.clone(),
                offered_load: self.window_generated[c] as f64 / (m * n),
                accepted_load: self.window_accepted[c] as f64 / (m * n),
                share: if total_acc > 0 {
                    self.window_accepted[c] as f64 / total_acc as f64
                } else {
                    0.0
                },
                latency: self.lat[c].summary(),
                network_latency: self.net_lat[c].summary(),
            })
            .collect();
        let offered = total_gen as f64 / (m * n);
        let accepted = total_acc as f64 / (m * n);
        let drained = end.all_measured_delivered && end.deadlock.is_none();
        let saturated = !drained || accepted < (1.0 - cfg.run.saturation_tolerance) * offered;
        let (t, wall) = (end.cycles, end.wall_seconds);
        RunResult {
            version: env!("CARGO_PKG_VERSION").to_string(),
            seed: cfg.seed,
            config_hash: cfg.config_hash.clone(),
            topology: end.topology.to_string(),
            routing: end.routing.to_string(),
            cycles: Cycles {
                warmup: cfg.run.warmup,
                measure: cfg.run.measure,
                total: t,
            },
            endpoints: end.endpoints as u64,
            offered_load: offered,
            accepted_load: accepted,
            saturated,
            drained,
            latency: lat_all.summary(),
            network_latency: net_all.summary(),
            hops_mean: if self.hops_n > 0 {
                self.hops_sum as f64 / self.hops_n as f64
            } else {
                0.0
            },
            flits: FlitCounts {
                generated: self.flits_generated,
                delivered: self.flits_delivered,
                remaining: end.remaining,
            },
            per_sl,
            latency_histogram: self
                .lat
                .iter()
                .enumerate()
                .flat_map(|(c, h)| {
                    h.buckets()
                        .into_iter()
                        .map(move |(latency, count)| HistogramBin {
                            sl: c as u32,
                            latency,
                            count,
                        })
                })
                .collect(),
            ports: end.ports,
            deadlock: end.deadlock,
            cdg: None,
            physical: None,
            performance: Performance {
                wall_seconds: wall,
                build_seconds: end.build_seconds,
                cycles_per_second: if wall > 0.0 { t as f64 / wall } else { 0.0 },
                flit_hops: self.flit_hops,
                flit_hops_per_second: if wall > 0.0 {
                    self.flit_hops as f64 / wall
                } else {
                    0.0
                },
            },
        }
    }
}
