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
//! With LMC > 0 (a fabric with `2^lmc` paths per destination) every LID of a port is listed:
//! `base + k` routes path `k` (OpenSM's dumps list every LID of an LMC block likewise).
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
//! are ignored (flitsim routes to endpoints only). LID `base + k` of an endpoint, when the entry
//! names that endpoint's port GUID (LIDs up to the next node's, at most 128), is path `k` of an
//! LMC > 0 port: the dump has as many paths per destination as the largest such `k + 1`,
//! rounded up to a power of two, and every path must list every endpoint. Any other unknown
//! LID whose port GUID is a node of the topology (a switch's further LIDs) is ignored. IB port `p ≥ 1` is flitsim port
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
//! (`osm_db_pack.c`: GUID as `0x%016`, LID range as `0x%04x 0x%04x`, base and top LID: equal
//! for switches, `base + 2^lmc − 1` for CA ports of tables with LMC > 0), each entry followed by a blank line as OpenSM writes it: OpenSM's cache reader
//! appends every non-blank line to the previous entry, so a file without the blank lines
//! would not load as its LID cache (`OSM_CACHE_DIR`).
//!
//! ## `path-sl.txt`
//!
//! Not an OpenSM file (OpenSM answers path SLs through SA PathRecord queries): one line
//! `<source lid> <destination lid> <sl>` in decimal per ordered endpoint pair (source-major,
//! `src == dst` included), the SL of traffic class 0. With LMC > 0, one line per destination
//! LID: `<src base lid> <dst base lid + k> <sl of path k>`. Reading maps the SLs back to path SLs
//! (`routing_sls` = largest SL + 1 unless the SL2VL comment says otherwise); pairs not listed
//! get SL 0, lines naming switch LIDs are ignored.
//!
//! ## Files
//!
//! One file per format: `lft.rs`, `sl2vl.rs`, `guid2lid.rs` and `path_sl.rs` write and parse
//! their dump; `tables.rs` assembles a [`FabricConfig`] from the parsed dumps; this file holds
//! what they share and the directory level ([`write_all`], [`write_dir`], [`read_dir`]).
use crate::{FabricConfig, RoutingError};
use flitsim_topology::{NodeId, Topology};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

mod guid2lid;
mod lft;
mod path_sl;
mod sl2vl;
mod tables;
#[cfg(test)]
mod tests;

pub use guid2lid::{apply_guid2lid, write_guid2lid, write_guid2lid_lmc};
pub use lft::write_lfts;
pub use path_sl::write_path_sl;
pub use sl2vl::write_sl2vl;
pub use tables::read_tables;

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
                 node (Topology::assign_missing_ids gives the missing ones, as `flitsim route \
                 --out` does)"
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
}

/// Descriptions may not contain the quote that delimits them.
fn desc(name: &str, quote: char) -> String {
    name.replace(quote, if quote == '"' { "'" } else { "\"" })
}

/// The four dump files of a fabric, as `(file name, contents)`.
pub fn write_all(
    topo: &Topology,
    fabric: &FabricConfig,
) -> Result<Vec<(&'static str, String)>, RoutingError> {
    Ok(vec![
        (LFTS_FILE, write_lfts(topo, fabric)?),
        (GUID2LID_FILE, write_guid2lid_lmc(topo, lmc_of(fabric)?)?),
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
    // Nothing is written once a cancellation is requested.
    flitsim_topology::cancel::check()?;
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
///
/// The dumps name endpoints by LID. When `topo` lacks some GUIDs or LIDs (an ibsim net file,
/// say), they are completed first, as `flitsim route --out` completes them: from the
/// directory's `guid2lid` when there is one ([`apply_guid2lid`]), the rest by
/// [`Topology::assign_missing_ids`] — so tables written for such a file read back onto it.
/// A `guid2lid` that gives some port a range of LIDs (tables written with LMC > 0) is applied
/// even to a topology that has all its LIDs, since the dumps name ports by its LIDs.
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
    let completed;
    let guid2lid = read(GUID2LID_FILE, false)?;
    // Tables written with LMC > 0 name ports by LIDs the topology's own (a generator's LMC 0
    // LIDs, say) need not match: their guid2lid, which gives such ports a LID range, decides.
    let lmc_ranges = guid2lid.as_deref().is_some_and(guid2lid::has_lid_ranges);
    let topo = if topo.has_all_ids() && !lmc_ranges {
        topo
    } else {
        let mut t = topo.clone();
        if let Some(text) = &guid2lid {
            let p = dir.join(GUID2LID_FILE);
            apply_guid2lid(&mut t, text, &p.display().to_string())?;
        }
        t.assign_missing_ids(0).map_err(|e| {
            invalid(format!(
                "{}: the topology has no LIDs for some nodes and they cannot be assigned: {e}",
                dir.display()
            ))
        })?;
        completed = t;
        &completed
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

/// Every LID of `topo`'s nodes as a dense table: a node's own (base) LID gives `(node, 0)`;
/// the LIDs after an endpoint's base, up to the next node's LID and at most 128 in all (the
/// LIDs of an LMC > 0 port), give `(endpoint, k)` for path `k`.
fn lid_table(topo: &Topology) -> Vec<Option<(NodeId, u8)>> {
    let mut bases: Vec<(u16, NodeId)> = lid_map(topo).into_iter().collect();
    bases.sort_unstable_by_key(|b| b.0);
    let mut t = vec![None; u16::MAX as usize + 1];
    for (i, &(base, node)) in bases.iter().enumerate() {
        let end = match node {
            NodeId::Switch(_) => base as usize + 1,
            NodeId::Endpoint(_) => {
                let next = bases
                    .get(i + 1)
                    .map_or(u16::MAX as usize + 1, |b| b.0 as usize);
                next.min(base as usize + (1 << flitsim_topology::MAX_LMC))
            }
        };
        for (k, slot) in t[base as usize..end].iter_mut().enumerate() {
            *slot = Some((node, k as u8));
        }
    }
    t
}

/// The paths per destination of a fabric as the LMC of its dumps (`paths = 2^lmc`); fails
/// when it is no power of two.
fn lmc_of(fabric: &FabricConfig) -> Result<u8, RoutingError> {
    let p = fabric.num_paths();
    if !p.is_power_of_two() || p > 1 << flitsim_topology::MAX_LMC {
        return Err(invalid(format!(
            "the tables have {p} paths per destination; InfiniBand dumps need 2^LMC paths \
             (1, 2, 4, … 128), one per LID of a port"
        )));
    }
    Ok(p.trailing_zeros() as u8)
}

/// Checks that every endpoint's LID is the base of an aligned block of `2^lmc` LIDs that no
/// other node's LID falls into, so that LID `base + k` can name path `k`.
fn check_lid_blocks(topo: &Topology, ids: &Ids, lmc: u8) -> Result<(), RoutingError> {
    if lmc == 0 {
        return Ok(());
    }
    let block = 1u32 << lmc;
    let mut all: Vec<(u16, bool, usize)> = ids
        .switch_lid
        .iter()
        .enumerate()
        .map(|(i, &l)| (l, false, i))
        .chain(
            ids.endpoint_lid
                .iter()
                .enumerate()
                .map(|(i, &l)| (l, true, i)),
        )
        .collect();
    all.sort_unstable();
    for (i, &(l, is_ep, e)) in all.iter().enumerate() {
        if !is_ep {
            continue;
        }
        let name = &topo.endpoints()[e].name;
        let next = all.get(i + 1).map(|n| n.0 as u32);
        if !(l as u32).is_multiple_of(block)
            || next.is_some_and(|n| n < l as u32 + block)
            || l as u32 + block - 1 > flitsim_topology::MAX_UNICAST_LID as u32
        {
            return Err(invalid(format!(
                "the tables have {block} paths per destination (LMC {lmc}), but endpoint \
                 {name} has LID {l}, which is not the base of a free block of {block} LIDs \
                 aligned to {block}; give the topology LIDs for LMC {lmc} \
                 (Topology::assign_missing_ids({lmc}), as `flitsim route --lmc {lmc} --out` does)"
            )));
        }
    }
    Ok(())
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

/// Checks that the fabric's SLs and VLs fit InfiniBand's 4-bit fields.
fn check_ib_sls(fabric: &FabricConfig) -> Result<(), RoutingError> {
    let wire = fabric.wire_sls();
    if wire > IB_SLS {
        let r = fabric.routing_sls.max(1) as usize;
        let fits = if r <= IB_SLS {
            format!(
                "with {r} routing SLs per class at most {} class{} fit{}",
                IB_SLS / r,
                if IB_SLS / r == 1 { "" } else { "es" },
                if IB_SLS / r == 1 { "s" } else { "" }
            )
        } else {
            format!(
                "one class alone needs {r} SLs here, so no number of classes fits (fewer \
                 torus dimensions, or an engine with fewer path SLs, would)"
            )
        };
        return Err(invalid(format!(
            "the {} tables use {wire} service levels ({} classes x {} routing SLs); \
             InfiniBand has only {IB_SLS}, so they cannot be written as OpenSM dumps; {fits}",
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
