//! Resolves the `[qos]` section of an experiment into the scheduler every port runs.
//!
//! `rr` is the baseline of Cano-Cano et al. 2022 (`shared/papers/000_942770a54f7010fd.txt`,
//! §3.1): an SBT table with equal weights. `sbt` takes one weight per class (default: the
//! classes' shares in percent). `dtable` builds the arbitration table with the DTable
//! configuration methodology and bandwidth correction (§3.3.2–3.3.3) from each class's MTU,
//! maximum entry distance and share. Weights are in flits.
use crate::config::{DTableEntryConfig, QosScheduler, SchedulerConfig, SimParams};
use flitsim_manager::qos::{configure_dtable, DTable, DTableParams, SlRequirement};

/// The scheduler of switch ports and of NICs, and the DTable report when one was computed.
pub struct PortSchedulers {
    /// Scheduler of every switch output port.
    pub switch: SchedulerConfig,
    /// Scheduler of every NIC.
    pub nic: SchedulerConfig,
    /// The configured DTable (with `qos.scheduler = "dtable"`).
    pub dtable: Option<DTable>,
}

/// Shares of the classes: `qos.dtable.shares`, else the traffic shares, normalised.
fn class_shares(cfg: &SimParams) -> Vec<f64> {
    let shares: Vec<f64> = cfg.traffic.data_classes().map(|c| c.share).collect();
    let total: f64 = shares.iter().sum();
    shares.iter().map(|s| s / total).collect()
}

/// Resolves the schedulers; `mtu[c]` is class c's MTU in flits. Errors name the key.
///
/// A management class (`traffic.class[…].management`, always the last class) has no place in
/// the tables: `qos.sbt.weights`, `qos.dtable.max_distance` and `qos.dtable.shares` list the
/// data classes only, and its SBT weight is 0 (the engine serves its VL before consulting the
/// scheduler, which never sees it).
pub fn resolve(cfg: &SimParams, mtu: &[u32]) -> Result<PortSchedulers, String> {
    let classes = cfg.traffic.data_classes().count();
    let mgmt = cfg.traffic.management_class().is_some();
    // The SBT weight vector covers every SL the engine knows: 0 for the management class.
    let with_mgmt = |mut w: Vec<u32>| {
        if mgmt {
            w.push(0);
        }
        w
    };
    let q = &cfg.qos;
    let both = |s: SchedulerConfig| PortSchedulers {
        switch: s.clone(),
        nic: s,
        dtable: None,
    };
    if let Some(m) = cfg.traffic.management_class() {
        if q.architecture.is_some() || q.deadlines() {
            return Err(format!(
                "traffic.class[{m}].management: cannot be combined with deadline-based QoS \
                 (qos.architecture, [[qos.class]]), which orders the VLs by deadline itself"
            ));
        }
    }
    if let Some(a) = q.architecture {
        if q.scheduler != QosScheduler::None {
            return Err(format!(
                "qos.scheduler: cannot be combined with qos.architecture = \"{}\", which sets \
                 the schedulers itself (strict priority among VCs); drop one of them",
                a.name()
            ));
        }
        // Every VL in ascending order (the engine lists them all): the VCs are numbered in
        // priority order (VC 0, the regulated one, first) and laid out VC-major over the
        // routing lanes.
        return Ok(both(SchedulerConfig::StrictPriority { order: vec![0] }));
    }
    Ok(match q.scheduler {
        QosScheduler::None => PortSchedulers {
            switch: cfg.switch.scheduler.clone(),
            nic: cfg.nic.scheduler.clone(),
            dtable: None,
        },
        QosScheduler::Rr => both(SchedulerConfig::Sbt {
            weights: with_mgmt(vec![1; classes]),
        }),
        QosScheduler::Sbt => {
            let weights = match &q.sbt {
                Some(s) => s.weights.clone(),
                None => class_shares(cfg)
                    .iter()
                    .map(|s| (s * 100.0).round().max(1.0) as u32)
                    .collect(),
            };
            if weights.len() != classes {
                return Err(format!(
                    "qos.sbt.weights: {} weights for {classes} traffic classes",
                    weights.len()
                ));
            }
            both(SchedulerConfig::Sbt {
                weights: with_mgmt(weights),
            })
        }
        QosScheduler::Dtable => {
            let d = q
                .dtable
                .as_ref()
                .ok_or("qos.dtable: required with qos.scheduler = \"dtable\"")?;
            if d.max_distance.len() != classes {
                return Err(format!(
                    "qos.dtable.max_distance: {} distances for {classes} traffic classes",
                    d.max_distance.len()
                ));
            }
            let shares = match &d.shares {
                Some(s) if s.len() != classes => {
                    return Err(format!(
                        "qos.dtable.shares: {} shares for {classes} traffic classes",
                        s.len()
                    ))
                }
                Some(s) => s.clone(),
                None => class_shares(cfg),
            };
            let gmtu = d
                .gmtu
                .unwrap_or_else(|| mtu[..classes].iter().copied().max().unwrap_or(1));
            let params = DTableParams {
                entries: d.entries,
                gmtu,
                w: d.w,
                k: d.k,
                unit_bytes: 64,
            };
            let sls: Vec<SlRequirement> = cfg
                .traffic
                .data_classes()
                .enumerate()
                .map(|(i, c)| SlRequirement {
                    name: c.name.clone(),
                    max_distance: d.max_distance[i],
                    mtu: mtu[i],
                    share: shares[i],
                })
                .collect();
            let table = configure_dtable(&params, &sls).map_err(|e| format!("qos.dtable: {e}"))?;
            let entries = table
                .table
                .iter()
                .filter(|(name, w)| !name.is_empty() && *w > 0)
                .map(|(name, weight)| DTableEntryConfig {
                    sl: cfg
                        .traffic
                        .classes
                        .iter()
                        .position(|c| &c.name == name)
                        .expect("class name") as u8,
                    weight: *weight,
                })
                .collect();
            let s = SchedulerConfig::Dtable {
                entries,
                atomic: d.atomic,
            };
            PortSchedulers {
                switch: s.clone(),
                nic: s,
                dtable: Some(table),
            }
        }
        QosScheduler::VlArb => {
            let v = q
                .vlarb
                .as_ref()
                .ok_or("qos.vlarb: required with qos.scheduler = \"vl_arb\"")?;
            both(SchedulerConfig::VlArb {
                high: v.high.clone(),
                low: v.low.clone(),
                limit_of_high_priority: v.limit_of_high_priority,
            })
        }
    })
}
