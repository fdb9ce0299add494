//! `[units]` and quantities with units: sizes (`"2KiB"`), times (`"100ns"`) and rates
//! (`"8Gb/s"`) written wherever a size in flits, a time in cycles or a load in
//! flits/cycle/endpoint is configured.
//!
//! The conversion is a pass over the TOML value tree before typed deserialisation, so the
//! engine's types stay numeric: every quantity string at a key of [`QUANTITY_KEYS`] becomes the
//! number of flits, cycles or flits/cycle it stands for, and `[units]` is completed
//! (`cycle_ns` computed from `link_rate`). Arithmetic is exact (rationals of 128-bit integers);
//! sizes and times round up: a size is ⌈bytes / flit_bytes⌉ flits, a time ⌈t / cycle⌉ cycles.
//! Rates become the nearest `f64` of their exact value in flits/cycle.
//!
//! Grammar of a quantity: `NUMBER [spaces] UNIT`, where `NUMBER` is `digits[.digits]` (no sign,
//! no exponent) and `UNIT` is
//! * a size: `[prefix](B|b)` — `B` a byte, `b` a bit; prefixes `k`/`K` (10³), `M` (10⁶),
//!   `G` (10⁹), `T` (10¹²), `Ki` (2¹⁰), `Mi` (2²⁰), `Gi` (2³⁰), `Ti` (2⁴⁰);
//! * a time: `s`, `ms`, `us` (or `µs`, `μs`), `ns`, `ps`;
//! * a rate: a size unit followed by `/s` (`8Gb/s`, `3MB/s`, `1GiB/s`).
use super::parse::edit_distance;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// `[units]`: what a flit and a cycle are physically. With it, quantities may be written with
/// units and results gain physical twins (`latency_ns`, `accepted_gbps`, …). The resolved
/// configuration always shows `flit_bytes` and `cycle_ns`; the configuration hash covers them
/// and the converted values.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnitsConfig {
    /// Bytes per flit (≥ 1): an integer or a size such as `"64B"`.
    pub flit_bytes: u32,
    /// Nanoseconds per cycle: a number (ns) or a time such as `"64ns"`. Computed from
    /// `link_rate` when absent; when both are given they must agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle_ns: Option<f64>,
    /// Link rate, one flit per cycle per link (`"8Gb/s"`): the cycle is
    /// `flit_bytes · 8 bits / link_rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_rate: Option<String>,
}

impl UnitsConfig {
    /// Nanoseconds per cycle (`cycle_ns`, or computed from `link_rate`).
    pub fn cycle_ns(&self) -> f64 {
        self.cycle_ns.unwrap_or_else(|| {
            self.link_rate
                .as_deref()
                .and_then(|r| parse_quantity(r).ok())
                .filter(|q| q.dim == Dimension::Rate)
                .and_then(|q| cycle_from_rate(self.flit_bytes as u64, q.value))
                .map_or(f64::NAN, Ratio::to_f64)
        })
    }

    /// Adds the physical twins of the cycle figures to `r`.
    pub fn add_physical(&self, r: &mut flitsim_sim::RunResult) {
        r.add_physical(self.flit_bytes, self.cycle_ns());
    }
}

/// What a quantity measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dimension {
    /// Bytes; configured in flits.
    Size,
    /// Nanoseconds; configured in cycles.
    Time,
    /// Bytes per second; configured in flits/cycle (per endpoint).
    Rate,
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dimension::Size => "a size (e.g. \"2KiB\")",
            Dimension::Time => "a time (e.g. \"100ns\")",
            Dimension::Rate => "a rate (e.g. \"8Gb/s\")",
        })
    }
}

use Dimension::{Rate, Size, Time};

/// The keys that take quantities with units, and their dimension: the one table the
/// conversion, the JSON Schema and `docs/model.md` follow. `[]` matches any array index,
/// `[1]` only that index (the weight of a `[vl, weight]` pair).
pub const QUANTITY_KEYS: &[(&str, Dimension)] = &[
    ("topology.link_latency", Time),
    ("switch.vl_buffer_flits", Size),
    ("switch.output_buffer_flits", Size),
    ("switch.shared_buffer.total_flits", Size),
    ("switch.shared_buffer.min_per_vl", Size),
    ("switch.shared_buffer.max_per_vl", Size),
    ("switch.shared_output_buffer.total_flits", Size),
    ("switch.shared_output_buffer.min_per_vl", Size),
    ("switch.shared_output_buffer.max_per_vl", Size),
    ("switch.routing_delay", Time),
    ("switch.opa.central_buffer_flits", Size),
    ("switch.opa.central_min_per_vl", Size),
    ("switch.opa.central_output_flits", Size),
    ("switch.opa.central_max_per_vl", Size),
    ("switch.opa.internal_routing_delay", Time),
    ("switch.scheduler.entries[].weight", Size),
    ("switch.scheduler.high[][1]", Size),
    ("switch.scheduler.low[][1]", Size),
    ("nic.buffer_flits", Size),
    ("nic.shared_buffer.total_flits", Size),
    ("nic.shared_buffer.min_per_vl", Size),
    ("nic.shared_buffer.max_per_vl", Size),
    ("nic.dispatch_time", Time),
    ("nic.receive_time", Time),
    ("nic.scheduler.entries[].weight", Size),
    ("nic.scheduler.high[][1]", Size),
    ("nic.scheduler.low[][1]", Size),
    ("qos.class[].bandwidth", Rate),
    ("qos.class[].frame_latency", Time),
    ("qos.class[].bucket_rate", Rate),
    ("qos.class[].bucket_depth", Size),
    ("qos.eligibility_factor", Time),
    ("qos.discard_after", Time),
    ("qos.clock_skew", Time),
    ("traffic.load", Rate),
    ("traffic.packet_flits", Size),
    ("traffic.class[].rate", Rate),
    ("traffic.class[].message_flits", Size),
    ("traffic.class[].mtu_flits", Size),
    ("traffic.class[].size", Size),
    ("traffic.class[].size.flits", Size),
    ("traffic.class[].size.min", Size),
    ("traffic.class[].size.max", Size),
    ("traffic.class[].size.mean", Size),
    ("traffic.class[].size.sizes[]", Size),
    ("traffic.class[].process.on_mean", Time),
    ("traffic.class[].process.off_mean", Time),
    ("traffic.class[].process.frame_period", Time),
    ("traffic.class[].process.min", Size),
    ("traffic.class[].process.max", Size),
    ("traffic.flow[].rate", Rate),
    ("traffic.flow[].size", Size),
    ("traffic.flow[].size.flits", Size),
    ("traffic.flow[].size.min", Size),
    ("traffic.flow[].size.max", Size),
    ("traffic.flow[].size.mean", Size),
    ("traffic.flow[].size.sizes[]", Size),
    ("traffic.flow[].process.on_mean", Time),
    ("traffic.flow[].process.off_mean", Time),
    ("traffic.flow[].process.frame_period", Time),
    ("traffic.flow[].process.min", Size),
    ("traffic.flow[].process.max", Size),
    ("traffic.flow[].start", Time),
    ("traffic.flow[].stop", Time),
    ("traffic.flow[].idt", Time),
    ("traffic.flow[].reserve", Rate),
    ("traffic.flow_set[].rate", Rate),
    ("traffic.flow_set[].size", Size),
    ("traffic.flow_set[].size.flits", Size),
    ("traffic.flow_set[].size.min", Size),
    ("traffic.flow_set[].size.max", Size),
    ("traffic.flow_set[].size.mean", Size),
    ("traffic.flow_set[].size.sizes[]", Size),
    ("traffic.flow_set[].process.on_mean", Time),
    ("traffic.flow_set[].process.off_mean", Time),
    ("traffic.flow_set[].process.frame_period", Time),
    ("traffic.flow_set[].process.min", Size),
    ("traffic.flow_set[].process.max", Size),
    ("traffic.flow_set[].start", Time),
    ("traffic.flow_set[].stop", Time),
    ("qos.dtable.gmtu", Size),
    ("qos.vlarb.high[][1]", Size),
    ("qos.vlarb.low[][1]", Size),
    ("bandwidth_manager.update_delay", Time),
    ("run.warmup", Time),
    ("run.measure", Time),
    ("run.drain_max", Time),
    ("run.stall_cycles", Time),
    ("run.timeseries_bin", Time),
];

/// `[units]` keys that also take quantities (the schema widens them like [`QUANTITY_KEYS`]).
const UNITS_KEYS: &[(&str, Dimension)] = &[
    ("units.flit_bytes", Size),
    ("units.cycle_ns", Time),
    ("units.link_rate", Rate),
];

/// One segment of a key path: a name or an array index (`None` in a pattern: any index).
#[derive(Debug, PartialEq)]
enum Seg<'a> {
    Key(&'a str),
    Index(Option<usize>),
}

/// `traffic.class[0].rate` → `[Key(traffic), Key(class), Index(0), Key(rate)]`.
fn segments(path: &str) -> Vec<Seg<'_>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (name, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !name.is_empty() {
            out.push(Seg::Key(name));
        }
        while let Some(end) = rest.find(']') {
            out.push(Seg::Index(rest[1..end].parse().ok()));
            rest = &rest[end + 1..];
        }
    }
    out
}

fn matches(pattern: &str, path: &str) -> bool {
    let (p, k) = (segments(pattern), segments(path));
    p.len() == k.len()
        && p.iter().zip(&k).all(|(p, k)| match (p, k) {
            (Seg::Index(None), Seg::Index(_)) => true,
            (a, b) => a == b,
        })
}

/// The dimension of the quantity at `path` (`traffic.class[2].message_flits`), if it takes one.
pub fn dimension_of(path: &str) -> Option<Dimension> {
    QUANTITY_KEYS
        .iter()
        .find(|(p, _)| matches(p, path))
        .map(|&(_, d)| d)
}

// ---------------------------------------------------------------------------------------------
// Exact arithmetic

/// A non-negative rational number, reduced, with a positive denominator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ratio {
    num: u128,
    den: u128,
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Ratio {
    /// `num / den`, reduced; `None` when `den` is 0.
    pub fn new(num: u128, den: u128) -> Option<Self> {
        if den == 0 {
            return None;
        }
        let g = gcd(num, den).max(1);
        Some(Ratio {
            num: num / g,
            den: den / g,
        })
    }
    /// An integer.
    pub fn int(n: u128) -> Self {
        Ratio { num: n, den: 1 }
    }
    /// `self · o`, `None` on overflow.
    pub fn checked_mul(self, o: Ratio) -> Option<Self> {
        let g1 = gcd(self.num, o.den).max(1);
        let g2 = gcd(o.num, self.den).max(1);
        Ratio::new(
            (self.num / g1).checked_mul(o.num / g2)?,
            (self.den / g2).checked_mul(o.den / g1)?,
        )
    }
    /// `self / o`, `None` on overflow or division by zero.
    pub fn checked_div(self, o: Ratio) -> Option<Self> {
        self.checked_mul(Ratio::new(o.den, o.num)?)
    }
    /// The smallest integer ≥ `self`.
    pub fn ceil(self) -> u128 {
        self.num.div_ceil(self.den)
    }
    /// True when `self` is an integer.
    pub fn is_integer(self) -> bool {
        self.den == 1
    }
    /// The nearest `f64` (exactly rounded while both parts are below 2⁵³).
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
    /// The exact value of a decimal `digits[.digits]`.
    pub fn from_decimal(s: &str) -> Result<Self, String> {
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
        if !digits(int) || (s.contains('.') && !digits(frac)) {
            return Err(format!("`{s}` is not a number (digits[.digits])"));
        }
        let too_large = || format!("`{s}` is too large");
        let mut num: u128 = 0;
        let mut den: u128 = 1;
        for b in int.bytes().chain(frac.bytes()) {
            num = num
                .checked_mul(10)
                .and_then(|n| n.checked_add((b - b'0') as u128))
                .ok_or_else(too_large)?;
        }
        for _ in 0..frac.len() {
            den = den.checked_mul(10).ok_or_else(too_large)?;
        }
        Ok(Ratio::new(num, den).expect("den > 0"))
    }
    /// The exact value of a finite non-negative `f64` as it is written (its shortest decimal),
    /// so that `5.12` is 512/100.
    pub fn from_f64(f: f64) -> Result<Self, String> {
        if !(f.is_finite() && f >= 0.0) {
            return Err(format!("{f} is not a finite non-negative number"));
        }
        Ratio::from_decimal(&format!("{f}"))
    }
}

// ---------------------------------------------------------------------------------------------
// Quantities

/// A parsed quantity in base units: bytes (size), nanoseconds (time) or bytes per second (rate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    /// What it measures.
    pub dim: Dimension,
    /// Its exact value in the dimension's base unit.
    pub value: Ratio,
}

fn pow(base: u128, e: u32) -> Ratio {
    Ratio::int(base.pow(e))
}

/// The bytes of a size unit (`KiB`, `Gb`, …).
fn size_unit(unit: &str) -> Option<Ratio> {
    let (prefix, per) = match unit.strip_suffix('B') {
        Some(p) => (p, Ratio::int(1)),
        None => (unit.strip_suffix('b')?, Ratio::new(1, 8)?),
    };
    let scale = match prefix {
        "" => Ratio::int(1),
        "k" | "K" => pow(10, 3),
        "M" => pow(10, 6),
        "G" => pow(10, 9),
        "T" => pow(10, 12),
        "Ki" => pow(2, 10),
        "Mi" => pow(2, 20),
        "Gi" => pow(2, 30),
        "Ti" => pow(2, 40),
        _ => return None,
    };
    scale.checked_mul(per)
}

/// The dimension of a unit and its value in the dimension's base unit.
fn unit_scale(unit: &str) -> Option<(Dimension, Ratio)> {
    let time = match unit {
        "s" => Some(pow(10, 9)),
        "ms" => Some(pow(10, 6)),
        "us" | "µs" | "μs" => Some(pow(10, 3)),
        "ns" => Some(Ratio::int(1)),
        "ps" => Ratio::new(1, 1000),
        _ => None,
    };
    if let Some(t) = time {
        return Some((Time, t));
    }
    match unit.strip_suffix("/s") {
        Some(size) => Some((Rate, size_unit(size)?)),
        None => Some((Size, size_unit(unit)?)),
    }
}

/// Parses `"2KiB"`, `"100 ns"`, `"8Gb/s"` (see the module documentation for the grammar).
pub fn parse_quantity(s: &str) -> Result<Quantity, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err("is negative; quantities are non-negative".into());
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = unit.trim_start();
    if number.is_empty() {
        return Err(
            "is not a quantity: expected a number and a unit, such as \"2KiB\", \"100ns\" or \"8Gb/s\""
                .into(),
        );
    }
    let value = Ratio::from_decimal(number)?;
    if unit.is_empty() {
        return Err(
            "has no unit; write a plain number (without quotes) for flits, cycles or flits/cycle"
                .into(),
        );
    }
    let (dim, scale) = unit_scale(unit).ok_or_else(|| {
        format!("has an unknown unit `{unit}` (sizes: B, b with k, M, G, T, Ki, Mi, Gi, Ti; times: s, ms, us, µs, ns, ps; rates: a size unit per s, such as Gb/s)")
    })?;
    let value = value
        .checked_mul(scale)
        .ok_or_else(|| "is too large".to_string())?;
    Ok(Quantity { dim, value })
}

/// `rate` as a fraction of `link_rate`, both rates with units (`"40MB/s"`, `"1.28Gb/s"`): the
/// flits/cycle it stands for on links of that rate, whatever the flit size (a link carries one
/// flit per cycle). Errors say which of the two is not a positive rate.
pub fn rate_per_link(rate: &str, link_rate: &str) -> Result<f64, String> {
    let as_rate = |text: &str, what: &str| -> Result<Ratio, String> {
        let q = parse_quantity(text).map_err(|e| format!("{what} `{text}` {e}"))?;
        if q.dim != Rate {
            return Err(format!(
                "{what} `{text}` is {}, not a rate such as \"8Gb/s\"",
                q.dim
            ));
        }
        Ok(q.value)
    };
    let link = as_rate(link_rate, "the link rate")?;
    let r = as_rate(rate, "the rate")?;
    if link == Ratio::int(0) {
        return Err(format!("the link rate `{link_rate}` is zero"));
    }
    r.checked_div(link)
        .map(Ratio::to_f64)
        .ok_or_else(|| format!("the rate `{rate}` is too large"))
}

/// The resolved units: bytes per flit and the exact cycle in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Units {
    /// Bytes per flit.
    pub flit_bytes: u64,
    /// Nanoseconds per cycle, exactly.
    pub cycle_ns: Ratio,
}

/// The cycle (ns) of a link sending one flit of `flit_bytes` bytes per cycle at `rate` bytes/s.
fn cycle_from_rate(flit_bytes: u64, rate: Ratio) -> Option<Ratio> {
    Ratio::int(flit_bytes as u128)
        .checked_mul(pow(10, 9))?
        .checked_div(rate)
}

impl Units {
    /// `q` in flits, cycles (both integers) or flits/cycle, as a TOML value.
    pub fn convert(&self, q: Quantity) -> Option<toml::Value> {
        let fb = Ratio::int(self.flit_bytes as u128);
        let whole = |r: Ratio| i64::try_from(r.ceil()).ok().map(toml::Value::Integer);
        match q.dim {
            Size => whole(q.value.checked_div(fb)?),
            Time => whole(q.value.checked_div(self.cycle_ns)?),
            Rate => {
                let flits_per_cycle = q
                    .value
                    .checked_mul(self.cycle_ns)?
                    .checked_div(fb.checked_mul(pow(10, 9))?)?;
                Some(toml::Value::Float(flits_per_cycle.to_f64()))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The pass over the value tree

/// An error of the value at a key path: (path, message). The caller names the place.
type KeyError = (String, String);

fn resolve_units(t: &mut toml::Table) -> Result<Units, KeyError> {
    let key_err = |k: &str, m: String| (format!("units.{k}"), m);
    let quantity = |k: &str, s: &str, dim: Dimension| -> Result<Ratio, KeyError> {
        let q = parse_quantity(s).map_err(|e| key_err(k, format!("\"{s}\" {e}")))?;
        if q.dim != dim {
            return Err(key_err(k, format!("\"{s}\" is not {dim}")));
        }
        Ok(q.value)
    };
    const KEYS: [&str; 3] = ["flit_bytes", "cycle_ns", "link_rate"];
    if let Some(k) = t.keys().find(|k| !KEYS.contains(&k.as_str())) {
        let (d, best) = KEYS
            .iter()
            .map(|c| (edit_distance(k, c), *c))
            .min()
            .expect("keys");
        let hint = if d <= k.len().max(3) / 2 + 1 {
            format!(" (did you mean `{best}`?)")
        } else {
            String::new()
        };
        return Err(key_err(
            k,
            format!("unknown key; expected one of `flit_bytes`, `cycle_ns`, `link_rate`{hint}"),
        ));
    }
    let flit_bytes = match t.get("flit_bytes") {
        None => {
            return Err((
                "units".into(),
                "`flit_bytes` is required (bytes per flit)".into(),
            ))
        }
        Some(toml::Value::Integer(n)) if (1..=u32::MAX as i64).contains(n) => *n as u64,
        Some(toml::Value::String(s)) => {
            let b = quantity("flit_bytes", s, Size)?;
            match u32::try_from(b.ceil()) {
                Ok(n) if b.is_integer() && n >= 1 => n as u64,
                _ => {
                    return Err(key_err(
                        "flit_bytes",
                        format!("\"{s}\" must be a whole number of bytes in 1..=4294967295"),
                    ))
                }
            }
        }
        Some(v) => {
            return Err(key_err(
                "flit_bytes",
                format!("{v} must be an integer in 1..=4294967295 or a size such as \"64B\""),
            ))
        }
    };
    let positive = |k: &str, r: Ratio| {
        if r.num == 0 {
            Err(key_err(k, "must be positive".into()))
        } else {
            Ok(r)
        }
    };
    let from_cycle = match t.get("cycle_ns") {
        None => None,
        Some(toml::Value::Integer(n)) if *n > 0 => Some(Ratio::int(*n as u128)),
        Some(toml::Value::Float(f)) if *f > 0.0 => {
            Some(Ratio::from_f64(*f).map_err(|e| key_err("cycle_ns", e))?)
        }
        Some(toml::Value::String(s)) => Some(positive("cycle_ns", quantity("cycle_ns", s, Time)?)?),
        Some(v) => {
            return Err(key_err(
                "cycle_ns",
                format!("{v} must be a positive number of nanoseconds or a time such as \"64ns\""),
            ))
        }
    };
    let from_rate = match t.get("link_rate") {
        None => None,
        Some(toml::Value::String(s)) => {
            let r = positive("link_rate", quantity("link_rate", s, Rate)?)?;
            Some(
                cycle_from_rate(flit_bytes, r)
                    .ok_or_else(|| key_err("link_rate", format!("\"{s}\" is out of range")))?,
            )
        }
        Some(v) => {
            return Err(key_err(
                "link_rate",
                format!("{v} must be a rate such as \"8Gb/s\""),
            ))
        }
    };
    let cycle_ns = match (from_cycle, from_rate) {
        (None, None) => return Err(("units".into(), "needs `cycle_ns` or `link_rate`".into())),
        (Some(c), None) => c,
        (None, Some(r)) => r,
        (Some(c), Some(r)) => {
            let (c, r) = (c.to_f64(), r.to_f64());
            if (c - r).abs() > 1e-12 * r {
                return Err(key_err(
                    "cycle_ns",
                    format!("{c} ns disagrees with link_rate: {flit_bytes}-byte flits at that rate take {r} ns per cycle (give one of the two, or both consistent)"),
                ));
            }
            from_rate.expect("given")
        }
    };
    t.insert("flit_bytes".into(), toml::Value::Integer(flit_bytes as i64));
    t.insert("cycle_ns".into(), toml::Value::Float(cycle_ns.to_f64()));
    Ok(Units {
        flit_bytes,
        cycle_ns,
    })
}

/// What `[units]` must give for quantities of `dim`.
fn needs(dim: Dimension) -> &'static str {
    match dim {
        Size => "flit_bytes",
        Time => "cycle_ns or link_rate",
        Rate => "flit_bytes and cycle_ns or link_rate",
    }
}

fn convert_value(v: &mut toml::Value, path: &str, units: Option<&Units>) -> Result<(), KeyError> {
    match v {
        toml::Value::Table(t) => {
            for (k, child) in t.iter_mut() {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                if p != "units" {
                    convert_value(child, &p, units)?;
                }
            }
        }
        toml::Value::Array(a) => {
            for (i, child) in a.iter_mut().enumerate() {
                convert_value(child, &format!("{path}[{i}]"), units)?;
            }
        }
        toml::Value::String(s) => {
            let Some(dim) = dimension_of(path).filter(|_| looks_like_quantity(s)) else {
                return Ok(()); // not a quantity: typed deserialisation reports the wrong type
            };
            let err = |m: String| (path.to_string(), format!("\"{s}\" {m}"));
            let q = parse_quantity(s).map_err(err)?;
            if q.dim != dim {
                return Err(err(format!("is not {dim}: this key takes {dim}")));
            }
            let Some(u) = units else {
                return Err(err(format!("needs [units] {}", needs(dim))));
            };
            *v = u
                .convert(q)
                .ok_or_else(|| err("is too large for this key".into()))?;
        }
        _ => {}
    }
    Ok(())
}

/// Resolves `[units]` in `doc` and converts every quantity string at a key of
/// [`QUANTITY_KEYS`] to flits, cycles or flits/cycle. Returns the units, if any.
pub(super) fn convert_doc(doc: &mut toml::Table) -> Result<Option<Units>, KeyError> {
    let units = match doc.get_mut("units") {
        None => None,
        Some(toml::Value::Table(t)) => Some(resolve_units(t)?),
        Some(_) => return Err(("units".into(), "must be a table".into())),
    };
    let mut root = toml::Value::Table(std::mem::take(doc));
    let result = convert_value(&mut root, "", units.as_ref());
    if let toml::Value::Table(t) = root {
        *doc = t;
    }
    result.map(|()| units)
}

/// True for a string that starts like a number (`"2KiB"`, `"-3B"`, `"1.5.2KB"`); any other
/// string at a quantity key (`"high"`) is left to typed deserialisation, whose "invalid type"
/// error names the key and line as before units existed.
fn looks_like_quantity(s: &str) -> bool {
    s.trim_start()
        .starts_with(|c: char| c.is_ascii_digit() || matches!(c, '-' | '+' | '.'))
}

/// Widens the JSON Schema of every key of [`QUANTITY_KEYS`] (and the quantity keys of
/// `[units]`) to "its number, or a string with a unit".
pub(super) fn widen_schema(schema: &mut serde_json::Value) {
    let mut leaves = Vec::new();
    for (pattern, dim) in QUANTITY_KEYS.iter().chain(UNITS_KEYS) {
        locate(schema, String::new(), &segments(pattern), *dim, &mut leaves);
    }
    let mut seen = std::collections::HashSet::new();
    for (ptr, dim) in leaves {
        if !seen.insert(ptr.clone()) {
            continue;
        }
        let Some(node) = schema.pointer_mut(&ptr) else {
            continue;
        };
        let mut plain = node.take();
        let description = plain.as_object_mut().and_then(|o| o.remove("description"));
        if plain.get("type") == Some(&serde_json::json!("string")) {
            *node = plain;
            if let Some(d) = description {
                node["description"] = d;
            }
            continue;
        }
        let mut widened = serde_json::json!({
            "oneOf": [plain, {
                "type": "string",
                "description": format!("{dim} with a unit; needs [units]"),
                "pattern": r"^\s*[0-9]+(\.[0-9]+)?\s*[A-Za-zµμ]+(/s)?\s*$",
            }]
        });
        if let Some(d) = description {
            widened["description"] = d;
        }
        *node = widened;
    }
}

/// JSON pointers of the schema nodes of `path` below the node at `ptr`, following `$ref`,
/// `allOf`/`anyOf`/`oneOf` and array items.
fn locate(
    root: &serde_json::Value,
    ptr: String,
    path: &[Seg],
    dim: Dimension,
    out: &mut Vec<(String, Dimension)>,
) {
    let Some(node) = root.pointer(&ptr) else {
        return;
    };
    if path.is_empty() {
        out.push((ptr, dim));
        return;
    }
    if let Some(r) = node.get("$ref").and_then(|r| r.as_str()) {
        let target = r.trim_start_matches('#').to_string();
        locate(root, target, path, dim, out);
        return;
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(parts) = node.get(key).and_then(|p| p.as_array()) {
            for i in 0..parts.len() {
                locate(root, format!("{ptr}/{key}/{i}"), path, dim, out);
            }
        }
    }
    match &path[0] {
        Seg::Key(k) => {
            if node.pointer(&format!("/properties/{k}")).is_some() {
                locate(root, format!("{ptr}/properties/{k}"), &path[1..], dim, out);
            }
        }
        Seg::Index(i) => match (node.get("items"), i) {
            (Some(serde_json::Value::Array(_)), Some(i)) => {
                locate(root, format!("{ptr}/items/{i}"), &path[1..], dim, out)
            }
            (Some(serde_json::Value::Object(_)), None) => {
                locate(root, format!("{ptr}/items"), &path[1..], dim, out)
            }
            _ => {}
        },
    }
}

#[cfg(test)]
#[path = "units_tests.rs"]
mod tests;
