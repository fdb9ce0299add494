//! Putting an experiment together: from its configuration to a topology, the fabric's tables
//! (a routing engine, SC tables, or OpenSM dumps loaded from a directory) and a built
//! [`Network`], and running it.
use crate::config::{ExperimentConfig, Forwarding, TopologyConfig, VlAssignment, VoqswSlsKey};
use crate::ExperimentError;
use flitsim_manager::{cdg::CdgReport, FabricConfig, RoutingRequest};
use flitsim_sim::config::ScQosConfig;
use flitsim_sim::stats::BandwidthFlow;
use flitsim_sim::{Network, RunResult};
use flitsim_topology::{generators, Shape, Topology};
use std::path::Path;

/// Builds the topology an experiment describes; relative file paths start at `base_dir`.
pub fn build_topology(
    cfg: &ExperimentConfig,
    base_dir: Option<&Path>,
) -> Result<Topology, ExperimentError> {
    cfg.topology
        .validate()
        .map_err(|e| cfg.error(&e.key, &e.message))?;
    // Before generating: a huge fabric is refused here, without allocating it.
    crate::memory::check(cfg, None)?;
    let generated = !matches!(cfg.topology, TopologyConfig::File { .. });
    let topo = generate(cfg, base_dir).map_err(|e| match e {
        // A generator's parameters are the `[topology]` section's.
        ExperimentError::Topology(e) if generated => cfg.error("topology", &e.to_string()),
        e => e,
    })?;
    check_topology(cfg, &topo)?;
    if !generated {
        crate::memory::check(cfg, Some(&topo))?;
    }
    Ok(topo)
}

/// The checks that need the built fabric: endpoints to run on, and the traffic pattern's
/// needs (a power-of-two endpoint count for the bit patterns).
pub fn check_topology(cfg: &ExperimentConfig, topo: &Topology) -> Result<(), ExperimentError> {
    let n = topo.num_endpoints();
    if n == 0 {
        let key = match cfg.topology {
            TopologyConfig::File { .. } => "topology.path",
            _ => "topology",
        };
        return Err(cfg.error(key, "the topology has no endpoints"));
    }
    cfg.traffic
        .validate_endpoints(n)
        .map_err(|e| cfg.error(&e.key, &e.message))
}

fn generate(cfg: &ExperimentConfig, base_dir: Option<&Path>) -> Result<Topology, ExperimentError> {
    Ok(match &cfg.topology {
        TopologyConfig::Torus {
            sides,
            endpoints_per_switch,
            trunk,
            link_latency,
        } => generators::torus_or_mesh(sides, *endpoints_per_switch, *trunk, *link_latency, true)?,
        TopologyConfig::Mesh {
            sides,
            endpoints_per_switch,
            trunk,
            link_latency,
        } => generators::torus_or_mesh(sides, *endpoints_per_switch, *trunk, *link_latency, false)?,
        TopologyConfig::KaryNtree { k, n, link_latency } => {
            generators::kary_ntree(*k, *n, *link_latency)?
        }
        TopologyConfig::Min {
            endpoints,
            radix,
            link_latency,
        } => generators::folded_shuffle_min(*endpoints, *radix, *link_latency)?,
        TopologyConfig::Random {
            switches,
            ports,
            endpoints_per_switch,
            links,
            multi_links,
            seed,
            link_latency,
        } => generators::random(&generators::RandomParams {
            switches: *switches,
            ports: *ports,
            endpoints_per_switch: *endpoints_per_switch,
            links: *links,
            multi_links: *multi_links,
            latency: *link_latency,
            seed: seed.unwrap_or(cfg.seed),
        })?,
        TopologyConfig::File { path } => {
            let p = Path::new(path);
            let full = match base_dir {
                Some(b) if p.is_relative() => b.join(p),
                _ => p.to_path_buf(),
            };
            Topology::read_file(&full)?
        }
    })
}

/// Computes the fabric's tables with the configured (or default) routing engine, and their
/// channel-dependency verdict when `routing.verify` or `routing.require_deadlock_free` is set.
/// A relative `routing.tables` directory is taken from the current directory; see
/// [`build_fabric_at`].
pub fn build_fabric(
    cfg: &ExperimentConfig,
    topo: &Topology,
) -> Result<(FabricConfig, Option<CdgReport>), ExperimentError> {
    build_fabric_at(cfg, topo, None)
}

/// Loads the tables in `routing.tables` (OpenSM dumps; a relative directory starts at
/// `base_dir`) and gives them `routing.vls` VLs, which must cover the VLs they use.
fn load_tables(
    dir: &str,
    cfg: &ExperimentConfig,
    topo: &Topology,
    base_dir: Option<&Path>,
) -> Result<FabricConfig, ExperimentError> {
    let p = Path::new(dir);
    let full = match base_dir {
        Some(b) if p.is_relative() => b.join(p),
        _ => p.to_path_buf(),
    };
    let mut fabric = flitsim_manager::opensm::read_dir(topo, &full)?;
    if fabric.num_vls > cfg.routing.vls {
        return Err(ExperimentError::Assembly(format!(
            "routing.vls = {}: the tables in {} use {} VLs",
            cfg.routing.vls,
            full.display(),
            fabric.num_vls
        )));
    }
    fabric.num_vls = cfg.routing.vls;
    Ok(fabric)
}

/// [`build_fabric`] with relative paths (`routing.tables`) taken from `base_dir`. With
/// `routing.tables` set, the tables are loaded from that directory instead of running an
/// engine.
pub fn build_fabric_at(
    cfg: &ExperimentConfig,
    topo: &Topology,
    base_dir: Option<&Path>,
) -> Result<(FabricConfig, Option<CdgReport>), ExperimentError> {
    let rule = wants_rule(cfg)?;
    let assignment = cfg.routing.vl_assignment;
    if assignment != VlAssignment::Engine {
        let key = match assignment {
            VlAssignment::Voqsw => "voqsw",
            _ => "vn",
        };
        if cfg.qos.sc.is_some() {
            return Err(ExperimentError::Assembly(format!(
                "routing.vl_assignment = \"{key}\" fills the SL→VL tables itself and cannot be \
                 combined with qos.sc; drop one of them"
            )));
        }
        if cfg.traffic.classes.len() > 1 {
            return Err(ExperimentError::Assembly(format!(
                "routing.vl_assignment = \"{key}\" uses every SL for its own VL scheme, but the \
                 traffic has {} classes: use one class, or vl_assignment = \"engine\"",
                cfg.traffic.classes.len()
            )));
        }
    }
    let (fabric, engine) = match &cfg.routing.tables {
        Some(_) if cfg.qos.sc.is_some() => {
            return Err(ExperimentError::Assembly(
                "qos.sc: SC tables cannot be applied to loaded routing.tables (they carry their own SL→VL tables)".into(),
            ))
        }
        Some(dir) => (load_tables(dir, cfg, topo, base_dir)?, dir.clone()),
        None => {
            let engine = default_engine(cfg, topo);
            let arch_sc = architecture_sc(cfg)?;
            match cfg.qos.sc.as_ref().or(arch_sc.as_ref()) {
                None => {
                    let options = flitsim_manager::routing::EngineOptions {
                        lmc: cfg.routing.lmc,
                        ..Default::default()
                    };
                    let fabric = if assignment == VlAssignment::Engine {
                        let req = RoutingRequest {
                            vls: cfg.routing.vls,
                            classes: cfg.traffic.classes.len() as u8,
                        };
                        let by_rule = if rule {
                            flitsim_manager::routing::rule::route_computed(topo, &engine, &req)?
                        } else {
                            None
                        };
                        match by_rule {
                            Some(f) => f,
                            None if cfg.routing.forwarding == Forwarding::Computed => {
                                return Err(cfg.error(
                                    "routing.forwarding",
                                    &format!(
                                        "\"computed\": engine `{engine}` has no routing rule for \
                                         topology '{}' (rules: dor on tori and meshes, dmodk on \
                                         k-ary n-trees); use forwarding = \"tables\"",
                                        topo.name()
                                    ),
                                ))
                            }
                            None => flitsim_manager::routing::route_with(
                                topo, &engine, &req, &options,
                            )?,
                        }
                    } else {
                        fewest_vls(topo, &engine, cfg.routing.vls, &options)?
                    };
                    (fabric, engine)
                }
                Some(sc) => (sc_fabric(cfg, topo, &engine, sc)?, engine),
            }
        }
    };
    let fabric = assign_vls(cfg, topo, fabric)?;
    if !(cfg.routing.verify || cfg.routing.require_deadlock_free) {
        return Ok((fabric, None));
    }
    let report = flitsim_manager::cdg::verify(topo, &fabric)?;
    if cfg.routing.require_deadlock_free && !report.deadlock_free {
        let cycle = report
            .cycle
            .clone()
            .unwrap_or_default()
            .iter()
            .map(|c| {
                format!(
                    "{}:{}/vl{}",
                    topo.switches()[c.switch.0 as usize].name,
                    c.port,
                    c.vl
                )
            })
            .collect::<Vec<_>>()
            .join(" -> ");
        return Err(ExperimentError::Assembly(format!(
                "routing.require_deadlock_free: the {engine} tables have a channel dependency cycle: {cycle}"
            )));
    }
    Ok((fabric, Some(report)))
}

/// Whether the experiment routes by the engine's rule where it has one: with
/// `routing.forwarding = "computed"` (an error when another key needs stored tables), or
/// `"auto"` when nothing needs the tables. The rule is as fast per packet as a table lookup
/// on small fabrics and faster on large ones, whose tables miss the cache
/// (`docs/performance.md`), and it needs no memory to speak of.
pub fn wants_rule(cfg: &ExperimentConfig) -> Result<bool, ExperimentError> {
    let r = &cfg.routing;
    let needs_tables = [
        (r.tables.is_some(), "routing.tables"),
        (r.lmc > 0, "routing.lmc"),
        (
            r.vl_assignment != VlAssignment::Engine,
            "routing.vl_assignment",
        ),
        (cfg.qos.sc.is_some(), "qos.sc"),
        (cfg.qos.architecture.is_some(), "qos.architecture"),
    ]
    .into_iter()
    .find_map(|(on, key)| on.then_some(key));
    match (r.forwarding, needs_tables) {
        (Forwarding::Tables, _) => Ok(false),
        (Forwarding::Auto, needs) => Ok(needs.is_none()),
        (Forwarding::Computed, None) => Ok(true),
        (Forwarding::Computed, Some(key)) => Err(cfg.error(
            "routing.forwarding",
            &format!(
                "\"computed\" keeps no forwarding or path SL tables, but {key} needs them; use \
                 forwarding = \"tables\" or \"auto\""
            ),
        )),
    }
}

/// One class routed with as few VLs as the engine accepts (1, 2, … up to `vls`), so that VOQsw
/// and virtual networks split as few routing VLs as possible: engines spread spare VLs
/// (DOR's datelines over all of them), which would leave nothing to split.
fn fewest_vls(
    topo: &Topology,
    engine: &str,
    vls: u8,
    options: &flitsim_manager::routing::EngineOptions,
) -> Result<FabricConfig, ExperimentError> {
    let mut v = 1;
    loop {
        let req = RoutingRequest { vls: v, classes: 1 };
        match flitsim_manager::routing::route_with(topo, engine, &req, options) {
            Err(flitsim_manager::RoutingError::NotEnoughVls(_)) if v < vls => v += 1,
            other => return Ok(other?),
        }
    }
}

/// `routing.vl_assignment`: the engine's SL→VL tables as they are, VOQsw's, or virtual
/// networks over the same forwarding tables.
fn assign_vls(
    cfg: &ExperimentConfig,
    topo: &Topology,
    fabric: FabricConfig,
) -> Result<FabricConfig, ExperimentError> {
    use flitsim_manager::qos::voqsw;
    let vls = cfg.routing.vls;
    let bad = |key: &str, e: flitsim_manager::RoutingError| {
        ExperimentError::Assembly(format!("routing.vl_assignment = \"{key}\": {e}"))
    };
    match cfg.routing.vl_assignment {
        VlAssignment::Engine => Ok(fabric),
        VlAssignment::Vn => {
            let key = match cfg.routing.vn_by {
                crate::config::VnBy::Destination => voqsw::VnKey::Destination,
                crate::config::VnBy::Source => voqsw::VnKey::Source,
            };
            voqsw::virtual_networks_by(topo, &fabric, vls, key).map_err(|e| bad("vn", e))
        }
        VlAssignment::Voqsw => {
            let sls = match cfg.routing.voqsw_sls {
                None => voqsw::VoqswSls::Limit(8),
                Some(VoqswSlsKey::Count(n)) => voqsw::VoqswSls::Limit(n as usize),
                Some(VoqswSlsKey::Full(_)) => voqsw::VoqswSls::Full,
            };
            let mut v = voqsw::analyse(topo, &fabric, sls).map_err(|e| bad("voqsw", e))?;
            if cfg.routing.voqsw_spread {
                v.spread_unconstrained();
            }
            v.tables(topo, &fabric, vls).map_err(|e| bad("voqsw", e))
        }
    }
}

/// The SC tables that lay out the VCs of `qos.architecture` (when `qos.sc` is not given): the
/// routing lanes are `routing.vls / VCs`, and class `c` takes, in VC `vc(c)`, the VLs
/// `vc · lanes + lane` — VC-major, so ascending VLs are the VCs in priority order. Two-VC
/// architectures put the regulated classes (`qos.class[c].regulated`) in VC 0 and the others
/// in VC 1; `traditional_4vc` gives every class its own VC, class 0 first.
fn architecture_sc(cfg: &ExperimentConfig) -> Result<Option<ScQosConfig>, ExperimentError> {
    let Some(a) = cfg.qos.architecture else {
        return Ok(None);
    };
    if cfg.qos.sc.is_some() {
        return Ok(None);
    }
    let classes = cfg.traffic.classes.len();
    let name = a.name();
    if cfg.qos.classes.len() != classes {
        return Err(ExperimentError::Assembly(format!(
            "qos.class: qos.architecture = \"{name}\" needs one [[qos.class]] per traffic class \
             ({classes}), in class order; found {}",
            cfg.qos.classes.len()
        )));
    }
    let vcs = a.vcs(classes);
    let lanes = cfg.routing.vls as usize / vcs;
    if lanes == 0 {
        return Err(ExperimentError::Assembly(format!(
            "routing.vls = {}: qos.architecture = \"{name}\" needs at least {vcs} VLs (one per \
             VC)",
            cfg.routing.vls
        )));
    }
    let vc_of = |c: usize| match a {
        flitsim_sim::config::QosArchitecture::Traditional4vc => c,
        _ => usize::from(!cfg.qos.classes[c].regulated),
    };
    // Each class has its own SCs (an SC carries one SL): SC `c · lanes + lane` → VL
    // `vc(c) · lanes + lane`.
    Ok(Some(ScQosConfig {
        sl2sc: (0..classes)
            .map(|c| (0..lanes).map(|l| (c * lanes + l) as u8).collect())
            .collect(),
        sc2vl: (0..classes * lanes)
            .map(|sc| (vc_of(sc / lanes) * lanes + sc % lanes) as u8)
            .collect(),
    }))
}

/// Routes one class over as many VLs as the SC tables have lanes, then maps SLs to SCs to VLs.
fn sc_fabric(
    cfg: &ExperimentConfig,
    topo: &Topology,
    engine: &str,
    sc: &ScQosConfig,
) -> Result<FabricConfig, ExperimentError> {
    let mut tables = flitsim_manager::qos::ScTables {
        sl2sc: sc.sl2sc.clone(),
        sc2vl: sc.sc2vl.clone(),
    };
    let names: Vec<String> = cfg.traffic.classes.iter().map(|c| c.name.clone()).collect();
    if cfg.traffic.management_class().is_some() && tables.sl2sc.len() + 1 == names.len() {
        // The management class (the last) has no row: SC15 is not among the data SCs. Give it
        // SCs of its own on VL 0 for the routing; the engine moves it to the management VL.
        let lanes = tables.sl2sc.first().map_or(1, Vec::len);
        let first = tables.sc2vl.len();
        if first + lanes > 256 {
            return Err(ExperimentError::Assembly(format!(
                "qos.sc.sc2vl: {first} SCs leave no room for the management class's SCs"
            )));
        }
        tables
            .sl2sc
            .push((first..first + lanes).map(|sc| sc as u8).collect());
        tables.sc2vl.extend(std::iter::repeat_n(0, lanes));
    }
    let bad = |e: flitsim_manager::RoutingError| ExperimentError::Assembly(e.to_string());
    if tables.sl2sc.len() != names.len() {
        let mgmt = if cfg.traffic.management_class().is_some() {
            "; the management class may be left out"
        } else {
            ""
        };
        return Err(ExperimentError::Assembly(format!(
            "qos.sc.sl2sc: {} rows for {} traffic classes (one row of SCs per SL{mgmt})",
            tables.sl2sc.len(),
            names.len()
        )));
    }
    tables.check(cfg.routing.vls, &names).map_err(bad)?;
    let lanes = tables.lanes().map_err(bad)?;
    let req = RoutingRequest {
        vls: lanes,
        classes: 1,
    };
    let options = flitsim_manager::routing::EngineOptions {
        lmc: cfg.routing.lmc,
        ..Default::default()
    };
    let single = flitsim_manager::routing::route_with(topo, engine, &req, &options)?;
    flitsim_manager::qos::apply_sc_tables(&single, &tables, cfg.routing.vls).map_err(bad)
}

/// The configured engine, or the default for the topology's shape.
fn default_engine(cfg: &ExperimentConfig, topo: &Topology) -> String {
    cfg.routing
        .engine
        .clone()
        .unwrap_or_else(|| engine_for_shape(topo).to_string())
}

/// The default routing engine of a topology's shape: `dor` on a torus, `dmodk` on a k-ary
/// n-tree, `ftree` on an XGFT, `minhop` otherwise.
pub fn engine_for_shape(topo: &Topology) -> &'static str {
    match topo.shape() {
        Shape::Torus { .. } => "dor",
        Shape::KaryNTree { .. } => "dmodk",
        Shape::Xgft { .. } => "ftree",
        Shape::Irregular => "minhop",
    }
}

/// Every flow's `path` is one the fabric offers (the engine checks it too; here the error
/// points at the file).
fn check_flow_paths(
    cfg: &ExperimentConfig,
    fabric: &flitsim_manager::FabricConfig,
) -> Result<(), ExperimentError> {
    let k = fabric.num_paths();
    for (i, f) in cfg.traffic.flows.iter().enumerate() {
        if let Some(p) = f.path.filter(|&p| p as usize >= k) {
            return Err(cfg.error(
                &format!("traffic.flow[{i}].path"),
                &format!(
                    "{p}: the fabric offers {k} path{} per destination (0..={})",
                    if k == 1 { "" } else { "s" },
                    k - 1
                ),
            ));
        }
    }
    Ok(())
}

/// With `nic.rate_control`, runs the bandwidth manager over the explicit flows that `reserve`
/// or are `best_effort`, in file order (all premium flows first, so that a best-effort flow's
/// share is the final one): admitted flows get their IDT, refused ones — and best-effort
/// flows left without a share — are kept (flow ids stay the file's) but generate nothing
/// (`stop = start`). Returns the engine's parameters and the verdicts (`None` when no flow is
/// managed). A flow's B_max is its packet size (the class MTU, or its largest message if
/// smaller) per T, so its IDT is that packet size over the rate it is given.
/// The engine's parameters with the managed flows' IDTs, the bandwidth report, and the IDT
/// changes (cycle, flow, IDT) of a dynamic scenario.
type Managed = (
    flitsim_sim::SimParams,
    Option<Vec<BandwidthFlow>>,
    Vec<(u64, u32, f64)>,
);

fn manage_bandwidth(
    cfg: &ExperimentConfig,
    topo: &Topology,
    fabric: &FabricConfig,
) -> Result<Managed, ExperimentError> {
    use flitsim_manager::bandwidth::{BandwidthError, BandwidthManager, BandwidthParams, Via};
    use flitsim_sim::stats::IdtChange;
    let mut params = cfg.params();
    let flows = &cfg.traffic.flows;
    if !cfg.nic.rate_control || !flows.iter().any(|f| f.reserve.is_some() || f.best_effort) {
        return Ok((params, None, Vec::new()));
    }
    let t = cfg.nic.dispatch_time as f64;
    let specs = cfg.traffic.expand_flows(topo.num_endpoints(), cfg.seed);
    let key = |i: usize| {
        let f = &flows[i];
        format!(
            "traffic.flow[{i}].{}",
            if f.best_effort {
                "best_effort"
            } else {
                "reserve"
            }
        )
    };
    // Each managed flow's packet size (its B_max is that per T).
    let mut mtu = vec![0.0; flows.len()];
    for (i, f) in flows.iter().enumerate() {
        if f.reserve.is_none() && !f.best_effort {
            continue;
        }
        let s = &specs[i];
        let class = &cfg.traffic.classes[s.class as usize];
        let max = s.size.max_flits().unwrap_or(u32::MAX);
        let m = class.mtu_flits.unwrap_or(max).min(max);
        if m == u32::MAX {
            return Err(cfg.error(
                &key(i),
                "the flow's packets have no upper bound (give the class an mtu_flits)",
            ));
        }
        mtu[i] = m as f64;
        if let Some(r) = f.reserve.filter(|&r| r > m as f64 / t * (1.0 + 1e-12)) {
            return Err(cfg.error(
                &key(i),
                &format!(
                    "{r} flits/cycle exceeds the flow's peak B_max = MTU/T = {m}/{t} = {} \
                     flits/cycle",
                    m as f64 / t
                ),
            ));
        }
    }
    let b_mtu = mtu.iter().copied().fold(0.0, f64::max);
    let mut m = BandwidthManager::new(
        topo,
        Some(fabric),
        BandwidthParams {
            dispatch_time: t,
            mtu: b_mtu,
            node_capacity: None,
        },
    )
    .map_err(|e| cfg.error("nic.dispatch_time", &e.to_string()))?;
    // Allocation changes happen when managed flows start (premium requests in file order,
    // then best-effort flows) and stop (released first, so a flow starting in the same cycle
    // finds the capacity). After each change every active flow's rate is recomputed; the
    // flows that started get their IDT at once, the others after `update_delay`.
    let delay = cfg.bandwidth_manager.as_ref().map_or(0, |b| b.update_delay);
    let managed: Vec<usize> = (0..flows.len())
        .filter(|&i| flows[i].reserve.is_some() || flows[i].best_effort)
        .collect();
    let mut times: Vec<u64> = managed
        .iter()
        .flat_map(|&i| std::iter::once(flows[i].start).chain(flows[i].stop))
        .collect();
    times.sort_unstable();
    times.dedup();
    let mut out: Vec<Option<BandwidthFlow>> = vec![None; flows.len()];
    let mut ids: Vec<Option<u64>> = vec![None; flows.len()];
    let mut current: Vec<Option<f64>> = vec![None; flows.len()];
    let mut schedule: Vec<(u64, u32, f64)> = Vec::new();
    for &now in &times {
        for &i in &managed {
            if flows[i].stop == Some(now) {
                if let Some(id) = ids[i].take() {
                    m.release(id)
                        .map_err(|e| cfg.error(&key(i), &e.to_string()))?;
                }
            }
        }
        let starting = managed
            .iter()
            .copied()
            .filter(|&i| flows[i].reserve.is_some())
            .chain(managed.iter().copied().filter(|&i| flows[i].best_effort))
            .filter(|&i| flows[i].start == now);
        for i in starting {
            let (f, s) = (&flows[i], &specs[i]);
            let via = match &s.route {
                Some(r) => Via::Route(r.clone()),
                None => Via::Tables {
                    class: s.class,
                    path: s.path as usize,
                },
            };
            let mut v = BandwidthFlow {
                flow: i as u32,
                src: f.src,
                dst: f.dst,
                best_effort: f.best_effort,
                requested: f.reserve,
                admitted: false,
                granted: 0.0,
                idt: None,
                refused_by: None,
                accepted_rate: None,
                changes: Vec::new(),
            };
            let got = match f.reserve {
                Some(r) => m.allocate_via(f.src, f.dst, r, &via).map(|a| a.id),
                None => m.add_best_effort_via(f.src, f.dst, &via),
            };
            match got {
                Ok(id) => {
                    v.admitted = true;
                    ids[i] = Some(id);
                }
                Err(BandwidthError::Refused(r)) => {
                    v.refused_by = Some((&r).into());
                    params.traffic.flows[i].stop = Some(f.start);
                }
                Err(e) => return Err(cfg.error(&key(i), &e.to_string())),
            }
            out[i] = Some(v);
        }
        for &i in &managed {
            let Some(id) = ids[i] else { continue };
            let granted = m.flow(id).map_or(0.0, |x| x.rate);
            // B_max of this flow is mtu / T, so IDT = T · B_max / rate = mtu / rate (≥ T).
            let b_max = mtu[i] / t;
            let rate = granted.min(b_max);
            let idt = (rate > flitsim_manager::bandwidth::EPS)
                .then(|| flitsim_manager::bandwidth::idt(t, b_max, rate).max(t));
            let v = out[i].as_mut().expect("an active flow has started");
            if flows[i].start == now {
                v.granted = rate;
                v.idt = idt;
                match idt {
                    Some(x) => params.traffic.flows[i].idt = Some(x),
                    // No share yet: the flow waits for one (or sends nothing).
                    None if times.iter().any(|&x| x > now) => {
                        params.traffic.flows[i].idt = Some(t);
                        schedule.push((now, i as u32, f64::INFINITY));
                    }
                    None => params.traffic.flows[i].stop = Some(flows[i].start),
                }
            } else if idt != current[i] {
                let at = now + delay;
                schedule.push((at, i as u32, idt.unwrap_or(f64::INFINITY)));
                v.changes.push(IdtChange {
                    cycle: at,
                    granted: rate,
                    idt,
                });
            }
            current[i] = idt;
        }
    }
    let out: Vec<BandwidthFlow> = out.into_iter().flatten().collect();
    Ok((params, Some(out), schedule))
}

/// Admission control's report (as JSON) and, per flow, its path (`None`: refused).
type Admission = (serde_json::Value, Vec<Option<u8>>);

/// With `qos.admission_limit`: admits the flows of regulated classes (every flow without
/// `[[qos.class]]`) in flow order, each on its least occupied path; returns the report and, per
/// flow, its path or `None` when refused.
fn admission_control(
    cfg: &ExperimentConfig,
    topo: &Topology,
    fabric: &FabricConfig,
) -> Result<Option<Admission>, ExperimentError> {
    use flitsim_manager::cac::{admit, FlowRequest};
    let Some(limit) = cfg.qos.admission_limit else {
        return Ok(None);
    };
    let specs = cfg.traffic.expand_flows(topo.num_endpoints(), cfg.seed);
    let regulated = |c: u8| {
        cfg.qos.classes.is_empty() || cfg.qos.classes.get(c as usize).is_some_and(|q| q.regulated)
    };
    let requests: Vec<FlowRequest> = specs
        .iter()
        .map(|f| {
            if regulated(f.class) {
                FlowRequest::qos(f.src, f.dst, f.rate)
            } else {
                FlowRequest::unregulated(f.src, f.dst, f.rate)
            }
        })
        .collect();
    let report = admit(topo, fabric, &requests, limit)
        .map_err(|e| cfg.error("qos.admission_limit", &e.to_string()))?;
    let mut decisions: Vec<Option<u8>> = specs.iter().map(|f| Some(f.path as u8)).collect();
    for a in &report.admitted {
        decisions[a.flow] = Some(a.path as u8);
    }
    for r in &report.rejected {
        decisions[r.flow] = None;
    }
    let json =
        serde_json::to_value(&report).map_err(|e| ExperimentError::Assembly(e.to_string()))?;
    Ok(Some((json, decisions)))
}

/// Runs a parsed experiment.
pub fn run_experiment(
    cfg: &ExperimentConfig,
    base_dir: Option<&Path>,
) -> Result<RunResult, ExperimentError> {
    let started = std::time::Instant::now();
    let topo = build_topology(cfg, base_dir)?;
    let (fabric, cdg) = build_fabric_at(cfg, &topo, base_dir)?;
    check_flow_paths(cfg, &fabric)?;
    let (params, mut bandwidth, idt_changes) = manage_bandwidth(cfg, &topo, &fabric)?;
    let admission = admission_control(cfg, &topo, &fabric)?;
    let routing_seconds = started.elapsed().as_secs_f64();
    let mut net = Network::build(&params, &topo, fabric)?;
    if !idt_changes.is_empty() {
        net.schedule_idts(&idt_changes)?;
    }
    if let Some((_, decisions)) = &admission {
        net.admit_flows(decisions)?;
    }
    let mut result = net.run()?;
    result.performance.routing_seconds = routing_seconds;
    result.performance.build_seconds += routing_seconds;
    result.cdg = cdg;
    result.admission = admission.map(|(report, _)| report);
    if let Some(b) = &mut bandwidth {
        for v in b.iter_mut() {
            v.accepted_rate = result
                .flows
                .as_ref()
                .and_then(|f| f.get(v.flow as usize))
                .and_then(|f| f.accepted_rate);
        }
    }
    result.bandwidth = bandwidth;
    if let Some(units) = &cfg.units {
        units.add_physical(&mut result);
    }
    Ok(result)
}

/// Parses TOML text (with overrides and seed) and runs it. `origin` is the file name used in
/// error messages and the base for relative paths when it names a file.
pub fn run_experiment_str(
    text: &str,
    origin: &str,
    sets: &[String],
    seed: Option<u64>,
) -> Result<RunResult, ExperimentError> {
    let cfg = ExperimentConfig::parse(text, origin, sets, seed)?;
    let base = Path::new(origin).parent().filter(|p| p.exists());
    run_experiment(&cfg, base)
}

/// The topology an experiment given as TOML text builds (overrides applied), as flitsim
/// topology JSON, without routing or running it. What `flitsim view` draws a result on.
pub fn experiment_topology_json(
    text: &str,
    origin: &str,
    sets: &[String],
) -> Result<String, ExperimentError> {
    let cfg = ExperimentConfig::parse(text, origin, sets, None)?;
    let base = Path::new(origin).parent().filter(|p| p.exists());
    Ok(build_topology(&cfg, base)?.to_json())
}

/// Validates an experiment without running it and returns, as JSON, its `config_hash` and
/// the resolved configuration (defaults filled in, overrides and seed applied).
pub fn resolve_experiment_json(
    text: &str,
    origin: &str,
    sets: &[String],
    seed: Option<u64>,
) -> Result<String, ExperimentError> {
    let cfg = ExperimentConfig::parse(text, origin, sets, seed)?;
    Ok(
        serde_json::json!({ "config_hash": cfg.hash(), "seed": cfg.seed, "config": cfg })
            .to_string(),
    )
}

/// Runs one experiment given as TOML text and returns its summary as a JSON string.
/// `origin` names the file in error messages; `sets` are `key=value` overrides; `seed`
/// overrides the config's seed.
pub fn run_experiment_json(
    text: &str,
    origin: &str,
    sets: &[String],
    seed: Option<u64>,
) -> Result<String, ExperimentError> {
    let r = run_experiment_str(text, origin, sets, seed)?;
    Ok(serde_json::to_string(&r).expect("results serialise"))
}
