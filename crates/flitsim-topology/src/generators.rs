//! Topology generators. Each documents its port numbering in [`Shape`], which routing engines
//! rely on.
use crate::{Endpoint, Link, NodeId, PortNum, PortRef, Shape, Switch, Topology, TopologyError};
use rand::{seq::SliceRandom, Rng};
use rand_pcg::Pcg64;

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
    let dims = sides.len() as u32;
    let n: u32 = sides.iter().product();
    let ports = 2 * dims * trunk + endpoints_per_switch;
    if ports > PortNum::MAX as u32 {
        return Err(TopologyError::Parameters(format!(
            "{ports} ports per switch is too many"
        )));
    }
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
    let mut endpoints = Vec::new();
    for i in 0..n {
        for e in 0..endpoints_per_switch {
            let id = i * endpoints_per_switch + e;
            endpoints.push(Endpoint {
                name: format!("ep{id}"),
            });
            links.push(Link {
                a: ep(id),
                b: sw(i, 2 * dims * trunk + e),
                latency,
                width: 1,
            });
        }
    }
    let kind = if wrap { "torus" } else { "mesh" };
    let name = format!(
        "{kind}-{}",
        sides
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("x")
    );
    Topology::new(
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
    )
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

/// k-ary n-tree (Petrini & Vanneschi): `k^n` endpoints, `n` levels of `k^(n-1)` switches with
/// `2k` ports (roots use only their `k` down ports). Switch `⟨w, l⟩` at level `l` connects up to
/// `⟨w', l+1⟩` where `w'` equals `w` in every digit but digit `l`, which takes each value
/// `0..k` in turn; up port `k + j` of the lower switch meets down port `digit_l(w)` of the upper.
pub fn kary_ntree(k: u32, n: u32, latency: u32) -> Result<Topology, TopologyError> {
    if k < 2 || n < 1 {
        return Err(TopologyError::Parameters(
            "k-ary n-tree needs k >= 2 and n >= 1".into(),
        ));
    }
    let per_level = k
        .checked_pow(n - 1)
        .ok_or_else(|| TopologyError::Parameters("too large".into()))?;
    let endpoints_n = per_level * k;
    let ports = 2 * k;
    let mut switches = Vec::new();
    for l in 0..n {
        for w in 0..per_level {
            switches.push(Switch {
                name: format!("sw_l{l}_{w}"),
                ports: ports as PortNum,
            });
        }
    }
    let mut links = Vec::new();
    for l in 0..n.saturating_sub(1) {
        let pow_l = k.pow(l);
        for w in 0..per_level {
            let digit = (w / pow_l) % k;
            for j in 0..k {
                let w2 = w - digit * pow_l + j * pow_l;
                let lower = l * per_level + w;
                let upper = (l + 1) * per_level + w2;
                links.push(Link {
                    a: sw(lower, k + j),
                    b: sw(upper, digit),
                    latency,
                    width: 1,
                });
            }
        }
    }
    let mut endpoints = Vec::new();
    for e in 0..endpoints_n {
        endpoints.push(Endpoint {
            name: format!("ep{e}"),
        });
        links.push(Link {
            a: ep(e),
            b: sw(e / k, e % k),
            latency,
            width: 1,
        });
    }
    Topology::new(
        format!("{k}-ary-{n}-tree"),
        Shape::KaryNTree { k, n },
        switches,
        endpoints,
        links,
    )
}

/// Parameters of a random irregular network.
#[derive(Clone, Debug)]
pub struct RandomParams {
    /// Number of switches.
    pub switches: u32,
    /// Ports per switch.
    pub ports: u32,
    /// Endpoints per switch (on the lowest ports).
    pub endpoints_per_switch: u32,
    /// Inter-switch links (each uses one port on each side).
    pub links: u32,
    /// Allow more than one link between the same two switches.
    pub multi_links: bool,
    /// Link latency (cycles).
    pub latency: u32,
    /// Seed of the generator.
    pub seed: u64,
}

/// Random irregular network: a random spanning tree first (so it is always connected), then
/// random extra links between switches with free ports. Deterministic for a seed.
pub fn random(p: &RandomParams) -> Result<Topology, TopologyError> {
    let n = p.switches;
    let free_per = p
        .ports
        .checked_sub(p.endpoints_per_switch)
        .ok_or_else(|| TopologyError::Parameters("more endpoints per switch than ports".into()))?;
    if n == 0 {
        return Err(TopologyError::Parameters("need at least one switch".into()));
    }
    if n > 1 && (p.links < n - 1) {
        return Err(TopologyError::Parameters(format!(
            "{} links cannot connect {} switches (need at least {})",
            p.links,
            n,
            n - 1
        )));
    }
    if 2 * p.links as u64 > n as u64 * free_per as u64 {
        return Err(TopologyError::Parameters(format!(
            "{} links need {} switch ports but only {} are free",
            p.links,
            2 * p.links,
            n * free_per
        )));
    }
    // A spanning tree over more than two switches needs switches with two free ports.
    if (n == 2 && free_per < 1) || (n > 2 && free_per < 2) {
        return Err(TopologyError::Parameters(format!(
            "switches need at least {} free ports to be connected",
            if n == 2 { 1 } else { 2 }
        )));
    }
    if !p.multi_links && p.links as u64 > n as u64 * (n as u64 - 1) / 2 {
        return Err(TopologyError::Parameters(
            "more links than switch pairs".into(),
        ));
    }
    let mut rng = Pcg64::new(
        0xcafe_f00d_d15e_a5e5 ^ p.seed as u128,
        0x0a02_bdbf_7bb3_c0a7_ac28_fa16_a64a_bf96,
    );
    // Spanning tree: attach each switch (in random order) to a random earlier one with a free port.
    let mut free = vec![free_per; n as usize];
    let mut next_port = vec![p.endpoints_per_switch; n as usize];
    let mut adj = std::collections::HashSet::new();
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    let mut order: Vec<u32> = (0..n).collect();
    order.shuffle(&mut rng);
    for i in 1..order.len() {
        let s = order[i];
        let candidates: Vec<u32> = order[..i]
            .iter()
            .copied()
            .filter(|&t| free[t as usize] > 0)
            .collect();
        if candidates.is_empty() {
            return Err(TopologyError::Parameters(
                "not enough free ports to connect all switches".into(),
            ));
        }
        let t = candidates[rng.gen_range(0..candidates.len())];
        free[s as usize] -= 1;
        free[t as usize] -= 1;
        adj.insert((s.min(t), s.max(t)));
        pairs.push((s, t));
    }
    let mut attempts = 0u64;
    while (pairs.len() as u32) < p.links {
        attempts += 1;
        if attempts > 1_000_000 {
            return Err(TopologyError::Parameters(format!(
                "could not place {} links (placed {}); try fewer links or allow multi-links",
                p.links,
                pairs.len()
            )));
        }
        let open: Vec<u32> = (0..n).filter(|&s| free[s as usize] > 0).collect();
        if open.len() < 2 {
            return Err(TopologyError::Parameters("ran out of free ports".into()));
        }
        let s = open[rng.gen_range(0..open.len())];
        let t = open[rng.gen_range(0..open.len())];
        if s == t || (!p.multi_links && adj.contains(&(s.min(t), s.max(t)))) {
            continue;
        }
        free[s as usize] -= 1;
        free[t as usize] -= 1;
        adj.insert((s.min(t), s.max(t)));
        pairs.push((s, t));
    }
    let switches = (0..n)
        .map(|i| Switch {
            name: format!("sw{i}"),
            ports: p.ports as PortNum,
        })
        .collect();
    let mut links = Vec::new();
    let mut endpoints = Vec::new();
    for s in 0..n {
        for e in 0..p.endpoints_per_switch {
            let id = s * p.endpoints_per_switch + e;
            endpoints.push(Endpoint {
                name: format!("ep{id}"),
            });
            links.push(Link {
                a: ep(id),
                b: sw(s, e),
                latency: p.latency,
                width: 1,
            });
        }
    }
    for (s, t) in pairs {
        let ps = next_port[s as usize];
        next_port[s as usize] += 1;
        let pt = next_port[t as usize];
        next_port[t as usize] += 1;
        links.push(Link {
            a: sw(s, ps),
            b: sw(t, pt),
            latency: p.latency,
            width: 1,
        });
    }
    Topology::new(
        format!("random-{}sw-{}l-s{}", n, p.links, p.seed),
        Shape::Irregular,
        switches,
        endpoints,
        links,
    )
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

    #[test]
    fn kary_ntree_is_connected_and_regular() {
        let t = kary_ntree(4, 3, 1).unwrap();
        assert_eq!(t.num_switches(), 48);
        assert_eq!(t.num_endpoints(), 64);
        assert!(t.is_connected());
        // Every non-root switch uses all 2k ports; roots only k.
        for s in 0..48u32 {
            let used = (0..8)
                .filter(|&p| t.switch_peer(SwitchId(s), p).is_some())
                .count();
            assert_eq!(used, if s >= 32 { 4 } else { 8 }, "switch {s}");
        }
    }

    #[test]
    fn random_is_connected_deterministic_and_simple() {
        let p = RandomParams {
            switches: 32,
            ports: 8,
            endpoints_per_switch: 4,
            links: 48,
            multi_links: false,
            latency: 1,
            seed: 7,
        };
        let a = random(&p).unwrap();
        let b = random(&p).unwrap();
        assert_eq!(a.links(), b.links());
        assert!(a.is_connected());
        let mut seen = std::collections::HashSet::new();
        for l in a.links() {
            if let (NodeId::Switch(x), NodeId::Switch(y)) = (l.a.node, l.b.node) {
                assert!(seen.insert((x.min(y), x.max(y))), "duplicate link {x}-{y}");
            }
        }
        assert_eq!(seen.len(), 48);
        let c = random(&RandomParams { seed: 8, ..p }).unwrap();
        assert_ne!(a.links(), c.links());
    }

    #[test]
    fn random_rejects_impossible_requests() {
        let p = RandomParams {
            switches: 4,
            ports: 4,
            endpoints_per_switch: 2,
            links: 10,
            multi_links: false,
            latency: 1,
            seed: 1,
        };
        assert!(random(&p).is_err());
    }
}
