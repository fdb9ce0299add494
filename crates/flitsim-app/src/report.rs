//! What the `flitsim topo`, `flitsim route` and `flitsim ebb` commands compute, as plain Rust
//! returning JSON: loading a topology from a file or a generator spec, topology facts,
//! routing with a verified channel dependency graph and hop statistics, OpenSM dumps, and
//! the effective bisection bandwidth. The Python bindings only convert arguments.
//!
//! ```
//! use flitsim_app::report;
//! let json = report::route_json("torus:4x4", "dor", 2, 1, None, None).unwrap();
//! let v: serde_json::Value = serde_json::from_str(&json).unwrap();
//! assert_eq!(v["deadlock_free"], true);
//! assert_eq!(v["max_hops"], 4);
//! ```
use flitsim_manager::cdg::{self, CdgReport};
use flitsim_manager::qos::voqsw::{self, VoqswReport, VoqswSls};
use flitsim_manager::routing::{route_with, CycleHeuristic, EngineOptions, RoutingRequest};
use flitsim_manager::{ebb, opensm, FabricConfig, RoutingError, NO_ROUTE};
use flitsim_topology::{
    generators, Bfs, EndpointId, NodeId, Shape, SwitchId, Topology, TopologyError,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

/// Errors of the report functions; the message is meant for the user as is.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The topology could not be read or generated.
    #[error("{0}")]
    Topology(#[from] TopologyError),
    /// Routing failed, or tables could not be read or written.
    #[error("{0}")]
    Routing(#[from] RoutingError),
    /// A bad argument.
    #[error("{0}")]
    Invalid(String),
    /// Stopped by [`flitsim_topology::cancel::request`] (Ctrl-C).
    #[error("interrupted")]
    Cancelled(#[from] flitsim_topology::cancel::Cancelled),
}

/// Loads a topology named by `spec_or_path`: an existing file is read with
/// [`Topology::read_file`] (flitsim JSON, an ibnetdiscover dump or an ibsim net file, told
/// apart by content, whatever the file is called); anything else is a generator spec for [`generators::from_spec`] (`torus:6x6`, `kary-ntree:k=8,n=3`,
/// …).
pub fn load_topology(spec_or_path: &str) -> Result<Topology, ReportError> {
    let p = Path::new(spec_or_path);
    if p.is_file() {
        return Ok(Topology::read_file(p)?);
    }
    if p.is_dir() {
        return Err(ReportError::Invalid(format!(
            "{spec_or_path} is a directory, not a topology file"
        )));
    }
    let looks_like_path = spec_or_path.contains('/')
        || spec_or_path.contains('\\')
        || [".json", ".topo", ".net", ".txt", ".lst"]
            .iter()
            .any(|x| spec_or_path.to_ascii_lowercase().ends_with(x));
    if looks_like_path && !spec_or_path.contains(':') {
        return Err(ReportError::Invalid(format!(
            "{spec_or_path}: no such file (and it is not a generator spec such as torus:4x4)"
        )));
    }
    generators::from_spec(spec_or_path).map_err(|e| {
        ReportError::Invalid(format!(
            "'{spec_or_path}' is neither an existing topology file nor a valid generator spec: {e}"
        ))
    })
}

/// Facts about a topology (`flitsim topo info`).
#[derive(Clone, Debug, Serialize)]
pub struct TopoInfo {
    /// Topology name.
    pub name: String,
    /// Number of switches.
    pub switches: usize,
    /// Number of endpoints.
    pub endpoints: usize,
    /// Switch-to-switch links (parallel links counted each).
    pub inter_switch_links: usize,
    /// Fewest ports of a switch.
    pub ports_min: u32,
    /// Most ports of a switch.
    pub ports_max: u32,
    /// Every switch reaches every other.
    pub connected: bool,
    /// Largest shortest-path distance between two switches, in switch-to-switch links
    /// (`None` when not connected).
    pub diameter: Option<u32>,
    /// The structure: `{"kind": "torus" | "mesh", "dims": [...], …}`, `{"kind": "fat_tree",
    /// "levels": n, …}` or `{"kind": "irregular"}`; see [`shape_json`].
    pub shape: serde_json::Value,
}

/// The `shape` of `topo info`: the generator's shape, or a torus or mesh recognised from the
/// links ([`flitsim_topology::detect_torus`]; `"detected": true`), else irregular (with the
/// `reason` it is no torus or mesh).
///
/// - torus / mesh: `kind`, `dims` (side per dimension), `wrap`, `endpoints_per_switch` (0 when
///   it varies), `trunk` (parallel links between neighbours), `sides` (= `dims`), `detected`;
/// - k-ary n-tree / XGFT: `kind: "fat_tree"`, `levels` (switch levels), `family`
///   (`kary_n_tree` with `k`, `n`; `xgft` with `h`, `m`, `w`);
/// - otherwise `kind: "irregular"` and `reason`.
pub fn shape_json(topo: &Topology) -> serde_json::Value {
    use serde_json::json;
    let torus = |sides: &[u32], wrap: bool, eps: u32, trunk: u32, detected: bool| {
        json!({
            "kind": if wrap { "torus" } else { "mesh" },
            "dims": sides,
            "wrap": wrap,
            "endpoints_per_switch": eps,
            "trunk": trunk,
            "sides": sides,
            "detected": detected,
        })
    };
    match topo.shape() {
        Shape::Torus {
            sides,
            wrap,
            endpoints_per_switch,
            trunk,
        } => torus(sides, *wrap, *endpoints_per_switch, *trunk, false),
        Shape::KaryNTree { k, n } => json!({
            "kind": "fat_tree", "levels": n, "family": "kary_n_tree", "k": k, "n": n,
        }),
        Shape::Xgft { h, m, w } => json!({
            "kind": "fat_tree", "levels": h, "family": "xgft", "h": h, "m": m, "w": w,
        }),
        Shape::Irregular => match flitsim_topology::detect_torus(topo) {
            Ok(l) => torus(&l.sides, l.wrap, l.endpoints_per_switch, l.trunk, true),
            Err(reason) => json!({ "kind": "irregular", "reason": reason }),
        },
    }
}

/// Computes [`TopoInfo`] (the diameter by a breadth-first search from every switch, in
/// parallel). Fails only when cancelled ([`flitsim_topology::cancel`]).
pub fn topo_info(topo: &Topology) -> Result<TopoInfo, ReportError> {
    let inter = topo
        .links()
        .iter()
        .filter(|l| matches!((l.a.node, l.b.node), (NodeId::Switch(_), NodeId::Switch(_))))
        .count();
    let ports = topo.switches().iter().map(|s| s.ports as u32);
    let connected = topo.is_connected();
    let diameter = if connected {
        let eccentricities: Vec<u32> = (0..topo.num_switches() as u32)
            .into_par_iter()
            .map_init(Bfs::default, |bfs, s| {
                flitsim_topology::cancel::check()?;
                Ok(bfs.switches(topo, [s]).iter().copied().max().unwrap_or(0))
            })
            .collect::<Result<_, flitsim_topology::cancel::Cancelled>>()?;
        Some(eccentricities.into_iter().max().unwrap_or(0))
    } else {
        None
    };
    Ok(TopoInfo {
        name: topo.name().to_string(),
        switches: topo.num_switches(),
        endpoints: topo.num_endpoints(),
        inter_switch_links: inter,
        ports_min: ports.clone().min().unwrap_or(0),
        ports_max: ports.max().unwrap_or(0),
        connected,
        diameter,
        shape: shape_json(topo),
    })
}

/// [`topo_info`] of [`load_topology`] as JSON.
pub fn topo_info_json(spec_or_path: &str) -> Result<String, ReportError> {
    let t = load_topology(spec_or_path)?;
    Ok(serde_json::to_string(&topo_info(&t)?).expect("serialises"))
}

/// The formats [`topo_convert`] writes.
pub const TOPOLOGY_FORMATS: &[&str] = &["json", "ibnetdiscover"];

/// The topology in format `to`: `"json"` (flitsim's) or `"ibnetdiscover"` (see
/// [`TOPOLOGY_FORMATS`]).
pub fn topo_convert(spec_or_path: &str, to: &str) -> Result<String, ReportError> {
    let t = load_topology(spec_or_path)?;
    match to {
        "json" => Ok(t.to_json()),
        "ibnetdiscover" => Ok(t.to_ibnetdiscover()),
        other => Err(ReportError::Invalid(format!(
            "unknown topology format '{other}'; use json or ibnetdiscover"
        ))),
    }
}

/// Engine options as given on the command line (JSON), before switch GUIDs are resolved.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptionsInput {
    /// `dfsssp`: `weakest`, `strongest` or `first`.
    #[serde(default)]
    pub heuristic: Option<CycleHeuristic>,
    /// `dfsssp`: online (first-fit) layer assignment.
    #[serde(default)]
    pub online: bool,
    /// `dfsssp`, `lash`: spread layers over spare VLs.
    #[serde(default)]
    pub balance: Option<bool>,
    /// `dfsssp`, `lash`, `nue`: at most this many layers per class.
    #[serde(default)]
    pub max_layers: Option<u8>,
    /// `dfsssp`: first-fit restarts after the paper's assignment (0: none).
    #[serde(default)]
    pub restarts: Option<u32>,
    /// `updn`: root switches by node GUID (`"0x…"` hexadecimal, or decimal).
    #[serde(default)]
    pub roots: Vec<String>,
    /// Every engine: LID mask count, `2^lmc` paths per destination (`--lmc`).
    #[serde(default)]
    pub lmc: u8,
    /// VOQsw SL→VL tables over the engine's forwarding tables (`--voqsw`).
    #[serde(default)]
    pub voqsw: Option<VoqswInput>,
}

/// `--voqsw --sls N|full --vls M` as JSON: `{"sls": 8, "vls": 8}` or `{"sls": "full", …}`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VoqswInput {
    /// SLs VOQsw may use: a number ≥ 1, or `"full"` for as many as full VOQ needs.
    pub sls: VoqswSlsInput,
    /// VLs of the links (default: the engine's `max_vls`).
    #[serde(default)]
    pub vls: Option<u8>,
}

/// The SLs of [`VoqswInput`].
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum VoqswSlsInput {
    /// At most this many SLs.
    Count(usize),
    /// `"full"`.
    Word(String),
}

impl VoqswInput {
    /// The SLs as the methodology wants them; errors say what works.
    pub fn sls(&self) -> Result<VoqswSls, ReportError> {
        match &self.sls {
            VoqswSlsInput::Count(0) => Err(ReportError::Invalid(
                "--sls 0: VOQsw needs at least 1 SL (or --sls full)".into(),
            )),
            VoqswSlsInput::Count(n) if *n > voqsw::MAX_TABLE_SLS => {
                Err(ReportError::Invalid(format!(
                    "--sls {n}: the tables hold at most {} SLs (InfiniBand: 16); give fewer, \
                     or full",
                    voqsw::MAX_TABLE_SLS
                )))
            }
            VoqswSlsInput::Count(n) => Ok(VoqswSls::Limit(*n)),
            VoqswSlsInput::Word(w) if w == "full" => Ok(VoqswSls::Full),
            VoqswSlsInput::Word(w) => Err(ReportError::Invalid(format!(
                "--sls {w}: give a number of SLs (1 or more) or full"
            ))),
        }
    }
}

/// The `voqsw` section of a route report.
#[derive(Clone, Debug, Serialize)]
pub struct VoqswSummary {
    /// Used and considered 4-tuples, SLs.
    #[serde(flatten)]
    pub result: VoqswReport,
    /// VLs of the tables.
    pub vls: u8,
    /// Wall-clock seconds of the methodology (stages 1–5).
    pub runtime_seconds: f64,
}

/// The `lmc` of engine options in JSON (0 without options); range errors say what fits.
fn options_lmc(options_json: Option<&str>) -> Result<u8, ReportError> {
    let Some(text) = options_json.filter(|t| !t.trim().is_empty()) else {
        return Ok(0);
    };
    let inp: OptionsInput = serde_json::from_str(text)
        .map_err(|e| ReportError::Invalid(format!("engine options: {e}")))?;
    if inp.lmc > flitsim_topology::MAX_LMC {
        return Err(ReportError::Invalid(format!(
            "LMC {} is out of range: InfiniBand allows 0..={} (2^lmc LIDs and paths per port)",
            inp.lmc,
            flitsim_topology::MAX_LMC
        )));
    }
    Ok(inp.lmc)
}

/// The `voqsw` part of engine options in JSON.
fn options_voqsw(options_json: Option<&str>) -> Result<Option<VoqswInput>, ReportError> {
    let Some(text) = options_json.filter(|t| !t.trim().is_empty()) else {
        return Ok(None);
    };
    let inp: OptionsInput = serde_json::from_str(text)
        .map_err(|e| ReportError::Invalid(format!("engine options: {e}")))?;
    Ok(inp.voqsw)
}

/// Parses engine options from JSON (see [`OptionsInput`]), resolving root GUIDs on `topo`.
pub fn engine_options(
    topo: &Topology,
    options_json: Option<&str>,
) -> Result<EngineOptions, ReportError> {
    let Some(text) = options_json.filter(|t| !t.trim().is_empty()) else {
        return Ok(EngineOptions::default());
    };
    let inp: OptionsInput = serde_json::from_str(text)
        .map_err(|e| ReportError::Invalid(format!("engine options: {e}")))?;
    let roots = inp
        .roots
        .iter()
        .map(|g| {
            let t = g.trim();
            let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => t.parse::<u64>().ok(),
            };
            let v = v.ok_or_else(|| {
                ReportError::Invalid(format!("root '{g}' is not a GUID (0x<hex>)"))
            })?;
            topo.switch_by_guid(v).ok_or_else(|| {
                ReportError::Invalid(format!(
                    "root GUID {v:#018x} is not a switch of the topology"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(EngineOptions {
        roots,
        heuristic: inp.heuristic.unwrap_or_default(),
        online: inp.online,
        balance: inp.balance,
        max_layers: inp.max_layers,
        restarts: inp.restarts,
        lmc: inp.lmc,
    })
}

/// Path lengths of a routing, in switch-to-switch links (switches traversed − 1), over the
/// ordered pairs of distinct endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct HopStats {
    /// Longest path.
    pub max_hops: u32,
    /// Mean path length (0 with fewer than two endpoints).
    pub mean_hops: f64,
}

/// Computes [`HopStats`] by following the LFTs, per destination in O(switches), in parallel.
/// Fails on a path with no route, a dead end or a loop.
pub fn hop_stats(topo: &Topology, fabric: &FabricConfig) -> Result<HopStats, RoutingError> {
    fabric.check_shape(topo)?;
    let n = topo.num_endpoints();
    let nsw = topo.num_switches();
    let per_dest = |d: usize| -> Result<(u64, u32), RoutingError> {
        flitsim_topology::cancel::check()?;
        let mut dist = vec![u32::MAX; nsw];
        let (dsw, _) = topo.endpoint_switch(EndpointId(d as u32));
        dist[dsw.0 as usize] = 0;
        let mut chain = Vec::new();
        let (mut sum, mut max) = (0u64, 0u32);
        for src in 0..n {
            if src == d {
                continue;
            }
            let (mut s, _) = topo.endpoint_switch(EndpointId(src as u32));
            chain.clear();
            while dist[s.0 as usize] == u32::MAX {
                chain.push(s);
                if chain.len() > nsw {
                    return Err(RoutingError::Loop(format!(
                        "traffic to endpoint {d} loops through switch {}",
                        topo.switches()[s.0 as usize].name
                    )));
                }
                let port = fabric.port(0, s.0, d as u32);
                let next = (port != NO_ROUTE)
                    .then(|| topo.switch_peer(s, port))
                    .flatten()
                    .map(|p| p.remote.node);
                match next {
                    Some(NodeId::Switch(t)) => s = SwitchId(t),
                    _ => {
                        let ep = &topo.endpoints()[d];
                        return Err(RoutingError::Unroutable(format!(
                            "switch {} has no route to endpoint {d} ({}{})",
                            topo.switches()[s.0 as usize].name,
                            ep.name,
                            ep.lid.map_or(String::new(), |l| format!(", LID {l}"))
                        )));
                    }
                }
            }
            let mut h = dist[s.0 as usize];
            for &c in chain.iter().rev() {
                h += 1;
                dist[c.0 as usize] = h;
            }
            let (s0, _) = topo.endpoint_switch(EndpointId(src as u32));
            let h = dist[s0.0 as usize];
            sum += h as u64;
            max = max.max(h);
        }
        Ok((sum, max))
    };
    let parts: Vec<(u64, u32)> = (0..n)
        .into_par_iter()
        .map(per_dest)
        .collect::<Result<_, _>>()?;
    let pairs = n.saturating_mul(n.saturating_sub(1));
    let sum: u64 = parts.iter().map(|p| p.0).sum();
    Ok(HopStats {
        max_hops: parts.iter().map(|p| p.1).max().unwrap_or(0),
        mean_hops: if pairs == 0 {
            0.0
        } else {
            sum as f64 / pairs as f64
        },
    })
}

/// One channel of a dependency cycle, for people.
#[derive(Clone, Debug, Serialize)]
pub struct CycleChannel {
    /// Switch name.
    pub switch: String,
    /// Switch index in the topology.
    pub switch_id: u32,
    /// Switch node GUID (`0x…`), when known.
    pub guid: Option<String>,
    /// Output port (flitsim numbering, from 0).
    pub port: u16,
    /// The same port in InfiniBand numbering (from 1).
    pub ib_port: u32,
    /// VL.
    pub vl: u8,
}

/// The channel dependency verdict in a route report.
#[derive(Clone, Debug, Serialize)]
pub struct CdgSummary {
    /// No cycle: the tables cannot deadlock.
    pub deadlock_free: bool,
    /// Channels carrying at least one path.
    pub channels: usize,
    /// Distinct dependencies.
    pub dependencies: usize,
    /// One verdict per VL.
    pub per_vl: Vec<cdg::VlVerdict>,
    /// One dependency cycle, when there is one.
    pub cycle: Option<Vec<CycleChannel>>,
}

/// Everything `flitsim route --json` prints.
#[derive(Clone, Debug, Serialize)]
pub struct RouteReport {
    /// Engine name.
    pub engine: String,
    /// Topology name.
    pub topology: String,
    /// Number of switches.
    pub switches: usize,
    /// Number of endpoints.
    pub endpoints: usize,
    /// Traffic classes routed.
    pub classes: u8,
    /// VLs the engine was allowed (`--max-vls`).
    pub max_vls: u8,
    /// Distinct VLs the paths use (inter-switch channels and NIC injection).
    pub vls_used: usize,
    /// VLs per class the routing needs for deadlock freedom (virtual layers of `lash` and
    /// `dfsssp`, which balancing may spread over more VLs; the VLs `nue` used; compare with OpenSM's "Virtual
    /// Lanes needed"); `None` when unknown, and always when the routing is not deadlock-free
    /// (no number of VLs then makes *these* paths deadlock-free).
    pub layers: Option<u8>,
    /// Path SLs per class.
    pub routing_sls: u8,
    /// SLs on the wire (`classes · routing_sls`).
    pub wire_sls: usize,
    /// The channel dependency graph is acyclic.
    pub deadlock_free: bool,
    /// Wall-clock seconds the engine took (verification excluded).
    pub runtime_seconds: f64,
    /// Wall-clock seconds building and checking the channel dependency graph.
    pub verify_seconds: f64,
    /// Longest path, in switch-to-switch links.
    pub max_hops: u32,
    /// Mean path length over ordered pairs of distinct endpoints, in switch-to-switch links.
    pub mean_hops: f64,
    /// Bytes of the computed tables (LFTs, SL→VL tables, path SLs).
    pub memory_bytes: usize,
    /// The channel dependency verdict.
    pub cdg: CdgSummary,
    /// Same as `cdg.cycle`.
    pub cycle: Option<Vec<CycleChannel>>,
    /// Files written (with an output directory).
    pub files: Vec<String>,
    /// Nodes that had no LID and got one before the dumps were written (with an output
    /// directory; see [`Topology::assign_missing_ids`]).
    pub lids_assigned: usize,
    /// LID mask count: `2^lmc` paths per destination (`--lmc`). The hop statistics above
    /// are those of path 0; `deadlock_free` and the CDG cover every path.
    pub lmc: u8,
    /// With `lmc > 0`: how different the paths of each endpoint pair are.
    pub path_diversity: Option<PathDiversityReport>,
    /// With `--voqsw`: what the VOQsw methodology achieved; the tables reported above (VLs,
    /// routing SLs, CDG) are then VOQsw's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub voqsw: Option<VoqswSummary>,
}

/// The path diversity of a multipath routing in a route report
/// ([`FabricConfig::path_diversity`]), over ordered endpoint pairs on different switches.
#[derive(Clone, Debug, Serialize)]
pub struct PathDiversityReport {
    /// Paths per destination (`2^lmc`).
    pub paths: usize,
    /// Ordered endpoint pairs on different switches.
    pub pairs: u64,
    /// Share of those pairs whose paths pairwise share no switch-to-switch link.
    pub disjoint_share: f64,
    /// Share of those pairs whose paths are pairwise different.
    pub distinct_share: f64,
    /// Pairs with pairwise link-disjoint paths.
    pub disjoint_pairs: u64,
    /// Pairs with pairwise different paths.
    pub distinct_pairs: u64,
    /// Mean number of different paths per pair.
    pub mean_distinct_paths: f64,
    /// Share of pairs with as many different paths as the topology has minimal paths
    /// between their switches (or `paths`, if more): distinct where minimal paths allow.
    pub minimal_share: f64,
}

fn cdg_summary(topo: &Topology, r: &CdgReport) -> CdgSummary {
    CdgSummary {
        deadlock_free: r.deadlock_free,
        channels: r.channels,
        dependencies: r.dependencies,
        per_vl: r.per_vl.clone(),
        cycle: r.cycle.as_ref().map(|c| {
            c.iter()
                .map(|ch| {
                    let sw = &topo.switches()[ch.switch.0 as usize];
                    CycleChannel {
                        switch: sw.name.clone(),
                        switch_id: ch.switch.0,
                        guid: sw.guid.map(|g| format!("{g:#018x}")),
                        port: ch.port,
                        ib_port: ch.port as u32 + 1,
                        vl: ch.vl,
                    }
                })
                .collect()
        }),
    }
}

/// Bytes held by the tables of `f` (every path's).
fn table_bytes(f: &FabricConfig) -> usize {
    f.paths()
        .map(|(lft, path_sl)| lft.iter().map(|l| l.len() * 2).sum::<usize>() + path_sl.len())
        .sum::<usize>()
        + f.sl2vl.iter().map(Vec::len).sum::<usize>()
        + f.nic_sl2vl.len()
}

/// Routes `topo` with `engine`, verifies the channel dependency graph and measures the paths.
pub fn route_report(
    topo: &Topology,
    engine: &str,
    max_vls: u8,
    classes: u8,
    options: &EngineOptions,
) -> Result<(FabricConfig, RouteReport), ReportError> {
    route_report_voqsw(topo, engine, max_vls, classes, options, None)
}

/// [`route_report`], then, with `voqsw`, the VOQsw methodology over the engine's forwarding
/// tables ([`voqsw::analyse`], [`voqsw::Voqsw::tables`]); the report then describes (and the
/// CDG check certifies) VOQsw's tables. With `voqsw` the engine is routed with the fewest VLs
/// it accepts, up to `max_vls`: VOQsw splits each of them into `vls / lanes` VLs.
pub fn route_report_voqsw(
    topo: &Topology,
    engine: &str,
    max_vls: u8,
    classes: u8,
    options: &EngineOptions,
    voqsw: Option<&VoqswInput>,
) -> Result<(FabricConfig, RouteReport), ReportError> {
    if max_vls == 0 || classes == 0 {
        return Err(ReportError::Invalid(
            "max_vls and classes must be at least 1".into(),
        ));
    }
    let req = RoutingRequest {
        vls: max_vls,
        classes,
    };
    let t0 = Instant::now();
    let fabric = match voqsw {
        None => route_with(topo, engine, &req, options)?,
        // With VOQsw, one class on the fewest VLs the engine accepts (up to `max_vls`):
        // VOQsw splits each routing VL, and engines spread spare VLs.
        Some(_) => {
            let mut v = 1;
            loop {
                let req = RoutingRequest { vls: v, classes };
                match route_with(topo, engine, &req, options) {
                    Err(RoutingError::NotEnoughVls(_)) if v < max_vls => v += 1,
                    other => break other?,
                }
            }
        }
    };
    let runtime = t0.elapsed().as_secs_f64();
    let (fabric, voqsw) = match voqsw {
        None => (fabric, None),
        Some(v) => {
            let sls = v.sls()?;
            let vls = v.vls.unwrap_or(max_vls);
            if vls == 0 {
                return Err(ReportError::Invalid(
                    "--vls 0: VOQsw needs at least 1 VL".into(),
                ));
            }
            let t = Instant::now();
            let a = voqsw::analyse(topo, &fabric, sls)?;
            let tables = a.tables(topo, &fabric, vls)?;
            let summary = VoqswSummary {
                result: a.report(),
                vls,
                runtime_seconds: t.elapsed().as_secs_f64(),
            };
            (tables, Some(summary))
        }
    };
    let t1 = Instant::now();
    let verdict = cdg::verify(topo, &fabric)?;
    let verify = t1.elapsed().as_secs_f64();
    let hops = hop_stats(topo, &fabric)?;
    let mut vls: BTreeSet<u8> = verdict
        .per_vl
        .iter()
        .filter(|v| v.channels > 0)
        .map(|v| v.vl)
        .collect();
    vls.extend(fabric.nic_sl2vl.iter().copied());
    let cdg = cdg_summary(topo, &verdict);
    let path_diversity = if options.lmc > 0 {
        let d = fabric.path_diversity(topo)?;
        Some(PathDiversityReport {
            paths: d.paths,
            pairs: d.pairs,
            disjoint_share: d.disjoint_share(),
            distinct_share: d.distinct_share(),
            disjoint_pairs: d.disjoint_pairs,
            distinct_pairs: d.distinct_pairs,
            mean_distinct_paths: d.mean_distinct_paths(),
            minimal_share: d.minimal_share(),
        })
    } else {
        None
    };
    let report = RouteReport {
        engine: fabric.engine.clone(),
        topology: topo.name().to_string(),
        switches: topo.num_switches(),
        endpoints: topo.num_endpoints(),
        classes,
        max_vls,
        vls_used: vls.len(),
        // An engine's layer count is only a count of what deadlock freedom needs when the
        // routing is deadlock-free; otherwise (MinHop on a torus, say) it is unknown.
        layers: (fabric.layers > 0 && verdict.deadlock_free).then_some(fabric.layers),
        routing_sls: fabric.routing_sls,
        wire_sls: fabric.wire_sls(),
        deadlock_free: verdict.deadlock_free,
        runtime_seconds: runtime,
        verify_seconds: verify,
        max_hops: hops.max_hops,
        mean_hops: hops.mean_hops,
        memory_bytes: table_bytes(&fabric),
        cycle: cdg.cycle.clone(),
        cdg,
        files: Vec::new(),
        lids_assigned: 0,
        lmc: options.lmc,
        path_diversity,
        voqsw,
    };
    Ok((fabric, report))
}

/// `flitsim route`: loads the topology, routes it ([`route_report`]) and, with `out_dir`,
/// writes the OpenSM dumps there ([`opensm::write_dir`]: all four files or none). Returns the
/// [`RouteReport`] as JSON.
pub fn route_json(
    spec_or_path: &str,
    engine: &str,
    max_vls: u8,
    classes: u8,
    out_dir: Option<&Path>,
    options_json: Option<&str>,
) -> Result<String, ReportError> {
    route_json_with(
        spec_or_path,
        engine,
        max_vls,
        classes,
        &RouteFiles {
            out_dir,
            guid2lid: None,
        },
        options_json,
    )
}

/// The files `flitsim route` reads and writes besides the topology.
#[derive(Clone, Copy, Debug, Default)]
pub struct RouteFiles<'a> {
    /// `--out DIR`: write the OpenSM dumps there.
    pub out_dir: Option<&'a Path>,
    /// `--guid2lid FILE`: take LIDs from this OpenSM LID cache ([`opensm::apply_guid2lid`]).
    pub guid2lid: Option<&'a Path>,
}

/// Gives the nodes of `topo` the LIDs in the `guid2lid` file at `path`; errors name the file
/// and line.
pub fn apply_guid2lid_file(topo: &mut Topology, path: &Path) -> Result<usize, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        ReportError::Invalid(format!("cannot read guid2lid file {}: {e}", path.display()))
    })?;
    Ok(opensm::apply_guid2lid(
        topo,
        &text,
        &path.display().to_string(),
    )?)
}

/// [`route_json`] with a `guid2lid` file to take LIDs from. With an output directory, nodes
/// still without a GUID or LID get one ([`Topology::assign_missing_ids`] with the options'
/// `lmc`: CA ports get aligned blocks of `2^lmc` LIDs) before the dumps are written, so every
/// topology input can be written; the report's `lids_assigned` counts them. With `lmc > 0`
/// a generator's LIDs (consecutive, for LMC 0) are replaced; a file's LIDs are kept and must
/// be aligned (else an error says so).
pub fn route_json_with(
    spec_or_path: &str,
    engine: &str,
    max_vls: u8,
    classes: u8,
    files: &RouteFiles<'_>,
    options_json: Option<&str>,
) -> Result<String, ReportError> {
    let mut topo = load_topology(spec_or_path)?;
    let lmc = options_lmc(options_json)?;
    if lmc > 0 && !Path::new(spec_or_path).is_file() {
        // A generator's LIDs are LMC 0 placeholders (consecutive): a subnet manager with
        // LMC > 0 assigns aligned blocks instead.
        let (ns, ne) = (topo.num_switches(), topo.num_endpoints());
        topo.set_lids(&vec![None; ns], &vec![None; ne])?;
    }
    if let Some(g) = files.guid2lid {
        apply_guid2lid_file(&mut topo, g)?;
    }
    // LIDs first (routing does not need them): a topology too large for the LID space fails
    // before any routing time is spent.
    let lids_assigned = match files.out_dir {
        Some(dir) => {
            topo.assign_missing_ids(lmc)
                .map_err(|e| {
                    ReportError::Invalid(format!(
                        "cannot write the tables to {}: {}",
                        dir.display(),
                        e.to_string().trim_start_matches("invalid topology: ")
                    ))
                })?
                .lids
        }
        None => 0,
    };
    check_routing_memory(&topo, max_vls.max(classes), lmc)?;
    let options = engine_options(&topo, options_json)?;
    let voqsw = options_voqsw(options_json)?;
    if let (Some(v), Some(dir)) = (&voqsw, files.out_dir) {
        let too_many = |what: &str, n: usize, max: usize| {
            Err(ReportError::Invalid(format!(
                "cannot write VOQsw tables with {n} {what} to {}: InfiniBand has {max}; give \
                 --{} {max} or fewer",
                dir.display(),
                what.to_lowercase(),
            )))
        };
        match v.sls()? {
            VoqswSls::Full => {}
            VoqswSls::Limit(n) if n > opensm::IB_SLS => return too_many("SLs", n, opensm::IB_SLS),
            VoqswSls::Limit(_) => {}
        }
        let vls = v.vls.unwrap_or(max_vls) as usize;
        if vls > 15 {
            return too_many("VLs", vls, 15);
        }
    }
    let (fabric, mut report) =
        route_report_voqsw(&topo, engine, max_vls, classes, &options, voqsw.as_ref())?;
    report.lids_assigned = lids_assigned;
    if let (Some(v), Some(dir)) = (&report.voqsw, files.out_dir) {
        if fabric.routing_sls as usize > opensm::IB_SLS {
            return Err(ReportError::Invalid(format!(
                "cannot write VOQsw tables to {}: full VOQ needs {} SLs here, InfiniBand has {}; \
                 give --sls {} or fewer (partial VOQ)",
                dir.display(),
                v.result.sls_used,
                opensm::IB_SLS,
                opensm::IB_SLS
            )));
        }
    }
    if let Some(dir) = files.out_dir {
        report.files = opensm::write_dir(&topo, &fabric, dir)?
            .into_iter()
            .map(|p| p.display().to_string())
            .collect();
    }
    Ok(serde_json::to_string(&report).expect("serialises"))
}

/// Refuses to route a topology whose tables (forwarding tables, path SLs, SL→VL tables of
/// `sls` SLs) would not fit in the available memory ([`crate::memory`]).
fn check_routing_memory(topo: &Topology, sls: u8, lmc: u8) -> Result<(), ReportError> {
    let size = crate::memory::FabricSize::of_topology(topo);
    // Every further path (LMC) has its own forwarding and path SL tables.
    let (sw, ep) = (size.switches, size.endpoints);
    let per_path = 2u128
        .saturating_mul(sw)
        .saturating_mul(ep)
        .saturating_add(ep.saturating_mul(ep));
    let need = size
        .routing_bytes(sls.max(1) as u128)
        .saturating_add(per_path.saturating_mul((1u128 << lmc.min(7)) - 1));
    match crate::memory::available_memory() {
        Some(limit) if need > limit as u128 => Err(ReportError::Invalid(format!(
            "the routing tables of {} switches and {} endpoints would need about {}, more than the available memory ({})",
            size.switches,
            size.endpoints,
            crate::memory::human(need),
            crate::memory::human(limit as u128)
        ))),
        _ => Ok(()),
    }
}

/// Tables from a routing engine or from an OpenSM dump directory (exactly one of the two).
fn fabric_for(
    topo: &Topology,
    engine: Option<&str>,
    tables_dir: Option<&Path>,
    max_vls: u8,
) -> Result<FabricConfig, ReportError> {
    Ok(match (engine, tables_dir) {
        (Some(e), None) => route_with(
            {
                check_routing_memory(topo, max_vls, 0)?;
                topo
            },
            e,
            &RoutingRequest {
                vls: max_vls,
                classes: 1,
            },
            &EngineOptions::default(),
        )?,
        (None, Some(d)) => opensm::read_dir(topo, d)?,
        _ => {
            return Err(ReportError::Invalid(
                "give either a routing engine or a tables directory, not both or neither".into(),
            ))
        }
    })
}

/// Load of every switch output port under all-to-all traffic (one flow per ordered endpoint
/// pair), as JSON: `links` (switch, port, to_endpoint, flows) and the max / mean over
/// switch-to-switch links.
pub fn link_loads_json(
    spec_or_path: &str,
    engine: Option<&str>,
    tables_dir: Option<&Path>,
    max_vls: u8,
) -> Result<String, ReportError> {
    let topo = load_topology(spec_or_path)?;
    let fabric = fabric_for(&topo, engine, tables_dir, max_vls)?;
    let loads = ebb::link_loads_all_to_all(&topo, &fabric)?;
    let mut links = Vec::with_capacity(loads.len());
    let (mut max, mut sum, mut n) = (0u64, 0u64, 0u64);
    for (s, p, flows) in loads {
        let to_endpoint = matches!(
            topo.switch_peer(s, p).map(|peer| peer.remote.node),
            Some(flitsim_topology::NodeId::Endpoint(_))
        );
        if !to_endpoint {
            max = max.max(flows);
            sum += flows;
            n += 1;
        }
        links.push(serde_json::json!({
            "switch": topo.switches()[s.0 as usize].name,
            "port": p,
            "to_endpoint": to_endpoint,
            "flows": flows,
        }));
    }
    Ok(serde_json::json!({
        "engine": fabric.engine,
        "topology": topo.name(),
        "endpoints": topo.num_endpoints(),
        "switch_links_max_flows": max,
        "switch_links_mean_flows": if n > 0 { sum as f64 / n as f64 } else { 0.0 },
        "links": links,
    })
    .to_string())
}

/// The LFT paths of the endpoint pairs `pairs` (`(src, dst)` endpoint indices, class 0, path
/// 0) over the routing by `engine` or the dumps in `tables_dir`, as JSON: `engine`,
/// `topology`, `endpoints` and `paths`, one `{src, dst, hops}` per pair, every hop a switch
/// traversed (`switch` name, `in_port`, `out_port`, `vl` on the outgoing link). What
/// `flitsim view --route` and `--load hotspot` draw. An endpoint out of range is an error
/// naming it.
pub fn paths_json(
    spec_or_path: &str,
    engine: Option<&str>,
    tables_dir: Option<&Path>,
    max_vls: u8,
    pairs: &[(u32, u32)],
) -> Result<String, ReportError> {
    let topo = load_topology(spec_or_path)?;
    let n = topo.num_endpoints();
    for &(src, dst) in pairs {
        for e in [src, dst] {
            if e as usize >= n {
                return Err(ReportError::Invalid(format!(
                    "endpoint {e} does not exist: {} has {n} endpoints (0..={})",
                    topo.name(),
                    n.saturating_sub(1)
                )));
            }
        }
    }
    let fabric = fabric_for(&topo, engine, tables_dir, max_vls)?;
    let mut paths = Vec::with_capacity(pairs.len());
    for &(src, dst) in pairs {
        flitsim_topology::cancel::check()?;
        let hops = if src == dst {
            Vec::new()
        } else {
            fabric.trace(&topo, EndpointId(src), EndpointId(dst), 0)?
        };
        let hops: Vec<_> = hops
            .iter()
            .map(|h| {
                serde_json::json!({
                    "switch": topo.switches()[h.switch.0 as usize].name,
                    "in_port": h.in_port,
                    "out_port": h.out_port,
                    "vl": h.vl,
                })
            })
            .collect();
        paths.push(serde_json::json!({"src": src, "dst": dst, "hops": hops}));
    }
    Ok(serde_json::json!({
        "engine": fabric.engine,
        "topology": topo.name(),
        "endpoints": n,
        "paths": paths,
    })
    .to_string())
}

/// Everything `flitsim ebb --json` prints.
#[derive(Clone, Debug, Serialize)]
pub struct EbbSummary {
    /// Effective bisection bandwidth: mean pattern value (fraction of link bandwidth).
    pub ebb_mean: f64,
    /// Smallest pattern value.
    pub ebb_min: f64,
    /// Largest pattern value.
    pub ebb_max: f64,
    /// Patterns evaluated.
    pub patterns: usize,
    /// Seed of the patterns.
    pub seed: u64,
    /// Engine, or `file` for tables read from a directory.
    pub engine: String,
    /// Topology name.
    pub topology: String,
    /// Number of endpoints.
    pub endpoints: usize,
    /// Wall-clock seconds of the evaluation.
    pub runtime_seconds: f64,
}

/// `flitsim ebb`: the effective bisection bandwidth ([`ebb::effective_bisection_bandwidth`])
/// of the routing by `engine` (one class, `max_vls` VLs), or of the OpenSM dumps in
/// `tables_dir` ([`opensm::read_dir`]); exactly one of the two must be given.
pub fn ebb_json(
    spec_or_path: &str,
    engine: Option<&str>,
    tables_dir: Option<&Path>,
    patterns: usize,
    seed: u64,
    max_vls: u8,
) -> Result<String, ReportError> {
    let topo = load_topology(spec_or_path)?;
    let fabric = fabric_for(&topo, engine, tables_dir, max_vls)?;
    let t0 = Instant::now();
    let r = ebb::effective_bisection_bandwidth(&topo, &fabric, patterns, seed)?;
    Ok(serde_json::to_string(&EbbSummary {
        ebb_mean: r.ebb_mean,
        ebb_min: r.ebb_min,
        ebb_max: r.ebb_max,
        patterns: r.patterns,
        seed,
        engine: fabric.engine.clone(),
        topology: topo.name().to_string(),
        endpoints: topo.num_endpoints(),
        runtime_seconds: t0.elapsed().as_secs_f64(),
    })
    .expect("serialises"))
}

/// One flow of `flitsim bandwidth --json`.
#[derive(Clone, Debug, Serialize)]
pub struct BandwidthVerdict {
    /// Source endpoint.
    pub src: u32,
    /// Destination endpoint.
    pub dst: u32,
    /// True for a best-effort flow.
    pub best_effort: bool,
    /// The reservation asked for, flits/cycle (`null` for a best-effort flow).
    pub requested: Option<f64>,
    /// Admitted (a best-effort flow always is).
    pub admitted: bool,
    /// The rate given: the reservation, the best-effort share, 0 when refused.
    pub granted: f64,
    /// Its IDT, cycles (`null`: refused, or a best-effort flow with no share).
    pub idt: Option<f64>,
    /// Why it was refused.
    pub refused_by: Option<flitsim_sim::stats::RefusedBy>,
}

/// `flitsim bandwidth`: runs the bandwidth manager ([`flitsim_manager::bandwidth`]) over the
/// routing of `spec_or_path` by `engine` (default: the topology's default engine): the
/// premium `flows` `(src, dst, flits/cycle)` in order, then the `best_effort` flows, with T =
/// `dispatch_time` cycles and `mtu` flits (B_max = MTU / T) and node capacity `node_capacity`
/// (default: the node's link). Bad input (a flow to itself, an unknown endpoint, a rate not
/// positive or above the source's peak) is an error naming the flow; refusals are verdicts.
#[allow(clippy::too_many_arguments)]
pub fn bandwidth_json(
    spec_or_path: &str,
    engine: Option<&str>,
    flows: &[(u32, u32, f64)],
    best_effort: &[(u32, u32)],
    dispatch_time: f64,
    mtu: f64,
    node_capacity: Option<f64>,
    max_vls: u8,
) -> Result<String, ReportError> {
    use flitsim_manager::bandwidth::{BandwidthError, BandwidthManager, BandwidthParams};
    let topo = load_topology(spec_or_path)?;
    let engine = engine.unwrap_or_else(|| crate::experiment::engine_for_shape(&topo));
    let fabric = fabric_for(&topo, Some(engine), None, max_vls)?;
    let params = BandwidthParams {
        dispatch_time,
        mtu,
        node_capacity,
    };
    let b_max = params.b_max();
    let mut m = BandwidthManager::new(&topo, Some(&fabric), params)
        .map_err(|e| ReportError::Invalid(e.to_string()))?;
    let mut rows = Vec::new();
    let mut ids = Vec::new();
    for &(src, dst, rate) in flows {
        let mut v = BandwidthVerdict {
            src,
            dst,
            best_effort: false,
            requested: Some(rate),
            admitted: false,
            granted: 0.0,
            idt: None,
            refused_by: None,
        };
        match m.allocate(src, dst, rate) {
            Ok(a) => {
                v.admitted = true;
                ids.push(Some(a.id));
            }
            Err(BandwidthError::Refused(r)) => {
                v.refused_by = Some((&r).into());
                ids.push(None);
            }
            Err(e) => {
                return Err(ReportError::Invalid(format!(
                    "--flow {src}:{dst}:{rate}: {e}"
                )))
            }
        }
        rows.push(v);
    }
    for &(src, dst) in best_effort {
        let id = m
            .add_best_effort(src, dst)
            .map_err(|e| ReportError::Invalid(format!("--best-effort {src}:{dst}: {e}")))?;
        ids.push(Some(id));
        rows.push(BandwidthVerdict {
            src,
            dst,
            best_effort: true,
            requested: None,
            admitted: true,
            granted: 0.0,
            idt: None,
            refused_by: None,
        });
    }
    for (v, id) in rows.iter_mut().zip(&ids) {
        if let Some(f) = id.and_then(|id| m.flow(id)) {
            v.granted = f.rate;
            v.idt = f.idt;
        }
    }
    Ok(serde_json::json!({
        "topology": topo.name(),
        "engine": fabric.engine,
        "endpoints": topo.num_endpoints(),
        "dispatch_time": dispatch_time,
        "mtu": mtu,
        "b_max": b_max,
        "flows": rows,
    })
    .to_string())
}

/// One `[[flow]]` of a `flitsim cac` flow file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CacFlowEntry {
    src: u32,
    dst: u32,
    rate: f64,
    #[serde(default)]
    name: Option<String>,
    #[serde(default = "yes")]
    qos: bool,
}

fn yes() -> bool {
    true
}

/// A `flitsim cac` flow file: `[[flow]]` entries (TOML) or `{"flow": [...]}` (JSON).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CacFlowFile {
    flow: Vec<CacFlowEntry>,
}

/// Reads the flow requests of `flitsim cac` from `path`: TOML with `[[flow]]` tables, or JSON
/// (a `.json` file, or text starting with `{`) with a `flow` array; each flow has `src`, `dst`
/// (endpoint indices), `rate` (flits/cycle), optional `name` and `qos` (default true). Errors
/// name the file and the key (`flows.toml: flow[3].rate: …`).
pub fn read_cac_flows(path: &Path) -> Result<Vec<flitsim_manager::cac::FlowRequest>, ReportError> {
    let file = path.display().to_string();
    let err = |m: String| ReportError::Invalid(format!("{file}: {m}"));
    let text = std::fs::read_to_string(path)
        .map_err(|e| ReportError::Invalid(format!("cannot read flow file {file}: {e}")))?;
    let json = path
        .extension()
        .is_some_and(|x| x.eq_ignore_ascii_case("json"))
        || text.trim_start().starts_with('{');
    let typed: Result<CacFlowFile, (String, String)> = if json {
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| err(format!("not valid JSON: {e}")))?;
        serde_path_to_error::deserialize(v)
            .map_err(|e| (e.path().to_string(), e.inner().to_string()))
    } else {
        let v: toml::Table = toml::from_str(&text)
            .map_err(|e| err(format!("not valid TOML: {}", e.to_string().trim_end())))?;
        serde_path_to_error::deserialize(toml::Value::Table(v)).map_err(|e| {
            (
                e.path().to_string(),
                e.inner().message().trim_end().to_string(),
            )
        })
    };
    let doc = typed.map_err(|(at, m)| {
        if at.is_empty() || at == "." {
            err(m)
        } else {
            err(format!("{at}: {m}"))
        }
    })?;
    if doc.flow.is_empty() {
        return Err(err(
            "no flows: give [[flow]] entries with src, dst and rate".into(),
        ));
    }
    Ok(doc
        .flow
        .into_iter()
        .map(|f| flitsim_manager::cac::FlowRequest {
            src: f.src,
            dst: f.dst,
            rate: f.rate,
            name: f.name,
            qos: f.qos,
        })
        .collect())
}

/// `flitsim cac`: connection admission control ([`flitsim_manager::cac`]) of the flows in the
/// file at `flows_path` ([`read_cac_flows`]) over the routing of `spec_or_path` by `engine`
/// (default: the topology's default engine) with `2^lmc` paths per destination, every link's
/// QoS load kept within `limit`. JSON: `topology`, `engine`, `endpoints`, `lmc`, `limit`,
/// `paths`, `admitted`, `rejected` (each with the `link` that refused), `unregulated` and
/// `links` (reserved load per link). A malformed flow is an error naming the file and the key.
pub fn cac_json(
    spec_or_path: &str,
    flows_path: &Path,
    engine: Option<&str>,
    lmc: u8,
    limit: f64,
    max_vls: u8,
) -> Result<String, ReportError> {
    use flitsim_manager::cac::{self, CacError};
    cac::check_limit(limit).map_err(|e| ReportError::Invalid(format!("--{e}")))?;
    if lmc > flitsim_topology::MAX_LMC {
        return Err(ReportError::Invalid(format!(
            "LMC {lmc} is out of range: InfiniBand allows 0..={} (2^lmc paths per destination)",
            flitsim_topology::MAX_LMC
        )));
    }
    let flows = read_cac_flows(flows_path)?;
    let topo = load_topology(spec_or_path)?;
    let engine = engine.unwrap_or_else(|| crate::experiment::engine_for_shape(&topo));
    check_routing_memory(&topo, max_vls, lmc)?;
    let fabric = route_with(
        &topo,
        engine,
        &RoutingRequest {
            vls: max_vls,
            classes: 1,
        },
        &EngineOptions {
            lmc,
            ..EngineOptions::default()
        },
    )?;
    let report = cac::admit(&topo, &fabric, &flows, limit).map_err(|e| match e {
        CacError::Flow { .. } => ReportError::Invalid(format!("{}: {e}", flows_path.display())),
        CacError::Limit(_) => ReportError::Invalid(format!("--{e}")),
    })?;
    let mut out = serde_json::json!({
        "topology": topo.name(),
        "engine": fabric.engine,
        "endpoints": topo.num_endpoints(),
        "lmc": lmc,
    });
    if let (Some(o), serde_json::Value::Object(r)) = (
        out.as_object_mut(),
        serde_json::to_value(&report).expect("serialises"),
    ) {
        o.extend(r);
    }
    Ok(out.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(s: &str) -> serde_json::Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn specs_and_files_load() {
        let t = load_topology("torus:3x3").unwrap();
        assert_eq!(t.num_switches(), 9);
        let dir = std::env::temp_dir().join(format!("flitsim-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let j = dir.join("t.json");
        std::fs::write(&j, t.to_json()).unwrap();
        let ib = dir.join("t.topo");
        std::fs::write(&ib, t.to_ibnetdiscover()).unwrap();
        assert_eq!(
            load_topology(j.to_str().unwrap()).unwrap().num_switches(),
            9
        );
        assert_eq!(
            load_topology(ib.to_str().unwrap()).unwrap().num_endpoints(),
            9
        );
        std::fs::write(&ib, "Switch 4 \"S-1\"\n[1] oops\n").unwrap();
        let m = load_topology(ib.to_str().unwrap()).unwrap_err().to_string();
        assert!(m.contains("line 2"), "{m}");
        let m = load_topology("nowhere/x.topo").unwrap_err().to_string();
        assert!(m.contains("no such file"), "{m}");
        let m = load_topology("torus:3y3").unwrap_err().to_string();
        assert!(m.contains("generator spec"), "{m}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn every_listed_topology_format_converts() {
        for to in TOPOLOGY_FORMATS {
            assert!(topo_convert("torus:2x2", to).is_ok(), "{to}");
        }
        assert!(topo_convert("torus:2x2", "dot").is_err());
    }

    #[test]
    fn info_of_a_torus() {
        let i = json(&topo_info_json("torus:6x6").unwrap());
        assert_eq!(i["switches"], 36);
        assert_eq!(i["endpoints"], 36);
        assert_eq!(i["inter_switch_links"], 72);
        assert_eq!(i["diameter"], 6);
        assert_eq!(i["connected"], true);
        assert_eq!(i["shape"]["kind"], "torus");
    }

    #[test]
    fn route_reports_cycles_and_hops() {
        let r = json(&route_json("torus:6x6", "minhop", 1, 1, None, None).unwrap());
        assert_eq!(r["deadlock_free"], false);
        assert!(r["cycle"].as_array().unwrap().len() >= 2);
        assert_eq!(r["cdg"]["per_vl"][0]["acyclic"], false);
        let r = json(&route_json("torus:6x6", "dor", 2, 1, None, None).unwrap());
        assert_eq!(r["deadlock_free"], true);
        assert_eq!(r["max_hops"], 6);
        assert_eq!(r["vls_used"], 2);
        assert_eq!(r["layers"], 2);
        assert!(r["cycle"].is_null());
        // Mean distance on a 6-ring is 1.5 per dimension over all pairs; distinct pairs only:
        let ring: u32 = [0, 1, 1, 2, 2, 3].iter().sum();
        let mean = 2.0 * ring as f64 / 6.0 * 36.0 / 35.0;
        assert!((r["mean_hops"].as_f64().unwrap() - mean).abs() < 1e-9);
        // A ring needs 2 layers; dfsssp's balancing spreads them over all 8 VLs.
        let r = json(&route_json("torus:6", "dfsssp", 8, 1, None, None).unwrap());
        assert_eq!(
            (r["layers"].as_u64(), r["vls_used"].as_u64()),
            (Some(2), Some(8))
        );
        // MinHop on a ring is not deadlock-free: no "layers needed" is claimed for it.
        let r = json(&route_json("torus:6", "minhop", 8, 1, None, None).unwrap());
        assert_eq!(
            (r["deadlock_free"].as_bool(), r["layers"].is_null()),
            (Some(false), true)
        );
        let r = json(&route_json("torus:8x8", "minhop", 8, 1, None, None).unwrap());
        assert_eq!(
            (r["deadlock_free"].as_bool(), r["layers"].is_null()),
            (Some(false), true)
        );
        // A tree is deadlock-free with one layer.
        let r = json(&route_json("kary-ntree:k=2,n=3", "minhop", 1, 1, None, None).unwrap());
        assert_eq!(
            (r["deadlock_free"].as_bool(), r["layers"].as_u64()),
            (Some(true), Some(1))
        );
    }

    #[test]
    fn options_are_parsed_and_checked() {
        let t = load_topology("random:switches=8,ports=6,endpoints=1,links=12,seed=2").unwrap();
        let o = engine_options(
            &t,
            Some(r#"{"heuristic":"first","online":true,"balance":false,"roots":["0x0002c90000000003"]}"#),
        )
        .unwrap();
        assert_eq!(o.heuristic, CycleHeuristic::First);
        assert!(o.online);
        assert_eq!(o.roots, vec![SwitchId(3)]);
        assert!(engine_options(&t, Some(r#"{"heuristc":"first"}"#)).is_err());
        let m = engine_options(&t, Some(r#"{"roots":["0x99"]}"#))
            .unwrap_err()
            .to_string();
        assert!(m.contains("not a switch"), "{m}");
    }

    #[test]
    fn bandwidth_verdicts() {
        let j = json(
            &bandwidth_json(
                "kary-ntree:k=4,n=1",
                None,
                &[(0, 1, 0.3), (0, 2, 0.7), (0, 3, 0.1)],
                &[(1, 2)],
                16.0,
                16.0,
                None,
                1,
            )
            .unwrap(),
        );
        let f = j["flows"].as_array().unwrap();
        assert_eq!(f[0]["admitted"], true);
        assert!((f[0]["idt"].as_f64().unwrap() - 16.0 / 0.3).abs() < 1e-9);
        assert_eq!(f[2]["admitted"], false);
        assert_eq!(f[2]["refused_by"]["criterion"], "source_node");
        assert_eq!(f[2]["refused_by"]["node"], 0);
        // Node 1 receives 0.3; node 2 receives 0.7: the best-effort flow 1 → 2 gets 0.3.
        assert!((f[3]["granted"].as_f64().unwrap() - 0.3).abs() < 1e-9);
        let e = bandwidth_json(
            "kary-ntree:k=4,n=1",
            None,
            &[(1, 1, 0.1)],
            &[],
            16.0,
            16.0,
            None,
            1,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("--flow 1:1:0.1") && e.to_string().contains("itself"),
            "{e}"
        );
    }

    #[test]
    fn voqsw_section_tables_and_dumps() {
        let spec = "random:switches=8,ports=8,endpoints=4,links=16,seed=2";
        let o = r#"{"voqsw":{"sls":8,"vls":8}}"#;
        let r = json(&route_json(spec, "updn", 1, 1, None, Some(o)).unwrap());
        let v = &r["voqsw"];
        assert!(v["tuples"].as_u64().unwrap() > 0, "{v}");
        assert!(v["considered"].as_u64().unwrap() <= v["tuples"].as_u64().unwrap());
        assert!(v["sls_used"].as_u64().unwrap() <= 8);
        assert!(v["sls_for_full"].is_null());
        assert_eq!(r["routing_sls"], 8);
        assert_eq!(r["deadlock_free"], true);
        // Without --voqsw, no section.
        let r = json(&route_json(spec, "updn", 1, 1, None, None).unwrap());
        assert!(r.get("voqsw").is_none());
        // Full VOQ reports the SLs it needs.
        let o = r#"{"voqsw":{"sls":"full","vls":8}}"#;
        let r = json(&route_json(spec, "updn", 1, 1, None, Some(o)).unwrap());
        let v = &r["voqsw"];
        assert_eq!(v["full"], true);
        assert_eq!(v["percent"], 100.0);
        assert_eq!(v["sls_for_full"], v["sls_used"]);
        assert_eq!(r["deadlock_free"], true);
        // --out writes the dumps, and they read back as the same VLs and path SLs.
        let dir = std::env::temp_dir().join(format!("flitsim-voqsw-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let o = r#"{"voqsw":{"sls":4,"vls":4}}"#;
        let r = json(&route_json(spec, "updn", 1, 1, Some(&dir), Some(o)).unwrap());
        assert!(r["files"].to_string().contains("path-sl.txt"), "{r}");
        let mut topo = load_topology(spec).unwrap();
        topo.assign_missing_ids(0).unwrap();
        let back = opensm::read_dir(&topo, &dir).unwrap();
        let opts = engine_options(&topo, None).unwrap();
        let input = VoqswInput {
            sls: VoqswSlsInput::Count(4),
            vls: Some(4),
        };
        let (f, _) = route_report_voqsw(&topo, "updn", 1, 1, &opts, Some(&input)).unwrap();
        let n = topo.num_endpoints() as u32;
        for s in 0..n {
            for d in 0..n {
                let (a, b) = (EndpointId(s), EndpointId(d));
                assert_eq!(
                    f.trace(&topo, a, b, 0).unwrap(),
                    back.trace(&topo, a, b, 0).unwrap()
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        // What cannot work says what would.
        // (8 switches need 16 SLs for full VOQ here, which fit; 16 switches need 48.)
        let big = "random:switches=16,ports=8,endpoints=4,links=32,seed=3";
        let e = route_json(
            big,
            "updn",
            1,
            1,
            Some(&dir),
            Some(r#"{"voqsw":{"sls":"full"}}"#),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("InfiniBand has 16") && e.contains("--sls 16"),
            "{e}"
        );
        let e = route_json(
            spec,
            "updn",
            1,
            1,
            Some(&dir),
            Some(r#"{"voqsw":{"sls":20}}"#),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("--sls 16 or fewer"), "{e}");
        for (bad, want) in [
            (r#"{"voqsw":{"sls":0}}"#, "at least 1 SL"),
            (r#"{"voqsw":{"sls":"all"}}"#, "or full"),
            (r#"{"voqsw":{"sls":4,"vls":0}}"#, "at least 1 VL"),
        ] {
            let e = route_json(spec, "updn", 1, 1, None, Some(bad))
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{bad}: {e}");
        }
        // DOR keeps its dateline VLs: 8 VLs give 4 per lane; 1 VL is too few.
        let o = r#"{"voqsw":{"sls":4,"vls":8}}"#;
        let r = json(&route_json("torus:4x4", "dor", 2, 1, None, Some(o)).unwrap());
        assert_eq!(r["deadlock_free"], true);
        // Wire SLs: 4 VOQsw SLs in each of DOR's path SLs.
        assert_eq!(r["routing_sls"].as_u64().unwrap() % 4, 0);
        let o = r#"{"voqsw":{"sls":8,"vls":1}}"#;
        let e = route_json("torus:4x4", "dor", 2, 1, None, Some(o))
            .unwrap_err()
            .to_string();
        assert!(e.contains("give at least 2 VLs"), "{e}");
    }

    #[test]
    fn ebb_of_tables_equals_ebb_of_the_engine() {
        let dir = std::env::temp_dir().join(format!("flitsim-report-ebb-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        route_json("kary-ntree:k=2,n=3", "ftree", 2, 1, Some(&dir), None).unwrap();
        let a = json(&ebb_json("kary-ntree:k=2,n=3", Some("ftree"), None, 20, 3, 2).unwrap());
        let b = json(&ebb_json("kary-ntree:k=2,n=3", None, Some(&dir), 20, 3, 2).unwrap());
        assert_eq!(a["ebb_mean"], b["ebb_mean"]);
        assert_eq!(b["engine"], "file");
        assert!(ebb_json("kary-ntree:k=2,n=3", None, None, 20, 3, 2).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn cac_reads_toml_and_json_flow_files_and_names_bad_keys() {
        let dir = std::env::temp_dir().join(format!("flitsim-cac-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let toml_file = dir.join("flows.toml");
        std::fs::write(
            &toml_file,
            "[[flow]]\nsrc = 0\ndst = 3\nrate = 0.3\nname = \"a\"\n\
             [[flow]]\nsrc = 1\ndst = 3\nrate = 0.3\n\
             [[flow]]\nsrc = 2\ndst = 3\nrate = 0.3\n\
             [[flow]]\nsrc = 2\ndst = 3\nrate = 1\nqos = false\n",
        )
        .unwrap();
        let v = json(&cac_json("kary-ntree:k=4,n=1", &toml_file, None, 0, 0.7, 2).unwrap());
        assert_eq!(v["engine"], "dmodk");
        assert_eq!(v["admitted"].as_array().unwrap().len(), 2);
        assert_eq!(v["admitted"][0]["name"], "a");
        assert_eq!(v["rejected"][0]["flow"], 2);
        assert_eq!(
            v["rejected"][0]["link"]["name"],
            "switch \"sw_l0_0\" port 3 → endpoint 3 (\"ep3\")"
        );
        assert_eq!(v["rejected"][0]["link"]["from"]["port"], 3);
        assert_eq!(v["unregulated"][0]["flow"], 3);
        assert_eq!(v["links"].as_array().unwrap().len(), 3);
        assert_eq!(v["links"][2]["flows"], 2);
        let json_file = dir.join("flows.json");
        std::fs::write(
            &json_file,
            r#"{"flow": [{"src": 0, "dst": 5, "rate": 0.5}, {"src": 1, "dst": 5, "rate": 0.1}]}"#,
        )
        .unwrap();
        let v =
            json(&cac_json("kary-ntree:k=4,n=2", &json_file, Some("minhop"), 2, 0.7, 2).unwrap());
        assert_eq!((v["lmc"].as_u64(), v["paths"].as_u64()), (Some(2), Some(4)));
        assert_eq!(v["admitted"].as_array().unwrap().len(), 2);
        let e = |text: &str| {
            std::fs::write(&toml_file, text).unwrap();
            cac_json("kary-ntree:k=4,n=1", &toml_file, None, 0, 0.7, 2)
                .unwrap_err()
                .to_string()
        };
        let f = toml_file.display().to_string();
        let two = "[[flow]]\nsrc = 0\ndst = 1\nrate = 0.1\n[[flow]]\nsrc = 0\ndst = 1\n";
        assert_eq!(
            e(&format!("{two}rate = \"fast\"\n")),
            format!("{f}: flow[1].rate: invalid type: string \"fast\", expected f64")
        );
        assert_eq!(
            e(&format!("{two}rate = -1\n")),
            format!("{f}: flow[1].rate: -1: must be a positive number of flits/cycle")
        );
        let m = e(&format!("{two}rate = 0.1\nsize = 3\n"));
        assert!(m.starts_with(&format!("{f}: flow[1]")), "{m}");
        assert!(m.contains("unknown field `size`"), "{m}");
        let m = e("[[flow]]\nsrc = 0\nrate = 0.1\n");
        assert!(
            m.contains("flow[0]") && m.contains("missing field `dst`"),
            "{m}"
        );
        assert!(e("[[flow]]\nsrc = 0\ndst = 9\nrate = 0.1\n")
            .contains("flow[0].dst: endpoint 9 does not exist"));
        let m = e("[[flows]]\nsrc = 0\n");
        assert!(
            m.starts_with(&format!(
                "{f}: flows: unknown field `flows`, expected `flow`"
            )),
            "{m}"
        );
        assert!(e("flow = []\n").contains("no flows"));
        assert!(e("[[flow]\n").contains("not valid TOML"));
        let m = cac_json(
            "kary-ntree:k=4,n=1",
            &dir.join("none.toml"),
            None,
            0,
            0.7,
            2,
        )
        .unwrap_err()
        .to_string();
        assert!(m.starts_with("cannot read flow file"), "{m}");
        let m = cac_json("kary-ntree:k=4,n=1", &json_file, None, 0, 1.5, 2)
            .unwrap_err()
            .to_string();
        assert!(m.starts_with("--limit 1.5"), "{m}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
