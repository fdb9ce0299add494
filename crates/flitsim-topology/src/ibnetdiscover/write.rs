//! Writing a topology as an `ibnetdiscover`-style dump ([`Topology::to_ibnetdiscover`]).
use crate::{NodeId, Topology, GENERATED_ENDPOINT_GUID_BASE, GENERATED_SWITCH_GUID_BASE};
use std::fmt::Write as _;

/// Quoted strings cannot contain `"`; it is written as `'`.
fn q(s: &str) -> String {
    s.replace('"', "'")
}

impl Topology {
    /// Writes the topology as an `ibnetdiscover`-style dump that [`Topology::from_ib_str`]
    /// reads back to the same switches, endpoints and links (as a set; links come back in the
    /// reader's order). Each endpoint becomes a one-port CA whose node and port GUID are the
    /// endpoint's GUID. Missing GUIDs are filled with the values
    /// [`Topology::assign_guids_and_lids`] would give; missing LIDs are left out. Latency and
    /// width are not written (the reader uses 1 for both); a `"` in a name is written as `'`.
    pub fn to_ibnetdiscover(&self) -> String {
        let sg = |s: usize| {
            self.switches[s]
                .guid
                .unwrap_or(GENERATED_SWITCH_GUID_BASE + s as u64)
        };
        let eg = |e: usize| {
            self.endpoints[e]
                .guid
                .unwrap_or(GENERATED_ENDPOINT_GUID_BASE + e as u64)
        };
        let lid = |l: Option<u16>| l.map(|l| format!(" lid {l}")).unwrap_or_default();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "#\n# Topology file: written by flitsim from topology \"{}\"\n#",
            q(&self.name)
        );
        for (s, sw) in self.switches.iter().enumerate() {
            let _ = writeln!(out, "\nswitchguid={:#x}({:x})", sg(s), sg(s));
            let _ = writeln!(
                out,
                "Switch\t{} \"S-{:016x}\"\t\t# \"{}\" enhanced port 0{} lmc 0",
                sw.ports,
                sg(s),
                q(&sw.name),
                lid(sw.lid)
            );
            for p in 0..sw.ports {
                let Some(peer) = self.switch_peer(crate::SwitchId(s as u32), p) else {
                    continue;
                };
                match peer.remote.node {
                    NodeId::Switch(t) => {
                        let t = t as usize;
                        let _ = writeln!(
                            out,
                            "[{}]\t\"S-{:016x}\"[{}]\t\t# \"{}\"{}",
                            p + 1,
                            sg(t),
                            peer.remote.port + 1,
                            q(&self.switches[t].name),
                            lid(self.switches[t].lid)
                        );
                    }
                    NodeId::Endpoint(e) => {
                        let e = e as usize;
                        let _ = writeln!(
                            out,
                            "[{}]\t\"H-{:016x}\"[1]({:x}) \t\t# \"{}\"{}",
                            p + 1,
                            eg(e),
                            eg(e),
                            q(&self.endpoints[e].name),
                            lid(self.endpoints[e].lid)
                        );
                    }
                }
            }
        }
        for (e, ep) in self.endpoints.iter().enumerate() {
            let (s, p) = self.endpoint_switch(crate::EndpointId(e as u32));
            let s = s.0 as usize;
            let _ = writeln!(out, "\ncaguid={:#x}", eg(e));
            let _ = writeln!(out, "Ca\t1 \"H-{:016x}\"\t\t# \"{}\"", eg(e), q(&ep.name));
            let _ = writeln!(
                out,
                "[1]({:x}) \t\"S-{:016x}\"[{}]\t\t#{} lmc 0 \"{}\"{}",
                eg(e),
                sg(s),
                p + 1,
                lid(ep.lid),
                q(&self.switches[s].name),
                lid(self.switches[s].lid)
            );
        }
        out
    }
}
