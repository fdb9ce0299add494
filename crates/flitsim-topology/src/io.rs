//! JSON reading and writing of any topology, and reading any topology file flitsim knows
//! ([`Topology::read_file`]: flitsim JSON, `ibnetdiscover` dumps and `ibsim` net files,
//! told apart by their content).
use crate::{Endpoint, Link, Shape, Switch, Topology, TopologyError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The on-disk JSON form of a topology (`"format": "flitsim-topology"`, version 1).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyFile {
    /// Always `"flitsim-topology"`.
    pub format: String,
    /// Format version (1).
    pub version: u32,
    /// Topology name.
    pub name: String,
    /// Known structure, if any.
    #[serde(default)]
    pub shape: Shape,
    /// Switches in id order.
    pub switches: Vec<Switch>,
    /// Endpoints in id order.
    pub endpoints: Vec<Endpoint>,
    /// Links.
    pub links: Vec<Link>,
}

const FORMAT: &str = "flitsim-topology";

/// A topology file format, as [`Topology::detect_format`] tells it from the content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologyFormat {
    /// flitsim's JSON ([`TopologyFile`]): the first non-blank character is `{`.
    Json,
    /// An `ibnetdiscover` dump or an `ibsim` net file (one grammar, see
    /// [`crate::ibnetdiscover`]): anything else.
    InfiniBand,
}

impl Topology {
    /// The format of a topology file's text, by content: flitsim JSON when the first
    /// non-blank character (after an optional byte-order mark) is `{`, otherwise the
    /// `ibnetdiscover`/`ibsim` grammar; `None` for an empty or blank text.
    pub fn detect_format(text: &str) -> Option<TopologyFormat> {
        match text
            .trim_start_matches('\u{feff}')
            .trim_start()
            .chars()
            .next()
        {
            None => None,
            Some('{') => Some(TopologyFormat::Json),
            Some(_) => Some(TopologyFormat::InfiniBand),
        }
    }

    /// Reads a topology in any format flitsim reads ([`Topology::detect_format`]); `origin`
    /// names the source in errors (and an InfiniBand dump's topology). An empty or blank text
    /// is an error (`empty topology file`), as is a text that describes no switch.
    pub fn read_str(text: &str, origin: &str) -> Result<Topology, TopologyError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        match Self::detect_format(text) {
            None => Err(TopologyError::Parse {
                path: origin.into(),
                message: "empty topology file (expected a flitsim topology JSON, an \
                          ibnetdiscover dump or an ibsim net file)"
                    .into(),
            }),
            Some(TopologyFormat::Json) => Self::from_json_named(text, origin),
            Some(TopologyFormat::InfiniBand) => Self::from_ib_str(text, origin),
        }
    }

    /// [`Topology::read_str`] of raw bytes, which must be UTF-8 (an error names the line of
    /// the first byte that is not).
    pub fn read_bytes(bytes: &[u8], origin: &str) -> Result<Topology, TopologyError> {
        Self::read_str(utf8(bytes, origin)?, origin)
    }

    /// Reads a topology file in any format flitsim reads, detected by content
    /// ([`Topology::read_str`]), whatever the file is called.
    pub fn read_file(path: &Path) -> Result<Topology, TopologyError> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| TopologyError::Io {
            path: name.clone(),
            source,
        })?;
        Self::read_bytes(&bytes, &name)
    }
}

/// `bytes` as UTF-8, or an error naming the line and column of the first bad byte.
fn utf8<'a>(bytes: &'a [u8], origin: &str) -> Result<&'a str, TopologyError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line = 1 + good.iter().filter(|&&b| b == b'\n').count();
        let col = 1 + good.len() - good.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        TopologyError::Parse {
            path: origin.into(),
            message: format!(
                "line {line}, column {col}: not UTF-8 text (byte {:#04x})",
                bytes[e.valid_up_to()]
            ),
        }
    })
}

impl Topology {
    /// Serialises to pretty JSON.
    pub fn to_json(&self) -> String {
        let f = TopologyFile {
            format: FORMAT.into(),
            version: 1,
            name: self.name.clone(),
            shape: self.shape.clone(),
            switches: self.switches.clone(),
            endpoints: self.endpoints.clone(),
            links: self.links.clone(),
        };
        serde_json::to_string_pretty(&f).expect("topology serialises")
    }

    /// Parses JSON text; `origin` names the source in errors.
    pub fn from_json_named(text: &str, origin: &str) -> Result<Topology, TopologyError> {
        let f: TopologyFile = serde_json::from_str(text).map_err(|e| TopologyError::Parse {
            path: origin.into(),
            message: format!("line {}, column {}: {}", e.line(), e.column(), e),
        })?;
        if f.format != FORMAT || f.version != 1 {
            return Err(TopologyError::Parse {
                path: origin.into(),
                message: format!(
                    "expected format \"{FORMAT}\" version 1, found \"{}\" version {}",
                    f.format, f.version
                ),
            });
        }
        if f.switches.is_empty() {
            return Err(TopologyError::Parse {
                path: origin.into(),
                message: "the topology has no switches".into(),
            });
        }
        Topology::new(f.name, f.shape, f.switches, f.endpoints, f.links).map_err(|e| {
            TopologyError::Parse {
                path: origin.into(),
                message: e.to_string(),
            }
        })
    }

    /// Parses JSON text.
    pub fn from_json(text: &str) -> Result<Topology, TopologyError> {
        Self::from_json_named(text, "<string>")
    }

    /// Reads a JSON topology file (any format: [`Topology::read_file`]).
    pub fn read_json(path: &Path) -> Result<Topology, TopologyError> {
        let (name, text) = read_text(path)?;
        Self::from_json_named(&text, &name)
    }

    /// Writes a JSON topology file (written to a temporary name first, then renamed, so a
    /// failure never leaves a half-written file).
    pub fn write_json(&self, path: &Path) -> Result<(), TopologyError> {
        let name = path.display().to_string();
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, self.to_json()).map_err(|source| TopologyError::Io {
            path: name.clone(),
            source,
        })?;
        std::fs::rename(&tmp, path).map_err(|source| TopologyError::Io { path: name, source })
    }
}

/// The name (as errors show it) and the text of the file at `path`.
pub(crate) fn read_text(path: &Path) -> Result<(String, String), TopologyError> {
    let name = path.display().to_string();
    match std::fs::read(path) {
        Ok(bytes) => {
            let text = utf8(&bytes, &name)?.to_string();
            Ok((name, text))
        }
        Err(source) => Err(TopologyError::Io { path: name, source }),
    }
}

#[cfg(test)]
mod tests {
    use crate::generators;
    use crate::Topology;

    #[test]
    fn roundtrip_preserves_everything() {
        let t = generators::kary_ntree(2, 3, 2).unwrap();
        let back = Topology::from_json(&t.to_json()).unwrap();
        assert_eq!(back.links(), t.links());
        assert_eq!(back.switches(), t.switches());
        assert_eq!(back.shape(), t.shape());
    }

    #[test]
    fn malformed_json_names_line_and_column() {
        let err =
            Topology::from_json_named("{\n \"format\": \"flitsim-topology\",\n oops }", "x.json")
                .unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("x.json: line 3"), "{msg}");
    }

    #[test]
    fn structural_errors_are_reported() {
        let t = generators::torus(&[2, 2], 1, 1, 1).unwrap();
        let mut text = t.to_json();
        // Point the first link at a port that does not exist.
        text = text.replacen("\"port\": 0", "\"port\": 99", 1);
        let msg = Topology::from_json_named(&text, "t.json")
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("t.json") && msg.contains("no port 99"),
            "{msg}"
        );
    }
}
