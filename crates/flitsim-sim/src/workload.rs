//! Workload models of a traffic class: message size distributions (`size`) and arrival
//! processes (`process`), their configuration, validation and samplers.
//!
//! Every sampler draws from the random stream it is given (a source's own stream), so a run is
//! deterministic. Sizes are whole flits: a continuous distribution (Pareto, exponential) is
//! rounded *stochastically* — `⌊x⌋ + 1` with probability `x − ⌊x⌋`, else `⌊x⌋` — so the mean
//! message size in flits is exactly the distribution's mean and the class's message rate,
//! `rate / mean size`, yields the configured rate in flits.
use crate::config::ParamError;
use rand::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Largest message a sampler returns, flits (unbounded distributions are cut here).
pub const MAX_MESSAGE_FLITS: u32 = 1 << 30;

/// A class's message size: a number of flits, or a distribution.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(untagged)]
pub enum SizeConfig {
    /// A fixed size, flits (like `message_flits`).
    Flits(u32),
    /// A distribution (`{ dist = "pareto", alpha = 1.5, min = 1, max = 1000 }`).
    Dist(SizeDist),
}

/// A message size distribution. Bounds are flits (sizes with `[units]`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum SizeDist {
    /// Every message has `flits` flits.
    Fixed {
        /// Message size, flits (≥ 1).
        flits: u32,
    },
    /// Uniform over the integers `min..=max`, flits.
    Uniform {
        /// Smallest size, flits (≥ 1).
        min: u32,
        /// Largest size, flits (≥ min).
        max: u32,
    },
    /// Bounded Pareto: density ∝ x^(−α−1) on [min, max], flits. `max` may be omitted only when
    /// α > 1 (the mean is then finite; samples are cut at 2³⁰ flits).
    Pareto {
        /// Shape α (> 0).
        alpha: f64,
        /// Lower bound, flits (≥ 1).
        min: f64,
        /// Upper bound, flits (> min).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<f64>,
    },
    /// Exponential with mean `mean` flits, clipped (clamped) to [min, max]; the resulting mean
    /// (min + mean·(e^(−min/mean) − e^(−max/mean))) is what the message rate uses.
    Exponential {
        /// Mean of the exponential before clipping, flits (> 0).
        mean: f64,
        /// Lower clip, flits (default 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<f64>,
        /// Upper clip, flits (default: none).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<f64>,
    },
    /// Sizes `sizes[i]` flits with probability ∝ `weights[i]`.
    Empirical {
        /// Sizes, flits (each ≥ 1).
        sizes: Vec<u32>,
        /// Non-negative weights, one per size, not all zero.
        weights: Vec<f64>,
    },
}

/// A class's arrival process: a name, or a table with `kind` and parameters.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(untagged)]
pub enum ProcessConfig {
    /// `"bernoulli"`, `"cbr"` or `"poisson"`.
    Simple(SimpleProcess),
    /// `{ kind = "onoff", … }` or `{ kind = "video", … }` (or a simple kind as a table).
    Table(ProcessTable),
}

/// The processes without parameters.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SimpleProcess {
    /// Each cycle a message starts with probability (rate / mean size).
    Bernoulli,
    /// One message every mean size / rate cycles (random phase).
    Cbr,
    /// Exponential inter-arrival times of mean (mean size / rate) cycles in continuous time;
    /// a message is due in the cycle its continuous arrival time falls in.
    Poisson,
}

/// A process with parameters.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ProcessTable {
    /// As `"bernoulli"`.
    Bernoulli,
    /// As `"cbr"`.
    Cbr,
    /// As `"poisson"`.
    Poisson,
    /// On/off: Pareto-distributed on and off periods (cycles). Each burst goes to one
    /// destination, drawn at its start; during a burst messages leave back to back at the peak
    /// rate `rate · (on_mean + off_mean) / on_mean` (≤ 1 flit/cycle), so the long-run rate is
    /// the class rate. Aggregates are self-similar with Hurst parameter (3 − α)/2.
    Onoff {
        /// Shape of the on periods (1 < α < 2 for self-similarity; > 1 required).
        on_alpha: f64,
        /// Shape of the off periods (> 1).
        off_alpha: f64,
        /// Mean on period, cycles (> 0).
        on_mean: f64,
        /// Mean off period, cycles (> 0).
        off_mean: f64,
    },
    /// MPEG video: one frame (one message) every `frame_period` cycles, frame types following
    /// `gop`. Mean sizes are in the ratio I : P : B = i_to_p·p_to_b : p_to_b : 1, scaled so the
    /// mean frame is rate · frame_period flits; each frame is drawn uniformly in the widest
    /// interval around its type's mean that stays in [min, max].
    Video {
        /// Time between frames, cycles (a time with `[units]`, e.g. `"40ms"`).
        frame_period: f64,
        /// Group of pictures, a string of `I`, `P` and `B` (default `"IBBPBBPBBPBB"`).
        #[serde(default = "default_gop")]
        gop: String,
        /// Mean I frame / mean P frame (default 3).
        #[serde(default = "three")]
        i_to_p: f64,
        /// Mean P frame / mean B frame (default 2).
        #[serde(default = "two")]
        p_to_b: f64,
        /// Smallest frame, flits (default 1).
        #[serde(default = "one_f")]
        min: f64,
        /// Largest frame, flits (required without `trace`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max: Option<f64>,
        /// A per-frame size trace (`frame_number type time size` lines, sizes in bytes),
        /// replacing the model: frames are sent in trace order, cyclically, each source from
        /// a random offset; `gop`, `i_to_p`, `p_to_b`, `min` and `max` do not apply and the
        /// class rate is the trace's mean frame / `frame_period`. A relative path starts at
        /// the experiment file's directory; the application reads it into `frames`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trace: Option<String>,
        /// The trace's frame sizes in flits, in trace order (filled in by whoever reads
        /// `trace`; not part of the file).
        #[serde(skip)]
        #[schemars(skip)]
        frames: Option<std::sync::Arc<[u32]>>,
    },
}

fn default_gop() -> String {
    "IBBPBBPBBPBB".into()
}
fn three() -> f64 {
    3.0
}
fn two() -> f64 {
    2.0
}
fn one_f() -> f64 {
    1.0
}

fn bad(key: &str, m: impl Into<String>) -> ParamError {
    ParamError::new(key, m)
}

fn finite_pos(key: &str, v: f64) -> Result<(), ParamError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(bad(key, format!("{v}: must be a positive number")))
    }
}

// ---------------------------------------------------------------------------------------------
// Sizes

/// A ready size sampler.
#[derive(Clone, Debug)]
pub enum SizeSampler {
    /// Always this size.
    Fixed(u32),
    /// Uniform over `min..=max`.
    Uniform(u32, u32),
    /// Bounded Pareto (α, L, 1 − (L/H)^α).
    Pareto(f64, f64, f64),
    /// Exponential mean, clamped to [min, max].
    Exponential(f64, f64, f64),
    /// Sizes and cumulative weights (last = 1).
    Empirical(Vec<u32>, Vec<f64>),
}

impl SizeConfig {
    /// Checks the parameters; `key` is the key of the `size` table
    /// (`traffic.class[0].size`), and errors name the offending sub-key.
    pub fn validate(&self, key: &str) -> Result<(), ParamError> {
        let d = match self {
            SizeConfig::Flits(0) => return Err(bad(key, "must be at least 1 flit")),
            SizeConfig::Flits(_) => return Ok(()),
            SizeConfig::Dist(d) => d,
        };
        match d {
            SizeDist::Fixed { flits } if *flits == 0 => {
                Err(bad(&format!("{key}.flits"), "must be at least 1"))
            }
            SizeDist::Fixed { .. } => Ok(()),
            SizeDist::Uniform { min, max } => {
                if *min == 0 {
                    Err(bad(&format!("{key}.min"), "must be at least 1"))
                } else if max < min {
                    Err(bad(
                        &format!("{key}.max"),
                        format!("{max} is below min {min}"),
                    ))
                } else {
                    Ok(())
                }
            }
            SizeDist::Pareto { alpha, min, max } => {
                finite_pos(&format!("{key}.alpha"), *alpha)?;
                if !(min.is_finite() && *min >= 1.0) {
                    return Err(bad(&format!("{key}.min"), format!("{min}: must be ≥ 1")));
                }
                match max {
                    None if *alpha <= 1.0 => Err(bad(
                        &format!("{key}.max"),
                        format!("needed when alpha ≤ 1 (alpha = {alpha}: the mean is infinite)"),
                    )),
                    Some(h) if !(h.is_finite() && h > min) => Err(bad(
                        &format!("{key}.max"),
                        format!("{h}: must be a number above min {min}"),
                    )),
                    _ => Ok(()),
                }
            }
            SizeDist::Exponential { mean, min, max } => {
                finite_pos(&format!("{key}.mean"), *mean)?;
                let lo = min.unwrap_or(1.0);
                if !(lo.is_finite() && lo >= 1.0) {
                    return Err(bad(&format!("{key}.min"), format!("{lo}: must be ≥ 1")));
                }
                match max {
                    Some(h) if !(h.is_finite() && *h >= lo) => Err(bad(
                        &format!("{key}.max"),
                        format!("{h}: must be a number ≥ min {lo}"),
                    )),
                    _ => Ok(()),
                }
            }
            SizeDist::Empirical { sizes, weights } => {
                if sizes.is_empty() {
                    return Err(bad(&format!("{key}.sizes"), "needs at least one size"));
                }
                if sizes.len() != weights.len() {
                    return Err(bad(
                        &format!("{key}.weights"),
                        format!("{} weights for {} sizes", weights.len(), sizes.len()),
                    ));
                }
                if let Some(i) = sizes.iter().position(|&s| s == 0) {
                    return Err(bad(&format!("{key}.sizes[{i}]"), "must be at least 1"));
                }
                if let Some(i) = weights.iter().position(|w| !(w.is_finite() && *w >= 0.0)) {
                    return Err(bad(
                        &format!("{key}.weights[{i}]"),
                        "must be a non-negative number",
                    ));
                }
                if weights.iter().sum::<f64>() <= 0.0 {
                    return Err(bad(&format!("{key}.weights"), "must not all be zero"));
                }
                Ok(())
            }
        }
    }

    /// The sampler (parameters assumed valid).
    pub fn sampler(&self) -> SizeSampler {
        match self {
            SizeConfig::Flits(f) => SizeSampler::Fixed(*f),
            SizeConfig::Dist(SizeDist::Fixed { flits }) => SizeSampler::Fixed(*flits),
            SizeConfig::Dist(SizeDist::Uniform { min, max }) => SizeSampler::Uniform(*min, *max),
            SizeConfig::Dist(SizeDist::Pareto { alpha, min, max }) => {
                let tail = max.map_or(0.0, |h| (min / h).powf(*alpha));
                SizeSampler::Pareto(*alpha, *min, 1.0 - tail)
            }
            SizeConfig::Dist(SizeDist::Exponential { mean, min, max }) => SizeSampler::Exponential(
                *mean,
                min.unwrap_or(1.0),
                max.unwrap_or(MAX_MESSAGE_FLITS as f64),
            ),
            SizeConfig::Dist(SizeDist::Empirical { sizes, weights }) => {
                let total: f64 = weights.iter().sum();
                let mut acc = 0.0;
                let mut cum: Vec<f64> = weights
                    .iter()
                    .map(|w| {
                        acc += w / total;
                        acc
                    })
                    .collect();
                if let Some(l) = cum.last_mut() {
                    *l = 1.0;
                }
                SizeSampler::Empirical(sizes.clone(), cum)
            }
        }
    }

    /// The largest size, flits (`None`: unbounded).
    pub fn max_flits(&self) -> Option<u32> {
        match self {
            SizeConfig::Flits(f) | SizeConfig::Dist(SizeDist::Fixed { flits: f }) => Some(*f),
            SizeConfig::Dist(SizeDist::Uniform { max, .. }) => Some(*max),
            SizeConfig::Dist(SizeDist::Pareto { max, .. })
            | SizeConfig::Dist(SizeDist::Exponential { max, .. }) => {
                max.map(|h| h.ceil().min(MAX_MESSAGE_FLITS as f64) as u32)
            }
            SizeConfig::Dist(SizeDist::Empirical { sizes, .. }) => sizes.iter().copied().max(),
        }
    }
}

/// `⌊x⌋ + 1` with probability `x − ⌊x⌋`, else `⌊x⌋`: an integer with mean `x`.
fn stochastic_round<R: Rng>(x: f64, rng: &mut R) -> u32 {
    let x = x.clamp(1.0, MAX_MESSAGE_FLITS as f64);
    let f = x.floor();
    let up = rng.gen::<f64>() < x - f;
    f as u32 + up as u32
}

/// A uniform number in (0, 1].
fn open01<R: Rng>(rng: &mut R) -> f64 {
    1.0 - rng.gen::<f64>()
}

impl SizeSampler {
    /// The mean size, flits (exact for the integer sizes drawn).
    pub fn mean(&self) -> f64 {
        self.moment(1)
    }

    /// The `k`-th raw moment (k = 1, 2) of the continuous distribution (before rounding) of a
    /// Pareto or exponential sampler; of the integer sizes otherwise.
    pub fn moment(&self, k: i32) -> f64 {
        match self {
            SizeSampler::Pareto(alpha, l, norm) => {
                let (a, l) = (*alpha, *l);
                let h = if *norm >= 1.0 {
                    f64::INFINITY
                } else {
                    l / (1.0 - norm).powf(1.0 / a)
                };
                let c = a * l.powf(a) / norm;
                let k = k as f64;
                if (k - a).abs() < 1e-12 {
                    c * (h / l).ln()
                } else {
                    c * (h.powf(k - a) - l.powf(k - a)) / (k - a)
                }
            }
            SizeSampler::Exponential(m, a, b) => {
                let (m, a, b) = (*m, *a, *b);
                let (ea, eb) = ((-a / m).exp(), (-b / m).exp());
                if k == 1 {
                    a + m * (ea - eb)
                } else {
                    a * a + 2.0 * m * ((a + m) * ea - (b + m) * eb)
                }
            }
            SizeSampler::Fixed(f) => (*f as f64).powi(k),
            SizeSampler::Uniform(a, b) => {
                // Closed forms over the integers a..=b (no loop over a wide range).
                let (a, b) = (*a as f64, *b as f64);
                let sum_sq = |x: f64| x * (x + 1.0) * (2.0 * x + 1.0) / 6.0;
                if k == 1 {
                    (a + b) / 2.0
                } else {
                    (sum_sq(b) - sum_sq(a - 1.0)) / (b - a + 1.0)
                }
            }
            SizeSampler::Empirical(s, cum) => {
                let mut prev = 0.0;
                s.iter()
                    .zip(cum)
                    .map(|(&s, &c)| {
                        let p = c - prev;
                        prev = c;
                        p * (s as f64).powi(k)
                    })
                    .sum()
            }
        }
    }

    /// A continuous draw (Pareto, exponential) before rounding; the size itself otherwise.
    pub fn sample_real<R: Rng>(&self, rng: &mut R) -> f64 {
        match self {
            SizeSampler::Fixed(f) => *f as f64,
            SizeSampler::Uniform(a, b) => rng.gen_range(*a..=*b) as f64,
            SizeSampler::Pareto(alpha, l, norm) => {
                let u = rng.gen::<f64>();
                l * (1.0 - u * norm).powf(-1.0 / alpha)
            }
            SizeSampler::Exponential(m, a, b) => (-m * open01(rng).ln()).clamp(*a, *b),
            SizeSampler::Empirical(s, cum) => {
                let u = rng.gen::<f64>();
                let i = cum.partition_point(|&c| c <= u).min(s.len() - 1);
                s[i] as f64
            }
        }
    }

    /// One message size, flits.
    pub fn sample<R: Rng>(&self, rng: &mut R) -> u32 {
        match self {
            SizeSampler::Fixed(f) => *f,
            SizeSampler::Pareto(..) | SizeSampler::Exponential(..) => {
                let x = self.sample_real(rng);
                stochastic_round(x, rng)
            }
            _ => self.sample_real(rng) as u32,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Processes

impl ProcessConfig {
    /// Checks the parameters; `key` is the key of the `process` value
    /// (`traffic.class[0].process`). `rate` is the class rate (flits/cycle), `size` its
    /// size sampler (for the video bounds).
    pub fn validate(&self, key: &str, rate: f64, size: &SizeSampler) -> Result<(), ParamError> {
        let ProcessConfig::Table(t) = self else {
            return Ok(());
        };
        match t {
            ProcessTable::Onoff {
                on_alpha,
                off_alpha,
                on_mean,
                off_mean,
            } => {
                for (k, a) in [("on_alpha", on_alpha), ("off_alpha", off_alpha)] {
                    if !(a.is_finite() && *a > 1.0) {
                        return Err(bad(
                            &format!("{key}.{k}"),
                            format!("{a}: must be > 1 (a finite mean period)"),
                        ));
                    }
                }
                finite_pos(&format!("{key}.on_mean"), *on_mean)?;
                finite_pos(&format!("{key}.off_mean"), *off_mean)?;
                let peak = rate * (on_mean + off_mean) / on_mean;
                if peak > 1.0 + 1e-12 {
                    return Err(bad(
                        key,
                        format!(
                            "the peak rate rate·(on_mean+off_mean)/on_mean = {peak} flits/cycle \
                             exceeds the link (1 flit/cycle)"
                        ),
                    ));
                }
                Ok(())
            }
            ProcessTable::Video {
                frame_period,
                trace: Some(path),
                frames,
                ..
            } => {
                finite_pos(&format!("{key}.frame_period"), *frame_period)?;
                let Some(frames) = frames.as_deref().filter(|f| !f.is_empty()) else {
                    return Err(bad(
                        &format!("{key}.trace"),
                        format!("{path:?}: the trace has not been read (or has no frames)"),
                    ));
                };
                let mean = frames.iter().map(|&f| f as f64).sum::<f64>() / frames.len() as f64;
                if mean / frame_period > 1.0 {
                    return Err(bad(
                        &format!("{key}.trace"),
                        format!(
                            "{path:?}: the mean frame ({mean:.3} flits) every {frame_period} \
                             cycles exceeds the link (1 flit/cycle)"
                        ),
                    ));
                }
                let _ = (rate, size);
                Ok(())
            }
            ProcessTable::Video {
                frame_period,
                gop,
                i_to_p,
                p_to_b,
                min,
                max,
                ..
            } => {
                finite_pos(&format!("{key}.frame_period"), *frame_period)?;
                let Some(max) = max else {
                    return Err(bad(
                        &format!("{key}.max"),
                        "needed (the largest frame, flits) unless a `trace` is given",
                    ));
                };
                finite_pos(&format!("{key}.i_to_p"), *i_to_p)?;
                finite_pos(&format!("{key}.p_to_b"), *p_to_b)?;
                if gop.is_empty() || !gop.chars().all(|c| matches!(c, 'I' | 'P' | 'B')) {
                    return Err(bad(
                        &format!("{key}.gop"),
                        format!("{gop:?}: must be a non-empty string of I, P and B"),
                    ));
                }
                if !(min.is_finite() && *min >= 1.0) {
                    return Err(bad(&format!("{key}.min"), format!("{min}: must be ≥ 1")));
                }
                if !(max.is_finite() && *max >= *min) {
                    return Err(bad(
                        &format!("{key}.max"),
                        format!("{max}: must be a number ≥ min {min}"),
                    ));
                }
                let _ = size;
                let v = VideoModel::new(rate, *frame_period, gop, *i_to_p, *p_to_b, *min, *max);
                for (ty, m) in ['I', 'P', 'B'].iter().zip(v.means) {
                    if gop.contains(*ty) && !(m >= *min - 1e-9 && m <= *max + 1e-9) {
                        return Err(bad(
                            key,
                            format!(
                                "at this rate the mean {ty} frame is {m:.3} flits, outside \
                                 [min, max] = [{min}, {max}]"
                            ),
                        ));
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The simple kind, if this is one (`None` for on/off and video).
    pub fn simple(&self) -> Option<SimpleProcess> {
        match self {
            ProcessConfig::Simple(s) => Some(*s),
            ProcessConfig::Table(ProcessTable::Bernoulli) => Some(SimpleProcess::Bernoulli),
            ProcessConfig::Table(ProcessTable::Cbr) => Some(SimpleProcess::Cbr),
            ProcessConfig::Table(ProcessTable::Poisson) => Some(SimpleProcess::Poisson),
            _ => None,
        }
    }
}

/// Frame types and their mean sizes of a video source.
#[derive(Clone, Debug)]
pub struct VideoModel {
    /// Frame type index per GOP position (0 = I, 1 = P, 2 = B).
    pub gop: Vec<u8>,
    /// Mean size per type, flits.
    pub means: [f64; 3],
    /// Bounds, flits.
    pub min: f64,
    /// Upper bound, flits.
    pub max: f64,
}

impl VideoModel {
    /// Mean sizes so the mean frame is `rate · period` flits.
    pub fn new(
        rate: f64,
        period: f64,
        gop: &str,
        i_to_p: f64,
        p_to_b: f64,
        min: f64,
        max: f64,
    ) -> Self {
        let gop: Vec<u8> = gop
            .chars()
            .map(|c| match c {
                'I' => 0,
                'P' => 1,
                _ => 2,
            })
            .collect();
        let rel = [i_to_p * p_to_b, p_to_b, 1.0];
        let sum: f64 = gop.iter().map(|&t| rel[t as usize]).sum();
        let b = rate * period * gop.len() as f64 / sum;
        VideoModel {
            gop,
            means: [rel[0] * b, rel[1] * b, rel[2] * b],
            min,
            max,
        }
    }

    /// The size of a frame of type `ty`, flits: uniform on the widest interval centred on the
    /// type's mean inside [min, max], rounded stochastically (so bounds and mean hold).
    pub fn frame<R: Rng>(&self, ty: u8, rng: &mut R) -> u32 {
        let m = self.means[ty as usize].clamp(self.min, self.max);
        let d = (m - self.min).min(self.max - m);
        let x = m + d * (2.0 * rng.gen::<f64>() - 1.0);
        let x = x.clamp(self.min, self.max);
        // Stochastic rounding stays within [⌊min⌋.., ⌈max⌉]; with integer bounds, inside them.
        let f = x.floor();
        (f as u32 + (rng.gen::<f64>() < x - f) as u32).max(1)
    }
}

/// A Pareto period of mean `mean` and shape `alpha` (> 1): minimum `mean (α − 1) / α`.
fn pareto_period<R: Rng>(alpha: f64, mean: f64, rng: &mut R) -> f64 {
    let l = mean * (alpha - 1.0) / alpha;
    l * open01(rng).powf(-1.0 / alpha)
}

/// The arrival state of one source with a configured `size` or `process`.
#[derive(Clone, Debug)]
pub enum Arrivals {
    /// Bernoulli: geometric gaps with parameter `p` (messages per cycle).
    Bernoulli {
        /// Messages per cycle.
        p: f64,
        /// ln(1 − p).
        ln_q: f64,
    },
    /// CBR: a message every `period` cycles; `acc` the continuous time of the next.
    Cbr {
        /// Cycles per message.
        period: f64,
        /// Continuous time of the next message.
        acc: f64,
    },
    /// Poisson: exponential gaps of mean `mean_gap`; `acc` the continuous time of the next.
    Poisson {
        /// Mean inter-arrival time, cycles.
        mean_gap: f64,
        /// Continuous time of the next message.
        acc: f64,
    },
    /// On/off bursts.
    OnOff {
        /// Peak rate during a burst, flits/cycle.
        peak: f64,
        /// Shapes and means of the on and off periods.
        on: (f64, f64),
        /// Off period (alpha, mean).
        off: (f64, f64),
        /// Continuous time of the next message.
        next: f64,
        /// End of the current on period.
        on_end: f64,
        /// The burst's destination (`u32::MAX`: draw at the next message).
        dst: u32,
    },
    /// Video frames.
    Video {
        /// Frame model.
        model: Box<VideoModel>,
        /// Frame period, cycles.
        period: f64,
        /// Continuous time of the next frame.
        acc: f64,
        /// GOP position of the next frame.
        pos: usize,
    },
    /// Video frames from a trace.
    Trace {
        /// Frame sizes, flits, in trace order.
        frames: std::sync::Arc<[u32]>,
        /// Frame period, cycles.
        period: f64,
        /// Continuous time of the next frame.
        acc: f64,
        /// Trace position of the next frame.
        pos: usize,
    },
}

impl Arrivals {
    /// The arrival state of a source of `rate` flits/cycle with mean message size `mean`
    /// flits; `default` is the process when none is configured (`traffic.injection`).
    pub fn new(
        process: Option<&ProcessConfig>,
        default: SimpleProcess,
        rate: f64,
        mean: f64,
    ) -> Self {
        let per_msg = (rate / mean).min(1.0);
        let simple = process.map_or(Some(default), ProcessConfig::simple);
        match (simple, process) {
            (Some(SimpleProcess::Bernoulli), _) => Arrivals::Bernoulli {
                p: per_msg,
                ln_q: (1.0 - per_msg).ln(),
            },
            (Some(SimpleProcess::Cbr), _) => Arrivals::Cbr {
                period: mean / rate,
                acc: 0.0,
            },
            (Some(SimpleProcess::Poisson), _) => Arrivals::Poisson {
                mean_gap: mean / rate,
                acc: 0.0,
            },
            (
                None,
                Some(ProcessConfig::Table(ProcessTable::Onoff {
                    on_alpha,
                    off_alpha,
                    on_mean,
                    off_mean,
                })),
            ) => Arrivals::OnOff {
                peak: rate * (on_mean + off_mean) / on_mean,
                on: (*on_alpha, *on_mean),
                off: (*off_alpha, *off_mean),
                next: 0.0,
                on_end: 0.0,
                dst: u32::MAX,
            },
            (
                None,
                Some(ProcessConfig::Table(ProcessTable::Video {
                    frame_period,
                    frames: Some(frames),
                    ..
                })),
            ) => Arrivals::Trace {
                frames: frames.clone(),
                period: *frame_period,
                acc: 0.0,
                pos: 0,
            },
            (
                None,
                Some(ProcessConfig::Table(ProcessTable::Video {
                    frame_period,
                    gop,
                    i_to_p,
                    p_to_b,
                    min,
                    max,
                    ..
                })),
            ) => Arrivals::Video {
                model: Box::new(VideoModel::new(
                    rate,
                    *frame_period,
                    gop,
                    *i_to_p,
                    *p_to_b,
                    *min,
                    max.unwrap_or(*min),
                )),
                period: *frame_period,
                acc: 0.0,
                pos: 0,
            },
            _ => unreachable!("a process is simple or a table"),
        }
    }

    /// The cycle of the first message (drawn from `rng`).
    pub fn first<R: Rng>(&mut self, rng: &mut R) -> u64 {
        match self {
            Arrivals::Bernoulli { .. } => self.geometric_gap(rng) - 1,
            Arrivals::Cbr { period, acc } => {
                *acc = rng.gen::<f64>() * *period;
                acc.floor() as u64
            }
            Arrivals::Poisson { mean_gap, acc } => {
                *acc = -*mean_gap * open01(rng).ln();
                acc.floor() as u64
            }
            Arrivals::OnOff {
                on,
                off,
                next,
                on_end,
                ..
            } => {
                // Start in an off period of random length (a stationary-ish phase).
                let start = rng.gen::<f64>() * pareto_period(off.0, off.1, rng);
                *next = start;
                *on_end = start + pareto_period(on.0, on.1, rng);
                next.floor() as u64
            }
            Arrivals::Video {
                period,
                acc,
                pos,
                model,
            } => {
                *acc = rng.gen::<f64>() * *period;
                *pos = rng.gen_range(0..model.gop.len());
                acc.floor() as u64
            }
            Arrivals::Trace {
                frames,
                period,
                acc,
                pos,
            } => {
                *acc = rng.gen::<f64>() * *period;
                *pos = rng.gen_range(0..frames.len());
                acc.floor() as u64
            }
        }
    }

    fn geometric_gap<R: Rng>(&self, rng: &mut R) -> u64 {
        let Arrivals::Bernoulli { p, ln_q } = self else {
            return 1;
        };
        if *p >= 1.0 {
            return 1;
        }
        1 + (open01(rng).ln() / ln_q).floor() as u64
    }

    /// A message is due at cycle `t`: returns its destination (from `draw`), its size (from
    /// `size`) and the cycle of the next message (≥ t).
    pub fn fire<R: Rng>(
        &mut self,
        t: u64,
        rng: &mut R,
        size: &SizeSampler,
        mut draw: impl FnMut(&mut R) -> u32,
    ) -> (u32, u32, u64) {
        match self {
            Arrivals::Bernoulli { .. } => {
                let dst = draw(rng);
                let next = t + self.geometric_gap(rng);
                (dst, size.sample(rng), next)
            }
            Arrivals::Cbr { period, acc } => {
                let dst = draw(rng);
                *acc += *period;
                let next = (acc.floor() as u64).max(t + 1);
                (dst, size.sample(rng), next)
            }
            Arrivals::Poisson { mean_gap, acc } => {
                let dst = draw(rng);
                *acc += -*mean_gap * open01(rng).ln();
                (dst, size.sample(rng), (acc.floor() as u64).max(t))
            }
            Arrivals::OnOff {
                peak,
                on,
                off,
                next,
                on_end,
                dst,
            } => {
                if *dst == u32::MAX {
                    *dst = draw(rng);
                }
                let d = *dst;
                let s = size.sample(rng);
                // The burst's schedule runs at the peak rate; what overshoots the end of an
                // on period carries into the next one, so the flits sent are exactly
                // peak × (total on time) in the long run.
                *next += s as f64 / *peak;
                while *next >= *on_end {
                    let over = *next - *on_end;
                    let start = *on_end + pareto_period(off.0, off.1, rng);
                    *on_end = start + pareto_period(on.0, on.1, rng);
                    *next = start + over;
                    *dst = u32::MAX;
                }
                (d, s, (next.floor() as u64).max(t))
            }
            Arrivals::Video {
                model,
                period,
                acc,
                pos,
            } => {
                let dst = draw(rng);
                let s = model.frame(model.gop[*pos], rng);
                *pos = (*pos + 1) % model.gop.len();
                *acc += *period;
                (dst, s, (acc.floor() as u64).max(t + 1))
            }
            Arrivals::Trace {
                frames,
                period,
                acc,
                pos,
            } => {
                let dst = draw(rng);
                let s = frames[*pos];
                *pos = (*pos + 1) % frames.len();
                *acc += *period;
                (dst, s, (acc.floor() as u64).max(t + 1))
            }
        }
    }
}

#[cfg(test)]
#[path = "workload_tests.rs"]
mod tests;
