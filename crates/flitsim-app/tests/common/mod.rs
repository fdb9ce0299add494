//! Helpers shared by the integration tests.
#![allow(dead_code)]
use flitsim_manager::FabricConfig;
use flitsim_topology::{generators, Topology};

/// A line of `k` switches (a 1-D mesh) with two endpoints per switch, and its hand-made LFTs.
pub fn line(k: u32, latency: u32) -> (Topology, FabricConfig) {
    let t = generators::torus_or_mesh(&[k.max(2)], 2, 1, latency, false).unwrap();
    let n = t.num_endpoints();
    let lft = (0..t.num_switches() as u32)
        .map(|s| {
            (0..n as u32)
                .map(|d| {
                    let sd = d / 2;
                    if sd > s {
                        0 // + direction
                    } else if sd < s {
                        1 // − direction
                    } else {
                        2 + (d % 2) as u16 // endpoint ports
                    }
                })
                .collect()
        })
        .collect();
    let fabric = FabricConfig {
        engine: "hand".into(),
        num_vls: 1,
        classes: 1,
        routing_sls: 1,
        layers: 1,
        lft,
        path_sl: vec![],
        sl2vl: (0..t.num_switches()).map(|_| vec![0; 16]).collect(),
        nic_sl2vl: vec![0],
        ports: FabricConfig::port_counts(&t),
    };
    (t, fabric)
}
