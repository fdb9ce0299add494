//! Reading and writing InfiniBand fabric dumps: the text that `ibnetdiscover` (infiniband-diags)
//! prints, and the "net" files of the `ibsim` fabric simulator, which use the same record
//! syntax (ibsim's `net-examples/examples.README`: "ibsim uses text file in the format compatible
//! with ibnetdiscover command output").
//!
//! ## Accepted syntax
//!
//! ```text
//! # comment                                   (also blank lines)
//! vendid=0x2c9   devid=0xc738   sysimgguid=0x…   switchguid=0x…(…)   caguid=0x…
//! Switch 36 "S-f4521403001165a0"  # "MF0;ib5:SX6036/U1" enhanced port 0 lid 128 lmc 0
//! [1]  "H-24be05ffff980030"[1](24be05ffff980031)  # "stage114 mlx4_0" lid 105 4xQDR
//! [21] "S-f4521403007ea570"[26]                   # "MF0;ib8:SX6036/U1" lid 1 4xFDR10
//! Ca 2 "H-24be05ffff985d90"  # "stage97 mlx4_0"
//! [1](24be05ffff985d91)  "S-f4521403001165a0"[32]  # lid 121 lmc 0 "MF0;ib5:SX6036/U1" lid 128 4xQDR
//! Hca 2 "Hca1"                                 (ibsim: Hca = Ca, any quoted node id)
//! [1] "Switch1"[1]                             (ibsim: no port GUIDs, no comment)
//! ```
//!
//! A node record is a header line followed by one line per connected port. Node ids of the
//! form `S-<hex>` / `H-<hex>` carry the node GUID; other ids (ibsim) are plain names.
//! In a port line the `(hex)` right after the local port number is the local port GUID (CA
//! records), the `(hex)` after the remote port number the remote port GUID (switch records
//! pointing at CAs). In the `#` comment, a `lid N` before the first quoted string is the local
//! port's LID and one after it the remote port's LID; link width and speed (`4xQDR`, …) are
//! ignored. ibsim's `include`, `do` and `@alias` extensions and routers are not supported.
//!
//! ## Mapping to flitsim
//!
//! * Each switch becomes a flitsim switch with as many ports as the header says; IB port `p`
//!   (numbered from 1; port 0 is the management port) is flitsim port `p − 1`. Its GUID is the
//!   node GUID, its LID the LID of port 0 (`lid` in the header). LID 0 means "unassigned".
//! * Each *connected* CA port becomes one flitsim endpoint (CA records in file order, then by
//!   port number). Its GUID is the port GUID (for ibsim files without port GUIDs:
//!   node GUID + port number, ibsim's own convention, when the node id carries a GUID), its
//!   LID the LID on its port line. Its name is the CA's description, with ` p<port>` appended
//!   when the CA has more than one connected port; names that would repeat get the GUID (or a
//!   counter) appended. Switch names are their descriptions, made unique the same way.
//! * Each link appears in the records of both its ends. The two halves must agree on ports,
//!   port GUIDs and LIDs; a link listed from one end only is accepted. Several links between
//!   the same two switches are kept as separate links. Every link gets latency 1 and width 1.
//!
//! Links are ordered endpoint links first (in endpoint order), then switch-to-switch links by
//! (switch, port) of their lower end, so [`Topology::to_ibnetdiscover`] followed by reading
//! gives back the same switches, endpoints and links.
//!
//! ## Files
//!
//! `parse.rs` reads the lines into node records and link halves, `build.rs` joins the halves
//! into links and builds the [`Topology`], `write.rs` writes a topology in this format
//! ([`Topology::to_ibnetdiscover`]).
use crate::{Topology, TopologyError};
use build::build;
use std::path::Path;

mod build;
mod parse;
#[cfg(test)]
mod tests;
mod write;

impl Topology {
    /// Parses an `ibnetdiscover` dump or an `ibsim` net file (both accepted by the same
    /// grammar, see the [module documentation](crate::ibnetdiscover)); `origin` names the
    /// source in errors and gives the topology its name. Every malformed line gives
    /// [`TopologyError::Parse`] with `line N: …`.
    pub fn from_ib_str(text: &str, origin: &str) -> Result<Topology, TopologyError> {
        build(text, origin)
    }

    /// Reads an `ibnetdiscover` dump or `ibsim` net file.
    pub fn read_ib(path: &Path) -> Result<Topology, TopologyError> {
        let (name, text) = crate::io::read_text(path)?;
        build(&text, &name)
    }
}
