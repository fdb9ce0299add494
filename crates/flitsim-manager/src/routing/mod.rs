//! Routing engines: offline algorithms that turn a [`Topology`] into a [`FabricConfig`]
//! (forwarding tables, path SLs and SL→VL tables), the way a subnet manager programs a fabric.
//!
//! ```
//! use flitsim_manager::{cdg, route, RoutingRequest};
//! use flitsim_topology::generators;
//!
//! let topo = generators::torus(&[4, 4], 1, 1, 1).unwrap();
//! let fabric = route(&topo, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
//! assert!(cdg::verify(&topo, &fabric).unwrap().deadlock_free);
//! ```
//!
//! | name | topology | deadlock freedom | VLs needed per class |
//! |---|---|---|---|
//! | `dor` | [`Shape::Torus`] (torus or mesh) | dateline VL per dimension (tori) | 2 (torus), 1 (mesh) |
//! | `dmodk` (`updown-dmodk`) | [`Shape::KaryNTree`] | up/down paths | 1 |
//! | `ftree` | [`Shape::KaryNTree`], [`Shape::Xgft`] | up/down paths | 1 |
//! | `updn` | any connected | Up*/Down* turn restriction | 1 |
//! | `minhop` | any | **not guaranteed** | 1 |
//! | `sssp` | any | **not guaranteed** | 1 |
//! | `lash` | any | acyclic virtual layers (first fit) | as many layers as needed |
//! | `dfsssp` | any | acyclic virtual layers (cycle breaking) | as many layers as needed |
//! | `nue` | any connected | acyclic CDG per VL, routed on the CDG with escape paths | any budget, 1 included (uses all it is given) |
//!
//! **LMC multipath** ([`EngineOptions::lmc`], [`RoutingEngine::route_paths`]): `2^lmc` paths
//! per destination, path `k` for the destination's LID `base + k`. `minhop`, `updn`, `ftree`
//! and `dmodk` keep their own routing as path 0 and route paths `k ≥ 1` over the ports their
//! own legal distance allows (min-hop; up*/down* of the same orientation), least used by the
//! destination's earlier paths first (`multipath.rs`), so the up/down engines stay
//! deadlock-free over all paths; `sssp` and `dfsssp` route every (destination, path) as a
//! destination of its own, preferring links the destination's earlier paths left free, and
//! DFSSSP's layers cover all of them; `dor` gives every LID its one path; `lash` (and any
//! engine without multipath) refuses `lmc > 0`, naming the engines that have it.
//!
//! Engines with parameters (Up*/Down* roots, DFSSSP's heuristic and variant, layer balancing)
//! take them from [`EngineOptions`] through [`engine_with_options`] and [`route_with`];
//! [`engine_by_name`] and [`route`] use the defaults.
//!
//! ## VLs, classes and service levels
//!
//! A [`RoutingRequest`] asks for `classes` traffic classes on links with `vls` data VLs. Each
//! class gets its own block of VLs ([`VlBlocks`]) so that classes never share buffers; when
//! there are too few VLs for that, classes share blocks round-robin. Inside its block an engine
//! may use several VLs, selected per path by the *path SL*: the wire SL of a packet is
//! `class · routing_sls + path_sl` (see [`FabricConfig`]).
use crate::{FabricConfig, RoutingError};
use flitsim_topology::{NodeId, PortNum, Shape, SwitchId, Topology};
use serde::{Deserialize, Serialize};

mod dfsssp;
mod dmodk;
mod dor;
mod ftree;
mod lash;
mod layered;
mod minhop;
mod multipath;
mod nue;
pub mod rule;
mod sssp;
mod tables;
#[cfg(test)]
mod testutil;
mod updn;

pub use dfsssp::DfssspEngine;
pub use dmodk::DmodkEngine;
pub use dor::DorEngine;
pub use ftree::FtreeEngine;
pub use lash::LashEngine;
pub use layered::CycleHeuristic;
pub use minhop::MinHopEngine;
pub use multipath::MULTIPATH_ENGINES;
pub use nue::{NueEngine, NueStats};
pub use sssp::SsspEngine;
pub use updn::UpDownEngine;

/// What the caller asks of a routing engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoutingRequest {
    /// Data VLs on every link (≥ 1).
    pub vls: u8,
    /// Traffic classes (QoS SLs) the tables must carry (≥ 1).
    pub classes: u8,
}

/// An offline routing algorithm: topology in, fabric tables out.
///
/// Engines are stateless and deterministic: the same topology and request always give the
/// same tables.
pub trait RoutingEngine: Send + Sync {
    /// The name the engine is selected by (see [`engine_by_name`]).
    fn name(&self) -> &'static str;
    /// Computes the tables for `topo`. Fails with [`RoutingError::Unroutable`] when the
    /// topology does not have the structure the engine needs and with
    /// [`RoutingError::NotEnoughVls`] when `req.vls` cannot hold the engine's VL scheme.
    fn route(&self, topo: &Topology, req: &RoutingRequest) -> Result<FabricConfig, RoutingError>;

    /// Computes `paths` paths per destination (the LIDs of an LMC > 0 port:
    /// `paths = 2^lmc`), path 0 in [`FabricConfig::lft`] and the others in
    /// [`FabricConfig::alt_paths`]. With `paths == 1` this is [`route`](Self::route); engines
    /// without multipath fail for more (naming the engines that have it,
    /// [`MULTIPATH_ENGINES`]).
    fn route_paths(
        &self,
        topo: &Topology,
        req: &RoutingRequest,
        paths: usize,
    ) -> Result<FabricConfig, RoutingError> {
        if paths <= 1 {
            self.route(topo, req)
        } else {
            Err(multipath::unsupported(self.name()))
        }
    }
}

/// Names accepted by [`engine_by_name`], for messages and command-line help.
pub const ENGINE_NAMES: &[&str] = &[
    "dor",
    "dmodk",
    "updown-dmodk",
    "minhop",
    "ftree",
    "updn",
    "sssp",
    "lash",
    "dfsssp",
    "nue",
];

/// Names in [`ENGINE_NAMES`] that select another engine, as `(alias, engine)`; help texts
/// leave them out.
pub const ENGINE_ALIASES: &[(&str, &str)] = &[("updown-dmodk", "dmodk")];

/// Parameters of the engines that have any; each engine reads only its own fields and
/// [`Default`] gives every engine's defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EngineOptions {
    /// `updn`: root switches of the up/down orientation (empty: the highest-degree switch).
    pub roots: Vec<SwitchId>,
    /// `dfsssp`: which edge of a dependency cycle the offline algorithm cuts.
    pub heuristic: CycleHeuristic,
    /// `dfsssp`: assign paths online (first fit, one cycle search per path) instead of the
    /// offline cycle breaking.
    pub online: bool,
    /// `dfsssp`, `lash`: spread the layers over spare VLs. `None` takes the engine's default
    /// (on for `dfsssp`, as in the paper; off for `lash`, whose path SL is its layer).
    pub balance: Option<bool>,
    /// `dfsssp`, `lash`, `nue`: use at most this many VLs (layers) per traffic class.
    pub max_layers: Option<u8>,
    /// `dfsssp`: first-fit restarts after the paper's assignment (`None`: the default,
    /// [`DfssspEngine::DEFAULT_RESTARTS`]; 0: the paper's algorithm alone).
    pub restarts: Option<u32>,
    /// Every engine: the LID mask count, `2^lmc` paths per destination (0..=[`MAX_LMC`];
    /// see [`RoutingEngine::route_paths`]). 0, the default, is single-path routing.
    pub lmc: u8,
}

/// Largest LMC InfiniBand allows (a port has at most 128 LIDs).
pub const MAX_LMC: u8 = flitsim_topology::MAX_LMC;

/// Looks an engine up by name (see [`ENGINE_NAMES`]; `"updown-dmodk"` is an alias of
/// `"dmodk"`) and configures it from `options`. An unknown name gives
/// [`RoutingError::Unroutable`] listing the valid names.
pub fn engine_with_options(
    name: &str,
    options: &EngineOptions,
) -> Result<Box<dyn RoutingEngine>, RoutingError> {
    match name {
        "dor" => Ok(Box::new(DorEngine)),
        "dmodk" | "updown-dmodk" => Ok(Box::new(DmodkEngine)),
        "ftree" => Ok(Box::new(FtreeEngine)),
        "updn" => Ok(Box::new(UpDownEngine {
            roots: options.roots.clone(),
        })),
        "minhop" => Ok(Box::new(MinHopEngine)),
        "sssp" => Ok(Box::new(SsspEngine)),
        "lash" => Ok(Box::new(LashEngine {
            balance: options.balance.unwrap_or(false),
            max_layers: options.max_layers,
        })),
        "dfsssp" => Ok(Box::new(DfssspEngine {
            heuristic: options.heuristic,
            online: options.online,
            balance: options.balance.unwrap_or(true),
            max_layers: options.max_layers,
            restarts: options.restarts.unwrap_or(DfssspEngine::DEFAULT_RESTARTS),
        })),
        "nue" => Ok(Box::new(NueEngine {
            max_layers: options.max_layers,
        })),
        _ => Err(RoutingError::Unroutable(format!(
            "unknown routing engine '{name}'; valid names are: {}",
            ENGINE_NAMES.join(", ")
        ))),
    }
}

/// Looks an engine up by name with default options; see [`engine_with_options`].
pub fn engine_by_name(name: &str) -> Result<Box<dyn RoutingEngine>, RoutingError> {
    engine_with_options(name, &EngineOptions::default())
}

/// Routes `topo` with the engine called `name` and checks that the resulting tables have the
/// sizes the topology needs ([`FabricConfig::check_shape`]). It does not verify deadlock
/// freedom; call [`crate::cdg::verify`] for that.
pub fn route(
    topo: &Topology,
    name: &str,
    req: &RoutingRequest,
) -> Result<FabricConfig, RoutingError> {
    route_with(topo, name, req, &EngineOptions::default())
}

/// [`route`] with engine parameters.
pub fn route_with(
    topo: &Topology,
    name: &str,
    req: &RoutingRequest,
    options: &EngineOptions,
) -> Result<FabricConfig, RoutingError> {
    if options.lmc > MAX_LMC {
        return Err(RoutingError::Unroutable(format!(
            "LMC {} is out of range: InfiniBand allows 0..={MAX_LMC} (2^LMC paths per destination)",
            options.lmc
        )));
    }
    let fabric =
        engine_with_options(name, options)?.route_paths(topo, req, 1usize << options.lmc)?;
    fabric.check_shape(topo)?;
    Ok(fabric)
}

/// How the VLs of a link are divided between traffic classes.
///
/// With `vls ≥ classes · needed` each class `c` owns the VLs `[c · per_class, (c+1) · per_class)`
/// with `per_class = vls / classes`. With fewer VLs (but at least `needed`), there are
/// `vls / needed` blocks of `needed` VLs and class `c` uses block `c mod blocks`, so some
/// classes share buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VlBlocks {
    /// VLs in each block.
    pub per_class: u8,
    /// Number of distinct blocks.
    pub blocks: u8,
}

impl VlBlocks {
    /// Splits `req.vls` for an engine that needs `needed` VLs per class; `engine` names the
    /// engine in error messages.
    pub fn new(req: &RoutingRequest, needed: u8, engine: &str) -> Result<Self, RoutingError> {
        if req.classes == 0 {
            return Err(RoutingError::Unroutable(
                "a routing request needs at least one traffic class".into(),
            ));
        }
        let needed = needed.max(1);
        if req.vls < needed {
            return Err(RoutingError::NotEnoughVls(format!(
                "{engine} needs at least {needed} VL{} on this topology (more keep traffic classes apart), but only {} {} available",
                if needed == 1 { "" } else { "s" },
                req.vls,
                if req.vls == 1 { "is" } else { "are" }
            )));
        }
        if req.vls as u32 >= req.classes as u32 * needed as u32 {
            Ok(VlBlocks {
                per_class: req.vls / req.classes,
                blocks: req.classes,
            })
        } else {
            Ok(VlBlocks {
                per_class: needed,
                blocks: req.vls / needed,
            })
        }
    }

    /// First VL of the block that traffic class `class` uses.
    pub fn base(&self, class: u8) -> u8 {
        (class % self.blocks) * self.per_class
    }
}

/// SLs an InfiniBand packet header can name; engines keep their wire SLs within it when they
/// can (see `fit_lanes`).
pub const IB_WIRE_SLS: u32 = 16;

/// The number of lanes (independent copies of an engine's VL scheme, each `sls_per_lane` path
/// SLs wide) to use, at most `available` (the spare VLs allow that many).
///
/// Lanes only spread load; deadlock freedom needs one. So lanes are added only while all wire
/// SLs (`classes · lanes · sls_per_lane`) fit InfiniBand's 16 SLs ([`IB_WIRE_SLS`]) and the
/// tables can be written as OpenSM dumps. When even one lane needs more than 16 wire SLs (a
/// torus of 5 or more dimensions, or many classes), one lane is used — the fewest SLs the
/// scheme allows — if it fits the 8-bit SL fields of flitsim's own tables; the dumps then
/// refuse it with a message saying what would fit. Errors when not even one lane fits 8 bits.
fn fit_lanes(
    available: u8,
    sls_per_lane: u32,
    classes: u8,
    engine: &str,
) -> Result<u8, RoutingError> {
    let classes = classes.max(1) as u32;
    // routing_sls is a u8 and every wire SL (< classes · routing_sls) must fit in a u8.
    let by_u8 = 255 / sls_per_lane;
    let by_wire = 256 / (sls_per_lane * classes);
    if by_u8.min(by_wire) == 0 || available == 0 {
        return Err(RoutingError::Unroutable(format!(
            "{engine} needs {sls_per_lane} path SLs per traffic class; with {classes} classes that exceeds the 256 wire SLs"
        )));
    }
    let by_ib = IB_WIRE_SLS / (sls_per_lane * classes);
    Ok((available as u32).min(by_ib.max(1)) as u8)
}

/// Checks that port `port` of switch `s` exists and leads to `expected`, as the topology's
/// [`Shape`] port convention promises. Structured engines call this so that a topology whose
/// shape metadata does not match its links fails with a clear message instead of producing
/// tables that loop.
fn check_port_leads_to(
    topo: &Topology,
    engine: &str,
    s: SwitchId,
    port: PortNum,
    expected: NodeId,
) -> Result<(), RoutingError> {
    let found = (port < topo.num_ports(s))
        .then(|| topo.switch_peer(s, port))
        .flatten()
        .map(|p| p.remote.node);
    if found == Some(expected) {
        return Ok(());
    }
    let name = |n: NodeId| match n {
        NodeId::Switch(x) => format!("switch {}", topo.switches()[x as usize].name),
        NodeId::Endpoint(x) => format!("endpoint {}", topo.endpoints()[x as usize].name),
    };
    Err(RoutingError::Unroutable(format!(
        "{engine}: by the port convention of {}, port {port} of switch {} should lead to {}, but it {}; \
         the topology's shape metadata does not match its links",
        shape_name(topo.shape()),
        topo.switches()[s.0 as usize].name,
        name(expected),
        match found {
            Some(n) => format!("leads to {}", name(n)),
            None => "is not connected".into(),
        }
    )))
}

/// A short name of a shape for error messages.
fn shape_name(shape: &Shape) -> String {
    match shape {
        Shape::Irregular => "an irregular topology".into(),
        Shape::Torus { sides, wrap, .. } => format!(
            "a {} {}",
            sides
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join("x"),
            if *wrap { "torus" } else { "mesh" }
        ),
        Shape::KaryNTree { k, n } => format!("a {k}-ary {n}-tree"),
        Shape::Xgft { h, m, w, .. } => format!("an XGFT({h}; {m:?}; {w:?})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flitsim_topology::generators;

    #[test]
    fn unknown_engine_lists_valid_names() {
        let err = engine_by_name("nope").err().expect("nope is not built in");
        let msg = err.to_string();
        assert!(matches!(err, RoutingError::Unroutable(_)));
        for name in [
            "'nope'",
            "dor",
            "dmodk",
            "updown-dmodk",
            "minhop",
            "lash",
            "dfsssp",
        ] {
            assert!(msg.contains(name), "{msg}");
        }
    }

    #[test]
    fn names_and_aliases_select_engines() {
        assert_eq!(engine_by_name("dor").unwrap().name(), "dor");
        assert_eq!(engine_by_name("dmodk").unwrap().name(), "dmodk");
        assert_eq!(engine_by_name("updown-dmodk").unwrap().name(), "dmodk");
        assert_eq!(engine_by_name("minhop").unwrap().name(), "minhop");
        for name in ENGINE_NAMES {
            let e = engine_by_name(name).unwrap();
            let alias_of = ENGINE_ALIASES
                .iter()
                .find(|(a, _)| a == name)
                .map(|(_, e)| *e);
            assert_eq!(e.name(), alias_of.unwrap_or(name), "{name}");
        }
        for (alias, engine) in ENGINE_ALIASES {
            assert!(ENGINE_NAMES.contains(alias) && ENGINE_NAMES.contains(engine));
        }
    }

    #[test]
    fn every_cycle_heuristic_parses_by_its_name() {
        assert_eq!(CycleHeuristic::ALL[0], CycleHeuristic::default());
        for h in CycleHeuristic::ALL {
            let parsed: CycleHeuristic =
                serde_json::from_str(&format!("\"{}\"", h.name())).unwrap();
            assert_eq!(parsed, h);
        }
    }

    #[test]
    fn vl_blocks_split_share_and_refuse() {
        let b = VlBlocks::new(&RoutingRequest { vls: 8, classes: 2 }, 2, "x").unwrap();
        assert_eq!(
            b,
            VlBlocks {
                per_class: 4,
                blocks: 2
            }
        );
        assert_eq!((b.base(0), b.base(1)), (0, 4));
        // 7 VLs, 3 classes: 2 each, VL 6 unused.
        let b = VlBlocks::new(&RoutingRequest { vls: 7, classes: 3 }, 2, "x").unwrap();
        assert_eq!((b.base(0), b.base(1), b.base(2)), (0, 2, 4));
        // 5 VLs, 4 classes, 2 needed: two blocks of 2, classes share them.
        let b = VlBlocks::new(&RoutingRequest { vls: 5, classes: 4 }, 2, "x").unwrap();
        assert_eq!(
            b,
            VlBlocks {
                per_class: 2,
                blocks: 2
            }
        );
        assert_eq!((b.base(0), b.base(1), b.base(2), b.base(3)), (0, 2, 0, 2));
        let e = VlBlocks::new(&RoutingRequest { vls: 1, classes: 1 }, 2, "dor").unwrap_err();
        assert!(matches!(e, RoutingError::NotEnoughVls(_)));
        assert!(e.to_string().contains("dor needs at least 2 VLs"), "{e}");
        assert!(VlBlocks::new(&RoutingRequest { vls: 0, classes: 1 }, 1, "x").is_err());
        assert!(VlBlocks::new(&RoutingRequest { vls: 4, classes: 0 }, 1, "x").is_err());
    }

    #[test]
    fn lanes_are_capped_to_the_sl_space() {
        // Lanes while the wire SLs fit InfiniBand's 16.
        assert_eq!(fit_lanes(4, 4, 1, "x").unwrap(), 4);
        assert_eq!(fit_lanes(100, 4, 1, "x").unwrap(), 4);
        assert_eq!(fit_lanes(100, 4, 2, "x").unwrap(), 2);
        assert_eq!(fit_lanes(100, 1, 3, "x").unwrap(), 5);
        // A 3D torus (8 path SLs per lane) on 8 VLs: 2 lanes, 16 wire SLs, not 4 lanes / 32.
        assert_eq!(fit_lanes(4, 8, 1, "x").unwrap(), 2);
        // One lane already beyond 16 wire SLs: one lane, the fewest there can be.
        assert_eq!(fit_lanes(100, 4, 8, "x").unwrap(), 1);
        assert_eq!(fit_lanes(3, 32, 1, "x").unwrap(), 1);
        assert!(fit_lanes(1, 128, 4, "x").is_err());
    }

    #[test]
    fn route_selects_by_name_and_returns_checked_tables() {
        let topo = generators::kary_ntree(2, 2, 1).unwrap();
        let fabric = route(&topo, "dmodk", &RoutingRequest { vls: 2, classes: 2 }).unwrap();
        assert_eq!(fabric.engine, "dmodk");
        assert_eq!(fabric.classes, 2);
        assert!(route(&topo, "nope", &RoutingRequest { vls: 2, classes: 2 }).is_err());
    }
}
