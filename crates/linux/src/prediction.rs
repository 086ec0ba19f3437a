//! The simulator's prediction against a traced real run, metric by metric: the same
//! quantities counted the same way on both sides (the simulated schedule and the real
//! one rebuilt from the kernel trace, [`crate::traced`]), with the prediction error.
//!
//! Only the periodic tasks' jobs enter the job metrics (responses, release-to-start
//! latencies, misses, preemptions, migrations, the order of completions): they are the
//! jobs both sides release at the same instants. The error is relative to the real value, `(simulated − real) /
//! real`; where the real value is 0 it is 0 when the simulator also says 0, else
//! undefined (the table then shows the difference).

use crate::traced::TracedRun;
use schedlab_sim::SimResult;
use schedlab_trace::Schedule;
use serde::Serialize;

/// One metric on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricRow {
    /// Stable key (`deadline_misses`, `task_switches_per_cpu_per_s`, ...).
    pub key: &'static str,
    /// What it is, for tables.
    pub label: &'static str,
    /// The simulator's value.
    pub simulated: Option<f64>,
    /// The kernel's value, from the trace.
    pub real: Option<f64>,
    /// (simulated − real) / real; see the module documentation.
    pub error: Option<f64>,
}

/// Jobs of periodic tasks on one side: (response, release-to-start) per job, and misses.
struct JobFigures {
    released: u64,
    misses: u64,
    responses: Vec<u64>,
    latencies: Vec<u64>,
}

fn median(v: Vec<u64>) -> Option<f64> {
    crate::traced::median(v).map(|x| x as f64)
}

fn mean(v: &[u64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<u64>() as f64 / v.len() as f64)
}

fn sim_jobs(s: &Schedule, periodic: &[bool]) -> JobFigures {
    let jobs: Vec<_> = s
        .jobs
        .iter()
        .filter(|j| periodic.get(j.task).copied().unwrap_or(false))
        .collect();
    JobFigures {
        released: jobs.len() as u64,
        misses: jobs.iter().filter(|j| j.missed).count() as u64,
        responses: jobs.iter().filter_map(|j| j.response()).collect(),
        latencies: jobs
            .iter()
            .filter_map(|j| j.start.map(|st| st - j.release))
            .collect(),
    }
}

fn real_jobs(t: &TracedRun) -> JobFigures {
    JobFigures {
        released: t.jobs.len() as u64,
        misses: t.jobs.iter().filter(|j| j.row.missed).count() as u64,
        responses: t.jobs.iter().filter_map(|j| j.response()).collect(),
        latencies: t.jobs.iter().filter_map(|j| j.start_latency()).collect(),
    }
}

/// The relative prediction error (module documentation).
pub fn error(simulated: f64, real: f64) -> Option<f64> {
    if real != 0.0 {
        Some((simulated - real) / real)
    } else if simulated == 0.0 {
        Some(0.0)
    } else {
        None
    }
}

/// Compare a simulation (`sim`, with its schedule `sim_schedule`) with the traced real
/// run `real` of the same workload; `periodic[i]`: whether task `i` is periodic.
pub fn compare(
    sim: &SimResult,
    sim_schedule: &Schedule,
    real: &TracedRun,
    periodic: &[bool],
) -> Vec<MetricRow> {
    let (sj, rj) = (sim_jobs(sim_schedule, periodic), real_jobs(real));
    let m = &real.metrics;
    let of_periodic = |f: fn(&schedlab_sim::TaskResult) -> u64| -> f64 {
        sim.tasks
            .iter()
            .enumerate()
            .filter(|(i, _)| periodic.get(*i).copied().unwrap_or(false))
            .map(|(_, t)| f(t))
            .sum::<u64>() as f64
    };
    let ms = |v: Option<f64>| v.map(|x| x / 1e6);
    let rows: [(&'static str, &'static str, Option<f64>, Option<f64>); 12] = [
        (
            "jobs_released",
            "jobs released",
            Some(sj.released as f64),
            Some(rj.released as f64),
        ),
        (
            "deadline_misses",
            "deadline misses",
            Some(sj.misses as f64),
            Some(rj.misses as f64),
        ),
        (
            "task_switches_per_cpu_per_s",
            "task-level switches/CPU/s",
            Some(sim.task_switches_per_cpu_per_s),
            Some(m.task_switches_per_cpu_per_s),
        ),
        (
            "context_switches_per_cpu_per_s",
            "switches/CPU/s (idle included)",
            Some(sim.context_switches_per_cpu_per_s),
            Some(m.context_switches_per_cpu_per_s),
        ),
        (
            "preemptions",
            "preemptions",
            Some(of_periodic(|t| t.preemptions)),
            Some(m.preemptions as f64),
        ),
        (
            "migrations",
            "migrations",
            Some(of_periodic(|t| t.migrations)),
            Some(m.migrations as f64),
        ),
        (
            "median_response_ms",
            "median response (ms)",
            ms(median(sj.responses.clone())),
            ms(median(rj.responses.clone())),
        ),
        (
            "mean_response_ms",
            "mean response (ms)",
            ms(mean(&sj.responses)),
            ms(mean(&rj.responses)),
        ),
        (
            "median_start_latency_ms",
            "median release-to-start (ms)",
            ms(median(sj.latencies.clone())),
            ms(median(rj.latencies.clone())),
        ),
        (
            "max_start_latency_ms",
            "max release-to-start (ms)",
            ms(sj.latencies.iter().max().map(|&x| x as f64)),
            ms(rj.latencies.iter().max().map(|&x| x as f64)),
        ),
        (
            "completion_order",
            "jobs completing in the simulated order (share)",
            Some(1.0),
            order_agreement(sim_schedule, real, periodic),
        ),
        (
            "other_work_share",
            "other work on the run's CPUs (share)",
            None,
            Some(other_share(real)),
        ),
    ];
    rows.into_iter()
        .map(|(key, label, simulated, real)| MetricRow {
            key,
            label,
            simulated,
            real,
            error: match (simulated, real) {
                (Some(s), Some(r)) => error(s, r),
                _ => None,
            },
        })
        .collect()
}

/// Of the pairs of periodic jobs whose simulated lifetimes (release to completion)
/// overlap and whose simulated completions differ — the jobs the scheduler ordered — the
/// share the kernel completed in the simulated order; None when no such pair completed
/// on both sides.
pub fn order_agreement(sim: &Schedule, real: &TracedRun, periodic: &[bool]) -> Option<f64> {
    let finish_real: std::collections::HashMap<(usize, u64), u64> = real
        .jobs
        .iter()
        .filter_map(|j| Some(((j.row.task, j.row.job), j.row.finish?)))
        .collect();
    // (release, simulated finish, real finish), by release.
    let jobs: Vec<(u64, u64, u64)> = sim
        .jobs
        .iter()
        .filter(|j| periodic.get(j.task).copied().unwrap_or(false))
        .filter_map(|j| Some((j.release, j.finish?, *finish_real.get(&(j.task, j.job))?)))
        .collect();
    concordance(jobs)
}

/// Of jobs `(release, simulated finish, real finish)`, the pairs whose simulated
/// lifetimes overlap, and the share of them finished in the same order on both sides.
/// Pairs the simulation completes at the same instant are left out: a tie orders
/// nothing (twin tasks on two CPUs), and the kernel's order of such a pair is a coin
/// flip decided by wake-up jitter.
fn concordance(mut jobs: Vec<(u64, u64, u64)>) -> Option<f64> {
    jobs.sort_unstable();
    let (mut pairs, mut same) = (0u64, 0u64);
    for (k, a) in jobs.iter().enumerate() {
        // Later releases only, while they start before `a` completes.
        for b in jobs[k + 1..].iter().take_while(|b| b.0 < a.1) {
            if a.1 == b.1 {
                continue;
            }
            pairs += 1;
            same += ((a.1 < b.1) == (a.2 <= b.2)) as u64;
        }
    }
    (pairs > 0).then(|| same as f64 / pairs as f64)
}

/// Share of the run's CPU time taken by other work (kernel threads, the runner, other
/// processes), which the simulator does not have.
pub fn other_share(t: &TracedRun) -> f64 {
    let other: u64 = t.metrics.per_cpu.iter().map(|c| c.other_ns).sum();
    let total = t.metrics.per_cpu.len() as f64 * t.schedule.duration as f64;
    if total > 0.0 {
        other as f64 / total
    } else {
        0.0
    }
}

fn num(v: Option<f64>) -> String {
    match v {
        None => "-".to_string(),
        Some(x) if x.fract() == 0.0 && x.abs() < 1e12 => format!("{x:.0}"),
        Some(x) if x.abs() < 1.0 => format!("{x:.4}"),
        Some(x) => format!("{x:.3}"),
    }
}

/// Each row as four cells: label, simulated, real, error (a percentage, or the
/// difference where the real value is 0).
pub fn cells(rows: &[MetricRow]) -> Vec<[String; 4]> {
    rows.iter()
        .map(|r| {
            let err = match (r.error, r.simulated, r.real) {
                (Some(e), _, _) => format!("{:+.1}%", e * 100.0),
                (None, Some(s), Some(x)) => format!("{:+} (real 0)", s - x),
                _ => "-".into(),
            };
            [r.label.to_string(), num(r.simulated), num(r.real), err]
        })
        .collect()
}

/// The rows as a text table.
pub fn render(rows: &[MetricRow]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<38} {:>12} {:>12} {:>12}",
        "metric", "simulated", "real", "error"
    );
    for [label, sim, real, err] in cells(rows) {
        let _ = writeln!(out, "{label:<38} {sim:>12} {real:>12} {err:>12}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_agreement_counts_overlapping_pairs_only() {
        // a and b overlap and swap order for real; c starts after both ended.
        let a = (0, 10, 12);
        let b = (5, 15, 11);
        let c = (20, 30, 30);
        assert_eq!(concordance(vec![c, b, a]), Some(0.0));
        // A third overlapping job kept in order: 2 of 3 pairs agree.
        let d = (8, 20, 25);
        assert_eq!(concordance(vec![a, b, d]), Some(2.0 / 3.0));
        assert_eq!(concordance(vec![a, c]), None);
        // Twins completing at the same simulated instant order nothing, whichever the
        // kernel finished first.
        let (e, f) = ((0, 10, 11), (0, 10, 10));
        assert_eq!(concordance(vec![e, f]), None);
        assert_eq!(concordance(vec![e, f, (2, 12, 9)]), Some(0.0));
    }

    #[test]
    fn errors_are_relative_to_the_real_value() {
        assert_eq!(error(12.0, 10.0), Some(0.2));
        assert_eq!(error(0.0, 0.0), Some(0.0));
        assert_eq!(error(3.0, 0.0), None);
    }
}
