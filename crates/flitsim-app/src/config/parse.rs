//! Reading an experiment file: TOML text → [`ExperimentConfig`], with `key=value` overrides
//! (`--set`) applied to the parsed document before it is typed, so they are checked by the same
//! rules. Errors name the origin, the key path, the line and column for mistakes in the file,
//! and the closest valid name for an unknown key or choice.
use super::{ConfigSource, ExperimentConfig};
use crate::ExperimentError;

/// A deserialisation message with a "did you mean" hint for an unknown field or variant.
fn describe(message: &str) -> String {
    let mut out = message.to_string();
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

/// An integer too large for TOML (whose integers are `i64`): an error rather than a string.
fn out_of_range(text: &str) -> Option<String> {
    let digits = text
        .strip_prefix(['-', '+'])
        .unwrap_or(text)
        .replace('_', "");
    (!digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && text.parse::<i64>().is_err())
    .then(|| format!("{text} is out of range: integers are at most {}", i64::MAX))
}

fn parse_value(text: &str) -> toml::Value {
    match toml::from_str::<toml::Table>(&format!("v = {text}")) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(text.into())),
        Err(_) => toml::Value::String(text.into()),
    }
}

/// Deserialises a document, giving the error's key path and message.
fn typed(doc: &toml::Table) -> Result<ExperimentConfig, (String, String)> {
    serde_path_to_error::deserialize(toml::Value::Table(doc.clone())).map_err(|e| {
        let path = e.path().to_string();
        (path, e.into_inner().message().trim_end().to_string())
    })
}

/// The value at a key path of a document, if it is a table.
fn table_at<'a>(doc: &'a mut toml::Table, path: &str) -> Option<&'a mut toml::Table> {
    let mut t = doc;
    if path.is_empty() || path == "." {
        return Some(t);
    }
    for part in path.split('.') {
        t = match t.get_mut(part)? {
            toml::Value::Table(inner) => inner,
            _ => return None,
        };
    }
    Some(t)
}

/// serde cannot follow the path into an internally tagged enum (`[topology]`,
/// `switch.scheduler`): its errors stop at the table. Finds the key of that table whose
/// removal changes the error — the one the error is about — and returns its path. The tag
/// (`kind`) is tried last, as removing it always changes the error.
fn narrow(doc: &toml::Table, path: String, message: &str) -> String {
    let mut probe = doc.clone();
    let Some(table) = table_at(&mut probe, &path) else {
        return path;
    };
    let mut keys: Vec<String> = table.keys().cloned().collect();
    keys.sort_by_key(|k| k == "kind");
    for k in keys {
        if k == "kind" && !message.contains("variant") {
            continue;
        }
        let mut without = doc.clone();
        if let Some(t) = table_at(&mut without, &path) {
            t.remove(&k);
        }
        let changed = match typed(&without) {
            Ok(_) => true,
            Err((p, m)) => p != path || m != message,
        };
        if changed {
            let child = if path.is_empty() || path == "." {
                k
            } else {
                format!("{path}.{k}")
            };
            return child;
        }
    }
    path
}

impl ExperimentConfig {
    /// Parses TOML text, applies `key=value` overrides and an optional seed, and runs the
    /// checks that need no topology ([`validate`](Self::validate)).
    ///
    /// Every error names the origin, the place (`line L, column C` of the file, or the
    /// `--set key=value` that gave the value), the key path (`traffic.load`) and, for an
    /// unknown key or choice, the closest valid name.
    pub fn parse(
        text: &str,
        origin: &str,
        sets: &[String],
        seed: Option<u64>,
    ) -> Result<Self, ExperimentError> {
        let source = ConfigSource {
            origin: origin.to_string(),
            text: text.to_string(),
            sets: sets.to_vec(),
        };
        let cfg_err = |message: String| ExperimentError::Config {
            origin: origin.to_string(),
            message,
        };
        // Syntax errors carry their own line and column.
        let mut doc: toml::Table = toml::from_str(text).map_err(|e| cfg_err(e.to_string()))?;
        for s in sets {
            let (k, v) = s
                .split_once('=')
                .ok_or_else(|| cfg_err(format!("override \"{s}\" is not of the form key=value")))?;
            if let Some(m) = out_of_range(v.trim()) {
                return Err(source.error(k.trim(), &m));
            }
            set_path(&mut doc, k.trim(), parse_value(v.trim()))
                .map_err(|m| cfg_err(format!("--set {s}: {m}")))?;
        }
        // Physical units (`[units]`, quantity strings such as "2KiB"): converted to flits,
        // cycles and loads on the value tree, so the typed sections stay numeric.
        super::units::convert_doc(&mut doc).map_err(|(path, m)| source.error(&path, &m))?;
        if let Some(path) = size_and_message_flits(&doc) {
            return Err(source.error(
                &path,
                "give either `size` or `message_flits` (the fixed size), not both",
            ));
        }
        let mut cfg = typed(&doc).map_err(|(path, message)| {
            let path = narrow(&doc, path, &message);
            source.error(&path, &describe(&message))
        })?;
        if let Some(s) = seed {
            cfg.seed = s;
        }
        read_traces(&mut cfg, origin).map_err(|(key, m)| source.error(&key, &m))?;
        read_mpi_trace(&mut cfg, origin).map_err(|(key, m)| source.error(&key, &m))?;
        cfg.source = Some(std::sync::Arc::new(source));
        cfg.validate().map_err(|e| cfg.error(&e.key, &e.message))?;
        Ok(cfg)
    }
}

/// Reads the `process.trace` of every class, flow and flow set (a relative path starts at the
/// directory of `origin` when that exists, as `topology.path` does) into its frames, in flits
/// of `units.flit_bytes`.
fn read_traces(cfg: &mut ExperimentConfig, origin: &str) -> Result<(), (String, String)> {
    use flitsim_sim::workload::{ProcessConfig, ProcessTable};
    let flit_bytes = cfg.units.as_ref().map(|u| u.flit_bytes);
    let base = std::path::Path::new(origin).parent().filter(|p| p.exists());
    let t = &mut cfg.traffic;
    let processes = (t.classes.iter_mut().enumerate())
        .map(|(i, c)| (format!("traffic.class[{i}]"), &mut c.process))
        .chain(
            (t.flows.iter_mut().enumerate())
                .map(|(i, f)| (format!("traffic.flow[{i}]"), &mut f.process)),
        )
        .chain(
            (t.flow_sets.iter_mut().enumerate())
                .map(|(i, f)| (format!("traffic.flow_set[{i}]"), &mut f.process)),
        );
    for (owner, process) in processes {
        let Some(ProcessConfig::Table(ProcessTable::Video {
            trace: Some(path),
            frames,
            ..
        })) = process
        else {
            continue;
        };
        let key = format!("{owner}.process.trace");
        let Some(fb) = flit_bytes else {
            return Err((
                key,
                "needs [units] with flit_bytes (trace frame sizes are in bytes)".into(),
            ));
        };
        let full = base.map_or_else(|| std::path::PathBuf::from(&*path), |b| b.join(&*path));
        let text = std::fs::read_to_string(&full)
            .map_err(|e| (key.clone(), format!("{}: {e}", full.display())))?;
        let f = super::trace::read_video_trace(&text, &full.display().to_string(), fb)
            .map_err(|m| (key.clone(), m))?;
        *frames = Some(f.into());
    }
    Ok(())
}

/// Reads `[traffic.trace]`: the VEF file (times in ns become cycles of `units.cycle_ns`) and a
/// mapping file, relative to the directory of `origin` when that exists.
fn read_mpi_trace(cfg: &mut ExperimentConfig, origin: &str) -> Result<(), (String, String)> {
    use flitsim_sim::config::TraceFormat;
    let units = cfg.units.clone();
    let Some(tc) = cfg.traffic.trace.as_mut() else {
        return Ok(());
    };
    let Some(units) = units else {
        return Err((
            "traffic.trace".into(),
            "needs [units] (trace times are nanoseconds and sizes bytes)".into(),
        ));
    };
    let base = std::path::Path::new(origin).parent().filter(|p| p.exists());
    let at = |p: &str| base.map_or_else(|| std::path::PathBuf::from(p), |b| b.join(p));
    let full = match (tc.format, &tc.converted) {
        (TraceFormat::Vef, _) => at(&tc.path),
        (TraceFormat::Dumpi, Some(vef)) => std::path::PathBuf::from(vef),
        (TraceFormat::Dumpi, None) => {
            return Err((
                "traffic.trace.format".into(),
                format!(
                    "\"dumpi\" traces are converted by the Python package, which this program \
                     does not use: run the experiment with `flitsim run` (pip install \
                     'flitsim[trace]'), or convert the trace first with `flitsim trace convert \
                     {} OUT.vef` and give OUT.vef with format = \"vef\"",
                    tc.path
                ),
            ))
        }
    };
    if !(tc.compute_scale.is_finite() && tc.compute_scale >= 0.0) {
        return Err((
            "traffic.trace.compute_scale".into(),
            format!("{}: must be a non-negative number", tc.compute_scale),
        ));
    }
    if let Err(e) = std::fs::File::open(&full) {
        return Err((
            "traffic.trace.path".to_string(),
            format!("{}: {e}", full.display()),
        ));
    }
    // Streamed: checked and measured now, read again as the replay goes.
    let program = flitsim_sim::replay::vef::open_scaled(
        &full,
        &full.display().to_string(),
        units.cycle_ns(),
        tc.compute_scale,
    )
    .map_err(|m| ("traffic.trace.path".to_string(), m))?;
    tc.program = Some(std::sync::Arc::new(program));
    tc.flit_bytes = units.flit_bytes;
    if !matches!(tc.mapping.as_str(), "linear" | "round_robin" | "random") {
        let path = at(&tc.mapping);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            (
                "traffic.trace.mapping".to_string(),
                format!(
                    "{:?} is not linear, round_robin or random, and not a readable mapping \
                     file: {}: {e}",
                    tc.mapping,
                    path.display()
                ),
            )
        })?;
        let tasks = tc.program.as_ref().map_or(0, |p| p.tasks) as usize;
        let mut map = vec![u32::MAX; tasks];
        for (i, line) in text.lines().enumerate() {
            let l = line.split('#').next().unwrap_or("").trim();
            if l.is_empty() {
                continue;
            }
            let bad = |m: String| {
                (
                    "traffic.trace.mapping".to_string(),
                    format!("{}: line {}: {m}", path.display(), i + 1),
                )
            };
            let f: Vec<&str> = l.split_whitespace().collect();
            let (Some(t), Some(e), 2) = (
                f.first().and_then(|x| x.parse::<usize>().ok()),
                f.get(1).and_then(|x| x.parse::<u32>().ok()),
                f.len(),
            ) else {
                return Err(bad(format!("{l:?}: expected `task endpoint`")));
            };
            if t >= tasks {
                return Err(bad(format!(
                    "task {t} does not exist (the trace has {tasks})"
                )));
            }
            if map[t] != u32::MAX {
                return Err(bad(format!("task {t} is mapped twice")));
            }
            map[t] = e;
        }
        if let Some(t) = map.iter().position(|&e| e == u32::MAX) {
            return Err((
                "traffic.trace.mapping".to_string(),
                format!("{}: task {t} is not mapped", path.display()),
            ));
        }
        tc.map = Some(map);
    }
    Ok(())
}

/// The `traffic.class[i].size` of the first class that also gives `message_flits`.
fn size_and_message_flits(doc: &toml::Table) -> Option<String> {
    let classes = doc.get("traffic")?.get("class")?.as_array()?;
    classes.iter().enumerate().find_map(|(i, c)| {
        let t = c.as_table()?;
        (t.contains_key("size") && t.contains_key("message_flits"))
            .then(|| format!("traffic.class[{i}].size"))
    })
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

    /// Every check names the key path and the place: the file's line when the value is in the
    /// file, the `--set` when an override gave it (issue 11 item 7).
    #[test]
    fn every_validation_error_names_key_and_place() {
        let base = "[topology]\nkind = \"torus\"\nsides = [4, 4]\nendpoints_per_switch = 1\n\
                    link_latency = 1\n[routing]\nvls = 2\n[switch]\nvl_buffer_flits = 16\n\
                    [nic]\nbuffer_flits = 64\n[traffic]\nload = 0.3\npattern = \"uniform\"\n\
                    [run]\nmeasure = 100\nstall_cycles = 100\n";
        let cases: &[(&str, &str, &str)] = &[
            ("topology.sides", "[0, 0]", "every side must be at least 2"),
            ("topology.sides", "\"x\"", "invalid type"),
            ("topology.endpoints_per_switch", "0", "at least 1"),
            ("topology.link_latency", "0", "at least 1"),
            ("switch.vl_buffer_flits", "0", "at least one flit"),
            ("nic.buffer_flits", "0", "smaller than the largest MTU"),
            ("routing.vls", "0", "1..=32"),
            ("traffic.load", "0", "must be > 0"),
            ("traffic.load", "-1", "non-negative"),
            ("run.stall_cycles", "0", "at least 1"),
            ("run.measure", "0", "at least 1"),
            ("run.measure", "9223372036854775807", "2^53"),
        ];
        for (key, value, fragment) in cases {
            let (section, name) = key.split_once('.').unwrap();
            let line = base
                .lines()
                .position(|l| l.starts_with(&format!("{name} =")))
                .unwrap()
                + 1;
            let _ = section;
            let text: String = base
                .lines()
                .map(|l| {
                    if l.starts_with(&format!("{name} =")) {
                        format!("{name} = {value}\n")
                    } else {
                        format!("{l}\n")
                    }
                })
                .collect();
            let e = err(&text, &[]);
            assert!(
                e.contains("exp.toml")
                    && e.contains(&format!("line {line},"))
                    && e.contains(&format!("key `{key}`"))
                    && e.contains(fragment),
                "{key} = {value} in the file: {e}"
            );
            let set = format!("{key}={value}");
            let e = err(base, &[&set]);
            assert!(
                e.contains(&format!("--set {set}"))
                    && e.contains(&format!("key `{key}`"))
                    && e.contains(fragment),
                "--set {set}: {e}"
            );
        }
    }

    #[test]
    fn bit_patterns_name_the_pattern_as_written() {
        let text =
            BASE.replace("sides = [4, 4]", "sides = [3, 3]") + "pattern = \"bit_reversal\"\n";
        let cfg = ExperimentConfig::parse(&text, "exp.toml", &[], None).unwrap();
        let e = crate::build_topology(&cfg, None).unwrap_err().to_string();
        assert!(
            e.contains("line 6,") && e.contains("\"bit_reversal\"") && !e.contains("BitReversal"),
            "{e}"
        );
    }

    #[test]
    fn overflowing_values_are_refused_with_key_and_limit() {
        let e = err(BASE, &["run.measure=18446744073709551615"]);
        assert!(
            e.contains("key `run.measure`") && e.contains("out of range"),
            "{e}"
        );
        let e = err(
            BASE,
            &["run.warmup=9007199254740000", "run.drain_max=9000000"],
        );
        assert!(e.contains("key `run.warmup`") && e.contains("2^53"), "{e}");
    }

    #[test]
    fn errors_inside_tagged_sections_point_at_the_key() {
        let e = err(&BASE.replace("sides = [4, 4]", "sides = \"x\""), &[]);
        assert!(
            e.contains("line 3,") && e.contains("key `topology.sides`"),
            "{e}"
        );
        let e = err(BASE, &["topology.trunk=\"2\""]);
        assert!(e.contains("key `topology.trunk`"), "{e}");
    }
}
