//! Where a value of an experiment came from: a line and column of the file, or a `--set`
//! override. Every error of an experiment file — a wrong type found by serde, a range check of
//! a section's `validate()`, a check that needs the built topology, the memory estimate — names
//! a key path (`topology.sides`, `traffic.class[0].rate`); [`ConfigSource::error`] turns the key
//! path into a place with one mechanism: the key's span in the TOML text (`toml_edit` keeps
//! them), or the last `--set` whose key is the path or one of its ancestors.
use crate::ExperimentError;
use std::ops::Range;

/// The text and overrides an [`ExperimentConfig`](super::ExperimentConfig) was read from.
#[derive(Clone, Debug, Default)]
pub struct ConfigSource {
    /// File name (or `<string>`) as given.
    pub origin: String,
    /// The file's text.
    pub text: String,
    /// The `--set key=value` overrides, in order.
    pub sets: Vec<String>,
}

/// One step of a key path.
#[derive(Debug, PartialEq)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// `traffic.class[0].rate` → `traffic`, `class`, `0`, `rate`.
fn segments(path: &str) -> Vec<Seg<'_>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            out.push(match name.parse::<usize>() {
                Ok(i) => Seg::Index(i),
                Err(_) => Seg::Key(name),
            });
        }
        while let Some(end) = rest.find(']') {
            if let Ok(i) = rest[1..end].parse() {
                out.push(Seg::Index(i));
            }
            rest = &rest[end + 1..];
        }
    }
    out
}

/// Whether `prefix` is `path` or one of its ancestors (`topology` of `topology.sides`,
/// `traffic.class` of `traffic.class[0].rate`).
fn is_ancestor(prefix: &str, path: &str) -> bool {
    path == prefix
        || (path.starts_with(prefix)
            && matches!(path.as_bytes().get(prefix.len()), Some(b'.') | Some(b'[')))
}

/// A node of the document while walking a key path.
enum Node<'a> {
    Table(&'a toml_edit::Table),
    Inline(&'a toml_edit::InlineTable),
    Array(&'a toml_edit::Array),
    Tables(&'a toml_edit::ArrayOfTables),
    Leaf,
}

impl<'a> Node<'a> {
    fn of_item(item: &'a toml_edit::Item) -> Self {
        match item {
            toml_edit::Item::Table(t) => Node::Table(t),
            toml_edit::Item::ArrayOfTables(a) => Node::Tables(a),
            toml_edit::Item::Value(v) => Node::of_value(v),
            toml_edit::Item::None => Node::Leaf,
        }
    }
    fn of_value(v: &'a toml_edit::Value) -> Self {
        match v {
            toml_edit::Value::InlineTable(t) => Node::Inline(t),
            toml_edit::Value::Array(a) => Node::Array(a),
            _ => Node::Leaf,
        }
    }
}

/// The span of the deepest part of `path` present in the document (the key where there is
/// one, else the value or table header), and whether all of `path` was found.
fn span_of(doc: &toml_edit::Table, path: &str) -> Option<(Range<usize>, bool)> {
    let mut best: Option<Range<usize>> = None;
    let mut node = Node::Table(doc);
    for seg in segments(path) {
        let found = match (seg, &node) {
            (Seg::Key(k), Node::Table(t)) => t.get_key_value(k).map(|(key, item)| {
                // A `[section]` header's key has no span of its own: take the table's.
                let span = key.span().or_else(|| item.span()).or_else(|| match item {
                    toml_edit::Item::Table(t) => t.span(),
                    _ => None,
                });
                (span, Node::of_item(item))
            }),
            (Seg::Key(k), Node::Inline(t)) => t
                .get_key_value(k)
                .map(|(key, v)| (key.span().or_else(|| v.span()), Node::of_item(v))),
            (Seg::Index(i), Node::Tables(a)) => a.get(i).map(|t| (t.span(), Node::Table(t))),
            (Seg::Index(i), Node::Array(a)) => a.get(i).map(|v| (v.span(), Node::of_value(v))),
            _ => None,
        };
        let Some((span, next)) = found else {
            return best.map(|b| (b, false));
        };
        if span.is_some() {
            best = span;
        }
        node = next;
    }
    best.map(|b| (b, true))
}

impl ConfigSource {
    /// 1-based line and column of a byte offset of the text.
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }

    /// The last `--set` whose key is `path` or an ancestor of it.
    fn set_for(&self, path: &str) -> Option<&str> {
        self.sets.iter().rev().map(String::as_str).find(|s| {
            s.split_once('=')
                .is_some_and(|(k, _)| is_ancestor(k.trim(), path))
        })
    }

    /// Where the value at `path` came from: `--set k=v`, `line L, column C` (with the line's
    /// text), or, for a value the file does not give, the default and the nearest section.
    pub fn place(&self, path: &str) -> String {
        if let Some(s) = self.set_for(path) {
            return format!("--set {s}");
        }
        // Overrides inside the section an error is about (`topology.sides` for `topology`).
        let inside: Vec<String> = self
            .sets
            .iter()
            .filter(|s| {
                s.split_once('=')
                    .is_some_and(|(k, _)| is_ancestor(path, k.trim()))
            })
            .map(|s| format!(" with --set {s}"))
            .collect();
        format!("{}{}", self.place_in_file(path), inside.concat())
    }

    /// [`place`](Self::place) in the file alone.
    fn place_in_file(&self, path: &str) -> String {
        let doc = match self.text.parse::<toml_edit::ImDocument<String>>() {
            Ok(d) => d,
            Err(_) => return format!("key `{path}`"),
        };
        match span_of(doc.as_table(), path) {
            Some((span, found)) => {
                let (line, col) = self.line_col(span.start);
                let text = self.text.lines().nth(line - 1).unwrap_or("").trim_end();
                if found {
                    format!("line {line}, column {col} (`{text}`)")
                } else {
                    format!("not set (its default applies); nearest: line {line} (`{text}`)")
                }
            }
            None => "not set (its default applies)".to_string(),
        }
    }

    /// The error of the value at `key`: origin, place and key path, then `message`.
    pub fn error(&self, key: &str, message: &str) -> ExperimentError {
        ExperimentError::Config {
            origin: self.origin.clone(),
            message: format!("{}: key `{key}`: {message}", self.place(key)),
        }
    }
}
