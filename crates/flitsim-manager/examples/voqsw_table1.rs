//! Table 1 of the VOQsw paper (Gómez et al.): SLs for full VOQ and % of VOQ with 8 and 4 SLs
//! on random networks of 8, 16, 32 and 64 switches (8 ports: 4 hosts, 4 links; up*/down*).
//!
//! ```text
//! cargo run --release -p flitsim-manager --example voqsw_table1 -- [networks per size] [sizes…]
//! ```
//!
//! `VOQSW_ALL_X=1` also prints, per network, the SLs the paper's one-by-one procedure needs to
//! reach full VOQ (the maximum over `x` of Figure 5's count, [`sls_by_x`]).
//!
//! Seeds the random generator cannot complete (it sometimes fails to place the last links of
//! an exactly regular network) are skipped and counted; seeds are taken from 0 upwards.
use flitsim_manager::qos::voqsw::{analyse, sls_by_x, tuple_set, VoqswSls};
use flitsim_manager::{route, RoutingRequest};
use flitsim_topology::generators::{random, RandomParams};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let per_size: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(10);
    let sizes: Vec<u32> = if args.len() > 1 {
        args[1..].iter().filter_map(|a| a.parse().ok()).collect()
    } else {
        vec![8, 16, 32, 64]
    };
    println!(
        "size seed tuples sls_full pct8 pct4 t_full_s t8_s t4_s  (skipped seeds listed per size)"
    );
    for &n in &sizes {
        let (mut done, mut seed, mut skipped) = (0, 0u64, Vec::new());
        let mut sums = [0f64; 6];
        let (mut kmin, mut kmax) = (usize::MAX, 0);
        let mut tmax = [0f64; 3];
        while done < per_size {
            let topo = match random(&RandomParams {
                switches: n,
                ports: 8,
                endpoints_per_switch: 4,
                links: 2 * n,
                multi_links: false,
                latency: 1,
                seed,
            }) {
                Ok(t) => t,
                Err(_) => {
                    skipped.push(seed);
                    seed += 1;
                    continue;
                }
            };
            let f = route(&topo, "updn", &RoutingRequest { vls: 1, classes: 1 }).unwrap();
            let t0 = Instant::now();
            let full = analyse(&topo, &f, VoqswSls::Full).unwrap();
            let t_full = t0.elapsed().as_secs_f64();
            let t0 = Instant::now();
            let v8 = analyse(&topo, &f, VoqswSls::Limit(8)).unwrap();
            let t8 = t0.elapsed().as_secs_f64();
            let t0 = Instant::now();
            let v4 = analyse(&topo, &f, VoqswSls::Limit(4)).unwrap();
            let t4 = t0.elapsed().as_secs_f64();
            let k = full.sls_for_full.unwrap_or(0);
            // With VOQSW_ALL_X set: the SLs the one-by-one procedure needs to reach full VOQ
            // (the maximum over x), by the incremental all-x search (≈ 45 s at 64 switches).
            if std::env::var_os("VOQSW_ALL_X").is_some() {
                let t0 = Instant::now();
                let set = tuple_set(&topo, &f).unwrap();
                let kmax_x = sls_by_x(&set, None).into_iter().max().unwrap_or(1);
                let t_all = t0.elapsed().as_secs_f64();
                println!("  all-x: max over x {kmax_x} (full run {k}), {t_all:.3} s");
            }
            println!(
                "{n} {seed} {} {k} {:.1} {:.1} {t_full:.3} {t8:.3} {t4:.3} w8 {:.1} w4 {:.1}",
                full.tuples(),
                v8.percent(),
                v4.percent(),
                v8.weighted_percent(),
                v4.weighted_percent()
            );
            for (s, v) in sums.iter_mut().zip([
                full.tuples() as f64,
                k as f64,
                v8.percent(),
                v4.percent(),
                v8.weighted_percent(),
                v4.weighted_percent(),
            ]) {
                *s += v;
            }
            (kmin, kmax) = (kmin.min(k), kmax.max(k));
            for (m, t) in tmax.iter_mut().zip([t_full, t8, t4]) {
                *m = m.max(t);
            }
            done += 1;
            seed += 1;
        }
        let d = done as f64;
        println!(
            "# {n} switches, {done} networks: mean tuples {:.0}, SLs for full VOQ {:.1} \
             ({kmin}–{kmax}), VOQ with 8 SLs {:.1} % of 4-tuples / {:.1} % of hops, with 4 SLs \
             {:.1} % / {:.1} %; slowest full/8/4: {:.3}/{:.3}/{:.3} s; skipped seeds {skipped:?}",
            sums[0] / d,
            sums[1] / d,
            sums[2] / d,
            sums[4] / d,
            sums[3] / d,
            sums[5] / d,
            tmax[0],
            tmax[1],
            tmax[2]
        );
    }
}
