//! `[topology]`: which fabric graph to generate or read.
use flitsim_sim::config::ParamError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which topology to build.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologyConfig {
    /// n-dimensional torus.
    Torus {
        /// Side per dimension, e.g. `[8, 8]`.
        sides: Vec<u32>,
        /// Endpoints per switch (default 1).
        #[serde(default = "one")]
        endpoints_per_switch: u32,
        /// Parallel links between neighbours (default 1).
        #[serde(default = "one")]
        trunk: u32,
        /// Link latency in cycles (default 1).
        #[serde(default = "one")]
        link_latency: u32,
    },
    /// n-dimensional mesh.
    Mesh {
        /// Side per dimension.
        sides: Vec<u32>,
        /// Endpoints per switch (default 1).
        #[serde(default = "one")]
        endpoints_per_switch: u32,
        /// Parallel links between neighbours (default 1).
        #[serde(default = "one")]
        trunk: u32,
        /// Link latency in cycles (default 1).
        #[serde(default = "one")]
        link_latency: u32,
    },
    /// k-ary n-tree (fat tree) with k^n endpoints.
    KaryNtree {
        /// Arity.
        k: u32,
        /// Levels.
        n: u32,
        /// Link latency in cycles (default 1).
        #[serde(default = "one")]
        link_latency: u32,
    },
    /// Folded (bidirectional) perfect-shuffle multistage network, the butterfly MIN of
    /// Martínez et al. (IEEE TC 2008, §4.1): `endpoints` endpoints on switches of `radix`
    /// ports (`endpoints = 128, radix = 16`: the paper's 24-switch, two-stage network). See
    /// `flitsim_topology::generators::folded_shuffle_min`.
    Min {
        /// Endpoints.
        endpoints: u32,
        /// Ports per switch (even, at least 4).
        radix: u32,
        /// Link latency in cycles (default 1).
        #[serde(default = "one")]
        link_latency: u32,
    },
    /// Random irregular network (always connected).
    Random {
        /// Number of switches.
        switches: u32,
        /// Ports per switch.
        ports: u32,
        /// Endpoints per switch.
        endpoints_per_switch: u32,
        /// Inter-switch links.
        links: u32,
        /// Allow more than one link between two switches (default false).
        #[serde(default)]
        multi_links: bool,
        /// Generator seed (default: the experiment seed).
        #[serde(default)]
        seed: Option<u64>,
        /// Link latency in cycles (default 1).
        #[serde(default = "one")]
        link_latency: u32,
    },
    /// A topology file in any format `flitsim topo` reads, recognised by its content:
    /// flitsim topology JSON, an ibnetdiscover dump or an ibsim net file. A relative path is
    /// taken from the experiment file's directory.
    File {
        /// Path of the file.
        path: String,
    },
}

fn one() -> u32 {
    1
}

impl TopologyConfig {
    /// The generators' parameter checks, each naming its key: sides of at least 2, at least
    /// one endpoint per switch (a fabric without endpoints has nothing to run), trunks and
    /// latencies of at least 1, a fat tree of arity ≥ 2 and ≥ 1 level. What only the generator
    /// can tell (a random network that cannot be wired) is reported at `topology`.
    pub fn validate(&self) -> Result<(), ParamError> {
        let at_least = |key: &str, v: u32, min: u32| {
            if v < min {
                Err(ParamError::new(
                    format!("topology.{key}"),
                    format!("{v}: must be at least {min}"),
                ))
            } else {
                Ok(())
            }
        };
        match self {
            TopologyConfig::Torus {
                sides,
                endpoints_per_switch,
                trunk,
                link_latency,
            }
            | TopologyConfig::Mesh {
                sides,
                endpoints_per_switch,
                trunk,
                link_latency,
            } => {
                if sides.is_empty() {
                    return Err(ParamError::new(
                        "topology.sides",
                        "needs at least one dimension",
                    ));
                }
                if let Some(s) = sides.iter().find(|&&s| s < 2) {
                    return Err(ParamError::new(
                        "topology.sides",
                        format!("{sides:?}: every side must be at least 2, not {s}"),
                    ));
                }
                at_least("endpoints_per_switch", *endpoints_per_switch, 1)?;
                at_least("trunk", *trunk, 1)?;
                at_least("link_latency", *link_latency, 1)
            }
            TopologyConfig::KaryNtree { k, n, link_latency } => {
                at_least("k", *k, 2)?;
                at_least("n", *n, 1)?;
                at_least("link_latency", *link_latency, 1)
            }
            TopologyConfig::Min {
                endpoints,
                radix,
                link_latency,
            } => {
                at_least("endpoints", *endpoints, 2)?;
                at_least("radix", *radix, 4)?;
                if !radix.is_multiple_of(2) {
                    return Err(ParamError::new(
                        "topology.radix",
                        format!("{radix}: must be even (half the ports down, half up)"),
                    ));
                }
                at_least("link_latency", *link_latency, 1)
            }
            TopologyConfig::Random {
                switches,
                ports,
                endpoints_per_switch,
                link_latency,
                ..
            } => {
                at_least("switches", *switches, 1)?;
                at_least("endpoints_per_switch", *endpoints_per_switch, 1)?;
                if ports < endpoints_per_switch {
                    return Err(ParamError::new(
                        "topology.ports",
                        format!("{ports}: fewer ports than endpoints_per_switch = {endpoints_per_switch}"),
                    ));
                }
                at_least("link_latency", *link_latency, 1)
            }
            TopologyConfig::File { .. } => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ExperimentConfig;

    fn min(extra: &str) -> Result<ExperimentConfig, String> {
        ExperimentConfig::parse(
            &format!("[topology]\nkind = \"min\"\n{extra}\n[traffic]\nload = 0.1\n"),
            "t.toml",
            &[],
            None,
        )
        .map_err(|e| e.to_string())
    }

    /// `kind = "min"` builds the folded perfect-shuffle MIN; bad keys are named.
    #[test]
    fn min_kind_builds_the_papers_network_and_names_bad_keys() {
        let cfg = min("endpoints = 128\nradix = 16").unwrap();
        let topo = crate::build_topology(&cfg, None).unwrap();
        assert_eq!((topo.num_switches(), topo.num_endpoints()), (24, 128));
        let e = min("endpoints = 128\nradix = 15").unwrap_err();
        assert!(
            e.contains("topology.radix") && e.contains("must be even"),
            "{e}"
        );
        let e = min("endpoints = 1\nradix = 16").unwrap_err();
        assert!(e.contains("topology.endpoints"), "{e}");
        let cfg = min("endpoints = 100\nradix = 16").unwrap();
        let e = crate::build_topology(&cfg, None).unwrap_err().to_string();
        assert!(e.contains("try 96 or 104"), "{e}");
    }
}
