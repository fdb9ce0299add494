//! The breadth-first search over the switch graph that hop distances, tree levels, diameters
//! and connectivity are computed with: [`Bfs`], reusable so that a search from every switch
//! allocates once, and [`Topology::switch_distances`] for a single search.
use crate::{SwitchId, Topology};

/// Breadth-first hop distances over a graph of nodes `0..n` (switches), with buffers kept
/// between runs.
///
/// ```
/// use flitsim_topology::{generators, Bfs, SwitchId};
/// let ring = generators::torus(&[6], 1, 1, 1).unwrap();
/// let mut bfs = Bfs::default();
/// assert_eq!(bfs.switches(&ring, [0]), &[0, 1, 2, 3, 2, 1]);
/// assert_eq!(ring.switch_distances(SwitchId(3)), [3, 2, 1, 0, 1, 2]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Bfs {
    dist: Vec<u32>,
    /// Nodes in the order the search reached them; also its queue.
    order: Vec<u32>,
}

impl Bfs {
    /// Distance of a node the search did not reach.
    pub const UNREACHED: u32 = u32::MAX;

    /// Searches from `sources` (all at distance 0; repeats are ignored) over nodes `0..n`,
    /// where `neighbours(u)` lists the nodes one hop from `u`. Returns the distance of every
    /// node ([`Bfs::UNREACHED`] if none). Nodes are reached in order of distance, and at
    /// equal distance in the order their predecessors were reached and list them.
    pub fn run<I>(
        &mut self,
        n: usize,
        sources: impl IntoIterator<Item = u32>,
        mut neighbours: impl FnMut(u32) -> I,
    ) -> &[u32]
    where
        I: IntoIterator<Item = u32>,
    {
        self.dist.clear();
        self.dist.resize(n, Self::UNREACHED);
        self.order.clear();
        for s in sources {
            if self.dist[s as usize] == Self::UNREACHED {
                self.dist[s as usize] = 0;
                self.order.push(s);
            }
        }
        let mut head = 0;
        while let Some(&u) = self.order.get(head) {
            head += 1;
            let next = self.dist[u as usize] + 1;
            for v in neighbours(u) {
                if self.dist[v as usize] == Self::UNREACHED {
                    self.dist[v as usize] = next;
                    self.order.push(v);
                }
            }
        }
        &self.dist
    }

    /// [`Bfs::run`] over the switch-to-switch links of `topo` (neighbours in port order).
    pub fn switches(&mut self, topo: &Topology, sources: impl IntoIterator<Item = u32>) -> &[u32] {
        self.run(topo.num_switches(), sources, |u| {
            topo.switch_neighbours(SwitchId(u)).map(|(_, t, _)| t.0)
        })
    }

    /// The distances of the last run.
    pub fn distances(&self) -> &[u32] {
        &self.dist
    }

    /// The nodes the last run reached, in the order it reached them.
    pub fn order(&self) -> &[u32] {
        &self.order
    }
}

impl Topology {
    /// Hop distances (switch-to-switch links) from switch `src` to every switch,
    /// [`Bfs::UNREACHED`] for those it cannot reach. For a search from many switches, reuse a
    /// [`Bfs`].
    pub fn switch_distances(&self, src: SwitchId) -> Vec<u32> {
        let mut bfs = Bfs::default();
        bfs.switches(self, [src.0]);
        bfs.dist
    }
}
