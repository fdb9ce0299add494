//! `opensm-sl2vl.dump`, the SL→VL tables of every port (see the [format](super)):
//! [`write_sl2vl`] and its parser, which yields the rows for [`super::read_tables`] to check.
use super::{
    after, at, check_ib_sls, dec_prefix, desc, hex_prefix, Ids, IB_DROP_VL, IB_SLS, SL2VL_FILE,
};
use crate::{FabricConfig, RoutingError};
use flitsim_topology::{SwitchId, Topology};
use std::collections::HashMap;
use std::fmt::Write as _;

pub(super) const SL2VL_HEADER: &str = "#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15";
const SL2VL_HEADER_EXPECTED: &str =
    "unrecognised line (expected '<node type> 0x<port guid>, base LID <lid>, \"<description>\"')";
pub(super) const SL2VL_SEPARATOR: &str =
    "#--------------------------------------------------------";

/// One SL2VL row as OpenSM prints it: `%-3d %-3d :` and ` %-2d` per SL.
fn sl2vl_row(out: &mut String, in_port: u32, out_port: u32, vls: impl Fn(usize) -> u8) {
    let _ = write!(out, "{in_port:<3} {out_port:<3} :");
    for sl in 0..IB_SLS {
        let _ = write!(out, " {:<2}", vls(sl));
    }
    out.push('\n');
}

/// `opensm-sl2vl.dump` of `fabric` (see the [module documentation](crate::opensm)). Fails when the
/// fabric uses more than 16 SLs or a VL above 14, which InfiniBand cannot express, or when a
/// node has no GUID or LID.
pub fn write_sl2vl(topo: &Topology, fabric: &FabricConfig) -> Result<String, RoutingError> {
    fabric.check_shape(topo)?;
    check_ib_sls(fabric)?;
    let ids = Ids::of(topo)?;
    let wire = fabric.wire_sls();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# flitsim: classes {}, routing_sls {} (engine {})",
        fabric.classes, fabric.routing_sls, fabric.engine
    );
    let nic = |sl: usize| {
        if sl < wire {
            fabric.nic_sl2vl[sl]
        } else {
            IB_DROP_VL
        }
    };
    for (s, sw) in topo.switches().iter().enumerate() {
        let _ = writeln!(
            out,
            "Switch 0x{:016x}, base LID {}, \"{}\"\n{SL2VL_HEADER}\n{SL2VL_SEPARATOR}",
            ids.switch_guid[s],
            ids.switch_lid[s],
            desc(&sw.name, '"')
        );
        let p = sw.ports as usize;
        for o in 0..sw.ports {
            if topo.switch_peer(SwitchId(s as u32), o).is_none() {
                continue;
            }
            sl2vl_row(&mut out, 0, o as u32 + 1, nic);
            for i in 0..p {
                sl2vl_row(&mut out, i as u32 + 1, o as u32 + 1, |sl| {
                    if sl < wire {
                        fabric.sl2vl[s][(i * p + o as usize) * wire + sl]
                    } else {
                        IB_DROP_VL
                    }
                });
            }
        }
        let _ = writeln!(out, "{SL2VL_SEPARATOR}\n");
    }
    for (e, ep) in topo.endpoints().iter().enumerate() {
        let _ = writeln!(
            out,
            "Channel Adapter 0x{:016x}, base LID {}, \"{}\"\n{SL2VL_HEADER}\n{SL2VL_SEPARATOR}",
            ids.endpoint_guid[e],
            ids.endpoint_lid[e],
            desc(&ep.name, '"')
        );
        sl2vl_row(&mut out, 0, 0, nic);
        let _ = writeln!(out, "{SL2VL_SEPARATOR}\n");
    }
    Ok(out)
}

/// What a node header of the SL2VL dump names.
#[derive(Clone, Copy)]
pub(super) enum Sl2vlNode {
    Switch(usize),
    Ca(usize),
}

/// One row of the SL2VL dump.
pub(super) struct Sl2vlRow {
    pub line: usize,
    pub node: Sl2vlNode,
    pub in_port: u32,
    pub out_port: u32,
    pub vls: [u8; IB_SLS],
}

/// The flitsim comment of the SL2VL dump: `(classes, routing_sls)`.
fn flitsim_split(line: &str) -> Option<(u8, u8)> {
    let rest = line
        .strip_prefix('#')?
        .trim_start()
        .strip_prefix("flitsim:")?;
    let c = after(rest, "classes ").and_then(dec_prefix)?.0;
    let r = after(rest, "routing_sls ").and_then(dec_prefix)?.0;
    Some((u8::try_from(c).ok()?, u8::try_from(r).ok()?))
}

pub(super) type Sl2vlParse = (Vec<Sl2vlRow>, Option<(u8, u8, usize)>);

pub(super) fn read_sl2vl_rows(topo: &Topology, text: &str) -> Result<Sl2vlParse, RoutingError> {
    const F: &str = SL2VL_FILE;
    let mut rows = Vec::new();
    let mut current: Option<Sl2vlNode> = None;
    let mut split = None;
    let mut seen: HashMap<(bool, usize), usize> = HashMap::new();
    for (i, raw) in text.lines().enumerate() {
        let ln = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('#') {
            if let Some((c, r)) = flitsim_split(line) {
                split = Some((c, r, ln));
            }
            continue;
        }
        if line.starts_with(|c: char| c.is_ascii_digit()) {
            let node = current.ok_or_else(|| at(F, ln, "an SL2VL row before any node header"))?;
            let (ports, vls) = line
                .split_once(':')
                .ok_or_else(|| at(F, ln, "expected '<in> <out> : <16 VLs>'"))?;
            let ports: Vec<&str> = ports.split_whitespace().collect();
            let parse_port = |s: &str| s.parse::<u32>().ok().filter(|&p| p <= 255);
            let (in_port, out_port) = match ports[..] {
                [a, b] => match (parse_port(a), parse_port(b)) {
                    (Some(a), Some(b)) => (a, b),
                    _ => return Err(at(F, ln, "cannot read the input and output port")),
                },
                _ => return Err(at(F, ln, "expected an input and an output port before ':'")),
            };
            let vals: Vec<&str> = vls.split_whitespace().collect();
            if vals.len() != IB_SLS {
                return Err(at(
                    F,
                    ln,
                    format!("expected {IB_SLS} VLs (one per SL), found {}", vals.len()),
                ));
            }
            let mut row = [0u8; IB_SLS];
            for (sl, v) in vals.iter().enumerate() {
                row[sl] = v
                    .parse::<u8>()
                    .ok()
                    .filter(|&v| v <= IB_DROP_VL)
                    .ok_or_else(|| at(F, ln, format!("SL {sl}: '{v}' is not a VL in 0..=15")))?;
            }
            match node {
                Sl2vlNode::Switch(s) => {
                    let sw = &topo.switches()[s];
                    for p in [in_port, out_port] {
                        if p > sw.ports as u32 {
                            return Err(at(
                                F,
                                ln,
                                format!(
                                    "port {p} does not exist on switch {} (it has ports 1..={})",
                                    sw.name, sw.ports
                                ),
                            ));
                        }
                    }
                }
                Sl2vlNode::Ca(_) => {
                    if (in_port, out_port) != (0, 0) {
                        return Err(at(F, ln, "a channel adapter row must be '0 0'"));
                    }
                }
            }
            rows.push(Sl2vlRow {
                line: ln,
                node,
                in_port,
                out_port,
                vls: row,
            });
            continue;
        }
        // A node header: `<type> 0x<guid>, base LID <lid>, "<desc>"`.
        let (kind, rest) = line
            .split_once(" 0x")
            .ok_or_else(|| at(F, ln, SL2VL_HEADER_EXPECTED))?;
        let (g, _) = hex_prefix(rest).ok_or_else(|| at(F, ln, "cannot read the port GUID"))?;
        let (node, key) = match kind.trim() {
            "Switch" => {
                let s = topo.switch_by_guid(g).ok_or_else(|| {
                    at(
                        F,
                        ln,
                        format!("switch GUID 0x{g:016x} is not in the topology"),
                    )
                })?;
                (Sl2vlNode::Switch(s.0 as usize), (true, s.0 as usize))
            }
            "Channel Adapter" => {
                let e = topo.endpoint_by_guid(g).ok_or_else(|| {
                    at(
                        F,
                        ln,
                        format!("channel adapter port GUID 0x{g:016x} is not in the topology"),
                    )
                })?;
                (Sl2vlNode::Ca(e.0 as usize), (false, e.0 as usize))
            }
            other => {
                return Err(at(
                    F,
                    ln,
                    format!(
                        "node type '{other}' is not supported (only Switch and Channel Adapter)"
                    ),
                ))
            }
        };
        if let Some(prev) = seen.insert(key, ln) {
            return Err(at(
                F,
                ln,
                format!("the same port GUID 0x{g:016x} is listed again (first on line {prev})"),
            ));
        }
        current = Some(node);
    }
    Ok((rows, split))
}
