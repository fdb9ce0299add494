//! The one table builder of all engines: given the LFTs and how wire SLs map to VLs, it fills
//! the path SL table, the switches' SL→VL tables and the NICs' SL→VL table of a
//! [`FabricConfig`].
//!
//! Most engines use *lanes*: path SL `p` of traffic class `c` travels on VL `base(c) + p` on
//! every hop and on the injection link ([`lane_vl`], [`lane_fabric`]); single-layer engines
//! are the case of one lane ([`single_layer_fabric`]). DOR also picks the VL by the output
//! port's dimension and uses [`assemble_per_switch`] directly.
use super::{RoutingRequest, VlBlocks};
use crate::{FabricConfig, RoutingError};
use flitsim_topology::{PortNum, SwitchId, Topology};

/// The path SL table of `n` endpoints, `t[src · n + dst] = f(src, dst)`; empty when
/// `routing_sls == 1`, as [`FabricConfig::path_sl`] wants it.
pub(super) fn path_sls(
    n: usize,
    routing_sls: u8,
    mut f: impl FnMut(usize, usize) -> u8,
) -> Vec<u8> {
    if routing_sls <= 1 {
        return Vec::new();
    }
    let mut t = vec![0u8; n * n];
    for src in 0..n {
        for dst in 0..n {
            t[src * n + dst] = f(src, dst);
        }
    }
    t
}

/// The lane of the endpoint pair `src → dst` among `lanes`: `(src + dst) mod lanes`, which
/// spreads every source's destinations (and every destination's sources) evenly.
pub(super) fn pair_lane(src: usize, dst: usize, lanes: u8) -> u8 {
    ((src + dst) % lanes as usize) as u8
}

/// The VL of wire SL `sl` when path SL `p` of class `c` uses VL `base(c) + p`.
pub(super) fn lane_vl(blocks: &VlBlocks, routing_sls: u8, sl: u8) -> u8 {
    blocks.base(sl / routing_sls) + sl % routing_sls
}

/// What an engine decided besides its LFTs: the path SLs per class, the VLs per class it needs
/// for deadlock freedom ([`FabricConfig::layers`]) and the path SL of every endpoint pair
/// (from [`path_sls`]).
pub(super) struct PathSls {
    /// [`FabricConfig::routing_sls`].
    pub routing_sls: u8,
    /// [`FabricConfig::layers`].
    pub layers: u8,
    /// [`FabricConfig::path_sl`].
    pub path_sl: Vec<u8>,
}

impl PathSls {
    /// One path SL and one layer: the single-layer engines.
    pub fn single() -> Self {
        PathSls {
            routing_sls: 1,
            layers: 1,
            path_sl: Vec::new(),
        }
    }
}

/// Assembles the tables: a hop leaving any switch by output port `out` with wire SL `sl` uses
/// VL `hop_vl(out, sl)`, a NIC injecting wire SL `sl` uses `nic_vl(sl)`.
pub(super) fn assemble(
    engine: &str,
    topo: &Topology,
    req: &RoutingRequest,
    lft: Vec<Vec<PortNum>>,
    sls: PathSls,
    hop_vl: impl Fn(PortNum, u8) -> u8,
    nic_vl: impl Fn(u8) -> u8,
) -> FabricConfig {
    assemble_per_switch(
        engine,
        topo,
        req,
        lft,
        sls,
        |_, out, sl| hop_vl(out, sl),
        nic_vl,
    )
}

/// [`assemble`] where the VL of a hop may depend on the switch too: `hop_vl(switch, out, sl)`.
pub(super) fn assemble_per_switch(
    engine: &str,
    topo: &Topology,
    req: &RoutingRequest,
    lft: Vec<Vec<PortNum>>,
    sls: PathSls,
    hop_vl: impl Fn(SwitchId, PortNum, u8) -> u8,
    nic_vl: impl Fn(u8) -> u8,
) -> FabricConfig {
    let wire_sls = req.classes as usize * sls.routing_sls as usize;
    let sl2vl = FabricConfig::build_sl2vl(topo, wire_sls, |s, _, out, sl| hop_vl(s, out, sl));
    let nic_sl2vl = (0..wire_sls).map(|sl| nic_vl(sl as u8)).collect();
    FabricConfig {
        alt_paths: Vec::new(),
        engine: engine.into(),
        num_vls: req.vls,
        classes: req.classes,
        routing_sls: sls.routing_sls,
        layers: sls.layers,
        lft,
        path_sl: sls.path_sl,
        sl2vl,
        nic_sl2vl,
        ports: FabricConfig::port_counts(topo),
        rule: None,
    }
}

/// Tables where every hop and the NIC use the VL of the path SL's lane ([`lane_vl`]).
pub(super) fn lane_fabric(
    engine: &str,
    topo: &Topology,
    req: &RoutingRequest,
    blocks: &VlBlocks,
    lft: Vec<Vec<PortNum>>,
    sls: PathSls,
) -> FabricConfig {
    let routing_sls = sls.routing_sls;
    let vl = |sl: u8| lane_vl(blocks, routing_sls, sl);
    assemble(engine, topo, req, lft, sls, |_, sl| vl(sl), vl)
}

/// Tables with one VL per class and no path SLs, for the single-layer engines.
pub(super) fn single_layer_fabric(
    engine: &str,
    topo: &Topology,
    req: &RoutingRequest,
    lft: Vec<Vec<PortNum>>,
) -> Result<FabricConfig, RoutingError> {
    let blocks = VlBlocks::new(req, 1, engine)?;
    Ok(lane_fabric(
        engine,
        topo,
        req,
        &blocks,
        lft,
        PathSls::single(),
    ))
}
