//! Samplers and processes against their closed forms.
use super::*;
use crate::traffic::{stream, ComponentRng, StreamKind};

fn rng(i: u64) -> ComponentRng {
    stream(7, StreamKind::Test, i)
}

/// Sample mean and variance of `n` draws.
fn moments(n: usize, mut f: impl FnMut() -> f64) -> (f64, f64) {
    let (mut s, mut s2) = (0.0, 0.0);
    for _ in 0..n {
        let x = f();
        s += x;
        s2 += x * x;
    }
    let m = s / n as f64;
    (m, (s2 / n as f64 - m * m) * n as f64 / (n - 1) as f64)
}

/// Asserts that the sample mean is within 4 standard errors of `mean`, and the sample
/// variance within 4 standard errors of `var` (its standard error from the fourth moment
/// `m4`, or a 10 % band when none is given).
fn check(name: &str, (m, v): (f64, f64), mean: f64, var: f64, m4: Option<f64>, n: usize) {
    let se = (var / n as f64).sqrt();
    assert!(
        (m - mean).abs() <= 4.0 * se,
        "{name}: mean {m} vs {mean} (se {se})"
    );
    let vse = m4.map_or(0.025 * var, |m4| ((m4 - var * var) / n as f64).sqrt());
    assert!(
        (v - var).abs() <= 4.0 * vse,
        "{name}: variance {v} vs {var} (se {vse})"
    );
}

fn dist(d: SizeDist) -> SizeSampler {
    let c = SizeConfig::Dist(d);
    c.validate("size").unwrap();
    c.sampler()
}

#[test]
fn uniform_sizes_match_their_closed_form() {
    let s = dist(SizeDist::Uniform { min: 4, max: 20 });
    let n = 200_000;
    let mut r = rng(1);
    let got = moments(n, || s.sample(&mut r) as f64);
    let k = 17.0_f64;
    let var = (k * k - 1.0) / 12.0;
    assert_eq!(s.mean(), 12.0);
    check("uniform", got, 12.0, var, Some(9.0 / 5.0 * var * var), n);
    let mut r = rng(2);
    assert!((0..10_000).all(|_| (4..=20).contains(&s.sample(&mut r))));
}

/// Bounded Pareto: E[X^k] = α L^α (H^(k−α) − L^(k−α)) / ((k − α)(1 − (L/H)^α)).
fn pareto_moment(a: f64, l: f64, h: f64, k: f64) -> f64 {
    a * l.powf(a) * (h.powf(k - a) - l.powf(k - a)) / ((k - a) * (1.0 - (l / h).powf(a)))
}

#[test]
fn bounded_pareto_matches_its_closed_form() {
    for (a, l, h) in [(1.2, 1.0, 1000.0), (2.5, 4.0, 64.0), (0.8, 2.0, 200.0)] {
        let s = dist(SizeDist::Pareto {
            alpha: a,
            min: l,
            max: Some(h),
        });
        let m1 = pareto_moment(a, l, h, 1.0);
        let m2 = pareto_moment(a, l, h, 2.0);
        let m4 = pareto_moment(a, l, h, 4.0);
        assert!(
            (s.mean() - m1).abs() < 1e-9 * m1,
            "{a}: {} vs {m1}",
            s.mean()
        );
        let var = m2 - m1 * m1;
        let n = 400_000;
        let mut r = rng(3);
        let got = moments(n, || s.sample_real(&mut r));
        // Fourth central moment bounded by the raw one (all values ≥ 0 around the mean).
        check(&format!("pareto α={a}"), got, m1, var, Some(m4), n);
        // The rounded sizes keep the mean and the bounds.
        let mut r = rng(4);
        let mut lo = u32::MAX;
        let mut hi = 0;
        let got = moments(n, || {
            let x = s.sample(&mut r);
            lo = lo.min(x);
            hi = hi.max(x);
            x as f64
        });
        assert!(
            lo as f64 >= l && hi as f64 <= h,
            "α={a}: sizes in [{lo}, {hi}]"
        );
        let se = ((var + 0.25) / n as f64).sqrt();
        assert!(
            (got.0 - m1).abs() <= 4.0 * se,
            "α={a}: rounded mean {}",
            got.0
        );
    }
}

#[test]
fn pareto_without_max_needs_alpha_above_one() {
    let c = SizeConfig::Dist(SizeDist::Pareto {
        alpha: 1.0,
        min: 1.0,
        max: None,
    });
    let e = c.validate("traffic.class[0].size").unwrap_err();
    assert_eq!(e.key, "traffic.class[0].size.max");
    let c = SizeConfig::Dist(SizeDist::Pareto {
        alpha: 3.0,
        min: 2.0,
        max: None,
    });
    c.validate("k").unwrap();
    // Unbounded: mean α L / (α − 1) = 3.
    assert!((c.sampler().mean() - 3.0).abs() < 1e-12);
    assert_eq!(c.max_flits(), None);
}

#[test]
fn clipped_exponential_matches_its_closed_form() {
    let (m, a, b) = (20.0_f64, 4.0_f64, 60.0_f64);
    let s = dist(SizeDist::Exponential {
        mean: m,
        min: Some(a),
        max: Some(b),
    });
    // E[Y] = a + m(e^(−a/m) − e^(−b/m)); E[Y²] = a² + 2m((a+m)e^(−a/m) − (b+m)e^(−b/m)).
    let (ea, eb) = ((-a / m).exp(), (-b / m).exp());
    let m1 = a + m * (ea - eb);
    let m2 = a * a + 2.0 * m * ((a + m) * ea - (b + m) * eb);
    assert!((s.mean() - m1).abs() < 1e-12);
    let n = 400_000;
    let mut r = rng(5);
    let got = moments(n, || s.sample_real(&mut r));
    check("exponential", got, m1, m2 - m1 * m1, Some(b.powi(4)), n);
    let mut r = rng(6);
    assert!((0..20_000).all(|_| (4..=60).contains(&s.sample(&mut r))));
    // The default lower clip is 1 flit.
    let s = dist(SizeDist::Exponential {
        mean: 0.5,
        min: None,
        max: None,
    });
    let mut r = rng(7);
    assert!((0..1000).all(|_| s.sample(&mut r) >= 1));
}

#[test]
fn empirical_sizes_match_their_weights() {
    let s = dist(SizeDist::Empirical {
        sizes: vec![1, 8, 64],
        weights: vec![5.0, 3.0, 2.0],
    });
    let m1 = 0.5 + 0.3 * 8.0 + 0.2 * 64.0;
    let m2 = 0.5 + 0.3 * 64.0 + 0.2 * 4096.0;
    assert!((s.mean() - m1).abs() < 1e-12);
    let n = 200_000;
    let mut r = rng(8);
    let got = moments(n, || s.sample(&mut r) as f64);
    check("empirical", got, m1, m2 - m1 * m1, Some(64f64.powi(4)), n);
}

#[test]
fn size_errors_name_the_key() {
    let key = |d: SizeDist| SizeConfig::Dist(d).validate("s").unwrap_err().key;
    assert_eq!(key(SizeDist::Uniform { min: 5, max: 4 }), "s.max");
    assert_eq!(key(SizeDist::Uniform { min: 0, max: 4 }), "s.min");
    assert_eq!(
        key(SizeDist::Pareto {
            alpha: -1.0,
            min: 1.0,
            max: Some(2.0)
        }),
        "s.alpha"
    );
    assert_eq!(
        key(SizeDist::Pareto {
            alpha: 1.5,
            min: 8.0,
            max: Some(2.0)
        }),
        "s.max"
    );
    assert_eq!(
        key(SizeDist::Exponential {
            mean: 3.0,
            min: Some(9.0),
            max: Some(4.0)
        }),
        "s.max"
    );
    assert_eq!(
        key(SizeDist::Empirical {
            sizes: vec![1, 2],
            weights: vec![1.0]
        }),
        "s.weights"
    );
    assert_eq!(key(SizeDist::Fixed { flits: 0 }), "s.flits");
}

#[test]
fn poisson_gaps_are_exponential() {
    // rate 0.2 flits/cycle, mean size 4 → 0.05 messages/cycle: gaps of mean 20, variance 400.
    let mut a = Arrivals::new(
        Some(&ProcessConfig::Simple(SimpleProcess::Poisson)),
        SimpleProcess::Bernoulli,
        0.2,
        4.0,
    );
    let mut r = rng(9);
    a.first(&mut r);
    let n = 200_000;
    let mut prev = match &a {
        Arrivals::Poisson { acc, .. } => *acc,
        _ => unreachable!(),
    };
    let size = SizeSampler::Fixed(4);
    let mut last_cycle = 0;
    let got = moments(n, || {
        let (_, _, next) = a.fire(last_cycle, &mut r, &size, |_| 0);
        assert!(next >= last_cycle);
        last_cycle = next;
        let Arrivals::Poisson { acc, .. } = &a else {
            unreachable!()
        };
        let gap = acc - prev;
        prev = *acc;
        assert_eq!(next, acc.floor() as u64);
        gap
    });
    check(
        "poisson gaps",
        got,
        20.0,
        400.0,
        Some(9.0 * 20f64.powi(4)),
        n,
    );
}

/// Runs `sources` arrival processes of one class for `cycles` cycles and returns the flits
/// generated per cycle (summed over sources).
fn aggregate(arr: &mut [Arrivals], size: &SizeSampler, cycles: u64, seed: u64) -> Vec<f64> {
    let mut series = vec![0.0; cycles as usize];
    for (i, a) in arr.iter_mut().enumerate() {
        let mut r = rng(seed * 1000 + i as u64);
        let mut t = a.first(&mut r);
        while t < cycles {
            let (_, s, next) = a.fire(t, &mut r, size, |_| 0);
            series[t as usize] += s as f64;
            t = next;
        }
    }
    series
}

#[test]
fn onoff_aggregate_is_self_similar_with_the_configured_rate() {
    let alpha = 1.4;
    let rate = 0.25;
    let p = ProcessConfig::Table(ProcessTable::Onoff {
        on_alpha: alpha,
        off_alpha: alpha,
        on_mean: 200.0,
        off_mean: 600.0,
    });
    let size = SizeSampler::Fixed(4);
    p.validate("p", rate, &size).unwrap();
    let mut arr: Vec<Arrivals> = (0..100)
        .map(|_| Arrivals::new(Some(&p), SimpleProcess::Bernoulli, rate, 4.0))
        .collect();
    let cycles: u64 = 1 << 21;
    let series = aggregate(&mut arr, &size, cycles, 1);
    let mean = series.iter().sum::<f64>() / cycles as f64;
    // 100 sources × 0.25 flits/cycle; the heavy tails make the sample mean converge slowly.
    assert!((mean - 25.0).abs() < 2.5, "aggregate rate {mean}");
    // Variance-time plot: Var(X^(m)) ∝ m^(2H − 2) over block sizes m from 256 to 16k cycles.
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    let mut m = 256usize;
    while m <= 16384 {
        let blocks: Vec<f64> = series
            .chunks_exact(m)
            .map(|c| c.iter().sum::<f64>() / m as f64)
            .collect();
        let bm = blocks.iter().sum::<f64>() / blocks.len() as f64;
        let var = blocks.iter().map(|b| (b - bm).powi(2)).sum::<f64>() / blocks.len() as f64;
        xs.push((m as f64).ln());
        ys.push(var.ln());
        m *= 2;
    }
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let slope = xs
        .iter()
        .zip(&ys)
        .map(|(x, y)| (x - mx) * (y - my))
        .sum::<f64>()
        / xs.iter().map(|x| (x - mx).powi(2)).sum::<f64>();
    let h = 1.0 + slope / 2.0;
    assert!((h - 0.8).abs() <= 0.1, "Hurst {h} (slope {slope})");
}

#[test]
fn onoff_bursts_go_to_one_destination() {
    let p = ProcessConfig::Table(ProcessTable::Onoff {
        on_alpha: 1.5,
        off_alpha: 1.5,
        on_mean: 100.0,
        off_mean: 100.0,
    });
    let size = SizeSampler::Fixed(2);
    let mut a = Arrivals::new(Some(&p), SimpleProcess::Bernoulli, 0.5, 2.0);
    let mut r = rng(11);
    let mut t = a.first(&mut r);
    let mut draws = 0;
    let mut changes = 0;
    let mut last = u32::MAX;
    for _ in 0..10_000 {
        let (d, _, next) = a.fire(t, &mut r, &size, |_| {
            draws += 1;
            draws
        });
        if d != last {
            changes += 1;
            last = d;
        }
        t = next;
    }
    // One draw per burst; each burst of mean 100 cycles at 1 flit/cycle carries ~50 messages.
    assert_eq!(changes, draws);
    assert!(draws > 50 && draws < 1000, "{draws} bursts");
}

#[test]
fn video_rate_is_the_configured_one_and_frames_stay_in_bounds() {
    // 1 MB/s with 64-byte flits and 10 ns cycles: 1e6 / 64 / 1e8 flits/cycle; frames every
    // 40 ms = 4e6 cycles (a mean of 625 flits); frames 1 KB–120 KB = 16–1875 flits.
    let rate = 1e6 / 64.0 / 1e8;
    let p = ProcessConfig::Table(ProcessTable::Video {
        frame_period: 4e6,
        gop: default_gop(),
        i_to_p: 2.0,
        p_to_b: 1.5,
        min: 16.0,
        max: Some(1875.0),
        trace: None,
        frames: None,
    });
    let size = SizeSampler::Fixed(1);
    p.validate("p", rate, &size).unwrap();
    let mut a = Arrivals::new(Some(&p), SimpleProcess::Bernoulli, rate, 1.0);
    let mut r = rng(12);
    let mut t = a.first(&mut r);
    let t0 = t;
    let (mut flits, mut frames) = (0u64, 0u64);
    let frames_max = 12_000;
    while frames < frames_max {
        let (_, s, next) = a.fire(t, &mut r, &size, |_| 0);
        assert!((16..=1875).contains(&s), "frame of {s} flits");
        assert_eq!(next - t, 4_000_000);
        flits += s as u64;
        frames += 1;
        t = next;
    }
    let got = flits as f64 / (t - t0) as f64;
    assert!(
        (got - rate).abs() <= 0.01 * rate,
        "video rate {got} vs {rate}"
    );
    // A rate whose mean I frame exceeds max is refused.
    let e = p.validate("p", rate * 10.0, &size).unwrap_err();
    assert_eq!(e.key, "p");
    let bad_gop = ProcessConfig::Table(ProcessTable::Video {
        frame_period: 10.0,
        gop: "IXB".into(),
        i_to_p: 3.0,
        p_to_b: 2.0,
        min: 1.0,
        max: Some(10.0),
        trace: None,
        frames: None,
    });
    assert_eq!(bad_gop.validate("p", 0.1, &size).unwrap_err().key, "p.gop");
}

#[test]
fn video_traces_send_their_frames_in_order_from_a_random_offset() {
    let frames: std::sync::Arc<[u32]> = vec![5, 1, 2, 3].into();
    let p = ProcessConfig::Table(ProcessTable::Video {
        frame_period: 10.0,
        gop: default_gop(),
        i_to_p: 3.0,
        p_to_b: 2.0,
        min: 1.0,
        max: None,
        trace: Some("t.txt".into()),
        frames: Some(frames.clone()),
    });
    let size = SizeSampler::Fixed(1);
    p.validate("p", 0.0, &size).unwrap();
    let mut offsets = std::collections::HashSet::new();
    for seed in 0..16 {
        let mut a = Arrivals::new(Some(&p), SimpleProcess::Bernoulli, 0.0, 1.0);
        let mut r = rng(seed);
        let mut t = a.first(&mut r);
        assert!(t < 10);
        let mut got = Vec::new();
        for _ in 0..8 {
            let (_, s, next) = a.fire(t, &mut r, &size, |_| 0);
            assert_eq!(next - t, 10);
            got.push(s);
            t = next;
        }
        let start = frames.iter().position(|&f| f == got[0]).unwrap();
        offsets.insert(start);
        for (k, s) in got.iter().enumerate() {
            assert_eq!(*s, frames[(start + k) % 4]);
        }
    }
    assert!(offsets.len() > 1, "every source started at the same frame");
    // A trace that was not read, or that overloads the link, is refused.
    let unread = ProcessConfig::Table(ProcessTable::Video {
        frame_period: 10.0,
        gop: default_gop(),
        i_to_p: 3.0,
        p_to_b: 2.0,
        min: 1.0,
        max: None,
        trace: Some("t.txt".into()),
        frames: None,
    });
    assert_eq!(unread.validate("p", 0.0, &size).unwrap_err().key, "p.trace");
    let heavy = ProcessConfig::Table(ProcessTable::Video {
        frame_period: 2.0,
        gop: default_gop(),
        i_to_p: 3.0,
        p_to_b: 2.0,
        min: 1.0,
        max: None,
        trace: Some("t.txt".into()),
        frames: Some(frames),
    });
    assert_eq!(heavy.validate("p", 0.0, &size).unwrap_err().key, "p.trace");
}

#[test]
fn bernoulli_and_cbr_with_a_distribution_keep_the_rate() {
    let size = dist(SizeDist::Uniform { min: 1, max: 15 });
    for kind in [SimpleProcess::Bernoulli, SimpleProcess::Cbr] {
        let mut arr = vec![Arrivals::new(
            Some(&ProcessConfig::Simple(kind)),
            SimpleProcess::Bernoulli,
            0.3,
            size.mean(),
        )];
        let cycles = 400_000;
        let s = aggregate(&mut arr, &size, cycles, 3);
        let got = s.iter().sum::<f64>() / cycles as f64;
        assert!((got - 0.3).abs() < 0.01, "{kind:?}: {got}");
    }
}

#[test]
fn configs_parse() {
    #[derive(serde::Deserialize)]
    struct C {
        size: SizeConfig,
        process: ProcessConfig,
    }
    let c: C = serde_json::from_str(
        r#"{"size": {"dist": "pareto", "alpha": 1.5, "min": 2, "max": 500},
            "process": {"kind": "onoff", "on_alpha": 1.4, "off_alpha": 1.2,
                        "on_mean": 100, "off_mean": 300}}"#,
    )
    .unwrap();
    assert!(matches!(c.size, SizeConfig::Dist(SizeDist::Pareto { .. })));
    assert!(matches!(
        c.process,
        ProcessConfig::Table(ProcessTable::Onoff { .. })
    ));
    let c: C = serde_json::from_str(r#"{"size": 12, "process": "poisson"}"#).unwrap();
    assert_eq!(c.size, SizeConfig::Flits(12));
    assert_eq!(c.process.simple(), Some(SimpleProcess::Poisson));
}
