//! Utilisation vectors: `n` task utilisations summing to a total `U`, drawn uniformly
//! from the simplex (UUniFast) or from its part where no task exceeds a bound
//! (UUniFast-discard, RandFixedSum, ConvolutionalFixedSum).
//!
//! Every sampler takes the random generator as an argument and draws from it in a fixed
//! order, so a seeded generator gives the same vector on every machine.

use rand::Rng;

/// UUniFast (Bini & Buttazzo 2005): `n` utilisations uniformly distributed over the
/// simplex `{u_i ≥ 0, Σ u_i = total}`, with no per-task bound. O(n).
///
/// `n` must be at least 1 (an empty vector is returned for 0).
pub fn uunifast<R: Rng + ?Sized>(rng: &mut R, n: usize, total: f64) -> Vec<f64> {
    if n == 0 {
        return Vec::new();
    }
    let mut sum = total;
    let mut u = Vec::with_capacity(n);
    for i in 1..n {
        let next = sum * rng.random::<f64>().powf(1.0 / (n - i) as f64);
        u.push(sum - next);
        sum = next;
    }
    u.push(sum);
    u
}

/// UUniFast-discard (Davis & Burns 2009): UUniFast draws until one has no task above
/// `bound`, at most `tries` draws. The accepted vector is uniform over the bounded part
/// of the simplex (rejection sampling). `None` when every draw had a task above the bound
/// (the bounded part is a tiny fraction of the simplex: use [`rand_fixed_sum`] or
/// [`convolutional_fixed_sum`]).
pub fn uunifast_discard<R: Rng + ?Sized>(
    rng: &mut R,
    n: usize,
    total: f64,
    bound: f64,
    tries: usize,
) -> Option<Vec<f64>> {
    for _ in 0..tries {
        let u = uunifast(rng, n, total);
        if u.iter().all(|&x| x <= bound) {
            return Some(u);
        }
    }
    None
}

/// RandFixedSum (Stafford 2006; Emberson, Stafford & Davis 2010 for task sets): `n` values
/// in `[0, bound]` summing to `total`, uniformly distributed over that polytope, without
/// rejection. The polytope is cut into simplices; a table of their relative volumes picks
/// one, and a point is drawn uniformly inside it; the coordinates are then shuffled.
///
/// Needs `0 ≤ total ≤ n·bound` (the caller checks).
pub fn rand_fixed_sum<R: Rng + ?Sized>(rng: &mut R, n: usize, total: f64, bound: f64) -> Vec<f64> {
    if n == 0 {
        return Vec::new();
    }
    if n == 1 {
        return vec![total];
    }
    // Work on the unit cube: s in [0, n].
    let s0 = total / bound;
    let k = (s0.floor() as i64).clamp(0, n as i64 - 1) as usize;
    let s = s0.clamp(k as f64, k as f64 + 1.0);
    // s1[i] = s - (k - i), s2[i] = (k + n - i) - s, i = 0..n (never negative).
    let s1: Vec<f64> = (0..n).map(|i| s - (k as f64 - i as f64)).collect();
    let s2: Vec<f64> = (0..n).map(|i| (k + n - i) as f64 - s).collect();
    // w[i][j]: scaled volumes; t[i][j]: transition probabilities (Stafford's table).
    let mut w = vec![vec![0.0f64; n + 1]; n];
    w[0][1] = f64::MAX;
    let mut t = vec![vec![0.0f64; n]; n - 1];
    let tiny = f64::from_bits(1); // the smallest positive double, as in the original
    for i in 2..=n {
        for j in 1..=i {
            // MATLAB (1-based): tmp1 = w(i-1, j+1) * s1(j) / i, tmp2 = w(i-1, j) * s2(n-i+j) / i
            let tmp1 = w[i - 2][j] * s1[j - 1] / i as f64;
            let tmp2 = w[i - 2][j - 1] * s2[n - i + j - 1] / i as f64;
            w[i - 1][j] = tmp1 + tmp2;
            let tmp3 = w[i - 1][j] + tiny;
            let right = s2[n - i + j - 1] > s1[j - 1];
            t[i - 2][j - 1] = if right {
                tmp2 / tmp3
            } else {
                1.0 - tmp1 / tmp3
            };
        }
    }
    let mut x = vec![0.0f64; n];
    let mut s = s;
    let mut j = k + 1; // 1-based column of t
    let mut sm = 0.0f64;
    let mut pr = 1.0f64;
    for i in (1..n).rev() {
        let rt: f64 = rng.random();
        let rs: f64 = rng.random();
        let e = if rt <= t[i - 1][j - 1] { 1.0 } else { 0.0 };
        let sx = rs.powf(1.0 / i as f64);
        sm += (1.0 - sx) * pr * s / (i + 1) as f64;
        pr *= sx;
        x[n - i - 1] = sm + pr * e;
        s -= e;
        if e > 0.0 {
            j -= 1;
        }
    }
    x[n - 1] = sm + pr * s;
    // Random order (Fisher-Yates), then back to [0, bound].
    for i in (1..n).rev() {
        let r = rng.random_range(0..=i);
        x.swap(i, r);
    }
    for v in &mut x {
        *v = (*v * bound).clamp(0.0, bound);
    }
    x
}

/// Grid points over the sum's whole range in [`convolutional_fixed_sum`].
const CFS_GRID: usize = 16_384;

/// ConvolutionalFixedSum (Griffin & Davis, RTAS 2025), numeric form: `bounds.len()`
/// values, value `i` in `[0, bounds[i]]`, summing to `total`, (near-)uniformly
/// distributed over that polytope, for any per-task bounds and without rejection.
///
/// Uniform on the polytope is the law of independent `X_i ~ U[0, b_i]` conditioned on
/// their sum. So each coordinate in turn is drawn from its exact conditional law given
/// the rest `R` still to share: `x_k` has density proportional to `f_{k+1}(R - x_k)`, the
/// density of `X_{k+1} + … + X_n`. The distribution functions of those partial sums are
/// computed once by repeated convolution with the uniform densities (each convolution a
/// moving-window integral, on a grid of [`CFS_GRID`] points, linear
/// interpolation between points), and each draw inverts the conditional distribution
/// function. The last value takes the rest, so the sum is exact; every draw is kept
/// inside `[max(0, R - Σ_{j>k} b_j), min(b_k, R)]`, so no value leaves its bounds.
/// Grid discretisation is the only departure from the exact law (tested statistically
/// against rejection sampling).
///
/// Needs `0 ≤ total ≤ Σ bounds`, every bound > 0 (the caller checks).
pub fn convolutional_fixed_sum<R: Rng + ?Sized>(
    rng: &mut R,
    bounds: &[f64],
    total: f64,
) -> Vec<f64> {
    let n = bounds.len();
    if n == 0 {
        return Vec::new();
    }
    if n == 1 {
        return vec![total.clamp(0.0, bounds[0])];
    }
    let span: f64 = bounds.iter().sum();
    let points = CFS_GRID;
    let h = span / points as f64;
    // cdf[k][g]: P(X_k + ... + X_{n-1} <= g*h), for k = 1..n-1 (index k).
    let mut cdf: Vec<Vec<f64>> = vec![Vec::new(); n];
    let last = bounds[n - 1];
    cdf[n - 1] = (0..=points)
        .map(|g| (g as f64 * h / last).clamp(0.0, 1.0))
        .collect();
    for k in (1..n - 1).rev() {
        let prev = &cdf[k + 1];
        // Integral of the previous CDF, trapezoid rule: integ[g] = ∫_0^{g h} F.
        let mut integ = vec![0.0f64; points + 1];
        for g in 1..=points {
            integ[g] = integ[g - 1] + 0.5 * h * (prev[g - 1] + prev[g]);
        }
        let b = bounds[k];
        let at = |x: f64| -> f64 {
            if x <= 0.0 {
                return 0.0;
            }
            let pos = x / h;
            let g = pos.floor() as usize;
            if g >= points {
                // Past the range the CDF is 1: the integral grows linearly.
                return integ[points] + (x - points as f64 * h);
            }
            let f = pos - g as f64;
            integ[g] + f * (integ[g + 1] - integ[g])
        };
        cdf[k] = (0..=points)
            .map(|g| {
                let x = g as f64 * h;
                ((at(x) - at(x - b)) / b).clamp(0.0, 1.0)
            })
            .collect();
    }
    let interp = |f: &[f64], x: f64| -> f64 {
        if x <= 0.0 {
            return 0.0;
        }
        let pos = x / h;
        let g = pos.floor() as usize;
        if g >= points {
            return 1.0;
        }
        let fr = pos - g as f64;
        f[g] + fr * (f[g + 1] - f[g])
    };
    let mut rest_bound: Vec<f64> = vec![0.0; n + 1];
    for k in (0..n).rev() {
        rest_bound[k] = rest_bound[k + 1] + bounds[k];
    }
    let mut x = vec![0.0f64; n];
    let mut r = total;
    for k in 0..n - 1 {
        let lo = (r - rest_bound[k + 1]).max(0.0);
        let hi = bounds[k].min(r);
        let v: f64 = rng.random();
        let f = &cdf[k + 1];
        // x in [lo, hi] ⇔ y = r - x in [r - hi, r - lo]; P(x_k ≤ x) ∝ F(r-lo) - F(r-x).
        let (ya, yb) = (r - hi, r - lo);
        let (fa, fb) = (interp(f, ya), interp(f, yb));
        let xk = if hi <= lo {
            lo
        } else if fb - fa <= 0.0 {
            lo + v * (hi - lo)
        } else {
            let target = fb - v * (fb - fa);
            // Bisection on y in [ya, yb] for F(y) = target (F is non-decreasing).
            let (mut a, mut b) = (ya, yb);
            for _ in 0..60 {
                let m = 0.5 * (a + b);
                if interp(f, m) < target {
                    a = m;
                } else {
                    b = m;
                }
            }
            r - 0.5 * (a + b)
        };
        x[k] = xk.clamp(lo, hi);
        r -= x[k];
    }
    x[n - 1] = r.clamp(0.0, bounds[n - 1]);
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn samplers_hit_the_total_and_respect_bounds() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for (n, total) in [(2, 1.5), (5, 2.2), (16, 3.9), (16, 0.3), (40, 30.0)] {
            for _ in 0..50 {
                let a = rand_fixed_sum(&mut rng, n, total, 1.0);
                let b = convolutional_fixed_sum(&mut rng, &vec![1.0; n], total);
                for u in [&a, &b] {
                    assert_eq!(u.len(), n);
                    let s: f64 = u.iter().sum();
                    assert!((s - total).abs() < 1e-9, "{n} {total}: sum {s}");
                    assert!(u.iter().all(|&x| (0.0..=1.0).contains(&x)), "{u:?}");
                }
            }
        }
    }

    #[test]
    fn discard_gives_up_when_no_draw_fits() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert!(uunifast_discard(&mut rng, 10, 9.9, 1.0, 20).is_none());
        let u = uunifast_discard(&mut rng, 10, 2.0, 1.0, 1000).unwrap();
        assert!(u.iter().all(|&x| x <= 1.0));
    }
}
