//! `opensm-lfts.dump`, the linear forwarding tables (see the [format](super)): [`write_lfts`]
//! and its parser.
use super::{
    after, at, check_lid_blocks, dec_prefix, desc, hex_prefix, invalid, lid_table, lmc_of, Ids,
    IB_MAX_PORT, LFTS_FILE,
};
use crate::{FabricConfig, RoutingError, NO_ROUTE};
use flitsim_topology::{NodeId, PortNum, Topology};
use std::collections::HashMap;
use std::fmt::Write as _;

/// `opensm-lfts.dump` of `fabric` (see the [module documentation](crate::opensm)). With
/// several paths per destination (LMC > 0) every LID of a port is listed: LID `base + k`
/// with the port of path `k`. Fails when a node has no GUID or LID, a switch has more ports
/// than InfiniBand allows, or (LMC > 0) an endpoint's LID is not the base of a free aligned
/// block of `2^lmc` LIDs.
pub fn write_lfts(topo: &Topology, fabric: &FabricConfig) -> Result<String, RoutingError> {
    let fabric = &*fabric.stored();
    fabric.check_shape(topo)?;
    let ids = Ids::of(topo)?;
    let lmc = lmc_of(fabric)?;
    check_lid_blocks(topo, &ids, lmc)?;
    let top = (1u16 << lmc) - 1;
    let max_lid = ids
        .switch_lid
        .iter()
        .copied()
        .chain(ids.endpoint_lid.iter().map(|&l| l + top))
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    let mut rows: Vec<(u16, u32, &str, u64, &str)> = Vec::new();
    for (s, sw) in topo.switches().iter().enumerate() {
        let _ = writeln!(
            out,
            "Unicast lids [0-{max_lid}] of switch Lid {} guid 0x{:016x} ('{}'):",
            ids.switch_lid[s],
            ids.switch_guid[s],
            desc(&sw.name, '\'')
        );
        rows.clear();
        rows.push((ids.switch_lid[s], 0, "Switch", ids.switch_guid[s], &sw.name));
        for (k, (lft, _)) in fabric.paths().enumerate() {
            for (e, ep) in topo.endpoints().iter().enumerate() {
                let port = lft[s][e];
                if port != NO_ROUTE {
                    rows.push((
                        ids.endpoint_lid[e] + k as u16,
                        port as u32 + 1,
                        "Channel Adapter",
                        ids.endpoint_guid[e],
                        &ep.name,
                    ));
                }
            }
        }
        rows.sort_by_key(|r| r.0);
        for &(lid, port, kind, guid, name) in &rows {
            let _ = writeln!(
                out,
                "0x{lid:04x} {port:03} # {kind} portguid 0x{guid:016x}: '{}'",
                desc(name, '\'')
            );
        }
        let _ = writeln!(out, "{max_lid} lids dumped");
    }
    Ok(out)
}

/// Parses `opensm-lfts.dump` into `lfts[path][switch][endpoint]`: LID `base + k` of an
/// endpoint (an LMC > 0 port's further LIDs, up to the next node's LID) is path `k`; the
/// number of paths is the largest `k + 1` rounded up to a power of two (`2^lmc`).
pub(super) fn read_lfts(
    topo: &Topology,
    text: &str,
) -> Result<Vec<Vec<Vec<PortNum>>>, RoutingError> {
    const F: &str = LFTS_FILE;
    let n = topo.num_endpoints();
    let lids = lid_table(topo);
    let empty = vec![vec![NO_ROUTE; n]; topo.num_switches()];
    let mut lfts = vec![empty.clone()];
    let mut header_line: Vec<Option<usize>> = vec![None; topo.num_switches()];
    let mut entry_line: HashMap<(usize, usize, u8), usize> = HashMap::new();
    let mut current: Option<usize> = None;
    let mut any = false;
    for (i, raw) in text.lines().enumerate() {
        let ln = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with("Unicast lids") {
            let g = after(line, " guid 0x")
                .and_then(hex_prefix)
                .ok_or_else(|| {
                    at(
                        F,
                        ln,
                        "cannot read the switch GUID (expected ' guid 0x<hex>')",
                    )
                })?
                .0;
            let s = topo.switch_by_guid(g).ok_or_else(|| {
                at(
                    F,
                    ln,
                    format!("switch GUID 0x{g:016x} is not in the topology"),
                )
            })?;
            let s = s.0 as usize;
            let name = &topo.switches()[s].name;
            if let Some(prev) = header_line[s] {
                return Err(at(
                    F,
                    ln,
                    format!("a second table for switch {name} (the first is on line {prev})"),
                ));
            }
            if let Some(rest) = after(line, " Lid ") {
                let lid = dec_prefix(rest)
                    .filter(|(l, _)| *l <= u16::MAX as u64)
                    .ok_or_else(|| at(F, ln, "cannot read the switch LID after 'Lid'"))?
                    .0 as u16;
                if let Some(own) = topo.switches()[s].lid {
                    if lid != 0 && lid != own {
                        return Err(at(
                            F,
                            ln,
                            format!("switch {name} has LID {lid} here but {own} in the topology"),
                        ));
                    }
                }
            }
            header_line[s] = Some(ln);
            current = Some(s);
            any = true;
        } else if line.starts_with("Multicast mlids") {
            return Err(at(
                F,
                ln,
                "this is a multicast forwarding dump (opensm.mcfdbs), not the unicast LFTs",
            ));
        } else if let Some(rest) = line.strip_prefix("0x") {
            let s = current
                .ok_or_else(|| at(F, ln, "an LFT entry before any 'Unicast lids' header"))?;
            let (lid, rest) = hex_prefix(rest)
                .filter(|(l, r)| *l <= u16::MAX as u64 && r.starts_with(char::is_whitespace))
                .ok_or_else(|| at(F, ln, format!("cannot read the LID in '{line}'")))?;
            let lid = lid as u16;
            let (port, rest) = dec_prefix(rest.trim_start())
                .filter(|(_, r)| r.is_empty() || r.starts_with(char::is_whitespace))
                .ok_or_else(|| at(F, ln, format!("cannot read the output port in '{line}'")))?;
            let port_guid = match after(rest, " portguid 0x") {
                Some(g) => Some(
                    hex_prefix(g)
                        .ok_or_else(|| at(F, ln, "cannot read the port GUID after 'portguid'"))?
                        .0,
                ),
                None => None,
            };
            let sw = &topo.switches()[s];
            if port > IB_MAX_PORT as u64 || port > sw.ports as u64 {
                return Err(at(
                    F,
                    ln,
                    format!(
                        "port {port} does not exist on switch {} (it has ports 1..={})",
                        sw.name, sw.ports
                    ),
                ));
            }
            // A further LID of an endpoint (path k > 0) counts only where the entry names
            // that endpoint's port GUID, as OpenSM's dumps do.
            let found = lids[lid as usize].filter(|&(node, k)| {
                k == 0
                    || match (node, port_guid) {
                        (NodeId::Endpoint(e), Some(pg)) => {
                            topo.endpoints()[e as usize].guid == Some(pg)
                        }
                        _ => false,
                    }
            });
            match found {
                Some((NodeId::Endpoint(e), k)) => {
                    let e = e as usize;
                    let ep = &topo.endpoints()[e];
                    if let (Some(pg), Some(eg)) = (port_guid, ep.guid) {
                        if pg != eg {
                            return Err(at(
                                F,
                                ln,
                                format!(
                                    "LID {lid} is endpoint {} with GUID 0x{eg:016x} in the topology, \
                                     but the dump says port GUID 0x{pg:016x}",
                                    ep.name
                                ),
                            ));
                        }
                    }
                    if port == 0 {
                        return Err(at(
                            F,
                            ln,
                            format!(
                                "switch {} routes endpoint {} (LID {lid}) to port 0, the switch itself",
                                sw.name, ep.name
                            ),
                        ));
                    }
                    if let Some(prev) = entry_line.insert((s, e, k), ln) {
                        return Err(at(
                            F,
                            ln,
                            format!(
                                "LID {lid} is listed twice for switch {} (also on line {prev})",
                                sw.name
                            ),
                        ));
                    }
                    let k = k as usize;
                    if lfts.len() <= k {
                        lfts.resize(k + 1, empty.clone());
                    }
                    lfts[k][s][e] = (port - 1) as PortNum;
                }
                Some((NodeId::Switch(_), _)) => {}
                None => {
                    let known = port_guid.is_some_and(|g| {
                        topo.switch_by_guid(g).is_some() || topo.endpoint_by_guid(g).is_some()
                    });
                    if !known && lid != 0 {
                        return Err(at(
                            F,
                            ln,
                            format!("LID {lid} (0x{lid:04x}) belongs to no node of the topology"),
                        ));
                    }
                }
            }
        } else if dec_prefix(line).is_some_and(|(_, r)| {
            let r = r.trim();
            r == "lids dumped" || r == "lids in use"
        }) {
            // OpenSM's trailer.
        } else {
            let shown: String = line.chars().take(40).collect();
            return Err(at(F, ln, format!("unrecognised line '{shown}'")));
        }
    }
    if !any {
        return Err(invalid(format!(
            "{F}: no 'Unicast lids' switch table found; is this an OpenSM LFT dump?"
        )));
    }
    lfts.resize(lfts.len().next_power_of_two(), empty);
    Ok(lfts)
}
