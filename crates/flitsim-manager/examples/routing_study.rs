//! Measurements for `docs/validation/routing.md`: virtual layers, effective bisection bandwidth
//! and routing time of flitsim's engines in the settings of Domke, Hoefler & Nagel,
//! "Deadlock-Free Oblivious Routing for Arbitrary Topologies" (IPDPS 2011), and the
//! effective bisection bandwidth of OpenSM's forwarding tables.
//!
//! ```text
//! cargo run --release -p flitsim-manager --example routing_study -- <mode> [--key value …]
//! ```
//!
//! | mode | writes | what |
//! |---|---|---|
//! | `fig9` | `fig9.csv`, `fig9_summary.csv` | VLs of DFSSSP and LASH on random 128 × 32-port switch networks (Fig. 9) |
//! | `heuristics` | `heuristics.csv` | DFSSSP's VLs per cycle-breaking heuristic on 64-switch random networks (§IV-C) |
//! | `ebb` | `ebb.csv` (or `--name`) | eBB, VLs and routing time of every engine on Table I networks and random ones, or on `--files` |
//! | `scale` | stdout | routing time of one engine on one fabric (run under `/usr/bin/time`) |
//! | `opensm-topos` | `*.topo` | ibnetdiscover files for OpenSM / ibsim |
//! | `opensm-ebb` | `opensm_ebb.csv` (appends) | eBB of an OpenSM `opensm-lfts.dump` on its topology file |
//!
//! Common options: `--out DIR` (default `target/routing-study`). Every mode prints its
//! options so that a run can be repeated.
use flitsim_manager::routing::{route_with, CycleHeuristic, EngineOptions};
use flitsim_manager::{ebb, FabricConfig, RoutingError, RoutingRequest, NO_ROUTE};
use flitsim_topology::generators::{self, RandomParams};
use flitsim_topology::{
    Endpoint, Link, NodeId, PortNum, PortRef, Shape, Switch, SwitchId, Topology,
};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

/// `--key value` options after the mode.
struct Args {
    values: BTreeMap<String, String>,
}

impl Args {
    fn parse(raw: &[String]) -> Res<Self> {
        let mut values = BTreeMap::new();
        let mut it = raw.iter();
        while let Some(k) = it.next() {
            let key = k
                .strip_prefix("--")
                .ok_or_else(|| format!("expected --option, got '{k}'"))?;
            let v = it.next().ok_or_else(|| format!("--{key} needs a value"))?;
            values.insert(key.to_string(), v.clone());
        }
        Ok(Args { values })
    }

    fn str_or(&self, key: &str, default: &str) -> String {
        self.values
            .get(key)
            .cloned()
            .unwrap_or_else(|| default.to_string())
    }

    fn num<T: std::str::FromStr>(&self, key: &str, default: T) -> Res<T> {
        match self.values.get(key) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("--{key}: '{v}' is not a number").into()),
        }
    }

    fn list<T: std::str::FromStr>(&self, key: &str, default: &str) -> Res<Vec<T>> {
        self.str_or(key, default)
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.trim()
                    .parse()
                    .map_err(|_| format!("--{key}: '{s}' is not valid").into())
            })
            .collect()
    }

    fn out_dir(&self) -> Res<PathBuf> {
        let dir = PathBuf::from(self.str_or("out", "target/routing-study"));
        std::fs::create_dir_all(&dir)?;
        Ok(dir)
    }

    /// Rejects options the mode does not know.
    fn only(&self, known: &[&str]) -> Res<()> {
        for k in self.values.keys() {
            if k != "out" && !known.contains(&k.as_str()) {
                return Err(format!(
                    "unknown option --{k} (known: --out, --{})",
                    known.join(", --")
                )
                .into());
            }
        }
        Ok(())
    }
}

const USAGE: &str = "usage: routing_study <mode> [--out DIR] [options]
modes:
  fig9        [--topos 100] [--links 128,160,...] [--vls 16] [--first-seed 1]
  heuristics  [--seeds 20] [--vls 16] [--first-seed 1]
  ebb         [--patterns 200] [--seed 1] [--families xgft,kautz,kary-ntree,random]
              [--max-endpoints 6000] [--engines minhop,...] [--files a.topo,b.topo] [--name ebb.csv]
              [--skip TOPOLOGY:ENGINE,...] [--vls 8]
  scale       [--topology SPEC|PRESET] [--engine dfsssp] [--ebb-patterns 0]
  opensm-topos
  opensm-ebb  --topo FILE --lfts FILE --label NAME [--patterns 200] [--seed 1]";

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some(mode) = argv.first() else {
        eprintln!("{USAGE}");
        std::process::exit(2);
    };
    let result = Args::parse(&argv[1..]).and_then(|args| match mode.as_str() {
        "fig9" => fig9(&args),
        "heuristics" => heuristics(&args),
        "ebb" => ebb_mode(&args),
        "scale" => scale(&args),
        "opensm-topos" => opensm_topos(&args),
        "opensm-ebb" => opensm_ebb(&args),
        _ => Err(format!("unknown mode '{mode}'\n{USAGE}").into()),
    });
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

// ---------------------------------------------------------------------------------------------
// Routing with layer counting
// ---------------------------------------------------------------------------------------------

/// A routed fabric, how many virtual layers (VLs per class) it uses and how long routing took.
struct Routed {
    fabric: FabricConfig,
    /// Distinct path SLs in the tables: the number of virtual layers (1 for single-layer
    /// engines).
    layers: usize,
    /// Wall time of the successful `route_with` call.
    seconds: f64,
}

/// Distinct path SLs of `fabric`. With layer balancing off, a layered engine's path SL is its
/// layer, so this is the number of layers it needed.
fn distinct_path_sls(fabric: &FabricConfig) -> usize {
    if fabric.routing_sls <= 1 {
        return 1;
    }
    let mut seen = [false; 256];
    for &sl in &fabric.path_sl {
        seen[sl as usize] = true;
    }
    seen.iter().filter(|&&b| b).count()
}

/// Routes with one traffic class and layer balancing off (so that the path SL is the layer).
/// `vls` is the VL budget; when a layered engine needs more, it is routed again with 255 VLs
/// so that the count is still known (the caller compares it with `vls`).
/// `restarts` is passed to `dfsssp` (`None`: its default).
fn route_counting(
    topo: &Topology,
    engine: &str,
    vls: u8,
    heuristic: CycleHeuristic,
    restarts: Option<u32>,
) -> Result<Routed, RoutingError> {
    let opts = EngineOptions {
        heuristic,
        balance: Some(false),
        restarts,
        ..EngineOptions::default()
    };
    let attempt = |vls: u8| {
        let t = Instant::now();
        let f = route_with(topo, engine, &RoutingRequest { vls, classes: 1 }, &opts)?;
        Ok::<_, RoutingError>((f, t.elapsed().as_secs_f64()))
    };
    let (fabric, seconds) = match attempt(vls) {
        Err(RoutingError::NotEnoughVls(_)) if vls < u8::MAX => attempt(u8::MAX)?,
        other => other?,
    };
    let layers = distinct_path_sls(&fabric);
    debug_assert_eq!(layers, fabric.routing_sls as usize);
    Ok(Routed {
        fabric,
        layers,
        seconds,
    })
}

fn write_file(path: &Path, text: &str) -> Res<()> {
    std::fs::write(path, text)?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

fn mean_min_max(xs: &[usize]) -> (f64, usize, usize) {
    let mean = xs.iter().sum::<usize>() as f64 / xs.len().max(1) as f64;
    let min = xs.iter().copied().min().unwrap_or(0);
    let max = xs.iter().copied().max().unwrap_or(0);
    (mean, min, max)
}

// ---------------------------------------------------------------------------------------------
// fig9: VLs on random networks of 128 32-port switches, 16 endpoints each
// ---------------------------------------------------------------------------------------------

fn fig9(args: &Args) -> Res<()> {
    args.only(&["topos", "links", "vls", "first-seed"])?;
    let topos: u64 = args.num("topos", 100)?;
    let first: u64 = args.num("first-seed", 1)?;
    let links: Vec<u32> = args.list("links", "128,160,192,224,256,320,384,512,640,768,896")?;
    let vls: u8 = args.num("vls", 16)?;
    let out = args.out_dir()?;
    eprintln!("fig9: topos={topos} first-seed={first} links={links:?} vls={vls}");
    let mut raw = String::from("links,seed,engine,layers,fits,route_s\n");
    let mut summary =
        String::from("links,engine,topologies,mean,min,max,over_budget,mean_route_s\n");
    for &l in &links {
        let mut per_engine: BTreeMap<&str, (Vec<usize>, f64)> = BTreeMap::new();
        for seed in first..first + topos {
            let topo = generators::random(&RandomParams {
                switches: 128,
                ports: 32,
                endpoints_per_switch: 16,
                links: l,
                multi_links: false,
                latency: 1,
                seed,
            })?;
            // The paper's Algorithm 2 alone, flitsim's default (with first-fit restarts), LASH.
            for (engine, name, restarts) in [
                ("dfsssp-paper", "dfsssp", Some(0)),
                ("dfsssp", "dfsssp", None),
                ("lash", "lash", None),
            ] {
                let r = route_counting(&topo, name, vls, CycleHeuristic::Weakest, restarts)?;
                let fits = r.layers <= vls as usize;
                writeln!(
                    raw,
                    "{l},{seed},{engine},{},{fits},{:.4}",
                    r.layers, r.seconds
                )?;
                let e = per_engine.entry(engine).or_default();
                e.0.push(r.layers);
                e.1 += r.seconds;
            }
        }
        for (engine, (layers, secs)) in &per_engine {
            let (mean, min, max) = mean_min_max(layers);
            let over = layers.iter().filter(|&&x| x > vls as usize).count();
            let line = format!(
                "{l},{engine},{},{mean:.3},{min},{max},{over},{:.4}",
                layers.len(),
                secs / layers.len() as f64
            );
            eprintln!("{line}");
            writeln!(summary, "{line}")?;
        }
    }
    write_file(&out.join("fig9.csv"), &raw)?;
    write_file(&out.join("fig9_summary.csv"), &summary)
}

// ---------------------------------------------------------------------------------------------
// heuristics: 64 switches, 1024 endpoints, 128 links (paper §IV-C)
// ---------------------------------------------------------------------------------------------

fn heuristics(args: &Args) -> Res<()> {
    args.only(&["seeds", "vls", "first-seed"])?;
    let seeds: u64 = args.num("seeds", 20)?;
    let first: u64 = args.num("first-seed", 1)?;
    let vls: u8 = args.num("vls", 16)?;
    let out = args.out_dir()?;
    eprintln!("heuristics: seeds={seeds} first-seed={first} vls={vls}");
    // The paper's three heuristics without restarts, then flitsim's default and LASH.
    let runs: [(&str, &str, CycleHeuristic, Option<u32>); 5] = [
        ("dfsssp-weakest", "dfsssp", CycleHeuristic::Weakest, Some(0)),
        ("dfsssp-first", "dfsssp", CycleHeuristic::First, Some(0)),
        (
            "dfsssp-strongest",
            "dfsssp",
            CycleHeuristic::Strongest,
            Some(0),
        ),
        ("dfsssp-default", "dfsssp", CycleHeuristic::Weakest, None),
        ("lash", "lash", CycleHeuristic::Weakest, None),
    ];
    let mut raw = String::from("seed,variant,layers,fits,route_s\n");
    let mut all: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for seed in first..first + seeds {
        let topo = generators::random(&RandomParams {
            switches: 64,
            ports: 32,
            endpoints_per_switch: 16,
            links: 128,
            multi_links: false,
            latency: 1,
            seed,
        })?;
        for (label, engine, h, restarts) in runs {
            let r = route_counting(&topo, engine, vls, h, restarts)?;
            writeln!(
                raw,
                "{seed},{label},{},{},{:.4}",
                r.layers,
                r.layers <= vls as usize,
                r.seconds
            )?;
            all.entry(label).or_default().push(r.layers);
        }
    }
    for (label, xs) in &all {
        let (mean, min, max) = mean_min_max(xs);
        eprintln!("{label:18} mean {mean:.2} min {min} max {max}");
    }
    write_file(&out.join("heuristics.csv"), &raw)
}

// ---------------------------------------------------------------------------------------------
// ebb: effective bisection bandwidth of every engine
// ---------------------------------------------------------------------------------------------

const ALL_ENGINES: &str = "minhop,updn,sssp,dfsssp,lash,ftree,dmodk,dor";

/// Random networks with the endpoint counts of Table I: `E / 16` switches of 32 ports with
/// 16 endpoints each, twice as many inter-switch links as switches (capped at a complete
/// graph), seed 1.
fn random_rows() -> Vec<(String, String)> {
    [64u32, 128, 256, 512, 1024, 2048, 4096]
        .iter()
        .map(|&e| {
            let s = e / 16;
            let links = (2 * s).min(s * (s - 1) / 2);
            (
                format!("random-{e}"),
                format!("random:switches={s},ports=32,endpoints=16,links={links},seed=1"),
            )
        })
        .collect()
}

fn family_of(name: &str) -> &str {
    for f in ["xgft", "kautz", "kary-ntree", "random"] {
        if name.contains(f) {
            return f;
        }
    }
    "file"
}

fn ebb_mode(args: &Args) -> Res<()> {
    args.only(&[
        "patterns",
        "seed",
        "families",
        "max-endpoints",
        "engines",
        "files",
        "name",
        "vls",
        "skip",
    ])?;
    let patterns: usize = args.num("patterns", 200)?;
    let seed: u64 = args.num("seed", 1)?;
    let vls: u8 = args.num("vls", 8)?;
    let engines: Vec<String> = args.list("engines", ALL_ENGINES)?;
    let families: Vec<String> = args.list("families", "xgft,kautz,kary-ntree,random")?;
    let max_ep: usize = args.num("max-endpoints", 6000)?;
    let files: Vec<String> = args.list("files", "")?;
    let out = args.out_dir()?;
    let name = args.str_or("name", "ebb.csv");
    // `topology:engine` pairs not to route (reported as skipped).
    let skip: Vec<String> = args.list("skip", "")?;
    eprintln!(
        "ebb: patterns={patterns} seed={seed} vls={vls} engines={engines:?} families={families:?} \
         max-endpoints={max_ep} files={files:?} skip={skip:?}"
    );
    // (name, topology)
    let mut topos: Vec<(String, Topology)> = Vec::new();
    if files.is_empty() {
        let mut specs = generators::table1_presets();
        specs.extend(random_rows());
        for (n, spec) in specs {
            if !families.iter().any(|f| f == family_of(&n)) {
                continue;
            }
            let t = generators::from_spec(&spec)?;
            if t.num_endpoints() <= max_ep {
                topos.push((n, t));
            }
        }
    } else {
        for f in &files {
            let p = Path::new(f);
            let n = p
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            topos.push((n, Topology::read_ib(p)?));
        }
    }
    // Written after every topology, so that a long run leaves its results so far.
    let csv_path = out.join(name);
    let mut csv = String::from(
        "topology,family,endpoints,switches,links,engine,status,layers,ebb_mean,ebb_min,ebb_max,route_s,note\n",
    );
    for (tname, topo) in &topos {
        let isl = topo
            .links()
            .iter()
            .filter(|l| matches!((l.a.node, l.b.node), (NodeId::Switch(_), NodeId::Switch(_))))
            .count();
        let head = format!(
            "{tname},{},{},{},{isl}",
            family_of(tname),
            topo.num_endpoints(),
            topo.num_switches()
        );
        for engine in &engines {
            if skip.contains(&format!("{tname}:{engine}")) {
                eprintln!("{head},{engine}: skipped (--skip)");
                writeln!(csv, "{head},{engine},skipped,,,,,,--skip")?;
                continue;
            }
            match route_counting(topo, engine, vls, CycleHeuristic::Weakest, None) {
                Ok(r) => {
                    let e = ebb::effective_bisection_bandwidth(topo, &r.fabric, patterns, seed)?;
                    // Only the layered engines need their path SLs; the others (dmodk)
                    // spread load over spare VLs but need one.
                    let layered = engine == "dfsssp" || engine == "lash";
                    let layers = if layered { r.layers } else { 1 };
                    let note = if layers > vls as usize {
                        format!("needs {layers} VLs > {vls}")
                    } else if !layered && r.layers > 1 {
                        format!("spreads over {} VLs", r.layers)
                    } else {
                        String::new()
                    };
                    let line = format!(
                        "{head},{engine},ok,{layers},{:.4},{:.4},{:.4},{:.6},{note}",
                        e.ebb_mean, e.ebb_min, e.ebb_max, r.seconds
                    );
                    eprintln!("{line}");
                    writeln!(csv, "{line}")?;
                }
                Err(err) => {
                    let msg: String = err.to_string().chars().take(100).collect();
                    let msg = msg.replace([',', '\n', '"'], " ");
                    eprintln!("{head},{engine}: n/a ({msg})");
                    writeln!(csv, "{head},{engine},n/a,,,,,,{msg}")?;
                }
            }
        }
        std::fs::write(&csv_path, &csv)?;
    }
    write_file(&csv_path, &csv)
}

// ---------------------------------------------------------------------------------------------
// scale: one engine on one fabric
// ---------------------------------------------------------------------------------------------

fn topology_by_name(name: &str) -> Res<Topology> {
    if let Some((_, spec)) = generators::table1_presets()
        .into_iter()
        .chain(random_rows())
        .find(|(n, _)| n == name)
    {
        return Ok(generators::from_spec(&spec)?);
    }
    if name.ends_with(".topo") || name.ends_with(".net") {
        return Ok(Topology::read_ib(Path::new(name))?);
    }
    Ok(generators::from_spec(name)?)
}

fn scale(args: &Args) -> Res<()> {
    args.only(&["topology", "engine", "ebb-patterns"])?;
    let tname = args.str_or("topology", "random-4096");
    let engine = args.str_or("engine", "dfsssp");
    let patterns: usize = args.num("ebb-patterns", 0)?;
    let t0 = Instant::now();
    let topo = topology_by_name(&tname)?;
    let build = t0.elapsed().as_secs_f64();
    // Default options (balancing on for dfsssp), 8 VLs as on InfiniBand hardware.
    let t1 = Instant::now();
    let fabric = route_with(
        &topo,
        &engine,
        &RoutingRequest { vls: 8, classes: 1 },
        &EngineOptions::default(),
    );
    let secs = t1.elapsed().as_secs_f64();
    let fabric = match fabric {
        Ok(f) => f,
        Err(RoutingError::NotEnoughVls(m)) => {
            println!("{tname}: {engine} does not fit 8 VLs ({m}); routing with 255 to count");
            route_with(
                &topo,
                &engine,
                &RoutingRequest {
                    vls: u8::MAX,
                    classes: 1,
                },
                &EngineOptions {
                    balance: Some(false),
                    ..EngineOptions::default()
                },
            )?
        }
        Err(e) => return Err(e.into()),
    };
    println!(
        "{tname}: {} endpoints, {} switches, {} links; built in {build:.2} s",
        topo.num_endpoints(),
        topo.num_switches(),
        topo.links().len()
    );
    println!(
        "{engine}: routed in {secs:.2} s (first attempt, 8 VLs); routing_sls {}, num_vls {}",
        fabric.routing_sls, fabric.num_vls
    );
    if patterns > 0 {
        let e = ebb::effective_bisection_bandwidth(&topo, &fabric, patterns, 1)?;
        println!("eBB ({patterns} patterns, seed 1): {:.4}", e.ebb_mean);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// opensm-topos: topology files for OpenSM under ibsim
// ---------------------------------------------------------------------------------------------

/// The 3-level fat tree of 36-port switches with 1296 endpoints: 4 pods of 18 leaf and 18
/// middle switches (leaf: 18 endpoints, one link to each middle switch of its pod), and 36
/// spine switches; middle switch `j` has one link to each of the 18 spines of parity `j mod 2`,
/// so every spine has 9 links into every pod. 180 switches, full bisection, no parallel links.
fn fat_tree_1296() -> Res<Topology> {
    const PODS: u32 = 4;
    const HALF: u32 = 18;
    let leaf = |p: u32, i: u32| p * HALF + i;
    let middle = |p: u32, j: u32| PODS * HALF + p * HALF + j;
    let spine = |s: u32| 2 * PODS * HALF + s;
    let nsw = 2 * PODS * HALF + 2 * HALF;
    let switches: Vec<Switch> = (0..nsw)
        .map(|s| {
            let name = if s < PODS * HALF {
                format!("leaf-{}-{}", s / HALF, s % HALF)
            } else if s < 2 * PODS * HALF {
                let m = s - PODS * HALF;
                format!("middle-{}-{}", m / HALF, m % HALF)
            } else {
                format!("spine-{}", s - 2 * PODS * HALF)
            };
            Switch {
                name,
                ports: 36,
                guid: None,
                lid: None,
            }
        })
        .collect();
    let sw = |s: u32, port: u32| PortRef {
        node: NodeId::Switch(s),
        port: port as PortNum,
    };
    let link = |a: PortRef, b: PortRef| Link {
        a,
        b,
        latency: 1,
        width: 1,
    };
    let mut endpoints = Vec::new();
    let mut links = Vec::new();
    for p in 0..PODS {
        for i in 0..HALF {
            for k in 0..HALF {
                let e = endpoints.len() as u32;
                endpoints.push(Endpoint {
                    name: format!("node-{e}"),
                    guid: None,
                    lid: None,
                });
                links.push(link(
                    PortRef {
                        node: NodeId::Endpoint(e),
                        port: 0,
                    },
                    sw(leaf(p, i), k),
                ));
            }
            // Leaf i, up port 18 + j → middle j, down port i.
            for j in 0..HALF {
                links.push(link(sw(leaf(p, i), HALF + j), sw(middle(p, j), i)));
            }
        }
        // Middle j, up port 18 + k → spine 2k + (j mod 2), port p·9 + j / 2.
        for j in 0..HALF {
            for k in 0..HALF {
                let s = 2 * k + j % 2;
                links.push(link(
                    sw(middle(p, j), HALF + k),
                    sw(spine(s), p * (HALF / 2) + j / 2),
                ));
            }
        }
    }
    let mut t = Topology::new(
        "fat-tree-3level-1296",
        Shape::Irregular,
        switches,
        endpoints,
        links,
    )?;
    t.assign_guids_and_lids();
    Ok(t)
}

/// Topologies handed to OpenSM: the 1296-endpoint fat tree and random networks of 128
/// 32-port switches with 16 endpoints each, with 256 and 512 inter-switch links (seed 1).
fn opensm_topologies() -> Res<Vec<(String, Topology)>> {
    let mut out = vec![("fattree-1296".to_string(), fat_tree_1296()?)];
    for links in [256, 512] {
        let mut random = generators::random(&RandomParams {
            switches: 128,
            ports: 32,
            endpoints_per_switch: 16,
            links,
            multi_links: false,
            latency: 1,
            seed: 1,
        })?;
        random.assign_guids_and_lids();
        out.push((format!("random-128x32-{links}"), random));
    }
    Ok(out)
}

fn opensm_topos(args: &Args) -> Res<()> {
    args.only(&[])?;
    let out = args.out_dir()?;
    for (name, t) in opensm_topologies()? {
        let path = out.join(format!("{name}.topo"));
        write_file(&path, &t.to_ibnetdiscover())?;
        // The file must read back to the same fabric.
        let back = Topology::read_ib(&path)?;
        if back.num_endpoints() != t.num_endpoints()
            || back.num_switches() != t.num_switches()
            || back.links().len() != t.links().len()
        {
            return Err(format!("{} does not read back to the same fabric", path.display()).into());
        }
        eprintln!(
            "{name}: {} switches, {} endpoints, {} links",
            t.num_switches(),
            t.num_endpoints(),
            t.links().len()
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// opensm-ebb: eBB of OpenSM's LFTs
// ---------------------------------------------------------------------------------------------

/// Reads OpenSM's `opensm-lfts.dump` into endpoint-destination LFTs for `topo` (the topology
/// OpenSM routed, read from the same file). A block starts with
/// `Unicast lids [0-N] of switch Lid L guid 0x… ('…'):` and has one line per LID:
/// `0x0002 018 # Channel Adapter portguid 0x…: '…'`. Entries for switch LIDs are skipped; IB
/// port `p` is flitsim port `p − 1`.
///
/// CA LIDs are matched to endpoints through the fabric, not through GUIDs (ibsim gives a CA
/// port the GUID node GUID + port number, which need not be the port GUID of the file): the
/// endpoint of a LID is the one its attached switch forwards it to. Returns the tables and
/// the number of endpoint entries filled.
fn read_lfts_dump(topo: &Topology, text: &str) -> Res<(Vec<Vec<PortNum>>, usize)> {
    // (switch, destination LID, IB output port) of every CA entry.
    let mut entries: Vec<(SwitchId, u32, u32)> = Vec::new();
    let mut current: Option<SwitchId> = None;
    for (no, line) in text.lines().enumerate() {
        let err = |m: &str| format!("opensm-lfts.dump line {}: {m}: {line}", no + 1);
        if line.starts_with("Unicast lids") {
            let guid = line
                .split_whitespace()
                .skip_while(|w| *w != "guid")
                .nth(1)
                .ok_or_else(|| err("no switch guid"))?;
            let guid = u64::from_str_radix(guid.trim_start_matches("0x"), 16)
                .map_err(|_| err("bad switch guid"))?;
            current = Some(
                topo.switch_by_guid(guid)
                    .ok_or_else(|| err("switch guid not in the topology"))?,
            );
            continue;
        }
        if !line.starts_with("0x") || !line.contains("Channel Adapter") {
            continue;
        }
        let s = current.ok_or_else(|| err("entry before any switch header"))?;
        let mut words = line.split_whitespace();
        let lid = words
            .next()
            .and_then(|l| u32::from_str_radix(l.trim_start_matches("0x"), 16).ok())
            .ok_or_else(|| err("bad LID"))?;
        let port: u32 = words
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| err("bad port"))?;
        if port == 0 {
            return Err(err("a switch forwards a CA LID to its management port").into());
        }
        entries.push((s, lid, port));
    }
    let mut endpoint_of: BTreeMap<u32, u32> = BTreeMap::new();
    for &(s, lid, port) in &entries {
        if let Some(NodeId::Endpoint(e)) = topo
            .switch_peer(s, (port - 1) as PortNum)
            .map(|p| p.remote.node)
        {
            if let Some(old) = endpoint_of.insert(lid, e) {
                if old != e {
                    return Err(format!("LID {lid:#x} is delivered to two endpoints").into());
                }
            }
        }
    }
    if endpoint_of.len() != topo.num_endpoints() {
        return Err(format!(
            "the dump delivers {} CA LIDs to endpoints; the topology has {} endpoints",
            endpoint_of.len(),
            topo.num_endpoints()
        )
        .into());
    }
    let mut lft = vec![vec![NO_ROUTE; topo.num_endpoints()]; topo.num_switches()];
    for &(s, lid, port) in &entries {
        let e = *endpoint_of
            .get(&lid)
            .ok_or_else(|| format!("LID {lid:#x} is never delivered to an endpoint"))?;
        lft[s.0 as usize][e as usize] = (port - 1) as PortNum;
    }
    Ok((lft, entries.len()))
}

fn opensm_ebb(args: &Args) -> Res<()> {
    args.only(&["topo", "lfts", "label", "patterns", "seed"])?;
    let topo_path = args.str_or("topo", "");
    let lfts_path = args.str_or("lfts", "");
    if topo_path.is_empty() || lfts_path.is_empty() {
        return Err("opensm-ebb needs --topo FILE and --lfts FILE".into());
    }
    let label = args.str_or("label", "opensm");
    let patterns: usize = args.num("patterns", 200)?;
    let seed: u64 = args.num("seed", 1)?;
    let out = args.out_dir()?;
    let topo = Topology::read_ib(Path::new(&topo_path))?;
    let (lft, filled) = read_lfts_dump(&topo, &std::fs::read_to_string(&lfts_path)?)?;
    let expected = topo.num_switches() * topo.num_endpoints();
    // Endpoint LFTs with one VL and no path SLs: the estimator reads only the LFTs.
    let fabric = FabricConfig {
        alt_paths: Vec::new(),
        engine: label.clone(),
        num_vls: 1,
        classes: 1,
        routing_sls: 1,
        layers: 0,
        lft,
        path_sl: Vec::new(),
        sl2vl: FabricConfig::build_sl2vl(&topo, 1, |_, _, _, _| 0),
        nic_sl2vl: vec![0],
        ports: FabricConfig::port_counts(&topo),
        rule: None,
    };
    let e = ebb::effective_bisection_bandwidth(&topo, &fabric, patterns, seed)?;
    let line = format!(
        "{label},{},{},{filled},{expected},{:.4},{:.4},{:.4}",
        Path::new(&topo_path).display(),
        topo.num_endpoints(),
        e.ebb_mean,
        e.ebb_min,
        e.ebb_max
    );
    println!("{line}");
    let csv = out.join("opensm_ebb.csv");
    let mut text = std::fs::read_to_string(&csv).unwrap_or_default();
    if text.is_empty() {
        text.push_str(
            "label,topo,endpoints,lft_entries,expected_entries,ebb_mean,ebb_min,ebb_max\n",
        );
    }
    // Replace an earlier row with the same label.
    let mut kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(&format!("{label},")))
        .collect();
    kept.push(&line);
    write_file(&csv, &(kept.join("\n") + "\n"))?;
    Ok(())
}
