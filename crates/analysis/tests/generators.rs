//! Generators: the requested total, the per-task bound, and uniformity on the simplex
//! (Kolmogorov-Smirnov tests against the exact marginal law, or against rejection
//! sampling, which is exactly uniform on the bounded simplex). Seeds are fixed, so the
//! statistical tests are deterministic; their threshold is the 0.1% critical value.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use schedlab_analysis::utilisation::{
    rand_fixed_sum, tilted_fixed_sum, uunifast, uunifast_discard,
};
use schedlab_analysis::{generate, GenSpec, Method, Periods, METHODS};

/// Largest distance between the empirical CDF of `xs` and `cdf`.
fn ks_one(mut xs: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    xs.iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = cdf(x);
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max)
}

/// Largest distance between the empirical CDFs of `a` and `b`.
fn ks_two(mut a: Vec<f64>, mut b: Vec<f64>) -> f64 {
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (mut i, mut j, mut d) = (0usize, 0usize, 0.0f64);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            i += 1;
        } else {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

#[test]
fn every_method_hits_the_total_and_keeps_tasks_under_the_bound() {
    for method in METHODS {
        for (tasks, u) in [(1usize, 0.7), (4, 0.9), (16, 3.3), (8, 7.5), (32, 12.0)] {
            if method == Method::Uunifast && u > 1.0 {
                continue;
            }
            if method == Method::UunifastDiscard && u / tasks as f64 > 0.8 {
                continue; // rejection practically never succeeds there (tested below)
            }
            for seed in 0..20 {
                let spec = GenSpec {
                    tasks,
                    utilization: u,
                    method,
                    seed,
                    ..GenSpec::default()
                };
                let set = generate(&spec).unwrap();
                assert_eq!(set.tasks.len(), tasks);
                let sum: f64 = set.tasks.iter().map(|t| t.utilization).sum();
                assert!(
                    (sum - u).abs() <= 1e-9,
                    "{} {tasks} tasks U={u} seed {seed}: sum {sum}",
                    method.name()
                );
                for t in &set.tasks {
                    assert!(
                        (0.0..=1.0).contains(&t.utilization),
                        "{} task above its bound: {t:?}",
                        method.name()
                    );
                    assert!(t.runtime >= 1 && t.runtime <= t.period, "{t:?}");
                    // The written runtime is the drawn utilisation to the nanosecond.
                    let err = (t.runtime as f64 / t.period as f64 - t.utilization).abs();
                    assert!(err <= 1.0 / t.period as f64, "{t:?}");
                }
            }
        }
    }
}

#[test]
fn generated_files_load_as_workloads_with_the_drawn_values() {
    use schedlab_model::{Overrides, Workload};
    use std::path::Path;
    let spec = GenSpec {
        tasks: 12,
        utilization: 2.5,
        method: Method::Randfixedsum,
        periods: Periods::Choice(vec![10_000_000, 20_000_000, 40_000_000]),
        deadlines: schedlab_analysis::Deadlines::Constrained { min_ratio: 0.5 },
        policy: Some("edf".into()),
        placement: Some("global".into()),
        ..GenSpec::default()
    };
    let set = generate(&spec).unwrap();
    for text in [set.to_yaml(), set.to_json()] {
        let w = Workload::parse_str(&text, Path::new("gen.yaml"), &Overrides::default())
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(w.tasks.len(), 12);
        assert_eq!(w.platform.cpus, 4);
        for (a, b) in w.tasks.iter().zip(&set.tasks) {
            assert_eq!(
                (a.runtime, a.period, a.deadline),
                (b.runtime, Some(b.period), b.deadline)
            );
            assert!(b.deadline <= b.period && b.deadline >= b.runtime);
        }
        assert_eq!(w.scheduler.placement.name(), "global");
    }
}

#[test]
fn uunifast_marginal_is_beta_1_n_minus_1() {
    // Uniform on the simplex {Σ u = U}: u_i / U ~ Beta(1, n − 1), CDF 1 − (1 − x)^(n−1).
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (n, total, draws) = (5usize, 2.0, 4000usize);
    for coord in [0, n - 1] {
        let xs: Vec<f64> = (0..draws)
            .map(|_| uunifast(&mut rng, n, total)[coord] / total)
            .collect();
        let d = ks_one(xs, |x| 1.0 - (1.0 - x).powi(n as i32 - 1));
        assert!(
            d < 1.95 / (draws as f64).sqrt(),
            "coordinate {coord}: KS {d}"
        );
    }
}

#[test]
fn bounded_samplers_match_rejection_sampling() {
    // n = 4, U = 2.5, bound 1: a quarter or so of UUniFast draws fit, so rejection gives a
    // reference sample of the uniform law on the bounded simplex.
    let (n, total, draws) = (4usize, 2.5, 3000usize);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let reference: Vec<Vec<f64>> = (0..draws)
        .map(|_| uunifast_discard(&mut rng, n, total, 1.0, 1000).unwrap())
        .collect();
    let crit = 1.95 * (2.0 / draws as f64).sqrt();
    let rfs: Vec<Vec<f64>> = (0..draws)
        .map(|_| rand_fixed_sum(&mut rng, n, total, 1.0))
        .collect();
    let tilted: Vec<Vec<f64>> = (0..draws)
        .map(|_| tilted_fixed_sum(&mut rng, &[1.0; 4], total).unwrap())
        .collect();
    for (name, sample) in [("randfixedsum", &rfs), ("tilted", &tilted)] {
        for coord in 0..n {
            let a: Vec<f64> = reference.iter().map(|u| u[coord]).collect();
            let b: Vec<f64> = sample.iter().map(|u| u[coord]).collect();
            let d = ks_two(a, b);
            assert!(d < crit, "{name} coordinate {coord}: KS {d} ≥ {crit}");
        }
        // The largest value of a vector: sensitive to mass near the bound.
        let a: Vec<f64> = reference
            .iter()
            .map(|u| u.iter().copied().fold(0.0, f64::max))
            .collect();
        let b: Vec<f64> = sample
            .iter()
            .map(|u| u.iter().copied().fold(0.0, f64::max))
            .collect();
        let d = ks_two(a, b);
        assert!(d < crit, "{name} max: KS {d} ≥ {crit}");
    }
    // A biased sampler fails the same test: plain UUniFast clipped at 1 (not uniform).
    let clipped: Vec<f64> = (0..draws)
        .map(|_| {
            let u = uunifast(&mut rng, n, total);
            u.iter().copied().fold(0.0, f64::max).min(1.0)
        })
        .collect();
    let a: Vec<f64> = reference
        .iter()
        .map(|u| u.iter().copied().fold(0.0, f64::max))
        .collect();
    assert!(
        ks_two(a, clipped) > crit,
        "the KS test cannot tell a biased sampler"
    );
}

#[test]
fn tilted_honours_unequal_bounds_uniformly() {
    // Bounds (0.3, 1, 1), U = 1.2: compare with rejection from UUniFast.
    let bounds = [0.3, 1.0, 1.0];
    let (total, draws) = (1.2, 3000usize);
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let mut reference = Vec::with_capacity(draws);
    while reference.len() < draws {
        let u = uunifast(&mut rng, 3, total);
        if u.iter().zip(&bounds).all(|(x, b)| x <= b) {
            reference.push(u);
        }
    }
    let sample: Vec<Vec<f64>> = (0..draws)
        .map(|_| tilted_fixed_sum(&mut rng, &bounds, total).unwrap())
        .collect();
    let crit = 1.95 * (2.0 / draws as f64).sqrt();
    for coord in 0..3 {
        assert!(sample.iter().all(|u| u[coord] <= bounds[coord]));
        let a: Vec<f64> = reference.iter().map(|u| u[coord]).collect();
        let b: Vec<f64> = sample.iter().map(|u| u[coord]).collect();
        let d = ks_two(a, b);
        assert!(d < crit, "coordinate {coord}: KS {d} ≥ {crit}");
    }
}

#[test]
fn divisor_periods_divide_the_hyperperiod_and_cover_the_range() {
    let ms = 1_000_000u64;
    let periods = Periods::parse("divisors:3600ms:10ms..1000ms", ms).unwrap();
    // Worked out independently: the whole milliseconds in 10..=1000 that divide 3600.
    let expected: Vec<u64> = (10..=1000)
        .filter(|p| 3600 % p == 0)
        .map(|p| p * ms)
        .collect();
    assert_eq!(expected.len(), 34);
    let spec = GenSpec {
        tasks: 2000,
        utilization: 100.0,
        method: Method::Tilted,
        periods,
        seed: 5,
        ..GenSpec::default()
    };
    let set = generate(&spec).unwrap();
    let mut drawn: Vec<u64> = set.tasks.iter().map(|t| t.period).collect();
    for &p in &drawn {
        assert_eq!(3600 * ms % p, 0, "{p} does not divide 3600 ms");
        assert!((10 * ms..=1000 * ms).contains(&p), "{p}");
    }
    drawn.sort_unstable();
    drawn.dedup();
    // Uniform over 34 candidates, 2000 draws: every one of them appears.
    assert_eq!(drawn, expected);
    // The set's hyperperiod divides 3600 ms (here: equals it, every divisor drawn).
    let lcm = drawn.iter().fold(1u64, |l, &p| {
        let g = (1..=l.min(p))
            .rev()
            .find(|d| l % d == 0 && p % d == 0)
            .unwrap_or(1);
        l / g * p
    });
    assert_eq!(3600 * ms % lcm, 0);
}
