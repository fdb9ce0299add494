//! Quality-of-service configuration that a fabric manager computes and programs into the
//! output schedulers of switches and NICs.
//!
//! - [`dtable`]: the DTable arbitration-table configurator (entry placement by maximum
//!   distance, bandwidth pool, `[min φ, max φ]` ranges, entry weights and the bandwidth
//!   correction algorithm) of the Omni-Path QoS paper
//!   (`000_942770a54f7010fd.txt` in the shared papers, §3.3).
//! - [`sc`]: Omni-Path SL→SC and SC→VL tables (Table 7 of the same paper).
//! - [`voqsw`]: VOQsw SL→VL tables and per-destination SLs that emulate virtual output
//!   queues, and the virtual-network baseline (Gómez et al., `003_4413e6af2e2b3309.txt`).
//!
//! ```
//! use flitsim_manager::qos::{configure_dtable, DTableParams, SlRequirement};
//!
//! // §4.1 of the paper: N = 128, GMTU = 16 units of 64 B, w = 8, k = 2.
//! let params = DTableParams::default();
//! let sl = |name: &str, d, mtu_bytes, share| SlRequirement {
//!     name: name.into(),
//!     max_distance: d,
//!     mtu: params.units(mtu_bytes),
//!     share,
//! };
//! let sls = [
//!     sl("VO", 2, 128, 0.10),
//!     sl("VI", 4, 256, 0.30),
//!     sl("CL", 8, 512, 0.50),
//!     sl("BE", 16, 1024, 0.05),
//!     sl("BK", 16, 1024, 0.05),
//! ];
//! let dt = configure_dtable(&params, &sls).unwrap();
//! assert_eq!(dt.total_weight, 4160);
//! assert_eq!(dt.sl("CL").unwrap().weights, vec![130; 16]);
//! ```

pub mod dtable;
pub mod sc;
pub mod voqsw;

pub use dtable::{
    apply_bandwidth_correction, configure_dtable, configure_dtable_json, place_entries, DTable,
    DTableParams, SlConfig, SlRequirement, MAX_DTABLE_ENTRIES, MAX_DTABLE_SLS,
};
pub use sc::{apply_sc_tables, ScTables};

/// Errors of the QoS configurators.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum QosError {
    /// Table parameters (N, GMTU, w, k, unit size) are unusable.
    #[error("invalid DTable parameters: {0}")]
    InvalidParams(String),
    /// An SL requirement is malformed (empty or duplicate name, zero distance, bad MTU, …).
    #[error("invalid requirement for SL {sl:?}: {reason}")]
    InvalidSl {
        /// Name of the SL.
        sl: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The SL's entries cannot be placed in the free table slots within its maximum distance.
    #[error("cannot place SL {sl:?} (max distance {max_distance}): {reason}")]
    Placement {
        /// Name of the SL.
        sl: String,
        /// Its maximum distance between consecutive entries.
        max_distance: u32,
        /// Why placement failed.
        reason: String,
    },
    /// The requested bandwidth share is outside the assignable range of the SL.
    #[error(
        "SL {sl:?}: requested share {share} is outside [min φ, max φ] = [{min_phi}, {max_phi}]"
    )]
    ShareOutOfRange {
        /// Name of the SL.
        sl: String,
        /// Requested share φ_i.
        share: f64,
        /// Minimum assignable share `n_i · MTU_i / pool`.
        min_phi: f64,
        /// Maximum assignable share `n_i · w / (N · k)`.
        max_phi: f64,
    },
    /// The requested shares add up to more than the whole link.
    #[error("requested shares sum to {0} > 1")]
    Oversubscribed(f64),
    /// An entry weight is (or would become) smaller than the SL's MTU.
    #[error("SL {sl:?}: weights cannot deliver one MTU (entry weight {weight} < MTU {mtu})")]
    WeightBelowMtu {
        /// Name of the SL.
        sl: String,
        /// The offending entry weight.
        weight: i64,
        /// The SL's MTU.
        mtu: u32,
    },
}
