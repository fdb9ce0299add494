//! Fat trees and their relatives: the k-ary n-tree ([`kary_ntree`]), the extended generalized
//! fat tree ([`xgft`], [`xgft_with_leaves`]) and the folded k-ary n-fly
//! ([`folded_butterfly`]), which shares the k-ary n-tree's builder.
use super::{attach_endpoints, check_size, endpoint, ep, finish, param_err, sw, EndpointPlacement};
use crate::{Link, PortNum, Shape, Switch, Topology, TopologyError};

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
    if latency == 0 {
        return Err(param_err("kary-ntree: latency must be at least 1"));
    }
    kary_stages(
        "kary-ntree",
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
/// port `e mod k` of stage-0 switch `e / k`. The caller has checked `k ≥ 2`, `n ≥ 1` and the
/// latency; this checks the sizes.
#[allow(clippy::too_many_arguments)]
fn kary_stages(
    family: &str,
    k: u32,
    n: u32,
    latency: u32,
    switch_name: impl Fn(u32, u32) -> String,
    place: impl Fn(u32) -> u32,
    name: String,
    shape: Shape,
) -> Result<Topology, TopologyError> {
    let too_big = || {
        param_err(format!(
            "{family}: {k}^{} switches per stage is too many",
            n - 1
        ))
    };
    let per_stage = k.checked_pow(n - 1).ok_or_else(too_big)?;
    if 2 * k as u64 > PortNum::MAX as u64 {
        return Err(param_err(format!(
            "{family}: {} ports per switch is too many (at most {})",
            2 * k as u64,
            PortNum::MAX
        )));
    }
    let switches64 = u64::from(n).saturating_mul(u64::from(per_stage));
    check_size(
        family,
        switches64,
        u64::from(per_stage).saturating_mul(u64::from(k)),
        switches64.saturating_mul(2 * u64::from(k)),
    )?;
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
    let (endpoints, endpoint_links) = attach_endpoints((0..per_stage).map(|_| k), 0, latency);
    links.extend(endpoint_links);
    finish(Topology::new(name, shape, switches, endpoints, links))
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
    let first_switch_level = if leaves.is_some() { 0 } else { 1 };
    // Sizes, saturating: switches, endpoints and switch ports (a level-l switch has
    // m_l + w_{l+1} ports; a level-0 switch its endpoints + w_1).
    let switches64 = count[first_switch_level..]
        .iter()
        .fold(0u64, |a, &c| a.saturating_add(c));
    let endpoints64 = match leaves {
        None => count[0],
        Some(EndpointPlacement::PerSwitch(e)) => count[0].saturating_mul(u64::from(e)),
        Some(EndpointPlacement::Total(t)) => u64::from(t),
    };
    let mut ports64 = 0u64;
    for l in first_switch_level..=h {
        let up = if l < h { u64::from(w[l]) } else { 0 };
        let down = if l == 0 {
            endpoints64
        } else {
            count[l].saturating_mul(u64::from(m[l - 1]))
        };
        ports64 = ports64
            .saturating_add(down)
            .saturating_add(count[l].saturating_mul(up));
    }
    check_size("xgft", switches64, endpoints64, ports64)?;
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
    // Level-0 nodes that are endpoints are linked above; leaf switches get theirs here.
    let endpoints = match &leaf_eps {
        None => (0..count[0] as u32).map(endpoint).collect(),
        Some(eps) => {
            let (endpoints, endpoint_links) = attach_endpoints(eps.iter().copied(), 0, latency);
            links.extend(endpoint_links);
            endpoints
        }
    };
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
    kary_stages(
        "fly",
        k,
        n,
        latency,
        |i, w| format!("fly_s{i}_{w}"),
        |i| k.pow(n - 2 - i),
        format!("{k}-ary-{n}-fly-folded"),
        Shape::Irregular,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::from_spec;
    use crate::{link_set, NodeId, SwitchId};

    #[test]
    fn kary_ntree_is_connected_and_regular() {
        let t = kary_ntree(4, 3, 1).unwrap();
        assert_eq!(t.num_switches(), 48);
        assert_eq!(t.num_endpoints(), 64);
        assert!(t.is_connected());
        assert_4_ary_3_stage_ports(&t);
    }

    /// Every switch of the 48 of a 4-ary 3-stage network uses all 8 ports but those of the last
    /// stage (32 and up), which use only their 4 down ports.
    fn assert_4_ary_3_stage_ports(t: &Topology) {
        for s in 0..48u32 {
            let used = (0..8)
                .filter(|&p| t.switch_peer(SwitchId(s), p).is_some())
                .count();
            assert_eq!(used, if s >= 32 { 4 } else { 8 }, "switch {s}");
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
    fn folded_butterfly_is_a_full_bmin() {
        let t = folded_butterfly(4, 3, 1).unwrap();
        assert_eq!((t.num_switches(), t.num_endpoints()), (48, 64));
        assert_eq!(t.links().len(), 64 + 2 * 16 * 4);
        assert!(t.is_connected());
        assert_4_ary_3_stage_ports(&t);
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
}
