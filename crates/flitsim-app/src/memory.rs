//! The memory an experiment needs, estimated from the fabric's size before anything large is
//! built, and the limit it is checked against (`run.max_memory`, else the machine's available
//! memory).
//!
//! What grows with the fabric (calibrated against peak RSS in `docs/performance.md`):
//!
//! * forwarding tables, `lft[switch][endpoint]` of 2 bytes, counted twice (the manager's
//!   tables and the engine's flat layout, built row by row while the rows are freed): `4 · S · E`;
//! * path SLs, one byte per ordered endpoint pair when the engine uses more than one SL (not
//!   known before routing; always counted): `E²`;
//! * neither of these when the experiment routes by the engine's rule (`routing.forwarding`),
//!   which keeps `16 · (S + E)` bytes of coordinates and endpoint homes instead;
//! * SL→VL tables, one byte per (switch, in port, out port, SL): `S · P² · max(VLs, classes)`
//!   with `P` the largest port count;
//! * the engine's state per port (switch ports and NICs): about 512 bytes plus 128 per VL,
//!   four times that for the hierarchical Omni-Path switch (`switch.organisation = "opa"`);
//! * `lash` and `dfsssp` keep every path while they assign layers: `8 · E²` more (not
//!   calibrated);
//! * 16 MiB for the program itself;
//! * one eighth more of all that as a margin.
use crate::config::{ExperimentConfig, TopologyConfig};
use crate::ExperimentError;
use flitsim_topology::Topology;

/// The size of a fabric as the estimate needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FabricSize {
    /// Switches.
    pub switches: u128,
    /// Endpoints.
    pub endpoints: u128,
    /// Ports of all switches.
    pub switch_ports: u128,
    /// The largest port count of a switch.
    pub max_ports: u128,
}

impl FabricSize {
    /// The size of a topology configuration, computed without generating it; `None` for
    /// `kind = "file"`. Saturating arithmetic: absurd sizes give huge numbers, never overflow.
    pub fn of_config(cfg: &TopologyConfig) -> Option<FabricSize> {
        let u = |v: u32| v as u128;
        Some(match cfg {
            TopologyConfig::Torus {
                sides,
                endpoints_per_switch,
                trunk,
                ..
            }
            | TopologyConfig::Mesh {
                sides,
                endpoints_per_switch,
                trunk,
                ..
            } => {
                let s = sides
                    .iter()
                    .fold(1u128, |a, &k| a.saturating_mul(u(k).max(1)));
                let p = (2 * sides.len() as u128)
                    .saturating_mul(u(*trunk))
                    .saturating_add(u(*endpoints_per_switch));
                FabricSize {
                    switches: s,
                    endpoints: s.saturating_mul(u(*endpoints_per_switch)),
                    switch_ports: s.saturating_mul(p),
                    max_ports: p,
                }
            }
            TopologyConfig::KaryNtree { k, n, .. } => {
                let pow = |e: u32| (0..e).fold(1u128, |a, _| a.saturating_mul(u(*k)));
                let s = u(*n).saturating_mul(pow(n.saturating_sub(1)));
                FabricSize {
                    switches: s,
                    endpoints: pow(*n),
                    switch_ports: s.saturating_mul(2 * u(*k)),
                    max_ports: 2 * u(*k),
                }
            }
            TopologyConfig::Min {
                endpoints, radix, ..
            } => {
                // An endpoint count the generator refuses: sized as one stage of leaves.
                let s =
                    match flitsim_topology::generators::ShuffleMinLayout::new(*endpoints, *radix) {
                        Ok(l) => l.switches() as u128,
                        Err(_) => u(*endpoints / (*radix / 2).max(1)).max(1),
                    };
                FabricSize {
                    switches: s,
                    endpoints: u(*endpoints),
                    switch_ports: s.saturating_mul(u(*radix)),
                    max_ports: u(*radix),
                }
            }
            TopologyConfig::Random {
                switches,
                ports,
                endpoints_per_switch,
                ..
            } => FabricSize {
                switches: u(*switches),
                endpoints: u(*switches) * u(*endpoints_per_switch),
                switch_ports: u(*switches) * u(*ports),
                max_ports: u(*ports),
            },
            TopologyConfig::File { .. } => return None,
        })
    }

    /// The size of a built topology.
    pub fn of_topology(topo: &Topology) -> FabricSize {
        FabricSize {
            switches: topo.num_switches() as u128,
            endpoints: topo.num_endpoints() as u128,
            switch_ports: topo.total_switch_ports() as u128,
            max_ports: topo
                .switches()
                .iter()
                .map(|s| s.ports as u128)
                .max()
                .unwrap_or(0),
        }
    }

    /// Bytes of the routing tables alone (what `flitsim route` builds): forwarding tables
    /// once, path SLs and SL→VL tables for `sls` SLs.
    pub fn routing_bytes(&self, sls: u128) -> u128 {
        let (s, e) = (self.switches, self.endpoints);
        2u128
            .saturating_mul(s)
            .saturating_mul(e)
            .saturating_add(e.saturating_mul(e))
            .saturating_add(self.sl2vl_bytes(sls))
            .saturating_add(BASE)
    }

    /// Bytes of the SL→VL tables for `sls` SLs: one per (switch, in port, out port, SL).
    fn sl2vl_bytes(&self, sls: u128) -> u128 {
        self.switches
            .saturating_mul(self.max_ports.saturating_mul(self.max_ports))
            .saturating_mul(sls)
    }

    /// Bytes an experiment on this fabric needs at its peak, see the module's documentation.
    /// `opa`: the hierarchical Omni-Path switch, simulated as MPort and central nodes (about
    /// four times the ports' state). `rule`: routed by the engine's rule, without forwarding
    /// and path SL tables (`routing.forwarding`).
    pub fn experiment_bytes(
        &self,
        vls: u8,
        classes: usize,
        engine: Option<&str>,
        opa: bool,
        rule: bool,
    ) -> u128 {
        let (s, e) = (self.switches, self.endpoints);
        let sls = (vls as u128).max(classes as u128).max(1);
        let ports = self.switch_ports.saturating_add(e);
        let per_port = (512 + 128 * vls as u128) * if opa { 4 } else { 1 };
        let paths = match engine {
            Some("lash") | Some("dfsssp") => 8u128.saturating_mul(e).saturating_mul(e),
            _ => 0,
        };
        let routing = if rule {
            // The rule's coordinates and endpoint homes, and the SL→VL tables.
            16u128
                .saturating_mul(s.saturating_add(e))
                .saturating_add(self.sl2vl_bytes(sls))
                .saturating_add(BASE)
        } else {
            self.routing_bytes(sls)
                .saturating_add(2u128.saturating_mul(s).saturating_mul(e)) // the engine's copy of the LFTs
        };
        let total = routing
            .saturating_add(ports.saturating_mul(per_port))
            .saturating_add(paths);
        // One eighth more, to stay on the safe side of the measured peaks.
        total.saturating_add(total / 8)
    }
}

/// Bytes the flows of `cfg` need on `endpoints` endpoints: per flow its source, counters and
/// latency histogram (about 1.5 KiB, measured on 16k flows) and, with `run.timeseries_bin`,
/// 8 bytes per bin of its time series over warm-up and window.
pub fn flow_bytes(cfg: &ExperimentConfig, endpoints: u128) -> u128 {
    let n = usize::try_from(endpoints).unwrap_or(usize::MAX);
    let t = &cfg.traffic;
    let flows = t.flow_sets.iter().fold(t.flows.len() as u128, |acc, s| {
        acc.saturating_add(s.count(n) as u128)
    });
    let bins = cfg.run.timeseries_bin.map_or(0, |b| {
        // The series grow as the run goes; the drain is usually short.
        let total = cfg.run.warmup.saturating_add(cfg.run.measure);
        total.div_ceil(b.max(1)) as u128
    });
    flows.saturating_mul(1536u128.saturating_add(bins.saturating_mul(8)))
}

/// The program's own memory, bytes.
const BASE: u128 = 16 << 20;

/// `MemAvailable` of `/proc/meminfo`, bytes; `None` where it cannot be read.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// A byte count for messages: `21.3 GiB`.
pub fn human(bytes: u128) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{v:.1} {}", units[i])
    }
}

/// The limit an experiment's estimate is held to, and where it comes from: `run.max_memory`,
/// else the machine's available memory, else none.
pub fn limit(cfg: &ExperimentConfig) -> Option<(u64, &'static str)> {
    match cfg.run.max_memory.as_ref().and_then(|m| m.bytes().ok()) {
        Some(b) => Some((b, "run.max_memory")),
        None => available_memory().map(|b| (b, "the available memory (MemAvailable)")),
    }
}

/// Whether the experiment's engine has a routing rule for its topology (`dor` on tori and
/// meshes, `dmodk` on k-ary n-trees; see `flitsim_manager::routing::rule`), judged from the
/// built topology when there is one, else from `[topology]`.
fn has_rule(cfg: &ExperimentConfig, topo: Option<&Topology>) -> bool {
    use flitsim_topology::Shape;
    let (torus, tree) = match topo {
        // A file read as Irregular may still be a torus DOR detects.
        Some(t) => (
            matches!(t.shape(), Shape::Torus { .. } | Shape::Irregular),
            matches!(t.shape(), Shape::KaryNTree { .. }),
        ),
        None => (
            matches!(
                cfg.topology,
                TopologyConfig::Torus { .. } | TopologyConfig::Mesh { .. }
            ),
            matches!(cfg.topology, TopologyConfig::KaryNtree { .. }),
        ),
    };
    let default = if torus && topo.is_none_or(|t| !matches!(t.shape(), Shape::Irregular)) {
        "dor"
    } else if tree {
        "dmodk"
    } else {
        "other"
    };
    match cfg.routing.engine.as_deref().unwrap_or(default) {
        "dor" => torus,
        "dmodk" | "updown-dmodk" => tree,
        _ => false,
    }
}

/// Refuses an experiment whose estimate exceeds its [`limit`]. With `topo` the estimate uses
/// the built topology; without it, the size computed from `[topology]` (nothing for files).
pub fn check(cfg: &ExperimentConfig, topo: Option<&Topology>) -> Result<(), ExperimentError> {
    let size = match topo {
        Some(t) => FabricSize::of_topology(t),
        None => match FabricSize::of_config(&cfg.topology) {
            Some(s) => s,
            None => return Ok(()),
        },
    };
    let Some((limit, what)) = limit(cfg) else {
        return Ok(());
    };
    let engine = cfg.routing.engine.as_deref();
    let opa = cfg.switch.organisation == flitsim_sim::config::SwitchOrganisation::Opa;
    let rule = has_rule(cfg, topo) && crate::experiment::wants_rule(cfg).unwrap_or(false);
    let need = size
        .experiment_bytes(
            cfg.routing.vls,
            cfg.traffic.classes.len(),
            engine,
            opa,
            rule,
        )
        .saturating_add(flow_bytes(cfg, size.endpoints));
    if need > limit as u128 {
        let key = if what == "run.max_memory" {
            "run.max_memory"
        } else {
            "topology"
        };
        return Err(cfg.error(
            key,
            &format!(
                "the experiment would need about {} ({} switches, {} endpoints), more than {what} ({}); \
                 use a smaller fabric{}",
                human(need),
                size.switches,
                size.endpoints,
                human(limit as u128),
                if what == "run.max_memory" {
                    " or raise run.max_memory"
                } else {
                    ", or set run.max_memory to try anyway"
                }
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_from_the_config_match_the_generated_topology() {
        for text in [
            "kind = \"torus\"\nsides = [4, 6]\nendpoints_per_switch = 2\ntrunk = 2",
            "kind = \"mesh\"\nsides = [3, 3, 3]",
            "kind = \"kary_ntree\"\nk = 4\nn = 3",
            "kind = \"min\"\nendpoints = 128\nradix = 16",
            "kind = \"min\"\nendpoints = 96\nradix = 8",
        ] {
            let cfg = ExperimentConfig::parse(
                &format!("[topology]\n{text}\n[traffic]\nload = 0.1\n"),
                "t",
                &[],
                None,
            )
            .unwrap();
            let topo = crate::build_topology(&cfg, None).unwrap();
            let from_cfg = FabricSize::of_config(&cfg.topology).unwrap();
            let built = FabricSize::of_topology(&topo);
            assert_eq!(from_cfg.switches, built.switches, "{text}");
            assert_eq!(from_cfg.endpoints, built.endpoints, "{text}");
            // Meshes have fewer ports at their borders: the config's count is an upper bound.
            assert!(from_cfg.switch_ports >= built.switch_ports, "{text}");
            assert_eq!(from_cfg.max_ports, built.max_ports, "{text}");
        }
    }
}

#[cfg(test)]
mod refusal_tests {
    use crate::ExperimentConfig;

    const TORUS: &str = "[topology]\nkind = \"torus\"\nsides = [8, 8]\n[traffic]\nload = 0.1\n";

    /// The error of running `TORUS` with `sets`, which must come within 2 s (nothing built).
    fn refused_quickly(sets: &[&str]) -> String {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let cfg = ExperimentConfig::parse(TORUS, "exp.toml", &sets, None).unwrap();
        let started = std::time::Instant::now();
        let e = crate::run_experiment(&cfg, None).unwrap_err().to_string();
        let took = started.elapsed();
        assert!(took.as_secs() < 2, "took {took:?}");
        e
    }

    #[test]
    fn an_estimate_over_run_max_memory_is_refused_before_building() {
        let e = refused_quickly(&["topology.sides=[2048,2048]", "run.max_memory=\"1GiB\""]);
        assert!(
            e.contains("--set run.max_memory=\"1GiB\"")
                && e.contains("key `run.max_memory`")
                && e.contains("would need about")
                && e.contains("1.0 GiB"),
            "{e}"
        );
        // The same limit in the file names its line.
        let text = format!("{TORUS}[run]\nmax_memory = 1000\n");
        let cfg = ExperimentConfig::parse(&text, "exp.toml", &[], None).unwrap();
        let e = crate::run_experiment(&cfg, None).unwrap_err().to_string();
        assert!(
            e.contains("line 7,") && e.contains("key `run.max_memory`"),
            "{e}"
        );
    }

    #[test]
    fn a_4096_by_4096_torus_is_refused_quickly_on_this_machine() {
        // 16.8 M switches and endpoints: about 110 GiB of engine state even routed by rule.
        if super::available_memory().is_none_or(|m| m > 100 << 30) {
            return; // no /proc/meminfo, or a machine that could hold it
        }
        let e = refused_quickly(&["topology.sides=[4096,4096]"]);
        assert!(e.contains("available memory") && e.contains("GiB"), "{e}");
    }

    #[test]
    fn max_memory_is_not_in_the_hash_unless_set() {
        let a = ExperimentConfig::parse(TORUS, "a", &[], None).unwrap();
        assert!(!serde_json::to_string(&a).unwrap().contains("max_memory"));
        let b =
            ExperimentConfig::parse(TORUS, "a", &["run.max_memory=\"8GiB\"".into()], None).unwrap();
        assert_eq!(b.run.max_memory.unwrap().bytes(), Ok(8 << 30));
    }
}
