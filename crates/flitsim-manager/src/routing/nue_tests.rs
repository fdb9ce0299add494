use super::*;
use crate::cdg;
use crate::routing::testutil::all_paths;
use flitsim_topology::generators;

fn topos() -> Vec<Topology> {
    [
        "torus:4x4,endpoints=2",
        "torus:3x3x3",
        "mesh:4x3",
        "kary-ntree:k=4,n=2",
        "xgft:h=2,m=4,4,w=2,2",
        "random:switches=16,ports=8,endpoints=2,links=28,seed=1",
        "random:switches=24,ports=10,endpoints=3,links=60,seed=7",
        "kautz:b=2,n=3,endpoints=2",
        "kautz:b=3,n=2,total_endpoints=30",
    ]
    .iter()
    .map(|s| generators::from_spec(s).unwrap_or_else(|e| panic!("{s}: {e}")))
    .collect()
}

/// Deadlock freedom by the independent CDG check, a route from every switch to every endpoint,
/// every pair traced, layers within the budget.
fn check(topo: &Topology, f: &FabricConfig, vls: u8) {
    let r = cdg::verify(topo, f).unwrap();
    assert!(r.deadlock_free, "{}: cycle {:?}", topo.name(), r.cycle);
    assert!(f.layers >= 1 && f.layers <= vls, "{}", f.layers);
    assert_eq!(f.routing_sls, f.layers);
    for (s, row) in f.lft.iter().enumerate() {
        for (e, &p) in row.iter().enumerate() {
            assert_ne!(
                p,
                NO_ROUTE,
                "{}: switch {s} has no route to {e}",
                topo.name()
            );
        }
    }
    f.check_routes(topo).unwrap();
    assert_eq!(
        all_paths(topo, f, 0).len(),
        topo.num_endpoints() * (topo.num_endpoints() - 1)
    );
}

#[test]
fn nue_is_deadlock_free_and_connected_with_one_vl() {
    for topo in topos() {
        let f = NueEngine::default()
            .route(&topo, &RoutingRequest { vls: 1, classes: 1 })
            .unwrap_or_else(|e| panic!("{}: {e}", topo.name()));
        assert_eq!(f.layers, 1);
        check(&topo, &f, 1);
    }
}

#[test]
fn nue_is_deadlock_free_and_connected_with_two_and_more_vls() {
    for topo in topos() {
        for vls in [2, 4, 8] {
            let (f, stats) = NueEngine::default()
                .route_with_stats(&topo, &RoutingRequest { vls, classes: 1 })
                .unwrap_or_else(|e| panic!("{}: {e}", topo.name()));
            let sources = (0..topo.num_switches() as u32)
                .filter(|&s| topo.switch_endpoints(SwitchId(s)).next().is_some())
                .count();
            assert_eq!(
                f.layers as usize,
                sources.min(vls as usize),
                "{}",
                topo.name()
            );
            assert_eq!(stats.layers, f.layers);
            assert_eq!(
                stats.destinations.iter().sum::<u32>() as usize,
                topo.num_endpoints()
            );
            check(&topo, &f, vls);
            // Every destination's traffic stays on its layer's VL, the endpoints of a switch
            // share it, and every layer has destinations.
            let n = topo.num_endpoints();
            let home = |e: usize| topo.endpoint_switch(EndpointId(e as u32)).0;
            for s in 0..n {
                for d in 0..n {
                    assert_eq!(f.path_sl[s * n + d], f.path_sl[d]);
                    if home(s) == home(d) {
                        assert_eq!(f.path_sl[s], f.path_sl[d]);
                    }
                }
            }
            assert!(stats.destinations.iter().all(|&k| k > 0), "{stats:?}");
        }
    }
}

#[test]
fn nue_is_deterministic_and_honours_classes_and_max_layers() {
    let topo =
        generators::from_spec("random:switches=20,ports=8,endpoints=2,links=36,seed=3").unwrap();
    let req = RoutingRequest { vls: 4, classes: 1 };
    let a = NueEngine::default().route(&topo, &req).unwrap();
    let b = NueEngine::default().route(&topo, &req).unwrap();
    assert_eq!(a.lft, b.lft);
    assert_eq!(a.path_sl, b.path_sl);
    // Two classes on 8 VLs: 4 layers each, in separate blocks.
    let f = NueEngine::default()
        .route(&topo, &RoutingRequest { vls: 8, classes: 2 })
        .unwrap();
    assert_eq!(f.layers, 4);
    assert!(cdg::verify(&topo, &f).unwrap().deadlock_free);
    let f = NueEngine {
        max_layers: Some(2),
    }
    .route(&topo, &RoutingRequest { vls: 8, classes: 1 })
    .unwrap();
    assert_eq!(f.layers, 2);
    assert!(cdg::verify(&topo, &f).unwrap().deadlock_free);
    let e = NueEngine {
        max_layers: Some(0),
    }
    .route(&topo, &req)
    .unwrap_err();
    assert!(matches!(e, RoutingError::NotEnoughVls(_)), "{e}");
    let e = NueEngine::default()
        .route(&topo, &RoutingRequest { vls: 0, classes: 1 })
        .unwrap_err();
    assert!(matches!(e, RoutingError::NotEnoughVls(_)), "{e}");
}

#[test]
fn nue_uses_no_more_layers_than_endpoints_and_routes_a_ring() {
    // A ring needs two layers for DFSSSP's minimal paths; Nue routes it on one.
    let topo = generators::torus(&[6], 1, 1, 1).unwrap();
    let f = NueEngine::default()
        .route(&topo, &RoutingRequest { vls: 1, classes: 1 })
        .unwrap();
    check(&topo, &f, 1);
    let topo = generators::from_spec("torus:2").unwrap();
    let f = NueEngine::default()
        .route(&topo, &RoutingRequest { vls: 8, classes: 1 })
        .unwrap();
    assert_eq!(f.layers, 2);
    check(&topo, &f, 8);
    // Layers are made of switches: 3 switches with endpoints give at most 3 layers.
    let topo = generators::from_spec("torus:3,endpoints=4").unwrap();
    let f = NueEngine::default()
        .route(&topo, &RoutingRequest { vls: 8, classes: 1 })
        .unwrap();
    assert_eq!(f.layers, 3);
    check(&topo, &f, 8);
}

#[test]
fn nue_refuses_a_disconnected_fabric() {
    let topo = crate::routing::testutil::two_islands();
    let e = NueEngine::default()
        .route(&topo, &RoutingRequest { vls: 2, classes: 1 })
        .unwrap_err();
    assert!(e.to_string().contains("disconnected"), "{e}");
}

#[test]
fn impasses_use_escape_routes_and_stay_deadlock_free() {
    // Dense enough that the search on one layer's CDG reaches impasses.
    let topo = generators::from_spec("kautz:b=3,n=3,total_endpoints=256").unwrap();
    for vls in [1, 2] {
        let (f, stats) = NueEngine::default()
            .route_with_stats(&topo, &RoutingRequest { vls, classes: 1 })
            .unwrap();
        assert!(
            stats.fallbacks > 0 && stats.escape_switches > 0,
            "{stats:?}"
        );
        assert!(stats.blocked > 0 && stats.dependencies > 0, "{stats:?}");
        let r = cdg::verify(&topo, &f).unwrap();
        assert!(r.deadlock_free, "{:?}", r.cycle);
        f.check_routes(&topo).unwrap();
        assert!(f.lft.iter().flatten().all(|&p| p != NO_ROUTE));
    }
}

#[test]
fn random_networks_at_every_budget_are_deadlock_free_and_connected() {
    let mut routed = 0;
    for seed in 0..40u32 {
        let switches = 5 + seed % 12;
        let eps = 1 + seed % 3;
        let free = (8 - eps) * switches / 2;
        let links = (switches - 1) + seed % (free - switches + 2);
        let spec =
            format!("random:switches={switches},ports=8,endpoints={eps},links={links},seed={seed}");
        let Ok(topo) = generators::from_spec(&spec) else {
            continue;
        };
        for vls in 1..=4 {
            let f = NueEngine::default()
                .route(&topo, &RoutingRequest { vls, classes: 1 })
                .unwrap_or_else(|e| panic!("{spec}, {vls} VLs: {e}"));
            check(&topo, &f, vls);
        }
        routed += 1;
    }
    assert!(routed >= 30, "{routed}");
}
