//! Utilisation vectors: `n` task utilisations summing to a total `U`, drawn uniformly
//! from the simplex (UUniFast) or from its part where no task exceeds a bound
//! (UUniFast-discard, RandFixedSum, exponentially tilted rejection).
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
/// [`tilted_fixed_sum`]).
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

/// Most tasks [`rand_fixed_sum`] accepts: its table holds n²/2 doubles (4n² bytes: 67 MB
/// at 4,096 tasks) and takes O(n²) time to fill. Beyond it, [`tilted_fixed_sum`] draws the
/// same law in O(n) memory.
pub const RFS_MAX_TASKS: usize = 4096;

/// Start of row `row` in the triangular table (row r holds r + 2 values).
fn tri_offset(row: usize) -> usize {
    row * (row + 3) / 2
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
    // w: one row of Stafford's scaled volumes at a time (row i needs only row i − 1);
    // t: his transition probabilities, lower-triangular (row i − 2 holds j = 1..=i), so
    // the table takes n²/2 values instead of 2n² (see RFS_MAX_TASKS).
    let mut w_prev = vec![0.0f64; n + 1];
    w_prev[1] = f64::MAX;
    let mut w_row = vec![0.0f64; n + 1];
    let mut t: Vec<f64> = Vec::with_capacity(tri_offset(n - 1));
    let tiny = f64::from_bits(1); // the smallest positive double, as in the original
    for i in 2..=n {
        w_row.iter_mut().for_each(|v| *v = 0.0);
        for j in 1..=i {
            // MATLAB (1-based): tmp1 = w(i-1, j+1) * s1(j) / i, tmp2 = w(i-1, j) * s2(n-i+j) / i
            let tmp1 = w_prev[j] * s1[j - 1] / i as f64;
            let tmp2 = w_prev[j - 1] * s2[n - i + j - 1] / i as f64;
            w_row[j] = tmp1 + tmp2;
            let tmp3 = w_row[j] + tiny;
            let right = s2[n - i + j - 1] > s1[j - 1];
            t.push(if right {
                tmp2 / tmp3
            } else {
                1.0 - tmp1 / tmp3
            });
        }
        std::mem::swap(&mut w_prev, &mut w_row);
    }
    // t[row][col] of the full table; 0 outside the triangle, as in the original's zeros.
    let t_at = |row: usize, col: usize| -> f64 {
        if col < row + 2 {
            t[tri_offset(row) + col]
        } else {
            0.0
        }
    };
    let mut x = vec![0.0f64; n];
    let mut s = s;
    let mut j = k + 1; // 1-based column of t
    let mut sm = 0.0f64;
    let mut pr = 1.0f64;
    for i in (1..n).rev() {
        let rt: f64 = rng.random();
        let rs: f64 = rng.random();
        let e = if rt <= t_at(i - 1, j - 1) { 1.0 } else { 0.0 };
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

/// Proposals [`tilted_fixed_sum`] draws before giving up. Its acceptance rate is about
/// 1 / (2.5·√n) at worst (n tasks, in the tails), so 1,000,000 proposals
/// are never reached below the task limit in practice; the cap only keeps a call finite.
pub const TILTED_TRIES: usize = 1_000_000;

/// Exactly uniform values with a fixed sum and per-value bounds: `bounds.len()` values,
/// value `i` in `[0, bounds[i]]`, summing to `total`, uniformly distributed over that
/// polytope, for any n, any total and any bounds. Memory O(n); expected time O(n·√n).
///
/// The uniform law on `{Σx = total, 0 ≤ x_i ≤ b_i}` is the law of independent
/// `X_i ~ U[0, b_i]` conditioned on their sum. Multiplying every density by `e^(−λ x_i)`
/// multiplies the joint density by `e^(−λ Σx)`, a constant on the polytope, so
/// independent *exponentially tilted* values (density ∝ `e^(−λx)` on `[0, b_i]`)
/// conditioned on the same sum have the same law. λ is chosen so that their expected sum
/// is `total` (then the sum of n − 1 of them lands near the right value); the remaining
/// value `r = total − Σ_{i≠a} x_i` (`a`: the largest bound) is accepted with probability
/// `e^(−λr)` when `0 ≤ r ≤ b_a`, which is exactly its conditional density over its
/// maximum, so an accepted vector is exactly uniform on the polytope (rejection
/// sampling; no grid, no table, nothing that underflows in the tails). Totals above half
/// the bounds' sum are drawn as `b_i − y_i` with `y` summing to `Σb − total` (the
/// polytope's symmetry), so λ ≥ 0 always.
///
/// `None` after [`TILTED_TRIES`] proposals. Needs `0 ≤ total ≤ Σ bounds` and every bound
/// finite and > 0 (the caller checks); the values sum to `total` up to floating-point
/// rounding.
pub fn tilted_fixed_sum<R: Rng + ?Sized>(
    rng: &mut R,
    bounds: &[f64],
    total: f64,
) -> Option<Vec<f64>> {
    let n = bounds.len();
    if n == 0 {
        return Some(Vec::new());
    }
    let span: f64 = bounds.iter().sum();
    let total = total.clamp(0.0, span);
    if n == 1 {
        return Some(vec![total.min(bounds[0])]);
    }
    let flip = total > span / 2.0;
    let s = if flip { span - total } else { total };
    let y = if s <= 0.0 {
        vec![0.0; n]
    } else {
        tilted_lower_half(rng, bounds, s)?
    };
    Some(if flip {
        y.iter()
            .zip(bounds)
            .map(|(&v, &b)| (b - v).clamp(0.0, b))
            .collect()
    } else {
        y
    })
}

/// [`tilted_fixed_sum`] for `0 < s ≤ Σb / 2`.
fn tilted_lower_half<R: Rng + ?Sized>(rng: &mut R, bounds: &[f64], s: f64) -> Option<Vec<f64>> {
    let n = bounds.len();
    let lambda = tilt_for_mean(bounds, s);
    // The absorbing value: the largest bound (the first one on ties).
    let a = (0..n).fold(0, |best, i| if bounds[i] > bounds[best] { i } else { best });
    // Per bound: e^(−λb) − 1, for inverse-CDF draws of the tilted law.
    let em1: Vec<f64> = bounds.iter().map(|&b| (-lambda * b).exp_m1()).collect();
    let mut x = vec![0.0f64; n];
    for _ in 0..TILTED_TRIES {
        let mut sum = 0.0f64;
        let mut over = false;
        for i in 0..n {
            if i == a {
                continue;
            }
            let v: f64 = rng.random();
            x[i] = if lambda > 0.0 {
                // Inverse CDF of the density λe^(−λx)/(1 − e^(−λb)) on [0, b].
                (-(v * em1[i]).ln_1p() / lambda).clamp(0.0, bounds[i])
            } else {
                v * bounds[i]
            };
            sum += x[i];
            if sum > s {
                over = true; // r < 0 already: reject without drawing the rest
                break;
            }
        }
        if over {
            continue;
        }
        let r = s - sum;
        if r > bounds[a] {
            continue;
        }
        let accept = if lambda > 0.0 {
            rng.random::<f64>() < (-lambda * r).exp()
        } else {
            true
        };
        if accept {
            x[a] = r;
            return Some(x);
        }
    }
    None
}

/// Mean of the law with density ∝ e^(−λx) on [0, b], λ ≥ 0.
fn tilted_mean(lambda: f64, b: f64) -> f64 {
    let z = lambda * b;
    if z < 1e-6 {
        b * (0.5 - z / 12.0)
    } else {
        1.0 / lambda - b / z.exp_m1()
    }
}

/// The λ ≥ 0 at which the tilted values' expected sum is `s` (0 < s ≤ Σb/2), by
/// bisection on log λ. Any λ gives the exact law; this one makes acceptance likely.
fn tilt_for_mean(bounds: &[f64], s: f64) -> f64 {
    let n = bounds.len() as f64;
    let mean = |l: f64| bounds.iter().map(|&b| tilted_mean(l, b)).sum::<f64>();
    if mean(0.0) <= s {
        return 0.0;
    }
    // Σ mean ≤ n/λ, so the root is at most n/s; the mean falls as λ grows.
    let (mut lo, mut hi) = (1e-300f64.max(n / s * 1e-30), n / s);
    if mean(lo) <= s {
        return lo;
    }
    for _ in 0..80 {
        let mid = (lo * hi).sqrt();
        if mean(mid) > s {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
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
                let b = tilted_fixed_sum(&mut rng, &vec![1.0; n], total).unwrap();
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
