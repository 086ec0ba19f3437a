//! `platform.job_costs`: what each job costs a real machine beyond its own work, so that
//! the simulator predicts what `schedlab run` measures (docs/fidelity.md).
//!
//! A job run by schedlab's runner is a thread that returns from `clock_nanosleep` at its
//! release, reads its clocks, burns its execution time while reading its own CPU clock,
//! reads its clocks again and goes back to sleep. The kernel charges all of that CPU time
//! to the thread, and so to its SCHED_DEADLINE budget; `schedlab calibrate` measures it.
//! Both default to off, so a workload without the block simulates exactly as before.

use crate::spec::Dur;
use crate::time::{format_ns, Ns};
use serde::{Deserialize, Serialize};

/// The `platform.job_costs:` block as written.
#[derive(Debug, Clone, Copy, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct JobCostsSpec {
    /// CPU time each job costs beyond its execution time (the return from
    /// `clock_nanosleep`, clock reads, the way back into it), charged to the task and its
    /// CBS budget when the job first gets a CPU.
    pub per_job: Option<Dur>,
    /// The job reads its own CPU clock while it runs (as the runner's burn loop does):
    /// every read makes the kernel account the running task (`task_sched_runtime` →
    /// `update_curr`), so an exhausted CBS budget is caught at once instead of at the
    /// next tick, as with HRTICK_DL.
    pub reads_cpu_clock: Option<bool>,
    /// How late a periodic task's thread wakes after its release (the timer interrupt
    /// and `try_to_wake_up`): its CBS deadline is set then, not at the release.
    pub wakeup_latency: Option<Dur>,
    /// Extra random wake-up delay, uniform in [0, jitter] (seeded).
    pub wakeup_jitter: Option<Dur>,
    /// Extra wake-up delay when the CPU whose timer wakes the task (the one it last ran
    /// on) is idle: it must leave its idle state before the interrupt runs.
    pub wakeup_from_idle: Option<Dur>,
}

/// Validated per-job costs (all zero/off by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct JobCosts {
    /// CPU time charged at each job's first dispatch, beyond its execution time.
    pub per_job: Ns,
    /// CBS budgets are enforced exactly (the job's own clock reads account it).
    pub reads_cpu_clock: bool,
    /// Least delay from a periodic job's release to its task's wake-up.
    pub wakeup_latency: Ns,
    /// Extra wake-up delay, uniform in [0, jitter].
    pub wakeup_jitter: Ns,
    /// Extra wake-up delay from an idle CPU.
    pub wakeup_from_idle: Ns,
}

/// Longest per-job cost accepted: more is not an overhead but work.
const MAX_PER_JOB: Ns = 100_000_000;
/// Longest wake-up latency or jitter accepted.
const MAX_WAKEUP: Ns = 100_000_000;

impl JobCosts {
    /// Whether nothing is set (the workload simulates as without the block).
    pub fn is_off(&self) -> bool {
        *self == JobCosts::default()
    }

    /// Validate the block.
    pub fn from_spec(spec: Option<&JobCostsSpec>) -> Result<JobCosts, String> {
        let Some(s) = spec else {
            return Ok(JobCosts::default());
        };
        let per_job = s.per_job.map_or(0, |d| d.0);
        if per_job > MAX_PER_JOB {
            return Err(format!(
                "platform.job_costs.per_job: {} is more than {} (a per-job overhead, not work: put work in the task's runtime)",
                format_ns(per_job),
                format_ns(MAX_PER_JOB)
            ));
        }
        let wakeup_latency = s.wakeup_latency.map_or(0, |d| d.0);
        let wakeup_jitter = s.wakeup_jitter.map_or(0, |d| d.0);
        let wakeup_from_idle = s.wakeup_from_idle.map_or(0, |d| d.0);
        for (field, v) in [
            ("wakeup_latency", wakeup_latency),
            ("wakeup_jitter", wakeup_jitter),
            ("wakeup_from_idle", wakeup_from_idle),
        ] {
            if v > MAX_WAKEUP {
                return Err(format!(
                    "platform.job_costs.{field}: {} is more than {} (a wake-up delay, not a release offset: use the task's `offset`)",
                    format_ns(v),
                    format_ns(MAX_WAKEUP)
                ));
            }
        }
        Ok(JobCosts {
            per_job,
            reads_cpu_clock: s.reads_cpu_clock.unwrap_or(false),
            wakeup_latency,
            wakeup_jitter,
            wakeup_from_idle,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_block_is_off_and_a_huge_cost_is_refused_by_name() {
        assert!(JobCosts::from_spec(None).unwrap().is_off());
        let on = JobCosts::from_spec(Some(&JobCostsSpec {
            per_job: Some(Dur(25_000)),
            reads_cpu_clock: Some(true),
            ..JobCostsSpec::default()
        }))
        .unwrap();
        assert_eq!((on.per_job, on.reads_cpu_clock), (25_000, true));
        assert!(!on.is_off());
        let e = JobCosts::from_spec(Some(&JobCostsSpec {
            per_job: Some(Dur(200_000_000)),
            ..JobCostsSpec::default()
        }))
        .unwrap_err();
        assert!(e.starts_with("platform.job_costs.per_job: 200ms"), "{e}");
        let e = JobCosts::from_spec(Some(&JobCostsSpec {
            wakeup_jitter: Some(Dur(1_000_000_000)),
            ..JobCostsSpec::default()
        }))
        .unwrap_err();
        assert!(e.starts_with("platform.job_costs.wakeup_jitter: 1s"), "{e}");
    }
}
