//! DFSSSP's offline layering (Algorithm 2 of Domke, Hoefler & Nagel, IPDPS 2011): cycle
//! search per layer, cutting each cycle found by the edge a [`CycleHeuristic`] picks.
use super::paths::{Deps, PathSet};

/// Which edge of a dependency cycle the offline cycle breaking cuts (Domke, Hoefler & Nagel,
/// "Deadlock-Free Oblivious Routing for Arbitrary Topologies", IPDPS 2011, Section IV). All
/// paths inducing the chosen dependency move to the next layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CycleHeuristic {
    /// The dependency induced by the fewest paths (the paper's choice: it moves the fewest
    /// paths to the next layer).
    #[default]
    Weakest,
    /// The dependency induced by the most paths (hoping to break undiscovered cycles of the
    /// same paths at once).
    Strongest,
    /// The first dependency of the cycle the search discovered (the paper's "pseudo-random"
    /// heuristic).
    First,
}

impl CycleHeuristic {
    /// Every heuristic, the default first (for help texts and choices).
    pub const ALL: [CycleHeuristic; 3] = [
        CycleHeuristic::Weakest,
        CycleHeuristic::Strongest,
        CycleHeuristic::First,
    ];

    /// Lower-case name, as in option strings.
    pub fn name(self) -> &'static str {
        match self {
            CycleHeuristic::Weakest => "weakest",
            CycleHeuristic::Strongest => "strongest",
            CycleHeuristic::First => "first",
        }
    }
}

/// Layer of each unit and the number of layers used, or the number of layers reached when
/// the search gave up at `cap`.
pub(in crate::routing) type LayerResult = Result<(Vec<u8>, usize), usize>;

/// Algorithm 2 of Domke, Hoefler & Nagel (IPDPS 2011): every path starts in layer 0; an
/// iterative depth-first search looks for a cycle in the current layer's CDG; when it finds
/// one it cuts the edge `heuristic` picks by moving every path of this layer that induces it
/// to the next layer, and resumes where it stopped. When the layer is acyclic, the next one
/// is processed the same way, until a layer keeps all its paths. Returns the layer of every
/// unit and the number of layers; fails with the number reached if more than `cap` layers
/// would be needed, or with `cap + 1` when cancelled (callers check
/// [`flitsim_topology::cancel`] after layering).
///
/// Resuming is sound: the search keeps the invariant that black (finished) channels only
/// depend on black channels, and the black part is acyclic. Cutting edges never breaks that.
/// Cutting may break the grey path the search is on; the path is then truncated before the
/// first edge that vanished, and the channels above return to white to be searched again.
pub(in crate::routing) fn offline_layers(
    paths: &PathSet,
    deps: &Deps,
    channels: usize,
    heuristic: CycleHeuristic,
    cap: usize,
) -> LayerResult {
    const WHITE: u8 = 0;
    const GREY: u8 = 1;
    const BLACK: u8 = 2;
    let mut layer = vec![0u8; paths.len()];
    // Paths (endpoint pairs) of the current / next layer inducing each dependency.
    let mut cnt = vec![0u64; deps.len()];
    let mut next = vec![0u64; deps.len()];
    for u in 0..paths.len() {
        for &i in deps.of_unit(u) {
            cnt[i as usize] += paths.weight[u] as u64;
        }
    }
    let mut colour = vec![WHITE; channels];
    let mut position = vec![0u32; channels];
    // The grey path: channel, next dependency to look at, dependency it was entered by.
    let mut stack: Vec<(u32, u32, u32)> = Vec::new();
    let mut current: usize = 0;
    loop {
        colour.fill(WHITE);
        let mut moved_any = false;
        for root in 0..channels as u32 {
            if flitsim_topology::cancel::is_requested() {
                return Err(cap + 1);
            }
            if colour[root as usize] != WHITE || deps.out(root).is_empty() {
                continue;
            }
            colour[root as usize] = GREY;
            position[root as usize] = 0;
            stack.push((root, deps.out(root).start, u32::MAX));
            while let Some(top) = stack.last_mut() {
                let (u, cursor, _) = *top;
                if cursor == deps.out(u).end {
                    colour[u as usize] = BLACK;
                    stack.pop();
                    continue;
                }
                top.1 += 1;
                if cnt[cursor as usize] == 0 {
                    continue;
                }
                let v = deps.to[cursor as usize];
                match colour[v as usize] {
                    WHITE => {
                        colour[v as usize] = GREY;
                        position[v as usize] = stack.len() as u32;
                        stack.push((v, deps.out(v).start, cursor));
                    }
                    GREY => {
                        // Cycle: the dependencies the grey path entered v's successors by,
                        // then the back edge.
                        let start = position[v as usize] as usize + 1;
                        let cycle = stack[start..]
                            .iter()
                            .map(|&(_, _, d)| d)
                            .chain(std::iter::once(cursor));
                        let cut = match heuristic {
                            CycleHeuristic::First => {
                                stack.get(start).map_or(cursor, |&(_, _, d)| d)
                            }
                            CycleHeuristic::Weakest => cycle
                                .min_by_key(|&d| cnt[d as usize])
                                .expect("a cycle has edges"),
                            CycleHeuristic::Strongest => cycle
                                .rev()
                                .max_by_key(|&d| cnt[d as usize])
                                .expect("a cycle has edges"),
                        };
                        moved_any = true;
                        for &p in deps.units_of(cut) {
                            let p = p as usize;
                            if layer[p] as usize != current {
                                continue;
                            }
                            layer[p] = (current + 1).min(u8::MAX as usize) as u8;
                            let w = paths.weight[p] as u64;
                            for &i in deps.of_unit(p) {
                                cnt[i as usize] -= w;
                                next[i as usize] += w;
                            }
                        }
                        // Truncate the grey path before the first edge that vanished.
                        if let Some(j) = (1..stack.len()).find(|&j| cnt[stack[j].2 as usize] == 0) {
                            for &(c, _, _) in &stack[j..] {
                                colour[c as usize] = WHITE;
                            }
                            stack.truncate(j);
                        }
                    }
                    _ => {}
                }
            }
        }
        if !moved_any {
            return Ok((layer, current + 1));
        }
        current += 1;
        if current + 1 > cap {
            return Err(current + 1);
        }
        std::mem::swap(&mut cnt, &mut next);
        next.fill(0);
    }
}
