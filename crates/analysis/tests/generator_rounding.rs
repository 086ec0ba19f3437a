//! Rounding runtimes to whole nanoseconds, checked exactly over thousands of random specs
//! (every method, random task counts, totals, bounds and periods): a generated set never
//! exceeds its target utilisation or a task's bound, and is never more than one
//! nanosecond per task below the target (U − Σ C_i/T_i ≤ Σ 1/T_i).
//!
//! The check is independent of the generator's own fixed-point bounds: the periods are
//! drawn so that their least common multiple L stays below 2^40, and every inequality is
//! decided on integers, Σ C_i·(L/T_i) against U·L with U the exact binary fraction that
//! the f64 is.

use proptest::prelude::*;
use schedlab_analysis::{generate, GenSpec, Method, Periods, METHODS};

const MS: u64 = 1_000_000;

/// x = m · 2^e exactly (x finite and > 0).
fn dyadic(x: f64) -> (u128, i32) {
    let bits = x.to_bits();
    let raw = ((bits >> 52) & 0x7ff) as i32;
    let frac = (bits & ((1 << 52) - 1)) as u128;
    assert!(raw > 0, "{x} is subnormal");
    (frac | (1 << 52), raw - 1075)
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Compare num/den with m·2^e: the sign of num/den − m·2^e, on integers.
fn cmp_frac(num: u128, den: u128, x: f64) -> std::cmp::Ordering {
    let (m, e) = dyadic(x);
    // num/den vs m·2^e  ⇔  num·2^(−e) vs m·den  (e < 0 in every case here).
    assert!((-120..0).contains(&e), "{x}");
    let left = num
        .checked_mul(1u128 << (-e) as u32)
        .expect("num·2^-e fits 128 bits");
    let right = m.checked_mul(den).expect("m·L fits 128 bits");
    left.cmp(&right)
}

fn periods_of(kind: u8, a: u64, b: u64, c: u64) -> Periods {
    match kind {
        // Divisors of one of a few hyperperiods, within a random sub-range.
        0 => {
            let h = [3600, 1000, 720, 2520][(a % 4) as usize] * MS;
            let lo = 1 + b % 20;
            Periods::Divisors {
                hyperperiod: h,
                min: lo * MS,
                max: h,
                granularity: MS,
            }
        }
        // Log-uniform in whole milliseconds within 1..16 ms (lcm(1..16) ms < 2^40 ns).
        1 => {
            let lo = 1 + a % 8;
            Periods::LogUniform {
                min: lo * MS,
                max: (lo + b % 9) * MS,
                granularity: MS,
            }
        }
        // A list of up to three periods in [1000, 8191] ns.
        _ => {
            let p = |v: u64| 1000 + v % 7192;
            let mut list = vec![p(a), p(b), p(c)];
            list.truncate(1 + (a % 3) as usize);
            Periods::Choice(list)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn rounded_sets_stay_at_or_below_target_and_bound_and_within_a_ns_per_task(
        seed in any::<u64>(),
        tasks in 1usize..40,
        method in 0usize..4,
        bound_pick in 0usize..4,
        bound_free in 0.05f64..1.0,
        fill in 0.01f64..1.0,
        at_top in any::<bool>(),
        kind in 0u8..3,
        pa in any::<u64>(), pb in any::<u64>(), pc in any::<u64>(),
    ) {
        let method = METHODS[method];
        let bound = [1.0, 0.5, 0.1, bound_free][bound_pick];
        let top = bound * tasks as f64;
        let mut utilization = if at_top { top } else { top * fill };
        if method == Method::Uunifast {
            utilization = utilization.min(bound);
        }
        let spec = GenSpec {
            tasks,
            utilization,
            max_task_utilization: bound,
            method,
            periods: periods_of(kind, pa, pb, pc),
            seed,
            ..GenSpec::default()
        };
        let set = match generate(&spec) {
            Ok(set) => set,
            Err(e) => {
                // Refusals that are right: U = n·b in floating point above the exact
                // n·b, a rejection sampler that found no fit, a total too small for
                // 1 ns per task.
                prop_assert!(
                    e.contains("cannot be split")
                        || e.contains("none of 10000 draws")
                        || e.contains("too small"),
                    "{spec:?}: {e}"
                );
                return Ok(());
            }
        };
        prop_assert_eq!(set.tasks.len(), tasks);
        let l = set
            .tasks
            .iter()
            .fold(1u128, |l, t| l / gcd(l, t.period as u128) * t.period as u128);
        prop_assert!(l < 1 << 40, "lcm {l}");
        let (mb, eb) = dyadic(bound);
        let (mut num, mut per_ns) = (0u128, 0u128);
        for t in &set.tasks {
            prop_assert!(t.runtime >= 1 && t.runtime <= t.period, "{t:?}");
            // C/T ≤ b  ⇔  C·2^(−eb) ≤ mb·T
            prop_assert!(
                (t.runtime as u128) << (-eb) as u32 <= mb * t.period as u128,
                "{t:?} above the bound {bound}"
            );
            num += t.runtime as u128 * (l / t.period as u128);
            per_ns += l / t.period as u128;
        }
        // Σ C/T ≤ U
        prop_assert!(
            cmp_frac(num, l, utilization).is_le(),
            "{spec:?}: Σ C/T = {num}/{l} above {utilization}"
        );
        // U ≤ Σ C/T + Σ 1/T
        prop_assert!(
            cmp_frac(num + per_ns, l, utilization).is_ge(),
            "{spec:?}: Σ C/T = {num}/{l} more than 1 ns per task below {utilization}"
        );
    }
}

#[test]
fn harmonic_sets_at_u_2_never_exceed_2() {
    // Periods 10, 20 and 40 ms, U = 2: in units of 1 ns per 40 ms the total is an
    // integer, so "at most U" and "less than 1 ns per task below" are hand-checkable.
    // Round-to-nearest put about half of such sets above 2.
    for method in [
        Method::UunifastDiscard,
        Method::Randfixedsum,
        Method::Tilted,
    ] {
        for seed in 0..20 {
            let spec = GenSpec {
                tasks: 8,
                utilization: 2.0,
                method,
                periods: Periods::Choice(vec![10 * MS, 20 * MS, 40 * MS]),
                seed,
                ..GenSpec::default()
            };
            let set = generate(&spec).unwrap();
            let per_40ms = |t: &schedlab_analysis::GenTask| 40 * MS / t.period;
            let sum: u64 = set.tasks.iter().map(|t| t.runtime * per_40ms(t)).sum();
            let slack: u64 = set.tasks.iter().map(per_40ms).sum();
            assert!(sum <= 80 * MS, "{} seed {seed}: {sum}", method.name());
            assert!(
                sum + slack > 80 * MS,
                "{} seed {seed}: {sum}",
                method.name()
            );
        }
    }
}
