//! Wake-up latency of periodic releases (`platform.job_costs.wakeup_latency`/`_jitter`):
//! a real task's thread sleeps in `clock_nanosleep` until its release and runs again
//! only when the timer interrupt has woken it, some microseconds later. The kernel
//! applies the CBS wake-up rule then (`enqueue_task_dl` → `update_dl_entity`), so the
//! reservation's deadline is the wake-up time + D: two jobs with the same deadline on
//! paper differ by their wake-up delays, and the earlier waker wins the tie.
//!
//! A timer that fires on an idle CPU wakes its task `wakeup_from_idle` later: the CPU
//! leaves its idle state first. The timer is armed on the CPU the task last ran on. At
//! table1-2cpu's equal deadlines (240 ms: a small job's and the running big job's) this
//! decides the tie: the big jobs woke at 200 ms from idle CPUs, the small jobs wake at
//! 240 ms on busy ones, so their reservation deadlines are earlier and they preempt —
//! 17 times of 20 in a traced run of the kernel.
//!
//! Releases at the same instant share one random delay, drawn once: one timer interrupt wakes
//! every task whose timer expired there (`hrtimer_interrupt` runs all expired timers
//! before the CPU returns to scheduling), and on the VM these figures come from the
//! CPUs' interrupts for one instant arrive together — under RM the kernel preempts no
//! job at the simultaneous releases of table1-2cpu (62 preemptions where the schedule
//! has 60), which independent delays per CPU would add (about 90 simulated).
//!
//! A task still running (its next release already due) does not sleep and pays nothing.
//! While a task waits for its wake-up, a CBS replenishment only refills its budget, as
//! `dl_task_timer` does for a task that is not queued; the wake-up enqueues it.

use super::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The wake-up delay model and who is waiting for a wake-up.
pub(super) struct JobWakes {
    latency: Ns,
    jitter: Ns,
    from_idle: Ns,
    rng: ChaCha8Rng,
    /// Per task: released, asleep until its wake-up event.
    pending: Vec<bool>,
    /// The instant of the last release batch and the delay drawn for it.
    batch: (Ns, Ns),
}

impl JobWakes {
    /// None when the platform has no wake-up delay (releases wake their task at once).
    pub(super) fn new(w: &Workload) -> Option<JobWakes> {
        let jc = &w.platform.job_costs;
        (jc.wakeup_latency > 0 || jc.wakeup_jitter > 0 || jc.wakeup_from_idle > 0).then(|| {
            JobWakes {
                latency: jc.wakeup_latency,
                jitter: jc.wakeup_jitter,
                from_idle: jc.wakeup_from_idle,
                rng: ChaCha8Rng::seed_from_u64(w.seed ^ 0x3A4E_0000),
                pending: vec![false; w.tasks.len()],
                batch: (Ns::MAX, 0),
            }
        })
    }
}

impl Engine {
    /// Whether `t` is asleep until the wake-up event of its released job.
    pub(super) fn wake_pending(&self, t: TaskId) -> bool {
        self.job_wakes.as_ref().is_some_and(|j| j.pending[t])
    }

    /// The released job of `t` (asleep, not on a CPU) wakes it after the modelled delay:
    /// true when the wake-up was deferred, false when it happens now.
    pub(super) fn defer_wakeup(&mut self, t: TaskId) -> bool {
        if self.tasks[t].on_cpu.is_some() || self.behaviour[t].is_some() {
            return false;
        }
        let Some(j) = self.job_wakes.as_mut() else {
            return false;
        };
        let delay = match j.batch {
            (at, d) if at == self.now => d,
            _ => {
                let d = j.latency
                    + if j.jitter > 0 {
                        j.rng.random_range(0..=j.jitter)
                    } else {
                        0
                    };
                j.batch = (self.now, d);
                d
            }
        };
        // The timer was armed on the CPU the task last ran on; an idle CPU must leave
        // its idle state before the interrupt runs.
        let cpu = self.tasks[t].last_cpu;
        let idle = self.cpus[cpu].curr.is_none_or(|c| !self.tasks[c].runnable);
        let delay = delay + if idle { j.from_idle } else { 0 };
        if delay == 0 {
            return false;
        }
        j.pending[t] = true;
        let at = self.now.saturating_add(delay);
        self.push(at, EventKind::JobWake { task: t as u32 });
        true
    }

    /// The timer woke `t`: the CBS wake-up rule at this instant, then the wake-up (unless
    /// it is throttled: its replenishment enqueues it).
    pub(super) fn job_wake(&mut self, t: TaskId) {
        let Some(j) = self.job_wakes.as_mut() else {
            return;
        };
        if !std::mem::take(&mut j.pending[t]) {
            return;
        }
        let ts = &self.tasks[t];
        if ts.job.is_none() || ts.runnable || ts.dl.throttled {
            return;
        }
        self.cbs_wakeup_rule(t);
        self.wakeup(t, EnqueueReason::Wakeup);
    }
}
