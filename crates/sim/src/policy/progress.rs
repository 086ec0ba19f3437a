//! A task's progress as the laxity classes (ILLF, tick-mode LLF) read it, with its CPU's
//! time not yet accounted included.
//!
//! The engine accounts a CPU lazily when no class reads running tasks' progress
//! ([`crate::class::SchedClass::reads_progress`]): `remaining` is then as of the CPU's
//! `last_update`. ILLF and LLF read remaining times and laxities of running tasks at
//! every decision and tick, and accounting every CPU at every instant for them was a
//! fifth of a global ILLF run on 1,024 CPUs and 7 % of global LLF on 8. So they work out
//! the accounting that is pending themselves, exactly as the engine's `account` would
//! (overhead is paid first, and a job never runs past its end): the same values whether
//! the CPU was accounted up to now or not.

use crate::state::{CpuState, Ctx, Job, TaskId, TaskState};
use schedlab_model::Ns;

/// The part of job `j`'s remaining time that CPU `c` ran up to `now` and has not
/// accounted yet (`c` runs the job's task).
#[inline(always)]
fn pending(now: Ns, c: &CpuState, j: &Job) -> Ns {
    let delta = now.saturating_sub(c.last_update);
    (delta - delta.min(c.overhead_left)).min(j.remaining)
}

/// `t`'s remaining execution time now.
pub(super) fn remaining(ctx: &Ctx, t: TaskId) -> i64 {
    let ts = ctx.task(t);
    ts.job.map_or(0, |j| job_remaining(ctx, t, ts, &j) as i64)
}

/// The remaining time now of `t`'s job `j` (`ts` is `t`'s record, `j` its job), from
/// the record in hand: a caller that has read the job does not index the task again.
#[inline(always)]
pub(super) fn job_remaining(ctx: &Ctx, t: TaskId, ts: &TaskState, j: &Job) -> Ns {
    let pending = match ts.on_cpu {
        Some(cpu) if ctx.cpus[cpu].curr == Some(t) => pending(ctx.now, &ctx.cpus[cpu], j),
        _ => 0,
    };
    j.remaining - pending
}

/// `t`'s laxity now, not counted (`Ctx::laxity_uncounted` with the pending accounting).
pub(super) fn laxity(ctx: &Ctx, t: TaskId) -> i64 {
    let ts = ctx.task(t);
    match &ts.job {
        Some(j) => j.deadline as i64 - ctx.now as i64 - job_remaining(ctx, t, ts, j) as i64,
        None => i64::MAX,
    }
}

/// [`laxity`] of the task `ts` that CPU `c` runs, from the records in hand (a loop over
/// the CPUs).
#[inline(always)]
pub(super) fn laxity_running(now: Ns, c: &CpuState, ts: &TaskState) -> i64 {
    match &ts.job {
        Some(j) => j.deadline as i64 - now as i64 - (j.remaining - pending(now, c, j)) as i64,
        None => i64::MAX,
    }
}

/// `t`'s laxity now, counted as an evaluation (`Ctx::laxity`).
pub(super) fn laxity_counted(ctx: &Ctx, t: TaskId) -> i64 {
    ctx.count_laxity(1);
    laxity(ctx, t)
}
