//! Dimension-order routing (DOR) for tori and meshes with dateline VLs.
use super::rule::{fabric_from_rule, DorRule, ForwardingRule};
use super::tables::{assemble_per_switch, PathSls};
use super::{fit_lanes, shape_name, RoutingEngine, RoutingRequest, VlBlocks};
use crate::{FabricConfig, RoutingError};
use flitsim_topology::{detect_torus, generators, PortNum, Shape, SwitchId, Topology, TorusLayout};

/// Dimension-order routing for [`Shape::Torus`] topologies, wrapped (torus) or not (mesh).
///
/// **Topologies from files** (shape [`Shape::Irregular`]) are routed when their links form a
/// torus or mesh: [`detect_torus`] finds the dimensions and the coordinates of every switch
/// (for a torus flitsim generated and exported, the generator's), and a hop goes out by the
/// ports that lead to the next switch, the `(e mod trunk)`-th of them in port order for
/// destination `e` — on a generated torus the same ports as its port convention gives, so
/// the tables are the same. Anything else is refused with the reason the detection gives.
///
/// **Paths.** A packet corrects dimension 0 first, then dimension 1, and so on. In each
/// dimension it takes the shorter way round; when both ways are equally long (distance exactly
/// `k/2`) it goes "+". Meshes, and torus dimensions of side 2 (which have a single link), go
/// straight towards the destination coordinate. With `trunk > 1` parallel links between
/// neighbours, destination endpoint `e` uses trunk `e mod trunk`, so destinations are spread
/// evenly and deterministically over the parallel ports. At the destination switch the LFT
/// names the endpoint's port. Every path is minimal.
///
/// **Deadlock freedom** (Dally & Seitz 1987, "Deadlock-free message routing in multiprocessor
/// interconnection networks": virtual channels and a dateline per ring). Meshes need nothing
/// more: dimension order alone makes the channel dependency graph acyclic. On a torus each
/// ring needs two VLs. Bit `d` of the path SL records whether the minimal DOR path from the
/// source to the destination switch crosses the wrap-around link of dimension `d` (the link
/// between coordinates `k-1` and `0`); every hop in dimension `d` uses VL `base + 2·lane + bit d`.
/// - VL "0" of a ring carries only paths that never use its wrap link, so its dependency chain
///   is broken at the wrap link and cannot close into a cycle.
/// - VL "1" carries only minimal paths that contain the wrap link. Such a path is an arc of at
///   most `k/2` links that contains the wrap link, and no such arc contains the two links
///   diametrically opposite the wrap link one after the other, so the dependency between them
///   never exists and VL "1" is acyclic as well.
/// - A path keeps its bit for a dimension for all its hops in that dimension, and dimension
///   order creates dependencies only from a lower to a higher dimension, so no cycle can span
///   dimensions or VLs either.
///
/// Parallel trunk links do not change the argument: project each channel onto its ring link.
///
/// **VLs and SLs.** A torus needs 2 VLs per traffic class, a mesh 1 (see [`VlBlocks`]). Spare
/// VLs in a class's block are used as independent *lanes* (copies of the scheme) to spread
/// load: `lanes = per_class / 2` on a torus, `per_class` on a mesh, and the lane of a path is
/// `(src + dst) mod lanes` (endpoint ids). The path SL is `lane · 2^dims + crossing bits` on a
/// torus (`routing_sls = 2^dims · lanes`) and `lane` on a mesh (`routing_sls = lanes`); lanes
/// are added only while all wire SLs fit InfiniBand's 16 (so a 3D torus on 8 VLs uses 2
/// lanes, 16 SLs), and when one lane alone needs more, one lane is used (see `fit_lanes`). The VL of a hop depends only on
/// the output port's dimension and the wire SL, so every switch gets the same SL→VL table.
/// Output ports to endpoints, and the NICs' injection links, use VL `base + 2·lane` (torus) or
/// `base + lane` (mesh): ejection and injection links cannot be part of a dependency cycle.
#[derive(Clone, Copy, Debug, Default)]
pub struct DorEngine;

/// Direction DOR takes in a dimension of side `k` from coordinate `from` to `to` (they
/// differ): `(plus, crosses_wrap)`. `wraps` says whether the dimension is a ring.
pub(super) fn direction(k: u32, wraps: bool, from: u32, to: u32) -> (bool, bool) {
    if !wraps {
        return (to > from, false);
    }
    let forward = (to + k - from) % k;
    let plus = 2 * forward <= k;
    // Going "+" passes k-1 → 0 exactly when the target lies "behind" us, and vice versa.
    let crosses = if plus { to < from } else { to > from };
    (plus, crosses)
}

impl RoutingEngine for DorEngine {
    fn name(&self) -> &'static str {
        "dor"
    }

    fn route(&self, topo: &Topology, req: &RoutingRequest) -> Result<FabricConfig, RoutingError> {
        self.build(topo, req, false)
    }

    /// DOR has one path per endpoint pair: every LID of a port gets that path (as OpenSM's
    /// engines without multipath route the LIDs of an LMC > 0 port).
    fn route_paths(
        &self,
        topo: &Topology,
        req: &RoutingRequest,
        paths: usize,
    ) -> Result<FabricConfig, RoutingError> {
        let mut f = self.route(topo, req)?;
        f.alt_paths = super::multipath::same_paths(&f.lft, &f.path_sl, paths);
        Ok(f)
    }
}

impl DorEngine {
    /// The tables of `topo` (`computed`: the rule, [`FabricConfig::rule`], instead of
    /// forwarding and path SL tables).
    pub(super) fn build(
        &self,
        topo: &Topology,
        req: &RoutingRequest,
        computed: bool,
    ) -> Result<FabricConfig, RoutingError> {
        // The layout: the generator's (switch i at position i, ports by the Shape::Torus
        // convention), or one detected from the links of a topology read from a file.
        let detected = match topo.shape() {
            Shape::Torus { .. } => None,
            Shape::Irregular => Some(detect_torus(topo).map_err(|reason| {
                RoutingError::Unroutable(format!(
                    "dor routes tori and meshes only, and topology '{}' is not one: {reason}",
                    topo.name()
                ))
            })?),
            other => {
                return Err(RoutingError::Unroutable(format!(
                    "dor routes tori and meshes only (Shape::Torus), but topology '{}' is {}",
                    topo.name(),
                    shape_name(other)
                )))
            }
        };
        let shape = detected
            .as_ref()
            .map_or_else(|| topo.shape().clone(), TorusLayout::shape);
        let Shape::Torus {
            sides, wrap, trunk, ..
        } = &shape
        else {
            unreachable!("a torus shape");
        };
        let (wrap, trunk) = (*wrap, *trunk);
        let dims = sides.len();
        let switches: u64 = sides.iter().map(|&k| k as u64).product();
        if dims == 0
            || trunk == 0
            || sides.iter().any(|&k| k < 2)
            || switches != topo.num_switches() as u64
        {
            return Err(RoutingError::Unroutable(format!(
                "dor: the torus shape of '{}' (sides {sides:?}, trunk {trunk}) does not describe its {} switches",
                topo.name(),
                topo.num_switches()
            )));
        }
        if wrap && dims > 7 {
            return Err(RoutingError::Unroutable(format!(
                "dor: a {dims}-dimensional torus needs 2^{dims} path SLs, more than an SL field holds"
            )));
        }
        let needed: u8 = if wrap { 2 } else { 1 };
        let blocks = VlBlocks::new(req, needed, "dor")?;
        let sls_per_lane: u32 = if wrap { 1 << dims } else { 1 };
        let lanes = fit_lanes(blocks.per_class / needed, sls_per_lane, req.classes, "dor")?;
        let routing_sls = (lanes as u32 * sls_per_lane) as u8;

        let rule = DorRule::new(
            topo,
            sides,
            wrap,
            trunk,
            detected.as_ref(),
            lanes,
            sls_per_lane,
        );
        let rule = ForwardingRule::Dor(rule);
        rule.check(topo, "dor")?;
        // Dimension of each port of the detected layouts (u8::MAX: not a switch-to-switch
        // port); generated ones follow the port convention.
        let port_dim: Vec<Vec<u8>> = match &detected {
            None => Vec::new(),
            Some(l) => (0..topo.num_switches() as u32)
                .map(|s| {
                    let mut dim_of = vec![u8::MAX; topo.num_ports(SwitchId(s)) as usize];
                    let a = generators::coords(sides, l.position[s as usize]);
                    for (p, t, _) in topo.switch_neighbours(SwitchId(s)) {
                        let b = generators::coords(sides, l.position[t.0 as usize]);
                        dim_of[p as usize] = (0..dims).find(|&d| a[d] != b[d]).unwrap_or(0) as u8;
                    }
                    dim_of
                })
                .collect(),
        };
        let dim_ports = 2 * dims as u32 * trunk;
        // Dimension of output port `out` of switch `s`, if it leads to a switch.
        let dim_of = |s: SwitchId, out: PortNum| -> Option<u32> {
            if detected.is_some() {
                let d = port_dim[s.0 as usize][out as usize];
                (d != u8::MAX).then_some(d as u32)
            } else {
                ((out as u32) < dim_ports).then(|| out as u32 / (2 * trunk))
            }
        };
        // First VL of a wire SL's lane, and the crossing bits the SL carries.
        let lane_vl = |sl: u8| {
            let (class, psl) = (sl / routing_sls, (sl % routing_sls) as u32);
            let vl = blocks.base(class) as u32 + needed as u32 * (psl / sls_per_lane);
            (vl, psl % sls_per_lane)
        };
        let hop_vl = |s: SwitchId, out: PortNum, sl: u8| {
            let (vl, bits) = lane_vl(sl);
            let crossing = match dim_of(s, out) {
                Some(d) if wrap => (bits >> d) & 1,
                _ => 0,
            };
            (vl + crossing) as u8
        };
        Ok(fabric_from_rule(
            rule,
            routing_sls,
            computed,
            |lft, path_sl| {
                let sls = PathSls {
                    routing_sls,
                    layers: needed,
                    path_sl,
                };
                assemble_per_switch(self.name(), topo, req, lft, sls, hop_vl, |sl| {
                    lane_vl(sl).0 as u8
                })
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdg;
    use crate::routing::testutil::{all_paths, switch_hops, torus_distance};
    use flitsim_topology::{EndpointId, NodeId};

    fn req(vls: u8, classes: u8) -> RoutingRequest {
        RoutingRequest { vls, classes }
    }

    /// Every pair is routed along a minimal path and the CDG is acyclic.
    fn assert_minimal_and_deadlock_free(topo: &Topology, fabric: &FabricConfig) {
        let Shape::Torus { sides, wrap, .. } = topo.shape() else {
            unreachable!()
        };
        for class in 0..fabric.classes {
            for (src, dst, path) in all_paths(topo, fabric, class) {
                let a = topo.endpoint_switch(EndpointId(src)).0 .0;
                let b = topo.endpoint_switch(EndpointId(dst)).0 .0;
                assert_eq!(
                    switch_hops(&path),
                    torus_distance(sides, *wrap, a, b),
                    "{src} -> {dst}"
                );
            }
        }
        let report = cdg::verify(topo, fabric).unwrap();
        assert!(report.deadlock_free, "{:?}", report.cycle);
        assert!(report.per_vl.iter().all(|v| v.acyclic));
        assert!(report.cycle.is_none());
    }

    #[test]
    fn tori_4x4_and_8x8_with_two_vls_are_minimal_and_deadlock_free() {
        for sides in [[4u32, 4], [8, 8]] {
            let topo = generators::torus(&sides, 1, 1, 1).unwrap();
            let fabric = DorEngine.route(&topo, &req(2, 1)).unwrap();
            fabric.check_shape(&topo).unwrap();
            assert_eq!(fabric.routing_sls, 4);
            assert_minimal_and_deadlock_free(&topo, &fabric);
            // Both VLs are really used: the dateline is doing its job.
            let report = cdg::verify(&topo, &fabric).unwrap();
            assert!(report
                .per_vl
                .iter()
                .all(|v| v.channels > 0 && v.dependencies > 0));
        }
    }

    #[test]
    fn other_tori_and_meshes_are_minimal_and_deadlock_free() {
        let cases: &[(&[u32], bool)] = &[
            (&[5], true),
            (&[6], true),
            (&[3, 3, 3], true),
            (&[2, 4], true),
            (&[2, 2, 3], true),
            (&[5, 3], false),
            (&[2, 3, 4], false),
        ];
        for &(sides, wrap) in cases {
            let topo = generators::torus_or_mesh(sides, 2, 1, 1, wrap).unwrap();
            let fabric = DorEngine.route(&topo, &req(2, 1)).unwrap();
            assert_minimal_and_deadlock_free(&topo, &fabric);
        }
    }

    #[test]
    fn one_vl_is_not_enough_on_a_torus() {
        let topo = generators::torus(&[4, 4], 1, 1, 1).unwrap();
        let err = DorEngine.route(&topo, &req(1, 1)).unwrap_err();
        assert!(matches!(err, RoutingError::NotEnoughVls(_)), "{err}");
        assert!(
            err.to_string().contains("dor needs at least 2 VLs"),
            "{err}"
        );
    }

    #[test]
    fn mesh_4x4_with_one_vl_is_deadlock_free() {
        let topo = generators::torus_or_mesh(&[4, 4], 1, 1, 1, false).unwrap();
        let fabric = DorEngine.route(&topo, &req(1, 1)).unwrap();
        assert_eq!(fabric.routing_sls, 1);
        assert!(fabric.path_sl.is_empty());
        assert_minimal_and_deadlock_free(&topo, &fabric);
    }

    #[test]
    fn dimension_zero_first_and_ties_go_plus() {
        let topo = generators::torus(&[4, 4], 1, 1, 1).unwrap();
        let fabric = DorEngine.route(&topo, &req(2, 1)).unwrap();
        // (0,0) → (2,2): both distances are k/2, so "+" twice in dim 0, then "+" twice in dim 1.
        let dst = generators::index(&[4, 4], &[2, 2]);
        let path = fabric
            .trace(&topo, EndpointId(0), EndpointId(dst), 0)
            .unwrap();
        let ports: Vec<PortNum> = path.iter().map(|h| h.out_port).collect();
        assert_eq!(ports, [0, 0, 2, 2, 4]);
        // (1,0) → (0,3): "−" in dim 0 without crossing, then "−" in dim 1 across the wrap link.
        let (src, dst) = (
            generators::index(&[4, 4], &[1, 0]),
            generators::index(&[4, 4], &[0, 3]),
        );
        let path = fabric
            .trace(&topo, EndpointId(src), EndpointId(dst), 0)
            .unwrap();
        let hops: Vec<(PortNum, u8)> = path.iter().map(|h| (h.out_port, h.vl)).collect();
        assert_eq!(hops, [(1, 0), (3, 1), (4, 0)]);
    }

    #[test]
    fn the_dateline_bit_selects_the_vl_per_dimension() {
        let sides = [8u32, 8];
        let topo = generators::torus(&sides, 1, 1, 1).unwrap();
        let fabric = DorEngine.route(&topo, &req(2, 1)).unwrap();
        let vls_of = |a: [u32; 2], b: [u32; 2]| -> Vec<u8> {
            let (s, d) = (generators::index(&sides, &a), generators::index(&sides, &b));
            let path = fabric
                .trace(&topo, EndpointId(s), EndpointId(d), 0)
                .unwrap();
            path[..path.len() - 1].iter().map(|h| h.vl).collect()
        };
        // Dim 0 crosses 7 → 0, dim 1 does not.
        assert_eq!(vls_of([6, 1], [1, 3]), [1, 1, 1, 0, 0]);
        // Dim 0 does not cross, dim 1 crosses 0 → 7 going "−".
        assert_eq!(vls_of([1, 1], [3, 7]), [0, 0, 1, 1]);
        // A tie (distance 4) goes "+" and crosses iff it passes 7 → 0.
        assert_eq!(vls_of([5, 0], [1, 0]), [1, 1, 1, 1]);
        assert_eq!(vls_of([1, 0], [5, 0]), [0, 0, 0, 0]);
    }

    #[test]
    fn trunks_spread_destinations_over_parallel_ports() {
        let topo = generators::torus(&[4, 4], 2, 3, 1).unwrap();
        let fabric = DorEngine.route(&topo, &req(2, 1)).unwrap();
        // Switch 0 sends destinations on switch (1,0) (endpoints 2 and 3) and (2,0) (4, 5) "+"
        // in dimension 0, over trunk ports 0..3 chosen by the endpoint id.
        for e in 2..6u32 {
            assert_eq!(fabric.lft[0][e as usize], (e % 3) as PortNum);
        }
        assert_minimal_and_deadlock_free(&topo, &fabric);
    }

    #[test]
    fn lanes_and_classes_use_separate_vl_blocks() {
        let topo = generators::torus(&[4, 4], 1, 1, 1).unwrap();
        // 8 VLs, 2 classes: 4 VLs per class, 2 lanes of 2 VLs; 2 lanes × 4 bit patterns.
        let fabric = DorEngine.route(&topo, &req(8, 2)).unwrap();
        fabric.check_shape(&topo).unwrap();
        assert_eq!(fabric.routing_sls, 8);
        for class in 0..2u8 {
            let mut seen = [false; 8];
            for (_, _, path) in all_paths(&topo, &fabric, class) {
                for h in &path {
                    assert!(
                        (class * 4..class * 4 + 4).contains(&h.vl),
                        "class {class} on VL {}",
                        h.vl
                    );
                    seen[h.vl as usize] = true;
                }
            }
            assert!(
                seen[class as usize * 4..class as usize * 4 + 4]
                    .iter()
                    .all(|&x| x),
                "{seen:?}"
            );
        }
        assert!(fabric.nic_sl2vl.iter().all(|&v| v < 8));
        assert_minimal_and_deadlock_free(&topo, &fabric);
        // Three classes on two VLs share the single block.
        let fabric = DorEngine.route(&topo, &req(2, 3)).unwrap();
        fabric.check_shape(&topo).unwrap();
        assert_eq!(fabric.wire_sls(), 12);
        assert_minimal_and_deadlock_free(&topo, &fabric);
    }

    /// `t` with its shape forgotten, as a topology read from a file is.
    fn as_file(t: &Topology) -> Topology {
        let back = Topology::from_ib_str(&t.to_ibnetdiscover(), "file").unwrap();
        assert_eq!(back.shape(), &Shape::Irregular);
        back
    }

    #[test]
    fn exported_tori_and_meshes_route_to_the_generators_tables() {
        let cases: &[(&[u32], bool, u32, u32)] = &[
            (&[4, 4], true, 1, 1),
            (&[4, 4], true, 2, 1),
            (&[4, 4], false, 1, 1),
            (&[4, 4], false, 2, 1),
            (&[3, 4, 2], true, 1, 1),
            (&[3, 4, 2], true, 2, 1),
            (&[3, 4, 2], false, 1, 1),
            (&[3, 4, 2], false, 2, 1),
            (&[4, 4], true, 2, 3),
            (&[5, 3], true, 1, 1),
        ];
        for &(sides, wrap, eps, trunk) in cases {
            let g = generators::torus_or_mesh(sides, eps, trunk, 1, wrap).unwrap();
            let f = as_file(&g);
            for vls in [2u8, 8] {
                let a = DorEngine.route(&g, &req(vls, 1)).unwrap();
                let b = DorEngine
                    .route(&f, &req(vls, 1))
                    .unwrap_or_else(|e| panic!("{sides:?} {wrap}: {e}"));
                let what = format!("{sides:?} wrap {wrap} eps {eps} trunk {trunk} vls {vls}");
                assert_eq!(a.lft, b.lft, "{what}");
                assert_eq!(a.path_sl, b.path_sl, "{what}");
                assert_eq!(a.nic_sl2vl, b.nic_sl2vl, "{what}");
                assert_eq!(a.routing_sls, b.routing_sls, "{what}");
                // SL→VL entries of every connected output port (unconnected ports carry no
                // traffic and appear in no dump) are the same.
                let wire = a.wire_sls();
                for s in 0..g.num_switches() {
                    let p = g.num_ports(SwitchId(s as u32)) as usize;
                    for out in
                        (0..p).filter(|&o| g.switch_peer(SwitchId(s as u32), o as u16).is_some())
                    {
                        for inp in 0..p {
                            let i = (inp * p + out) * wire;
                            assert_eq!(a.sl2vl[s][i..i + wire], b.sl2vl[s][i..i + wire], "{what}");
                        }
                    }
                }
                // And so the OpenSM dumps are identical, byte for byte.
                if a.wire_sls() <= 16 {
                    let da = crate::opensm::write_all(&g, &a).unwrap();
                    let db = crate::opensm::write_all(&f, &b).unwrap();
                    assert_eq!(da, db, "{what}");
                }
                let report = cdg::verify(&f, &b).unwrap();
                assert!(report.deadlock_free, "{what}");
            }
        }
    }

    #[test]
    fn a_torus_with_switches_in_another_order_routes_alike_by_guid() {
        let g = generators::torus(&[4, 3, 2], 2, 1, 1).unwrap();
        let n = g.num_switches() as u32;
        // Switch i of the shuffled copy is switch perm[i] of the generated one.
        let perm: Vec<u32> = (0..n).map(|i| (i * 7 + 5) % n).collect();
        let mut inv = vec![0u32; n as usize];
        for (i, &p) in perm.iter().enumerate() {
            inv[p as usize] = i as u32;
        }
        let switches = perm
            .iter()
            .map(|&p| g.switches()[p as usize].clone())
            .collect();
        let remap = |r: flitsim_topology::PortRef| match r.node {
            NodeId::Switch(s) => flitsim_topology::PortRef {
                node: NodeId::Switch(inv[s as usize]),
                port: r.port,
            },
            _ => r,
        };
        let links = g
            .links()
            .iter()
            .map(|l| flitsim_topology::Link {
                a: remap(l.a),
                b: remap(l.b),
                ..*l
            })
            .collect();
        let f = Topology::new(
            "shuffled",
            Shape::Irregular,
            switches,
            g.endpoints().to_vec(),
            links,
        )
        .unwrap();
        let a = DorEngine.route(&g, &req(8, 1)).unwrap();
        let b = DorEngine.route(&f, &req(8, 1)).unwrap();
        for (i, &p) in perm.iter().enumerate() {
            assert_eq!(b.lft[i], a.lft[p as usize], "switch {i}");
        }
        // Same SL→VL dump, switch blocks in another order.
        let dump = |t: &Topology, f: &FabricConfig| -> std::collections::BTreeSet<String> {
            let text = crate::opensm::write_sl2vl(t, f).unwrap();
            let body: String = text
                .lines()
                .filter(|l| !l.starts_with("# flitsim"))
                .map(|l| format!("{l}\n"))
                .collect();
            body.split("\n\n").map(str::to_string).collect()
        };
        assert_eq!(dump(&g, &a), dump(&f, &b));
        assert_eq!(a.path_sl, b.path_sl);
    }

    #[test]
    fn tori_with_arbitrary_port_numbers_route_minimally_and_deadlock_free() {
        // Ports renumbered per switch by a fixed pseudo-random permutation: nothing of
        // flitsim's port convention is left, only the graph.
        let cases: &[(&[u32], bool, u32, u32)] = &[
            (&[6, 6], true, 1, 1),
            (&[5, 3, 4], true, 2, 1),
            (&[4, 4], true, 1, 2),
            (&[4, 3], false, 2, 1),
            (&[7], true, 1, 1),
        ];
        for &(sides, wrap, eps, trunk) in cases {
            let g = generators::torus_or_mesh(sides, eps, trunk, 1, wrap).unwrap();
            let perm_of = |s: u32, ports: u16| -> Vec<u16> {
                let mut p: Vec<u16> = (0..ports).collect();
                let mut x = 0x9e37_79b9u32.wrapping_mul(s + 1);
                for i in (1..p.len()).rev() {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    p.swap(i, x as usize % (i + 1));
                }
                p
            };
            let perms: Vec<Vec<u16>> = g
                .switches()
                .iter()
                .enumerate()
                .map(|(s, sw)| perm_of(s as u32, sw.ports))
                .collect();
            let remap = |r: flitsim_topology::PortRef| match r.node {
                NodeId::Switch(s) => flitsim_topology::PortRef {
                    node: r.node,
                    port: perms[s as usize][r.port as usize],
                },
                _ => r,
            };
            let links = g
                .links()
                .iter()
                .map(|l| flitsim_topology::Link {
                    a: remap(l.a),
                    b: remap(l.b),
                    ..*l
                })
                .collect();
            let f = Topology::new(
                "renumbered",
                Shape::Irregular,
                g.switches().to_vec(),
                g.endpoints().to_vec(),
                links,
            )
            .unwrap();
            let what = format!("{sides:?} wrap {wrap}");
            let layout = detect_torus(&f).unwrap_or_else(|e| panic!("{what}: {e}"));
            let n: u32 = layout.sides.iter().product();
            assert_eq!(n as usize, g.num_switches(), "{what}");
            let fabric = DorEngine.route(&f, &req(2, 1)).unwrap();
            // Minimal: every path is as long as the generated torus's distance.
            for (src, dst, path) in all_paths(&f, &fabric, 0) {
                let a = f.endpoint_switch(EndpointId(src)).0 .0;
                let b = f.endpoint_switch(EndpointId(dst)).0 .0;
                assert_eq!(
                    switch_hops(&path),
                    torus_distance(sides, wrap, a, b),
                    "{what}: {src} -> {dst}"
                );
            }
            assert!(cdg::verify(&f, &fabric).unwrap().deadlock_free, "{what}");
        }
    }

    #[test]
    fn a_file_that_is_no_torus_gets_the_reason() {
        let t = as_file(&generators::kary_ntree(4, 2, 1).unwrap());
        let e = DorEngine.route(&t, &req(2, 1)).unwrap_err().to_string();
        assert!(
            e.contains("dor routes tori and meshes only") && e.contains("is not one: "),
            "{e}"
        );
    }

    #[test]
    fn wrong_shape_is_unroutable() {
        let topo = generators::kary_ntree(4, 2, 1).unwrap();
        let err = DorEngine.route(&topo, &req(2, 1)).unwrap_err();
        assert!(matches!(err, RoutingError::Unroutable(_)), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("tori and meshes") && msg.contains("4-ary 2-tree"),
            "{msg}"
        );
    }

    #[test]
    fn shape_metadata_that_contradicts_the_links_is_unroutable() {
        let p = generators::RandomParams {
            switches: 4,
            ports: 6,
            endpoints_per_switch: 1,
            links: 5,
            multi_links: false,
            latency: 1,
            seed: 3,
        };
        let r = generators::random(&p).unwrap();
        let shape = Shape::Torus {
            sides: vec![2, 2],
            wrap: true,
            endpoints_per_switch: 1,
            trunk: 1,
        };
        let topo = Topology::new(
            "liar",
            shape,
            r.switches().to_vec(),
            r.endpoints().to_vec(),
            r.links().to_vec(),
        )
        .unwrap();
        let err = DorEngine.route(&topo, &req(2, 1)).unwrap_err();
        assert!(
            err.to_string().contains("shape metadata does not match"),
            "{err}"
        );
    }
}
