//! Reading an experiment file: TOML text → [`ExperimentConfig`], with `key=value` overrides
//! (`--set`) applied to the parsed document before it is typed, so they are checked by the same
//! rules. Errors name the origin, the key path, the line and column for mistakes in the file,
//! and the closest valid name for an unknown key or choice.
use super::ExperimentConfig;
use crate::ExperimentError;

/// Prefixes a deserialisation message with its key path and adds a "did you mean" hint for an
/// unknown field or variant.
pub(super) fn describe(path: &str, message: &str) -> String {
    let mut out = if path.is_empty() || path == "." {
        message.to_string()
    } else {
        format!("key `{path}`: {message}")
    };
    if let Some(hint) = suggestion(message) {
        out.push_str(&format!(" (did you mean `{hint}`?)"));
    }
    out
}

/// For serde's "unknown field `x`, expected one of `a`, `b`" (or variant), the closest name.
fn suggestion(message: &str) -> Option<String> {
    let rest = message
        .split_once("unknown field `")
        .or_else(|| message.split_once("unknown variant `"))?
        .1;
    let (given, rest) = rest.split_once('`')?;
    let expected: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
    let best = expected
        .iter()
        .map(|c| (edit_distance(given, c), *c))
        .min()?;
    (best.0 <= given.len().max(3) / 2 + 1).then(|| best.1.to_string())
}

/// Levenshtein distance between two names, for the "did you mean" hints.
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + (ca != cb) as usize)
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

pub(super) fn set_path(doc: &mut toml::Table, key: &str, value: toml::Value) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!("bad key \"{key}\""));
    }
    let mut table = doc;
    for (i, p) in parts[..parts.len() - 1].iter().enumerate() {
        let entry = table
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = match entry {
            toml::Value::Table(t) => t,
            _ => return Err(format!("\"{}\" is not a table", parts[..=i].join("."))),
        };
    }
    table.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

pub(super) fn parse_value(text: &str) -> toml::Value {
    match toml::from_str::<toml::Table>(&format!("v = {text}")) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(text.into())),
        Err(_) => toml::Value::String(text.into()),
    }
}

impl ExperimentConfig {
    /// Parses TOML text, applies `key=value` overrides and an optional seed.
    ///
    /// Errors name the origin, the key path (`traffic.load`), the line and column when the
    /// mistake is in the file, and the closest valid name for an unknown key or choice.
    pub fn parse(
        text: &str,
        origin: &str,
        sets: &[String],
        seed: Option<u64>,
    ) -> Result<Self, ExperimentError> {
        let cfg_err = |message: String| ExperimentError::Config {
            origin: origin.to_string(),
            message,
        };
        // Physical units (`[units]`, quantity strings): converted on the value tree, then typed.
        if let Some(mut cfg) = super::units::parse_with_units(text, sets).map_err(cfg_err)? {
            if let Some(s) = seed {
                cfg.seed = s;
            }
            cfg.validate().map_err(cfg_err)?;
            return Ok(cfg);
        }
        // Type-check the file as written first, so errors carry line and column.
        let mut cfg: ExperimentConfig = {
            let de = toml::Deserializer::new(text);
            serde_path_to_error::deserialize(de).map_err(|e| {
                let path = e.path().to_string();
                cfg_err(describe(&path, e.into_inner().to_string().trim_end()))
            })?
        };
        if !sets.is_empty() {
            let mut doc: toml::Table = toml::from_str(text).map_err(|e| cfg_err(e.to_string()))?;
            for s in sets {
                let (k, v) = s.split_once('=').ok_or_else(|| {
                    cfg_err(format!("override \"{s}\" is not of the form key=value"))
                })?;
                set_path(&mut doc, k.trim(), parse_value(v.trim()))
                    .map_err(|m| cfg_err(format!("override \"{s}\": {m}")))?;
            }
            cfg = serde_path_to_error::deserialize(toml::Value::Table(doc)).map_err(|e| {
                let path = e.path().to_string();
                let inner = e.into_inner();
                cfg_err(format!(
                    "after overrides {sets:?}: {}",
                    describe(&path, inner.message())
                ))
            })?;
        }
        if let Some(s) = seed {
            cfg.seed = s;
        }
        cfg.validate().map_err(cfg_err)?;
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str, sets: &[&str]) -> String {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        ExperimentConfig::parse(text, "exp.toml", &sets, None)
            .unwrap_err()
            .to_string()
    }

    const BASE: &str = "[topology]\nkind = \"torus\"\nsides = [4, 4]\n[traffic]\nload = 0.3\n";

    #[test]
    fn unknown_keys_get_a_suggestion_and_position() {
        let e = err(&BASE.replace("load = 0.3", "lod = 0.3"), &[]);
        assert!(
            e.contains("exp.toml") && e.contains("line 5") && e.contains("did you mean `load`"),
            "{e}"
        );
        let e = err(BASE, &["traffic.pattern=\"unifrom\""]);
        assert!(
            e.contains("`traffic.pattern`") && e.contains("did you mean `uniform`"),
            "{e}"
        );
    }

    #[test]
    fn wrong_types_name_the_key_path_and_line() {
        let e = err(&BASE.replace("load = 0.3", "load = \"high\""), &[]);
        assert!(
            e.contains("key `traffic.load`") && e.contains("line 5"),
            "{e}"
        );
        let e = err(BASE, &["switch.routing_delay=-1"]);
        assert!(e.contains("`switch.routing_delay`"), "{e}");
    }

    #[test]
    fn unknown_routing_engines_fail_at_parse_time() {
        let e = err(BASE, &["routing.engine=\"dfssp\""]);
        assert!(
            e.contains("routing.engine") && e.contains("did you mean `dfsssp`"),
            "{e}"
        );
    }

    #[test]
    fn no_suggestion_for_far_fetched_names() {
        let e = err(&BASE.replace("load = 0.3", "zzzzzzzz = 0.3"), &[]);
        assert!(!e.contains("did you mean"), "{e}");
    }
}
