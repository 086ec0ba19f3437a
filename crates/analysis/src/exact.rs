//! Exact comparisons of sums and products of ratios of integers, for the tests that
//! compare a utilisation (Σ C_i/T_i), a density or the hyperbolic product with a bound.
//!
//! A floating-point sum with a certified error bound decides almost every case at once;
//! only when the bound straddles the threshold (the sum is within about n·1e-16 of it)
//! is the sum computed as an exact fraction N/D in a small big-integer type, with D the
//! least common multiple of the reduced denominators. That fraction is capped at
//! [`MAX_LIMBS`] 64-bit words (many distinct, mutually prime periods); beyond the cap the
//! answer is [`Cmp::Unknown`], and the callers say "not proven" instead of guessing.

use std::cmp::Ordering;

/// Size cap of the exact fractions, in 64-bit words (16,384 bits).
pub const MAX_LIMBS: usize = 256;

/// Unit roundoff of f64 (2^-53), a little rounded up so bounds built from it stay safe.
const U: f64 = 1.12e-16;

/// How a sum or product compares with its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    /// Proven below, equal or above the threshold.
    Known(Ordering),
    /// Within the floating-point error of the threshold and too large to decide exactly.
    Unknown,
}

impl Cmp {
    /// `Some(true)` when proven ≤ the threshold, `Some(false)` when proven above it.
    pub fn at_most(self) -> Option<bool> {
        match self {
            Cmp::Known(o) => Some(o != Ordering::Greater),
            Cmp::Unknown => None,
        }
    }
}

/// Unsigned big integer, little-endian 64-bit limbs, no leading zero limb.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Big(Vec<u64>);

impl Big {
    fn from_u128(x: u128) -> Big {
        let mut b = Big(vec![x as u64, (x >> 64) as u64]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn mul_small(&mut self, k: u64) {
        let mut carry: u128 = 0;
        for limb in self.0.iter_mut() {
            let p = *limb as u128 * k as u128 + carry;
            *limb = p as u64;
            carry = p >> 64;
        }
        if carry > 0 {
            self.0.push(carry as u64);
        }
        self.trim();
    }

    fn mul_u128(&self, k: u128) -> Big {
        let mut lo = self.clone();
        lo.mul_small(k as u64);
        let mut hi = self.clone();
        hi.mul_small((k >> 64) as u64);
        if !hi.0.is_empty() {
            hi.0.insert(0, 0);
        }
        lo.add(&hi);
        lo
    }

    fn add(&mut self, other: &Big) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        let mut carry = 0u64;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let o = other.0.get(i).copied().unwrap_or(0);
            let (s1, c1) = limb.overflowing_add(o);
            let (s2, c2) = s1.overflowing_add(carry);
            *limb = s2;
            carry = (c1 as u64) + (c2 as u64);
        }
        if carry > 0 {
            self.0.push(carry);
        }
    }

    fn rem_small(&self, k: u64) -> u64 {
        let mut r: u128 = 0;
        for &limb in self.0.iter().rev() {
            r = ((r << 64) | limb as u128) % k as u128;
        }
        r as u64
    }

    fn div_small(&self, k: u64) -> Big {
        let mut out = vec![0u64; self.0.len()];
        let mut r: u128 = 0;
        for (i, &limb) in self.0.iter().enumerate().rev() {
            let cur = (r << 64) | limb as u128;
            out[i] = (cur / k as u128) as u64;
            r = cur % k as u128;
        }
        let mut b = Big(out);
        b.trim();
        b
    }

    fn cmp(&self, other: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Compare Σ num_i / den_i with `rhs` (every `den_i` > 0). Exact: `Unknown` only when the
/// sum lies within its floating-point error bound of `rhs` and the exact fraction would
/// exceed [`MAX_LIMBS`].
pub fn cmp_sum(terms: &[(u128, u64)], rhs: u64) -> Cmp {
    let (s, err) = float_sum(terms);
    let r = rhs as f64;
    if s + err < r {
        return Cmp::Known(Ordering::Less);
    }
    if s - err > r {
        return Cmp::Known(Ordering::Greater);
    }
    exact_sum(terms)
        .map(|(n, d)| Cmp::Known(n.cmp(&d.mul_u128(rhs as u128))))
        .unwrap_or(Cmp::Unknown)
}

/// Σ num_i / den_i in floating point and a bound on its absolute error: each quotient has
/// a relative error of at most 3u (two conversions, one division) and a recursive sum of
/// n non-negative terms adds at most (n − 1)u relative to the sum (Higham, Accuracy and
/// Stability of Numerical Algorithms, §4.2); (n + 4)·u·s covers both with room.
pub fn float_sum(terms: &[(u128, u64)]) -> (f64, f64) {
    let s: f64 = terms.iter().map(|&(a, b)| a as f64 / b as f64).sum();
    (s, (terms.len() as f64 + 4.0) * 2.0 * U * s)
}

/// Σ num_i / den_i as N / D, or `None` when it would exceed [`MAX_LIMBS`].
fn exact_sum(terms: &[(u128, u64)]) -> Option<(Big, Big)> {
    let mut n = Big(Vec::new());
    let mut d = Big::from_u128(1);
    for &(a, b) in terms {
        let g = gcd(b as u128, a % b as u128).max(1);
        let (a, b) = (a / g, (b as u128 / g) as u64);
        if a == 0 {
            continue;
        }
        // N/D + a/b = (N·(b/g2) + a·(D/g2)) / (D·(b/g2)), g2 = gcd(D, b).
        let g2 = gcd(b as u128, d.rem_small(b) as u128) as u64;
        let scale = b / g2;
        let part = d.div_small(g2).mul_u128(a);
        n.mul_small(scale);
        n.add(&part);
        d.mul_small(scale);
        if d.0.len() > MAX_LIMBS || n.0.len() > MAX_LIMBS + 2 {
            return None;
        }
    }
    Some((n, d))
}

/// Compare Π (num_i / den_i) with `rhs` (every `num_i`, `den_i` > 0). `Unknown` as for
/// [`cmp_sum`].
pub fn cmp_product(factors: &[(u128, u64)], rhs: u64) -> Cmp {
    let p: f64 = factors.iter().map(|&(a, b)| a as f64 / b as f64).product();
    // Each factor: 3u; each product step: u.
    let err = (4.0 * factors.len() as f64 + 4.0) * U * p;
    let r = rhs as f64;
    if p.is_finite() && p + err < r {
        return Cmp::Known(Ordering::Less);
    }
    if p.is_finite() && p - err > r {
        return Cmp::Known(Ordering::Greater);
    }
    let mut num = Big::from_u128(1);
    let mut den = Big::from_u128(1);
    for &(a, b) in factors {
        let g = gcd(a, b as u128);
        let (a, b) = (a / g, (b as u128 / g) as u64);
        num = num.mul_u128(a);
        den.mul_small(b);
        if num.0.len() > MAX_LIMBS || den.0.len() > MAX_LIMBS {
            return Cmp::Unknown;
        }
    }
    Cmp::Known(num.cmp(&den.mul_u128(rhs as u128)))
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn sums_just_above_one_are_above_one() {
        // 1/3 + 1/3 + 1/3 = 1 exactly; floats make it 1 - 1e-16 or so.
        assert_eq!(
            cmp_sum(&[(1, 3), (1, 3), (1, 3)], 1),
            Cmp::Known(Ordering::Equal)
        );
        // Two tasks of T = 10,000 s whose U exceeds 1 by 1e-13.
        let t = 10_000_000_000_000u64;
        let c1 = t / 2;
        let c2 = t / 2 + 1;
        assert_eq!(
            cmp_sum(&[(c1 as u128, t), (c2 as u128, t)], 1),
            Cmp::Known(Ordering::Greater)
        );
        assert_eq!(
            cmp_sum(&[(c1 as u128, t), (c1 as u128 - 1, t)], 1),
            Cmp::Known(Ordering::Less)
        );
        // Distinct large prime-ish periods, exactly at 1: 1 - 1/p + 1/p.
        let p = 1_000_000_007u64;
        let q = 998_244_353u64;
        assert_eq!(
            cmp_sum(&[((p - 1) as u128, p), (1, p), (0, q)], 1),
            Cmp::Known(Ordering::Equal)
        );
        // 1/q > 1/p: just above 1; 1/(p + 2) < 1/p: just below.
        assert_eq!(
            cmp_sum(&[((p - 1) as u128, p), (1, q)], 1),
            Cmp::Known(Ordering::Greater)
        );
        assert_eq!(
            cmp_sum(&[((p - 1) as u128, p), (1, p + 2)], 1),
            Cmp::Known(Ordering::Less)
        );
        assert_eq!(cmp_sum(&[], 0), Cmp::Known(Ordering::Equal));
    }

    #[test]
    fn products_are_exact() {
        // (9/11 + 1)(1/10 + 1) = 20/11 · 11/10 = 2.
        assert_eq!(
            cmp_product(&[(20, 11), (11, 10)], 2),
            Cmp::Known(Ordering::Equal)
        );
        assert_eq!(
            cmp_product(&[(20, 11), (111, 100)], 2),
            Cmp::Known(Ordering::Greater)
        );
        assert_eq!(
            cmp_product(&[(20, 11), (109, 100)], 2),
            Cmp::Known(Ordering::Less)
        );
    }

    #[test]
    fn big_arithmetic_round_trips() {
        let mut a = Big::from_u128(u128::MAX);
        a.mul_small(u64::MAX);
        let b = a.div_small(u64::MAX);
        assert_eq!(b, Big::from_u128(u128::MAX));
        assert_eq!(a.rem_small(u64::MAX), 0);
        assert_eq!(Big::from_u128(7).mul_u128(1u128 << 100), {
            let mut x = Big::from_u128(7u128 << 36);
            x.mul_small(1 << 63);
            x.mul_small(2);
            x
        });
    }
}
