//! LMC multipath: every engine that supports it gives 2^L loop-free paths per destination,
//! different where the topology allows, deadlock-free where the engine promises it, and
//! LMC 0 is the engine's single-path routing unchanged.
use flitsim_manager::cdg;
use flitsim_manager::routing::{engine_by_name, route_with, EngineOptions, RoutingRequest};
use flitsim_manager::{FabricConfig, NO_ROUTE};
use flitsim_topology::{generators, EndpointId, Topology};

fn lmc(l: u8) -> EngineOptions {
    EngineOptions {
        lmc: l,
        ..EngineOptions::default()
    }
}

const REQ: RoutingRequest = RoutingRequest { vls: 8, classes: 1 };

fn random_net() -> Topology {
    generators::random(&generators::RandomParams {
        switches: 16,
        ports: 8,
        endpoints_per_switch: 2,
        links: 28,
        multi_links: false,
        latency: 1,
        seed: 5,
    })
    .unwrap()
}

/// Routes with LMC 2 and checks what every multipath fabric must satisfy.
fn route_lmc2(topo: &Topology, engine: &str) -> FabricConfig {
    let f = route_with(topo, engine, &REQ, &lmc(2)).unwrap_or_else(|e| panic!("{engine}: {e}"));
    assert_eq!(f.num_paths(), 4, "{engine}");
    f.check_shape(topo).unwrap();
    f.check_routes(topo).unwrap();
    // Every path of every pair traces to its destination.
    let n = topo.num_endpoints() as u32;
    for k in 0..4 {
        for s in 0..n {
            for d in 0..n {
                f.trace_path(topo, EndpointId(s), EndpointId(d), 0, k)
                    .unwrap_or_else(|e| panic!("{engine} path {k} {s}->{d}: {e}"));
            }
        }
    }
    f
}

#[test]
fn lmc_0_is_the_single_path_routing_unchanged() {
    let cases: Vec<(Topology, &[&str])> = vec![
        (
            generators::kary_ntree(4, 2, 1).unwrap(),
            &["minhop", "updn", "ftree", "dmodk", "sssp", "dfsssp", "lash"],
        ),
        (random_net(), &["minhop", "updn", "sssp", "dfsssp", "lash"]),
        (
            generators::torus(&[4, 4], 2, 1, 1).unwrap(),
            &["dor", "minhop", "updn", "sssp", "dfsssp"],
        ),
    ];
    for (topo, engines) in cases {
        for &e in engines {
            let a = route_with(&topo, e, &REQ, &lmc(0)).unwrap();
            let b = engine_by_name(e).unwrap().route(&topo, &REQ).unwrap();
            assert_eq!(a, b, "{e}");
            assert!(a.alt_paths.is_empty(), "{e}");
        }
    }
}

#[test]
fn every_multipath_engine_routes_four_paths_on_a_fat_tree_all_distinct_across_leaves() {
    // 4-ary 2-tree: 4 leaves with 4 endpoints each, 4 spines. Endpoints on different leaves
    // have 4 link-disjoint paths (one per spine).
    let topo = generators::kary_ntree(4, 2, 1).unwrap();
    for engine in ["minhop", "updn", "ftree", "dmodk", "sssp", "dfsssp"] {
        let f = route_lmc2(&topo, engine);
        let v = cdg::verify(&topo, &f).unwrap();
        assert!(v.deadlock_free, "{engine}: {:?}", v.cycle);
        let d = f.path_diversity(&topo).unwrap();
        assert_eq!(d.pairs, 16 * 12, "{engine}");
        assert_eq!(d.distinct_pairs, d.pairs, "{engine}: {d:?}");
        if engine != "sssp" && engine != "dfsssp" {
            // The legal-distance engines spread the 4 paths over the 4 spines.
            assert_eq!(d.disjoint_pairs, d.pairs, "{engine}: {d:?}");
        }
        // Path 0 of the legal-distance engines is the single-path routing.
        if !engine.contains("sssp") {
            let single = engine_by_name(engine).unwrap().route(&topo, &REQ).unwrap();
            assert_eq!(f.lft, single.lft, "{engine}");
        }
    }
}

#[test]
fn a_three_level_fat_tree_gets_disjoint_up_down_paths() {
    let topo = generators::kary_ntree(4, 3, 1).unwrap();
    for engine in ["updn", "ftree", "dmodk", "minhop"] {
        let f = route_lmc2(&topo, engine);
        assert!(cdg::verify(&topo, &f).unwrap().deadlock_free, "{engine}");
        let d = f.path_diversity(&topo).unwrap();
        assert_eq!(d.disjoint_pairs, d.pairs, "{engine}: {d:?}");
    }
}

#[test]
fn random_networks_keep_the_engines_promises_on_every_path() {
    let topo = random_net();
    for engine in ["updn", "dfsssp", "minhop", "sssp"] {
        let f = route_lmc2(&topo, engine);
        let v = cdg::verify(&topo, &f).unwrap();
        if engine == "updn" || engine == "dfsssp" {
            assert!(v.deadlock_free, "{engine}: {:?}", v.cycle);
        }
        let d = f.path_diversity(&topo).unwrap();
        assert!(d.distinct_pairs > 0, "{engine}: {d:?}");
    }
    // DFSSSP's layers cover the paths of every LID: alt paths carry their own path SLs.
    let f = route_with(&topo, "dfsssp", &REQ, &lmc(1)).unwrap();
    assert_eq!(f.alt_paths.len(), 1);
    if f.routing_sls > 1 {
        assert_eq!(f.alt_paths[0].path_sl.len(), topo.num_endpoints().pow(2));
    }
}

#[test]
fn dor_gives_every_lid_the_same_path_and_lash_says_it_cannot() {
    let topo = generators::torus(&[4, 4], 2, 1, 1).unwrap();
    let f = route_lmc2(&topo, "dor");
    assert!(cdg::verify(&topo, &f).unwrap().deadlock_free);
    for p in &f.alt_paths {
        assert_eq!(p.lft, f.lft);
        assert_eq!(p.path_sl, f.path_sl);
    }
    let e = route_with(&topo, "lash", &REQ, &lmc(1))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("lash does not support LMC > 0") && e.contains("updn"),
        "{e}"
    );
    let e = route_with(&topo, "dor", &REQ, &lmc(8))
        .unwrap_err()
        .to_string();
    assert!(e.contains("LMC 8 is out of range"), "{e}");
}

#[test]
fn the_paths_of_a_destination_are_loop_free_tables_of_their_own() {
    // A path table that loops is found by check_routes, naming the path.
    let topo = generators::kary_ntree(2, 2, 1).unwrap();
    let mut f = route_with(&topo, "updn", &REQ, &lmc(1)).unwrap();
    let leaf_up = f.alt_paths[0].lft[0][3];
    assert_ne!(leaf_up, NO_ROUTE);
    // Send endpoint 3's traffic from spine 2 back down to leaf 0, which sends it up again.
    let back = (0..topo.num_ports(flitsim_topology::SwitchId(2)))
        .find(|&p| {
            topo.switch_peer(flitsim_topology::SwitchId(2), p)
                .is_some_and(|x| x.remote.node == flitsim_topology::NodeId::Switch(0))
        })
        .unwrap();
    let up = (0..topo.num_ports(flitsim_topology::SwitchId(0)))
        .find(|&p| {
            topo.switch_peer(flitsim_topology::SwitchId(0), p)
                .is_some_and(|x| x.remote.node == flitsim_topology::NodeId::Switch(2))
        })
        .unwrap();
    f.alt_paths[0].lft[2][3] = back;
    f.alt_paths[0].lft[0][3] = up;
    let e = f.check_routes(&topo).unwrap_err().to_string();
    assert!(e.contains("path 1"), "{e}");
}

#[test]
fn up_down_engines_stay_deadlock_free_on_many_networks_and_lmcs() {
    // XGFTs (ftree) and random networks of several seeds (updn, dfsssp), LMC 1 to 3.
    for spec in [
        "xgft:h=2,m=4,4,w=1,3",
        "xgft:h=3,m=3,2,2,w=1,2,2",
        "xgft:h=2,m=6,6,w=3,3",
    ] {
        let topo = generators::from_spec(spec).unwrap();
        for l in 1..=3u8 {
            let f = route_with(&topo, "ftree", &REQ, &lmc(l)).unwrap();
            assert_eq!(f.num_paths(), 1 << l);
            f.check_routes(&topo).unwrap();
            assert!(
                cdg::verify(&topo, &f).unwrap().deadlock_free,
                "{spec} lmc {l}"
            );
        }
    }
    for seed in 1..=4 {
        let topo = generators::from_spec(&format!(
            "random:switches=20,ports=8,endpoints=2,links=40,seed={seed}"
        ))
        .unwrap();
        for (engine, l) in [("updn", 1u8), ("updn", 3), ("dfsssp", 2)] {
            let f = route_with(&topo, engine, &REQ, &lmc(l)).unwrap();
            f.check_routes(&topo).unwrap();
            let v = cdg::verify(&topo, &f).unwrap();
            assert!(
                v.deadlock_free,
                "{engine} seed {seed} lmc {l}: {:?}",
                v.cycle
            );
            // Paths of one destination differ somewhere on every such network.
            let d = f.path_diversity(&topo).unwrap();
            assert!(d.mean_distinct_paths() > 1.0);
        }
    }
}

/// The folded perfect-shuffle MIN of the deadline-QoS study (128 endpoints, 16-port switches:
/// 16 stage-0 switches, 8 top switches) and a three-stage one: the default engine of an
/// irregular shape (`minhop`) and `updn` route them deadlock-free with link-disjoint paths
/// between endpoints of different stage-0 switches: in the two-stage network as many as there
/// are top switches (8, LMC 3); in the three-stage one (16 top switches) 4 (LMC 2, one per up
/// port of a stage-0 switch: the engines' per-switch multipath choice repeats the same up-port
/// pattern at both stages, so a larger LMC adds no further distinct paths there).
#[test]
fn folded_shuffle_mins_get_deadlock_free_paths_through_every_top_switch() {
    for (spec, l, tops) in [
        ("min:endpoints=128,radix=16", 3u8, 8usize),
        ("min:endpoints=64,radix=8", 2, 4),
    ] {
        let topo = generators::from_spec(spec).unwrap();
        for engine in ["minhop", "updn"] {
            let f0 = route_with(&topo, engine, &REQ, &lmc(0)).unwrap();
            assert!(
                cdg::verify(&topo, &f0).unwrap().deadlock_free,
                "{spec} {engine}"
            );
            let f = route_with(&topo, engine, &REQ, &lmc(l))
                .unwrap_or_else(|e| panic!("{spec} {engine}: {e}"));
            assert_eq!(f.num_paths(), tops);
            f.check_routes(&topo).unwrap();
            let v = cdg::verify(&topo, &f).unwrap();
            assert!(v.deadlock_free, "{spec} {engine}: {:?}", v.cycle);
            let d = f.path_diversity(&topo).unwrap();
            assert_eq!(d.disjoint_pairs, d.pairs, "{spec} {engine}: {d:?}");
            assert_eq!(d.as_distinct_as_minimal, d.pairs, "{spec} {engine}: {d:?}");
            // Endpoints 0 and the last sit on different stage-0 switches: each path climbs to
            // a different top switch.
            let last = topo.num_endpoints() as u32 - 1;
            let mut top: Vec<u32> = (0..tops)
                .map(|k| {
                    let hops = f
                        .trace_path(&topo, EndpointId(0), EndpointId(last), 0, k)
                        .unwrap();
                    hops.iter().map(|h| h.switch.0).max().unwrap()
                })
                .collect();
            top.sort_unstable();
            top.dedup();
            assert_eq!(top.len(), tops, "{spec} {engine}");
        }
    }
}
