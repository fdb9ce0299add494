//! Recognising a torus or mesh from the graph alone: [`detect_torus`].
//!
//! A torus or mesh is the Cartesian product of rings (torus) or paths (mesh), one per
//! dimension. The detection finds the factors around one switch, the *origin*, lays out every
//! switch from them, and then checks the whole graph link by link, so it never accepts a
//! topology that is not exactly a torus or mesh of the dimensions it reports.
//!
//! ## Steps
//!
//! 1. **Origin**: among the switches with the fewest switch neighbours (a corner of a mesh;
//!    any switch of a torus), the one with the lowest node GUID (the lowest index when some
//!    switch has none).
//! 2. **Axes**: two neighbours `u`, `v` of the origin `o` lie in different dimensions exactly
//!    when they close a square `o–u–w–v` (a common neighbour `w ≠ o`). Neighbours that close no
//!    square with each other are the two directions of one ring (sides 3 and ≥ 5); a
//!    neighbour that closes a square with every other one is an axis of its own.
//! 3. **Sides**: from `o`, each axis is followed *straight* (the next switch shares no common
//!    neighbour with the previous one except the current one) until it returns to `o` (a
//!    ring), stops (a path: a mesh dimension) or after one step (a side-2 dimension).
//! 4. **Rings of side 4**: a 4-ring is itself the product of two 2-paths (a 4×4 torus *is* a
//!    4-cube), so the graph alone cannot tell one side-4 dimension from two side-2 ones. Two
//!    side-2 axes whose ports at the origin are adjacent (the last port of one + 1 = the first
//!    port of the other, as in flitsim's port convention, where a side-2 dimension leaves its
//!    "−" ports unconnected) are taken as one ring of side 4, unless the topology is a mesh.
//! 5. **Order and orientation**: dimensions are ordered by the lowest port of the origin that
//!    leads into them, and "+" is the neighbour reached by the lower port. For a torus or mesh
//!    written by flitsim (`flitsim topo generate … --format ibnetdiscover`), this reproduces the
//!    generator's coordinates, so `dor` gives the same tables on the file as on the generated
//!    topology.
//! 6. **Layout and check**: the switch at coordinates `c` (two non-zero coordinates `i`, `j`)
//!    is the common neighbour of the switches at `c − e_i` and `c − e_j` other than the one at
//!    `c − e_i − e_j`; then every switch must be placed once, have exactly the neighbours its
//!    coordinates give it, and be joined to each by the same number of parallel links.
//!
//! Everything is linear in the number of links.
use crate::{PortNum, Shape, SwitchId, Topology};

/// A torus or mesh found in a topology's graph, with the position of every switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TorusLayout {
    /// Side length per dimension (dimension 0 first).
    pub sides: Vec<u32>,
    /// Rings (torus) or paths (mesh).
    pub wrap: bool,
    /// Parallel links between neighbouring switches.
    pub trunk: u32,
    /// Endpoints on each switch (0 when the count differs between switches).
    pub endpoints_per_switch: u32,
    /// `switch_at[i]`: the switch at mixed-radix position `i` ([`crate::generators::coords`]).
    pub switch_at: Vec<u32>,
    /// `position[s]`: the mixed-radix position of switch `s` (the inverse of `switch_at`).
    pub position: Vec<u32>,
}

impl TorusLayout {
    /// The layout as a [`Shape::Torus`] (which leaves the positions out).
    pub fn shape(&self) -> Shape {
        Shape::Torus {
            sides: self.sides.clone(),
            wrap: self.wrap,
            endpoints_per_switch: self.endpoints_per_switch,
            trunk: self.trunk,
        }
    }

    /// True when switch `s` is at position `s` for every switch (the generator's numbering).
    pub fn is_identity(&self) -> bool {
        self.position
            .iter()
            .enumerate()
            .all(|(i, &p)| p == i as u32)
    }
}

/// Distinct switch neighbours of every switch, sorted, with the link count to each and the
/// lowest port leading there.
struct Adjacency {
    /// `nbrs[s]`: `(neighbour, links, lowest port)`, sorted by neighbour.
    nbrs: Vec<Vec<(u32, u32, PortNum)>>,
}

impl Adjacency {
    fn of(topo: &Topology) -> Adjacency {
        let nbrs = (0..topo.num_switches() as u32)
            .map(|s| {
                let mut m: Vec<(u32, u32, PortNum)> = Vec::new();
                for (p, t, _) in topo.switch_neighbours(SwitchId(s)) {
                    match m.iter_mut().find(|x| x.0 == t.0) {
                        Some(x) => {
                            x.1 += 1;
                            x.2 = x.2.min(p);
                        }
                        None => m.push((t.0, 1, p)),
                    }
                }
                m.sort_unstable();
                m
            })
            .collect();
        Adjacency { nbrs }
    }
    /// Common neighbours of `a` and `b`.
    fn common(&self, a: u32, b: u32) -> Vec<u32> {
        let (x, y) = (&self.nbrs[a as usize], &self.nbrs[b as usize]);
        let (mut i, mut j, mut out) = (0, 0, Vec::new());
        while i < x.len() && j < y.len() {
            match x[i].0.cmp(&y[j].0) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    out.push(x[i].0);
                    i += 1;
                    j += 1;
                }
            }
        }
        out
    }
}

/// One factor found at the origin.
#[derive(Debug)]
struct Axis {
    /// The switches along the axis from the origin (`line[0]` = origin), in "+" order.
    line: Vec<u32>,
    /// A ring (true) or a path (false); side-2 axes are both.
    ring: bool,
    /// The origin's neighbours on the axis (one or two).
    ends: Vec<u32>,
    /// Lowest and highest origin port leading into the axis.
    ports: (PortNum, PortNum),
}

/// Finds a torus or mesh in `topo` from its links alone (see the [steps](self)); `Err` says
/// why the topology is not one, naming a switch where it can.
pub fn detect_torus(topo: &Topology) -> Result<TorusLayout, String> {
    let n = topo.num_switches();
    let name = |s: u32| topo.switches()[s as usize].name.clone();
    if n < 2 {
        return Err(format!(
            "it has {n} switch{}",
            if n == 1 { "" } else { "es" }
        ));
    }
    let adj = Adjacency::of(topo);
    // Parallel links: the same count between all neighbours.
    let trunk = adj.nbrs[0].first().map_or(0, |x| x.1);
    for (s, list) in adj.nbrs.iter().enumerate() {
        if list.is_empty() {
            return Err(format!("switch {} has no switch neighbour", name(s as u32)));
        }
        if let Some(&(t, k, _)) = list.iter().find(|x| x.1 != trunk) {
            return Err(format!(
                "switches {} and {} are joined by {k} links, others by {trunk}",
                name(s as u32),
                name(t)
            ));
        }
    }
    // 1. Origin.
    let min_deg = adj.nbrs.iter().map(Vec::len).min().unwrap_or(0);
    let all_guids = topo.switches().iter().all(|s| s.guid.is_some());
    let origin = (0..n as u32)
        .filter(|&s| adj.nbrs[s as usize].len() == min_deg)
        .min_by_key(|&s| {
            if all_guids {
                (topo.switches()[s as usize].guid.unwrap_or(0), s)
            } else {
                (0, s)
            }
        })
        .expect("some switch has the minimum degree");
    let on = &adj.nbrs[origin as usize];
    // 2. Axes: group neighbours that close no square with each other.
    let squares = |u: u32, v: u32| adj.common(u, v).iter().any(|&w| w != origin);
    let mut group: Vec<Option<usize>> = vec![None; on.len()];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in 0..on.len() {
        if group[i].is_some() {
            continue;
        }
        let g = groups.len();
        group[i] = Some(g);
        let mut members = vec![i];
        for j in i + 1..on.len() {
            if group[j].is_none() && !squares(on[i].0, on[j].0) {
                group[j] = Some(g);
                members.push(j);
            }
        }
        if members.len() > 2 {
            return Err(format!(
                "the switch neighbours of {} do not split into dimensions ({} of them close no \
                 square with each other)",
                name(origin),
                members.len()
            ));
        }
        groups.push(members);
    }
    // 3. Follow each axis straight.
    let straight = |prev: u32, cur: u32| -> Result<Option<u32>, String> {
        let cands: Vec<u32> = adj.nbrs[cur as usize]
            .iter()
            .map(|x| x.0)
            .filter(|&x| x != prev && adj.common(x, prev).iter().all(|&w| w == cur))
            .collect();
        match cands.len() {
            0 => Ok(None),
            1 => Ok(Some(cands[0])),
            _ => Err(format!(
                "from switch {} through switch {} the way straight on is not unique",
                name(prev),
                name(cur)
            )),
        }
    };
    let mut axes: Vec<Axis> = Vec::new();
    for members in &groups {
        let mut ends: Vec<(u32, PortNum)> = members.iter().map(|&i| (on[i].0, on[i].2)).collect();
        ends.sort_by_key(|e| e.1);
        let first = ends[0].0;
        let mut line = vec![origin, first];
        let ring;
        loop {
            let (prev, cur) = (line[line.len() - 2], line[line.len() - 1]);
            match straight(prev, cur)? {
                Some(x) if x == origin => {
                    ring = true;
                    break;
                }
                Some(x) => {
                    if line.len() > n {
                        return Err(format!(
                            "the line from switch {} does not end",
                            name(origin)
                        ));
                    }
                    line.push(x);
                }
                None => {
                    ring = line.len() == 2;
                    break;
                }
            }
        }
        if ends.len() == 2 {
            // Both directions of a ring: the line must come back through the other one.
            if !ring || line.last() != Some(&ends[1].0) || line.len() < 3 {
                return Err(format!(
                    "the ring through switches {} and {} around switch {} does not close",
                    name(ends[0].0),
                    name(ends[1].0),
                    name(origin)
                ));
            }
        } else if ring && line.len() > 2 {
            return Err(format!(
                "the ring from switch {} through switch {} comes back by a single port",
                name(origin),
                name(first)
            ));
        }
        axes.push(Axis {
            line,
            ring,
            ends: ends.iter().map(|e| e.0).collect(),
            ports: (ends[0].1, ends[0].1),
        });
    }
    // Highest origin port into each axis (over all parallel links).
    for (p, t, _) in topo.switch_neighbours(SwitchId(origin)) {
        if let Some(a) = axes.iter_mut().find(|a| a.ends.contains(&t.0)) {
            a.ports.1 = a.ports.1.max(p);
        }
    }
    axes.sort_by_key(|a| a.ports.0);
    let paths = axes.iter().any(|a| !a.ring && a.line.len() > 2);
    let rings = axes.iter().any(|a| a.ring && a.line.len() > 2);
    if paths && rings {
        return Err(format!(
            "around switch {} some dimensions are rings and others paths (a torus and a mesh at once)",
            name(origin)
        ));
    }
    // 4. Pair side-2 axes into rings of side 4 by the port rule.
    let mut dims: Vec<Vec<u32>> = Vec::new();
    let mut i = 0;
    while i < axes.len() {
        let a = &axes[i];
        if !paths && a.line.len() == 2 && i + 1 < axes.len() {
            let b = &axes[i + 1];
            if b.line.len() == 2 && a.ports.1 + 1 == b.ports.0 {
                let far: Vec<u32> = adj
                    .common(a.line[1], b.line[1])
                    .into_iter()
                    .filter(|&w| w != origin)
                    .collect();
                if far.len() == 1 {
                    dims.push(vec![origin, a.line[1], far[0], b.line[1]]);
                    i += 2;
                    continue;
                }
            }
        }
        dims.push(a.line.clone());
        i += 1;
    }
    let wrap = !paths;
    let sides: Vec<u32> = dims.iter().map(|l| l.len() as u32).collect();
    let total = sides
        .iter()
        .try_fold(1u64, |acc, &k| acc.checked_mul(k as u64))
        .unwrap_or(u64::MAX);
    if total != n as u64 {
        return Err(format!(
            "the dimensions around switch {} ({}) give {total} switches, but there are {n}",
            name(origin),
            sides_str(&sides)
        ));
    }
    // 6. Lay out every switch.
    const NONE: u32 = u32::MAX;
    let mut switch_at = vec![NONE; n];
    let mut position = vec![NONE; n];
    let mut c = vec![0u32; sides.len()];
    let strides: Vec<usize> = sides
        .iter()
        .scan(1usize, |acc, &k| {
            let s = *acc;
            *acc *= k as usize;
            Some(s)
        })
        .collect();
    for idx in 0..n {
        if idx > 0 {
            // Next coordinates, dimension 0 fastest.
            for d in 0..c.len() {
                c[d] += 1;
                if c[d] < sides[d] {
                    break;
                }
                c[d] = 0;
            }
        }
        let nz: Vec<usize> = (0..c.len()).filter(|&d| c[d] != 0).take(2).collect();
        let s = match nz.len() {
            0 => origin,
            1 => dims[nz[0]][c[nz[0]] as usize],
            _ => {
                let (i, j) = (nz[0], nz[1]);
                let a = switch_at[idx - strides[i]];
                let b = switch_at[idx - strides[j]];
                let z = switch_at[idx - strides[i] - strides[j]];
                let cands: Vec<u32> = adj.common(a, b).into_iter().filter(|&w| w != z).collect();
                if cands.len() != 1 {
                    return Err(format!(
                        "no single switch completes the square of switches {}, {} and {} (found {})",
                        name(a),
                        name(z),
                        name(b),
                        cands.len()
                    ));
                }
                cands[0]
            }
        };
        if position[s as usize] != NONE {
            return Err(format!(
                "switch {} falls on two positions of a {} {}",
                name(s),
                sides_str(&sides),
                if wrap { "torus" } else { "mesh" }
            ));
        }
        position[s as usize] = idx as u32;
        switch_at[idx] = s;
    }
    // Check every switch's neighbours against its coordinates.
    let kind = if wrap { "torus" } else { "mesh" };
    let mut expect: Vec<u32> = Vec::new();
    for s in 0..n as u32 {
        let p = position[s as usize] as usize;
        expect.clear();
        for d in 0..sides.len() {
            let k = sides[d] as usize;
            let cd = (p / strides[d]) % k;
            let base = p - cd * strides[d];
            let mut add = |x: usize| expect.push(switch_at[base + x * strides[d]]);
            if cd + 1 < k {
                add(cd + 1);
            } else if wrap {
                add(0);
            }
            if cd > 0 {
                add(cd - 1);
            } else if wrap {
                add(k - 1);
            }
        }
        expect.sort_unstable();
        expect.dedup();
        let have: Vec<u32> = adj.nbrs[s as usize].iter().map(|x| x.0).collect();
        if have != expect {
            return Err(format!(
                "switch {} has {} switch neighbours where position {} of a {} {kind} has {}{}",
                name(s),
                have.len(),
                crate::generators::coords(&sides, p as u32)
                    .iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                sides_str(&sides),
                expect.len(),
                if have.len() == expect.len() {
                    " (but other ones)"
                } else {
                    ""
                }
            ));
        }
    }
    // Endpoints per switch.
    let counts: Vec<usize> = (0..n as u32)
        .map(|s| topo.switch_endpoints(SwitchId(s)).count())
        .collect();
    let endpoints_per_switch = if counts.iter().all(|&c| c == counts[0]) {
        counts[0] as u32
    } else {
        0
    };
    Ok(TorusLayout {
        sides,
        wrap,
        trunk,
        endpoints_per_switch,
        switch_at,
        position,
    })
}

fn sides_str(sides: &[u32]) -> String {
    sides
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

/// The [`Shape`] of `topo`: its generator's when it has one, else a torus or mesh found by
/// [`detect_torus`], else [`Shape::Irregular`].
pub fn shape_of(topo: &Topology) -> Shape {
    match topo.shape() {
        Shape::Irregular => detect_torus(topo)
            .map(|l| l.shape())
            .unwrap_or(Shape::Irregular),
        s => s.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{generators, NodeId};

    #[test]
    fn generated_tori_and_meshes_are_found_with_the_generators_coordinates() {
        let cases: &[(&[u32], bool, u32, u32)] = &[
            (&[4, 4], true, 1, 1),
            (&[4, 4], true, 2, 1),
            (&[4, 4], false, 1, 1),
            (&[3, 4, 2], true, 1, 1),
            (&[3, 4, 2], false, 2, 1),
            (&[3, 4, 2], true, 2, 2),
            (&[6, 6], true, 1, 3),
            (&[5], true, 1, 1),
            (&[3, 3, 3], true, 1, 1),
            (&[2, 2, 2], true, 1, 1),
            (&[2, 2, 2], false, 1, 1),
            (&[4, 4, 4], true, 2, 1),
            (&[8, 4, 3, 2], true, 1, 1),
            (&[5, 3], false, 1, 1),
        ];
        for &(sides, wrap, eps, trunk) in cases {
            let t = generators::torus_or_mesh(sides, eps, trunk, 1, wrap).unwrap();
            let l = detect_torus(&t).unwrap_or_else(|e| panic!("{sides:?} {wrap}: {e}"));
            let want_wrap = wrap || sides.iter().all(|&k| k == 2);
            assert_eq!(
                (l.sides.as_slice(), l.wrap, l.trunk, l.endpoints_per_switch),
                (sides, want_wrap, trunk, eps),
                "{sides:?} {wrap}"
            );
            assert!(l.is_identity(), "{sides:?} {wrap}: {:?}", l.position);
        }
    }

    #[test]
    fn other_topologies_are_refused_with_a_reason() {
        let t = generators::kary_ntree(4, 2, 1).unwrap();
        let e = detect_torus(&t).unwrap_err();
        assert!(!e.is_empty());
        let p = generators::RandomParams {
            switches: 16,
            ports: 8,
            endpoints_per_switch: 1,
            links: 32,
            multi_links: false,
            latency: 1,
            seed: 5,
        };
        assert!(detect_torus(&generators::random(&p).unwrap()).is_err());
        // A 4x4 torus with one extra link is not a torus.
        let g = generators::torus(&[4, 4], 1, 1, 1).unwrap();
        let mut sw = g.switches().to_vec();
        for s in sw.iter_mut() {
            s.ports += 1;
        }
        let mut links = g.links().to_vec();
        let extra = sw[0].ports - 1;
        links.push(crate::Link {
            a: crate::PortRef {
                node: NodeId::Switch(0),
                port: extra,
            },
            b: crate::PortRef {
                node: NodeId::Switch(10),
                port: extra,
            },
            latency: 1,
            width: 1,
        });
        let t = Topology::new("x", Shape::Irregular, sw, g.endpoints().to_vec(), links).unwrap();
        let e = detect_torus(&t).unwrap_err();
        assert!(e.contains("switch"), "{e}");
    }
}
