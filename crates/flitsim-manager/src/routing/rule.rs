//! Forwarding computed instead of stored: the routing *rule* of a regular fabric.
//!
//! The tables an engine programs grow with switches × endpoints (forwarding) and endpoints²
//! (path SLs): 2 GiB for a 16-ary 4-tree, 12 GiB for a 256×256 torus. `dor` on a generated torus
//! or mesh and `dmodk` on a k-ary n-tree route by a closed-form rule of the switch's and the
//! destination's coordinates, so a [`ForwardingRule`] answers "output port of switch `s` for
//! endpoint `e`" and "path SL of `src → dst`" from O(switches + endpoints) state. Both engines
//! fill their tables from the same rule ([`ForwardingRule::lft`]), so the computed and the
//! stored forwarding are one routing by construction; a [`FabricConfig`] carrying a rule
//! ([`FabricConfig::rule`]) has empty `lft` and `path_sl` and answers through
//! [`FabricConfig::port`] and [`FabricConfig::wire_sl_on`].
//!
//! [`route_computed`] routes with a rule where the engine has one; everything else keeps
//! tables.
use super::dor::direction;
use super::tables::pair_lane;
use super::{check_port_leads_to, RoutingRequest};
use crate::{FabricConfig, RoutingError};
use flitsim_topology::{EndpointId, NodeId, PortNum, SwitchId, Topology};
use std::sync::Arc;

/// A routing rule: the forwarding and path SLs of a regular fabric as functions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ForwardingRule {
    /// Dimension-order routing on a generated torus or mesh (see [`super::DorEngine`]).
    Dor(DorRule),
    /// Destination-mod-k up/down routing on a k-ary n-tree (see [`super::DmodkEngine`]).
    Dmodk(DmodkRule),
}

impl ForwardingRule {
    /// The output port of switch `s` for traffic to endpoint `e`.
    #[inline]
    pub fn port(&self, s: u32, e: u32) -> PortNum {
        match self {
            ForwardingRule::Dor(r) => r.port(s, e),
            ForwardingRule::Dmodk(r) => r.port(s, e),
        }
    }

    /// The path SL of `src → dst`, below the fabric's `routing_sls`.
    #[inline]
    pub fn path_sl(&self, src: u32, dst: u32) -> u8 {
        match self {
            ForwardingRule::Dor(r) => r.path_sl(src, dst),
            ForwardingRule::Dmodk(r) => pair_lane(src as usize, dst as usize, r.lanes),
        }
    }

    /// Switches and endpoints the rule routes.
    pub fn size(&self) -> (usize, usize) {
        match self {
            ForwardingRule::Dor(r) => (r.coords.len() / r.sides.len(), r.home.len()),
            ForwardingRule::Dmodk(r) => {
                ((r.per_level * r.n) as usize, (r.per_level * r.k) as usize)
            }
        }
    }

    /// The forwarding tables the rule stands for, `lft[switch][endpoint]`.
    pub fn lft(&self) -> Vec<Vec<PortNum>> {
        let (switches, endpoints) = self.size();
        (0..switches as u32)
            .map(|s| (0..endpoints as u32).map(|e| self.port(s, e)).collect())
            .collect()
    }

    /// The path SL table the rule stands for, `t[src · endpoints + dst]` (empty when
    /// `routing_sls == 1`, as [`FabricConfig::path_sl`] wants it).
    pub fn path_sls(&self, routing_sls: u8) -> Vec<u8> {
        let (_, n) = self.size();
        super::tables::path_sls(n, routing_sls, |s, d| self.path_sl(s as u32, d as u32))
    }

    /// Checks every port the rule can name against the links of `topo`: from each switch, each
    /// port towards a neighbour must lead to that neighbour, and each endpoint's port to the
    /// endpoint. O(switches · ports + endpoints), so the rule is checked where its tables could
    /// not be.
    pub fn check(&self, topo: &Topology, engine: &str) -> Result<(), RoutingError> {
        match self {
            ForwardingRule::Dor(r) => r.check(topo, engine),
            ForwardingRule::Dmodk(r) => r.check(topo, engine),
        }
    }
}

/// [`ForwardingRule::Dor`]: a packet corrects the dimensions in order, each the shorter way
/// round (`+` on a tie), on trunk `e mod trunk` of the links to the next switch; its path SL is
/// its lane's base plus one bit per dimension whose wrap link the path crosses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DorRule {
    sides: Vec<u32>,
    /// Per dimension: a ring with a wrap link of its own (a torus side ≥ 3).
    wraps: Vec<bool>,
    trunk: u32,
    /// `coords[s · dims + d]`: coordinate `d` of switch `s`.
    coords: Vec<u32>,
    /// `switch_at[i]`: the switch at mixed-radix position `i`; empty when switch `i` is at
    /// position `i` (a generated fabric).
    switch_at: Vec<u32>,
    /// Per endpoint: its switch and the switch's port to it.
    home: Vec<(u32, PortNum)>,
    /// Layouts detected from the links: `ports[s · 2·dims + 2·d + minus]`, the ports of switch
    /// `s` to its neighbour in that direction, in port order. Empty for a generated fabric,
    /// whose ports follow the [`flitsim_topology::Shape::Torus`] convention.
    ports: Vec<Vec<PortNum>>,
    lanes: u8,
    sls_per_lane: u32,
    /// A generated fabric whose endpoint `e` hangs on switch `e / .0` at port `.1 + e mod
    /// .0`: homes and coordinates are computed, not read from `home` and `coords` (which the
    /// packets of a large fabric would fetch from memory at every hop: two to three cache
    /// misses per routing decision on a 256×256 torus).
    computed: Option<(u32, PortNum)>,
}

impl DorRule {
    /// The rule of a torus or mesh (`wrap`) with `sides` and `trunk`: generated (`layout`
    /// `None`) or detected from the links of `topo`; `lanes` lanes of `sls_per_lane` path SLs.
    pub(super) fn new(
        topo: &Topology,
        sides: &[u32],
        wrap: bool,
        trunk: u32,
        layout: Option<&flitsim_topology::TorusLayout>,
        lanes: u8,
        sls_per_lane: u32,
    ) -> DorRule {
        let dims = sides.len();
        let n_sw = topo.num_switches() as u32;
        let coords: Vec<u32> = (0..n_sw)
            .flat_map(|s| {
                let pos = layout.map_or(s, |l| l.position[s as usize]);
                flitsim_topology::generators::coords(sides, pos)
            })
            .collect();
        let home = (0..topo.num_endpoints() as u32)
            .map(|e| {
                let (s, p) = topo.endpoint_switch(EndpointId(e));
                (s.0, p)
            })
            .collect();
        let mut rule = DorRule {
            sides: sides.to_vec(),
            wraps: sides.iter().map(|&k| wrap && k >= 3).collect(),
            trunk,
            coords,
            switch_at: layout.map_or_else(Vec::new, |l| l.switch_at.clone()),
            home,
            ports: Vec::new(),
            lanes,
            sls_per_lane,
            computed: None,
        };
        if layout.is_some() {
            let mut ports = vec![Vec::new(); n_sw as usize * 2 * dims];
            for s in 0..n_sw {
                let towards: Vec<Option<u32>> =
                    (0..2 * dims).map(|g| rule.neighbour(s, g)).collect();
                for (p, t, _) in topo.switch_neighbours(SwitchId(s)) {
                    for (group, &n) in towards.iter().enumerate() {
                        if n == Some(t.0) {
                            ports[s as usize * 2 * dims + group].push(p);
                        }
                    }
                }
            }
            rule.ports = ports;
        } else {
            rule.computed = regular_homes(&rule.home, n_sw);
        }
        rule
    }

    fn at(&self, s: u32) -> &[u32] {
        let dims = self.sides.len();
        &self.coords[s as usize * dims..(s as usize + 1) * dims]
    }

    /// The switch DOR reaches from `s` in direction `group` (`2·d + minus`), if it uses that
    /// direction from `s` (both ways round a ring; towards existing neighbours otherwise).
    fn neighbour(&self, s: u32, group: usize) -> Option<u32> {
        let (d, plus) = (group / 2, group.is_multiple_of(2));
        let c = self.at(s);
        let k = self.sides[d];
        let used = if self.wraps[d] {
            true
        } else if plus {
            c[d] + 1 < k
        } else {
            c[d] > 0
        };
        if !used {
            return None;
        }
        let mut next = c.to_vec();
        next[d] = if plus {
            (c[d] + 1) % k
        } else {
            (c[d] + k - 1) % k
        };
        let i = flitsim_topology::generators::index(&self.sides, &next);
        Some(if self.switch_at.is_empty() {
            i
        } else {
            self.switch_at[i as usize]
        })
    }

    #[inline]
    fn port(&self, s: u32, e: u32) -> PortNum {
        if let Some((per, first)) = self.computed {
            return self.computed_port(s, e, per, first);
        }
        let (t, eport) = self.home[e as usize];
        if t == s {
            return eport;
        }
        let (cs, ct) = (self.at(s), self.at(t));
        let d = (0..cs.len())
            .find(|&d| cs[d] != ct[d])
            .expect("distinct switches differ in a coordinate");
        let (plus, _) = direction(self.sides[d], self.wraps[d], cs[d], ct[d]);
        let group = 2 * d + usize::from(!plus);
        if self.ports.is_empty() {
            (group as u32 * self.trunk + e % self.trunk) as PortNum
        } else {
            let list = &self.ports[s as usize * 2 * cs.len() + group];
            list[e as usize % list.len()]
        }
    }

    /// [`DorRule::port`] of a generated fabric (`computed`): switch `s` is at mixed-radix
    /// position `s`, dimension 0 the fastest digit, and its ports follow the
    /// [`flitsim_topology::Shape::Torus`] convention.
    #[inline]
    fn computed_port(&self, s: u32, e: u32, per: u32, first: PortNum) -> PortNum {
        let t = e / per;
        if t == s {
            return first + (e % per) as PortNum;
        }
        let (mut a, mut b) = (s, t);
        for (d, &k) in self.sides.iter().enumerate() {
            let (ca, cb) = (a % k, b % k);
            if ca != cb {
                let (plus, _) = direction(k, self.wraps[d], ca, cb);
                let group = 2 * d as u32 + u32::from(!plus);
                return (group * self.trunk + e % self.trunk) as PortNum;
            }
            (a, b) = (a / k, b / k);
        }
        unreachable!("distinct switches differ in a coordinate")
    }

    fn path_sl(&self, src: u32, dst: u32) -> u8 {
        let (cs, ct) = (
            self.at(self.home[src as usize].0),
            self.at(self.home[dst as usize].0),
        );
        let mut bits = 0u32;
        for d in (0..cs.len()).filter(|&d| cs[d] != ct[d]) {
            if direction(self.sides[d], self.wraps[d], cs[d], ct[d]).1 {
                bits |= 1 << d;
            }
        }
        (pair_lane(src as usize, dst as usize, self.lanes) as u32 * self.sls_per_lane + bits) as u8
    }

    fn check(&self, topo: &Topology, engine: &str) -> Result<(), RoutingError> {
        for (e, &(s, p)) in self.home.iter().enumerate() {
            check_port_leads_to(topo, engine, SwitchId(s), p, NodeId::Endpoint(e as u32))?;
        }
        let dims = self.sides.len();
        for s in 0..(self.coords.len() / dims) as u32 {
            flitsim_topology::cancel::check()?;
            for group in 0..2 * dims {
                let Some(t) = self.neighbour(s, group) else {
                    continue;
                };
                if self.ports.is_empty() {
                    for j in 0..self.trunk {
                        let port = (group as u32 * self.trunk + j) as PortNum;
                        check_port_leads_to(topo, engine, SwitchId(s), port, NodeId::Switch(t))?;
                    }
                } else if self.ports[s as usize * 2 * dims + group].is_empty() {
                    let name = |x: u32| &topo.switches()[x as usize].name;
                    return Err(RoutingError::Unroutable(format!(
                        "{engine}: switch {} has no link to switch {}, its neighbour in dimension {}",
                        name(s),
                        name(t),
                        group / 2
                    )));
                }
            }
        }
        Ok(())
    }
}

/// `(per, first)` when every endpoint `e` of `home` hangs on switch `e / per` at port
/// `first + e mod per` of `switches` switches (as the generators attach them), else `None`.
fn regular_homes(home: &[(u32, PortNum)], switches: u32) -> Option<(u32, PortNum)> {
    let per = (home.len() as u32)
        .checked_div(switches)
        .filter(|&p| p > 0)?;
    let first = home.first()?.1;
    let regular = home.len() as u32 == per * switches
        && home
            .iter()
            .enumerate()
            .all(|(e, &(s, p))| s == e as u32 / per && p as u32 == first as u32 + e as u32 % per);
    regular.then_some((per, first))
}

/// [`ForwardingRule::Dmodk`]: at switch `⟨w, l⟩` a packet for `e` goes down by digit `l` of
/// `e` when `e` is below, else up by `k +` that digit; its path SL is its lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmodkRule {
    k: u32,
    n: u32,
    /// `k^(n-1)`, the switches per level.
    per_level: u32,
    lanes: u8,
}

impl DmodkRule {
    pub(super) fn new(k: u32, n: u32, per_level: u32, lanes: u8) -> DmodkRule {
        DmodkRule {
            k,
            n,
            per_level,
            lanes,
        }
    }

    /// Switch `s`'s level, index in its level and `k^level`.
    fn place(&self, s: u32) -> (u32, u32, u32) {
        let (l, w) = (s / self.per_level, s % self.per_level);
        (l, w, self.k.pow(l))
    }

    #[inline]
    fn port(&self, s: u32, e: u32) -> PortNum {
        let (_, w, pow_l) = self.place(s);
        let digit = (e / pow_l) % self.k;
        let below = e / (pow_l * self.k) == w / pow_l;
        (if below { digit } else { self.k + digit }) as PortNum
    }

    /// Where port `p` of switch `s` leads by the rule: down ports to the children (endpoints at
    /// a leaf), up ports to the parents (none at the top level).
    fn peer(&self, s: u32, p: u32) -> Option<NodeId> {
        let (l, w, pow_l) = self.place(s);
        let k = self.k;
        if p < k {
            if l == 0 {
                return Some(NodeId::Endpoint(w * k + p));
            }
            // Descending replaces digit l-1 of the switch index by p.
            let pow_below = pow_l / k;
            let digit_below = (w / pow_below) % k;
            Some(NodeId::Switch(
                (l - 1) * self.per_level + w - digit_below * pow_below + p * pow_below,
            ))
        } else if l + 1 < self.n {
            // Climbing replaces digit l of the switch index by p - k.
            let digit = (w / pow_l) % k;
            Some(NodeId::Switch(
                (l + 1) * self.per_level + w - digit * pow_l + (p - k) * pow_l,
            ))
        } else {
            None
        }
    }

    fn check(&self, topo: &Topology, engine: &str) -> Result<(), RoutingError> {
        for s in 0..self.per_level * self.n {
            flitsim_topology::cancel::check()?;
            for p in 0..2 * self.k {
                if let Some(expected) = self.peer(s, p) {
                    check_port_leads_to(topo, engine, SwitchId(s), p as PortNum, expected)?;
                }
            }
        }
        Ok(())
    }
}

/// Routes `topo` with engine `name` by its rule ([`FabricConfig::rule`] set, no stored
/// forwarding or path SL tables), or `None` when the engine has no rule for this topology
/// (`dor` on a generated torus or mesh and `dmodk` on a k-ary n-tree have one).
pub fn route_computed(
    topo: &Topology,
    name: &str,
    req: &RoutingRequest,
) -> Result<Option<FabricConfig>, RoutingError> {
    let fabric = match name {
        "dor" => Some(super::DorEngine.build(topo, req, true)?),
        "dmodk" | "updown-dmodk" => Some(super::DmodkEngine.build(topo, req, true)?),
        _ => None,
    };
    if let Some(f) = &fabric {
        f.check_shape(topo)?;
    }
    Ok(fabric)
}

/// The fabric an engine with a rule builds: `assemble(lft, path_sl)` gives its SL→VL tables
/// and the rest; with `computed` it gets empty forwarding and path SL tables and carries
/// `rule` instead, otherwise the tables written out of `rule`.
pub(super) fn fabric_from_rule(
    rule: ForwardingRule,
    routing_sls: u8,
    computed: bool,
    assemble: impl FnOnce(Vec<Vec<PortNum>>, Vec<u8>) -> FabricConfig,
) -> FabricConfig {
    if !computed {
        return assemble(rule.lft(), rule.path_sls(routing_sls));
    }
    let mut fabric = assemble(Vec::new(), Vec::new());
    fabric.rule = Some(Arc::new(rule));
    fabric
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::route;
    use flitsim_topology::{generators, Shape, Sl};

    /// The fabric routed by rule answers every port and wire-SL question as the stored tables
    /// of the same engine do, holds no tables itself, and writes out (and serialises) to
    /// exactly those tables.
    fn assert_rule_matches_tables(topo: &Topology, engine: &str, req: &RoutingRequest) {
        let what = format!("{} {engine} {req:?}", topo.name());
        let tables = route(topo, engine, req).unwrap();
        let computed = route_computed(topo, engine, req)
            .unwrap()
            .unwrap_or_else(|| panic!("{what}: no rule"));
        assert!(computed.rule.is_some() && computed.lft.is_empty(), "{what}");
        assert!(computed.path_sl.is_empty(), "{what}");
        let n = topo.num_endpoints() as u32;
        for s in 0..topo.num_switches() as u32 {
            for e in 0..n {
                assert_eq!(
                    computed.port(0, s, e),
                    tables.lft[s as usize][e as usize],
                    "{what}: switch {s}, endpoint {e}"
                );
            }
        }
        for class in 0..req.classes {
            for src in 0..n {
                for dst in 0..n {
                    let (a, b) = (EndpointId(src), EndpointId(dst));
                    assert_eq!(
                        computed.wire_sl(Sl(class), a, b, n as usize),
                        tables.wire_sl(Sl(class), a, b, n as usize),
                        "{what}: {src} -> {dst}"
                    );
                }
            }
        }
        assert_eq!(
            serde_json::to_string(&computed).unwrap(),
            serde_json::to_string(&tables).unwrap(),
            "{what}"
        );
        assert_eq!(computed.with_tables(), tables, "{what}");
    }

    #[test]
    fn dor_rule_equals_dor_tables_on_tori_and_meshes() {
        let shapes: &[(&[u32], u32, u32)] = &[
            (&[4, 4], 1, 1),
            (&[5, 3], 2, 1),
            (&[2, 6], 1, 2),
            (&[3, 2, 4], 3, 2),
            (&[7], 1, 1),
        ];
        for &(sides, eps, trunk) in shapes {
            for wrap in [true, false] {
                let t = generators::torus_or_mesh(sides, eps, trunk, 1, wrap).unwrap();
                // A generated fabric's homes and coordinates are computed (the path these
                // comparisons check), not read from the rule's tables.
                assert!(matches!(
                    dor_rule(&t).computed,
                    Some((per, _)) if per == eps
                ));
                for (vls, classes) in [(2, 1), (4, 1), (8, 2)] {
                    assert_rule_matches_tables(&t, "dor", &RoutingRequest { vls, classes });
                }
            }
        }
    }

    fn dor_rule(t: &Topology) -> DorRule {
        let req = RoutingRequest { vls: 2, classes: 1 };
        let rule = route_computed(t, "dor", &req).unwrap().unwrap().rule;
        match rule.as_deref() {
            Some(ForwardingRule::Dor(r)) => r.clone(),
            other => panic!("not a DOR rule: {other:?}"),
        }
    }

    #[test]
    fn dor_rule_routes_a_torus_read_without_its_shape() {
        // The same links with the shape forgotten: DOR detects the layout, and the rule uses
        // the detected ports.
        let g = generators::torus(&[4, 3], 2, 2, 1).unwrap();
        let t = Topology::new(
            "irregular",
            Shape::Irregular,
            g.switches().to_vec(),
            g.endpoints().to_vec(),
            g.links().to_vec(),
        )
        .unwrap();
        // Its switches are not at their mixed-radix positions: the rule reads its tables.
        assert_eq!(dor_rule(&t).computed, None);
        assert_rule_matches_tables(&t, "dor", &RoutingRequest { vls: 4, classes: 1 });
    }

    #[test]
    fn dmodk_rule_equals_dmodk_tables_on_kary_ntrees() {
        for (k, n) in [(2, 1), (2, 3), (3, 3), (4, 3), (5, 2)] {
            let t = generators::kary_ntree(k, n, 1).unwrap();
            for (vls, classes) in [(1, 1), (4, 1), (4, 2)] {
                assert_rule_matches_tables(&t, "dmodk", &RoutingRequest { vls, classes });
            }
        }
    }

    #[test]
    fn engines_without_a_rule_give_none_and_wrong_shapes_the_engines_error() {
        let req = RoutingRequest { vls: 2, classes: 1 };
        let torus = generators::torus(&[4, 4], 1, 1, 1).unwrap();
        let tree = generators::kary_ntree(4, 2, 1).unwrap();
        for engine in ["minhop", "updn", "sssp", "ftree"] {
            let t = if engine == "ftree" { &tree } else { &torus };
            assert!(
                route_computed(t, engine, &req).unwrap().is_none(),
                "{engine}"
            );
        }
        let e = route_computed(&tree, "dor", &req).unwrap_err().to_string();
        assert!(e.contains("tori and meshes"), "{e}");
        let e = route_computed(&torus, "dmodk", &req)
            .unwrap_err()
            .to_string();
        assert!(e.contains("k-ary n-trees"), "{e}");
    }

    #[test]
    fn a_miswired_torus_is_refused_by_the_rule_check() {
        // Swap the far ends of two links: the shape metadata no longer matches the links.
        let g = generators::torus(&[4, 4], 1, 1, 1).unwrap();
        let mut links = g.links().to_vec();
        let (i, j) = (0, links.len() / 2);
        let (bi, bj) = (links[i].b, links[j].b);
        links[i].b = bj;
        links[j].b = bi;
        let t = Topology::new(
            "miswired",
            g.shape().clone(),
            g.switches().to_vec(),
            g.endpoints().to_vec(),
            links,
        )
        .unwrap();
        let req = RoutingRequest { vls: 2, classes: 1 };
        let e = route_computed(&t, "dor", &req).unwrap_err().to_string();
        assert!(e.contains("does not match its links"), "{e}");
    }
}
