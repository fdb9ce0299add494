//! JSON reading and writing of any topology.
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

    /// Reads a JSON topology file.
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
    match std::fs::read_to_string(path) {
        Ok(text) => Ok((name, text)),
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
