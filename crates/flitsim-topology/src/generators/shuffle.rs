//! The folded (bidirectional) perfect-shuffle multistage network ([`folded_shuffle_min`]), the
//! "butterfly MIN" of Martínez et al.'s deadline-QoS study.
use super::{attach_endpoints, check_size, finish, param_err, sw};
use crate::{Link, PortNum, Shape, Switch, Topology, TopologyError};

/// How a folded perfect-shuffle MIN of `endpoints` endpoints and `radix`-port switches is laid
/// out: `stages` stages, `down` endpoint-side ports on every switch below the top stage, `top`
/// down ports used on each top-stage switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShuffleMinLayout {
    /// Number of stages `n`.
    pub stages: u32,
    /// `k = radix / 2`: down (and up) ports of a switch below the top stage.
    pub down: u32,
    /// `t = endpoints / k^(n−1)`: the down ports a top-stage switch uses (`≤ radix`).
    pub top: u32,
    /// Switches in each stage below the top (`endpoints / k`).
    pub per_stage: u32,
    /// Switches in the top stage (`k^(n−1)`).
    pub top_switches: u32,
}

impl ShuffleMinLayout {
    /// The layout [`folded_shuffle_min`] builds, or why there is none.
    pub fn new(endpoints: u32, radix: u32) -> Result<Self, TopologyError> {
        if radix < 4 || !radix.is_multiple_of(2) {
            return Err(param_err(format!(
                "min: radix {radix}: must be an even number of ports, at least 4"
            )));
        }
        if u64::from(radix) > PortNum::MAX as u64 {
            return Err(param_err(format!(
                "min: {radix} ports per switch is too many (at most {})",
                PortNum::MAX
            )));
        }
        if endpoints < 2 {
            return Err(param_err(format!(
                "min: endpoints {endpoints}: must be at least 2"
            )));
        }
        let k = radix / 2;
        if endpoints <= radix {
            // One switch holds them all.
            return Ok(ShuffleMinLayout {
                stages: 1,
                down: k,
                top: endpoints,
                per_stage: 0,
                top_switches: 1,
            });
        }
        // The fewest stages n with endpoints ≤ 2k·k^(n−1); `low` = k^(n−1).
        let (mut stages, mut low) = (2u32, u64::from(k));
        while u64::from(endpoints) > 2 * low * u64::from(k) {
            stages += 1;
            low *= u64::from(k);
        }
        if !u64::from(endpoints).is_multiple_of(low) {
            // Both neighbours are valid: `below` ≥ 2·k^(n−1) (then it fits n − 1 stages with a
            // full top radix) and `above` ≤ 2k·k^(n−1).
            let below = u64::from(endpoints) / low * low;
            let above = below + low;
            return Err(param_err(format!(
                "min: {endpoints} endpoints need {stages} stages of radix-{radix} switches, and \
                 then must be a multiple of {low} = {k}^{} (the endpoints below one top-stage \
                 port); try {below} or {above}",
                stages - 1,
            )));
        }
        let top = (u64::from(endpoints) / low) as u32;
        Ok(ShuffleMinLayout {
            stages,
            down: k,
            top,
            per_stage: endpoints / k,
            top_switches: low as u32,
        })
    }

    /// Switches in total: `(n − 1)·N/k + k^(n−1)`.
    pub fn switches(&self) -> u64 {
        u64::from(self.stages - 1) * u64::from(self.per_stage) + u64::from(self.top_switches)
    }

    /// The down radix of stage `i`: `k` below the top, `t` at the top.
    fn radix_of(&self, i: u32) -> u32 {
        if i + 1 == self.stages {
            self.top
        } else {
            self.down
        }
    }

    /// The first switch id of stage `i`.
    fn base(&self, i: u32) -> u32 {
        i * self.per_stage
    }
}

/// The perfect `r`-shuffle of `n` wires (`r` divides `n`): cut the deck into `r` piles of
/// `n / r` consecutive wires and deal them out interleaved, so wire `a·(n/r) + b` goes to
/// position `b·r + a` (for `x < n − 1` this is `r·x mod (n − 1)`, Stone's shuffle for `r = 2`).
pub fn perfect_shuffle(x: u64, r: u64, n: u64) -> u64 {
    let pile = n / r;
    (x % pile) * r + x / pile
}

/// A folded (bidirectional) perfect-shuffle multistage interconnection network with
/// `endpoints` endpoints and switches of `radix` ports: the network of Martínez, Alfaro,
/// Sánchez, Quiles and Duato, "Efficient Deadline-Based QoS Algorithms for High-Performance
/// Networks", IEEE TC 2008, §4.1 ("a butterfly MIN with 128 endpoints … a folded
/// (bidirectional) perfect-shuffle", 16-port switches), as `min:endpoints=128,radix=16`.
///
/// **Construction.** Let `k = radix / 2`. A unidirectional shuffle-exchange (Omega) network
/// (D. H. Lawrie, "Access and alignment of data in an array processor", IEEE TC 1975; H. S.
/// Stone, "Parallel processing with the perfect shuffle", IEEE TC 1971) is folded at its last
/// stage: endpoints sit only on stage 0, links are bidirectional, and the top stage turns
/// packets back, so it needs no up ports and may use *all* its ports as down ports. Hence:
///
/// - `n` stages, the fewest with `N ≤ 2k·k^(n−1)`; `N` must be a multiple of `k^(n−1)` and
///   `t = N / k^(n−1)` (`2 < t ≤ 2k`) is the top radix. `N ≤ radix` gives one switch.
/// - Stages `0..n−1` below the top have `N / k` switches each, with down ports `0..k` and up
///   ports `k..2k`; the top stage has `k^(n−1)` switches using down ports `0..t`. Every switch
///   has `radix` ports. Switch `i·N/k + w` is `w` of stage `i` (named `min_s{i}_{w}`).
/// - Endpoint `e` is on port `e mod k` of stage-0 switch `e / k`.
/// - Between stage `i` and `i + 1` the `N` wires are permuted by the perfect `r`-shuffle
///   ([`perfect_shuffle`]), `r` being the down radix of stage `i + 1` (`k`, or `t` into the top
///   stage): up port `k + j` of switch `w` is wire `x = w·k + j`; with `y = shuffle(x)` it
///   meets down port `y mod r` of switch `y / r` of stage `i + 1`.
///
/// Each shuffle moves the leading mixed-radix digit of the wire address to the end, so after
/// the `n − 1` shuffles the top-stage switch reached is named by the up ports taken alone:
/// from every stage-0 switch each top-stage switch is reached by exactly one up path (the
/// banyan property; `k^(n−1)` top switches = that many disjoint ways up). Omega and butterfly
/// networks are topologically equivalent (C.-L. Wu and T.-Y. Feng, "On a class of multistage
/// interconnection networks", IEEE TC 1980), so this graph is isomorphic to
/// XGFT(n; k,…,k,t; 1,k,…,k) (`xgft:h=n−1,m=k,…,k,t,w=k,…,k,endpoints=k`) with another
/// numbering; its shape is therefore [`Shape::Irregular`] (the tree engines do not take it;
/// `minhop` routes it on shortest paths, which are up*/down* here, and `updn` finds the top
/// stage as its roots).
///
/// **The paper's network**: 128 endpoints, radix 16 → `k = 8`, `n = 2`, `t = 16`: 16 stage-0
/// switches (8 endpoints, 8 up links each) and 8 top switches (16 down links each), every
/// stage-0 switch linked once to every top switch by the 16-shuffle of the 128 wires — the
/// largest two-stage folded network of 16-port switches, with full bisection bandwidth.
/// 24 switches, 128 endpoint links and 128 switch-to-switch links.
///
/// Counts: `(n − 1)·N/k + k^(n−1)` switches, `N` endpoint links and `(n − 1)·N` switch links.
/// Errors ([`TopologyError::Parameters`]): an odd radix or one below 4, fewer than 2 endpoints,
/// an endpoint count that is not a multiple of `k^(n−1)` (the message proposes the nearest
/// ones), sizes over the limits, latency 0.
pub fn folded_shuffle_min(
    endpoints: u32,
    radix: u32,
    latency: u32,
) -> Result<Topology, TopologyError> {
    if latency == 0 {
        return Err(param_err("min: latency must be at least 1"));
    }
    let l = ShuffleMinLayout::new(endpoints, radix)?;
    let switches64 = l.switches();
    check_size(
        "min",
        switches64,
        u64::from(endpoints),
        switches64.saturating_mul(u64::from(radix)),
    )?;
    let k = l.down;
    let n = u64::from(endpoints);
    let switches = (0..l.stages)
        .flat_map(|i| {
            let count = if i + 1 == l.stages {
                l.top_switches
            } else {
                l.per_stage
            };
            (0..count).map(move |w| (i, w))
        })
        .map(|(i, w)| Switch {
            name: format!("min_s{i}_{w}"),
            ports: radix as PortNum,
            ..Switch::default()
        })
        .collect();
    let mut links = Vec::new();
    for i in 0..l.stages - 1 {
        let r = l.radix_of(i + 1);
        for w in 0..l.per_stage {
            for j in 0..k {
                let x = u64::from(w) * u64::from(k) + u64::from(j);
                let y = perfect_shuffle(x, u64::from(r), n);
                links.push(Link {
                    a: sw(l.base(i) + w, k + j),
                    b: sw(
                        l.base(i + 1) + (y / u64::from(r)) as u32,
                        (y % u64::from(r)) as u32,
                    ),
                    latency,
                    width: 1,
                });
            }
        }
    }
    let leaves = if l.stages == 1 {
        vec![endpoints]
    } else {
        vec![k; l.per_stage as usize]
    };
    let (eps, endpoint_links) = attach_endpoints(leaves, 0, latency);
    links.extend(endpoint_links);
    finish(Topology::new(
        format!("folded-shuffle-min-{endpoints}-r{radix}"),
        Shape::Irregular,
        switches,
        eps,
        links,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::from_spec;
    use crate::{NodeId, SwitchId};
    use std::collections::BTreeMap;

    fn peer_switch(t: &Topology, s: u32, p: u32) -> Option<u32> {
        match t.switch_peer(SwitchId(s), p as PortNum)?.remote.node {
            NodeId::Switch(x) => Some(x),
            NodeId::Endpoint(_) => None,
        }
    }

    /// Switch and link counts of the closed form, and every switch within its radix.
    fn check_counts(t: &Topology, n_eps: u32, radix: u32, stages: u32) {
        let k = radix / 2;
        let top = (k as u64).pow(stages - 1);
        let want_sw = u64::from(stages - 1) * u64::from(n_eps / k) + top;
        assert_eq!(t.num_switches() as u64, want_sw, "{}", t.name());
        assert_eq!(t.num_endpoints(), n_eps as usize);
        let switch_links = t
            .links()
            .iter()
            .filter(|l| matches!((l.a.node, l.b.node), (NodeId::Switch(_), NodeId::Switch(_))))
            .count();
        assert_eq!(
            switch_links as u64,
            u64::from(stages - 1) * u64::from(n_eps)
        );
        assert_eq!(t.links().len() as u64, u64::from(stages) * u64::from(n_eps));
        for s in 0..t.num_switches() as u32 {
            assert_eq!(t.num_ports(SwitchId(s)) as u32, radix);
            let used = (0..radix)
                .filter(|&p| t.switch_peer(SwitchId(s), p as PortNum).is_some())
                .count();
            assert!(used <= radix as usize);
        }
        assert!(t.is_connected());
    }

    #[test]
    fn the_papers_network_is_a_full_two_stage_folded_clos() {
        let t = from_spec("min:endpoints=128,radix=16").unwrap();
        check_counts(&t, 128, 16, 2);
        assert_eq!((t.num_switches(), t.links().len()), (24, 256));
        // Every port of every switch is used: 16·16 + 8·16.
        for s in 0..24u32 {
            for p in 0..16u32 {
                assert!(
                    t.switch_peer(SwitchId(s), p as PortNum).is_some(),
                    "{s}:{p}"
                );
            }
        }
        // Stage-0 switch w meets every top switch exactly once: up port 8 + j goes to top
        // switch j, down port w (the 16-shuffle of wire 8w + j is 16j + w).
        for w in 0..16u32 {
            for j in 0..8u32 {
                let p = t
                    .switch_peer(SwitchId(w), (8 + j) as PortNum)
                    .unwrap()
                    .remote;
                assert_eq!((p.node, p.port as u32), (NodeId::Switch(16 + j), w));
            }
        }
        // Endpoint e on stage-0 switch e / 8, port e mod 8.
        for e in [0u32, 7, 8, 127] {
            let (s, p) = t.endpoint_switch(crate::EndpointId(e));
            assert_eq!((s.0, p as u32), (e / 8, e % 8));
        }
    }

    #[test]
    fn shuffle_is_a_digit_rotation() {
        // r·x mod (n − 1) for x < n − 1, and the last wire fixed.
        for (r, n) in [(2u64, 16u64), (16, 128), (4, 64), (8, 32)] {
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = perfect_shuffle(x, r, n);
                let want = if x == n - 1 { n - 1 } else { r * x % (n - 1) };
                assert_eq!(y, want, "r={r} n={n} x={x}");
                seen[y as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "a permutation");
        }
    }

    /// Up paths from every stage-0 switch: each top switch is reached by exactly one (banyan).
    fn assert_banyan(t: &Topology, l: &ShuffleMinLayout) {
        let k = l.down;
        for leaf in 0..l.per_stage {
            let mut frontier = BTreeMap::from([(leaf, 1u64)]);
            for _ in 0..l.stages - 1 {
                let mut next = BTreeMap::new();
                for (&s, &ways) in &frontier {
                    for j in 0..k {
                        let up = peer_switch(t, s, k + j).expect("up link");
                        *next.entry(up).or_insert(0) += ways;
                    }
                }
                frontier = next;
            }
            let first_top = (l.stages - 1) * l.per_stage;
            let want: BTreeMap<u32, u64> =
                (0..l.top_switches).map(|s| (first_top + s, 1)).collect();
            assert_eq!(frontier, want, "{} from leaf {leaf}", t.name());
        }
    }

    #[test]
    fn three_stage_networks_are_banyan_and_within_radix() {
        for (n_eps, radix) in [
            (64u32, 8u32),
            (48, 8),
            (128, 8),
            (96, 8),
            (512, 16),
            (24, 4),
        ] {
            let t = folded_shuffle_min(n_eps, radix, 1).unwrap();
            let l = ShuffleMinLayout::new(n_eps, radix).unwrap();
            check_counts(&t, n_eps, radix, l.stages);
            assert_banyan(&t, &l);
        }
        let l = ShuffleMinLayout::new(128, 8).unwrap();
        assert_eq!(
            (l.stages, l.top, l.top_switches, l.per_stage),
            (3, 8, 16, 32)
        );
        let l = ShuffleMinLayout::new(64, 16).unwrap();
        assert_eq!((l.stages, l.top, l.top_switches), (2, 8, 8));
    }

    /// Same hop-distance histogram between endpoints as the XGFT it is isomorphic to.
    #[test]
    fn distances_match_the_equivalent_xgft() {
        for (spec, xgft) in [
            (
                "min:endpoints=128,radix=16",
                "xgft:h=1,m=16,w=8,endpoints=8",
            ),
            (
                "min:endpoints=64,radix=8",
                "xgft:h=2,m=4,4,w=4,4,endpoints=4",
            ),
            (
                "min:endpoints=96,radix=8",
                "xgft:h=2,m=4,6,w=4,4,endpoints=4",
            ),
        ] {
            let hist = |t: &Topology| {
                let mut h = BTreeMap::new();
                for a in 0..t.num_endpoints() as u32 {
                    let (sa, _) = t.endpoint_switch(crate::EndpointId(a));
                    let d = t.switch_distances(sa);
                    for b in 0..t.num_endpoints() as u32 {
                        let (sb, _) = t.endpoint_switch(crate::EndpointId(b));
                        *h.entry(d[sb.0 as usize]).or_insert(0u64) += 1;
                    }
                }
                h
            };
            let a = from_spec(spec).unwrap();
            let b = from_spec(xgft).unwrap();
            assert_eq!(
                (a.num_switches(), a.links().len()),
                (b.num_switches(), b.links().len())
            );
            assert_eq!(hist(&a), hist(&b), "{spec} vs {xgft}");
        }
    }

    #[test]
    fn small_and_bad_parameters() {
        let t = from_spec("min:endpoints=10,radix=16").unwrap();
        assert_eq!(
            (t.num_switches(), t.num_endpoints(), t.links().len()),
            (1, 10, 10)
        );
        let e = |s: &str| from_spec(s).unwrap_err().to_string();
        assert!(
            e("min:endpoints=100,radix=16").contains("multiple of 8"),
            "{}",
            e("min:endpoints=100,radix=16")
        );
        assert!(e("min:endpoints=100,radix=16").contains("try 96 or 104"));
        assert!(e("min:endpoints=128,radix=15").contains("even"));
        assert!(e("min:endpoints=128,radix=2").contains("at least 4"));
        assert!(e("min:endpoints=1,radix=16").contains("at least 2"));
        assert!(e("min:radix=16").contains("missing parameter 'endpoints'"));
        assert!(e("min:endpoints=128,radix=16,latency=0").contains("latency"));
        assert!(e("min:endpoints=128,radix=16,k=2").contains("unknown parameter 'k'"));
        assert!(e("min:endpoints=4294967295,radix=4").contains("min:"));
        assert!(e("min:endpoints=128,radix=131072").contains("too many"));
    }
}
