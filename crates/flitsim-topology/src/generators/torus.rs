//! Tori and meshes: [`torus_or_mesh`], [`torus`], and the coordinate helpers [`coords`] and
//! [`index`] that DOR uses. Port numbering: [`Shape::Torus`].
use super::{attach_endpoints, check_size, finish, sw};
use crate::{Link, PortNum, Shape, Switch, Topology, TopologyError};

/// Coordinates of switch `i` in a torus/mesh with `sides` (dimension 0 fastest).
pub fn coords(sides: &[u32], mut i: u32) -> Vec<u32> {
    sides
        .iter()
        .map(|&k| {
            let c = i % k;
            i /= k;
            c
        })
        .collect()
}

/// Index of the switch at `c` in a torus/mesh with `sides`.
pub fn index(sides: &[u32], c: &[u32]) -> u32 {
    let mut i = 0;
    for d in (0..sides.len()).rev() {
        i = i * sides[d] + c[d];
    }
    i
}

/// n-dimensional torus (`wrap`) or mesh with `endpoints_per_switch` endpoints on each switch and
/// `trunk` parallel links between neighbours; every link has `latency` cycles and width 1.
/// A dimension of side 2 gets a single trunk between the two switches (no double wrap link);
/// the "−" ports of that dimension stay unconnected.
pub fn torus_or_mesh(
    sides: &[u32],
    endpoints_per_switch: u32,
    trunk: u32,
    latency: u32,
    wrap: bool,
) -> Result<Topology, TopologyError> {
    if sides.is_empty() || sides.iter().any(|&k| k < 2) {
        return Err(TopologyError::Parameters(
            "every side must be at least 2".into(),
        ));
    }
    if trunk == 0 || latency == 0 {
        return Err(TopologyError::Parameters(
            "trunk and latency must be at least 1".into(),
        ));
    }
    let kind = if wrap { "torus" } else { "mesh" };
    let n64 = sides
        .iter()
        .fold(1u64, |acc, &k| acc.saturating_mul(u64::from(k)));
    let ports64 = (2 * sides.len() as u64)
        .saturating_mul(u64::from(trunk))
        .saturating_add(u64::from(endpoints_per_switch));
    if ports64 > PortNum::MAX as u64 {
        return Err(TopologyError::Parameters(format!(
            "{kind}: {ports64} ports per switch is too many (at most {})",
            PortNum::MAX
        )));
    }
    check_size(
        kind,
        n64,
        n64.saturating_mul(u64::from(endpoints_per_switch)),
        n64.saturating_mul(ports64),
    )?;
    let dims = sides.len() as u32;
    let n = n64 as u32;
    let ports = ports64 as u32;
    let switches = (0..n)
        .map(|i| {
            let c = coords(sides, i);
            let name = c
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("_");
            Switch {
                name: format!("sw{name}"),
                ports: ports as PortNum,
                ..Switch::default()
            }
        })
        .collect();
    let mut links = Vec::new();
    for i in 0..n {
        let c = coords(sides, i);
        for d in 0..dims as usize {
            let k = sides[d];
            if c[d] + 1 == k && (!wrap || k == 2) {
                continue;
            }
            let mut nc = c.clone();
            nc[d] = (c[d] + 1) % k;
            let j = index(sides, &nc);
            for t in 0..trunk {
                let plus = (2 * d as u32) * trunk + t;
                let minus = (2 * d as u32 + 1) * trunk + t;
                links.push(Link {
                    a: sw(i, plus),
                    b: sw(j, minus),
                    latency,
                    width: 1,
                });
            }
        }
    }
    let (endpoints, endpoint_links) = attach_endpoints(
        (0..n).map(|_| endpoints_per_switch),
        2 * dims * trunk,
        latency,
    );
    links.extend(endpoint_links);
    let name = format!(
        "{kind}-{}",
        sides
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("x")
    );
    finish(Topology::new(
        name,
        Shape::Torus {
            sides: sides.to_vec(),
            wrap,
            endpoints_per_switch,
            trunk,
        },
        switches,
        endpoints,
        links,
    ))
}

/// Torus shortcut: see [`torus_or_mesh`].
pub fn torus(
    sides: &[u32],
    endpoints_per_switch: u32,
    trunk: u32,
    latency: u32,
) -> Result<Topology, TopologyError> {
    torus_or_mesh(sides, endpoints_per_switch, trunk, latency, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SwitchId;

    #[test]
    fn torus_8x8_with_trunks_matches_omnipath_paper() {
        let t = torus(&[8, 8], 8, 10, 1).unwrap();
        assert_eq!(t.num_switches(), 64);
        assert_eq!(t.num_endpoints(), 512);
        assert_eq!(t.num_ports(SwitchId(0)), 48);
        // 64 switches × 2 dims × 10 trunk links + 512 endpoint links
        assert_eq!(t.links().len(), 64 * 2 * 10 + 512);
        assert!(t.is_connected());
    }

    #[test]
    fn mesh_has_no_wrap_links() {
        let t = torus_or_mesh(&[4, 3], 1, 1, 1, false).unwrap();
        // (3·3 + 4·2) switch links + 12 endpoint links
        assert_eq!(t.links().len(), 9 + 8 + 12);
        assert!(t.switch_peer(SwitchId(3), 0).is_none());
    }
}
