//! Cross-engine tests: every engine routes every pair on random networks, tori and k-ary
//! n-trees; minimality where promised; deadlock freedom of `updn`, `ftree`, `lash` and
//! `dfsssp`; DFSSSP's layer count, heuristics and failure message; SSSP's balance.
//!
//! Ignored tests (run with `cargo test --release -p flitsim-manager --test routing_engines --
//! --ignored --nocapture`) time DFSSSP on 4096 endpoints and reproduce the virtual-layer
//! counts of Domke, Hoefler & Nagel (IPDPS 2011), Section IV.
use flitsim_manager::cdg;
use flitsim_manager::routing::{
    route_with, CycleHeuristic, EngineOptions, RoutingEngine, UpDownEngine,
};
use flitsim_manager::{route, FabricConfig, Hop, RoutingError, RoutingRequest};
use flitsim_topology::{generators, EndpointId, Link, NodeId, SwitchId, Topology};
use std::collections::VecDeque;
use std::time::Instant;

fn req(vls: u8) -> RoutingRequest {
    RoutingRequest { vls, classes: 1 }
}

fn random(switches: u32, ports: u32, eps: u32, links: u32, seed: u64) -> Topology {
    generators::random(&generators::RandomParams {
        switches,
        ports,
        endpoints_per_switch: eps,
        links,
        multi_links: false,
        latency: 1,
        seed,
    })
    .unwrap()
}

fn small_randoms() -> Vec<Topology> {
    (1..=4).map(|seed| random(12, 8, 2, 20, seed)).collect()
}

/// Topologies every general engine must route.
fn zoo() -> Vec<Topology> {
    let mut v = small_randoms();
    v.push(generators::torus(&[4, 4], 2, 1, 1).unwrap());
    v.push(generators::torus(&[3, 5], 1, 2, 1).unwrap());
    v.push(generators::torus_or_mesh(&[4, 3], 1, 1, 1, false).unwrap());
    v.push(generators::kary_ntree(2, 3, 1).unwrap());
    v.push(generators::kary_ntree(4, 2, 1).unwrap());
    v
}

/// Every ordered pair of distinct endpoints, traced; also checks the tables with the
/// memoised route check.
fn all_paths(topo: &Topology, f: &FabricConfig) -> Vec<(u32, u32, Vec<Hop>)> {
    f.check_shape(topo).unwrap();
    f.check_routes(topo).unwrap();
    let n = topo.num_endpoints() as u32;
    let mut out = Vec::new();
    for s in 0..n {
        for d in (0..n).filter(|&d| d != s) {
            let p = f
                .trace(topo, EndpointId(s), EndpointId(d), 0)
                .unwrap_or_else(|e| panic!("{} {s} -> {d}: {e}", f.engine));
            out.push((s, d, p));
        }
    }
    out
}

fn home(topo: &Topology, e: u32) -> u32 {
    topo.endpoint_switch(EndpointId(e)).0 .0
}

/// Hop distances between all switch pairs, by BFS.
fn distances(topo: &Topology) -> Vec<Vec<u32>> {
    let n = topo.num_switches();
    (0..n as u32)
        .map(|s| {
            let mut d = vec![u32::MAX; n];
            d[s as usize] = 0;
            let mut q = VecDeque::from([s]);
            while let Some(u) = q.pop_front() {
                for (_, t, _) in topo.switch_neighbours(SwitchId(u)) {
                    if d[t.0 as usize] == u32::MAX {
                        d[t.0 as usize] = d[u as usize] + 1;
                        q.push_back(t.0);
                    }
                }
            }
            d
        })
        .collect()
}

/// Paths per directed switch-to-switch link.
fn link_loads(topo: &Topology, f: &FabricConfig) -> Vec<u32> {
    let mut load = vec![0u32; topo.total_switch_ports()];
    for (_, _, p) in all_paths(topo, f) {
        for h in &p[..p.len() - 1] {
            load[topo.port_index(h.switch, h.out_port)] += 1;
        }
    }
    load
}

/// DFSSSP as in the paper (no first-fit restarts) with the given heuristic and variant.
fn layered(heuristic: CycleHeuristic, online: bool, balance: bool) -> EngineOptions {
    EngineOptions {
        heuristic,
        online,
        balance: Some(balance),
        restarts: Some(0),
        ..Default::default()
    }
}

#[test]
fn every_engine_routes_every_pair_and_minimal_ones_are_minimal() {
    for topo in zoo() {
        let dist = distances(&topo);
        let tree = matches!(topo.shape(), flitsim_topology::Shape::KaryNTree { .. });
        let torus = matches!(topo.shape(), flitsim_topology::Shape::Torus { .. });
        let mut engines = vec!["updn", "minhop", "sssp", "lash", "dfsssp"];
        if tree {
            engines.extend(["ftree", "dmodk"]);
        }
        if torus {
            engines.push("dor");
        }
        for name in engines {
            let f = route(&topo, name, &req(8))
                .unwrap_or_else(|e| panic!("{name} on {}: {e}", topo.name()));
            let paths = all_paths(&topo, &f);
            if ["minhop", "sssp", "lash", "dfsssp", "ftree", "dmodk", "dor"].contains(&name) {
                for (s, d, p) in &paths {
                    let want = dist[home(&topo, *s) as usize][home(&topo, *d) as usize];
                    assert_eq!(
                        p.len() as u32 - 1,
                        want,
                        "{name} on {}: {s} -> {d} is not minimal",
                        topo.name()
                    );
                }
            }
        }
    }
}

#[test]
fn deadlock_free_engines_have_acyclic_cdgs() {
    for topo in zoo() {
        let tree = matches!(topo.shape(), flitsim_topology::Shape::KaryNTree { .. });
        let mut engines = vec!["updn", "lash", "dfsssp"];
        if tree {
            engines.push("ftree");
        }
        for name in engines {
            let f = route(&topo, name, &req(8)).unwrap();
            let r = cdg::verify(&topo, &f).unwrap();
            assert!(
                r.deadlock_free,
                "{name} on {}: cycle {:?}",
                topo.name(),
                r.cycle
            );
        }
        // Variants: online DFSSSP, every heuristic, with and without balancing.
        for h in [
            CycleHeuristic::Weakest,
            CycleHeuristic::Strongest,
            CycleHeuristic::First,
        ] {
            for (online, balance) in [(false, false), (false, true), (true, false)] {
                let f = route_with(&topo, "dfsssp", &req(8), &layered(h, online, balance)).unwrap();
                assert!(
                    cdg::verify(&topo, &f).unwrap().deadlock_free,
                    "dfsssp {h:?} online {online} balance {balance} on {}",
                    topo.name()
                );
            }
        }
    }
}

/// Legality of Up*/Down* paths and their length against the shortest legal path.
#[test]
fn updn_paths_are_legal_and_shortest_legal_almost_always() {
    let mut minimal = 0usize;
    let mut total = 0usize;
    let mut topos = small_randoms();
    topos.extend((10..16).map(|seed| random(24, 8, 2, 40, seed)));
    topos.push(generators::torus(&[4, 4], 1, 1, 1).unwrap());
    for topo in topos {
        let engine = UpDownEngine::default();
        let level = engine.levels(&topo).unwrap();
        let key = |s: u32| (level[s as usize], s);
        let f = engine.route(&topo, &req(1)).unwrap();
        // Shortest legal distance by BFS over (switch, gone down yet).
        let n = topo.num_switches();
        let legal: Vec<Vec<u32>> = (0..n as u32)
            .map(|s| {
                let mut d = vec![[u32::MAX; 2]; n];
                d[s as usize][0] = 0;
                let mut q = VecDeque::from([(s, 0usize)]);
                while let Some((u, ph)) = q.pop_front() {
                    for (_, t, _) in topo.switch_neighbours(SwitchId(u)) {
                        let up = key(t.0) < key(u);
                        if up && ph == 1 {
                            continue;
                        }
                        let np = usize::from(!up);
                        if d[t.0 as usize][np] == u32::MAX {
                            d[t.0 as usize][np] = d[u as usize][ph] + 1;
                            q.push_back((t.0, np));
                        }
                    }
                }
                d.iter().map(|x| x[0].min(x[1])).collect()
            })
            .collect();
        for (s, d, p) in all_paths(&topo, &f) {
            let mut gone_down = false;
            for h in &p[..p.len() - 1] {
                let NodeId::Switch(next) =
                    topo.switch_peer(h.switch, h.out_port).unwrap().remote.node
                else {
                    unreachable!()
                };
                let up = key(next) < key(h.switch.0);
                assert!(
                    !(up && gone_down),
                    "{}: {s} -> {d} goes down, then up",
                    topo.name()
                );
                gone_down |= !up;
            }
            let want = legal[home(&topo, s) as usize][home(&topo, d) as usize];
            let hops = p.len() as u32 - 1;
            assert!(hops >= want);
            total += 1;
            minimal += usize::from(hops == want);
        }
        assert!(cdg::verify(&topo, &f).unwrap().deadlock_free);
    }
    eprintln!("updn: {minimal} of {total} paths are shortest legal paths");
    assert!(minimal * 100 >= total * 95, "{minimal} of {total}");
}

#[test]
fn updn_roots_are_an_option() {
    let topo = random(12, 8, 2, 20, 3);
    let opts = EngineOptions {
        roots: vec![SwitchId(5)],
        ..Default::default()
    };
    let f = route_with(&topo, "updn", &req(1), &opts).unwrap();
    all_paths(&topo, &f);
    assert!(cdg::verify(&topo, &f).unwrap().deadlock_free);
    assert_eq!(
        UpDownEngine {
            roots: vec![SwitchId(5)]
        }
        .levels(&topo)
        .unwrap()[5],
        0
    );
}

#[test]
fn sssp_and_minhop_can_deadlock_and_dfsssp_fixes_it() {
    let mut cyclic = 0;
    for topo in zoo()
        .into_iter()
        .filter(|t| !matches!(t.shape(), flitsim_topology::Shape::KaryNTree { .. }))
    {
        let sssp = route(&topo, "sssp", &req(1)).unwrap();
        if !cdg::verify(&topo, &sssp).unwrap().deadlock_free {
            cyclic += 1;
            let f = route(&topo, "dfsssp", &req(8)).unwrap();
            assert!(f.routing_sls > 1);
            assert!(cdg::verify(&topo, &f).unwrap().deadlock_free);
            // Same paths, only the VLs differ.
            assert_eq!(f.lft, sssp.lft);
        }
    }
    assert!(cyclic >= 3, "only {cyclic} cyclic SSSP routings");
    let torus = generators::torus(&[4, 4], 1, 1, 1).unwrap();
    let m = route(&torus, "minhop", &req(1)).unwrap();
    assert!(!cdg::verify(&torus, &m).unwrap().deadlock_free);
}

#[test]
fn fat_trees_need_one_layer() {
    for topo in [
        generators::kary_ntree(2, 3, 1).unwrap(),
        generators::kary_ntree(4, 2, 1).unwrap(),
    ] {
        for name in ["dfsssp", "lash"] {
            let f = route_with(
                &topo,
                name,
                &req(4),
                &EngineOptions {
                    balance: Some(false),
                    ..Default::default()
                },
            )
            .unwrap();
            assert_eq!(f.routing_sls, 1, "{name} on {}", topo.name());
        }
    }
}

#[test]
fn too_few_vls_fail_with_the_layer_count() {
    let topo = generators::torus(&[4, 4], 2, 1, 1).unwrap();
    let opts = layered(CycleHeuristic::Weakest, false, false);
    let needed = route_with(&topo, "dfsssp", &req(16), &opts)
        .unwrap()
        .routing_sls;
    assert!(needed >= 2);
    let err = route_with(&topo, "dfsssp", &req(needed - 1), &opts).unwrap_err();
    assert!(matches!(err, RoutingError::NotEnoughVls(_)));
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("dfsssp needs {needed} virtual layers"))
            && msg.contains(&format!("only {} VL", needed - 1)),
        "{msg}"
    );
    // max_layers caps the VLs even when the link has more.
    let capped = EngineOptions {
        max_layers: Some(1),
        ..opts.clone()
    };
    let msg = route_with(&topo, "dfsssp", &req(16), &capped)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("max_layers = 1"), "{msg}");
    let lash = route(&topo, "lash", &req(16)).unwrap().routing_sls;
    let msg = route(&topo, "lash", &req(lash - 1))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains(&format!("lash needs {lash} virtual layers")),
        "{msg}"
    );
}

#[test]
fn balancing_uses_spare_vls_and_classes_get_their_own_blocks() {
    let topo = generators::torus(&[4, 4], 2, 1, 1).unwrap();
    let tight = route_with(
        &topo,
        "dfsssp",
        &req(8),
        &layered(CycleHeuristic::Weakest, false, false),
    )
    .unwrap();
    let f = route(&topo, "dfsssp", &RoutingRequest { vls: 8, classes: 2 }).unwrap();
    assert_eq!(f.routing_sls, 4);
    assert!(tight.routing_sls <= 4);
    let r = cdg::verify(&topo, &f).unwrap();
    assert!(r.deadlock_free);
    // Every VL carries paths.
    assert!(r.per_vl.iter().all(|v| v.channels > 0), "{:?}", r.per_vl);
    // Class 1 stays on VLs 4..8.
    for (s, d) in [(0u32, 9u32), (3, 30), (17, 2)] {
        let p = f.trace(&topo, EndpointId(s), EndpointId(d), 1).unwrap();
        assert!(p.iter().all(|h| (4..8).contains(&h.vl)));
    }
}

#[test]
fn sssp_balances_links_better_than_minhop() {
    let (mut s_sum, mut m_sum) = (0u64, 0u64);
    for seed in 1..=5 {
        let topo = random(16, 10, 4, 28, seed);
        let s = link_loads(&topo, &route(&topo, "sssp", &req(1)).unwrap());
        let m = link_loads(&topo, &route(&topo, "minhop", &req(1)).unwrap());
        let (smax, mmax) = (*s.iter().max().unwrap(), *m.iter().max().unwrap());
        eprintln!("seed {seed}: max paths per link sssp {smax}, minhop {mmax}");
        s_sum += smax as u64;
        m_sum += mmax as u64;
    }
    assert!(s_sum <= m_sum, "sssp {s_sum} vs minhop {m_sum}");
}

/// Layers DFSSSP (offline with `h`, or online) and LASH need, without a VL limit.
fn layers_needed(topo: &Topology, engine: &str, h: CycleHeuristic, online: bool) -> u8 {
    route_with(topo, engine, &req(64), &layered(h, online, false))
        .unwrap()
        .routing_sls
}

#[test]
fn heuristics_all_work_and_weakest_is_not_worse_on_average() {
    // The paper's random setting (2 inter-switch links per switch), scaled down.
    let mut sums = [0u32; 3];
    for seed in 0..6 {
        let topo = random(16, 12, 4, 32, seed);
        for (i, h) in [
            CycleHeuristic::Weakest,
            CycleHeuristic::First,
            CycleHeuristic::Strongest,
        ]
        .into_iter()
        .enumerate()
        {
            let n = layers_needed(&topo, "dfsssp", h, false);
            sums[i] += n as u32;
            let f = route_with(&topo, "dfsssp", &req(n), &layered(h, false, true)).unwrap();
            assert!(cdg::verify(&topo, &f).unwrap().deadlock_free);
        }
    }
    eprintln!(
        "layers summed over 6 seeds: weakest {}, first {}, strongest {}",
        sums[0], sums[1], sums[2]
    );
    assert!(sums[0] <= sums[1] && sums[0] <= sums[2], "{sums:?}");
}

#[test]
fn restarts_never_add_layers_and_keep_every_layer_acyclic() {
    // The paper's setting scaled down: 16-port switches with 4 endpoints, two links per switch.
    let mut sums = [0u32; 2];
    for seed in 0..6 {
        let topo = random(24, 16, 4, 48, seed);
        let paper = layers_needed(&topo, "dfsssp", CycleHeuristic::Weakest, false);
        let opts = |restarts| EngineOptions {
            balance: Some(false),
            restarts,
            ..Default::default()
        };
        let f = route_with(&topo, "dfsssp", &req(64), &opts(None)).unwrap();
        // The same layers whatever the number of threads running the restarts.
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let again = pool.install(|| route_with(&topo, "dfsssp", &req(64), &opts(None)));
            assert_eq!(
                f.path_sl,
                again.unwrap().path_sl,
                "seed {seed}, {threads} threads"
            );
        }
        assert!(
            f.routing_sls <= paper,
            "seed {seed}: {} > {paper}",
            f.routing_sls
        );
        let r = cdg::verify(&topo, &f).unwrap();
        assert!(r.deadlock_free, "seed {seed}: {:?}", r.cycle);
        assert!(r.per_vl.iter().all(|v| v.acyclic));
        // Every layer is used: the count is the number of distinct path SLs.
        let mut used = [false; 256];
        for &sl in &f.path_sl {
            used[sl as usize] = true;
        }
        assert_eq!(used.iter().filter(|&&u| u).count(), f.routing_sls as usize);
        // With balancing, the same layers spread over 8 VLs stay deadlock-free.
        if f.routing_sls <= 8 {
            let b = route_with(&topo, "dfsssp", &req(8), &EngineOptions::default()).unwrap();
            assert!(cdg::verify(&topo, &b).unwrap().deadlock_free);
        }
        sums[0] += paper as u32;
        sums[1] += f.routing_sls as u32;
    }
    eprintln!(
        "layers over 6 seeds: paper's algorithm {}, with restarts {}",
        sums[0], sums[1]
    );
    assert!(
        sums[1] < sums[0],
        "restarts should save layers somewhere: {sums:?}"
    );
}

#[test]
fn updn_falls_back_when_the_min_hop_roots_split_the_fabric() {
    // 324 leaves with 12 or 13 endpoints: leaves whose 17 siblings hold fewer than 5 % of the
    // endpoints pass OpenSM's root rule beside the 81 spines, and roots at two heights leave
    // some leaf pairs without a legal path. The engine must fall back to one root and route.
    let topo =
        flitsim_topology::generators::from_spec("xgft:h=2,m=18,18,w=9,9,total_endpoints=4096")
            .unwrap();
    let f = route(&topo, "updn", &req(1)).unwrap();
    assert!(cdg::verify(&topo, &f).unwrap().deadlock_free);
    // On the plain fat tree the rule's roots are the spines, all at level 0.
    let tree = generators::kary_ntree(4, 3, 1).unwrap();
    let level = UpDownEngine::default().levels(&tree).unwrap();
    assert_eq!(level.iter().filter(|&&l| l == 0).count(), 16);
}

#[test]
fn ftree_routes_a_tree_with_a_missing_link() {
    let full = generators::kary_ntree(4, 2, 1).unwrap();
    // Drop the link between leaf 0 and its first parent.
    let links: Vec<Link> = full
        .links()
        .iter()
        .copied()
        .filter(|l| {
            !matches!(
                (l.a.node, l.b.node),
                (NodeId::Switch(0), NodeId::Switch(4)) | (NodeId::Switch(4), NodeId::Switch(0))
            )
        })
        .collect();
    assert_eq!(links.len(), full.links().len() - 1);
    let topo = Topology::new(
        "degraded",
        full.shape().clone(),
        full.switches().to_vec(),
        full.endpoints().to_vec(),
        links,
    )
    .unwrap();
    assert!(route(&topo, "dmodk", &req(1)).is_err());
    let f = route(&topo, "ftree", &req(1)).unwrap();
    let dist = distances(&topo);
    for (s, d, p) in all_paths(&topo, &f) {
        assert_eq!(
            p.len() as u32 - 1,
            dist[home(&topo, s) as usize][home(&topo, d) as usize]
        );
    }
    assert!(cdg::verify(&topo, &f).unwrap().deadlock_free);
}

/// DFSSSP on 4096 endpoints: a random 256-switch network (32 ports, 16 endpoints each, 512
/// and 1024 inter-switch links) and a 16-ary 3-tree, with InfiniBand's 16 VLs.
#[test]
#[ignore = "timing; run in release"]
fn dfsssp_on_4096_endpoints_is_fast() {
    let topos = [
        random(256, 32, 16, 512, 1),
        random(256, 32, 16, 1024, 1),
        generators::kary_ntree(16, 3, 1).unwrap(),
    ];
    for topo in &topos {
        for (name, online) in [
            ("sssp", false),
            ("dfsssp", false),
            ("dfsssp", true),
            ("lash", false),
            ("updn", false),
            ("minhop", false),
        ] {
            let t = Instant::now();
            let opts = layered(CycleHeuristic::Weakest, online, true);
            let f = route_with(topo, name, &req(16), &opts);
            let name = if online { "dfsssp-online" } else { name };
            let dt = t.elapsed();
            match f {
                Ok(f) => {
                    eprintln!(
                        "{}: {name} {:.2} s, {} path SLs",
                        topo.name(),
                        dt.as_secs_f64(),
                        f.routing_sls
                    );
                    if name == "dfsssp" {
                        assert!(dt.as_secs() < 60);
                    }
                }
                Err(e) => eprintln!("{}: {name} {:.2} s: {e}", topo.name(), dt.as_secs_f64()),
            }
        }
    }
}

/// The paper's random setting (Section IV): 64 switches with 32 ports, 16 endpoints each
/// (1024 endpoints), 128 inter-switch links; layers needed by DFSSSP per heuristic, online,
/// and by LASH.
#[test]
#[ignore = "experiment; run in release with --nocapture"]
fn paper_random_setting_layer_counts() {
    let mut rows = Vec::new();
    for seed in 0..10 {
        let topo = random(64, 32, 16, 128, seed);
        let t = Instant::now();
        let w = layers_needed(&topo, "dfsssp", CycleHeuristic::Weakest, false);
        let tw = t.elapsed().as_secs_f64();
        let fi = layers_needed(&topo, "dfsssp", CycleHeuristic::First, false);
        let st = layers_needed(&topo, "dfsssp", CycleHeuristic::Strongest, false);
        let t = Instant::now();
        let on = layers_needed(&topo, "dfsssp", CycleHeuristic::Weakest, true);
        let ton = t.elapsed().as_secs_f64();
        let la = layers_needed(&topo, "lash", CycleHeuristic::Weakest, false);
        eprintln!(
            "seed {seed}: weakest {w} ({tw:.2} s), first {fi}, strongest {st}, online {on} ({ton:.2} s), lash {la}"
        );
        rows.push([w, fi, st, on, la]);
    }
    for (i, name) in ["weakest", "first", "strongest", "online", "lash"]
        .iter()
        .enumerate()
    {
        let v: Vec<u8> = rows.iter().map(|r| r[i]).collect();
        eprintln!(
            "{name}: min {} max {} mean {:.2}",
            v.iter().min().unwrap(),
            v.iter().max().unwrap(),
            v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64
        );
    }
}
