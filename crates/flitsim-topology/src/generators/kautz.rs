//! Kautz networks: [`kautz`], with the node numbering of [`kautz_symbols`] and
//! [`kautz_index`].
use super::{attach_endpoints, check_size, finish, param_err, sw, EndpointPlacement};
use crate::{Link, PortNum, Shape, Switch, Topology, TopologyError};

/// The symbols of Kautz node `i` of K(b, n): `n + 1` symbols over `0..=b`, no two equal
/// neighbours. Node index: first symbol · bⁿ + the base-`b` number of the offsets
/// `(s_j − s_{j−1} − 1) mod (b+1)`, most significant first.
pub fn kautz_symbols(b: u32, n: u32, i: u32) -> Vec<u32> {
    let bn = b.pow(n);
    let mut syms = vec![i / bn];
    let mut rest = i % bn;
    let mut place = bn;
    for _ in 0..n {
        place /= b;
        let d = rest / place;
        rest %= place;
        let prev = *syms.last().expect("non-empty");
        syms.push((prev + 1 + d) % (b + 1));
    }
    syms
}

/// Index of the Kautz node with `syms` (inverse of [`kautz_symbols`]).
pub fn kautz_index(b: u32, syms: &[u32]) -> u32 {
    let mut i = syms[0];
    for j in 1..syms.len() {
        let d = (syms[j] + (b + 1) - syms[j - 1] - 1) % (b + 1);
        i = i * b + d;
    }
    i
}

/// Switches wired as the Kautz digraph K(b, n) (W. H. Kautz 1968; D. Li, X. Lu and J. Su,
/// "Graph-theoretic analysis of Kautz topology and DHT schemes", NPC 2004 — the Kautz networks
/// of Domke, Hoefler and Nagel, IPDPS 2011, Fig. 6 and Table I) with endpoints attached.
///
/// K(b, n) has `(b+1)·bⁿ` nodes, the strings `s_0 … s_n` over `b+1` symbols with no two equal
/// consecutive symbols (numbered as in [`kautz_symbols`]), and an arc from `s_0 s_1 … s_n` to
/// `s_1 … s_n x` for each `x ≠ s_n`. Links are bidirectional, so each arc becomes a link and
/// the two arcs of a 2-cycle (`xyxy…` ↔ `yxyx…`) become **one** link; there are no loops.
///
/// Ports: switch `i` has its endpoints on ports `0..e_i`, then its links on ports `e_i, e_i+1, …`
/// in order of increasing neighbour index; every switch has `max_e + 2b` ports (unused ports
/// stay unconnected). Endpoints are numbered switch by switch. Shape: [`Shape::Irregular`].
pub fn kautz(
    b: u32,
    n: u32,
    endpoints: EndpointPlacement,
    latency: u32,
) -> Result<Topology, TopologyError> {
    if b < 2 || n < 1 {
        return Err(param_err("kautz: needs b >= 2 and n >= 1"));
    }
    if latency == 0 {
        return Err(param_err("kautz: latency must be at least 1"));
    }
    let nodes = b
        .checked_pow(n)
        .and_then(|x| x.checked_mul(b.checked_add(1)?))
        .filter(|&x| u64::from(x) <= crate::MAX_SWITCHES)
        .ok_or_else(|| {
            param_err(format!(
                "kautz: (b+1)·b^n switches is more than the limit of {}",
                crate::MAX_SWITCHES
            ))
        })?;
    let (endpoints64, max_e) = match endpoints {
        EndpointPlacement::PerSwitch(e) => (u64::from(nodes) * u64::from(e), u64::from(e)),
        EndpointPlacement::Total(t) => (u64::from(t), u64::from(t.div_ceil(nodes))),
    };
    let ports = max_e + 2 * u64::from(b);
    if ports > PortNum::MAX as u64 {
        return Err(param_err(format!(
            "kautz: {ports} ports per switch is too many (at most {})",
            PortNum::MAX
        )));
    }
    check_size(
        "kautz",
        u64::from(nodes),
        endpoints64,
        u64::from(nodes) * ports,
    )?;
    let eps = endpoints.counts(nodes);
    let max_e = eps.iter().copied().max().unwrap_or(0);
    let mut adj: Vec<std::collections::BTreeSet<u32>> = vec![Default::default(); nodes as usize];
    for u in 0..nodes {
        let s = kautz_symbols(b, n, u);
        for x in 0..=b {
            if x == s[n as usize] {
                continue;
            }
            let mut t = s[1..].to_vec();
            t.push(x);
            let v = kautz_index(b, &t);
            adj[u as usize].insert(v);
            adj[v as usize].insert(u);
        }
    }
    let ports = (max_e + 2 * b) as PortNum;
    let switches = (0..nodes)
        .map(|i| Switch {
            name: format!(
                "k{}",
                kautz_symbols(b, n, i)
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(".")
            ),
            ports,
            ..Switch::default()
        })
        .collect();
    let (endpoint_list, mut links) = attach_endpoints(eps.iter().copied(), 0, latency);
    let port_of = |u: u32, v: u32| {
        eps[u as usize]
            + adj[u as usize]
                .iter()
                .position(|&x| x == v)
                .expect("adjacent") as u32
    };
    for u in 0..nodes {
        for &v in adj[u as usize].range(u + 1..) {
            links.push(Link {
                a: sw(u, port_of(u, v)),
                b: sw(v, port_of(v, u)),
                latency,
                width: 1,
            });
        }
    }
    let name = match endpoints {
        EndpointPlacement::PerSwitch(e) => format!("kautz-{b}-{n}-{e}eps"),
        EndpointPlacement::Total(t) => format!("kautz-{b}-{n}-{t}ep"),
    };
    finish(Topology::new(
        name,
        Shape::Irregular,
        switches,
        endpoint_list,
        links,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::from_spec;

    #[test]
    fn kautz_symbols_roundtrip_and_link_counts() {
        for (b, n) in [(2u32, 1u32), (2, 2), (3, 3), (4, 2)] {
            let nodes = (b + 1) * b.pow(n);
            let mut seen = std::collections::HashSet::new();
            for i in 0..nodes {
                let s = kautz_symbols(b, n, i);
                assert_eq!(s.len(), n as usize + 1);
                assert!(s.windows(2).all(|w| w[0] != w[1] && w[1] <= b));
                assert_eq!(kautz_index(b, &s), i);
                assert!(seen.insert(s));
            }
            let t = kautz(b, n, EndpointPlacement::PerSwitch(2), 1).unwrap();
            // (b+1)·b^(n+1) arcs, minus one per 2-cycle ((b+1)·b/2 of them).
            let sw_links = (b + 1) * b.pow(n + 1) - (b + 1) * b / 2;
            assert_eq!(t.links().len() as u32, sw_links + 2 * nodes, "K({b},{n})");
            assert_eq!(t.num_switches() as u32, nodes);
            assert!(t.is_connected());
        }
        // K(2,1) by hand: 01,02,10,12,20,21; 12 arcs, 3 two-cycles, 9 links.
        let t = kautz(2, 1, EndpointPlacement::PerSwitch(0), 1).unwrap();
        assert_eq!(t.links().len(), 9);
        assert_eq!(t.switches()[0].name, "k0.1");
    }

    #[test]
    fn kautz_switch_graph_has_diameter_at_most_n_plus_1() {
        // The Kautz digraph on strings of length n + 1 has diameter n + 1 (Li, Lu, Su 2004).
        let t = from_spec("kautz:b=3,n=2,endpoints=1").unwrap();
        let n = t.num_switches();
        let mut bfs = crate::Bfs::default();
        for s in 0..n {
            let dist = bfs.switches(&t, [s as u32]);
            assert!(dist.iter().all(|&d| d <= 3), "switch {s}: {dist:?}");
        }
    }
}
