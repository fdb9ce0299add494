//! Random irregular networks ([`random`]), the networks of Domke, Hoefler and Nagel's
//! Fig. 9.
use super::{attach_endpoints, check_size, finish, param_err, sw};
use crate::{Link, PortNum, Shape, Switch, Topology, TopologyError};
use rand::{seq::SliceRandom, Rng};
use rand_pcg::Pcg64;
use std::collections::HashSet;

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

/// A set of indices `0..n` that can give its `k`-th smallest member in O(log n) (a Fenwick
/// tree of membership counts), so that picking a random switch among those with a free port
/// does not rescan all switches.
struct Selector {
    tree: Vec<u32>,
    member: Vec<bool>,
    len: usize,
}

impl Selector {
    fn new(n: usize) -> Self {
        Selector {
            tree: vec![0; n + 1],
            member: vec![false; n],
            len: 0,
        }
    }
    fn len(&self) -> usize {
        self.len
    }
    fn set(&mut self, i: usize, on: bool) {
        if self.member[i] == on {
            return;
        }
        self.member[i] = on;
        if on {
            self.len += 1;
        } else {
            self.len -= 1;
        }
        let mut j = i + 1;
        while j < self.tree.len() {
            if on {
                self.tree[j] += 1;
            } else {
                self.tree[j] -= 1;
            }
            j += j & j.wrapping_neg();
        }
    }
    /// The `k`-th smallest member (`k < len`).
    fn nth(&self, k: usize) -> usize {
        let n = self.tree.len() - 1;
        let mut pos = 0;
        let mut rem = k as u32;
        let mut step = n.next_power_of_two();
        while step > 0 {
            let next = pos + step;
            if next <= n && self.tree[next] <= rem {
                pos = next;
                rem -= self.tree[next];
            }
            step >>= 1;
        }
        pos
    }
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
    if p.ports == 0 || p.ports > PortNum::MAX as u32 {
        return Err(param_err(format!(
            "random: {} ports per switch is out of range 1..={}",
            p.ports,
            PortNum::MAX
        )));
    }
    if p.latency == 0 {
        return Err(param_err("random: latency must be at least 1"));
    }
    check_size(
        "random",
        u64::from(n),
        u64::from(n) * u64::from(p.endpoints_per_switch),
        u64::from(n) * u64::from(p.ports),
    )?;
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
            2 * u64::from(p.links),
            u64::from(n) * u64::from(free_per)
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
    let mut adj = HashSet::new();
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    let mut order: Vec<u32> = (0..n).collect();
    order.shuffle(&mut rng);
    // The candidates for switch order[i] are the earlier switches with a free port, in
    // order; `cands` marks their positions in `order` so that picking one is O(log n).
    let mut position = vec![0u32; n as usize];
    for (i, &s) in order.iter().enumerate() {
        position[s as usize] = i as u32;
    }
    let mut cands = Selector::new(n as usize);
    for i in 1..order.len() {
        let s = order[i];
        if free[order[i - 1] as usize] > 0 {
            cands.set(i - 1, true);
        }
        if cands.len() == 0 {
            return Err(TopologyError::Parameters(
                "not enough free ports to connect all switches".into(),
            ));
        }
        let t = order[cands.nth(rng.gen_range(0..cands.len()))];
        free[s as usize] -= 1;
        free[t as usize] -= 1;
        if free[t as usize] == 0 {
            cands.set(position[t as usize] as usize, false);
        }
        adj.insert((s.min(t), s.max(t)));
        pairs.push((s, t));
    }
    // Switches with a free port, by index.
    let mut open = Selector::new(n as usize);
    for (s, &f) in free.iter().enumerate() {
        if f > 0 {
            open.set(s, true);
        }
    }
    let mut attempts = 0u64;
    let mut misses = 0u32;
    while (pairs.len() as u32) < p.links {
        attempts += 1;
        if attempts > 1_000_000 {
            return Err(TopologyError::Parameters(format!(
                "could not place {} links (placed {}); try fewer links or allow multi-links",
                p.links,
                pairs.len()
            )));
        }
        // Stuck: the switches with free ports cannot be linked to each other (one switch
        // left, or all already neighbours). Edge switching frees the way; it only happens
        // where the plain random draw could never finish, so networks it completes are
        // those it always built.
        if open.len() < 2 || (misses >= 1000 && !linkable(&free, &adj, p.multi_links)) {
            let placed = edge_switch(&free, &mut adj, &mut pairs, n, p.multi_links, &mut rng);
            let Some(ends) = placed else {
                return Err(TopologyError::Parameters(format!(
                    "could not place {} links (placed {}); try fewer links or allow multi-links",
                    p.links,
                    pairs.len()
                )));
            };
            for x in ends {
                free[x as usize] -= 1;
                if free[x as usize] == 0 {
                    open.set(x as usize, false);
                }
            }
            misses = 0;
            continue;
        }
        let s = open.nth(rng.gen_range(0..open.len())) as u32;
        let t = open.nth(rng.gen_range(0..open.len())) as u32;
        if s == t || (!p.multi_links && adj.contains(&(s.min(t), s.max(t)))) {
            misses += 1;
            continue;
        }
        misses = 0;
        for x in [s, t] {
            free[x as usize] -= 1;
            if free[x as usize] == 0 {
                open.set(x as usize, false);
            }
        }
        adj.insert((s.min(t), s.max(t)));
        pairs.push((s, t));
    }
    let switches = (0..n)
        .map(|i| Switch {
            name: format!("sw{i}"),
            ports: p.ports as PortNum,
            ..Switch::default()
        })
        .collect();
    let (endpoints, mut links) =
        attach_endpoints((0..n).map(|_| p.endpoints_per_switch), 0, p.latency);
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
    finish(Topology::new(
        format!("random-{}sw-{}l-s{}", n, p.links, p.seed),
        Shape::Irregular,
        switches,
        endpoints,
        links,
    ))
}

/// Whether two different switches with free ports can still be linked.
fn linkable(free: &[u32], adj: &HashSet<(u32, u32)>, multi: bool) -> bool {
    let open: Vec<u32> = (0..free.len() as u32)
        .filter(|&s| free[s as usize] > 0)
        .collect();
    open.iter().enumerate().any(|(i, &s)| {
        open[i + 1..]
            .iter()
            .any(|&t| multi || !adj.contains(&(s.min(t), s.max(t))))
    })
}

/// Whether the links `pairs` connect all `n` switches.
fn connected(n: u32, pairs: &[(u32, u32)]) -> bool {
    let mut nb: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for &(a, b) in pairs {
        nb[a as usize].push(b);
        nb[b as usize].push(a);
    }
    let mut seen = vec![false; n as usize];
    let mut stack = vec![0u32];
    seen[0] = true;
    let mut count = 1;
    while let Some(x) = stack.pop() {
        for &y in &nb[x as usize] {
            if !seen[y as usize] {
                seen[y as usize] = true;
                count += 1;
                stack.push(y);
            }
        }
    }
    count == n as usize
}

/// One edge switch when the free ports cannot be paired: with `s` and `t` the two lowest
/// switches with a free port (`t = s` when only `s` has free ports, then at least two),
/// replaces a link `a – b` away from both by `s – a` and `t – b`, keeping every degree but
/// those of `s` and `t` and the network connected. Links are tried from a random start in
/// order; the ends whose free port was used, or `None` when no link works.
fn edge_switch(
    free: &[u32],
    adj: &mut HashSet<(u32, u32)>,
    pairs: &mut Vec<(u32, u32)>,
    n: u32,
    multi: bool,
    rng: &mut Pcg64,
) -> Option<[u32; 2]> {
    let mut open = (0..n).filter(|&x| free[x as usize] > 0);
    let s = open.next()?;
    let t = open.next().unwrap_or(s);
    if s == t && free[s as usize] < 2 {
        return None;
    }
    let key = |x: u32, y: u32| (x.min(y), x.max(y));
    let start = rng.gen_range(0..pairs.len().max(1));
    for k in 0..pairs.len() {
        let i = (start + k) % pairs.len();
        let (a0, b0) = pairs[i];
        for (a, b) in [(a0, b0), (b0, a0)] {
            if [a, b].iter().any(|&x| x == s || x == t) {
                continue;
            }
            if !multi && (adj.contains(&key(s, a)) || adj.contains(&key(t, b))) {
                continue;
            }
            let old = pairs[i];
            pairs[i] = (s, a);
            pairs.push((t, b));
            if connected(n, pairs) {
                if !multi || !pairs[..pairs.len() - 1].contains(&old) {
                    adj.remove(&key(a, b));
                }
                adj.insert(key(s, a));
                adj.insert(key(t, b));
                return Some([s, t]);
            }
            pairs.pop();
            pairs[i] = old;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NodeId;

    /// The VOQsw paper's networks (8 ports: 4 hosts, 4 links each, no parallel links) for every
    /// seed: exactly regular, simple and connected. Before edge switching, about half of the
    /// seeds failed (`switches=8, …, seed=1`: "could not place 16 links (placed 15)").
    #[test]
    fn exactly_regular_networks_for_every_seed() {
        for n in [8u32, 16, 32, 64] {
            for seed in 0..25 {
                let t = random(&RandomParams {
                    switches: n,
                    ports: 8,
                    endpoints_per_switch: 4,
                    links: 2 * n,
                    multi_links: false,
                    latency: 1,
                    seed,
                })
                .unwrap_or_else(|e| panic!("{n} switches, seed {seed}: {e}"));
                assert!(t.is_connected());
                let mut deg = vec![0; n as usize];
                let mut seen = HashSet::new();
                for l in t.links() {
                    if let (NodeId::Switch(a), NodeId::Switch(b)) = (l.a.node, l.b.node) {
                        assert_ne!(a, b);
                        assert!(seen.insert((a.min(b), a.max(b))), "parallel link {a}-{b}");
                        deg[a as usize] += 1;
                        deg[b as usize] += 1;
                    }
                }
                assert!(
                    deg.iter().all(|&d| d == 4),
                    "{n} switches, seed {seed}: {deg:?}"
                );
            }
        }
        // One switch left with free ports (multi-links allowed): also repaired.
        for seed in 0..10 {
            let t = random(&RandomParams {
                switches: 6,
                ports: 4,
                endpoints_per_switch: 0,
                links: 12,
                multi_links: true,
                latency: 1,
                seed,
            })
            .unwrap();
            assert!(t.is_connected() && t.links().len() == 12);
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
