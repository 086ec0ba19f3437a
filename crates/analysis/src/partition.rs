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
}

/// Whether the tasks `bin` (which passed before `new` was pushed last) still pass the
/// uniprocessor test with `new`.
fn fits_one(ts: &[RtTask], bin: &[usize], new: usize, how: PerCpu, resp: &mut [u64]) -> bool {
    match how {
        // Implicit deadlines: U ≤ 1 is exact (what the demand test concludes, sooner).
        PerCpu::Edf if bin.iter().all(|&i| ts[i].d == ts[i].t) => {
            bin.iter().map(|&i| ts[i].utilisation()).sum::<f64>() <= 1.0 + 1e-12
        }
        PerCpu::Edf => {
            let sub: Vec<RtTask> = bin.iter().map(|&i| ts[i].clone()).collect();
            edf_pda(&sub, 1).outcome == Outcome::Schedulable
        }
        // Above U = 1 nothing fits. Otherwise only `new` and the tasks it can delay
        // (period ≥ its own) need their response times again: `new` first, then the
        // longest periods (the most interference: the likeliest to fail), each starting
        // from its response time before `new` came (`resp`: a
        // lower bound, so the same fixed point in fewer steps). `resp` is updated only
        // when `new` fits.
        PerCpu::Rm => {
            if bin.iter().map(|&i| ts[i].utilisation()).sum::<f64>() > 1.0 + 1e-12 {
                return false;
            }
            let key = ts[new].t;
            let mut check: Vec<usize> = bin.iter().copied().filter(|&j| ts[j].t >= key).collect();
            check.sort_by_key(|&j| (j != new, std::cmp::Reverse((ts[j].t, j))));
            let mut found = Vec::with_capacity(check.len());
            for &i in &check {
                let higher: Vec<usize> = bin
                    .iter()
                    .copied()
                    .filter(|&j| j != i && ts[j].t <= ts[i].t)
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
/// the first CPU where the uniprocessor test (EDF: processor demand; RM: response times)
/// still passes with it. The task indices on each CPU, or the index of a task that fits
/// on none.
pub fn ffd_partition(ts: &[RtTask], m: usize, how: PerCpu) -> Result<Vec<Vec<usize>>, usize> {
    let mut order: Vec<usize> = (0..ts.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&ts[a], &ts[b]);
        ((y.c as u128) * (x.t as u128))
            .cmp(&((x.c as u128) * (y.t as u128)))
            .then(a.cmp(&b))
    });
    let mut bins: Vec<Vec<usize>> = vec![Vec::new(); m];
    let mut resp = vec![0u64; ts.len()];
    for i in order {
        let mut placed = false;
        for bin in bins.iter_mut() {
            bin.push(i);
            if fits_one(ts, bin, i, how, &mut resp) {
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

/// Partitioned scheduling by [`ffd_partition`]. Sufficient: another partition may exist
/// when first-fit decreasing finds none.
pub fn ffd(ts: &[RtTask], m: usize, how: PerCpu) -> Verdict {
    let (test, title) = match how {
        PerCpu::Edf => ("ffd-edf", "partitioned EDF, first-fit decreasing"),
        PerCpu::Rm => ("ffd-rm", "partitioned RM, first-fit decreasing"),
    };
    if how == PerCpu::Rm && !constrained(ts) {
        return verdict(
            test,
            title,
            false,
            Outcome::NotApplicable,
            "needs constrained deadlines (D ≤ T)",
        );
    }
    let u = util(ts);
    if u > m as f64 + 1e-12 {
        return verdict(
            test,
            title,
            false,
            Outcome::Unschedulable,
            format!("U = {u:.6} > {m} CPUs"),
        );
    }
    match ffd_partition(ts, m, how) {
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
