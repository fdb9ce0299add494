//! Identities as a subnet manager gives them: [`Topology::assign_missing_ids`] keeps every GUID
//! and LID the topology already has and assigns the missing ones deterministically;
//! [`Topology::set_lids`] replaces LIDs wholesale (for a `guid2lid` file, say).
//!
//! ## Order
//!
//! Missing GUIDs: switch `i` gets [`GENERATED_SWITCH_GUID_BASE`]` + i`, endpoint `i`
//! [`GENERATED_ENDPOINT_GUID_BASE`]` + i` (the generators' GUIDs); a candidate some other node
//! already has is skipped for the next free one.
//!
//! Missing LIDs: first the switches in topology order (for a file: the order its records
//! appear), each taking the lowest free LID; then the endpoints in topology order, each
//! taking the lowest free *block* of `2^lmc` consecutive LIDs whose base is a multiple of
//! `2^lmc` (InfiniBand's LMC: a CA port answers to LIDs `base .. base + 2^lmc`). Switches
//! get one LID whatever the LMC (OpenSM's default: LMC applies to CA ports). A topology
//! without LIDs thus gets, with LMC 0, exactly the LIDs a generator gives it: switch `i` →
//! `1 + i`, endpoint `i` → `S + 1 + i`.
//!
//! LIDs a topology keeps must not overlap another node's block, and with `lmc > 0` an
//! endpoint's kept LID must be a multiple of `2^lmc`.
use crate::{
    IdIndex, Topology, TopologyError, GENERATED_ENDPOINT_GUID_BASE, GENERATED_SWITCH_GUID_BASE,
    MAX_UNICAST_LID,
};
use std::collections::HashSet;

/// Largest LMC InfiniBand allows (a 3-bit field).
pub const MAX_LMC: u8 = 7;

/// What [`Topology::assign_missing_ids`] changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IdAssignment {
    /// Nodes that got a GUID.
    pub guids: usize,
    /// Nodes that got a LID.
    pub lids: usize,
}

/// Unicast LIDs a fabric of `switches` switches and `endpoints` CA ports needs with LMC
/// `lmc`: one per switch and `2^lmc` per CA port.
pub fn lids_needed(switches: usize, endpoints: usize, lmc: u8) -> u64 {
    switches as u64 + ((endpoints as u64) << lmc.min(MAX_LMC))
}

impl Topology {
    /// Keeps every GUID and LID the topology has and assigns the missing ones (see the
    /// [order](crate::lids)); with `lmc > 0` every endpoint's LID is the base of an aligned
    /// block of `2^lmc` LIDs. Fails, changing nothing, when the LIDs do not fit the unicast
    /// range `1..=`[`MAX_UNICAST_LID`], when `lmc` exceeds [`MAX_LMC`], or when kept LIDs
    /// overlap or are misaligned.
    pub fn assign_missing_ids(&mut self, lmc: u8) -> Result<IdAssignment, TopologyError> {
        if lmc > MAX_LMC {
            return Err(TopologyError::Invalid(format!(
                "LMC {lmc} is out of range (InfiniBand allows 0..={MAX_LMC})"
            )));
        }
        let block = 1u32 << lmc;
        let (ns, ne) = (self.switches.len(), self.endpoints.len());
        let need = lids_needed(ns, ne, lmc);
        if need > MAX_UNICAST_LID as u64 {
            return Err(TopologyError::Invalid(format!(
                "'{}' needs {need} unicast LIDs ({ns} switches + {ne} endpoints{}), more than \
                 the {MAX_UNICAST_LID} InfiniBand has (1..=0x{MAX_UNICAST_LID:X}); it cannot be \
                 programmed as one subnet",
                self.name,
                if lmc > 0 {
                    format!(" x {block} LIDs each (LMC {lmc})")
                } else {
                    String::new()
                }
            )));
        }
        // LIDs in use: index = LID.
        let mut used = vec![false; MAX_UNICAST_LID as usize + 1];
        used[0] = true;
        let mut claim = |first: u32, count: u32, who: &str| -> Result<(), TopologyError> {
            let last = first + count - 1;
            if first == 0 || last > MAX_UNICAST_LID as u32 {
                return Err(TopologyError::Invalid(format!(
                    "{who} has LID {first}{}, outside the unicast range 1..=0x{MAX_UNICAST_LID:X}",
                    if count > 1 {
                        format!("..{last}")
                    } else {
                        String::new()
                    }
                )));
            }
            for l in first..=last {
                if std::mem::replace(&mut used[l as usize], true) {
                    return Err(TopologyError::Invalid(format!(
                        "{who}: LID {l} is already taken by another node (with LMC {lmc} every \
                         endpoint uses {block} LIDs)"
                    )));
                }
            }
            Ok(())
        };
        for s in &self.switches {
            if let Some(l) = s.lid {
                claim(l as u32, 1, &format!("switch {}", s.name))?;
            }
        }
        for e in &self.endpoints {
            if let Some(l) = e.lid {
                if !(l as u32).is_multiple_of(block) {
                    return Err(TopologyError::Invalid(format!(
                        "endpoint {} has LID {l}, which is not a multiple of {block}; with \
                         LMC {lmc} a CA port's base LID must be one (its {block} LIDs are \
                         base..base+{block}): give the input aligned LIDs (or a guid2lid file \
                         with them), leave the LIDs out to have them assigned, or use LMC 0",
                        e.name
                    )));
                }
                claim(l as u32, block, &format!("endpoint {}", e.name))?;
            }
        }
        // Free LIDs: switches take the lowest, endpoints the lowest aligned free block.
        let mut switch_lids = Vec::new();
        let mut next = 1u32;
        for s in &self.switches {
            if s.lid.is_some() {
                switch_lids.push(s.lid);
                continue;
            }
            while next <= MAX_UNICAST_LID as u32 && used[next as usize] {
                next += 1;
            }
            if next > MAX_UNICAST_LID as u32 {
                return Err(full(&self.name));
            }
            used[next as usize] = true;
            switch_lids.push(Some(next as u16));
        }
        let mut endpoint_lids = Vec::new();
        let mut base = block;
        let lids_before = self.switches.iter().filter(|s| s.lid.is_none()).count();
        for e in &self.endpoints {
            if e.lid.is_some() {
                endpoint_lids.push(e.lid);
                continue;
            }
            loop {
                if base + block - 1 > MAX_UNICAST_LID as u32 {
                    return Err(full(&self.name));
                }
                if (base..base + block).all(|l| !used[l as usize]) {
                    break;
                }
                base += block;
            }
            for l in base..base + block {
                used[l as usize] = true;
            }
            endpoint_lids.push(Some(base as u16));
            base += block;
        }
        let lids = lids_before + self.endpoints.iter().filter(|e| e.lid.is_none()).count();

        for (s, l) in self.switches.iter_mut().zip(switch_lids) {
            s.lid = l;
        }
        for (e, l) in self.endpoints.iter_mut().zip(endpoint_lids) {
            e.lid = l;
        }
        let guids = self.assign_missing_guids();
        Ok(IdAssignment { guids, lids })
    }

    /// Gives every node without a GUID one (see the [order](crate::lids)) and returns how
    /// many got one.
    pub fn assign_missing_guids(&mut self) -> usize {
        let (ns, ne) = (self.switches.len(), self.endpoints.len());
        let mut taken: HashSet<u64> = self
            .switches
            .iter()
            .filter_map(|s| s.guid)
            .chain(self.endpoints.iter().filter_map(|e| e.guid))
            .collect();
        let mut pick = |candidate: u64| {
            let mut g = candidate;
            while !taken.insert(g) {
                g = g.wrapping_add(1);
            }
            g
        };
        let mut guids = 0;
        let switch_guids: Vec<u64> = (0..ns)
            .map(|i| match self.switches[i].guid {
                Some(g) => g,
                None => {
                    guids += 1;
                    pick(GENERATED_SWITCH_GUID_BASE + i as u64)
                }
            })
            .collect();
        let endpoint_guids: Vec<u64> = (0..ne)
            .map(|i| match self.endpoints[i].guid {
                Some(g) => g,
                None => {
                    guids += 1;
                    pick(GENERATED_ENDPOINT_GUID_BASE + i as u64)
                }
            })
            .collect();
        for (s, g) in self.switches.iter_mut().zip(switch_guids) {
            s.guid = Some(g);
        }
        for (e, g) in self.endpoints.iter_mut().zip(endpoint_guids) {
            e.guid = Some(g);
        }
        self.ids = IdIndex::build(&self.switches, &self.endpoints)
            .expect("kept identities were unique and new ones avoid them");
        guids
    }

    /// Replaces every node's LID (`None`: no LID), checking them like [`Topology::new`]
    /// (unique, not 0); on error nothing changes.
    pub fn set_lids(
        &mut self,
        switch_lids: &[Option<u16>],
        endpoint_lids: &[Option<u16>],
    ) -> Result<(), TopologyError> {
        if switch_lids.len() != self.switches.len() || endpoint_lids.len() != self.endpoints.len() {
            return Err(TopologyError::Invalid(format!(
                "set_lids: {} switch and {} endpoint LIDs for {} switches and {} endpoints",
                switch_lids.len(),
                endpoint_lids.len(),
                self.switches.len(),
                self.endpoints.len()
            )));
        }
        let mut switches = self.switches.clone();
        let mut endpoints = self.endpoints.clone();
        for (s, &l) in switches.iter_mut().zip(switch_lids) {
            s.lid = l;
        }
        for (e, &l) in endpoints.iter_mut().zip(endpoint_lids) {
            e.lid = l;
        }
        self.ids = IdIndex::build(&switches, &endpoints)?;
        self.switches = switches;
        self.endpoints = endpoints;
        Ok(())
    }

    /// True when every switch and endpoint has a GUID and a LID.
    pub fn has_all_ids(&self) -> bool {
        self.switches
            .iter()
            .all(|s| s.guid.is_some() && s.lid.is_some())
            && self
                .endpoints
                .iter()
                .all(|e| e.guid.is_some() && e.lid.is_some())
    }
}

fn full(name: &str) -> TopologyError {
    TopologyError::Invalid(format!(
        "'{name}': the LIDs it already has leave no room for the missing ones in the unicast \
         range 1..=0x{MAX_UNICAST_LID:X}"
    ))
}

#[cfg(test)]
mod tests {
    use crate::{generators, Topology};

    fn strip(t: &Topology, keep: impl Fn(bool, usize) -> bool) -> Topology {
        let mut sw = t.switches().to_vec();
        let mut ep = t.endpoints().to_vec();
        for (i, s) in sw.iter_mut().enumerate() {
            if !keep(true, i) {
                s.lid = None;
                s.guid = None;
            }
        }
        for (i, e) in ep.iter_mut().enumerate() {
            if !keep(false, i) {
                e.lid = None;
                e.guid = None;
            }
        }
        Topology::new(t.name(), t.shape().clone(), sw, ep, t.links().to_vec()).unwrap()
    }

    /// All LIDs of `t` with their block sizes, checked unique, in range and aligned.
    fn check_invariants(t: &Topology, lmc: u8) {
        let block = 1u32 << lmc;
        let mut seen = std::collections::HashSet::new();
        for s in t.switches() {
            assert!(seen.insert(s.lid.unwrap() as u32));
            assert!(s.guid.is_some());
        }
        for e in t.endpoints() {
            let l = e.lid.unwrap() as u32;
            assert_eq!(l % block, 0, "{} base LID {l} not aligned", e.name);
            for x in l..l + block {
                assert!((1..=0xbfff).contains(&x));
                assert!(seen.insert(x), "LID {x} twice");
            }
        }
    }

    #[test]
    fn a_topology_without_ids_gets_the_generators_ids() {
        let g = generators::torus(&[3, 4], 2, 1, 1).unwrap();
        let mut t = strip(&g, |_, _| false);
        assert!(!t.has_all_ids());
        let a = t.assign_missing_ids(0).unwrap();
        assert_eq!(a.lids, 12 + 24);
        assert_eq!(a.guids, 12 + 24);
        assert_eq!(t.switches(), g.switches());
        assert_eq!(t.endpoints(), g.endpoints());
        check_invariants(&t, 0);
        // Nothing to do a second time.
        assert_eq!(t.assign_missing_ids(0).unwrap().lids, 0);
    }

    #[test]
    fn kept_lids_stay_and_the_rest_avoid_them() {
        let g = generators::torus(&[4, 4], 1, 1, 1).unwrap();
        // Keep the LIDs of odd switches and of endpoints 0 and 5; the others get fresh ones.
        let mut t = strip(&g, |sw, i| if sw { i % 2 == 1 } else { i == 0 || i == 5 });
        t.assign_missing_ids(0).unwrap();
        for (i, s) in t.switches().iter().enumerate() {
            if i % 2 == 1 {
                assert_eq!(s.lid, g.switches()[i].lid);
            }
        }
        assert_eq!(t.endpoints()[0].lid, g.endpoints()[0].lid);
        assert_eq!(t.endpoints()[5].lid, g.endpoints()[5].lid);
        check_invariants(&t, 0);
        // Switch i had LID 1 + i: the odd switches keep the even LIDs, so the even switches
        // take the lowest free ones, the odd LIDs, in order.
        let evens: Vec<u16> = t
            .switches()
            .iter()
            .step_by(2)
            .map(|s| s.lid.unwrap())
            .collect();
        assert_eq!(evens, [1, 3, 5, 7, 9, 11, 13, 15]);
    }

    #[test]
    fn lmc_blocks_are_aligned_and_disjoint() {
        let g = generators::kary_ntree(4, 2, 1).unwrap();
        for lmc in [1u8, 2, 3] {
            let mut t = strip(&g, |_, _| false);
            t.assign_missing_ids(lmc).unwrap();
            check_invariants(&t, lmc);
            // 8 switches take 1..=8, endpoints then follow in aligned blocks.
            let block = 1u16 << lmc;
            let first = t.endpoints()[0].lid.unwrap();
            assert_eq!(first, 9u16.div_ceil(block) * block);
        }
        // A kept misaligned endpoint LID is refused with LMC 2.
        let mut t = g.clone();
        let m = t.assign_missing_ids(2).unwrap_err().to_string();
        assert!(m.contains("not a multiple of 4"), "{m}");
        assert!(t.assign_missing_ids(8).is_err());
    }

    #[test]
    fn too_many_nodes_for_the_lid_space_is_an_error() {
        // 64 × 64 × 4 torus: 16384 switches + 49152 endpoints > 49151 LIDs.
        let g = generators::torus(&[128, 128], 2, 1, 1).unwrap();
        assert!(g.switches()[0].lid.is_none());
        let mut t = g.clone();
        let m = t.assign_missing_ids(0).unwrap_err().to_string();
        assert!(
            m.contains("needs 49152 unicast LIDs") && m.contains("49151"),
            "{m}"
        );
        assert!(t.switches()[0].lid.is_none(), "nothing changed");
    }
}
