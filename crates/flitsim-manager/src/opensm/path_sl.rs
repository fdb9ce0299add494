//! `path-sl.txt`, flitsim's table of path SLs (see the [format](super)): [`write_path_sl`]
//! and its parser.
use super::{at, check_ib_sls, check_lid_blocks, lid_table, lmc_of, Ids, IB_SLS, PATH_SL_FILE};
use crate::{FabricConfig, RoutingError};
use flitsim_topology::{EndpointId, NodeId, Sl, Topology};
use std::fmt::Write as _;

/// `path-sl.txt`: `<source lid> <destination lid> <sl>` (decimal) per ordered endpoint pair,
/// the SL of traffic class 0. With LMC > 0 there is a line per destination LID: the pair
/// `src → dst` on path `k` is `<src base lid> <dst base lid + k> <sl of path k>`.
pub fn write_path_sl(topo: &Topology, fabric: &FabricConfig) -> Result<String, RoutingError> {
    let fabric = &*fabric.stored();
    fabric.check_shape(topo)?;
    check_ib_sls(fabric)?;
    let ids = Ids::of(topo)?;
    let lmc = lmc_of(fabric)?;
    check_lid_blocks(topo, &ids, lmc)?;
    let n = topo.num_endpoints();
    let paths = fabric.num_paths();
    let mut out = String::with_capacity(n * n * paths * 12);
    for s in 0..n {
        for d in 0..n {
            for k in 0..paths {
                let sl = fabric.wire_sl_on(Sl(0), EndpointId(s as u32), EndpointId(d as u32), n, k);
                let _ = writeln!(
                    out,
                    "{} {} {sl}",
                    ids.endpoint_lid[s],
                    ids.endpoint_lid[d] + k as u16
                );
            }
        }
    }
    Ok(out)
}

/// Parses `path-sl.txt` into `sl[path][src · n + dst]` for `paths` paths per destination
/// (destination LID `base + k` is path `k`).
pub(super) fn read_path_sl(
    topo: &Topology,
    text: &str,
    paths: usize,
) -> Result<Vec<Vec<u8>>, RoutingError> {
    const F: &str = PATH_SL_FILE;
    let n = topo.num_endpoints();
    // LID → (node, path), as a dense table: the file has a line per endpoint pair.
    let lids = lid_table(topo);
    let mut sl = vec![vec![0u8; n * n]; paths];
    // Line of each pair (0: not listed yet).
    let mut line_of = vec![vec![0u32; n * n]; paths];
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
        if let ((NodeId::Endpoint(s), ks), (NodeId::Endpoint(d), p)) = (node(a)?, node(b)?) {
            let p = p as usize;
            if ks != 0 {
                return Err(at(
                    F,
                    ln,
                    format!(
                        "source LID {a} is not a port's base LID (the source of a path is named \
                         by its base LID)"
                    ),
                ));
            }
            if p >= paths {
                return Err(at(
                    F,
                    ln,
                    format!(
                        "LID {b} belongs to no node of the topology (it is not among the \
                         {paths} LID{} per port the LFT dump routes)",
                        if paths == 1 { "" } else { "s" }
                    ),
                ));
            }
            let k = s as usize * n + d as usize;
            if line_of[p][k] != 0 {
                return Err(at(
                    F,
                    ln,
                    format!(
                        "the pair {a} -> {b} is listed again (first on line {})",
                        line_of[p][k]
                    ),
                ));
            }
            line_of[p][k] = ln as u32;
            sl[p][k] = v;
        }
    }
    Ok(sl)
}
