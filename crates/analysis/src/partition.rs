//! Partitioned scheduling: each task bound to one CPU, each CPU checked by an exact
//! uniprocessor test ([`PerCpu`]), tasks placed by first-fit decreasing utilisation.
//!
//! The simulator's partitioned placement builds the same partition, so a set accepted
//! here is simulated on exactly the CPUs this analysis certified.

use crate::taskset::RtTask;
use crate::tests::{edf_pda, response_time_from, Outcome, Response, Verdict};

fn verdict(
    test: &'static str,
    title: &'static str,
    exact: bool,
    outcome: Outcome,
    why: impl Into<String>,
) -> Verdict {
    Verdict {
        test,
        title,
        exact,
        outcome,
        why: why.into(),
    }
}

fn util(ts: &[RtTask]) -> f64 {
    ts.iter().map(RtTask::utilisation).sum()
}

fn constrained(ts: &[RtTask]) -> bool {
    ts.iter().all(|t| t.d <= t.t)
}

/// The uniprocessor test each CPU gets in [`ffd`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerCpu {
    /// EDF, processor-demand analysis (exact).
    Edf,
    /// Rate-monotonic, response-time analysis (period order).
    Rm,
    /// Deadline-monotonic, response-time analysis (deadline order).
    Dm,
}

/// How a task's CPU is chosen among those where it passes the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// The first CPU (lowest index).
    First,
    /// The most loaded CPU (highest utilisation; ties: lowest index).
    Best,
    /// The least loaded CPU (lowest utilisation; ties: lowest index).
    Worst,
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Σ C/T ≤ 1 over `bin`, exactly: the float sum decides when it is clear of 1 by more
/// than its rounding error (n·2^-52 ≪ 1e-9 for n ≤ 10^5), exact fractions decide near 1.
/// A sum whose exact denominator does not fit in 128 bits is not proven (false).
pub fn utilisation_at_most_one(ts: &[RtTask], bin: &[usize]) -> bool {
    let u: f64 = bin.iter().map(|&i| ts[i].utilisation()).sum();
    if u > 1.0 + 1e-9 {
        return false;
    }
    if u < 1.0 - 1e-9 {
        return true;
    }
    let (mut num, mut den) = (0u128, 1u128);
    for &i in bin {
        let (c, t) = (ts[i].c as u128, ts[i].t as u128);
        let g = gcd(den, t);
        let Some(l) = (den / g).checked_mul(t) else {
            return false;
        };
        let Some(n) = num
            .checked_mul(l / den)
            .and_then(|a| c.checked_mul(l / t).and_then(|b| a.checked_add(b)))
        else {
            return false;
        };
        let g = gcd(n, l).max(1);
        (num, den) = (n / g, l / g);
    }
    num <= den
}

/// The priority key of `how` (smaller = higher priority): period for RM, deadline for DM.
fn key(t: &RtTask, how: PerCpu) -> u64 {
    if how == PerCpu::Dm {
        t.d
    } else {
        t.t
    }
}

/// Whether the tasks `bin` (which passed before `new` was pushed last) still pass the
/// uniprocessor test with `new`.
fn fits_one(ts: &[RtTask], bin: &[usize], new: usize, how: PerCpu, resp: &mut [u64]) -> bool {
    match how {
        // Implicit deadlines: U ≤ 1 is exact (what the demand test concludes, sooner).
        PerCpu::Edf if bin.iter().all(|&i| ts[i].d == ts[i].t) => utilisation_at_most_one(ts, bin),
        PerCpu::Edf => {
            if !utilisation_at_most_one(ts, bin) {
                return false;
            }
            let sub: Vec<RtTask> = bin.iter().map(|&i| ts[i].clone()).collect();
            edf_pda(&sub, 1).outcome == Outcome::Schedulable
        }
        // Above U = 1 nothing fits. Otherwise only `new` and the tasks it can delay
        // (key ≥ its own) need their response times again: `new` first, then the
        // largest keys (the most interference: the likeliest to fail), each starting
        // from its response time before `new` came (`resp`: a
        // lower bound, so the same fixed point in fewer steps). `resp` is updated only
        // when `new` fits.
        PerCpu::Rm | PerCpu::Dm => {
            if !utilisation_at_most_one(ts, bin) {
                return false;
            }
            let k = key(&ts[new], how);
            let mut check: Vec<usize> = bin
                .iter()
                .copied()
                .filter(|&j| key(&ts[j], how) >= k)
                .collect();
            check.sort_by_key(|&j| (j != new, std::cmp::Reverse((key(&ts[j], how), j))));
            let mut found = Vec::with_capacity(check.len());
            for &i in &check {
                let ki = key(&ts[i], how);
                let higher: Vec<usize> = bin
                    .iter()
                    .copied()
                    .filter(|&j| j != i && key(&ts[j], how) <= ki)
                    .collect();
                let start = if i == new { 0 } else { resp[i] };
                match response_time_from(ts, i, &higher, start) {
                    Response::Within(r) => found.push((i, r)),
                    _ => return false,
                }
            }
            for (i, r) in found {
                resp[i] = r;
            }
            true
        }
    }
}

/// First-fit decreasing: tasks by decreasing utilisation (ties: workload order), each to
/// the first CPU where the uniprocessor test (EDF: processor demand; RM/DM: response
/// times) still passes with it. The task indices on each CPU, or the index of a task that
/// fits on none.
pub fn ffd_partition(ts: &[RtTask], m: usize, how: PerCpu) -> Result<Vec<Vec<usize>>, usize> {
    fit_partition(ts, m, how, Fit::First)
}

/// [`ffd_partition`] with another choice among the CPUs where a task fits: best fit (the
/// most loaded) or worst fit (the least loaded), loads compared exactly.
pub fn fit_partition(
    ts: &[RtTask],
    m: usize,
    how: PerCpu,
    fit: Fit,
) -> Result<Vec<Vec<usize>>, usize> {
    let mut order: Vec<usize> = (0..ts.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&ts[a], &ts[b]);
        ((y.c as u128) * (x.t as u128))
            .cmp(&((x.c as u128) * (y.t as u128)))
            .then(a.cmp(&b))
    });
    let mut bins: Vec<Vec<usize>> = vec![Vec::new(); m];
    let mut load = vec![0.0f64; m];
    let mut resp = vec![0u64; ts.len()];
    for i in order {
        // Candidate CPUs in the order the heuristic prefers them (loads as floats: the
        // order only chooses among CPUs the exact test accepts).
        let mut cands: Vec<usize> = (0..m).collect();
        match fit {
            Fit::First => {}
            Fit::Best => cands.sort_by(|&a, &b| load[b].total_cmp(&load[a]).then(a.cmp(&b))),
            Fit::Worst => cands.sort_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b))),
        }
        let mut placed = false;
        for c in cands {
            let bin = &mut bins[c];
            bin.push(i);
            if fits_one(ts, bin, i, how, &mut resp) {
                load[c] += ts[i].utilisation();
                placed = true;
                break;
            }
            bin.pop();
        }
        if !placed {
            return Err(i);
        }
    }
    Ok(bins)
}

/// The test name and title of a partitioning heuristic with its per-CPU test
/// (`ffd-edf`, `ffd-rm`, `ffd-dm`, `bfd-edf`, `wfd-edf`, ...).
pub fn test_name(how: PerCpu, fit: Fit) -> (&'static str, &'static str) {
    match (fit, how) {
        (Fit::First, PerCpu::Edf) => ("ffd-edf", "partitioned EDF, first-fit decreasing"),
        (Fit::First, PerCpu::Rm) => ("ffd-rm", "partitioned RM, first-fit decreasing"),
        (Fit::First, PerCpu::Dm) => ("ffd-dm", "partitioned DM, first-fit decreasing"),
        (Fit::Best, PerCpu::Edf) => ("bfd-edf", "partitioned EDF, best-fit decreasing"),
        (Fit::Best, PerCpu::Rm) => ("bfd-rm", "partitioned RM, best-fit decreasing"),
        (Fit::Best, PerCpu::Dm) => ("bfd-dm", "partitioned DM, best-fit decreasing"),
        (Fit::Worst, PerCpu::Edf) => ("wfd-edf", "partitioned EDF, worst-fit decreasing"),
        (Fit::Worst, PerCpu::Rm) => ("wfd-rm", "partitioned RM, worst-fit decreasing"),
        (Fit::Worst, PerCpu::Dm) => ("wfd-dm", "partitioned DM, worst-fit decreasing"),
    }
}

/// Partitioned scheduling by [`ffd_partition`]. Sufficient: another partition may exist
/// when first-fit decreasing finds none.
pub fn ffd(ts: &[RtTask], m: usize, how: PerCpu) -> Verdict {
    fit_test(ts, m, how, Fit::First)
}

/// Partitioned scheduling by [`fit_partition`] (sufficient).
pub fn fit_test(ts: &[RtTask], m: usize, how: PerCpu, fit: Fit) -> Verdict {
    let (test, title) = test_name(how, fit);
    if how != PerCpu::Edf && !constrained(ts) {
        return verdict(
            test,
            title,
            false,
            Outcome::NotApplicable,
            "needs constrained deadlines (D ≤ T)",
        );
    }
    let u = util(ts);
    // Only a total clearly above m is proven too much; near m the partition decides.
    if u > m as f64 + 1e-9 {
        return verdict(
            test,
            title,
            false,
            Outcome::Unschedulable,
            format!("U = {u:.6} > {m} CPUs"),
        );
    }
    match fit_partition(ts, m, how, fit) {
        Ok(bins) => {
            let loads: Vec<String> = bins
                .iter()
                .map(|b| {
                    format!(
                        "{:.3}",
                        0.0 + b.iter().map(|&i| ts[i].utilisation()).sum::<f64>()
                    )
                })
                .collect();
            verdict(
                test,
                title,
                false,
                Outcome::Schedulable,
                format!("every task placed; CPU loads {}", loads.join(", ")),
            )
        }
        Err(i) => verdict(
            test,
            title,
            false,
            Outcome::NotProven,
            format!(
                "task {} (U = {:.4}) fits on no CPU",
                ts[i].name,
                ts[i].utilisation()
            ),
        ),
    }
}

#[cfg(test)]
mod unit {
    use super::*;
    use crate::tests::response_time;

    /// The incremental first-fit RM (response times re-checked only below the new task,
    /// from their previous values) places every task where checking each whole CPU again
    /// would.
    #[test]
    fn incremental_ffd_rm_matches_a_full_check() {
        use crate::generate::{generate, Deadlines, GenSpec, Periods};
        for seed in 0..200 {
            let spec = GenSpec {
                tasks: 12,
                cpus: 3,
                utilization: 1.5 + (seed % 10) as f64 * 0.15,
                periods: Periods::LogUniform {
                    min: 1_000_000,
                    max: 50_000_000,
                    granularity: 1_000_000,
                },
                deadlines: if seed % 2 == 0 {
                    Deadlines::Implicit
                } else {
                    Deadlines::Constrained { min_ratio: 0.5 }
                },
                seed,
                ..GenSpec::default()
            };
            let ts: Vec<RtTask> = generate(&spec)
                .unwrap()
                .tasks
                .iter()
                .map(|t| RtTask::new(&t.name, t.runtime, t.period, t.deadline))
                .collect();
            let fast = ffd_partition(&ts, 3, PerCpu::Rm);
            // The same first-fit order, each CPU checked whole (every response time from 0).
            let mut order: Vec<usize> = (0..ts.len()).collect();
            order.sort_by(|&a, &b| {
                let (x, y) = (&ts[a], &ts[b]);
                ((y.c as u128) * (x.t as u128))
                    .cmp(&((x.c as u128) * (y.t as u128)))
                    .then(a.cmp(&b))
            });
            let mut bins: Vec<Vec<usize>> = vec![Vec::new(); 3];
            let mut slow = Ok(());
            for i in order {
                let fit = bins.iter_mut().any(|b| {
                    b.push(i);
                    let ok = b.iter().all(|&k| {
                        let higher: Vec<usize> = b
                            .iter()
                            .copied()
                            .filter(|&j| j != k && ts[j].t <= ts[k].t)
                            .collect();
                        matches!(response_time(&ts, k, &higher), Response::Within(_))
                    });
                    if !ok {
                        b.pop();
                    }
                    ok
                });
                if !fit {
                    slow = Err(i);
                    break;
                }
            }
            match (fast, slow) {
                (Ok(f), Ok(())) => assert_eq!(f, bins, "seed {seed}"),
                (Err(a), Err(b)) => assert_eq!(a, b, "seed {seed}"),
                (f, s) => panic!("seed {seed}: {f:?} vs {s:?}"),
            }
        }
    }
}
