//! Dimension-order routing (DOR) for tori and meshes with dateline VLs.
use super::tables::{assemble, pair_lane, path_sls, PathSls};
use super::{check_port_leads_to, fit_lanes, shape_name, RoutingEngine, RoutingRequest, VlBlocks};
use crate::{FabricConfig, RoutingError, NO_ROUTE};
use flitsim_topology::{generators, EndpointId, NodeId, PortNum, Shape, SwitchId, Topology};

/// Dimension-order routing for [`Shape::Torus`] topologies, wrapped (torus) or not (mesh).
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
fn direction(k: u32, wraps: bool, from: u32, to: u32) -> (bool, bool) {
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
        let Shape::Torus {
            sides, wrap, trunk, ..
        } = topo.shape()
        else {
            return Err(RoutingError::Unroutable(format!(
                "dor routes tori and meshes only (Shape::Torus), but topology '{}' is {}",
                topo.name(),
                shape_name(topo.shape())
            )));
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

        let n_sw = topo.num_switches();
        let n_ep = topo.num_endpoints();
        let coords: Vec<Vec<u32>> = (0..n_sw as u32)
            .map(|s| generators::coords(sides, s))
            .collect();
        let home: Vec<(SwitchId, PortNum)> = (0..n_ep as u32)
            .map(|e| topo.endpoint_switch(EndpointId(e)))
            .collect();
        // Only rings of side ≥ 3 have a wrap link distinct from the ordinary one.
        let wraps = |d: usize| wrap && sides[d] >= 3;

        let mut lft = vec![vec![NO_ROUTE; n_ep]; n_sw];
        for (s, row) in lft.iter_mut().enumerate() {
            flitsim_topology::cancel::check()?;
            let cs = &coords[s];
            for (e, entry) in row.iter_mut().enumerate() {
                let (t, eport) = home[e];
                if t.0 as usize == s {
                    *entry = eport;
                    continue;
                }
                let ct = &coords[t.0 as usize];
                let d = (0..dims)
                    .find(|&d| cs[d] != ct[d])
                    .expect("distinct switches differ in a coordinate");
                let k = sides[d];
                let (plus, _) = direction(k, wraps(d), cs[d], ct[d]);
                let group = 2 * d as u32 + u32::from(!plus);
                let port = (group * trunk + e as u32 % trunk) as PortNum;
                let mut next = cs.clone();
                next[d] = if plus {
                    (cs[d] + 1) % k
                } else {
                    (cs[d] + k - 1) % k
                };
                let expected = NodeId::Switch(generators::index(sides, &next));
                check_port_leads_to(topo, "dor", SwitchId(s as u32), port, expected)?;
                *entry = port;
            }
        }

        let path_sl = path_sls(n_ep, routing_sls, |src, dst| {
            let cs = &coords[home[src].0 .0 as usize];
            let ct = &coords[home[dst].0 .0 as usize];
            let mut bits = 0u32;
            for d in (0..dims).filter(|&d| cs[d] != ct[d]) {
                if direction(sides[d], wraps(d), cs[d], ct[d]).1 {
                    bits |= 1 << d;
                }
            }
            (pair_lane(src, dst, lanes) as u32 * sls_per_lane + bits) as u8
        });

        let dim_ports = 2 * dims as u32 * trunk;
        // First VL of a wire SL's lane, and the crossing bits the SL carries.
        let lane_vl = |sl: u8| {
            let (class, psl) = (sl / routing_sls, (sl % routing_sls) as u32);
            let vl = blocks.base(class) as u32 + needed as u32 * (psl / sls_per_lane);
            (vl, psl % sls_per_lane)
        };
        let hop_vl = |out: PortNum, sl: u8| {
            let (vl, bits) = lane_vl(sl);
            let crossing = if wrap && (out as u32) < dim_ports {
                (bits >> (out as u32 / (2 * trunk))) & 1
            } else {
                0
            };
            (vl + crossing) as u8
        };
        let sls = PathSls {
            routing_sls,
            layers: needed,
            path_sl,
        };
        Ok(assemble(self.name(), topo, req, lft, sls, hop_vl, |sl| {
            lane_vl(sl).0 as u8
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdg;
    use crate::routing::testutil::{all_paths, switch_hops, torus_distance};

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
