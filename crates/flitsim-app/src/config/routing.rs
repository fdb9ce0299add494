//! `[routing]`: the routing engine (or loaded tables) that programs the fabric, its VLs and
//! the deadlock-freedom check.
use super::parse::edit_distance;
use flitsim_sim::config::ParamError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Routing engine selection.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoutingConfig {
    /// `dor`, `dmodk` (alias `updown-dmodk`), `ftree`, `updn`, `minhop`, `sssp`, `lash`,
    /// `dfsssp` or `nue`; default: `dor` for tori and meshes, `dmodk` for k-ary n-trees, `ftree` for
    /// XGFTs, `minhop` otherwise.
    #[serde(default)]
    pub engine: Option<String>,
    /// Data VLs per link, 1 to 32 (default 2).
    #[serde(default = "default_vls")]
    #[schemars(range(min = 1, max = 32))]
    pub vls: u8,
    /// Check the channel dependency graph before running and refuse cyclic tables
    /// (default false: a cyclic routing runs, and the stall detector reports a deadlock).
    #[serde(default)]
    pub require_deadlock_free: bool,
    /// Verify the channel dependency graph and put the verdict (per VL, with a cycle when there
    /// is one) in the results as `cdg` (default false; implied by `require_deadlock_free`).
    #[serde(default)]
    pub verify: bool,
    /// A directory of routing tables in OpenSM's dump formats, as `flitsim route --out` or
    /// OpenSM write them: `opensm-lfts.dump` (required), `opensm-sl2vl.dump` and `path-sl.txt`
    /// (optional). When set, the tables are loaded from there instead of running `engine`, and
    /// `vls` must cover the VLs they use. A relative path is taken from the experiment file's
    /// directory.
    #[serde(default)]
    pub tables: Option<String>,
    /// LID mask count, 0 to 7 (default 0): the engine routes `2^lmc` paths per destination
    /// (path `k` is the destination's LID `base + k`, as InfiniBand's LMC gives a port
    /// `2^lmc` LIDs); a flow's `path` picks one. Engines that route several paths: `minhop`,
    /// `updn`, `ftree`, `dmodk`, `sssp`, `dfsssp` (distinct paths where the topology has them)
    /// and `dor` (the same path for every LID).
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(range(min = 0, max = 7))]
    pub lmc: u8,
    /// Who fills the SL→VL tables and path SLs: `engine` (default: the routing engine's own),
    /// `voqsw` (the VOQsw methodology of Gómez et al. over the engine's forwarding tables,
    /// with `voqsw_sls` SLs on `vls` VLs, emulating virtual output queues) or `vn` (`vls`
    /// virtual networks: SL = VL = destination mod `vls` on every hop, the paper's baseline).
    /// Both keep the engine's layers (each engine VL split into `vls / lanes` VLs); they need
    /// one traffic class and one path per destination.
    #[serde(default, skip_serializing_if = "VlAssignment::is_engine")]
    pub vl_assignment: VlAssignment,
    /// With `vl_assignment = "voqsw"`: the SLs VOQsw may use, 1 to 255 (default 8), or `"full"`
    /// for as many as full VOQ needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voqsw_sls: Option<VoqswSlsKey>,
    /// With `vl_assignment = "voqsw"`: paths that cross no considered 4-tuple take SL
    /// `destination mod SLs` instead of SL 0 (default false, the paper's lowest free SL).
    /// They constrain no SL→VL table, so the considered 4-tuples and the share of VOQ are
    /// unchanged; their packets spread over the VLs instead of sharing VL 0.
    #[serde(default, skip_serializing_if = "is_false")]
    pub voqsw_spread: bool,
    /// With `vl_assignment = "vn"`: what picks a packet's virtual network, `destination`
    /// (default: destination mod `vls`) or `source` (source mod `vls`).
    #[serde(default, skip_serializing_if = "VnBy::is_destination")]
    pub vn_by: VnBy,
    /// How switches find a packet's output port: `tables` (stored forwarding and path SL
    /// tables, switches × endpoints and endpoints² entries), `computed` (the engine's routing
    /// rule evaluated per packet, O(switches + endpoints) memory: `dor` on tori and meshes,
    /// `dmodk` on k-ary n-trees) or `auto` (default: `computed` where the engine has a rule
    /// and nothing needs the tables). Both give the same routes and byte-identical results,
    /// so the key is left out of the resolved configuration and its hash.
    #[serde(default, skip_serializing)]
    pub forwarding: Forwarding,
}

/// `routing.forwarding`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Forwarding {
    /// A rule where it saves memory, tables otherwise.
    #[default]
    Auto,
    /// Stored tables.
    Tables,
    /// The engine's rule.
    Computed,
}

/// `routing.vn_by`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VnBy {
    /// Destination mod `vls`.
    #[default]
    Destination,
    /// Source mod `vls`.
    Source,
}

impl VnBy {
    fn is_destination(&self) -> bool {
        *self == VnBy::Destination
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// `routing.vl_assignment`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VlAssignment {
    /// The routing engine's own SL→VL tables.
    #[default]
    Engine,
    /// VOQsw tables over the engine's forwarding tables.
    Voqsw,
    /// Virtual networks: SL = VL = destination mod `vls`.
    Vn,
}

impl VlAssignment {
    /// The default.
    pub fn is_engine(&self) -> bool {
        *self == VlAssignment::Engine
    }
}

/// `routing.voqsw_sls`: a number of SLs or `"full"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum VoqswSlsKey {
    /// At most this many SLs.
    Count(u16),
    /// As many as full VOQ needs.
    Full(FullWord),
}

/// The word `"full"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum FullWord {
    /// `"full"`.
    #[serde(rename = "full")]
    Full,
}

fn is_zero(x: &u8) -> bool {
    *x == 0
}

fn default_vls() -> u8 {
    2
}

impl Default for RoutingConfig {
    fn default() -> Self {
        RoutingConfig {
            engine: None,
            vls: default_vls(),
            require_deadlock_free: false,
            verify: false,
            tables: None,
            lmc: 0,
            vl_assignment: VlAssignment::Engine,
            voqsw_sls: None,
            voqsw_spread: false,
            vn_by: VnBy::Destination,
            forwarding: Forwarding::Auto,
        }
    }
}

impl RoutingConfig {
    /// Range checks that serde cannot express: a known engine name (with the closest one
    /// suggested) and `vls` in 1..=32. Messages name the key.
    pub fn validate(&self) -> Result<(), ParamError> {
        if let Some(engine) = &self.engine {
            if let Err(e) = flitsim_manager::routing::engine_by_name(engine) {
                let names = flitsim_manager::routing::ENGINE_NAMES;
                let hint = names
                    .iter()
                    .map(|n| (edit_distance(engine, n), *n))
                    .min()
                    .filter(|(d, _)| *d <= engine.len().max(3) / 2 + 1)
                    .map(|(_, n)| format!(" (did you mean `{n}`?)"))
                    .unwrap_or_default();
                return Err(ParamError::new("routing.engine", format!("{e}{hint}")));
            }
        }
        if self.lmc > flitsim_manager::routing::MAX_LMC {
            return Err(ParamError::new(
                "routing.lmc",
                format!(
                    "LMC {} is out of range: InfiniBand allows 0..={} (2^lmc paths per destination)",
                    self.lmc,
                    flitsim_manager::routing::MAX_LMC
                ),
            ));
        }
        if self.lmc > 0 && self.tables.is_some() {
            return Err(ParamError::new(
                "routing.lmc",
                "loaded routing.tables carry their own paths (every LID of a port in the LFT dump); leave routing.lmc at 0".to_string(),
            ));
        }
        match (self.vl_assignment, self.voqsw_sls) {
            (VlAssignment::Voqsw, Some(VoqswSlsKey::Count(n))) if n == 0 || n > 255 => {
                return Err(ParamError::new(
                    "routing.voqsw_sls",
                    format!("{n} SLs: give 1 to 255, or \"full\""),
                ))
            }
            (VlAssignment::Engine | VlAssignment::Vn, Some(_)) => {
                return Err(ParamError::new(
                    "routing.voqsw_sls",
                    "only used with routing.vl_assignment = \"voqsw\"".to_string(),
                ))
            }
            _ => {}
        }
        if self.voqsw_spread && self.vl_assignment != VlAssignment::Voqsw {
            return Err(ParamError::new(
                "routing.voqsw_spread",
                "only used with routing.vl_assignment = \"voqsw\"".to_string(),
            ));
        }
        if self.vn_by != VnBy::Destination && self.vl_assignment != VlAssignment::Vn {
            return Err(ParamError::new(
                "routing.vn_by",
                "only used with routing.vl_assignment = \"vn\"".to_string(),
            ));
        }
        if self.vls == 0 || self.vls > 32 {
            return Err(ParamError::new(
                "routing.vls",
                format!("{} VLs: must be in 1..=32", self.vls),
            ));
        }
        Ok(())
    }
}
