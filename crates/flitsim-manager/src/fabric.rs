//! [`FabricConfig`]: everything a fabric manager programs into switches and NICs. The
//! simulator executes these tables exactly as switch hardware would; it never calls a routing
//! engine.
use crate::routing::rule::ForwardingRule;
use crate::RoutingError;
use flitsim_topology::{EndpointId, NodeId, PortNum, Sl, SwitchId, Topology, Vl};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// LFT entry meaning "no route".
pub const NO_ROUTE: PortNum = PortNum::MAX;

/// Routing and VL tables of a whole fabric.
///
/// Service levels: traffic of class `c` (a QoS SL chosen by the application) between `src`
/// and `dst` travels with the *wire SL* `c · routing_sls + path_sl[src][dst]`. Engines that need
/// several SLs for deadlock freedom or VL spreading (DOR's dateline, layered routings) use
/// `routing_sls > 1`; the others use 1. This mirrors how OpenSM's torus-2QoS splits SL bits
/// between routing and QoS.
///
/// The serialised form holds the tables only; [`ports`](Self::ports) is derived (from the
/// topology when tables are built, from the sizes of the SL→VL tables when deserialised).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "FabricTables", into = "FabricTables")]
pub struct FabricConfig {
    /// Name of the engine that produced the tables.
    pub engine: String,
    /// Number of data VLs on every link.
    pub num_vls: u8,
    /// Number of traffic classes the tables were built for.
    pub classes: u8,
    /// Path SLs the routing uses per class (≥ 1).
    pub routing_sls: u8,
    /// VLs per class the routing needs for deadlock freedom: 1 for single-layer engines, 2 for
    /// `dor` on a torus, the number of virtual layers for `lash` and `dfsssp` (with balancing,
    /// `routing_sls` is the VL budget instead), the VLs `nue` used, 0 when unknown (tables read from files).
    #[serde(default)]
    pub layers: u8,
    /// Linear forwarding tables: `lft[switch][endpoint]` is the output port ([`NO_ROUTE`] if none).
    pub lft: Vec<Vec<PortNum>>,
    /// `path_sl[src · endpoints + dst]` in `0..routing_sls`; empty when `routing_sls == 1`.
    pub path_sl: Vec<u8>,
    /// Per switch, `sl2vl[s][(in_port · ports + out_port) · wire_sls + wire_sl]` is the VL.
    pub sl2vl: Vec<Vec<u8>>,
    /// `nic_sl2vl[wire_sl]`: the VL a NIC uses on its link for that SL.
    pub nic_sl2vl: Vec<u8>,
    /// `ports[s]`: the port count of switch `s`, the row stride of its [`sl2vl`](Self::sl2vl)
    /// table ([`FabricConfig::port_counts`] of the topology). Not serialised.
    #[serde(skip)]
    pub ports: Vec<PortNum>,
    /// Further paths per destination (multipath, e.g. the LIDs of an LMC > 0 port):
    /// `alt_paths[k − 1]` holds the tables of path `k`; [`lft`](Self::lft) and
    /// [`path_sl`](Self::path_sl) are path 0. Empty for single-path routing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alt_paths: Vec<PathTables>,
    /// Forwarding and path SLs computed by a rule instead of stored (regular fabrics whose
    /// tables would not fit, see [`crate::routing::rule`]): when set, [`lft`](Self::lft) and
    /// [`path_sl`](Self::path_sl) are empty, and [`port`](Self::port) and
    /// [`wire_sl_on`](Self::wire_sl_on) ask the rule; [`with_tables`](Self::with_tables) gives
    /// the stored form, which is also what is serialised.
    pub rule: Option<Arc<ForwardingRule>>,
}

/// The forwarding tables and path SLs of one further path per destination (see
/// [`FabricConfig::alt_paths`]); same layout as [`FabricConfig::lft`] and
/// [`FabricConfig::path_sl`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathTables {
    /// `lft[switch][endpoint]`: the output port of this path ([`NO_ROUTE`] if none).
    pub lft: Vec<Vec<PortNum>>,
    /// `path_sl[src · endpoints + dst]`; empty when `routing_sls == 1`.
    pub path_sl: Vec<u8>,
}

/// A [`FabricConfig`] as serialised: the tables, without the derived port counts.
#[derive(Serialize, Deserialize)]
struct FabricTables {
    engine: String,
    num_vls: u8,
    classes: u8,
    routing_sls: u8,
    #[serde(default)]
    layers: u8,
    lft: Vec<Vec<PortNum>>,
    path_sl: Vec<u8>,
    sl2vl: Vec<Vec<u8>>,
    nic_sl2vl: Vec<u8>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    alt_paths: Vec<PathTables>,
}

impl From<FabricConfig> for FabricTables {
    /// The stored tables (computed from the rule if the fabric has one).
    fn from(f: FabricConfig) -> Self {
        let f = f.with_tables();
        FabricTables {
            engine: f.engine,
            num_vls: f.num_vls,
            classes: f.classes,
            routing_sls: f.routing_sls,
            layers: f.layers,
            lft: f.lft,
            path_sl: f.path_sl,
            sl2vl: f.sl2vl,
            nic_sl2vl: f.nic_sl2vl,
            alt_paths: f.alt_paths,
        }
    }
}

impl From<FabricTables> for FabricConfig {
    /// Derives each switch's port count from the size of its SL→VL table (`ports² · wire_sls`
    /// entries); [`FabricConfig::check_shape`] compares them with the topology.
    fn from(t: FabricTables) -> Self {
        let wire_sls = t.classes as usize * t.routing_sls as usize;
        let ports = t
            .sl2vl
            .iter()
            .map(|table| {
                let p = table.len().checked_div(wire_sls).unwrap_or(0).isqrt();
                PortNum::try_from(p).unwrap_or(PortNum::MAX)
            })
            .collect();
        FabricConfig {
            engine: t.engine,
            num_vls: t.num_vls,
            classes: t.classes,
            routing_sls: t.routing_sls,
            layers: t.layers,
            lft: t.lft,
            path_sl: t.path_sl,
            sl2vl: t.sl2vl,
            nic_sl2vl: t.nic_sl2vl,
            ports,
            alt_paths: t.alt_paths,
            rule: None,
        }
    }
}

/// How different the paths of a multipath fabric are ([`FabricConfig::path_diversity`]),
/// over the ordered endpoint pairs on different switches (pairs on one switch use no
/// switch-to-switch link, so their paths cannot differ).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathDiversity {
    /// Paths per destination.
    pub paths: usize,
    /// Ordered endpoint pairs on different switches.
    pub pairs: u64,
    /// Pairs whose paths share no switch-to-switch link (directed), pairwise.
    pub disjoint_pairs: u64,
    /// Pairs whose paths are pairwise different (as sequences of switch-to-switch links).
    pub distinct_pairs: u64,
    /// Sum over the pairs of their number of different paths (divide by `pairs` for the mean).
    pub distinct_paths_sum: u64,
    /// Pairs with as many different paths as the topology has minimal paths between their
    /// switches, or `paths` if it has more: "distinct where possible" for minimal routing
    /// (parallel links count as different paths).
    pub as_distinct_as_minimal: u64,
}

impl PathDiversity {
    /// `disjoint_pairs / pairs` (1 without pairs).
    pub fn disjoint_share(&self) -> f64 {
        if self.pairs == 0 {
            1.0
        } else {
            self.disjoint_pairs as f64 / self.pairs as f64
        }
    }

    /// `distinct_pairs / pairs` (1 without pairs).
    pub fn distinct_share(&self) -> f64 {
        if self.pairs == 0 {
            1.0
        } else {
            self.distinct_pairs as f64 / self.pairs as f64
        }
    }

    /// Mean number of different paths per pair (1 without pairs).
    pub fn mean_distinct_paths(&self) -> f64 {
        if self.pairs == 0 {
            1.0
        } else {
            self.distinct_paths_sum as f64 / self.pairs as f64
        }
    }

    /// `as_distinct_as_minimal / pairs` (1 without pairs).
    pub fn minimal_share(&self) -> f64 {
        if self.pairs == 0 {
            1.0
        } else {
            self.as_distinct_as_minimal as f64 / self.pairs as f64
        }
    }
}

/// One hop of a traced path: a switch, the port the packet entered by, the port it leaves by,
/// and the VL it uses on the outgoing link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hop {
    /// Switch traversed.
    pub switch: SwitchId,
    /// Input port.
    pub in_port: PortNum,
    /// Output port.
    pub out_port: PortNum,
    /// VL on the output link.
    pub vl: u8,
}

impl FabricConfig {
    /// Number of distinct SLs on the wire (`classes · routing_sls`).
    pub fn wire_sls(&self) -> usize {
        self.classes as usize * self.routing_sls as usize
    }

    /// The port count of every switch of `topo`, as [`ports`](Self::ports) wants it.
    pub fn port_counts(topo: &Topology) -> Vec<PortNum> {
        topo.switches().iter().map(|s| s.ports).collect()
    }

    /// The wire SL a packet of traffic class `class` from `src` to `dst` carries, in a fabric
    /// of `endpoints` endpoints.
    #[inline]
    pub fn wire_sl(&self, class: Sl, src: EndpointId, dst: EndpointId, endpoints: usize) -> Sl {
        self.wire_sl_on(class, src, dst, endpoints, 0)
    }

    /// The output port of switch `s` for endpoint `e` on path `k` (`k < num_paths()`), from
    /// the tables or the [`rule`](Self::rule).
    #[inline]
    pub fn port(&self, k: usize, s: u32, e: u32) -> PortNum {
        match &self.rule {
            Some(r) if k == 0 => r.port(s, e),
            _ => self.lft_of(k)[s as usize][e as usize],
        }
    }

    /// This fabric with stored tables: the [`rule`](Self::rule)'s forwarding and path SLs
    /// written out (switches × endpoints and endpoints² entries); unchanged without a rule.
    pub fn with_tables(mut self) -> FabricConfig {
        if let Some(r) = self.rule.take() {
            self.lft = r.lft();
            self.path_sl = r.path_sls(self.routing_sls);
        }
        self
    }

    /// This fabric with stored tables, borrowed when it has them, written out from the
    /// [`rule`](Self::rule) otherwise: for the analyses that walk whole tables (channel
    /// dependencies, bisection bandwidth, OpenSM dumps).
    pub fn stored(&self) -> std::borrow::Cow<'_, FabricConfig> {
        match self.rule {
            None => std::borrow::Cow::Borrowed(self),
            Some(_) => std::borrow::Cow::Owned(self.clone().with_tables()),
        }
    }

    /// Paths per destination: 1 + [`alt_paths`](Self::alt_paths).
    pub fn num_paths(&self) -> usize {
        1 + self.alt_paths.len()
    }

    /// The forwarding tables of path `k` (`k < num_paths()`); empty for path 0 of a fabric
    /// with a [`rule`](Self::rule) (use [`port`](Self::port)).
    #[inline]
    pub fn lft_of(&self, k: usize) -> &[Vec<PortNum>] {
        if k == 0 {
            &self.lft
        } else {
            &self.alt_paths[k - 1].lft
        }
    }

    /// [`wire_sl`](Self::wire_sl) of path `k`.
    #[inline]
    pub fn wire_sl_on(
        &self,
        class: Sl,
        src: EndpointId,
        dst: EndpointId,
        endpoints: usize,
        k: usize,
    ) -> Sl {
        let p = if self.routing_sls > 1 {
            if let (Some(r), 0) = (&self.rule, k) {
                return Sl(
                    (class.0 % self.classes.max(1)) * self.routing_sls + r.path_sl(src.0, dst.0)
                );
            }
            let table = if k == 0 {
                &self.path_sl
            } else {
                &self.alt_paths[k - 1].path_sl
            };
            table[src.0 as usize * endpoints + dst.0 as usize]
        } else {
            0
        };
        Sl((class.0 % self.classes.max(1)) * self.routing_sls + p)
    }

    /// VL chosen at switch `s` for a packet with wire SL `sl` entering on `in_port`, leaving on
    /// `out_port`.
    #[inline]
    pub fn vl(&self, s: SwitchId, in_port: PortNum, out_port: PortNum, sl: Sl) -> Vl {
        let s = s.0 as usize;
        let ports = self.ports[s] as usize;
        let i = (in_port as usize * ports + out_port as usize) * self.wire_sls() + sl.idx();
        Vl(self.sl2vl[s][i])
    }

    /// An SL→VL table of the right size for `topo` filled by `f(switch, in, out, wire_sl)`.
    pub fn build_sl2vl(
        topo: &Topology,
        wire_sls: usize,
        mut f: impl FnMut(SwitchId, PortNum, PortNum, u8) -> u8,
    ) -> Vec<Vec<u8>> {
        (0..topo.num_switches() as u32)
            .map(|s| {
                let p = topo.num_ports(SwitchId(s)) as usize;
                let mut t = vec![0u8; p * p * wire_sls];
                for i in 0..p {
                    for o in 0..p {
                        for sl in 0..wire_sls {
                            t[(i * p + o) * wire_sls + sl] =
                                f(SwitchId(s), i as PortNum, o as PortNum, sl as u8);
                        }
                    }
                }
                t
            })
            .collect()
    }

    /// Checks that the tables have the sizes `topo` needs and that every VL is below `num_vls`.
    pub fn check_shape(&self, topo: &Topology) -> Result<(), RoutingError> {
        let n = topo.num_endpoints();
        let bad = |m: String| Err(RoutingError::InvalidTables(m));
        if self.num_vls == 0 || self.classes == 0 || self.routing_sls == 0 {
            return bad("num_vls, classes and routing_sls must be at least 1".into());
        }
        if self.wire_sls() > 256 {
            return bad(format!("{} wire SLs do not fit in 8 bits", self.wire_sls()));
        }
        let (lft_switches, lft_endpoints) = match &self.rule {
            Some(r) => r.size(),
            None => (self.lft.len(), n),
        };
        if lft_switches != topo.num_switches() || self.sl2vl.len() != topo.num_switches() {
            return bad(format!(
                "tables are for {lft_switches} switches, topology has {}",
                topo.num_switches()
            ));
        }
        if lft_endpoints != n {
            return bad(format!(
                "the routing rule is for {lft_endpoints} endpoints, topology has {n}"
            ));
        }
        if self.ports.len() != topo.num_switches() {
            return bad(format!(
                "port counts are for {} switches, topology has {}",
                self.ports.len(),
                topo.num_switches()
            ));
        }
        for (k, (lft, path_sl)) in self.paths().enumerate() {
            if k == 0 && self.rule.is_some() {
                // Computed: the engine checked every port the rule names against the links.
                continue;
            }
            let of = if k == 0 {
                String::new()
            } else {
                format!(" of path {k}")
            };
            if self.routing_sls > 1 && path_sl.len() != n * n {
                return bad(format!(
                    "path SL table{of} has {} entries, expected {}",
                    path_sl.len(),
                    n * n
                ));
            }
            if let Some(&x) = path_sl.iter().find(|&&x| x >= self.routing_sls) {
                return bad(format!(
                    "path SL {x}{of} is not below routing_sls = {}",
                    self.routing_sls
                ));
            }
            if lft.len() != topo.num_switches() {
                return bad(format!(
                    "tables{of} are for {} switches, topology has {}",
                    lft.len(),
                    topo.num_switches()
                ));
            }
            for (s, row) in lft.iter().enumerate() {
                let p = topo.num_ports(SwitchId(s as u32)) as usize;
                if row.len() != n {
                    return bad(format!(
                        "LFT{of} of switch {s} has {} entries, expected {n}",
                        row.len()
                    ));
                }
                if let Some(&port) = row
                    .iter()
                    .find(|&&port| port != NO_ROUTE && port as usize >= p)
                {
                    return bad(format!(
                        "LFT{of} of switch {s} names port {port}, which does not exist"
                    ));
                }
            }
        }
        if self.nic_sl2vl.len() != self.wire_sls() {
            return bad(format!(
                "NIC SL2VL has {} entries, expected {}",
                self.nic_sl2vl.len(),
                self.wire_sls()
            ));
        }
        for s in 0..topo.num_switches() {
            let p = topo.num_ports(SwitchId(s as u32)) as usize;
            if self.ports[s] as usize != p {
                return bad(format!(
                    "the tables give switch {s} {} ports, the topology {p}",
                    self.ports[s]
                ));
            }
            if self.sl2vl[s].len() != p * p * self.wire_sls() {
                return bad(format!("SL2VL of switch {s} has the wrong size"));
            }
        }
        if self
            .sl2vl
            .iter()
            .flatten()
            .chain(self.nic_sl2vl.iter())
            .any(|&v| v >= self.num_vls)
        {
            return bad(format!(
                "an SL2VL entry names a VL at or above num_vls = {}",
                self.num_vls
            ));
        }
        Ok(())
    }

    /// Checks that from every switch the LFTs lead each endpoint's traffic to that endpoint
    /// without loops or dead ends, in O(switches × endpoints): per destination, each switch is
    /// resolved once (memoised), so this scales where tracing every pair does not. Every
    /// path of a multipath fabric is checked.
    pub fn check_routes(&self, topo: &Topology) -> Result<(), RoutingError> {
        let nsw = topo.num_switches();
        let mut state = vec![0u8; nsw];
        let mut path = Vec::with_capacity(nsw);
        for (k, (lft, _)) in self.paths().enumerate() {
            if k == 0 && self.rule.is_some() {
                // A rule reaches every destination by construction: DOR corrects one
                // coordinate per hop, d-mod-k climbs to the common ancestor and descends
                // (each engine's documentation), over ports checked against the links.
                continue;
            }
            let of = if k == 0 {
                String::new()
            } else {
                format!(" (path {k})")
            };
            self.check_path_routes(topo, lft, &of, &mut state, &mut path)?;
        }
        Ok(())
    }

    /// Every path's tables: (LFT, path SLs), path 0 first.
    pub fn paths(&self) -> impl Iterator<Item = (&[Vec<PortNum>], &[u8])> {
        std::iter::once((self.lft.as_slice(), self.path_sl.as_slice())).chain(
            self.alt_paths
                .iter()
                .map(|p| (p.lft.as_slice(), p.path_sl.as_slice())),
        )
    }

    fn check_path_routes(
        &self,
        topo: &Topology,
        lft: &[Vec<PortNum>],
        of: &str,
        state: &mut [u8],
        path: &mut Vec<usize>,
    ) -> Result<(), RoutingError> {
        const UNKNOWN: u8 = 0;
        const ON_PATH: u8 = 1;
        const GOOD: u8 = 2;
        let nsw = topo.num_switches();
        for d in 0..topo.num_endpoints() as u32 {
            flitsim_topology::cancel::check()?;
            state.fill(UNKNOWN);
            for start in 0..nsw {
                let mut s = start;
                path.clear();
                loop {
                    match state[s] {
                        GOOD => break,
                        ON_PATH => {
                            return Err(RoutingError::Loop(format!(
                                "traffic to endpoint {d}{of} loops through switch {}",
                                topo.switches()[s].name
                            )))
                        }
                        _ => {}
                    }
                    let name = &topo.switches()[s].name;
                    let out = lft[s][d as usize];
                    if out == NO_ROUTE {
                        // Only an error if some endpoint's traffic actually reaches this switch;
                        // `trace` reports that case. Switches off every path may lack routes.
                        if topo.switch_endpoints(SwitchId(s as u32)).next().is_some() || start != s
                        {
                            let ep = &topo.endpoints()[d as usize];
                            return Err(RoutingError::Unroutable(format!(
                                "switch {name} has no route to endpoint {d} ({}{}){of}",
                                ep.name,
                                ep.lid.map_or(String::new(), |l| format!(", LID {l}"))
                            )));
                        }
                        break;
                    }
                    state[s] = ON_PATH;
                    path.push(s);
                    match topo
                        .switch_peer(SwitchId(s as u32), out)
                        .map(|p| p.remote.node)
                    {
                        None => {
                            return Err(RoutingError::Unroutable(format!(
                                "switch {name} routes endpoint {d}{of} to unconnected port {out}"
                            )))
                        }
                        Some(NodeId::Endpoint(e)) if e == d => break,
                        Some(NodeId::Endpoint(e)) => {
                            return Err(RoutingError::Unroutable(format!(
                                "switch {name} sends traffic for endpoint {d}{of} to endpoint {e}"
                            )))
                        }
                        Some(NodeId::Switch(t)) => s = t as usize,
                    }
                }
                for &p in path.iter() {
                    state[p] = GOOD;
                }
            }
        }
        Ok(())
    }

    /// Measures how different the [`num_paths`](Self::num_paths) paths of every ordered pair
    /// of endpoints on different switches are ([`PathDiversity`]). Paths depend only on the
    /// source switch and the destination, so each (source switch, destination) is followed
    /// once and counts for the endpoints on the source switch. Fails like
    /// [`check_routes`](Self::check_routes) on tables that do not lead to the destination.
    pub fn path_diversity(&self, topo: &Topology) -> Result<PathDiversity, RoutingError> {
        let stored = self.stored();
        let this: &FabricConfig = &stored;
        use rayon::prelude::*;
        let nsw = topo.num_switches();
        let n = topo.num_endpoints();
        let eps: Vec<u64> = (0..nsw as u32)
            .map(|s| topo.switch_endpoints(SwitchId(s)).count() as u64)
            .collect();
        let paths = self.num_paths();
        let per_dest = |d: usize| -> Result<[u64; 5], RoutingError> {
            flitsim_topology::cancel::check()?;
            let (t, _) = topo.endpoint_switch(EndpointId(d as u32));
            // Minimal paths from every switch to t (parallel links apart), capped at `paths`.
            let dist = flitsim_topology::Bfs::default()
                .switches(topo, [t.0])
                .to_vec();
            let mut order: Vec<usize> = (0..nsw).filter(|&s| dist[s] != u32::MAX).collect();
            order.sort_by_key(|&s| dist[s]);
            let mut count = vec![0usize; nsw];
            count[t.0 as usize] = 1;
            for &s in &order {
                if s == t.0 as usize {
                    continue;
                }
                count[s] = topo
                    .switch_neighbours(SwitchId(s as u32))
                    .filter(|(_, x, _)| dist[x.0 as usize].wrapping_add(1) == dist[s])
                    .map(|(_, x, _)| count[x.0 as usize])
                    .sum::<usize>()
                    .min(paths);
            }
            let mut seqs: Vec<Vec<usize>> = vec![Vec::new(); paths];
            let (mut pairs, mut disjoint, mut distinct) = (0, 0, 0);
            let (mut distinct_sum, mut as_minimal) = (0, 0);
            for s0 in (0..nsw).filter(|&s| eps[s] > 0 && s != t.0 as usize) {
                for (k, seq) in seqs.iter_mut().enumerate() {
                    seq.clear();
                    let lft = this.lft_of(k);
                    let mut s = s0;
                    while s != t.0 as usize {
                        let out = lft[s][d];
                        let next = (out != NO_ROUTE)
                            .then(|| topo.switch_peer(SwitchId(s as u32), out))
                            .flatten()
                            .map(|p| p.remote.node);
                        let Some(NodeId::Switch(x)) = next else {
                            return Err(RoutingError::Unroutable(format!(
                                "switch {} has no route to endpoint {d} (path {k})",
                                topo.switches()[s].name
                            )));
                        };
                        seq.push(topo.port_index(SwitchId(s as u32), out));
                        if seq.len() > nsw {
                            return Err(RoutingError::Loop(format!(
                                "traffic to endpoint {d} (path {k}) loops through switch {}",
                                topo.switches()[s].name
                            )));
                        }
                        s = x as usize;
                    }
                }
                let w = eps[s0];
                pairs += w;
                let mut all_distinct = true;
                let mut all_disjoint = true;
                for a in 0..paths {
                    for b in a + 1..paths {
                        if seqs[a] == seqs[b] {
                            all_distinct = false;
                        }
                        if seqs[a].iter().any(|c| seqs[b].contains(c)) {
                            all_disjoint = false;
                        }
                    }
                }
                disjoint += w * all_disjoint as u64;
                distinct += w * all_distinct as u64;
                let different = (0..paths)
                    .filter(|&a| (0..a).all(|b| seqs[a] != seqs[b]))
                    .count();
                distinct_sum += w * different as u64;
                as_minimal += w * (different >= count[s0].max(1)) as u64;
            }
            Ok([pairs, disjoint, distinct, distinct_sum, as_minimal])
        };
        let parts: Vec<[u64; 5]> = (0..n)
            .into_par_iter()
            .map(per_dest)
            .collect::<Result<_, _>>()?;
        let sum = |i: usize| parts.iter().map(|p| p[i]).sum();
        Ok(PathDiversity {
            paths,
            pairs: sum(0),
            disjoint_pairs: sum(1),
            distinct_pairs: sum(2),
            distinct_paths_sum: sum(3),
            as_distinct_as_minimal: sum(4),
        })
    }

    /// Follows the tables from `src` to `dst` for traffic `class`. Fails if the path leaves
    /// through an unconnected port, has no route, or loops.
    pub fn trace(
        &self,
        topo: &Topology,
        src: EndpointId,
        dst: EndpointId,
        class: u8,
    ) -> Result<Vec<Hop>, RoutingError> {
        self.trace_path(topo, src, dst, class, 0)
    }

    /// [`trace`](Self::trace) along path `k` (`k < num_paths()`).
    pub fn trace_path(
        &self,
        topo: &Topology,
        src: EndpointId,
        dst: EndpointId,
        class: u8,
        k: usize,
    ) -> Result<Vec<Hop>, RoutingError> {
        let n = topo.num_endpoints();
        let sl = self.wire_sl_on(Sl(class), src, dst, n, k);
        let (mut s, mut in_port) = topo.endpoint_switch(src);
        let mut hops = Vec::new();
        loop {
            let out = self.port(k, s.0, dst.0);
            if out == NO_ROUTE {
                return Err(RoutingError::Unroutable(format!(
                    "switch {} has no route to endpoint {}",
                    topo.switches()[s.0 as usize].name,
                    dst.0
                )));
            }
            hops.push(Hop {
                switch: s,
                in_port,
                out_port: out,
                vl: self.vl(s, in_port, out, sl).0,
            });
            if hops.len() > topo.num_switches() + 1 {
                return Err(RoutingError::Loop(format!(
                    "path from endpoint {} to {} loops (through switch {})",
                    src.0,
                    dst.0,
                    topo.switches()[s.0 as usize].name
                )));
            }
            match topo.switch_peer(s, out).map(|p| p.remote) {
                None => {
                    return Err(RoutingError::Unroutable(format!(
                        "switch {} routes endpoint {} to unconnected port {out}",
                        topo.switches()[s.0 as usize].name,
                        dst.0
                    )))
                }
                Some(r) => match r.node {
                    NodeId::Endpoint(e) if e == dst.0 => return Ok(hops),
                    NodeId::Endpoint(e) => {
                        return Err(RoutingError::Unroutable(format!(
                            "path to endpoint {} ends at endpoint {e}",
                            dst.0
                        )))
                    }
                    NodeId::Switch(t) => {
                        s = SwitchId(t);
                        in_port = r.port;
                    }
                },
            }
        }
    }
}

#[cfg(test)]
mod route_check_tests {
    use crate::routing::{route, RoutingRequest};
    use crate::{RoutingError, NO_ROUTE};
    use flitsim_topology::{generators, EndpointId};

    #[test]
    fn engine_tables_pass_and_agree_with_tracing_every_pair() {
        let t = generators::torus(&[4, 4], 2, 1, 1).unwrap();
        let f = route(&t, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
        f.check_routes(&t).unwrap();
        for s in 0..32 {
            for d in 0..32 {
                f.trace(&t, EndpointId(s), EndpointId(d), 0).unwrap();
            }
        }
    }

    #[test]
    fn loops_and_dead_ends_are_named() {
        let t = generators::torus(&[4], 1, 1, 1).unwrap();
        let mut f = route(&t, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
        // Switch 1 sends traffic for endpoint 3 back towards switch 0, which sends it forward.
        let minus = 1; // port 1 is "−dim0" on a 1-D torus
        f.lft[1][3] = minus;
        f.lft[0][3] = 0;
        match f.check_routes(&t) {
            Err(RoutingError::Loop(m)) => assert!(m.contains("endpoint 3"), "{m}"),
            other => panic!("expected a loop, got {other:?}"),
        }
        let mut g = route(&t, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
        g.lft[2][0] = NO_ROUTE;
        let e = g.check_routes(&t).unwrap_err().to_string();
        assert!(e.contains("no route to endpoint 0"), "{e}");
    }
}

#[cfg(test)]
mod serde_tests {
    use crate::routing::{route, RoutingRequest};
    use crate::FabricConfig;
    use flitsim_topology::{generators, Sl, SwitchId, Vl};

    /// The JSON form holds the tables only; reading it back derives the same port counts.
    #[test]
    fn json_omits_port_counts_and_reading_derives_them() {
        let t = generators::kary_ntree(4, 2, 1).unwrap();
        let f = route(&t, "updn", &RoutingRequest { vls: 2, classes: 2 }).unwrap();
        assert_eq!(f.ports, FabricConfig::port_counts(&t));
        let json = serde_json::to_string(&f).unwrap();
        assert!(!json.contains("\"ports\""), "{json}");
        let back: FabricConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back, f);
        back.check_shape(&t).unwrap();
        let mut wrong = f.clone();
        wrong.ports[0] += 1;
        let e = wrong.check_shape(&t).unwrap_err().to_string();
        assert!(e.contains("switch 0"), "{e}");
    }

    /// `vl` reads `sl2vl[s][(in · ports + out) · wire_sls + sl]`.
    #[test]
    fn vl_indexes_the_switch_table() {
        let t = generators::torus(&[4], 1, 1, 1).unwrap();
        let mut f = route(&t, "dor", &RoutingRequest { vls: 4, classes: 2 }).unwrap();
        let (p, w) = (f.ports[1] as usize, f.wire_sls());
        f.sl2vl[1][(2 * p + 1) * w + w - 1] = 3;
        assert_eq!(f.vl(SwitchId(1), 2, 1, Sl(w as u8 - 1)), Vl(3));
        f.sl2vl[1][(2 * p + 1) * w + w - 1] = 2;
        assert_eq!(f.vl(SwitchId(1), 2, 1, Sl(w as u8 - 1)), Vl(2));
    }
}
