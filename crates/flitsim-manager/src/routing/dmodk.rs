//! Up/down destination-mod-k routing for k-ary n-trees.
use super::rule::{fabric_from_rule, DmodkRule, ForwardingRule};
use super::tables::{lane_fabric, PathSls};
use super::{fit_lanes, shape_name, RoutingEngine, RoutingRequest, VlBlocks};
use crate::{FabricConfig, RoutingError};
use flitsim_topology::{Shape, Topology};

/// Destination-mod-k (d-mod-k) up/down routing for [`Shape::KaryNTree`] fabrics (k-ary
/// n-trees as defined by Petrini & Vanneschi 1997, "k-ary n-trees: high performance networks
/// for massively parallel architectures").
///
/// **Addressing.** Write a destination endpoint `e` in base `k`: digit `l` is
/// `(e / k^l) mod k`. Switch `⟨w, l⟩` (level `l`, index `w` with `n-1` base-`k` digits) has
/// below it exactly the leaves that agree with `w` in digit `l` and above, i.e. the endpoints
/// `e` with `e / k^(l+1) == w / k^l`.
///
/// **Paths.** At `⟨w, l⟩` a packet for `e`
/// - goes *down* through port `digit_l(e)` when `e` is below: at a leaf that is the endpoint's
///   port `e mod k`; higher up it is the child whose digit `l-1` matches the destination leaf;
/// - otherwise goes *up* through port `k + digit_l(e)`.
///
/// Going up through port `k + j` sets digit `l` of the switch index to `j`, so after climbing
/// to level `m` a packet sits on the switch whose digits `0..m` are the destination's digits
/// `0..m` and whose other digits are the source's. Every packet for `e` therefore reaches the
/// same ancestor, whatever its source, and descends along one tree: this is the classic d-mod-k
/// rule that spreads destinations evenly over the up ports (on a leaf, remote destinations are
/// split by `e mod k` over the `k` up ports). A packet climbs only to the nearest common
/// ancestor level `m` of the two leaves, so a path traverses `2m + 1` switches: minimal.
///
/// **Deadlock freedom.** Every path is some up hops followed by down hops, so no dependency
/// leads from a down channel to an up channel. A chain of up channels climbs strictly and a
/// chain of down channels descends strictly, so a cycle would need a down → up dependency: the
/// channel dependency graph is acyclic on any VL assignment (the CDG criterion of Dally &
/// Seitz 1987; Duato, Yalamanchili & Ni, *Interconnection Networks: An Engineering Approach*). One VL per class is enough; spare VLs
/// of a class's block are used as *lanes* to spread load: `lanes = per_class`,
/// `routing_sls = lanes`, the path SL of `src → dst` is `(src + dst) mod lanes` and every hop
/// (and the NIC's injection link) uses VL `base + lane`.
#[derive(Clone, Copy, Debug, Default)]
pub struct DmodkEngine;

impl DmodkEngine {
    /// The tables of `topo` (`computed`: the rule, [`FabricConfig::rule`], instead of
    /// forwarding and path SL tables).
    pub(super) fn build(
        &self,
        topo: &Topology,
        req: &RoutingRequest,
        computed: bool,
    ) -> Result<FabricConfig, RoutingError> {
        let &Shape::KaryNTree { k, n } = topo.shape() else {
            return Err(RoutingError::Unroutable(format!(
                "dmodk routes k-ary n-trees only (Shape::KaryNTree), but topology '{}' is {}",
                topo.name(),
                shape_name(topo.shape())
            )));
        };
        let per_level = (k >= 2 && n >= 1).then(|| k.checked_pow(n - 1)).flatten();
        let fits = per_level.is_some_and(|p| {
            p as u64 * n as u64 == topo.num_switches() as u64
                && p as u64 * k as u64 == topo.num_endpoints() as u64
        });
        let Some(per_level) = per_level.filter(|_| fits) else {
            return Err(RoutingError::Unroutable(format!(
                "dmodk: a {k}-ary {n}-tree has n·k^(n-1) switches and k^n endpoints, but '{}' has {} switches and {} endpoints",
                topo.name(),
                topo.num_switches(),
                topo.num_endpoints()
            )));
        };
        let blocks = VlBlocks::new(req, 1, "dmodk")?;
        let lanes = fit_lanes(blocks.per_class, 1, req.classes, "dmodk")?;
        let routing_sls = lanes;

        let rule = DmodkRule::new(k, n, per_level, lanes);
        let rule = ForwardingRule::Dmodk(rule);
        rule.check(topo, "dmodk")?;
        Ok(fabric_from_rule(
            rule,
            routing_sls,
            computed,
            |lft, path_sl| {
                lane_fabric(
                    self.name(),
                    topo,
                    req,
                    &blocks,
                    lft,
                    PathSls {
                        routing_sls,
                        layers: 1,
                        path_sl,
                    },
                )
            },
        ))
    }
}

impl RoutingEngine for DmodkEngine {
    fn name(&self) -> &'static str {
        "dmodk"
    }

    fn route(&self, topo: &Topology, req: &RoutingRequest) -> Result<FabricConfig, RoutingError> {
        self.build(topo, req, false)
    }

    /// Further paths over the other minimal up/down ports (see the `multipath` module); the
    /// path SLs (lanes) are path 0's.
    fn route_paths(
        &self,
        topo: &Topology,
        req: &RoutingRequest,
        paths: usize,
    ) -> Result<FabricConfig, RoutingError> {
        let f = self.route(topo, req)?;
        super::ftree::fat_tree_alt_paths(f, topo, paths)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdg;
    use crate::routing::testutil::{all_paths, switch_hops};
    use flitsim_topology::{generators, EndpointId};

    fn req(vls: u8, classes: u8) -> RoutingRequest {
        RoutingRequest { vls, classes }
    }

    /// Level of the nearest common ancestor of the leaves of endpoints `a` and `b`.
    fn nca_level(k: u32, a: u32, b: u32) -> u32 {
        let (mut la, mut lb, mut m) = (a / k, b / k, 0);
        while la != lb {
            la /= k;
            lb /= k;
            m += 1;
        }
        m
    }

    #[test]
    fn trees_are_minimal_reachable_and_deadlock_free() {
        for (k, n) in [(4u32, 3u32), (2, 4), (3, 2), (2, 1)] {
            let topo = generators::kary_ntree(k, n, 1).unwrap();
            let fabric = DmodkEngine.route(&topo, &req(1, 1)).unwrap();
            fabric.check_shape(&topo).unwrap();
            let paths = all_paths(&topo, &fabric, 0);
            assert_eq!(paths.len(), (k.pow(n) * (k.pow(n) - 1)) as usize);
            for (src, dst, path) in paths {
                assert_eq!(
                    switch_hops(&path),
                    2 * nca_level(k, src, dst),
                    "{k}-ary {n}-tree {src} -> {dst}"
                );
            }
            let report = cdg::verify(&topo, &fabric).unwrap();
            assert!(report.deadlock_free, "{k}-ary {n}-tree: {:?}", report.cycle);
        }
    }

    #[test]
    fn all_paths_to_a_destination_meet_at_one_root() {
        let (k, n) = (3u32, 3u32);
        let topo = generators::kary_ntree(k, n, 1).unwrap();
        let fabric = DmodkEngine.route(&topo, &req(1, 1)).unwrap();
        let roots = 2 * k.pow(n - 1)..3 * k.pow(n - 1);
        for dst in 0..k.pow(n) {
            let mut root_used = None;
            for src in (0..k.pow(n)).filter(|&s| nca_level(k, s, dst) == n - 1) {
                let path = fabric
                    .trace(&topo, EndpointId(src), EndpointId(dst), 0)
                    .unwrap();
                let top = path
                    .iter()
                    .map(|h| h.switch.0)
                    .find(|s| roots.contains(s))
                    .unwrap();
                assert_eq!(*root_used.get_or_insert(top), top, "destination {dst}");
            }
        }
    }

    #[test]
    fn leaf_up_ports_carry_equal_numbers_of_destinations() {
        let (k, n) = (4u32, 2u32);
        let topo = generators::kary_ntree(k, n, 1).unwrap();
        let fabric = DmodkEngine.route(&topo, &req(1, 1)).unwrap();
        for leaf in 0..k.pow(n - 1) as usize {
            let mut per_port = vec![0; 2 * k as usize];
            for &p in &fabric.lft[leaf] {
                per_port[p as usize] += 1;
            }
            // k local destinations, one per down port; k(k-1) remote ones spread evenly.
            assert!(
                per_port[..k as usize].iter().all(|&c| c == 1),
                "leaf {leaf}: {per_port:?}"
            );
            assert!(
                per_port[k as usize..].iter().all(|&c| c == k - 1),
                "leaf {leaf}: {per_port:?}"
            );
        }
        // On both non-root levels of a 4-ary 3-tree every up port gets the same share too.
        let topo = generators::kary_ntree(4, 3, 1).unwrap();
        let fabric = DmodkEngine.route(&topo, &req(1, 1)).unwrap();
        for s in 0..32usize {
            let mut up = [0; 4];
            for &p in fabric.lft[s].iter().filter(|&&p| p >= 4) {
                up[p as usize - 4] += 1;
            }
            assert!(
                up.iter().all(|&c| c == up[0] && c > 0),
                "switch {s}: {up:?}"
            );
        }
    }

    #[test]
    fn spare_vls_become_lanes_within_each_class_block() {
        let topo = generators::kary_ntree(2, 3, 1).unwrap();
        let fabric = DmodkEngine.route(&topo, &req(6, 2)).unwrap();
        fabric.check_shape(&topo).unwrap();
        assert_eq!(fabric.routing_sls, 3);
        for class in 0..2u8 {
            for (src, dst, path) in all_paths(&topo, &fabric, class) {
                let vl = class * 3 + ((src + dst) % 3) as u8;
                assert!(
                    path.iter().all(|h| h.vl == vl),
                    "{src} -> {dst} class {class}"
                );
            }
        }
        assert!(cdg::verify(&topo, &fabric).unwrap().deadlock_free);
    }

    #[test]
    fn wrong_shape_is_unroutable() {
        let topo = generators::torus(&[4, 4], 1, 1, 1).unwrap();
        let err = DmodkEngine.route(&topo, &req(1, 1)).unwrap_err();
        assert!(matches!(err, RoutingError::Unroutable(_)));
        let msg = err.to_string();
        assert!(
            msg.contains("k-ary n-trees only") && msg.contains("4x4 torus"),
            "{msg}"
        );
    }
}
