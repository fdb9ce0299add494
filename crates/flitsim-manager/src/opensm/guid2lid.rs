//! `guid2lid`, OpenSM's LID cache (see the [format](super)): [`write_guid2lid`].
use super::Ids;
use crate::RoutingError;
use flitsim_topology::Topology;
use std::fmt::Write as _;

/// `guid2lid`: `0x<port guid> 0x<lid> 0x<lid>` and a blank line per switch, then per endpoint.
pub fn write_guid2lid(topo: &Topology) -> Result<String, RoutingError> {
    write_guid2lid_lmc(topo, 0)
}

/// [`write_guid2lid`] for LMC `lmc`: an endpoint's line gives its base LID and its top LID
/// `base + 2^lmc − 1`, as OpenSM caches an LMC > 0 port (switches keep one LID). Fails when
/// an endpoint's LID is not the base of a free aligned block of `2^lmc` LIDs.
pub fn write_guid2lid_lmc(topo: &Topology, lmc: u8) -> Result<String, RoutingError> {
    let ids = Ids::of(topo)?;
    super::check_lid_blocks(topo, &ids, lmc)?;
    let mut out = String::new();
    let top = (1u16 << lmc.min(flitsim_topology::MAX_LMC)) - 1;
    for (g, l) in ids.switch_guid.iter().zip(&ids.switch_lid) {
        let _ = writeln!(out, "0x{g:016x} 0x{l:04x} 0x{l:04x}\n");
    }
    for (g, l) in ids.endpoint_guid.iter().zip(&ids.endpoint_lid) {
        let _ = writeln!(out, "0x{g:016x} 0x{l:04x} 0x{:04x}\n", l + top);
    }
    Ok(out)
}

/// Whether a `guid2lid` text gives some node more than one LID (`top > base`: an LMC > 0
/// port).
pub(super) fn has_lid_ranges(text: &str) -> bool {
    text.lines().any(|l| {
        let f: Vec<&str> = l
            .split('#')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        f.len() == 3 && f[1] != f[2]
    })
}

/// Reads a `guid2lid` file (OpenSM's LID cache, as [`write_guid2lid`] and OpenSM write it:
/// `0x<port guid> 0x<base lid> 0x<top lid>` per line; blank lines and `#` comments skipped)
/// and gives the nodes it names their base LID. `file` names the file in errors.
///
/// Missing GUIDs are assigned first ([`Topology::assign_missing_guids`], the deterministic
/// order `flitsim route --out` uses, so a `guid2lid` written for a file without GUIDs names
/// the same nodes when read back). Nodes the file does not list keep their LIDs. Errors name
/// the file and line: a malformed line, a GUID that is no node of the topology, a GUID listed
/// twice, a LID outside the unicast range `1..=0xBFFF`, a top LID below the base, or a LID
/// range that overlaps another line's or a LID the topology gives a node the file does not
/// list. Returns the number of nodes the file gave a LID.
pub fn apply_guid2lid(topo: &mut Topology, text: &str, file: &str) -> Result<usize, RoutingError> {
    use flitsim_topology::MAX_UNICAST_LID;
    use std::collections::HashMap;
    topo.assign_missing_guids();
    let mut switch_lids: Vec<Option<u16>> = topo.switches().iter().map(|s| s.lid).collect();
    let mut endpoint_lids: Vec<Option<u16>> = topo.endpoints().iter().map(|e| e.lid).collect();
    let mut listed_switch = vec![false; switch_lids.len()];
    let mut listed_endpoint = vec![false; endpoint_lids.len()];
    // LID → line that claimed it.
    let mut lid_line: HashMap<u16, usize> = HashMap::new();
    let mut guid_line: HashMap<u64, usize> = HashMap::new();
    let mut count = 0;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let num = |s: &str, what: &str| -> Result<u64, RoutingError> {
            s.strip_prefix("0x")
                .or_else(|| s.strip_prefix("0X"))
                .and_then(|h| u64::from_str_radix(h, 16).ok())
                .ok_or_else(|| super::at(file, n, format!("{what} '{s}' is not 0x<hex>")))
        };
        if fields.len() != 3 {
            return Err(super::at(
                file,
                n,
                format!(
                    "expected '0x<guid> 0x<base lid> 0x<top lid>', found '{}'",
                    line.chars().take(80).collect::<String>()
                ),
            ));
        }
        let guid = num(fields[0], "GUID")?;
        let (base, top) = (num(fields[1], "LID")?, num(fields[2], "LID")?);
        for l in [base, top] {
            if l == 0 || l > MAX_UNICAST_LID as u64 {
                return Err(super::at(
                    file,
                    n,
                    format!(
                        "LID {l:#06x} of GUID {guid:#018x} is outside the unicast range \
                         0x0001..=0x{MAX_UNICAST_LID:04x}"
                    ),
                ));
            }
        }
        if top < base {
            return Err(super::at(
                file,
                n,
                format!("top LID {top:#06x} is below base LID {base:#06x}"),
            ));
        }
        if let Some(prev) = guid_line.insert(guid, n) {
            return Err(super::at(
                file,
                n,
                format!("GUID {guid:#018x} is listed again (first on line {prev})"),
            ));
        }
        for l in base..=top {
            if let Some(prev) = lid_line.insert(l as u16, n) {
                return Err(super::at(
                    file,
                    n,
                    format!("LID {l:#06x} is given again (first on line {prev})"),
                ));
            }
        }
        if let Some(s) = topo.switch_by_guid(guid) {
            switch_lids[s.0 as usize] = Some(base as u16);
            listed_switch[s.0 as usize] = true;
        } else if let Some(e) = topo.endpoint_by_guid(guid) {
            endpoint_lids[e.0 as usize] = Some(base as u16);
            listed_endpoint[e.0 as usize] = true;
        } else {
            return Err(super::at(
                file,
                n,
                format!(
                    "GUID {guid:#018x} is not a switch or CA port GUID of topology '{}'",
                    topo.name()
                ),
            ));
        }
        count += 1;
    }
    // A LID the file gives must not be a LID the topology keeps for an unlisted node.
    let kept = topo
        .switches()
        .iter()
        .zip(&listed_switch)
        .map(|(s, &l)| (l, s.lid, "switch", &s.name))
        .chain(
            topo.endpoints()
                .iter()
                .zip(&listed_endpoint)
                .map(|(e, &l)| (l, e.lid, "endpoint", &e.name)),
        );
    for (listed, lid, kind, name) in kept {
        if let (false, Some(l)) = (listed, lid) {
            if let Some(&line) = lid_line.get(&l) {
                return Err(super::at(
                    file,
                    line,
                    format!(
                        "LID {l:#06x} is the LID the topology gives {kind} {name}, which the \
                         file does not list"
                    ),
                ));
            }
        }
    }
    topo.set_lids(&switch_lids, &endpoint_lids)
        .map_err(|e| invalid_in(file, e))?;
    Ok(count)
}

fn invalid_in(file: &str, e: flitsim_topology::TopologyError) -> RoutingError {
    RoutingError::InvalidTables(format!("{file}: {e}"))
}
