//! `[topology]`: which fabric graph to generate or read.
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
