//! `guid2lid`, OpenSM's LID cache (see the [format](super)): [`write_guid2lid`].
use super::Ids;
use crate::RoutingError;
use flitsim_topology::Topology;
use std::fmt::Write as _;

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
