//! The externally driven engine: the simulator's scheduling decisions for a caller that
//! owns the clock and the jobs — the real runner's user-space dispatcher
//! (crates/linux/src/dispatcher.rs), whose worker threads release and burn real jobs.
//!
//! [`Engine::external`] builds an engine for a workload under global placement (one
//! run queue per class, the m best tasks run) that has no event of its own: it releases
//! no job, fires no CPU timer or tick and does no kernel work, and models no overhead
//! (context switch, migration and tick costs are 0; CBS budgets are off). At each
//! decision instant the caller tells it what happened since the previous one, then asks
//! for the decision:
//!
//! 1. [`External::at`]: the clock moves to `now` (`advance`: the running jobs are charged
//!    the time elapsed, as in a simulation);
//! 2. [`External::remaining`]: a running job's measured remaining execution time
//!    replaces that estimate (the real runner reads thread CPU clocks);
//! 3. [`External::complete`]: a job ended (completed, or was cut at its deadline);
//! 4. [`External::release`]: a job was released, with its release time, absolute
//!    deadline, execution time and remaining time;
//! 5. [`External::tick`]: a scheduler tick;
//! 6. [`External::decide`]: the decision (`schedule`, so global placement's
//!    `schedule_global`); [`External::running`] then tells which task each CPU runs.
//!
//! Each call is the engine's own handler — `release_job` (jobs.rs) for a release,
//! `complete_job`/`next_job_or_sleep` for a completion, `tick` (tick.rs), `schedule`
//! (decide.rs, global.rs) — so the class hooks (`enqueue_task`, `pick_next_task`,
//! `put_prev_task`, `task_stopped`, `job_changed`, `task_tick`, `wakeup_preempt`) run in
//! the order and with the state a simulation gives them: fed the events of a simulation,
//! the decisions are the simulation's (crates/linux/tests/dispatcher_matches_sim.rs).
//! Events are handled in call order. Within one instant the simulator handles
//! completions (and aborts) first, then releases (in the order their events were
//! queued), then the tick; a job released while its task's previous job still runs
//! waits behind it (the task's backlog) and starts when that one completes, so such a
//! release is reported before the completion.
//!
//! What this mode does not have: class decision instants ([`SchedClass::next_decision`]:
//! exact `llf` is refused under global placement anyway; a class that arms them, such
//! as exact `illf`, is refused), `on_miss: abort` (an abort is a completion the caller
//! reports) and aperiodic fair tasks' own wake-ups.

use super::*;

/// A job released by the caller of an [`External`] engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExternalJob {
    /// Release time (the caller's clock).
    pub release: Ns,
    /// Absolute deadline.
    pub deadline: Ns,
    /// Execution time of the whole job (at least `remaining`).
    pub exec: Ns,
    /// Execution time still needed now.
    pub remaining: Ns,
}

/// An engine driven from outside: see the module documentation of `engine::external`.
pub struct External {
    engine: Engine,
}

impl Engine {
    /// An engine for `w` driven by a caller that owns the clock and the jobs: global
    /// placement, the policy's class from the registry (as [`crate::engine_for`] builds
    /// it), no overheads, no events of its own. Refused like a simulation of `w` under
    /// global placement would be (e.g. exact `llf`, a fair-only policy).
    pub fn external(w: &Workload) -> Result<External, SimError> {
        let mut w = w.clone();
        w.scheduler.placement = Placement::Global;
        w.scheduler.cbs = false;
        w.on_miss = OnMiss::Continue;
        // The handlers queue their follow-ups (the next release, the next tick, the first
        // releases and wake-ups) only before the end of the run: with the end at 0 nothing
        // is ever queued, and time is the caller's.
        w.duration = 0;
        let p = &mut w.platform;
        p.context_switch = 0;
        p.migration = 0;
        p.preemption = 0;
        p.tick = 0;
        p.irqs.clear();
        p.timers = None;
        p.kernel_sections = None;
        for t in &mut w.tasks {
            t.probe = None;
        }
        let mut engine = crate::engine_for(&w, &crate::SimOptions::default())?;
        if engine.decision_timers {
            // The caller owns the clock: instants the class would arm a timer for (exact
            // ILLF's zero-laxity instants) would never be decided at.
            return Err(SimError::Unsupported(format!(
                "`{}` in exact mode decides at zero-laxity instants of its own, which the user-space dispatcher does not see (it decides at releases, completions and ticks): use mode tick",
                w.scheduler.policy.name()
            )));
        }
        // The caller measures the running jobs' remaining times (`External::remaining`):
        // a running job's laxity is not constant while it runs, so the shortcuts that
        // rely on it (LLF's key bounds, ILLF's rule 1) are off.
        if let Some(g) = engine.global_marked.as_mut() {
            g.without_bounds();
        }
        for c in &mut engine.classes {
            c.remaining_measured();
        }
        Ok(External { engine })
    }
}

impl External {
    /// Number of CPUs.
    pub fn cpus(&self) -> usize {
        self.engine.cpus.len()
    }

    /// The engine's clock.
    pub fn now(&self) -> Ns {
        self.engine.now
    }

    /// Engine-side state of task `t` (its current job, backlog, CPU).
    pub fn task(&self, t: TaskId) -> &TaskState {
        &self.engine.tasks[t]
    }

    /// Start the decision instant `now` (not before the previous one): the running jobs
    /// are charged the time since the last instant, as `advance` does in a simulation.
    pub fn at(&mut self, now: Ns) {
        let e = &mut self.engine;
        let now = now.max(e.now);
        for cpu in 0..e.cpus.len() {
            // The engine cannot know when a job ends: that is the caller's to report. A
            // job is charged at most what it has left (a simulation never runs a job past
            // its completion; `account` asserts it).
            let c = &e.cpus[cpu];
            let left = c.curr.map_or(0, |t| e.tasks[t].remaining());
            let charged = (now - c.last_update).min(left);
            e.cpus[cpu].last_update = now - charged;
        }
        e.advance_all(now);
    }

    /// The measured remaining execution time of running task `t`'s job. Ignored for a
    /// task that is not running: the classes order waiting jobs by values computed when
    /// they were queued, which a simulation never changes while they wait.
    pub fn remaining(&mut self, t: TaskId, remaining: Ns) {
        let ts = &mut self.engine.tasks[t];
        if ts.on_cpu.is_none() || !ts.runnable {
            return;
        }
        if let Some(j) = ts.job.as_mut() {
            j.remaining = remaining;
        }
    }

    /// Task `t` released `job` (at or before now): it runs through the engine's release
    /// path — queued behind the task's current job, or woken and enqueued.
    pub fn release(&mut self, t: TaskId, job: ExternalJob) {
        let e = &mut self.engine;
        let rm = &mut e.releases[t];
        let seq = rm.next_seq;
        rm.next_seq += 1;
        e.release_job(
            t,
            Job {
                seq,
                release: job.release,
                deadline: job.deadline,
                exec: job.exec.max(job.remaining),
                remaining: job.remaining,
            },
        );
    }

    /// Task `t`'s current job ended (completed, or cut at its deadline): the next job of
    /// its backlog starts, or the task sleeps. Nothing happens if it has no job.
    pub fn complete(&mut self, t: TaskId) {
        let e = &mut self.engine;
        if e.tasks[t].job.is_none() {
            return;
        }
        match e.tasks[t].on_cpu.filter(|&c| e.cpus[c].curr == Some(t)) {
            Some(cpu) => {
                // What the CPU timer does at a completion in a simulation.
                e.mark_dirty(cpu);
                e.complete_job(t, cpu);
            }
            None => {
                // It ended while waiting (a real thread may run briefly while a CPU has
                // nothing chosen): as an abort of a waiting job, it leaves its run queue.
                e.tasks[t].job = None;
                e.next_job_or_sleep(t, None);
            }
        }
    }

    /// A scheduler tick at the current instant: each running task's class `task_tick`.
    pub fn tick(&mut self) {
        self.engine.tick();
    }

    /// Decide at the current instant (the CPUs touched by this instant's events
    /// reconsider what they run). Read the result with [`External::running`].
    pub fn decide(&mut self) {
        let e = &mut self.engine;
        e.schedule();
        // Nothing should be queued (see `Engine::external`); nothing queued is ever due.
        e.events.clear();
    }

    /// The task CPU `cpu` runs, as last decided.
    pub fn running(&self, cpu: CpuId) -> Option<TaskId> {
        self.engine.cpus[cpu]
            .curr
            .filter(|&t| self.engine.tasks[t].runnable)
    }

    /// Laxity values the classes computed so far (the `laxity_evaluations` metric).
    pub fn laxity_evaluations(&self) -> u64 {
        self.engine.laxity_evals.get()
    }
}
