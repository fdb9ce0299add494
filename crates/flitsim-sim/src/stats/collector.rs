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
    /// Per class, latency of measured messages (generation → last flit delivered).
    pub msg_lat: Vec<Histogram>,
    /// Per class, sum and sum of squares of message latency (exact integers, so the jitter does
    /// not depend on the order of deliveries within a cycle).
    pub msg_moments: Vec<(u128, u128)>,
    /// Width of the time-series bins, cycles (0: no time series).
    pub ts_bin: u64,
    /// Per class, flits delivered in each bin.
    pub series: Vec<Vec<u64>>,
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
    pub fn new(classes: usize, port_vls: usize, timeseries_bin: Option<u64>) -> Self {
        Collector {
            msg_lat: vec![Histogram::default(); classes],
            msg_moments: vec![(0, 0); classes],
            ts_bin: timeseries_bin.unwrap_or(0),
            series: vec![Vec::new(); classes],
            window_generated: vec![0; classes],
            window_accepted: vec![0; classes],
            lat: vec![Histogram::default(); classes],
            net_lat: vec![Histogram::default(); classes],
            vl_flits: vec![0; port_vls],
            ..Default::default()
        }
    }

    /// Records the latency of a measured message of class `c`.
    #[inline]
    pub fn add_message(&mut self, c: usize, latency: u64) {
        self.msg_lat[c].add(latency);
        let (sum, sq) = &mut self.msg_moments[c];
        let x = latency as u128;
        *sum += x;
        *sq = sq.saturating_add(x * x);
    }

    /// Counts `flits` flits of class `c` delivered in cycle `t` in the time series.
    #[inline]
    pub fn add_to_series(&mut self, c: usize, t: u64, flits: u64) {
        let b = (t / self.ts_bin) as usize;
        let s = &mut self.series[c];
        if b >= s.len() {
            s.resize(b + 1, 0);
        }
        s[b] += flits;
    }

    /// Jitter of class `c`'s message latency (`None`s for a deadlocked run without messages).
    fn jitter(&self, c: usize, deadlocked: bool) -> Jitter {
        let h = &self.msg_lat[c];
        if h.count() == 0 && deadlocked {
            return Jitter {
                std: None,
                p99_minus_p50: None,
            };
        }
        let std = if h.count() > 0 {
            // Variance = (n·Σx² − (Σx)²) / n², exactly in integers unless that overflows.
            let (sum, sq) = self.msg_moments[c];
            let n = h.count() as u128;
            let nf = n as f64;
            let var = match (n.checked_mul(sq), sum.checked_mul(sum)) {
                (Some(a), Some(b)) if sq != u128::MAX => a.saturating_sub(b) as f64 / (nf * nf),
                _ => sq as f64 / nf - (sum as f64 / nf).powi(2),
            };
            var.max(0.0).sqrt()
        } else {
            0.0
        };
        Jitter {
            std: Some(std),
            p99_minus_p50: Some(h.quantile(0.99) - h.quantile(0.5)),
        }
    }

    /// The time series of a run of `cycles` cycles, when configured.
    fn timeseries(&self, cfg: &SimParams, cycles: u64) -> Option<TimeSeries> {
        if self.ts_bin == 0 {
            return None;
        }
        let bins = cycles.div_ceil(self.ts_bin) as usize;
        let classes = cfg
            .traffic
            .classes
            .iter()
            .enumerate()
            .map(|(c, cc)| {
                let mut flits = self.series[c].clone();
                flits.resize(bins.max(flits.len()), 0);
                ClassSeries {
                    sl: c as u32,
                    name: cc.name.clone(),
                    flits,
                }
            })
            .collect();
        Some(TimeSeries {
            bin: self.ts_bin,
            classes,
        })
    }

    /// The result record of the run.
    ///
    /// A run that did not deadlock reports every statistic (0 for an empty histogram). A
    /// deadlocked run reports loads over the part of the window it simulated and `None` for
    /// what it could not measure: loads when that part is empty, accepted load and shares
    /// when nothing was accepted, latencies and hops when no measured packet arrived.
    pub fn finish(&self, end: RunEnd<'_>) -> RunResult {
        let cfg = end.cfg;
        let n = end.endpoints as f64;
        let deadlocked = end.deadlock.is_some();
        let window_end = cfg.run.warmup.saturating_add(cfg.run.measure);
        let m = if deadlocked {
            end.cycles.min(window_end).saturating_sub(cfg.run.warmup) as f64
        } else {
            cfg.run.measure as f64
        };
        // Loads, shares and statistics that a deadlocked run could not measure are `None`.
        let started = !deadlocked || m > 0.0;
        let load = |flits: u64| started.then(|| flits as f64 / (m * n));
        let accepted = |flits: u64| {
            if deadlocked && flits == 0 {
                None
            } else {
                load(flits)
            }
        };
        let latency = |h: &Histogram| {
            if deadlocked {
                h.summary_or_none()
            } else {
                h.summary()
            }
        };
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
                offered_load: load(self.window_generated[c]),
                accepted_load: accepted(self.window_accepted[c]),
                share: if total_acc > 0 {
                    Some(self.window_accepted[c] as f64 / total_acc as f64)
                } else if deadlocked {
                    None
                } else {
                    Some(0.0)
                },
                latency: latency(&self.lat[c]),
                network_latency: latency(&self.net_lat[c]),
                message_latency: latency(&self.msg_lat[c]),
                jitter: self.jitter(c, deadlocked),
            })
            .collect();
        let offered = load(total_gen);
        let accepted = accepted(total_acc);
        let drained = end.all_measured_delivered && !deadlocked;
        let saturated = !drained
            || accepted.unwrap_or(0.0)
                < (1.0 - cfg.run.saturation_tolerance) * offered.unwrap_or(0.0);
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
            latency: latency(&lat_all),
            network_latency: latency(&net_all),
            hops_mean: if self.hops_n > 0 {
                Some(self.hops_sum as f64 / self.hops_n as f64)
            } else if deadlocked {
                None
            } else {
                Some(0.0)
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
            timeseries: self.timeseries(cfg, end.cycles),
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
