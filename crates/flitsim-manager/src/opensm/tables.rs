//! Reading a set of dumps back as a [`FabricConfig`]: [`read_tables`] combines the parsed LFT,
//! SL2VL and path SL files, infers the split of SLs into classes and routing SLs, and checks
//! that no path uses an SL the tables drop.
use super::lft::read_lfts;
use super::path_sl::read_path_sl;
use super::sl2vl::{read_sl2vl_rows, Sl2vlNode, Sl2vlRow};
use super::{at, invalid, IB_DROP_VL, IB_SLS, LFTS_FILE, PATH_SL_FILE, SL2VL_FILE};
use crate::{FabricConfig, RoutingError};
use flitsim_topology::{EndpointId, Sl, Topology};

/// Reads OpenSM-style dumps (see the [module documentation](crate::opensm)) as the tables of
/// `topo`: the LFT dump text, and optionally the SL2VL dump and the path SL table. The result
/// has engine `"file"` (OpenSM's name for its dump-loading engine), `num_vls` one above the
/// largest VL the tables use, and has passed [`FabricConfig::check_shape`] and
/// [`FabricConfig::check_routes`]. Errors are [`RoutingError::InvalidTables`] naming the file
/// and line, or the routing errors of the checks.
pub fn read_tables(
    topo: &Topology,
    lfts_text: &str,
    sl2vl_text: Option<&str>,
    path_sl_text: Option<&str>,
) -> Result<FabricConfig, RoutingError> {
    if let Some(e) = topo.endpoints().iter().find(|e| e.lid.is_none()) {
        return Err(invalid(format!(
            "endpoint {} has no LID in the topology, so no dump entry can name it; the \
             dumps address endpoints by LID (give the topology LIDs, e.g. with the guid2lid \
             file `flitsim route --out` writes beside the dumps)",
            e.name
        )));
    }
    let lfts = read_lfts(topo, lfts_text)?;
    for (k, lft) in lfts.iter().enumerate() {
        check_every_endpoint_listed(topo, lft, k)?;
    }
    let path = path_sl_text
        .map(|t| read_path_sl(topo, t, lfts.len()))
        .transpose()?;
    let max_path_sl = path
        .as_ref()
        .and_then(|p| p.iter().flatten().copied().max())
        .unwrap_or(0);
    let (rows, split) = match sl2vl_text {
        Some(t) => read_sl2vl_rows(topo, t)?,
        None => (Vec::new(), None),
    };
    // Rows that matter: switch rows between real ports, and CA rows.
    let relevant = |r: &&Sl2vlRow| match r.node {
        Sl2vlNode::Switch(_) => r.in_port > 0 && r.out_port > 0,
        Sl2vlNode::Ca(_) => true,
    };
    let (classes, routing_sls) = match split {
        Some((c, r, ln)) => {
            if c == 0 || r == 0 || c as usize * r as usize > IB_SLS {
                return Err(at(
                    SL2VL_FILE,
                    ln,
                    format!("classes {c} x routing_sls {r} must be between 1 and {IB_SLS}"),
                ));
            }
            if max_path_sl >= r {
                return Err(invalid(format!(
                    "{PATH_SL_FILE}: SL {max_path_sl} is not below routing_sls = {r} \
                     ({SL2VL_FILE}, line {ln})"
                )));
            }
            (c, r)
        }
        None => {
            let routing = max_path_sl + 1;
            let used = rows
                .iter()
                .filter(relevant)
                .filter_map(|r| r.vls.iter().rposition(|&v| v != IB_DROP_VL))
                .max()
                .map_or(0, |sl| sl + 1);
            let wire = used.max(routing as usize);
            let classes = wire.div_ceil(routing as usize);
            if classes * routing as usize > IB_SLS {
                return Err(invalid(format!(
                    "{SL2VL_FILE}: SLs 0..{wire} are in use, which do not split into whole \
                     classes of {routing} routing SLs (the largest path SL is {max_path_sl}) \
                     within 16 SLs"
                )));
            }
            (classes as u8, routing)
        }
    };
    let wire = classes as usize * routing_sls as usize;
    // SL2VL tables; VL 15 ("drop") entries are remembered and checked against the paths.
    let mut sl2vl = FabricConfig::build_sl2vl(topo, wire, |_, _, _, _| 0);
    let mut nic: Option<(Vec<u8>, usize, usize)> = None;
    let mut dropped: Vec<(usize, usize)> = Vec::new();
    let mut nic_dropped = vec![false; wire];
    let mut max_vl = 0u8;
    for r in rows.iter().filter(relevant) {
        let vls = &r.vls[..wire];
        match r.node {
            Sl2vlNode::Switch(s) => {
                let p = topo.switches()[s].ports as usize;
                let base = ((r.in_port as usize - 1) * p + r.out_port as usize - 1) * wire;
                for (sl, &v) in vls.iter().enumerate() {
                    if v == IB_DROP_VL {
                        dropped.push((s, base + sl));
                    } else {
                        sl2vl[s][base + sl] = v;
                        max_vl = max_vl.max(v);
                    }
                }
            }
            Sl2vlNode::Ca(e) => match &nic {
                Some((first, e0, l0)) if first[..] != vls[..] => {
                    return Err(at(
                        SL2VL_FILE,
                        r.line,
                        format!(
                            "channel adapter {} maps SLs to VLs {:?}, but {} (line {l0}) maps them to {:?}; \
                             flitsim uses one SL-to-VL table for all endpoints",
                            topo.endpoints()[e].name,
                            vls,
                            topo.endpoints()[*e0].name,
                            first
                        ),
                    ))
                }
                Some(_) => {}
                None => {
                    for (sl, &v) in vls.iter().enumerate() {
                        if v == IB_DROP_VL {
                            nic_dropped[sl] = true;
                        } else {
                            max_vl = max_vl.max(v);
                        }
                    }
                    nic = Some((vls.to_vec(), e, r.line));
                }
            },
        }
    }
    let nic_sl2vl: Vec<u8> = match &nic {
        Some((v, _, _)) => v
            .iter()
            .map(|&v| if v == IB_DROP_VL { 0 } else { v })
            .collect(),
        None => vec![0; wire],
    };
    let mut path_sls = match path {
        Some(p) if routing_sls > 1 => p,
        _ => vec![Vec::new(); lfts.len()],
    }
    .into_iter();
    let path_sl = path_sls.next().unwrap_or_default();
    let mut lfts = lfts.into_iter();
    let lft = lfts.next().expect("at least one path");
    let alt_paths = lfts
        .zip(path_sls)
        .map(|(lft, path_sl)| crate::PathTables { lft, path_sl })
        .collect();
    let fabric = FabricConfig {
        alt_paths,
        engine: "file".into(),
        num_vls: max_vl + 1,
        classes,
        routing_sls,
        layers: 0,
        lft,
        path_sl,
        sl2vl,
        nic_sl2vl,
        ports: FabricConfig::port_counts(topo),
        rule: None,
    };
    fabric.check_shape(topo)?;
    fabric.check_routes(topo)?;
    if !dropped.is_empty() || nic_dropped.iter().any(|&d| d) {
        check_no_dropped_paths(topo, &fabric, &dropped, &nic_dropped)?;
    }
    Ok(fabric)
}

/// Fails, naming the LID, when no switch's table of path `k` has an entry for some endpoint:
/// the dump was written for other LIDs (or lacks that endpoint), which would otherwise
/// surface later as "no route".
fn check_every_endpoint_listed(
    topo: &Topology,
    lft: &[Vec<u16>],
    k: usize,
) -> Result<(), RoutingError> {
    if topo.num_switches() == 0 {
        return Ok(());
    }
    for (e, ep) in topo.endpoints().iter().enumerate() {
        if lft.iter().all(|row| row[e] == crate::NO_ROUTE) {
            let missing = topo
                .endpoints()
                .iter()
                .enumerate()
                .filter(|&(i, _)| lft.iter().all(|row| row[i] == crate::NO_ROUTE))
                .count();
            return Err(invalid(format!(
                "{LFTS_FILE}: no switch has an entry for LID {} (endpoint {}{}){}{}; were the \
                 dumps written for a topology with other LIDs?",
                ep.lid.map_or("-".into(), |l| (l as usize + k).to_string()),
                ep.name,
                ep.guid
                    .map_or(String::new(), |g| format!(", GUID 0x{g:016x}")),
                if k > 0 {
                    format!(
                        ", path {k} of an LMC {} port",
                        (k + 1).next_power_of_two().trailing_zeros()
                    )
                } else {
                    String::new()
                },
                if missing > 1 {
                    format!(", nor for {} other endpoints' LIDs", missing - 1)
                } else {
                    String::new()
                }
            )));
        }
    }
    Ok(())
}

/// Fails if some path uses an SL2VL entry that maps its SL to VL 15 (InfiniBand drops such
/// packets; flitsim cannot simulate them).
fn check_no_dropped_paths(
    topo: &Topology,
    fabric: &FabricConfig,
    dropped: &[(usize, usize)],
    nic_dropped: &[bool],
) -> Result<(), RoutingError> {
    let mut is_dropped: Vec<Vec<bool>> =
        fabric.sl2vl.iter().map(|t| vec![false; t.len()]).collect();
    for &(s, i) in dropped {
        is_dropped[s][i] = true;
    }
    let n = topo.num_endpoints();
    let wire = fabric.wire_sls();
    for src in 0..n as u32 {
        for dst in 0..n as u32 {
            for (class, k) in
                (0..fabric.classes).flat_map(|c| (0..fabric.num_paths()).map(move |k| (c, k)))
            {
                let sl = fabric.wire_sl_on(Sl(class), EndpointId(src), EndpointId(dst), n, k);
                let name = |e: u32| &topo.endpoints()[e as usize].name;
                if nic_dropped[sl.idx()] {
                    return Err(invalid(format!(
                        "{SL2VL_FILE}: the channel adapters map SL {sl} to VL 15 (drop), but \
                         endpoint {} sends to {} on SL {sl}",
                        name(src),
                        name(dst)
                    )));
                }
                for h in fabric.trace_path(topo, EndpointId(src), EndpointId(dst), class, k)? {
                    let s = h.switch.0 as usize;
                    let p = topo.num_ports(h.switch) as usize;
                    let idx = (h.in_port as usize * p + h.out_port as usize) * wire + sl.idx();
                    if is_dropped[s][idx] {
                        return Err(invalid(format!(
                            "{SL2VL_FILE}: switch {} maps SL {sl} from port {} to port {} to VL 15 \
                             (drop), but the path from {} to {} takes that turn",
                            topo.switches()[s].name,
                            h.in_port + 1,
                            h.out_port + 1,
                            name(src),
                            name(dst)
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}
