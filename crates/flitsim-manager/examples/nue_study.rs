//! Measurements of Nue routing for `docs/validation/routing.md` ("Nue"): on one topology,
//! Nue within each VL budget and, for comparison, other engines with a larger budget; for
//! each the VLs used, the routing time, the independent CDG verdict and the eBB.
//!
//! ```text
//! cargo run --release -p flitsim-manager --example nue_study -- TOPOLOGY \
//!     [--vls 1,2,4,8] [--compare dfsssp,lash] [--compare-vls 32] [--ebb-patterns 200]
//! ```
//!
//! `TOPOLOGY` is a generator spec (`random:…`, `kautz:…`, `torus:…`, …). The compared engines
//! run with their default options except balancing off (so their `layers` is what they need).
//! Output: one CSV line per run,
//! `topology,engine,vl_budget,layers,route_s,deadlock_free,ebb,impasses,escape_switches,blocked`.
use flitsim_manager::routing::{route_with, EngineOptions, NueEngine};
use flitsim_manager::{cdg, ebb, RoutingRequest};
use flitsim_topology::generators;
use std::time::Instant;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn list<T: std::str::FromStr>(s: &str) -> Res<Vec<T>> {
    s.split(',')
        .filter(|x| !x.is_empty())
        .map(|x| {
            x.trim()
                .parse::<T>()
                .map_err(|_| format!("bad value '{x}'").into())
        })
        .collect()
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(spec) = args.first().cloned() else {
        return Err(
            "usage: nue_study TOPOLOGY [--vls 1,2,4,8] [--compare dfsssp,lash] \
                    [--compare-vls 32] [--ebb-patterns 200]"
                .into(),
        );
    };
    let mut vls = "1,2,4,8".to_string();
    let mut compare = "dfsssp,lash".to_string();
    let mut compare_vls = 32u8;
    let mut patterns = 200usize;
    let mut it = args[1..].iter();
    while let Some(k) = it.next() {
        let v = it.next().ok_or(format!("{k} needs a value"))?;
        match k.as_str() {
            "--vls" => vls = v.clone(),
            "--compare" => compare = v.clone(),
            "--compare-vls" => compare_vls = v.parse()?,
            "--ebb-patterns" => patterns = v.parse()?,
            _ => return Err(format!("unknown option {k}").into()),
        }
    }
    let topo = generators::from_spec(&spec)?;
    eprintln!(
        "{spec}: {} switches, {} endpoints, {} links",
        topo.num_switches(),
        topo.num_endpoints(),
        topo.links().len()
    );
    println!("topology,engine,vl_budget,layers,route_s,deadlock_free,ebb,impasses,escape_switches,blocked");
    let ebb_of = |f: &flitsim_manager::FabricConfig| -> Res<String> {
        Ok(if patterns > 0 {
            format!(
                "{:.4}",
                ebb::effective_bisection_bandwidth(&topo, f, patterns, 1)?.ebb_mean
            )
        } else {
            String::new()
        })
    };
    for v in list::<u8>(&vls)? {
        let t = Instant::now();
        let (f, stats) =
            NueEngine::default().route_with_stats(&topo, &RoutingRequest { vls: v, classes: 1 })?;
        let secs = t.elapsed().as_secs_f64();
        let ok = cdg::verify(&topo, &f)?.deadlock_free;
        println!(
            "{spec},nue,{v},{},{secs:.3},{ok},{},{},{},{}",
            f.layers,
            ebb_of(&f)?,
            stats.fallbacks,
            stats.escape_switches,
            stats.blocked
        );
    }
    for engine in compare.split(',').filter(|e| !e.is_empty()) {
        let t = Instant::now();
        let r = route_with(
            &topo,
            engine,
            &RoutingRequest {
                vls: compare_vls,
                classes: 1,
            },
            &EngineOptions {
                balance: Some(false),
                ..EngineOptions::default()
            },
        );
        let secs = t.elapsed().as_secs_f64();
        match r {
            Ok(f) => {
                let ok = cdg::verify(&topo, &f)?.deadlock_free;
                println!(
                    "{spec},{engine},{compare_vls},{},{secs:.3},{ok},{},,,",
                    f.layers,
                    ebb_of(&f)?
                );
            }
            Err(e) => println!("{spec},{engine},{compare_vls},,{secs:.3},,,,,\"{e}\""),
        }
    }
    Ok(())
}
