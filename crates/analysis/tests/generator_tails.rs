//! Generators in the tails of their range, where a sampler that is uniform "in the
//! middle" shows its bias: n = 16 at U = 15.5 and 15.9, n = 32 at U = 31.5, n = 100 at
//! U = 0.05 (bound 1 per task). At these points the exact law of one value is known:
//!
//! - U ≤ 1: the bound is inactive, the vector is uniform on the simplex, so u_i / U ~
//!   Beta(1, n − 1), and the smallest value has P(min > x) = (1 − n·x/U)^(n−1);
//! - U ≥ n − 1: v_i = 1 − u_i is uniform on the simplex of sum s = n − U ≤ 1 (the
//!   polytope's symmetry), so the same laws hold for 1 − u_i and for 1 − max u.
//!
//! Each sampler is compared with these laws by a one-sample Kolmogorov-Smirnov test on
//! the first value, the last value and the extreme value of 2,000 vectors (fixed seeds,
//! so the p-values are fixed numbers); a p-value below 0.001 fails. The p-values are
//! printed (`cargo test --test generator_tails -- --nocapture`).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use schedlab_analysis::utilisation::{
    rand_fixed_sum, tilted_fixed_sum, uunifast, uunifast_discard,
};

/// The tails named in the issue: (tasks, total).
const EXTREMES: [(usize, f64); 4] = [(16, 15.5), (16, 15.9), (32, 31.5), (100, 0.05)];
const DRAWS: usize = 2000;
const ALPHA: f64 = 0.001;

/// Largest distance between the empirical CDF of `xs` and `cdf`.
fn ks_distance(mut xs: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
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

/// Asymptotic p-value of a one-sample KS distance `d` over `n` points (Kolmogorov's
/// series with Stephens' small-sample correction).
fn ks_p(d: f64, n: usize) -> f64 {
    let sn = (n as f64).sqrt();
    let lambda = (sn + 0.12 + 0.11 / sn) * d;
    if lambda < 0.2 {
        return 1.0;
    }
    let mut p = 0.0;
    for k in 1..=100 {
        let k = k as f64;
        let term = (-2.0 * k * k * lambda * lambda).exp();
        p += if k as u64 % 2 == 1 {
            2.0 * term
        } else {
            -2.0 * term
        };
    }
    p.clamp(0.0, 1.0)
}

/// The three p-values (first value, last value, extreme value) of `sample` at (n, U).
fn p_values(sample: &[Vec<f64>], n: usize, total: f64) -> [f64; 3] {
    let m = (n - 1) as i32;
    // Work on the simplex side: w = u (U ≤ 1) or w = 1 − u (U ≥ n − 1), sum s.
    let upper = total > 1.0;
    let s = if upper { n as f64 - total } else { total };
    let w = |u: f64| if upper { 1.0 - u } else { u };
    let marginal = |x: f64| 1.0 - (1.0 - (x / s).clamp(0.0, 1.0)).powi(m);
    let min_law = |x: f64| 1.0 - (1.0 - (n as f64 * x / s).clamp(0.0, 1.0)).powi(m);
    let first: Vec<f64> = sample.iter().map(|v| w(v[0])).collect();
    let last: Vec<f64> = sample.iter().map(|v| w(v[n - 1])).collect();
    let extreme: Vec<f64> = sample
        .iter()
        .map(|v| v.iter().map(|&u| w(u)).fold(f64::INFINITY, f64::min))
        .collect();
    [
        ks_p(ks_distance(first, marginal), sample.len()),
        ks_p(ks_distance(last, marginal), sample.len()),
        ks_p(ks_distance(extreme, min_law), sample.len()),
    ]
}

fn check(name: &str, n: usize, total: f64, sample: &[Vec<f64>]) {
    for v in sample {
        assert_eq!(v.len(), n);
        assert!(v.iter().all(|&u| (0.0..=1.0).contains(&u)), "{name}: {v:?}");
        let sum: f64 = v.iter().sum();
        assert!((sum - total).abs() < 1e-9, "{name}: sum {sum}");
    }
    let p = p_values(sample, n, total);
    println!(
        "{name:<16} n={n:<3} U={total:<5} p(first)={:.4} p(last)={:.4} p(extreme)={:.4}",
        p[0], p[1], p[2]
    );
    assert!(
        p.iter().all(|&p| p > ALPHA),
        "{name} at n = {n}, U = {total}: KS p-values {p:?}"
    );
}

#[test]
fn tilted_is_uniform_in_the_tails() {
    for (i, &(n, total)) in EXTREMES.iter().enumerate() {
        let mut rng = ChaCha8Rng::seed_from_u64(100 + i as u64);
        let bounds = vec![1.0; n];
        let sample: Vec<Vec<f64>> = (0..DRAWS)
            .map(|_| tilted_fixed_sum(&mut rng, &bounds, total).unwrap())
            .collect();
        check("tilted", n, total, &sample);
    }
}

#[test]
fn randfixedsum_is_uniform_in_the_tails() {
    for (i, &(n, total)) in EXTREMES.iter().enumerate() {
        let mut rng = ChaCha8Rng::seed_from_u64(200 + i as u64);
        let sample: Vec<Vec<f64>> = (0..DRAWS)
            .map(|_| rand_fixed_sum(&mut rng, n, total, 1.0))
            .collect();
        check("randfixedsum", n, total, &sample);
    }
}

#[test]
fn uunifast_and_discard_are_uniform_where_they_apply() {
    // Only U = 0.05 is within their reach: above U = 1 UUniFast is refused (no bound)
    // and UUniFast-discard practically never draws a vector under the bound at
    // U = n − 0.5 (refused after 10,000 draws, as the first assertion shows).
    let mut rng = ChaCha8Rng::seed_from_u64(300);
    assert!(uunifast_discard(&mut rng, 16, 15.5, 1.0, 10_000).is_none());
    let (n, total) = (100, 0.05);
    let sample: Vec<Vec<f64>> = (0..DRAWS).map(|_| uunifast(&mut rng, n, total)).collect();
    check("uunifast", n, total, &sample);
    let sample: Vec<Vec<f64>> = (0..DRAWS)
        .map(|_| uunifast_discard(&mut rng, n, total, 1.0, 10).unwrap())
        .collect();
    check("uunifast-discard", n, total, &sample);
}

#[test]
fn the_test_rejects_a_sampler_biased_in_the_tail() {
    // UUniFast at U = 0.05 then one value bumped to a tenth of the total from the
    // others: the first value's law is visibly off, and the test must say so.
    let mut rng = ChaCha8Rng::seed_from_u64(400);
    let (n, total) = (100, 0.05);
    let sample: Vec<Vec<f64>> = (0..DRAWS)
        .map(|_| {
            let mut v = uunifast(&mut rng, n, total * 0.9);
            v[0] += total * 0.1;
            v
        })
        .collect();
    let p = p_values(&sample, n, total);
    assert!(p[0] < ALPHA, "{p:?}");
}
