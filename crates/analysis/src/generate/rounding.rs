//! Runtimes in whole nanoseconds that keep the set's utilisation at or below its target
//! and every task at or below its bound, decided in integer arithmetic.
//!
//! Rounding each runtime to the nearest nanosecond lands about half the sets above the
//! target (by up to n × 0.5 ns / period), enough for a test of U ≤ m to call a set at
//! U = m unschedulable. Here each runtime is first rounded down (at least 1 ns, at most
//! the bound), then nanoseconds are handed back, one task at a time, while the total
//! provably stays at or below the target.
//!
//! "Provably": the exact sum Σ C_i/T_i is a rational whose denominator (the periods'
//! least common multiple) can have thousands of digits, so it is bounded instead: each
//! term is taken in units of 2^-96 as ⌊C_i·2^96/T_i⌋ plus 1 when the division is inexact
//! (an upper bound), and the sum of these upper bounds is compared with ⌊U·2^96⌋ (U, an
//! f64, is an exact binary fraction). A nanosecond is handed back only when this upper
//! bound stays at or below ⌊U·2^96⌋, so Σ C_i/T_i ≤ U holds exactly. When no task can
//! take another nanosecond, the bounds are tight enough (n·2^-96 of slack against the
//! 2^-60 of one nanosecond on the longest period a workload takes) that the total is
//! less than Σ 1/T_i below U: never more than one nanosecond per task.

use schedlab_model::{format_ns, Ns};
use std::cmp::Ordering;

/// A finite non-negative f64 as the exact binary fraction `mantissa · 2^exp`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dyadic {
    mantissa: u128,
    exp: i32,
}

impl Dyadic {
    /// `x` exactly (finite, ≥ 0; anything else is taken as 0).
    pub(crate) fn of(x: f64) -> Dyadic {
        if !(x.is_finite() && x > 0.0) {
            return Dyadic {
                mantissa: 0,
                exp: 0,
            };
        }
        let bits = x.to_bits();
        let raw_exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1u64 << 52) - 1);
        let (m, e) = if raw_exp == 0 {
            (frac, -1074)
        } else {
            (frac | (1u64 << 52), raw_exp - 1075)
        };
        Dyadic {
            mantissa: m as u128,
            exp: e,
        }
    }

    /// `self · k` exactly (k < 2^64, so the mantissa stays below 2^117).
    pub(crate) fn times(self, k: u64) -> Dyadic {
        Dyadic {
            mantissa: self.mantissa * k as u128,
            exp: self.exp,
        }
    }

    /// ⌊self · 2^shift⌋, saturating at u128::MAX.
    fn floor_scaled(self, shift: i32) -> u128 {
        let e = self.exp + shift;
        if self.mantissa == 0 {
            0
        } else if e >= 0 {
            if e >= 128 || self.mantissa.leading_zeros() < e as u32 {
                u128::MAX
            } else {
                self.mantissa << e
            }
        } else if e <= -128 {
            0
        } else {
            self.mantissa >> (-e)
        }
    }
}

impl PartialEq for Dyadic {
    fn eq(&self, other: &Dyadic) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Dyadic {}
impl PartialOrd for Dyadic {
    fn partial_cmp(&self, other: &Dyadic) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Dyadic {
    fn cmp(&self, other: &Dyadic) -> Ordering {
        let (a, b) = (self, other);
        match (a.mantissa == 0, b.mantissa == 0) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        // Compare a.m·2^(a.e − b.e) with b.m; shift the smaller exponent's side up.
        // Mantissas are below 2^117, so a difference of 128 or more decides alone.
        let d = a.exp - b.exp;
        if d >= 0 {
            if d >= 128 || a.mantissa.leading_zeros() < d as u32 {
                return Ordering::Greater;
            }
            (a.mantissa << d).cmp(&b.mantissa)
        } else {
            let d = -d;
            if d >= 128 || b.mantissa.leading_zeros() < d as u32 {
                return Ordering::Less;
            }
            a.mantissa.cmp(&(b.mantissa << d))
        }
    }
}

/// Fractional bits of the fixed-point sums.
const SCALE_BITS: i32 = 96;

/// Largest least common multiple of the periods for which a sum that the fixed-point
/// bounds cannot decide is decided exactly (N/L against U in 128 bits).
const MAX_EXACT_LCM: u128 = 1 << 70;

/// Upper bound of S/T in units of 2^-96: ⌊S·2^96/T⌋, plus 1 when inexact (S < 2^100).
fn level(s: u128, t: Ns) -> u128 {
    let t128 = t as u128;
    let whole = s / t128;
    let r = s % t128;
    // r·2^96/T in two steps so that nothing overflows 128 bits (r, T < 2^64).
    let a = r << 32;
    let (q1, r1) = (a / t128, a % t128);
    let b = r1 << 64;
    let (q2, r2) = (b / t128, b % t128);
    (whole << 96) + (q1 << 64) + q2 + u128::from(r2 != 0)
}

/// ⌊x·t⌋ for a finite x ≥ 0, saturating at `Ns::MAX`.
fn floor_mul(x: f64, t: Ns) -> Ns {
    let v = Dyadic::of(x).times(t).floor_scaled(0);
    Ns::try_from(v).unwrap_or(Ns::MAX)
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The runtimes summed per distinct period, so that Σ C_i/T_i = Σ_g S_g/T_g has one
/// rounded term per period rather than per task, with the decision "still ≤ U?".
struct Ledger {
    /// Distinct periods, ascending.
    periods: Vec<Ns>,
    /// Σ C_i over the tasks of each period.
    sums: Vec<u128>,
    /// `level(sums[g], periods[g])`.
    levels: Vec<u128>,
    /// Σ levels: an upper bound of the total in units of 2^-96.
    upper: u128,
    /// ⌊U·2^96⌋.
    target: u128,
    /// U exactly, its mantissa stripped of trailing zeros.
    total: Dyadic,
    /// The periods' least common multiple, when at most [`MAX_EXACT_LCM`].
    lcm: Option<u128>,
}

impl Ledger {
    fn new(periods: Vec<Ns>, sums: Vec<u128>, total: f64) -> Ledger {
        let levels: Vec<u128> = sums
            .iter()
            .zip(&periods)
            .map(|(&s, &t)| level(s, t))
            .collect();
        let mut lcm = Some(1u128);
        for &t in &periods {
            lcm = lcm.and_then(|l| {
                let t = t as u128;
                (l / gcd(l, t))
                    .checked_mul(t)
                    .filter(|&v| v <= MAX_EXACT_LCM)
            });
        }
        let mut d = Dyadic::of(total);
        if d.mantissa != 0 {
            let z = d.mantissa.trailing_zeros();
            d = Dyadic {
                mantissa: d.mantissa >> z,
                exp: d.exp + z as i32,
            };
        }
        Ledger {
            upper: levels.iter().sum(),
            periods,
            sums,
            levels,
            target: Dyadic::of(total).floor_scaled(SCALE_BITS),
            total: d,
            lcm,
        }
    }

    /// Σ S_g/T_g ≤ U, decided: by the bounds where they suffice, exactly through the
    /// periods' common multiple otherwise, and "no" where neither can tell.
    fn within(&self) -> bool {
        if self.upper <= self.target {
            return true;
        }
        // Σ⌊·⌋ ≥ upper − #periods; above ⌊U·2^96⌋ it is above U.
        if self.upper - self.periods.len() as u128 > self.target {
            return false;
        }
        let Some(l) = self.lcm else {
            return false;
        };
        let mut num: u128 = 0;
        for (&s, &t) in self.sums.iter().zip(&self.periods) {
            match s
                .checked_mul(l / t as u128)
                .and_then(|v| num.checked_add(v))
            {
                Some(v) => num = v,
                None => return false,
            }
        }
        // num / l ≤ m·2^e  ⇔  num ≤ (m·l)·2^e
        let Some(ml) = self.total.mantissa.checked_mul(l) else {
            return false;
        };
        Dyadic {
            mantissa: num,
            exp: 0,
        } <= Dyadic {
            mantissa: ml,
            exp: self.total.exp,
        }
    }

    /// Add `delta` ns to period group `g`'s sum.
    fn shift(&mut self, g: usize, delta: i128) {
        let s = (self.sums[g] as i128 + delta) as u128;
        let new = level(s, self.periods[g]);
        self.upper = self.upper - self.levels[g] + new;
        self.sums[g] = s;
        self.levels[g] = new;
    }

    /// Gap to the target in units of 2^-96 (0 when over).
    fn gap(&self) -> u128 {
        self.target.saturating_sub(self.upper)
    }
}

/// Whole-nanosecond runtimes for the drawn utilisations `utils` and the periods: each in
/// `[1, ⌊bound·T_i⌋]`, their utilisation Σ C_i/T_i at most `total` and less than
/// Σ 1/T_i below it. An error when no such runtimes exist (a bound below 1 ns on a
/// period, or a total too small for every task's 1 ns).
pub(crate) fn runtimes(
    utils: &[f64],
    periods: &[Ns],
    bound: f64,
    total: f64,
) -> Result<Vec<Ns>, String> {
    let n = utils.len();
    let mut caps = Vec::with_capacity(n);
    for &t in periods {
        let cap = floor_mul(bound, t).min(t);
        if cap == 0 {
            return Err(format!(
                "max_task_utilization {bound} on a period of {} is less than 1 ns of runtime; use longer periods or a larger bound",
                format_ns(t)
            ));
        }
        caps.push(cap);
    }
    let mut c: Vec<Ns> = utils
        .iter()
        .zip(periods)
        .zip(&caps)
        .map(|((&u, &t), &cap)| floor_mul(u.max(0.0), t).clamp(1, cap))
        .collect();
    let mut distinct = periods.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let group: Vec<usize> = periods
        .iter()
        .map(|t| distinct.binary_search(t).unwrap_or(0))
        .collect();
    let mut sums = vec![0u128; distinct.len()];
    for (&g, &ci) in group.iter().zip(&c) {
        sums[g] += ci as u128;
    }
    let mut ledger = Ledger::new(distinct, sums, total);
    // How far each runtime is below its drawn value (negative where 1 ns was imposed).
    let rem: Vec<f64> = utils
        .iter()
        .zip(periods)
        .zip(&c)
        .map(|((&u, &t), &ci)| u * t as f64 - ci as f64)
        .collect();
    // Step of a pass after the first: the nanoseconds per task that a gap of `gap`
    // units of 2^-96 spread over n tasks is worth on period t. The first pass moves
    // 1 ns per task (a runtime then stays within 1 ns of its drawn value); larger steps
    // only close a gap that floating-point sums left beyond one nanosecond per task.
    let share = |pass: usize, gap: u128, t: Ns| -> Ns {
        let ns = gap as f64 * t as f64 / 2f64.powi(SCALE_BITS) / n as f64;
        if pass > 0 && ns >= 2.0 {
            ns as Ns
        } else {
            1
        }
    };
    if !ledger.within() {
        // Over (1 ns imposed on tasks drawn below it): take back from the runtimes most
        // above their drawn values first.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| rem[a].total_cmp(&rem[b]).then(a.cmp(&b)));
        for pass in 0.. {
            if ledger.within() {
                break;
            }
            let mut changed = false;
            for &i in &order {
                if ledger.within() {
                    break;
                }
                if c[i] > 1 {
                    let over = ledger.upper.saturating_sub(ledger.target);
                    let step = share(pass, over, periods[i]).min(c[i] - 1);
                    ledger.shift(group[i], -(step as i128));
                    c[i] -= step;
                    changed = true;
                }
            }
            if !changed {
                return Err(too_small(total, periods));
            }
        }
    }
    // Under: hand nanoseconds back, to the runtimes most below their drawn values first.
    // A pass in which some task could not take its step ends the rounding: the total is
    // then less than one nanosecond of that task's period below the target. Only when
    // every task took its step (a floating-point shortfall of the drawn values beyond
    // one nanosecond per task) does another pass follow.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| rem[b].total_cmp(&rem[a]).then(a.cmp(&b)));
    for pass in 0.. {
        let mut refused = false;
        let mut changed = false;
        for &i in &order {
            if c[i] >= caps[i] {
                continue;
            }
            let step = share(pass, ledger.gap(), periods[i]).min(caps[i] - c[i]);
            let mut took = false;
            for s in [step, 1] {
                ledger.shift(group[i], s as i128);
                if ledger.within() {
                    c[i] += s;
                    took = true;
                    break;
                }
                ledger.shift(group[i], -(s as i128));
                if s == 1 {
                    break;
                }
            }
            changed |= took;
            refused |= !took;
        }
        if refused || !changed {
            break;
        }
    }
    Ok(c)
}

fn too_small(total: f64, periods: &[Ns]) -> String {
    let floor: f64 = periods.iter().map(|&t| 1.0 / t as f64).sum();
    format!(
        "utilization {total} is too small for {} tasks of at least 1 ns each on the drawn periods (they need {floor:.3e}); use a larger utilization, fewer tasks or longer periods",
        periods.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dyadic_compares_exactly() {
        // 10 × 0.1 is 1.0 in floating point, but the double 0.1 is above 1/10.
        assert_eq!(10.0 * 0.1, 1.0);
        assert!(Dyadic::of(1.0) < Dyadic::of(0.1).times(10));
        assert_eq!(Dyadic::of(0.5).times(4), Dyadic::of(2.0));
        assert!(Dyadic::of(1e-300) > Dyadic::of(0.0));
        assert!(Dyadic::of(1e300) > Dyadic::of(1.0).times(u64::MAX));
    }

    #[test]
    fn level_is_an_upper_bound_in_2_pow_minus_96() {
        assert_eq!(level(1, 2), 1u128 << 95);
        assert_eq!(level(7, 2), 7u128 << 95);
        assert_eq!(level(3, 3), 1u128 << 96);
        // 1/3 is inexact: ⌊2^96/3⌋ + 1.
        assert_eq!(level(1, 3), (1u128 << 96) / 3 + 1);
    }

    #[test]
    fn by_hand() {
        // U = 0.5 on periods 3 and 5 ns: 1/3 + 1/5 = 8/15 > 0.5, so 1 ns each is too
        // much; on 4 and 4 ns: drawn 0.3 / 0.2 → ⌊1.2⌋ = 1, ⌊0.8⌋ → 1; 2/4 = 0.5 exactly.
        assert!(runtimes(&[0.25, 0.25], &[3, 5], 1.0, 0.5)
            .unwrap_err()
            .contains("too small"));
        assert_eq!(runtimes(&[0.3, 0.2], &[4, 4], 1.0, 0.5), Ok(vec![1, 1]));
        // Drawn 0.55 + 0.45 of 1000 ns, total 1: 550 + 450 (nothing to hand back).
        assert_eq!(
            runtimes(&[0.55, 0.45], &[1000, 1000], 1.0, 1.0),
            Ok(vec![550, 450])
        );
        // 1/2 + 1/3 + 1/6 = 1 exactly, though 1/3 and 1/6 are inexact in binary.
        assert_eq!(
            runtimes(&[0.5, 0.3, 0.1], &[2, 3, 6], 1.0, 1.0),
            Ok(vec![1, 1, 1])
        );
        // Drawn slightly short of the total (floating sum 0.9999): handed back to reach
        // exactly 1 with the largest remainders first.
        assert_eq!(
            runtimes(&[0.33333, 0.33333, 0.33333], &[3000, 3000, 3000], 1.0, 1.0),
            Ok(vec![1000, 1000, 1000])
        );
        // The bound caps a task: 0.1 of 15 ns is 1.5 → 1 ns.
        assert_eq!(
            runtimes(&[0.1, 0.05], &[15, 100], 0.1, 0.15),
            Ok(vec![1, 8])
        );
    }
}
