//! Omni-Path service channels: SL→SC at the source, SC→VL at every port, SC→SL for the
//! schedulers (Cano-Cano et al. 2022, `shared/papers/000_942770a54f7010fd.txt`, §2.1 and
//! Table 7).
//!
//! The routing engine decides, hop by hop, which *routing lane* a path uses: 0 everywhere for
//! an up/down or fat-tree routing, the dateline lane (0 before the wrap link of the current
//! dimension, 1 after) for DOR on a torus, the layer for a layered routing. An SL owns one SC
//! per lane (`sl2sc[sl][lane]`), so a packet changes SC where the routing changes lane; each
//! SC carries a single SL, and `sc2vl` maps SCs onto VLs — several SCs may share a VL, as BE
//! and BK share VLs 6–7 in Table 7. A scheduler sees the packet's SL (SC→SL).
//!
//! [`apply_sc_tables`] turns a single-class routing (computed with as many VLs as lanes) into
//! the tables of the whole fabric.
//!
//! ```
//! use flitsim_manager::qos::{apply_sc_tables, ScTables};
//! use flitsim_manager::{route, RoutingRequest};
//! use flitsim_topology::generators;
//!
//! let torus = generators::torus_or_mesh(&[4, 4], 1, 1, 1, true).unwrap();
//! let lanes = route(&torus, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
//! let t = ScTables::table7();
//! let fabric = apply_sc_tables(&lanes, &t, 8).unwrap();
//! assert_eq!(fabric.classes, 5);
//! // BK (SL 4) travels on SC 8 before a dateline and SC 9 after: VLs 6 and 7.
//! let vls: std::collections::BTreeSet<u8> =
//!     fabric.nic_sl2vl[4 * fabric.routing_sls as usize..].iter().copied().collect();
//! assert_eq!(vls.into_iter().collect::<Vec<_>>(), vec![6]);
//! ```
use crate::{FabricConfig, RoutingError};
use serde::{Deserialize, Serialize};

/// SL→SC and SC→VL tables, the same at every port.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScTables {
    /// `sl2sc[sl][lane]`: the SC of SL `sl` on routing lane `lane`. Every SL needs the same
    /// number of lanes.
    pub sl2sc: Vec<Vec<u8>>,
    /// `sc2vl[sc]`: the VL that carries SC `sc`.
    pub sc2vl: Vec<u8>,
}

impl ScTables {
    /// Table 7 of the paper: five SLs (VO, VI, CL, BE, BK) with two SCs each, SC `i` on VL `i`
    /// for SCs 0–7, SCs 8–9 (BK) on VLs 6–7 with BE.
    pub fn table7() -> ScTables {
        ScTables {
            sl2sc: (0..5).map(|sl| vec![2 * sl, 2 * sl + 1]).collect(),
            sc2vl: vec![0, 1, 2, 3, 4, 5, 6, 7, 6, 7],
        }
    }

    /// Routing lanes per SL (the length of every `sl2sc` row).
    pub fn lanes(&self) -> Result<u8, RoutingError> {
        let bad = |m: String| Err(RoutingError::InvalidTables(m));
        let Some(first) = self.sl2sc.first() else {
            return bad("qos.sc.sl2sc: no SLs".into());
        };
        if first.is_empty() {
            return bad("qos.sc.sl2sc[0]: an SL needs at least one SC".into());
        }
        for (sl, row) in self.sl2sc.iter().enumerate() {
            if row.len() != first.len() {
                return bad(format!(
                    "qos.sc.sl2sc[{sl}]: {} SCs, but SL 0 has {}; every SL needs one SC per routing lane",
                    row.len(),
                    first.len()
                ));
            }
        }
        Ok(first.len().min(255) as u8)
    }

    /// Checks the tables for `vls` VLs: every SC maps to a VL that exists, and no SC carries
    /// two SLs. `names` names the SLs in messages.
    pub fn check(&self, vls: u8, names: &[String]) -> Result<(), RoutingError> {
        self.lanes()?;
        let name = |sl: usize| names.get(sl).cloned().unwrap_or_else(|| format!("SL {sl}"));
        let mut owner: Vec<Option<usize>> = vec![None; 256];
        for (sl, row) in self.sl2sc.iter().enumerate() {
            for &sc in row {
                let Some(&vl) = self.sc2vl.get(sc as usize) else {
                    return Err(RoutingError::InvalidTables(format!(
                        "qos.sc: SC {sc} (of {}) is mapped to no VL: qos.sc.sc2vl has {} entries",
                        name(sl),
                        self.sc2vl.len()
                    )));
                };
                if vl >= vls {
                    return Err(RoutingError::InvalidTables(format!(
                        "qos.sc.sc2vl[{sc}] = {vl}: the links have only {vls} VLs (routing.vls)"
                    )));
                }
                match owner[sc as usize] {
                    Some(o) if o != sl => {
                        return Err(RoutingError::InvalidTables(format!(
                            "qos.sc.sl2sc: SC {sc} is given to both {} and {}; an SC carries a single SL",
                            name(o),
                            name(sl)
                        )))
                    }
                    _ => owner[sc as usize] = Some(sl),
                }
            }
        }
        Ok(())
    }
}

/// Builds the fabric's tables for `t.sl2sc.len()` SLs from `lanes`, a single-class routing
/// whose VLs are routing lanes (route with `vls = t.lanes()`, `classes = 1`). The result has
/// `vls` VLs; the VL of SL `sl` on a hop where the routing uses lane `l` is
/// `sc2vl[sl2sc[sl][l]]`.
pub fn apply_sc_tables(
    lanes: &FabricConfig,
    t: &ScTables,
    vls: u8,
) -> Result<FabricConfig, RoutingError> {
    let n_lanes = t.lanes()?;
    t.check(vls, &[])?;
    if lanes.classes != 1 {
        return Err(RoutingError::InvalidTables(format!(
            "SC tables need a single-class routing, got {} classes",
            lanes.classes
        )));
    }
    if lanes.num_vls > n_lanes {
        return Err(RoutingError::NotEnoughVls(format!(
            "the {} routing uses {} lanes, but qos.sc.sl2sc gives each SL only {n_lanes} SCs",
            lanes.engine, lanes.num_vls
        )));
    }
    let sls = t.sl2sc.len();
    let rsl = lanes.routing_sls as usize;
    let map = |lane: u8, sl: usize| t.sc2vl[t.sl2sc[sl][lane as usize] as usize];
    let widen = |table: &[u8]| -> Vec<u8> {
        let mut out = Vec::with_capacity(table.len() * sls);
        for hop in table.chunks(rsl) {
            for sl in 0..sls {
                out.extend(hop.iter().map(|&lane| map(lane, sl)));
            }
        }
        out
    };
    Ok(FabricConfig {
        alt_paths: lanes.alt_paths.clone(),
        engine: lanes.engine.clone(),
        num_vls: vls,
        classes: sls as u8,
        routing_sls: lanes.routing_sls,
        layers: lanes.layers,
        lft: lanes.lft.clone(),
        path_sl: lanes.path_sl.clone(),
        sl2vl: lanes.sl2vl.iter().map(|t| widen(t)).collect(),
        nic_sl2vl: widen(&lanes.nic_sl2vl),
        ports: lanes.ports.clone(),
        rule: lanes.rule.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{cdg, route, RoutingRequest};
    use flitsim_topology::{generators, EndpointId};

    fn names() -> Vec<String> {
        ["VO", "VI", "CL", "BE", "BK"].map(String::from).to_vec()
    }

    #[test]
    fn table7_on_a_torus_changes_sc_at_the_dateline_and_stays_deadlock_free() {
        let topo = generators::torus_or_mesh(&[8, 8], 2, 2, 1, true).unwrap();
        let lanes = route(&topo, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
        let f = apply_sc_tables(&lanes, &ScTables::table7(), 8).unwrap();
        f.check_shape(&topo).unwrap();
        assert!(cdg::verify(&topo, &f).unwrap().deadlock_free);
        // Every hop of every SL uses one of that SL's two SCs' VLs, and both are used.
        let t = ScTables::table7();
        let n = topo.num_endpoints() as u32;
        for sl in 0..5u8 {
            let allowed: Vec<u8> = t.sl2sc[sl as usize]
                .iter()
                .map(|&sc| t.sc2vl[sc as usize])
                .collect();
            let mut seen = std::collections::BTreeSet::new();
            for src in 0..n {
                for dst in 0..n {
                    if src == dst {
                        continue;
                    }
                    for hop in f
                        .trace(&topo, EndpointId(src), EndpointId(dst), sl)
                        .unwrap()
                    {
                        assert!(allowed.contains(&hop.vl), "SL {sl} on VL {}", hop.vl);
                        seen.insert(hop.vl);
                    }
                }
            }
            assert_eq!(seen.len(), 2, "SL {sl} uses both of its SCs");
        }
    }

    #[test]
    fn bad_tables_are_named() {
        let mut t = ScTables::table7();
        t.sc2vl.truncate(9);
        let e = t.check(8, &names()).unwrap_err().to_string();
        assert!(e.contains("SC 9 (of BK) is mapped to no VL"), "{e}");
        let e = ScTables::table7()
            .check(6, &names())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("sc2vl[6] = 6") && e.contains("only 6 VLs"),
            "{e}"
        );
        let mut t = ScTables::table7();
        t.sl2sc[4] = vec![6, 7];
        let e = t.check(8, &names()).unwrap_err().to_string();
        assert!(e.contains("SC 6 is given to both BE and BK"), "{e}");
        let mut t = ScTables::table7();
        t.sl2sc[1] = vec![2];
        assert!(t.lanes().unwrap_err().to_string().contains("sl2sc[1]"));
    }

    #[test]
    fn a_routing_with_more_lanes_than_scs_is_refused() {
        let topo = generators::torus_or_mesh(&[4, 4], 1, 1, 1, true).unwrap();
        let lanes = route(&topo, "dor", &RoutingRequest { vls: 2, classes: 1 }).unwrap();
        let t = ScTables {
            sl2sc: vec![vec![0]],
            sc2vl: vec![0],
        };
        let e = apply_sc_tables(&lanes, &t, 1).unwrap_err().to_string();
        assert!(e.contains("only 1 SCs"), "{e}");
    }
}
