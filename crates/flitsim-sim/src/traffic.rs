//! Traffic: destination patterns and random streams.
use crate::config::{HotspotConfig, PatternKind};
use flitsim_topology::{generators, Shape, Topology};
use rand::{seq::SliceRandom, Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Random generator type of every component.
pub type ComponentRng = Pcg64Mcg;

/// Stream kinds, so that adding a component of one kind never shifts another kind's numbers.
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
pub enum StreamKind {
    /// A traffic source (endpoint × class).
    Source = 1,
    /// A destination pattern's build-time choices (permutation, hot endpoints).
    Pattern = 2,
    /// Test hooks of the engine (the shuffled visiting order).
    Test = 3,
    /// An explicit or generated flow (index: the flow id).
    Flow = 4,
    /// A flow set's choices of pairs (index: the set's position).
    FlowSet = 5,
    /// Clock offsets of switches and hosts (deadline-based QoS, `qos.clock_skew`).
    Clock = 6,
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The random stream of component `index` of `kind` under `root` seed.
pub fn stream(root: u64, kind: StreamKind, index: u64) -> ComponentRng {
    let a = splitmix(root ^ splitmix(kind as u64));
    let b = splitmix(a ^ splitmix(index.wrapping_add(0x5851_f42d_4c95_7f2d)));
    let seed = ((a as u128) << 64) | b as u128;
    ComponentRng::from_seed(seed.to_le_bytes())
}

/// A destination pattern ready to draw from.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// Uniform over `0..n` (self included when `include_self`).
    Uniform {
        /// Endpoint count.
        n: u32,
        /// Whether the source itself may be drawn.
        include_self: bool,
    },
    /// A fixed map source → destination.
    Fixed(Vec<u32>),
    /// Hot spot over uniform.
    Hotspot {
        /// Endpoint count.
        n: u32,
        /// Hot endpoints.
        hot: Vec<u32>,
        /// Probability of choosing a hot endpoint.
        fraction: f64,
    },
}

fn log2_exact(n: u32) -> Option<u32> {
    if n.is_power_of_two() {
        Some(n.trailing_zeros())
    } else {
        None
    }
}

impl Pattern {
    /// Builds the pattern for `topo`. Errors name the pattern and the reason.
    pub fn build(
        kind: PatternKind,
        hotspot: Option<&HotspotConfig>,
        topo: &Topology,
        seed: u64,
    ) -> Result<Pattern, String> {
        let n = topo.num_endpoints() as u32;
        let bits = || {
            log2_exact(n).ok_or_else(|| {
                format!(
                    "traffic.pattern = \"{}\" needs a power-of-two number of endpoints, not {n}",
                    kind.name()
                )
            })
        };
        let fixed = |f: &dyn Fn(u32) -> u32| Pattern::Fixed((0..n).map(f).collect());
        Ok(match kind {
            PatternKind::Uniform => Pattern::Uniform {
                n,
                include_self: true,
            },
            PatternKind::UniformOthers => {
                if n < 2 {
                    return Err(
                        "traffic.pattern = uniform_others needs at least 2 endpoints".into(),
                    );
                }
                Pattern::Uniform {
                    n,
                    include_self: false,
                }
            }
            PatternKind::BitReversal => {
                let b = bits()?;
                fixed(&|s| {
                    if b == 0 {
                        0
                    } else {
                        s.reverse_bits() >> (32 - b)
                    }
                })
            }
            PatternKind::BitComplement => {
                let _ = bits()?;
                fixed(&|s| (n - 1) ^ s)
            }
            PatternKind::Transpose => {
                let b = bits()?;
                if b % 2 != 0 {
                    return Err(format!("traffic.pattern = transpose needs an even number of address bits ({n} endpoints has {b})"));
                }
                let h = b / 2;
                let mask = (1u32 << h) - 1;
                fixed(&|s| ((s & mask) << h) | (s >> h))
            }
            PatternKind::Shuffle => {
                let b = bits()?;
                fixed(&|s| {
                    if b == 0 {
                        0
                    } else {
                        ((s << 1) | (s >> (b - 1))) & (n - 1)
                    }
                })
            }
            PatternKind::Tornado => match topo.shape() {
                Shape::Torus {
                    sides,
                    endpoints_per_switch,
                    ..
                } => {
                    let eps = *endpoints_per_switch;
                    fixed(&|s| {
                        let (sw, off) = (s / eps, s % eps);
                        let c: Vec<u32> = generators::coords(sides, sw)
                            .iter()
                            .zip(sides)
                            .map(|(&x, &k)| (x + k.div_ceil(2) - 1) % k)
                            .collect();
                        generators::index(sides, &c) * eps + off
                    })
                }
                _ => fixed(&|s| (s + n.div_ceil(2) - 1) % n),
            },
            PatternKind::RandomPermutation => {
                let mut rng = stream(seed, StreamKind::Pattern, 0);
                let mut p: Vec<u32> = (0..n).collect();
                p.shuffle(&mut rng);
                Pattern::Fixed(p)
            }
            PatternKind::Hotspot => {
                let h = hotspot.ok_or("traffic.hotspot is required with pattern = \"hotspot\"")?;
                if h.endpoints > n {
                    return Err(format!(
                        "traffic.hotspot.endpoints = {} exceeds the {n} endpoints",
                        h.endpoints
                    ));
                }
                let mut rng = stream(seed, StreamKind::Pattern, 1);
                let mut all: Vec<u32> = (0..n).collect();
                all.shuffle(&mut rng);
                let mut hot = all[..h.endpoints as usize].to_vec();
                hot.sort_unstable();
                Pattern::Hotspot {
                    n,
                    hot,
                    fraction: h.fraction,
                }
            }
        })
    }

    /// Draws a destination for `src`.
    #[inline]
    pub fn draw(&self, src: u32, rng: &mut ComponentRng) -> u32 {
        match self {
            Pattern::Uniform {
                n,
                include_self: true,
            } => rng.gen_range(0..*n),
            Pattern::Uniform {
                n,
                include_self: false,
            } => {
                let d = rng.gen_range(0..*n - 1);
                if d >= src {
                    d + 1
                } else {
                    d
                }
            }
            Pattern::Fixed(map) => map[src as usize],
            Pattern::Hotspot { n, hot, fraction } => {
                if rng.gen::<f64>() < *fraction {
                    hot[rng.gen_range(0..hot.len())]
                } else {
                    rng.gen_range(0..*n)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(kind: PatternKind, topo: &Topology) -> Vec<u32> {
        match Pattern::build(kind, None, topo, 1).unwrap() {
            Pattern::Fixed(v) => v,
            _ => panic!("not fixed"),
        }
    }

    #[test]
    fn bit_patterns_match_their_definitions_on_16_endpoints() {
        let t = generators::torus(&[4, 4], 1, 1, 1).unwrap();
        // 4 address bits: 0b0001 -> reversal 0b1000, complement 0b1110, transpose 0b0100, shuffle 0b0010
        assert_eq!(fixed(PatternKind::BitReversal, &t)[1], 8);
        assert_eq!(fixed(PatternKind::BitComplement, &t)[1], 14);
        assert_eq!(fixed(PatternKind::Transpose, &t)[1], 4);
        assert_eq!(fixed(PatternKind::Shuffle, &t)[1], 2);
        assert_eq!(fixed(PatternKind::Shuffle, &t)[8], 1);
        // Tornado on a 4x4 torus: each coordinate moves ceil(4/2)-1 = 1 ahead.
        assert_eq!(fixed(PatternKind::Tornado, &t)[0], 5);
        assert_eq!(fixed(PatternKind::Tornado, &t)[15], 0);
        for k in [
            PatternKind::BitReversal,
            PatternKind::BitComplement,
            PatternKind::Transpose,
            PatternKind::Shuffle,
            PatternKind::Tornado,
            PatternKind::RandomPermutation,
        ] {
            let mut v = fixed(k, &t);
            v.sort_unstable();
            assert_eq!(v, (0..16).collect::<Vec<_>>(), "{k:?} is a permutation");
        }
    }

    #[test]
    fn bit_patterns_reject_non_power_of_two() {
        let t = generators::torus(&[3, 3], 1, 1, 1).unwrap();
        let e = Pattern::build(PatternKind::BitReversal, None, &t, 1).unwrap_err();
        assert!(e.contains("power-of-two"), "{e}");
    }

    #[test]
    fn hotspot_fraction_is_respected() {
        let t = generators::torus(&[4, 4], 4, 1, 1).unwrap();
        let h = HotspotConfig {
            endpoints: 2,
            fraction: 0.3,
        };
        let p = Pattern::build(PatternKind::Hotspot, Some(&h), &t, 5).unwrap();
        let hot = match &p {
            Pattern::Hotspot { hot, .. } => hot.clone(),
            _ => unreachable!(),
        };
        let mut rng = stream(9, StreamKind::Source, 0);
        let draws = 100_000;
        let hits = (0..draws)
            .filter(|_| hot.contains(&p.draw(0, &mut rng)))
            .count() as f64;
        // P(hot) = 0.3 + 0.7 * 2/64
        let expect = 0.3 + 0.7 * 2.0 / 64.0;
        assert!(
            (hits / draws as f64 - expect).abs() < 0.01,
            "{}",
            hits / draws as f64
        );
    }

    #[test]
    fn streams_are_independent_and_reproducible() {
        let mut a = stream(1, StreamKind::Source, 0);
        let mut b = stream(1, StreamKind::Source, 0);
        let mut c = stream(1, StreamKind::Source, 1);
        let x: u64 = a.gen();
        assert_eq!(x, b.gen::<u64>());
        assert_ne!(x, c.gen::<u64>());
    }
}
