//! Min-hop routing for arbitrary topologies.
use super::layered::{disconnected, SwitchGraph};
use super::multipath::{with_alt_paths, MinHopSteps};
use super::tables::single_layer_fabric;
use super::{RoutingEngine, RoutingRequest, VlBlocks};
use crate::{FabricConfig, RoutingError, NO_ROUTE};
use flitsim_topology::{Bfs, EndpointId, Topology};

/// Shortest-path routing with port balancing for any connected topology, like OpenSM's
/// `minhop` engine.
///
/// For each destination endpoint (in id order) a breadth-first search from the destination's
/// switch gives every switch its hop distance. Each switch then forwards the destination
/// through one of its ports that leads to a neighbour one hop closer, choosing the port that
/// has the fewest destinations assigned so far (ties go to the lowest port number). The result
/// is deterministic, minimal, and spreads destinations over equivalent ports; parallel links
/// between two switches are separate ports and share the load like any others.
///
/// **Not deadlock-free in general.** Every packet uses VL `base` of its class's block
/// ([`VlBlocks`]), `routing_sls = 1`, and nothing restricts the turns paths make, so the
/// channel dependency graph has cycles on most topologies with loops (every torus, most
/// random networks). Run [`crate::cdg::verify`] before trusting the tables; trees and other
/// loop-free switch graphs are always safe.
///
/// Fails with [`RoutingError::Unroutable`] if a switch with endpoints cannot reach another
/// such switch. Switches without endpoints that are cut off get [`NO_ROUTE`] entries.
#[derive(Clone, Copy, Debug, Default)]
pub struct MinHopEngine;

impl RoutingEngine for MinHopEngine {
    fn name(&self) -> &'static str {
        "minhop"
    }

    // The endpoint id indexes the inner dimension of every switch's LFT row, not one slice.
    #[allow(clippy::needless_range_loop)]
    fn route(&self, topo: &Topology, req: &RoutingRequest) -> Result<FabricConfig, RoutingError> {
        // Refuse a bad request before routing (the tables below check it again).
        VlBlocks::new(req, 1, "minhop")?;
        let g = SwitchGraph::new(topo);
        let n_sw = g.len();
        let n_ep = topo.num_endpoints();
        // Destinations assigned so far to each switch port, indexed by channel.
        let mut load = vec![0u64; g.channels];
        let mut lft = vec![vec![NO_ROUTE; n_ep]; n_sw];

        let mut bfs = Bfs::default();
        let mut dist_from = None;
        for e in 0..n_ep {
            flitsim_topology::cancel::check()?;
            let (t, eport) = topo.endpoint_switch(EndpointId(e as u32));
            if dist_from != Some(t) {
                g.distances(&mut bfs, [t.0]);
                dist_from = Some(t);
            }
            let dist = bfs.distances();
            lft[t.0 as usize][e] = eport;
            g.min_hop_towards(t.0, dist, &mut load, 1, |s, port| lft[s][e] = port)
                .map_err(|s| disconnected(self.name(), topo, s, t.0))?;
        }

        single_layer_fabric(self.name(), topo, req, lft)
    }

    /// Further paths over other min-hop ports (see the `multipath` module).
    fn route_paths(
        &self,
        topo: &Topology,
        req: &RoutingRequest,
        paths: usize,
    ) -> Result<FabricConfig, RoutingError> {
        let f = self.route(topo, req)?;
        if paths <= 1 {
            return Ok(f);
        }
        let g = SwitchGraph::new(topo);
        with_alt_paths(f, topo, &g, paths, &mut MinHopSteps::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdg::{self, Channel};
    use crate::routing::testutil::{all_paths, switch_hops, torus_distance};
    use flitsim_topology::{generators, NodeId, SwitchId};

    fn req(vls: u8, classes: u8) -> RoutingRequest {
        RoutingRequest { vls, classes }
    }

    #[test]
    fn tori_with_one_vl_have_a_real_dependency_cycle() {
        for sides in [[4u32, 4], [8, 8]] {
            let topo = generators::torus(&sides, 1, 1, 1).unwrap();
            let fabric = MinHopEngine.route(&topo, &req(1, 1)).unwrap();
            for (src, dst, path) in all_paths(&topo, &fabric, 0) {
                let (a, b) = (
                    topo.endpoint_switch(EndpointId(src)).0 .0,
                    topo.endpoint_switch(EndpointId(dst)).0 .0,
                );
                assert_eq!(switch_hops(&path), torus_distance(&sides, true, a, b));
            }
            let graph = cdg::build_cdg(&topo, &fabric).unwrap();
            let report = graph.report();
            assert!(!report.deadlock_free);
            assert!(!report.per_vl[0].acyclic);
            let cycle = report.cycle.expect("a cycle is reported");
            assert!(cycle.len() >= 2, "{cycle:?}");
            let unique: std::collections::BTreeSet<Channel> = cycle.iter().copied().collect();
            assert_eq!(
                unique.len(),
                cycle.len(),
                "the cycle repeats a channel: {cycle:?}"
            );
            for (i, c) in cycle.iter().enumerate() {
                let next = cycle[(i + 1) % cycle.len()];
                // The channel is a switch-to-switch link, and the next one starts where it ends.
                let peer = topo
                    .switch_peer(c.switch, c.port)
                    .expect("channel is a connected port");
                assert_eq!(
                    peer.remote.node,
                    NodeId::Switch(next.switch.0),
                    "{c:?} -> {next:?}"
                );
                assert!(
                    graph.has_dependency(*c, next),
                    "{c:?} -> {next:?} is not a CDG edge"
                );
            }
        }
    }

    #[test]
    fn paths_are_minimal_and_parallel_links_share_the_load() {
        let topo = generators::torus(&[4, 4], 2, 2, 1).unwrap();
        let fabric = MinHopEngine.route(&topo, &req(2, 2)).unwrap();
        fabric.check_shape(&topo).unwrap();
        for class in 0..2 {
            for (src, dst, path) in all_paths(&topo, &fabric, class) {
                let (a, b) = (
                    topo.endpoint_switch(EndpointId(src)).0 .0,
                    topo.endpoint_switch(EndpointId(dst)).0 .0,
                );
                assert_eq!(switch_hops(&path), torus_distance(&[4, 4], true, a, b));
                assert!(
                    path.iter().all(|h| h.vl == class),
                    "class {class} stays on VL {class}"
                );
            }
        }
        // Both trunk ports of every direction carry destinations.
        for row in &fabric.lft {
            for port in 0..8 {
                assert!(row.contains(&port), "port {port} unused");
            }
        }
    }

    #[test]
    fn balancing_spreads_equivalent_ports_evenly() {
        let topo = generators::kary_ntree(4, 2, 1).unwrap();
        let fabric = MinHopEngine.route(&topo, &req(1, 1)).unwrap();
        for leaf in 0..4 {
            let mut up = [0; 4];
            for &p in fabric.lft[leaf].iter().filter(|&&p| p >= 4) {
                up[p as usize - 4] += 1;
            }
            assert_eq!(up, [3, 3, 3, 3], "leaf {leaf}");
        }
        // Minimal paths on a fat tree are up/down paths: deadlock-free even with one VL.
        assert!(cdg::verify(&topo, &fabric).unwrap().deadlock_free);
    }

    #[test]
    fn random_networks_get_minimal_paths() {
        let p = generators::RandomParams {
            switches: 12,
            ports: 6,
            endpoints_per_switch: 2,
            links: 20,
            multi_links: true,
            latency: 1,
            seed: 11,
        };
        let topo = generators::random(&p).unwrap();
        let fabric = MinHopEngine.route(&topo, &req(1, 1)).unwrap();
        let n = topo.num_switches();
        for (src, dst, path) in all_paths(&topo, &fabric, 0) {
            let (a, b) = (
                topo.endpoint_switch(EndpointId(src)).0,
                topo.endpoint_switch(EndpointId(dst)).0,
            );
            // Independent distance, by Bellman–Ford relaxation rather than BFS.
            let mut d = vec![u32::MAX; n];
            d[a.0 as usize] = 0;
            for _ in 0..n {
                for s in 0..n as u32 {
                    for (_, t, _) in topo.switch_neighbours(SwitchId(s)) {
                        if d[s as usize] != u32::MAX {
                            d[t.0 as usize] = d[t.0 as usize].min(d[s as usize] + 1);
                        }
                    }
                }
            }
            assert_eq!(switch_hops(&path), d[b.0 as usize], "{src} -> {dst}");
        }
    }

    #[test]
    fn disconnected_topologies_are_unroutable() {
        let topo = crate::routing::testutil::two_islands();
        let err = MinHopEngine.route(&topo, &req(1, 1)).unwrap_err();
        assert!(err.to_string().contains("disconnected"), "{err}");
    }
}
