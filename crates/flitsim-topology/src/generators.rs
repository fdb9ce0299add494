//! Topology generators. Each documents its port numbering (in its own documentation and in
//! [`Shape`]), which routing engines rely on, and its source. Every generated topology has
//! GUIDs and LIDs ([`Topology::assign_guids_and_lids`]). [`from_spec`] builds any of them from
//! a one-line spec such as `xgft:h=2,m=10,10,w=5,5`; [`table1_presets`] lists the networks of
//! Domke, Hoefler and Nagel (IPDPS 2011), Table I.
use crate::{Endpoint, Link, NodeId, PortNum, PortRef, Shape, Switch, Topology, TopologyError};
use rand::{seq::SliceRandom, Rng};
use rand_pcg::Pcg64;

fn sw(s: u32, p: u32) -> PortRef {
    PortRef {
        node: NodeId::Switch(s),
        port: p as PortNum,
    }
}
fn ep(e: u32) -> PortRef {
    PortRef {
        node: NodeId::Endpoint(e),
        port: 0,
    }
}

/// Coordinates of switch `i` in a torus/mesh with `sides` (dimension 0 fastest).
pub fn coords(sides: &[u32], mut i: u32) -> Vec<u32> {
    sides
        .iter()
        .map(|&k| {
            let c = i % k;
            i /= k;
            c
        })
        .collect()
}

/// Index of the switch at `c` in a torus/mesh with `sides`.
pub fn index(sides: &[u32], c: &[u32]) -> u32 {
    let mut i = 0;
    for d in (0..sides.len()).rev() {
        i = i * sides[d] + c[d];
    }
    i
}

/// n-dimensional torus (`wrap`) or mesh with `endpoints_per_switch` endpoints on each switch and
/// `trunk` parallel links between neighbours; every link has `latency` cycles and width 1.
/// A dimension of side 2 gets a single trunk between the two switches (no double wrap link);
/// the "−" ports of that dimension stay unconnected.
pub fn torus_or_mesh(
    sides: &[u32],
    endpoints_per_switch: u32,
    trunk: u32,
    latency: u32,
    wrap: bool,
) -> Result<Topology, TopologyError> {
    if sides.is_empty() || sides.iter().any(|&k| k < 2) {
        return Err(TopologyError::Parameters(
            "every side must be at least 2".into(),
        ));
    }
    if trunk == 0 || latency == 0 {
        return Err(TopologyError::Parameters(
            "trunk and latency must be at least 1".into(),
        ));
    }
    let dims = sides.len() as u32;
    let n: u32 = sides.iter().product();
    let ports = 2 * dims * trunk + endpoints_per_switch;
    if ports > PortNum::MAX as u32 {
        return Err(TopologyError::Parameters(format!(
            "{ports} ports per switch is too many"
        )));
    }
    let switches = (0..n)
        .map(|i| {
            let c = coords(sides, i);
            let name = c
                .iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("_");
            Switch {
                name: format!("sw{name}"),
                ports: ports as PortNum,
                ..Switch::default()
            }
        })
        .collect();
    let mut links = Vec::new();
    for i in 0..n {
        let c = coords(sides, i);
        for d in 0..dims as usize {
            let k = sides[d];
            if c[d] + 1 == k && (!wrap || k == 2) {
                continue;
            }
            let mut nc = c.clone();
            nc[d] = (c[d] + 1) % k;
            let j = index(sides, &nc);
            for t in 0..trunk {
                let plus = (2 * d as u32) * trunk + t;
                let minus = (2 * d as u32 + 1) * trunk + t;
                links.push(Link {
                    a: sw(i, plus),
                    b: sw(j, minus),
                    latency,
                    width: 1,
                });
            }
        }
    }
    let mut endpoints = Vec::new();
    for i in 0..n {
        for e in 0..endpoints_per_switch {
            let id = i * endpoints_per_switch + e;
            endpoints.push(Endpoint {
                name: format!("ep{id}"),
                ..Endpoint::default()
            });
            links.push(Link {
                a: ep(id),
                b: sw(i, 2 * dims * trunk + e),
                latency,
                width: 1,
            });
        }
    }
    let kind = if wrap { "torus" } else { "mesh" };
    let name = format!(
        "{kind}-{}",
        sides
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("x")
    );
    finish(Topology::new(
        name,
        Shape::Torus {
            sides: sides.to_vec(),
            wrap,
            endpoints_per_switch,
            trunk,
        },
        switches,
        endpoints,
        links,
    ))
}

/// Torus shortcut: see [`torus_or_mesh`].
pub fn torus(
    sides: &[u32],
    endpoints_per_switch: u32,
    trunk: u32,
    latency: u32,
) -> Result<Topology, TopologyError> {
    torus_or_mesh(sides, endpoints_per_switch, trunk, latency, true)
}

/// k-ary n-tree (Petrini & Vanneschi): `k^n` endpoints, `n` levels of `k^(n-1)` switches with
/// `2k` ports (roots use only their `k` down ports). Switch `⟨w, l⟩` at level `l` connects up to
/// `⟨w', l+1⟩` where `w'` equals `w` in every digit but digit `l`, which takes each value
/// `0..k` in turn; up port `k + j` of the lower switch meets down port `digit_l(w)` of the upper.
pub fn kary_ntree(k: u32, n: u32, latency: u32) -> Result<Topology, TopologyError> {
    if k < 2 || n < 1 {
        return Err(TopologyError::Parameters(
            "k-ary n-tree needs k >= 2 and n >= 1".into(),
        ));
    }
    k.checked_pow(n - 1)
        .ok_or_else(|| TopologyError::Parameters("too large".into()))?;
    kary_stages(
        k,
        n,
        latency,
        |l, w| format!("sw_l{l}_{w}"),
        |l| k.pow(l),
        format!("{k}-ary-{n}-tree"),
        Shape::KaryNTree { k, n },
    )
}

/// The k-ary n-tree and the folded k-ary n-fly, which differ only in names and in which
/// base-`k` digit of the switch index a link from stage `l` to `l + 1` changes: `n` stages of
/// `k^(n-1)` switches with `2k` ports (switch `l·k^(n-1) + w` is `w` of stage `l`, named
/// `switch_name(l, w)`). With `d = (w / place(l)) mod k`, the digit of place value `place(l)`,
/// switch `w` of stage `l < n-1` connects up port `k + j` to down port `d` of the switch of
/// stage `l + 1` whose index is `w` with that digit replaced by `j`. Endpoint `e` hangs on
/// port `e mod k` of stage-0 switch `e / k`. The caller has checked the parameters.
fn kary_stages(
    k: u32,
    n: u32,
    latency: u32,
    switch_name: impl Fn(u32, u32) -> String,
    place: impl Fn(u32) -> u32,
    name: String,
    shape: Shape,
) -> Result<Topology, TopologyError> {
    let per_stage = k.pow(n - 1);
    let switches = (0..n)
        .flat_map(|l| (0..per_stage).map(move |w| (l, w)))
        .map(|(l, w)| Switch {
            name: switch_name(l, w),
            ports: (2 * k) as PortNum,
            ..Switch::default()
        })
        .collect();
    let mut links = Vec::new();
    for l in 0..n.saturating_sub(1) {
        let place = place(l);
        for w in 0..per_stage {
            let digit = (w / place) % k;
            for j in 0..k {
                let w2 = w - digit * place + j * place;
                links.push(Link {
                    a: sw(l * per_stage + w, k + j),
                    b: sw((l + 1) * per_stage + w2, digit),
                    latency,
                    width: 1,
                });
            }
        }
    }
    let mut endpoints = Vec::new();
    for e in 0..per_stage * k {
        endpoints.push(Endpoint {
            name: format!("ep{e}"),
            ..Endpoint::default()
        });
        links.push(Link {
            a: ep(e),
            b: sw(e / k, e % k),
            latency,
            width: 1,
        });
    }
    finish(Topology::new(name, shape, switches, endpoints, links))
}

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
            2 * p.links,
            n * free_per
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
    let mut adj = std::collections::HashSet::new();
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    let mut order: Vec<u32> = (0..n).collect();
    order.shuffle(&mut rng);
    for i in 1..order.len() {
        let s = order[i];
        let candidates: Vec<u32> = order[..i]
            .iter()
            .copied()
            .filter(|&t| free[t as usize] > 0)
            .collect();
        if candidates.is_empty() {
            return Err(TopologyError::Parameters(
                "not enough free ports to connect all switches".into(),
            ));
        }
        let t = candidates[rng.gen_range(0..candidates.len())];
        free[s as usize] -= 1;
        free[t as usize] -= 1;
        adj.insert((s.min(t), s.max(t)));
        pairs.push((s, t));
    }
    let mut attempts = 0u64;
    while (pairs.len() as u32) < p.links {
        attempts += 1;
        if attempts > 1_000_000 {
            return Err(TopologyError::Parameters(format!(
                "could not place {} links (placed {}); try fewer links or allow multi-links",
                p.links,
                pairs.len()
            )));
        }
        let open: Vec<u32> = (0..n).filter(|&s| free[s as usize] > 0).collect();
        if open.len() < 2 {
            return Err(TopologyError::Parameters("ran out of free ports".into()));
        }
        let s = open[rng.gen_range(0..open.len())];
        let t = open[rng.gen_range(0..open.len())];
        if s == t || (!p.multi_links && adj.contains(&(s.min(t), s.max(t)))) {
            continue;
        }
        free[s as usize] -= 1;
        free[t as usize] -= 1;
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
    let mut links = Vec::new();
    let mut endpoints = Vec::new();
    for s in 0..n {
        for e in 0..p.endpoints_per_switch {
            let id = s * p.endpoints_per_switch + e;
            endpoints.push(Endpoint {
                name: format!("ep{id}"),
                ..Endpoint::default()
            });
            links.push(Link {
                a: ep(id),
                b: sw(s, e),
                latency: p.latency,
                width: 1,
            });
        }
    }
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

/// Gives a freshly built topology its deterministic GUIDs and LIDs
/// ([`Topology::assign_guids_and_lids`]); every generator ends with this.
fn finish(t: Result<Topology, TopologyError>) -> Result<Topology, TopologyError> {
    let mut t = t?;
    t.assign_guids_and_lids();
    Ok(t)
}

fn param_err(m: impl Into<String>) -> TopologyError {
    TopologyError::Parameters(m.into())
}

/// How many endpoints each of `n` switches gets when `total` endpoints are spread as evenly
/// as possible (the first `total mod n` switches get one more).
fn spread(total: u32, n: u32) -> Vec<u32> {
    (0..n)
        .map(|i| total / n + u32::from(i < total % n))
        .collect()
}

/// Where endpoints go on the switches a generator attaches them to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndpointPlacement {
    /// The same number on every such switch.
    PerSwitch(u32),
    /// This many in total, spread as evenly as possible (the first `total mod n` switches get
    /// one more). Used to reproduce endpoint counts such as those of Domke et al. 2011,
    /// Table I, that are not multiples of the switch count.
    Total(u32),
}

impl EndpointPlacement {
    fn counts(self, switches: u32) -> Vec<u32> {
        match self {
            EndpointPlacement::PerSwitch(e) => vec![e; switches as usize],
            EndpointPlacement::Total(t) => spread(t, switches),
        }
    }
}

/// Extended generalized fat tree XGFT(h; m₁,…,m_h; w₁,…,w_h) after S. R. Öhring, M. Ibel,
/// S. K. Das and M. J. Kumar, "On generalized fat trees", IPPS 1995 — the family Domke,
/// Hoefler and Nagel evaluate in "Deadlock-Free Oblivious Routing for Arbitrary Topologies"
/// (IPDPS 2011, Fig. 5 and Table I).
///
/// Nodes at level `l` (`0..=h`) are tuples (a_h,…,a_{l+1}, b_l,…,b_1) with `a_i < m_i` and
/// `b_i < w_i`; there are `∏_{i>l} m_i · ∏_{i≤l} w_i` of them. A level-`l` node is linked to the
/// `w_{l+1}` level-`(l+1)` nodes obtained by replacing `a_{l+1}` with each `b_{l+1}`. As in
/// Öhring's definition the level-0 nodes are the processing nodes, i.e. the flitsim endpoints.
/// A flitsim endpoint has a single port, so when `w₁ > 1` each level-0 node is modelled as
/// its endpoint behind a small "host" switch with `1 + w₁` ports (endpoint on port 0, up
/// ports `1..=w₁`) — exactly [`xgft_with_leaves`] with one endpoint per level-0 switch, with
/// its numbering and shape. Use [`xgft_with_leaves`] directly to put several endpoints on
/// each level-0 switch (as Domke et al. do).
///
/// Numbering: switches are levels 1..=h in order, level `l` node index in mixed radix with
/// digit 1 fastest (radix `w_i` for `i ≤ l`, `m_i` above). Endpoint `e` is level-0 node `e`.
/// A level-`l` switch has `m_l + w_{l+1}` ports (top: `m_h`): port `j < m_l` leads down to the
/// child whose digit `l` is `j`; port `m_l + j` leads up to the parent whose digit `l+1` is
/// `j`. Shape: [`Shape::Xgft`].
pub fn xgft(h: u32, m: &[u32], w: &[u32], latency: u32) -> Result<Topology, TopologyError> {
    check_xgft(h, m, w, latency)?;
    if w[0] != 1 {
        return build_xgft(h, m, w, Some(EndpointPlacement::PerSwitch(1)), latency);
    }
    build_xgft(h, m, w, None, latency)
}

/// XGFT(h; m; w) whose level-0 nodes are *switches* with endpoints attached (Domke et al.
/// 2011, Table I: "We assumed the use of 36-port switches"). Level-0 switch `i` has its
/// endpoints on ports `0..e_i`, then up ports `e_i + j` to the parent whose digit 1 is `j`;
/// higher levels are numbered as in [`xgft`], after the level-0 switches. With
/// [`EndpointPlacement::PerSwitch`]`(e)` this is XGFT(h+1; e,m₁,…; 1,w₁,…) and gets that
/// [`Shape::Xgft`]; with an uneven [`EndpointPlacement::Total`] the shape is
/// [`Shape::Irregular`].
pub fn xgft_with_leaves(
    h: u32,
    m: &[u32],
    w: &[u32],
    endpoints: EndpointPlacement,
    latency: u32,
) -> Result<Topology, TopologyError> {
    check_xgft(h, m, w, latency)?;
    build_xgft(h, m, w, Some(endpoints), latency)
}

fn check_xgft(h: u32, m: &[u32], w: &[u32], latency: u32) -> Result<(), TopologyError> {
    if h == 0 {
        return Err(param_err("xgft: h must be at least 1"));
    }
    if m.len() != h as usize || w.len() != h as usize {
        return Err(param_err(format!(
            "xgft: h = {h} needs {h} values of m and of w (got {} and {})",
            m.len(),
            w.len()
        )));
    }
    if m.iter().chain(w).any(|&x| x == 0) {
        return Err(param_err("xgft: every m and w must be at least 1"));
    }
    if latency == 0 {
        return Err(param_err("xgft: latency must be at least 1"));
    }
    Ok(())
}

fn build_xgft(
    h: u32,
    m: &[u32],
    w: &[u32],
    leaves: Option<EndpointPlacement>,
    latency: u32,
) -> Result<Topology, TopologyError> {
    let h = h as usize;
    let too_big = || param_err("xgft: too many nodes");
    // count[l] = nodes at level l.
    let mut count = vec![0u64; h + 1];
    for (l, c) in count.iter_mut().enumerate() {
        let mut x = 1u64;
        for i in 1..=h {
            x = x
                .checked_mul(if i <= l { w[i - 1] } else { m[i - 1] } as u64)
                .ok_or_else(too_big)?;
        }
        *c = x;
    }
    if count.iter().sum::<u64>() > u32::MAX as u64 / 2 {
        return Err(too_big());
    }
    let first_switch_level = if leaves.is_some() { 0 } else { 1 };
    // base[l] = id of the first switch of level l.
    let mut base = vec![0u32; h + 1];
    let mut acc = 0u32;
    for l in first_switch_level..=h {
        base[l] = acc;
        acc += count[l] as u32;
    }
    let leaf_eps = leaves.map(|p| p.counts(count[0] as u32));
    let mut switches = Vec::new();
    for l in first_switch_level..=h {
        for i in 0..count[l] as u32 {
            let down = if l == 0 {
                leaf_eps.as_ref().expect("leaves")[i as usize]
            } else {
                m[l - 1]
            };
            let up = if l < h { w[l] } else { 0 };
            let ports = down as u64 + up as u64;
            if ports > PortNum::MAX as u64 {
                return Err(param_err(format!(
                    "xgft: {ports} ports per switch is too many"
                )));
            }
            switches.push(Switch {
                name: format!("sw_l{l}_{i}"),
                ports: ports as PortNum,
                ..Switch::default()
            });
        }
    }
    let mut links = Vec::new();
    let mut endpoints = Vec::new();
    // R = ∏_{i≤l} w_i: the place value of digit l+1 at level l (and l+1).
    let mut r = 1u64;
    for l in 0..h {
        let (ml, wl) = (m[l] as u64, w[l] as u64); // m_{l+1}, w_{l+1}
        for child in 0..count[l] {
            let low = child % r;
            let a = (child / r) % ml;
            let high = child / (r * ml);
            let up_base = if l == 0 {
                match &leaf_eps {
                    Some(e) => e[child as usize],
                    None => 0,
                }
            } else {
                m[l - 1]
            };
            for b in 0..wl {
                let parent = low + b * r + high * r * wl;
                let upper = sw(base[l + 1] + parent as u32, a as u32);
                let lower = if l == 0 && leaves.is_none() {
                    ep(child as u32)
                } else {
                    sw(base[l] + child as u32, up_base + b as u32)
                };
                links.push(Link {
                    a: lower,
                    b: upper,
                    latency,
                    width: 1,
                });
            }
        }
        r *= wl;
    }
    match &leaf_eps {
        None => {
            for e in 0..count[0] as u32 {
                endpoints.push(Endpoint {
                    name: format!("ep{e}"),
                    ..Endpoint::default()
                });
            }
        }
        Some(eps) => {
            for (leaf, &n) in eps.iter().enumerate() {
                for p in 0..n {
                    let id = endpoints.len() as u32;
                    endpoints.push(Endpoint {
                        name: format!("ep{id}"),
                        ..Endpoint::default()
                    });
                    links.push(Link {
                        a: ep(id),
                        b: sw(leaf as u32, p),
                        latency,
                        width: 1,
                    });
                }
            }
        }
    }
    let list = |v: &[u32]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let uniform = match leaves {
        None => Some(None),
        Some(p) => {
            let c = p.counts(count[0] as u32);
            c.iter().all(|&x| x == c[0]).then(|| Some(c[0]))
        }
    };
    let (shape, name) = match uniform {
        Some(None) => (
            Shape::Xgft {
                h: h as u32,
                m: m.to_vec(),
                w: w.to_vec(),
            },
            format!("xgft-{h}-{}-{}", list(m), list(w)),
        ),
        Some(Some(e)) => {
            let mm = [&[e][..], m].concat();
            let ww = [&[1][..], w].concat();
            (
                Shape::Xgft {
                    h: h as u32 + 1,
                    m: mm.clone(),
                    w: ww.clone(),
                },
                format!("xgft-{}-{}-{}", h + 1, list(&mm), list(&ww)),
            )
        }
        None => (
            Shape::Irregular,
            format!("xgft-{h}-{}-{}-{}ep", list(m), list(w), endpoints.len()),
        ),
    };
    finish(Topology::new(name, shape, switches, endpoints, links))
}

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
        .and_then(|x| x.checked_mul(b + 1))
        .filter(|&x| x <= 1 << 24)
        .ok_or_else(|| param_err("kautz: too many nodes"))?;
    let eps = endpoints.counts(nodes);
    let max_e = eps.iter().copied().max().unwrap_or(0);
    if max_e as u64 + 2 * b as u64 > PortNum::MAX as u64 {
        return Err(param_err("kautz: too many ports per switch"));
    }
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
    let mut links = Vec::new();
    let mut endpoint_list = Vec::new();
    for (s, &e) in eps.iter().enumerate() {
        for p in 0..e {
            let id = endpoint_list.len() as u32;
            endpoint_list.push(Endpoint {
                name: format!("ep{id}"),
                ..Endpoint::default()
            });
            links.push(Link {
                a: ep(id),
                b: sw(s as u32, p),
                latency,
                width: 1,
            });
        }
    }
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

/// Folded k-ary n-fly: the butterfly MIN of `n` stages of `k^(n−1)` switches (radix `2k`,
/// `kⁿ` terminals; W. J. Dally and B. Towles, *Principles and Practices of Interconnection
/// Networks*, 2004, §4.1) with every channel made bidirectional and the terminals of both
/// sides merged on stage 0 — a bidirectional MIN (BMIN).
///
/// What is built: stage-0 switch `w` has endpoints `k·w .. k·w+k` on ports `0..k`. Switch `w`
/// of stage `i < n−1` connects up-port `k + j` to switch `w'` of stage `i+1`, where `w'` is `w`
/// with base-`k` digit `n−2−i` (most significant first, the butterfly order) replaced by `j`;
/// the far end is down-port `digit_{n−2−i}(w)` of `w'`. Switch `i·k^(n−1) + w` is `w` of
/// stage `i`. The last stage only uses its down ports. This graph is isomorphic to the k-ary
/// n-tree ([`kary_ntree`], which changes digit `i` instead; Petrini & Vanneschi 1997 note the
/// equivalence) and to XGFT(n; k,…,k; 1,k,…,k), but its numbering differs, so its shape is
/// [`Shape::Irregular`] and tree-specific engines do not take it.
pub fn folded_butterfly(k: u32, n: u32, latency: u32) -> Result<Topology, TopologyError> {
    if k < 2 || n < 1 {
        return Err(param_err("fly: needs k >= 2 and n >= 1"));
    }
    if latency == 0 {
        return Err(param_err("fly: latency must be at least 1"));
    }
    k.checked_pow(n - 1)
        .filter(|&x| x.checked_mul(n.max(k)).is_some_and(|y| y <= 1 << 24))
        .ok_or_else(|| param_err("fly: too large"))?;
    kary_stages(
        k,
        n,
        latency,
        |i, w| format!("fly_s{i}_{w}"),
        |i| k.pow(n - 2 - i),
        format!("{k}-ary-{n}-fly-folded"),
        Shape::Irregular,
    )
}

/// The networks of Domke, Hoefler and Nagel, "Deadlock-Free Oblivious Routing for Arbitrary
/// Topologies" (IPDPS 2011), Table I, as `(name, spec)` pairs for [`from_spec`], named
/// `table1-<family>-<endpoints>`.
///
/// The table gives a nominal endpoint count per row (64 … 4096) and "assumed the use of
/// 36-port switches". XGFT and Kautz rows therefore attach exactly that many endpoints to the
/// switches (`total_endpoints`, spread evenly over the XGFT level-0 switches / all Kautz
/// switches). The k-ary n-tree rows are the plain k-ary n-trees, whose endpoint count is `kⁿ`
/// and differs from the row's nominal count except for 16-ary 2-tree (256): 36, 100, 256,
/// 216, 1000, 2744 and 5832 endpoints.
pub fn table1_presets() -> Vec<(String, String)> {
    // (endpoints, XGFT parameters, Kautz (b, n), k-ary n-tree (k, n))
    type Row = (u32, &'static str, (u32, u32), (u32, u32));
    let rows: [Row; 7] = [
        (64, "h=1,m=6,w=3", (2, 2), (6, 2)),
        (128, "h=1,m=10,w=5", (2, 2), (10, 2)),
        (256, "h=1,m=16,w=8", (2, 3), (16, 2)),
        (512, "h=2,m=6,6,w=3,3", (3, 3), (6, 3)),
        (1024, "h=2,m=10,10,w=5,5", (3, 3), (10, 3)),
        (2048, "h=2,m=14,14,w=7,7", (4, 3), (14, 3)),
        (4096, "h=2,m=18,18,w=9,9", (6, 3), (18, 3)),
    ];
    let mut out = Vec::new();
    for (e, x, (b, n), (k, kn)) in rows {
        out.push((
            format!("table1-xgft-{e}"),
            format!("xgft:{x},total_endpoints={e}"),
        ));
        out.push((
            format!("table1-kautz-{e}"),
            format!("kautz:b={b},n={n},total_endpoints={e}"),
        ));
        out.push((
            format!("table1-kary-ntree-{e}"),
            format!("kary-ntree:k={k},n={kn}"),
        ));
    }
    out
}

/// Parsed `key=value[,value…]` parameters of a spec.
struct SpecParams<'a> {
    kind: &'a str,
    positional: Option<&'a str>,
    values: Vec<(&'a str, Vec<&'a str>)>,
    used: std::collections::HashSet<&'a str>,
}

impl<'a> SpecParams<'a> {
    fn parse(spec: &'a str) -> Result<Self, TopologyError> {
        let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
        let mut p = SpecParams {
            kind: kind.trim(),
            positional: None,
            values: Vec::new(),
            used: Default::default(),
        };
        for (i, tok) in rest.split(',').map(str::trim).enumerate() {
            if tok.is_empty() {
                if rest.trim().is_empty() {
                    break;
                }
                return Err(param_err(format!("{kind}: empty parameter in '{spec}'")));
            }
            match tok.split_once('=') {
                Some((k, v)) => {
                    let k = k.trim();
                    if p.values.iter().any(|(x, _)| *x == k) {
                        return Err(param_err(format!("{kind}: parameter '{k}' given twice")));
                    }
                    p.values.push((k, vec![v.trim()]));
                }
                None if i == 0 => p.positional = Some(tok),
                None => match p.values.last_mut() {
                    Some((_, v)) => v.push(tok),
                    None => return Err(param_err(format!("{kind}: unexpected '{tok}'"))),
                },
            }
        }
        Ok(p)
    }
    fn raw(&mut self, key: &'a str) -> Option<Vec<&'a str>> {
        let v = self.values.iter().find(|(k, _)| *k == key)?.1.clone();
        self.used.insert(key);
        Some(v)
    }
    fn list(&mut self, key: &'a str) -> Result<Option<Vec<u32>>, TopologyError> {
        let kind = self.kind;
        match self.raw(key) {
            None => Ok(None),
            Some(v) => v
                .iter()
                .map(|s| {
                    s.parse::<u32>().map_err(|_| {
                        param_err(format!(
                            "{kind}: parameter '{key}': '{s}' is not a non-negative integer"
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
        }
    }
    fn opt(&mut self, key: &'a str) -> Result<Option<u64>, TopologyError> {
        let kind = self.kind;
        match self.raw(key) {
            None => Ok(None),
            Some(v) if v.len() == 1 => v[0].parse::<u64>().map(Some).map_err(|_| {
                param_err(format!(
                    "{kind}: parameter '{key}': '{}' is not a non-negative integer",
                    v[0]
                ))
            }),
            Some(v) => Err(param_err(format!(
                "{kind}: parameter '{key}' takes one value, got {}",
                v.join(",")
            ))),
        }
    }
    fn opt32(&mut self, key: &'a str) -> Result<Option<u32>, TopologyError> {
        let kind = self.kind;
        self.opt(key)?
            .map(|x| {
                u32::try_from(x)
                    .map_err(|_| param_err(format!("{kind}: parameter '{key}' = {x} is too large")))
            })
            .transpose()
    }
    fn req(&mut self, key: &'a str) -> Result<u32, TopologyError> {
        let kind = self.kind;
        self.opt32(key)?
            .ok_or_else(|| param_err(format!("{kind}: missing parameter '{key}'")))
    }
    /// Fails on parameters nobody asked for.
    fn done(&self) -> Result<(), TopologyError> {
        if let Some((k, _)) = self.values.iter().find(|(k, _)| !self.used.contains(k)) {
            return Err(param_err(format!("{}: unknown parameter '{k}'", self.kind)));
        }
        Ok(())
    }
    fn no_positional(&self) -> Result<(), TopologyError> {
        match self.positional {
            Some(p) => Err(param_err(format!(
                "{}: unexpected '{p}' (parameters are key=value)",
                self.kind
            ))),
            None => Ok(()),
        }
    }
}

/// Builds a topology from a one-line spec. Accepted forms (every generator also takes an
/// optional `latency=L`, default 1):
///
/// | spec | generator |
/// |---|---|
/// | `kary-ntree:k=8,n=3` | [`kary_ntree`] |
/// | `xgft:h=2,m=10,10,w=5,5` | [`xgft`]; with `endpoints=E` (per level-0 switch) or `total_endpoints=N`: [`xgft_with_leaves`] |
/// | `kautz:b=3,n=3,endpoints=4` | [`kautz`], `endpoints` per switch, or `total_endpoints=N` |
/// | `torus:6x6`, `mesh:4x4` (optional `,endpoints=E,trunk=T`, default 1 and 1) | [`torus_or_mesh`] |
/// | `random:switches=128,ports=32,endpoints=16,links=256,seed=1` (optional `multi_links=1`) | [`random`] |
/// | `fly:k=4,n=3` | [`folded_butterfly`] |
///
/// Errors ([`TopologyError::Parameters`]) name the bad or missing parameter.
pub fn from_spec(spec: &str) -> Result<Topology, TopologyError> {
    let mut p = SpecParams::parse(spec)?;
    let latency = p.opt32("latency")?.unwrap_or(1);
    let t = match p.kind {
        "kary-ntree" => {
            p.no_positional()?;
            let (k, n) = (p.req("k")?, p.req("n")?);
            p.done()?;
            kary_ntree(k, n, latency)
        }
        "xgft" => {
            p.no_positional()?;
            let h = p.req("h")?;
            let m = p
                .list("m")?
                .ok_or_else(|| param_err("xgft: missing parameter 'm'"))?;
            let w = p
                .list("w")?
                .ok_or_else(|| param_err("xgft: missing parameter 'w'"))?;
            let per = p.opt32("endpoints")?;
            let total = p.opt32("total_endpoints")?;
            p.done()?;
            match (per, total) {
                (None, None) => xgft(h, &m, &w, latency),
                (Some(e), None) => {
                    xgft_with_leaves(h, &m, &w, EndpointPlacement::PerSwitch(e), latency)
                }
                (None, Some(t)) => {
                    xgft_with_leaves(h, &m, &w, EndpointPlacement::Total(t), latency)
                }
                (Some(_), Some(_)) => Err(param_err(
                    "xgft: give either 'endpoints' or 'total_endpoints', not both",
                )),
            }
        }
        "kautz" => {
            p.no_positional()?;
            let (b, n) = (p.req("b")?, p.req("n")?);
            let per = p.opt32("endpoints")?;
            let total = p.opt32("total_endpoints")?;
            p.done()?;
            let place = match (per, total) {
                (Some(e), None) => EndpointPlacement::PerSwitch(e),
                (None, Some(t)) => EndpointPlacement::Total(t),
                (None, None) => EndpointPlacement::PerSwitch(1),
                (Some(_), Some(_)) => {
                    return Err(param_err(
                        "kautz: give either 'endpoints' or 'total_endpoints', not both",
                    ))
                }
            };
            kautz(b, n, place, latency)
        }
        kind @ ("torus" | "mesh") => {
            let dims = p.positional.ok_or_else(|| {
                param_err(format!("{kind}: missing the sides, e.g. '{kind}:4x4'"))
            })?;
            let sides = dims
                .split('x')
                .map(|s| {
                    s.trim().parse::<u32>().map_err(|_| {
                        param_err(format!("{kind}: side '{s}' in '{dims}' is not a number"))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let e = p.opt32("endpoints")?.unwrap_or(1);
            let trunk = p.opt32("trunk")?.unwrap_or(1);
            p.done()?;
            torus_or_mesh(&sides, e, trunk, latency, kind == "torus")
        }
        "random" => {
            p.no_positional()?;
            let params = RandomParams {
                switches: p.req("switches")?,
                ports: p.req("ports")?,
                endpoints_per_switch: p.req("endpoints")?,
                links: p.req("links")?,
                seed: p.opt("seed")?.unwrap_or(0),
                multi_links: p.opt("multi_links")?.unwrap_or(0) != 0,
                latency,
            };
            p.done()?;
            random(&params)
        }
        "fly" => {
            p.no_positional()?;
            let (k, n) = (p.req("k")?, p.req("n")?);
            p.done()?;
            folded_butterfly(k, n, latency)
        }
        other => Err(param_err(format!(
            "unknown topology kind '{other}' in '{spec}'; expected one of kary-ntree, xgft, \
             kautz, torus, mesh, random, fly"
        ))),
    }?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{link_set, SwitchId};

    #[test]
    fn torus_8x8_with_trunks_matches_omnipath_paper() {
        let t = torus(&[8, 8], 8, 10, 1).unwrap();
        assert_eq!(t.num_switches(), 64);
        assert_eq!(t.num_endpoints(), 512);
        assert_eq!(t.num_ports(SwitchId(0)), 48);
        // 64 switches × 2 dims × 10 trunk links + 512 endpoint links
        assert_eq!(t.links().len(), 64 * 2 * 10 + 512);
        assert!(t.is_connected());
    }

    #[test]
    fn mesh_has_no_wrap_links() {
        let t = torus_or_mesh(&[4, 3], 1, 1, 1, false).unwrap();
        // (3·3 + 4·2) switch links + 12 endpoint links
        assert_eq!(t.links().len(), 9 + 8 + 12);
        assert!(t.switch_peer(SwitchId(3), 0).is_none());
    }

    #[test]
    fn kary_ntree_is_connected_and_regular() {
        let t = kary_ntree(4, 3, 1).unwrap();
        assert_eq!(t.num_switches(), 48);
        assert_eq!(t.num_endpoints(), 64);
        assert!(t.is_connected());
        // Every non-root switch uses all 2k ports; roots only k.
        for s in 0..48u32 {
            let used = (0..8)
                .filter(|&p| t.switch_peer(SwitchId(s), p).is_some())
                .count();
            assert_eq!(used, if s >= 32 { 4 } else { 8 }, "switch {s}");
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

    #[test]
    fn generated_topologies_have_guids_and_lids() {
        for t in [
            torus(&[3, 3], 2, 1, 1).unwrap(),
            kary_ntree(2, 3, 1).unwrap(),
            from_spec("random:switches=8,ports=6,endpoints=2,links=10,seed=3").unwrap(),
            from_spec("kautz:b=2,n=1,endpoints=2").unwrap(),
            from_spec("fly:k=2,n=3").unwrap(),
            from_spec("xgft:h=1,m=4,w=2,endpoints=3").unwrap(),
        ] {
            let ns = t.num_switches();
            for (i, s) in t.switches().iter().enumerate() {
                assert_eq!(s.guid, Some(crate::GENERATED_SWITCH_GUID_BASE + i as u64));
                assert_eq!(s.lid, Some(1 + i as u16));
                assert_eq!(t.switch_by_guid(s.guid.unwrap()), Some(SwitchId(i as u32)));
            }
            for (i, e) in t.endpoints().iter().enumerate() {
                let id = crate::EndpointId(i as u32);
                assert_eq!(e.lid, Some((ns + 1 + i) as u16));
                assert_eq!(t.endpoint_by_lid(e.lid.unwrap()), Some(id));
                assert_eq!(t.endpoint_by_guid(e.guid.unwrap()), Some(id));
            }
            let back = Topology::from_json(&t.to_json()).unwrap();
            assert_eq!(back.switches(), t.switches());
            assert_eq!(back.endpoints(), t.endpoints());
        }
    }

    #[test]
    fn xgft_counts_and_ports() {
        // XGFT(2; 4,4; 1,2): 16 endpoints, 4 level-1 and 2 level-2 switches.
        let t = xgft(2, &[4, 4], &[1, 2], 1).unwrap();
        assert_eq!((t.num_endpoints(), t.num_switches()), (16, 6));
        assert_eq!(t.links().len(), 16 + 4 * 2);
        assert!(t.is_connected());
        assert_eq!(
            t.shape(),
            &Shape::Xgft {
                h: 2,
                m: vec![4, 4],
                w: vec![1, 2]
            }
        );
        // Level-1 switch 0: 4 down ports, 2 up; top switches: 4 down ports.
        assert_eq!(t.num_ports(SwitchId(0)), 6);
        assert_eq!(t.num_ports(SwitchId(4)), 4);
        // Up port 4 + j of level-1 switch 1 leads to top switch j, down port 1.
        for j in 0..2u32 {
            let p = t.switch_peer(SwitchId(1), 4 + j as u16).unwrap().remote;
            assert_eq!((p.node, p.port), (NodeId::Switch(4 + j), 1));
        }
        // w1 > 1: each level-0 node is an endpoint behind a host switch with w1 up ports.
        let t = xgft(1, &[6], &[3], 1).unwrap();
        assert_eq!((t.num_endpoints(), t.num_switches()), (6, 9));
        assert_eq!(t.num_ports(SwitchId(0)), 4);
        assert_eq!(
            t.shape(),
            &Shape::Xgft {
                h: 2,
                m: vec![1, 6],
                w: vec![1, 3]
            }
        );
        assert!(xgft(2, &[4], &[1, 2], 1).is_err());
    }

    #[test]
    fn xgft_generalises_the_kary_ntree() {
        // k-ary n-tree = XGFT(n; k,…,k; 1,k,…,k), with the same numbering.
        let tree = kary_ntree(3, 3, 1).unwrap();
        let x = from_spec("xgft:h=3,m=3,3,3,w=1,3,3").unwrap();
        assert_eq!(link_set(&x), link_set(&tree));
        // The same with level-0 switches carrying 3 endpoints each.
        let y = from_spec("xgft:h=2,m=3,3,w=3,3,endpoints=3").unwrap();
        assert_eq!(link_set(&y), link_set(&tree));
        assert_eq!(y.shape(), x.shape());
    }

    #[test]
    fn xgft_with_uneven_endpoints_matches_table1() {
        // Domke et al. Table I, first row: XGFT(1; 6; 3) with 64 endpoints.
        let t = from_spec("xgft:h=1,m=6,w=3,total_endpoints=64").unwrap();
        assert_eq!((t.num_switches(), t.num_endpoints()), (9, 64));
        assert_eq!(t.shape(), &Shape::Irregular);
        let per: Vec<usize> = (0..6)
            .map(|s| t.switch_endpoints(SwitchId(s)).count())
            .collect();
        assert_eq!(per, vec![11, 11, 11, 11, 10, 10]);
        // Each leaf reaches every spine exactly once; spines have 6 down ports.
        for s in 0..6 {
            let ups: Vec<u32> = t
                .switch_neighbours(SwitchId(s))
                .map(|(_, n, _)| n.0)
                .collect();
            assert_eq!(ups, vec![6, 7, 8]);
        }
        assert!(t.is_connected());
    }

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

    #[test]
    fn folded_butterfly_is_a_full_bmin() {
        let t = folded_butterfly(4, 3, 1).unwrap();
        assert_eq!((t.num_switches(), t.num_endpoints()), (48, 64));
        assert_eq!(t.links().len(), 64 + 2 * 16 * 4);
        assert!(t.is_connected());
        for s in 0..48u32 {
            let used = (0..8)
                .filter(|&p| t.switch_peer(SwitchId(s), p).is_some())
                .count();
            assert_eq!(used, if s >= 32 { 4 } else { 8 }, "switch {s}");
        }
        // Stage 0 → 1 changes the most significant digit: switch 5 = (1,1) reaches 1, 5, 9, 13.
        let ups: Vec<u32> = (4..8)
            .map(
                |p| match t.switch_peer(SwitchId(5), p).unwrap().remote.node {
                    NodeId::Switch(x) => x - 16,
                    _ => unreachable!(),
                },
            )
            .collect();
        assert_eq!(ups, vec![1, 5, 9, 13]);
    }

    #[test]
    fn table1_presets_build_with_the_documented_sizes() {
        let presets = table1_presets();
        assert_eq!(presets.len(), 21);
        let kary = [36, 100, 256, 216, 1000, 2744, 5832];
        let rows = [64, 128, 256, 512, 1024, 2048, 4096];
        for (i, chunk) in presets.chunks(3).enumerate() {
            for (name, spec) in chunk {
                let t = from_spec(spec).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(t.is_connected(), "{name}");
                let want = if name.contains("kary") {
                    kary[i]
                } else {
                    rows[i]
                };
                assert_eq!(t.num_endpoints(), want, "{name}");
                assert!(name.ends_with(&rows[i].to_string()));
                assert!((0..t.num_switches() as u32).all(|s| t.num_ports(SwitchId(s)) <= 36));
            }
        }
    }

    #[test]
    fn specs_are_parsed_with_clear_errors() {
        let t = from_spec("kary-ntree:k=2,n=3").unwrap();
        assert_eq!(t.shape(), &Shape::KaryNTree { k: 2, n: 3 });
        let t = from_spec("torus:6x6").unwrap();
        assert_eq!((t.num_switches(), t.num_endpoints()), (36, 36));
        let t = from_spec("torus:4x4,endpoints=2,trunk=2").unwrap();
        assert_eq!((t.num_endpoints(), t.num_ports(SwitchId(0))), (32, 10));
        let t = from_spec("mesh:4x4").unwrap();
        assert!(matches!(t.shape(), Shape::Torus { wrap: false, .. }));
        let t = from_spec("random:switches=16,ports=8,endpoints=2,links=20,seed=1").unwrap();
        assert_eq!(t.num_endpoints(), 32);
        let t = from_spec("xgft:h=2,m=4,4,w=1,2").unwrap();
        assert_eq!(t.num_endpoints(), 16);
        let t = from_spec("xgft:h=2,m=10,10,w=5,5").unwrap();
        assert_eq!((t.num_endpoints(), t.num_switches()), (100, 100 + 50 + 25));
        let t = from_spec("kautz:b=3,n=3,endpoints=4").unwrap();
        assert_eq!((t.num_switches(), t.num_endpoints()), (108, 432));
        assert_eq!(from_spec("fly:k=4,n=3").unwrap().num_endpoints(), 64);
        assert_eq!(
            from_spec("kary-ntree:k=2,n=2,latency=3")
                .unwrap()
                .max_latency(),
            3
        );
        let e = |s: &str| from_spec(s).unwrap_err().to_string();
        assert!(e("kary-ntree:k=x,n=3").contains("parameter 'k': 'x'"));
        assert!(e("kary-ntree:n=3").contains("missing parameter 'k'"));
        assert!(e("torus:6x6,foo=1").contains("unknown parameter 'foo'"));
        assert!(e("torus:6xa").contains("side 'a'"));
        assert!(e("torus:endpoints=2").contains("missing the sides"));
        assert!(e("hypercube:n=3").contains("unknown topology kind 'hypercube'"));
        assert!(e("xgft:h=2,m=10,w=5,5").contains("2 values of m"));
        assert!(e("xgft:h=2,m=4,4,w=1,2,endpoints=1,total_endpoints=4").contains("not both"));
        assert!(e("kautz:b=3,n=3,endpoints=4,endpoints=5").contains("'endpoints' given twice"));
        assert!(e("random:switches=4,ports=8,endpoints=2,seed=1").contains("'links'"));
        assert!(e("fly:k=4,n=3,m=2").contains("unknown parameter 'm'"));
    }
}
