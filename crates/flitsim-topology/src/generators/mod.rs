//! Topology generators, one file per family: tori and meshes (`torus.rs`), fat trees, XGFTs
//! and the folded butterfly (`trees.rs`), the folded perfect-shuffle MIN (`shuffle.rs`), Kautz
//! networks (`kautz.rs`), random networks (`random.rs`), and one-line specs (`spec.rs`). Each generator documents its port numbering
//! (in its own documentation and in [`Shape`](crate::Shape)), which routing engines rely on,
//! and its source. Every generated topology has GUIDs and LIDs
//! ([`Topology::assign_guids_and_lids`]). [`from_spec`] builds any of them from a one-line spec
//! such as `xgft:h=2,m=10,10,w=5,5`; [`table1_presets`] lists the networks of Domke, Hoefler
//! and Nagel (IPDPS 2011), Table I.
use crate::{Endpoint, Link, NodeId, PortNum, PortRef, Topology, TopologyError};

mod kautz;
mod random;
mod shuffle;
mod spec;
mod torus;
mod trees;

pub use kautz::{kautz, kautz_index, kautz_symbols};
pub use random::{random, RandomParams};
pub use shuffle::{folded_shuffle_min, perfect_shuffle, ShuffleMinLayout};
pub use spec::{from_spec, table1_presets};
pub use torus::{coords, index, torus, torus_or_mesh};
pub use trees::{folded_butterfly, kary_ntree, xgft, xgft_with_leaves};

fn sw(s: u32, p: u32) -> PortRef {
    PortRef {
        node: NodeId::Switch(s),
        port: p as PortNum,
    }
}
fn ep(e: u32) -> PortRef {
    PortRef {
        node: NodeId::Endpoint(e),
        port: 0,
    }
}

/// Endpoint `id` of a generated topology, named `ep<id>`.
fn endpoint(id: u32) -> Endpoint {
    Endpoint {
        name: format!("ep{id}"),
        ..Endpoint::default()
    }
}

/// Endpoints numbered switch by switch: `counts[s]` of them on switch `s`, on its ports
/// `first_port, first_port + 1, …`. Returns the endpoints ([`endpoint`]) and their links
/// (`latency`, width 1), both in endpoint order.
fn attach_endpoints(
    counts: impl IntoIterator<Item = u32>,
    first_port: u32,
    latency: u32,
) -> (Vec<Endpoint>, Vec<Link>) {
    let mut endpoints = Vec::new();
    let mut links = Vec::new();
    for (s, n) in counts.into_iter().enumerate() {
        for p in 0..n {
            let id = endpoints.len() as u32;
            endpoints.push(endpoint(id));
            links.push(Link {
                a: ep(id),
                b: sw(s as u32, first_port + p),
                latency,
                width: 1,
            });
        }
    }
    (endpoints, links)
}

/// Gives a freshly built topology its deterministic GUIDs and LIDs
/// ([`Topology::assign_guids_and_lids`]); every generator ends with this.
fn finish(t: Result<Topology, TopologyError>) -> Result<Topology, TopologyError> {
    let mut t = t?;
    t.assign_guids_and_lids();
    Ok(t)
}

fn param_err(m: impl Into<String>) -> TopologyError {
    TopologyError::Parameters(m.into())
}

/// Checks the size of the topology a generator is about to build against
/// [`MAX_SWITCHES`](crate::MAX_SWITCHES), [`MAX_ENDPOINTS`](crate::MAX_ENDPOINTS) and
/// [`MAX_SWITCH_PORTS`](crate::MAX_SWITCH_PORTS), before anything is allocated. Callers compute
/// the counts with saturating arithmetic, so an overflow is reported as too large.
fn check_size(
    family: &str,
    switches: u64,
    endpoints: u64,
    switch_ports: u64,
) -> Result<(), TopologyError> {
    crate::check_size(&format!("{family}: "), switches, endpoints, switch_ports).map_err(param_err)
}

/// How many endpoints each of `n` switches gets when `total` endpoints are spread as evenly
/// as possible (the first `total mod n` switches get one more).
fn spread(total: u32, n: u32) -> Vec<u32> {
    (0..n)
        .map(|i| total / n + u32::from(i < total % n))
        .collect()
}

/// Where endpoints go on the switches a generator attaches them to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndpointPlacement {
    /// The same number on every such switch.
    PerSwitch(u32),
    /// This many in total, spread as evenly as possible (the first `total mod n` switches get
    /// one more). Used to reproduce endpoint counts such as those of Domke et al. 2011,
    /// Table I, that are not multiples of the switch count.
    Total(u32),
}

impl EndpointPlacement {
    fn counts(self, switches: u32) -> Vec<u32> {
        match self {
            EndpointPlacement::PerSwitch(e) => vec![e; switches as usize],
            EndpointPlacement::Total(t) => spread(t, switches),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SwitchId;

    #[test]
    fn generated_topologies_have_guids_and_lids() {
        for t in [
            torus(&[3, 3], 2, 1, 1).unwrap(),
            kary_ntree(2, 3, 1).unwrap(),
            from_spec("random:switches=8,ports=6,endpoints=2,links=10,seed=3").unwrap(),
            from_spec("kautz:b=2,n=1,endpoints=2").unwrap(),
            from_spec("fly:k=2,n=3").unwrap(),
            from_spec("min:endpoints=24,radix=8").unwrap(),
            from_spec("xgft:h=1,m=4,w=2,endpoints=3").unwrap(),
        ] {
            let ns = t.num_switches();
            for (i, s) in t.switches().iter().enumerate() {
                assert_eq!(s.guid, Some(crate::GENERATED_SWITCH_GUID_BASE + i as u64));
                assert_eq!(s.lid, Some(1 + i as u16));
                assert_eq!(t.switch_by_guid(s.guid.unwrap()), Some(SwitchId(i as u32)));
            }
            for (i, e) in t.endpoints().iter().enumerate() {
                let id = crate::EndpointId(i as u32);
                assert_eq!(e.lid, Some((ns + 1 + i) as u16));
                assert_eq!(t.endpoint_by_lid(e.lid.unwrap()), Some(id));
                assert_eq!(t.endpoint_by_guid(e.guid.unwrap()), Some(id));
            }
            let back = Topology::from_json(&t.to_json()).unwrap();
            assert_eq!(back.switches(), t.switches());
            assert_eq!(back.endpoints(), t.endpoints());
        }
    }

    /// Found by fuzzing (`kary-ntree:k=5,n=7`): with 65535 or more switches the switch LIDs
    /// overflowed `u16` (a panic in debug builds) although none are assigned then.
    #[test]
    fn more_switches_than_lids_get_guids_and_no_lids() {
        let t = from_spec("torus:256x256").unwrap();
        assert_eq!(t.num_switches(), 65536);
        assert!(t
            .switches()
            .iter()
            .all(|s| s.lid.is_none() && s.guid.is_some()));
        assert!(t
            .endpoints()
            .iter()
            .all(|e| e.lid.is_none() && e.guid.is_some()));
    }
}
