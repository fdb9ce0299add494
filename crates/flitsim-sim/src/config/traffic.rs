//! `[traffic]`: offered load, destination pattern, injection process and traffic classes.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Destination pattern. Bit patterns need a power-of-two endpoint count; transpose an even
/// number of address bits.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PatternKind {
    /// Uniform over all endpoints (the source included, as in BookSim).
    #[default]
    Uniform,
    /// Uniform over all other endpoints.
    UniformOthers,
    /// Destination address = source address with its bits reversed.
    BitReversal,
    /// Destination = bitwise complement of the source.
    BitComplement,
    /// Destination = source with the upper and lower halves of its bits swapped.
    Transpose,
    /// Destination = source address rotated left by one bit.
    Shuffle,
    /// Tornado: on a torus/mesh, each coordinate moves ⌈k/2⌉−1 ahead; elsewhere the endpoint
    /// index moves ⌈N/2⌉−1 ahead.
    Tornado,
    /// A fixed random permutation (from the pattern's own random stream).
    RandomPermutation,
    /// `hotspot.endpoints` hot endpoints receive `hotspot.fraction` of all messages; the rest
    /// are uniform.
    Hotspot,
}

/// Hot-spot parameters.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HotspotConfig {
    /// Number of hot endpoints (chosen at random from the pattern's stream).
    pub endpoints: u32,
    /// Fraction of messages sent to a hot endpoint (0..=1).
    pub fraction: f64,
}

/// When sources generate messages.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InjectionKind {
    /// Each cycle a message starts with probability rate / message_flits.
    #[default]
    Bernoulli,
    /// Constant bit rate: one message every message_flits / rate cycles (random phase).
    Cbr,
}

/// Offered traffic.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrafficConfig {
    /// Total offered load, flits/cycle/endpoint over all classes; each class gets
    /// `load · share / Σ share`. When absent, every class needs a `rate`.
    #[serde(default)]
    pub load: Option<f64>,
    /// Destination pattern (default uniform).
    #[serde(default)]
    pub pattern: PatternKind,
    /// Hot-spot parameters (with `pattern = "hotspot"`).
    #[serde(default)]
    pub hotspot: Option<HotspotConfig>,
    /// Injection process (default Bernoulli).
    #[serde(default)]
    pub injection: InjectionKind,
    /// Traffic classes; class `i` is SL `i`. Default: one class "BE".
    #[serde(default = "default_classes", rename = "class")]
    pub classes: Vec<ClassConfig>,
}

fn default_classes() -> Vec<ClassConfig> {
    vec![ClassConfig {
        name: "BE".into(),
        share: 1.0,
        rate: None,
        message_flits: 16,
        mtu_flits: None,
    }]
}

/// One traffic class (a service level).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassConfig {
    /// Name shown in results (e.g. "VO", "BE").
    pub name: String,
    /// Relative share of `traffic.load` (default 1).
    #[serde(default = "one_f")]
    pub share: f64,
    /// Explicit rate in flits/cycle/endpoint (used when `traffic.load` is absent).
    #[serde(default)]
    pub rate: Option<f64>,
    /// Message size, flits (default 16).
    #[serde(default = "sixteen")]
    pub message_flits: u32,
    /// Largest packet of this SL, flits (default: the message size).
    #[serde(default)]
    pub mtu_flits: Option<u32>,
}

fn one_f() -> f64 {
    1.0
}
fn sixteen() -> u32 {
    16
}

impl TrafficConfig {
    /// Offered rate of class `i` in flits/cycle/endpoint: its share of `load`, or its `rate`
    /// when `load` is absent.
    pub fn class_rate(&self, i: usize) -> f64 {
        match self.load {
            Some(l) => {
                let total: f64 = self.classes.iter().map(|c| c.share).sum();
                l * self.classes[i].share / total
            }
            None => self.classes[i].rate.unwrap_or(0.0),
        }
    }

    /// Range checks that serde cannot express. Messages name the key (`traffic.load`, …).
    pub fn validate(&self) -> Result<(), String> {
        if self.classes.is_empty() {
            return Err("traffic.class: at least one class is needed".into());
        }
        if self.classes.len() > 32 {
            return Err("traffic.class: at most 32 classes".into());
        }
        if let Some(l) = self.load {
            if !(l.is_finite() && l >= 0.0) {
                return Err(format!("traffic.load = {l}: must be a non-negative number"));
            }
            let total: f64 = self.classes.iter().map(|c| c.share).sum();
            if total.is_nan()
                || total <= 0.0
                || self
                    .classes
                    .iter()
                    .any(|c| c.share.is_nan() || c.share < 0.0)
            {
                return Err(
                    "traffic.class.share: shares must be non-negative and not all zero".into(),
                );
            }
        }
        for (i, c) in self.classes.iter().enumerate() {
            let key = format!("traffic.class[{i}] ({})", c.name);
            if self.load.is_none() && c.rate.is_none() {
                return Err(format!("{key}: needs `rate` when traffic.load is not set"));
            }
            if c.message_flits == 0 {
                return Err(format!("{key}.message_flits must be at least 1"));
            }
            if c.mtu_flits == Some(0) || c.mtu_flits.unwrap_or(1) > u16::MAX as u32 {
                return Err(format!("{key}.mtu_flits must be in 1..=65535"));
            }
            let rate = self.class_rate(i);
            if !(rate.is_finite() && rate >= 0.0) {
                return Err(format!("{key}: rate must be a non-negative number"));
            }
            if rate > c.message_flits as f64 {
                return Err(format!(
                    "{key}: rate {rate} flits/cycle exceeds one message per cycle"
                ));
            }
        }
        if self.pattern == PatternKind::Hotspot {
            match &self.hotspot {
                None => return Err("traffic.hotspot: required with pattern = \"hotspot\"".into()),
                Some(h) if !(0.0..=1.0).contains(&h.fraction) || h.endpoints == 0 => {
                    return Err("traffic.hotspot: endpoints ≥ 1 and fraction in [0, 1]".into())
                }
                _ => {}
            }
        }
        Ok(())
    }
}
