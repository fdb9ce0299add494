//! `path-sl.txt`, flitsim's table of path SLs (see the [format](super)): [`write_path_sl`]
//! and its parser.
use super::{at, check_ib_sls, lid_map, Ids, IB_SLS, PATH_SL_FILE};
use crate::{FabricConfig, RoutingError};
use flitsim_topology::{EndpointId, NodeId, Sl, Topology};
use std::fmt::Write as _;

/// `path-sl.txt`: `<source lid> <destination lid> <sl>` (decimal) per ordered endpoint pair,
/// the SL of traffic class 0.
pub fn write_path_sl(topo: &Topology, fabric: &FabricConfig) -> Result<String, RoutingError> {
    fabric.check_shape(topo)?;
    check_ib_sls(fabric)?;
    let ids = Ids::of(topo)?;
    let n = topo.num_endpoints();
    let mut out = String::with_capacity(n * n * 12);
    for s in 0..n {
        for d in 0..n {
            let sl = fabric.wire_sl(Sl(0), EndpointId(s as u32), EndpointId(d as u32), n);
            let _ = writeln!(out, "{} {} {sl}", ids.endpoint_lid[s], ids.endpoint_lid[d]);
        }
    }
    Ok(out)
}

/// Parses `path-sl.txt` into `sl[src · n + dst]`.
pub(super) fn read_path_sl(topo: &Topology, text: &str) -> Result<Vec<u8>, RoutingError> {
    const F: &str = PATH_SL_FILE;
    let n = topo.num_endpoints();
    // LID → node, as a dense table: the file has a line per endpoint pair.
    let mut lids: Vec<Option<NodeId>> = vec![None; u16::MAX as usize + 1];
    for (l, node) in lid_map(topo) {
        lids[l as usize] = Some(node);
    }
    let mut sl = vec![0u8; n * n];
    // Line of each pair (0: not listed yet).
    let mut line_of = vec![0u32; n * n];
    for (i, raw) in text.lines().enumerate() {
        let ln = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut toks = line.split_whitespace();
        let (Some(a), Some(b), Some(v), None) =
            (toks.next(), toks.next(), toks.next(), toks.next())
        else {
            return Err(at(
                F,
                ln,
                format!("expected '<source lid> <destination lid> <sl>', found '{line}'"),
            ));
        };
        let lid = |t: &str, what: &str| {
            t.parse::<u16>()
                .map_err(|_| at(F, ln, format!("{what} LID '{t}' is not a decimal LID")))
        };
        let (a, b) = (lid(a, "source")?, lid(b, "destination")?);
        let v = v
            .parse::<u8>()
            .ok()
            .filter(|&v| (v as usize) < IB_SLS)
            .ok_or_else(|| at(F, ln, format!("SL '{v}' is not in 0..=15")))?;
        let node = |l: u16| {
            lids[l as usize]
                .ok_or_else(|| at(F, ln, format!("LID {l} belongs to no node of the topology")))
        };
        // Paths to or from switches are not simulated.
        if let (NodeId::Endpoint(s), NodeId::Endpoint(d)) = (node(a)?, node(b)?) {
            let k = s as usize * n + d as usize;
            if line_of[k] != 0 {
                return Err(at(
                    F,
                    ln,
                    format!(
                        "the pair {a} -> {b} is listed again (first on line {})",
                        line_of[k]
                    ),
                ));
            }
            line_of[k] = ln as u32;
            sl[k] = v;
        }
    }
    Ok(sl)
}
