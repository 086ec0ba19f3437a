//! A task's progress as ILLF reads it, with its CPU's time not yet accounted included.
//!
//! The engine accounts a CPU lazily when no class reads running tasks' progress
//! ([`crate::class::SchedClass::reads_progress`]): `remaining` is then as of the CPU's
//! `last_update`. ILLF reads remaining times and laxities of running tasks at every
//! decision, and accounting every CPU at every instant for it was a fifth of a global
//! run on 1,024 CPUs. So it works out the accounting that is pending itself, exactly as
//! the engine's `account` would (overhead is paid first, and a job never runs past its
//! end): the same values whether the CPU was accounted up to now or not.

use crate::state::{Ctx, TaskId};

/// `t`'s remaining execution time now.
pub(super) fn remaining(ctx: &Ctx, t: TaskId) -> i64 {
    let ts = ctx.task(t);
    let Some(j) = ts.job else { return 0 };
    let pending = match ts.on_cpu {
        Some(cpu) if ctx.cpus[cpu].curr == Some(t) => {
            let c = &ctx.cpus[cpu];
            let delta = ctx.now.saturating_sub(c.last_update);
            (delta - delta.min(c.overhead_left)).min(j.remaining)
        }
        _ => 0,
    };
    (j.remaining - pending) as i64
}

/// `t`'s laxity now, not counted (`Ctx::laxity_uncounted` with the pending accounting).
pub(super) fn laxity(ctx: &Ctx, t: TaskId) -> i64 {
    match ctx.task(t).job {
        Some(j) => j.deadline as i64 - ctx.now as i64 - remaining(ctx, t),
        None => i64::MAX,
    }
}

/// `t`'s laxity now, counted as an evaluation (`Ctx::laxity`).
pub(super) fn laxity_counted(ctx: &Ctx, t: TaskId) -> i64 {
    ctx.count_laxity(1);
    laxity(ctx, t)
}
