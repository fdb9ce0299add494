//! OpenSM's routing dumps: writing a [`FabricConfig`] in the text formats the OpenSM subnet
//! manager dumps (and loads), and reading such dumps back as a [`FabricConfig`], so that a
//! routing computed by flitsim can be handed to OpenSM/ibsim and a routing computed by OpenSM
//! can be simulated by flitsim.
//!
//! The formats follow what OpenSM (github.com/linux-rdma/opensm) prints in `opensm/osm_dump.c`
//! (`dump_ucast_lfts`, `dump_sl2vl_tbl`) and `opensm/osm_db_pack.c` (the `guid2lid` cache),
//! and what its `file` routing engine (`opensm/osm_ucast_file.c`) loads.
//!
//! ## `opensm-lfts.dump`
//!
//! ```text
//! Unicast lids [0-7] of switch Lid 1 guid 0x0002c90000000000 ('sw0'):
//! 0x0001 000 # Switch portguid 0x0002c90000000000: 'sw0'
//! 0x0005 001 # Channel Adapter portguid 0x0002c90100000000: 'host0'
//! 0x0006 002 # Channel Adapter portguid 0x0002c90100000001: 'host1'
//! 7 lids dumped
//! ```
//!
//! One block per switch: a header with the largest LID, the switch's LID, node GUID and
//! description; one line per routed LID (hexadecimal LID, decimal IB output port, three digits;
//! port 0 is the switch itself); then OpenSM's trailer `<max lid> lids dumped`. flitsim writes
//! the switch's own LID (port 0) and every endpoint LID it routes; it has no routes to other
//! switches' LIDs, so those are absent (OpenSM leaves out unrouted LIDs too).
//!
//! The reader, like OpenSM's loader, keys on the text: a line starting with `Unicast lids`
//! opens a switch (found by the GUID after ` guid 0x`; a ` Lid N` must agree with the
//! topology), a line starting with `0x` is an entry (`0x<lid> <port>`, then optionally
//! ` portguid 0x<guid>`, which must agree with the LID's endpoint). Entries for switch LIDs
//! are ignored (flitsim routes to endpoints only); an unknown LID whose port GUID is a node of
//! the topology is an additional LMC LID and is ignored too. IB port `p ≥ 1` is flitsim port
//! `p − 1`. Blank lines, `#` comments and the trailer (`N lids dumped`, or `N lids in use` of
//! very old versions) are skipped; anything else is an error naming the line.
//!
//! ## `opensm-sl2vl.dump`
//!
//! ```text
//! Switch 0x0002c90000000000, base LID 1, "sw0"
//! #in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15
//! #--------------------------------------------------------
//! 0   1   : 0  1  15 15 15 15 15 15 15 15 15 15 15 15 15 15
//! 1   1   : 0  1  15 15 15 15 15 15 15 15 15 15 15 15 15 15
//! …
//! #--------------------------------------------------------
//!
//! Channel Adapter 0x0002c90100000000, base LID 5, "host0"
//! #in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15
//! #--------------------------------------------------------
//! 0   0   : 0  1  15 15 15 15 15 15 15 15 15 15 15 15 15 15
//! #--------------------------------------------------------
//! ```
//!
//! One block per port GUID: for a switch, one row per (input port, output port) with the
//! output port connected, output-major, input ports `0..=ports` (0 is the management port); for
//! a CA port, the single row `0 0`. Each row gives the VL of SL 0..15 (`" %-2d"` each, as
//! OpenSM prints them). flitsim's wire SLs (`classes · routing_sls`, see [`FabricConfig`]) are
//! SLs `0..wire_sls`; unused SLs map to VL 15, which InfiniBand drops. Rows for input port 0
//! carry the NIC's SL→VL table. A leading comment `# flitsim: classes C, routing_sls R` (not
//! part of OpenSM's output, and ignored by anything reading it as OpenSM's) records how the
//! wire SLs split into classes and routing SLs.
//!
//! When reading, wire SLs are `0..W` where `W` is one past the last SL that some row maps to a
//! VL other than 15 (or the split in the flitsim comment). A used SL mapped to VL 15 is
//! accepted only if no path actually uses that (switch, in, out, SL). All CAs must map SLs
//! alike (flitsim has one NIC table). Without an SL2VL dump every SL is on VL 0.
//!
//! ## `guid2lid`
//!
//! `0x<port guid> 0x<lid> 0x<lid>` per node (switches, then endpoints): OpenSM's LID cache
//! (`osm_db_pack.c`: GUID as `0x%016`, LID range as `0x%04x 0x%04x`, base and top LID with
//! LMC 0), each entry followed by a blank line as OpenSM writes it: OpenSM's cache reader
//! appends every non-blank line to the previous entry, so a file without the blank lines
//! would not load as its LID cache (`OSM_CACHE_DIR`).
//!
//! ## `path-sl.txt`
//!
//! Not an OpenSM file (OpenSM answers path SLs through SA PathRecord queries): one line
//! `<source lid> <destination lid> <sl>` in decimal per ordered endpoint pair (source-major,
//! `src == dst` included), the SL of traffic class 0. Reading maps the SLs back to path SLs
//! (`routing_sls` = largest SL + 1 unless the SL2VL comment says otherwise); pairs not listed
//! get SL 0, lines naming switch LIDs are ignored.
use crate::{FabricConfig, RoutingError, NO_ROUTE};
use flitsim_topology::{EndpointId, NodeId, PortNum, SwitchId, Topology};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// File name of the LFT dump.
pub const LFTS_FILE: &str = "opensm-lfts.dump";
/// File name of the SL→VL dump.
pub const SL2VL_FILE: &str = "opensm-sl2vl.dump";
/// File name of the GUID→LID table.
pub const GUID2LID_FILE: &str = "guid2lid";
/// File name of the path SL table.
pub const PATH_SL_FILE: &str = "path-sl.txt";

/// SLs on an InfiniBand link.
pub const IB_SLS: usize = 16;
/// The VL an SL2VL table names to drop packets of an SL (InfiniBand's management VL).
pub const IB_DROP_VL: u8 = 15;
/// Largest port number of an InfiniBand switch (port 255 is reserved).
pub const IB_MAX_PORT: u32 = 254;

const SL2VL_HEADER: &str = "#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15";
const SL2VL_HEADER_EXPECTED: &str =
    "unrecognised line (expected '<node type> 0x<port guid>, base LID <lid>, \"<description>\"')";
const SL2VL_SEPARATOR: &str = "#--------------------------------------------------------";

fn invalid(m: String) -> RoutingError {
    RoutingError::InvalidTables(m)
}

/// GUIDs and LIDs of every node; fails naming the first node without them.
struct Ids {
    switch_guid: Vec<u64>,
    switch_lid: Vec<u16>,
    endpoint_guid: Vec<u64>,
    endpoint_lid: Vec<u16>,
}

impl Ids {
    fn of(topo: &Topology) -> Result<Ids, RoutingError> {
        let missing = |what: &str, kind: &str, name: &str| {
            invalid(format!(
                "{kind} {name} has no {what}; InfiniBand dumps need a GUID and a LID for every \
                 node (generated topologies and ibnetdiscover dumps have them, ibsim net files \
                 without LIDs do not)"
            ))
        };
        let mut ids = Ids {
            switch_guid: Vec::new(),
            switch_lid: Vec::new(),
            endpoint_guid: Vec::new(),
            endpoint_lid: Vec::new(),
        };
        for s in topo.switches() {
            ids.switch_guid
                .push(s.guid.ok_or_else(|| missing("GUID", "switch", &s.name))?);
            ids.switch_lid
                .push(s.lid.ok_or_else(|| missing("LID", "switch", &s.name))?);
            if s.ports as u32 > IB_MAX_PORT {
                return Err(invalid(format!(
                    "switch {} has {} ports; InfiniBand switches have at most {IB_MAX_PORT}",
                    s.name, s.ports
                )));
            }
        }
        for e in topo.endpoints() {
            ids.endpoint_guid
                .push(e.guid.ok_or_else(|| missing("GUID", "endpoint", &e.name))?);
            ids.endpoint_lid
                .push(e.lid.ok_or_else(|| missing("LID", "endpoint", &e.name))?);
        }
        Ok(ids)
    }

    fn max_lid(&self) -> u16 {
        self.switch_lid
            .iter()
            .chain(&self.endpoint_lid)
            .copied()
            .max()
            .unwrap_or(0)
    }
}

/// Descriptions may not contain the quote that delimits them.
fn desc(name: &str, quote: char) -> String {
    name.replace(quote, if quote == '"' { "'" } else { "\"" })
}

/// `opensm-lfts.dump` of `fabric` (see the [module documentation](self)). Fails when a node
/// has no GUID or LID or a switch has more ports than InfiniBand allows.
pub fn write_lfts(topo: &Topology, fabric: &FabricConfig) -> Result<String, RoutingError> {
    fabric.check_shape(topo)?;
    let ids = Ids::of(topo)?;
    let max_lid = ids.max_lid();
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
        for (e, ep) in topo.endpoints().iter().enumerate() {
            let port = fabric.lft[s][e];
            if port != NO_ROUTE {
                rows.push((
                    ids.endpoint_lid[e],
                    port as u32 + 1,
                    "Channel Adapter",
                    ids.endpoint_guid[e],
                    &ep.name,
                ));
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

/// `guid2lid`: `0x<port guid> 0x<lid> 0x<lid>` and a blank line per switch, then per endpoint.
pub fn write_guid2lid(topo: &Topology) -> Result<String, RoutingError> {
    let ids = Ids::of(topo)?;
    let mut out = String::new();
    for (g, l) in ids
        .switch_guid
        .iter()
        .zip(&ids.switch_lid)
        .chain(ids.endpoint_guid.iter().zip(&ids.endpoint_lid))
    {
        let _ = writeln!(out, "0x{g:016x} 0x{l:04x} 0x{l:04x}\n");
    }
    Ok(out)
}

/// Checks that the fabric's SLs and VLs fit InfiniBand's 4-bit fields.
fn check_ib_sls(fabric: &FabricConfig) -> Result<(), RoutingError> {
    let wire = fabric.wire_sls();
    if wire > IB_SLS {
        return Err(invalid(format!(
            "the {} tables use {wire} service levels ({} classes x {} routing SLs); \
             InfiniBand has only {IB_SLS}, so they cannot be written as OpenSM dumps",
            fabric.engine, fabric.classes, fabric.routing_sls
        )));
    }
    let max_vl = fabric
        .sl2vl
        .iter()
        .flatten()
        .chain(&fabric.nic_sl2vl)
        .copied()
        .max()
        .unwrap_or(0);
    if max_vl >= IB_DROP_VL {
        return Err(invalid(format!(
            "the {} tables use VL {max_vl}; InfiniBand has at most {} data VLs (0..={}), \
             so they cannot be written as OpenSM dumps",
            fabric.engine,
            IB_DROP_VL,
            IB_DROP_VL - 1
        )));
    }
    Ok(())
}

/// One SL2VL row as OpenSM prints it: `%-3d %-3d :` and ` %-2d` per SL.
fn sl2vl_row(out: &mut String, in_port: u32, out_port: u32, vls: impl Fn(usize) -> u8) {
    let _ = write!(out, "{in_port:<3} {out_port:<3} :");
    for sl in 0..IB_SLS {
        let _ = write!(out, " {:<2}", vls(sl));
    }
    out.push('\n');
}

/// `opensm-sl2vl.dump` of `fabric` (see the [module documentation](self)). Fails when the
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
            let sl = fabric.wire_sl(0, s as u32, d as u32, n);
            let _ = writeln!(out, "{} {} {sl}", ids.endpoint_lid[s], ids.endpoint_lid[d]);
        }
    }
    Ok(out)
}

/// The four dump files of a fabric, as `(file name, contents)`.
pub fn write_all(
    topo: &Topology,
    fabric: &FabricConfig,
) -> Result<Vec<(&'static str, String)>, RoutingError> {
    Ok(vec![
        (LFTS_FILE, write_lfts(topo, fabric)?),
        (GUID2LID_FILE, write_guid2lid(topo)?),
        (SL2VL_FILE, write_sl2vl(topo, fabric)?),
        (PATH_SL_FILE, write_path_sl(topo, fabric)?),
    ])
}

/// Writes the four dump files into `dir` (created if missing) without ever leaving a
/// half-written set: everything is formatted first, written into a temporary directory, and
/// then renamed into place. Returns the paths written.
pub fn write_dir(
    topo: &Topology,
    fabric: &FabricConfig,
    dir: &Path,
) -> Result<Vec<PathBuf>, RoutingError> {
    let files = write_all(topo, fabric)?;
    let io = |what: &str, p: &Path, e: std::io::Error| {
        invalid(format!("cannot {what} {}: {e}", p.display()))
    };
    let tmp_name = format!(".flitsim-tables-{}.tmp", std::process::id());
    let exists = dir.is_dir();
    let tmp = if exists {
        dir.join(&tmp_name)
    } else {
        let parent = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(|e| io("create directory", parent, e))?;
        parent.join(&tmp_name)
    };
    let cleanup = |tmp: &Path| {
        let _ = std::fs::remove_dir_all(tmp);
    };
    cleanup(&tmp);
    std::fs::create_dir(&tmp).map_err(|e| io("create directory", &tmp, e))?;
    for (name, text) in &files {
        let p = tmp.join(name);
        if let Err(e) = std::fs::write(&p, text) {
            cleanup(&tmp);
            return Err(io("write", &p, e));
        }
    }
    let paths: Vec<PathBuf> = files.iter().map(|(n, _)| dir.join(n)).collect();
    if exists {
        for (name, _) in &files {
            if let Err(e) = std::fs::rename(tmp.join(name), dir.join(name)) {
                cleanup(&tmp);
                return Err(io("write", &dir.join(name), e));
            }
        }
        cleanup(&tmp);
    } else if let Err(e) = std::fs::rename(&tmp, dir) {
        cleanup(&tmp);
        return Err(io("create directory", dir, e));
    }
    Ok(paths)
}

/// Reads the tables in `dir`: `opensm-lfts.dump` (required), `opensm-sl2vl.dump` and
/// `path-sl.txt` (optional); see [`read_tables`]. Errors name the file and line.
pub fn read_dir(topo: &Topology, dir: &Path) -> Result<FabricConfig, RoutingError> {
    let read = |name: &str, required: bool| -> Result<Option<String>, RoutingError> {
        let p = dir.join(name);
        match std::fs::read_to_string(&p) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(invalid(format!(
                "{}: no {name} there (the routing tables directory needs at least the LFT dump)",
                dir.display()
            ))),
            Err(e) => Err(invalid(format!("cannot read {}: {e}", p.display()))),
        }
    };
    let lfts = read(LFTS_FILE, true)?.expect("required");
    let sl2vl = read(SL2VL_FILE, false)?;
    let path_sl = read(PATH_SL_FILE, false)?;
    read_tables(topo, &lfts, sl2vl.as_deref(), path_sl.as_deref()).map_err(|e| match e {
        RoutingError::InvalidTables(m) => invalid(format!("{}/{m}", dir.display())),
        other => other,
    })
}

/// A parse error at `line` (1-based) of `file`.
fn at(file: &str, line: usize, m: impl std::fmt::Display) -> RoutingError {
    invalid(format!("{file}, line {line}: {m}"))
}

/// Hex digits (after `0x`) at the start of `s`, as a number, and the rest.
fn hex_prefix(s: &str) -> Option<(u64, &str)> {
    let n = s.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(s.len());
    if n == 0 || n > 16 {
        return None;
    }
    Some((u64::from_str_radix(&s[..n], 16).ok()?, &s[n..]))
}

/// Decimal digits at the start of `s`, as a number, and the rest.
fn dec_prefix(s: &str) -> Option<(u64, &str)> {
    let n = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    if n == 0 || n > 19 {
        return None;
    }
    Some((s[..n].parse().ok()?, &s[n..]))
}

/// The value after the first `key` in `line` (`key` must end just before the number).
fn after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.find(key).map(|i| &line[i + key.len()..])
}

/// LID → node of `topo`.
fn lid_map(topo: &Topology) -> HashMap<u16, NodeId> {
    let mut m = HashMap::new();
    for (i, s) in topo.switches().iter().enumerate() {
        if let Some(l) = s.lid {
            m.insert(l, NodeId::Switch(i as u32));
        }
    }
    for (i, e) in topo.endpoints().iter().enumerate() {
        if let Some(l) = e.lid {
            m.insert(l, NodeId::Endpoint(i as u32));
        }
    }
    m
}

/// Parses `opensm-lfts.dump` into `lft[switch][endpoint]`.
fn read_lfts(topo: &Topology, text: &str) -> Result<Vec<Vec<PortNum>>, RoutingError> {
    const F: &str = LFTS_FILE;
    let n = topo.num_endpoints();
    let lids = lid_map(topo);
    let mut lft = vec![vec![NO_ROUTE; n]; topo.num_switches()];
    let mut header_line: Vec<Option<usize>> = vec![None; topo.num_switches()];
    let mut entry_line: HashMap<(usize, usize), usize> = HashMap::new();
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
            match lids.get(&lid) {
                Some(NodeId::Endpoint(e)) => {
                    let e = *e as usize;
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
                    if let Some(prev) = entry_line.insert((s, e), ln) {
                        return Err(at(
                            F,
                            ln,
                            format!(
                                "LID {lid} is listed twice for switch {} (also on line {prev})",
                                sw.name
                            ),
                        ));
                    }
                    lft[s][e] = (port - 1) as PortNum;
                }
                Some(NodeId::Switch(_)) => {}
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
    Ok(lft)
}

/// What a node header of the SL2VL dump names.
#[derive(Clone, Copy)]
enum Sl2vlNode {
    Switch(usize),
    Ca(usize),
}

/// One row of the SL2VL dump.
struct Sl2vlRow {
    line: usize,
    node: Sl2vlNode,
    in_port: u32,
    out_port: u32,
    vls: [u8; IB_SLS],
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

type Sl2vlParse = (Vec<Sl2vlRow>, Option<(u8, u8, usize)>);

fn read_sl2vl_rows(topo: &Topology, text: &str) -> Result<Sl2vlParse, RoutingError> {
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

/// Parses `path-sl.txt` into `sl[src · n + dst]`.
fn read_path_sl(topo: &Topology, text: &str) -> Result<Vec<u8>, RoutingError> {
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

/// Reads OpenSM-style dumps (see the [module documentation](self)) as the tables of `topo`:
/// the LFT dump text, and optionally the SL2VL dump and the path SL table. The result has
/// engine `"file"` (OpenSM's name for its dump-loading engine), `num_vls` one above the
/// largest VL the tables use, and has passed [`FabricConfig::check_shape`] and
/// [`FabricConfig::check_routes`]. Errors are [`RoutingError::InvalidTables`] naming the file
/// and line, or the routing errors of the checks.
pub fn read_tables(
    topo: &Topology,
    lfts_text: &str,
    sl2vl_text: Option<&str>,
    path_sl_text: Option<&str>,
) -> Result<FabricConfig, RoutingError> {
    let lft = read_lfts(topo, lfts_text)?;
    let path = path_sl_text.map(|t| read_path_sl(topo, t)).transpose()?;
    let max_path_sl = path
        .as_ref()
        .and_then(|p| p.iter().copied().max())
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
    let path_sl = match path {
        Some(p) if routing_sls > 1 => p,
        _ => Vec::new(),
    };
    let fabric = FabricConfig {
        engine: "file".into(),
        num_vls: max_vl + 1,
        classes,
        routing_sls,
        layers: 0,
        lft,
        path_sl,
        sl2vl,
        nic_sl2vl,
    };
    fabric.check_shape(topo)?;
    fabric.check_routes(topo)?;
    if !dropped.is_empty() || nic_dropped.iter().any(|&d| d) {
        check_no_dropped_paths(topo, &fabric, &dropped, &nic_dropped)?;
    }
    Ok(fabric)
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
            for class in 0..fabric.classes {
                let sl = fabric.wire_sl(class, src, dst, n);
                let name = |e: u32| &topo.endpoints()[e as usize].name;
                if nic_dropped[sl as usize] {
                    return Err(invalid(format!(
                        "{SL2VL_FILE}: the channel adapters map SL {sl} to VL 15 (drop), but \
                         endpoint {} sends to {} on SL {sl}",
                        name(src),
                        name(dst)
                    )));
                }
                for h in fabric.trace(topo, EndpointId(src), EndpointId(dst), class)? {
                    let s = h.switch.0 as usize;
                    let p = topo.num_ports(h.switch) as usize;
                    let idx = (h.in_port as usize * p + h.out_port as usize) * wire + sl as usize;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::{route, route_with, EngineOptions, RoutingRequest};
    use flitsim_topology::generators;

    /// Compares everything the simulator uses: LFTs, path SLs, NIC SL2VL and the SL2VL entries
    /// of connected output ports (the dump, like OpenSM's, leaves unconnected ports out).
    fn assert_same_tables(topo: &Topology, a: &FabricConfig, b: &FabricConfig) {
        assert_eq!(a.lft, b.lft);
        assert_eq!(a.path_sl, b.path_sl);
        assert_eq!((a.classes, a.routing_sls), (b.classes, b.routing_sls));
        assert_eq!(a.nic_sl2vl, b.nic_sl2vl);
        let w = a.wire_sls();
        for s in 0..topo.num_switches() {
            let p = topo.num_ports(SwitchId(s as u32)) as usize;
            for i in 0..p {
                for o in 0..p {
                    if topo.switch_peer(SwitchId(s as u32), o as PortNum).is_none() {
                        continue;
                    }
                    let r = (i * p + o) * w..(i * p + o + 1) * w;
                    assert_eq!(a.sl2vl[s][r.clone()], b.sl2vl[s][r], "switch {s} {i}->{o}");
                }
            }
        }
    }

    fn roundtrip(topo: &Topology, f: &FabricConfig) -> FabricConfig {
        let lfts = write_lfts(topo, f).unwrap();
        let sl2vl = write_sl2vl(topo, f).unwrap();
        let psl = write_path_sl(topo, f).unwrap();
        let back = read_tables(topo, &lfts, Some(&sl2vl), Some(&psl)).unwrap();
        assert_same_tables(topo, f, &back);
        // Writing again gives the same text.
        assert_eq!(write_lfts(topo, &back).unwrap(), lfts);
        assert_eq!(write_path_sl(topo, &back).unwrap(), psl);
        back
    }

    #[test]
    fn dor_on_a_torus_roundtrips() {
        let t = generators::torus(&[4, 4], 2, 1, 1).unwrap();
        let f = route(&t, "dor", &RoutingRequest { vls: 4, classes: 2 }).unwrap();
        assert!(f.routing_sls > 1 || f.classes > 1);
        let back = roundtrip(&t, &f);
        assert!(back.num_vls <= f.num_vls);
        assert_eq!(back.engine, "file");
    }

    #[test]
    fn dfsssp_on_a_random_topology_roundtrips() {
        let t = generators::from_spec("random:switches=16,ports=8,endpoints=2,links=28,seed=3")
            .unwrap();
        let f = route_with(
            &t,
            "dfsssp",
            &RoutingRequest { vls: 8, classes: 1 },
            &EngineOptions::default(),
        )
        .unwrap();
        // Balanced layers: several path SLs and VLs.
        assert!(
            f.routing_sls > 1 && !f.path_sl.is_empty(),
            "{}",
            f.routing_sls
        );
        let back = roundtrip(&t, &f);
        assert!(crate::cdg::verify(&t, &back).unwrap().deadlock_free);
        // Without the flitsim comment the SL split is inferred the same way for one class.
        let sl2vl = write_sl2vl(&t, &f).unwrap();
        let plain: String = sl2vl
            .lines()
            .filter(|l| !l.starts_with("# flitsim"))
            .map(|l| format!("{l}\n"))
            .collect();
        let psl = write_path_sl(&t, &f).unwrap();
        let lfts = write_lfts(&t, &f).unwrap();
        let inferred = read_tables(&t, &lfts, Some(&plain), Some(&psl)).unwrap();
        if f.path_sl.iter().any(|&s| s + 1 == f.routing_sls) {
            assert_same_tables(&t, &f, &inferred);
        }
    }

    #[test]
    fn lfts_alone_give_one_vl() {
        let t = generators::kary_ntree(2, 3, 1).unwrap();
        let f = route(&t, "ftree", &RoutingRequest { vls: 1, classes: 1 }).unwrap();
        let back = read_tables(&t, &write_lfts(&t, &f).unwrap(), None, None).unwrap();
        assert_eq!(back.lft, f.lft);
        assert_eq!((back.num_vls, back.classes, back.routing_sls), (1, 1, 1));
        assert!(back.path_sl.is_empty());
    }

    #[test]
    fn written_formats_match_opensm() {
        let t = generators::torus(&[2], 1, 1, 1).unwrap();
        let f = route(&t, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
        let lfts = write_lfts(&t, &f).unwrap();
        let first: Vec<&str> = lfts.lines().take(4).collect();
        let sw0 = t.switches()[0].name.clone();
        assert_eq!(
            first[0],
            format!("Unicast lids [0-4] of switch Lid 1 guid 0x0002c90000000000 ('{sw0}'):")
        );
        assert_eq!(
            first[1],
            format!("0x0001 000 # Switch portguid 0x0002c90000000000: '{sw0}'")
        );
        assert!(
            first[2].starts_with("0x0003 00")
                && first[2].contains("# Channel Adapter portguid 0x0002c90100000000: '"),
            "{}",
            first[2]
        );
        assert_eq!(lfts.lines().filter(|l| *l == "4 lids dumped").count(), 2);
        let g2l = write_guid2lid(&t).unwrap();
        assert_eq!(g2l.lines().next(), Some("0x0002c90000000000 0x0001 0x0001"));
        assert_eq!(g2l.lines().filter(|l| !l.is_empty()).count(), 4);
        // OpenSM's cache layout: entry, blank line.
        assert!(g2l.lines().skip(1).step_by(2).all(str::is_empty));
        assert!(g2l.ends_with("\n\n"));
        let psl = write_path_sl(&t, &f).unwrap();
        assert_eq!(psl.lines().count(), 4);
        assert!(psl.lines().all(|l| l.split(' ').count() == 3));
        let sl2vl = write_sl2vl(&t, &f).unwrap();
        assert!(sl2vl.contains(&format!(
            "Switch 0x0002c90000000000, base LID 1, \"{sw0}\"\n{SL2VL_HEADER}\n{SL2VL_SEPARATOR}\n"
        )));
        let mut row = "0   0   :".to_string();
        for sl in 0..16 {
            let v = if sl < f.wire_sls() {
                f.nic_sl2vl[sl]
            } else {
                15
            };
            row += &format!(" {v:<2}");
        }
        assert!(
            sl2vl.contains(&format!(
                "Channel Adapter 0x0002c90100000000, base LID 3, \"{}\"\n{SL2VL_HEADER}\n{SL2VL_SEPARATOR}\n{row}\n{SL2VL_SEPARATOR}\n\n",
                t.endpoints()[0].name
            )),
            "{sl2vl}"
        );
    }

    /// A dump laid out exactly as OpenSM 3.3 writes it (`osm_dump.c`), for a two-switch fabric
    /// with two hosts, including routes to switch LIDs, the unrouted LID 0 absent, a QoS
    /// SL2VL mapping all 16 SLs, and CA blocks.
    const TOPO: &str = "\
switchguid=0x10(10)
Switch\t4 \"S-0000000000000010\"\t# \"swA\" enhanced port 0 lid 1 lmc 0
[1]\t\"H-00000000000000a0\"[1](a1)\t# \"hostA mlx4_0\" lid 3 4xQDR
[3]\t\"S-0000000000000020\"[3]\t# \"swB\" lid 2 4xQDR

switchguid=0x20(20)
Switch\t4 \"S-0000000000000020\"\t# \"swB\" enhanced port 0 lid 2 lmc 0
[2]\t\"H-00000000000000b0\"[1](b1)\t# \"hostB mlx4_0\" lid 4 4xQDR
[3]\t\"S-0000000000000010\"[3]\t# \"swA\" lid 1 4xQDR

caguid=0xa0
Ca\t1 \"H-00000000000000a0\"\t# \"hostA mlx4_0\"
[1](a1)\t\"S-0000000000000010\"[1]\t# lid 3 lmc 0 \"swA\" lid 1 4xQDR

caguid=0xb0
Ca\t1 \"H-00000000000000b0\"\t# \"hostB mlx4_0\"
[1](b1)\t\"S-0000000000000020\"[2]\t# lid 4 lmc 0 \"swB\" lid 2 4xQDR
";

    const LFTS: &str = "\
Unicast lids [0-4] of switch Lid 1 guid 0x0000000000000010 ('swA'):
0x0001 000 # Switch portguid 0x0000000000000010: 'swA'
0x0002 003 # Switch portguid 0x0000000000000020: 'swB'
0x0003 001 # Channel Adapter portguid 0x00000000000000a1: 'hostA mlx4_0'
0x0004 003 # Channel Adapter portguid 0x00000000000000b1: 'hostB mlx4_0'
4 lids dumped
Unicast lids [0-4] of switch Lid 2 guid 0x0000000000000020 ('swB'):
0x0001 003 # Switch portguid 0x0000000000000010: 'swA'
0x0002 000 # Switch portguid 0x0000000000000020: 'swB'
0x0003 003 # Channel Adapter portguid 0x00000000000000a1: 'hostA mlx4_0'
0x0004 002 # Channel Adapter portguid 0x00000000000000b1: 'hostB mlx4_0'
4 lids dumped
";

    const SL2VL: &str = "\
Switch 0x0000000000000010, base LID 1, \"swA\"
#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15
#--------------------------------------------------------
0   1   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
1   1   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
2   1   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
3   1   : 1  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
4   1   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
0   3   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
1   3   : 2  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
2   3   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
3   3   : 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15
4   3   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
#--------------------------------------------------------

Channel Adapter 0x00000000000000a1, base LID 3, \"hostA mlx4_0\"
#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15
#--------------------------------------------------------
0   0   : 0  1  2  3  0  1  2  3  0  1  2  3  0  1  2  3 
#--------------------------------------------------------

";

    #[test]
    fn a_hand_written_opensm_dump_is_read() {
        let t = Topology::from_ib_str(TOPO, "two.topo").unwrap();
        let f = read_tables(&t, LFTS, Some(SL2VL), Some("3 4 0\n4 3 0\n3 3 0\n4 4 0\n")).unwrap();
        let (a, b) = (
            t.switch_by_guid(0x10).unwrap().0 as usize,
            t.switch_by_guid(0x20).unwrap().0 as usize,
        );
        let (ha, hb) = (
            t.endpoint_by_lid(3).unwrap().0 as usize,
            t.endpoint_by_lid(4).unwrap().0 as usize,
        );
        // IB port p is flitsim port p - 1.
        assert_eq!(f.lft[a][ha], 0);
        assert_eq!(f.lft[a][hb], 2);
        assert_eq!(f.lft[b][ha], 2);
        assert_eq!(f.lft[b][hb], 1);
        // All 16 SLs map to real VLs: 16 wire SLs, one routing SL, VLs 0..=3.
        assert_eq!((f.classes, f.routing_sls, f.num_vls), (16, 1, 4));
        assert!(f.path_sl.is_empty());
        let w = 16;
        // Row "3 1" (IB in 3, out 1) SL 0 is VL 1; row "1 3" SL 0 is VL 2.
        assert_eq!(f.sl2vl[a][(2 * 4) * w], 1);
        assert_eq!(f.sl2vl[a][(2) * w], 2);
        assert_eq!(f.nic_sl2vl[..4], [0, 1, 2, 3]);
        // Switch B has no SL2VL rows: VL 0.
        assert!(f.sl2vl[b].iter().all(|&v| v == 0));
        assert!(crate::cdg::verify(&t, &f).unwrap().deadlock_free);
        // A flitsim round trip of what was read gives the same tables.
        let again = read_tables(
            &t,
            &write_lfts(&t, &f).unwrap(),
            Some(&write_sl2vl(&t, &f).unwrap()),
            Some(&write_path_sl(&t, &f).unwrap()),
        )
        .unwrap();
        assert_eq!(again.lft, f.lft);
        assert_eq!(again.nic_sl2vl, f.nic_sl2vl);
        // Old OpenSM entry syntax, `0x<lid> <port> : (<type> portguid 0x…: '…')`, reads too.
        let old = LFTS
            .replace(
                " # Channel Adapter portguid",
                " : (Channel Adapter portguid",
            )
            .replace("mlx4_0'", "mlx4_0')")
            .replace("lids dumped", "lids in use");
        assert_eq!(read_tables(&t, &old, None, None).unwrap().lft, f.lft);
    }

    fn err(topo: &Topology, lfts: &str, sl2vl: Option<&str>, psl: Option<&str>) -> String {
        read_tables(topo, lfts, sl2vl, psl).unwrap_err().to_string()
    }

    #[test]
    fn malformed_dumps_name_file_and_line() {
        let t = Topology::from_ib_str(TOPO, "two.topo").unwrap();
        let m = err(&t, &LFTS.replace("0x0003 001", "0x0003 0x1"), None, None);
        assert!(
            m.contains("opensm-lfts.dump, line 4: cannot read the output port"),
            "{m}"
        );
        let m = err(&t, &LFTS.replace("0x0003 001", "0x0003 009"), None, None);
        assert!(m.contains("line 4: port 9 does not exist"), "{m}");
        let m = err(&t, &LFTS.replace("0x0003 001", "0x0003 000"), None, None);
        assert!(
            m.contains("line 4:") && m.contains("port 0, the switch itself"),
            "{m}"
        );
        let m = err(
            &t,
            &LFTS.replace("guid 0x0000000000000020", "guid 0x99"),
            None,
            None,
        );
        assert!(
            m.contains("line 7: switch GUID 0x0000000000000099 is not in"),
            "{m}"
        );
        let m = err(
            &t,
            &LFTS.replace(
                "0x0004 002 # Channel Adapter portguid 0x00000000000000b1",
                "0x0009 002 # Channel Adapter portguid 0x00000000000000c1",
            ),
            None,
            None,
        );
        assert!(
            m.contains("line 11: LID 9 (0x0009) belongs to no node"),
            "{m}"
        );
        let m = err(
            &t,
            &LFTS.replace("4 lids dumped\nUni", "garbage\nUni"),
            None,
            None,
        );
        assert!(m.contains("line 6: unrecognised line 'garbage'"), "{m}");
        let m = err(&t, "0x0001 001\n", None, None);
        assert!(m.contains("line 1: an LFT entry before any"), "{m}");
        // A routing that does not reach an endpoint fails the route check.
        let m = err(
            &t,
            &LFTS.replace("0x0004 002 #", "0x0004 003 #"),
            None,
            None,
        );
        assert!(m.contains("loop"), "{m}");
        let m = err(
            &t,
            LFTS,
            Some(&SL2VL.replace("1   3   : 2  1  ", "1   3   : ")),
            None,
        );
        assert!(
            m.contains("opensm-sl2vl.dump, line 10: expected 16 VLs"),
            "{m}"
        );
        let m = err(
            &t,
            LFTS,
            Some(&SL2VL.replace("1   3   : 2  1", "1   3   : 22 1")),
            None,
        );
        assert!(m.contains("line 10: SL 0: '22' is not a VL"), "{m}");
        let m = err(&t, LFTS, None, Some("3 4 0\n3 x 1\n"));
        assert!(
            m.contains("path-sl.txt, line 2: destination LID 'x'"),
            "{m}"
        );
        let m = err(&t, LFTS, None, Some("3 44 0\n"));
        assert!(
            m.contains("path-sl.txt, line 1: LID 44 belongs to no node"),
            "{m}"
        );
    }

    #[test]
    fn a_used_sl_on_vl15_is_refused() {
        let t = Topology::from_ib_str(TOPO, "two.topo").unwrap();
        // Switch A's turn from host A (IB port 1) to switch B (IB port 3) drops SL 0.
        let bad = SL2VL.replace("1   3   : 2  1", "1   3   : 15 1");
        let m = err(&t, LFTS, Some(&bad), None);
        assert!(
            m.contains("VL 15 (drop)") && m.contains("port 1 to port 3"),
            "{m}"
        );
    }

    #[test]
    fn ib_limits_are_enforced_when_writing() {
        let t = generators::torus(&[4, 4], 1, 1, 1).unwrap();
        let f = route(&t, "dor", &RoutingRequest { vls: 8, classes: 9 }).unwrap();
        assert!(f.wire_sls() > 16);
        let m = write_sl2vl(&t, &f).unwrap_err().to_string();
        assert!(m.contains("InfiniBand has only 16"), "{m}");
        let mut g = route(&t, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
        g.num_vls = 16;
        g.nic_sl2vl[0] = 15;
        let m = write_sl2vl(&t, &g).unwrap_err().to_string();
        assert!(
            m.contains("VL 15") && m.contains("at most 15 data VLs"),
            "{m}"
        );
        // Writing needs LIDs.
        let ibsim = "Switch 2 \"S1\"\n[1] \"H1\"[1]\nHca 1 \"H1\"\n[1] \"S1\"[1]\n";
        let t = Topology::from_ib_str(ibsim, "net").unwrap();
        let f = route(&t, "minhop", &RoutingRequest { vls: 1, classes: 1 }).unwrap();
        let m = write_lfts(&t, &f).unwrap_err().to_string();
        assert!(m.contains("has no GUID"), "{m}");
    }

    #[test]
    fn write_dir_writes_four_files_and_replaces_them() {
        let t = generators::torus(&[3, 3], 1, 1, 1).unwrap();
        let f = route(&t, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
        let base = std::env::temp_dir().join(format!("flitsim-opensm-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let dir = base.join("a/b");
        let paths = write_dir(&t, &f, &dir).unwrap();
        assert_eq!(paths.len(), 4);
        assert!(paths.iter().all(|p| p.is_file()));
        // Again into the existing directory; no temporary left behind.
        write_dir(&t, &f, &dir).unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 4);
        let back = read_dir(&t, &dir).unwrap();
        assert_eq!(back.lft, f.lft);
        std::fs::remove_file(dir.join(LFTS_FILE)).unwrap();
        let m = read_dir(&t, &dir).unwrap_err().to_string();
        assert!(m.contains("no opensm-lfts.dump"), "{m}");
        let _ = std::fs::remove_dir_all(&base);
    }
}
