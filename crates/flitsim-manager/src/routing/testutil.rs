//! Helpers shared by the routing engines' unit tests.
use crate::{FabricConfig, Hop};
use flitsim_topology::{generators, EndpointId, Topology};

/// Traces every (src, dst) pair of distinct endpoints for `class`; panics naming the pair if a
/// path fails.
pub fn all_paths(topo: &Topology, fabric: &FabricConfig, class: u8) -> Vec<(u32, u32, Vec<Hop>)> {
    let n = topo.num_endpoints() as u32;
    let mut out = Vec::new();
    for src in 0..n {
        for dst in (0..n).filter(|&d| d != src) {
            let path = fabric
                .trace(topo, EndpointId(src), EndpointId(dst), class)
                .unwrap_or_else(|e| panic!("{src} -> {dst} class {class}: {e}"));
            out.push((src, dst, path));
        }
    }
    out
}

/// Switch-to-switch hops of a traced path (it lists every switch traversed).
pub fn switch_hops(path: &[Hop]) -> u32 {
    path.len() as u32 - 1
}

/// Minimal hop distance between switches `a` and `b` of a torus (`wrap`) or mesh.
pub fn torus_distance(sides: &[u32], wrap: bool, a: u32, b: u32) -> u32 {
    let (ca, cb) = (generators::coords(sides, a), generators::coords(sides, b));
    sides
        .iter()
        .zip(ca.iter().zip(&cb))
        .map(|(&k, (&x, &y))| {
            let d = x.abs_diff(y);
            if wrap {
                d.min(k - d)
            } else {
                d
            }
        })
        .sum()
}

/// Two switches with one endpoint each and no link between them: a disconnected fabric.
pub fn two_islands() -> Topology {
    use flitsim_topology::{Endpoint, Link, NodeId, PortRef, Shape, Switch};
    let sw = |i: u32, p: u16| PortRef {
        node: NodeId::Switch(i),
        port: p,
    };
    let ep = |i: u32| PortRef {
        node: NodeId::Endpoint(i),
        port: 0,
    };
    Topology::new(
        "split",
        Shape::Irregular,
        (0..2)
            .map(|i| Switch {
                name: format!("s{i}"),
                ports: 2,
                ..Switch::default()
            })
            .collect(),
        (0..2)
            .map(|i| Endpoint {
                name: format!("e{i}"),
                ..Endpoint::default()
            })
            .collect(),
        (0..2)
            .map(|i| Link {
                a: ep(i),
                b: sw(i, 0),
                latency: 1,
                width: 1,
            })
            .collect(),
    )
    .unwrap()
}
