//! The user-space dispatcher's decision: which ready jobs run on which CPU, for `edf`,
//! `llf` and `illf`. There is one implementation of each policy, the simulator's: the
//! [`Decider`] runs the simulator's own class (crates/sim/src/policy/{edf,llf,illf}.rs,
//! with the workload's options) under global placement in the simulator's engine,
//! driven from outside ([`schedlab_sim::External`]): the same hooks, the same `schedule`,
//! so that fed the same events it takes the simulator's decisions
//! (tests/dispatcher_matches_sim.rs replays simulations into it).
//!
//! At each decision instant the manager thread shows it every task's current job
//! ([`JobView`]: release, deadline, remaining execution time measured from the worker's
//! thread CPU clock) and whether the instant is a tick. The Decider tells the engine
//! what changed since the previous instant, in the order the simulator handles an
//! instant:
//! 1. the measured remaining time of each running job;
//! 2. completions: a task whose job vanished, or was replaced by another. A replacement
//!    released before now was released while its predecessor still ran (a worker
//!    publishes its next job when the previous one ends): it waits behind it in the
//!    simulator (the task's backlog) and starts at the completion, so it is released
//!    first;
//! 3. releases, in the order the simulator queues same-instant releases: first jobs
//!    before later ones, then the task whose previous release came earlier, then fewer
//!    jobs so far, then task index;
//! 4. the tick;
//!
//! then asks the engine to decide and reads back which task each CPU runs.

use schedlab_model::{Ns, Policy, Workload};
use schedlab_sim::engine::Engine;
use schedlab_sim::{External, ExternalJob, SimError};

/// A ready job as the dispatcher sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobView {
    /// Release (identifies the job within its task).
    pub release: u64,
    /// Absolute deadline.
    pub deadline: u64,
    /// Remaining execution time.
    pub remaining: u64,
}

impl JobView {
    /// Laxity at `now`: deadline − now − remaining.
    pub fn laxity(&self, now: u64) -> i64 {
        self.deadline as i64 - now as i64 - self.remaining as i64
    }
}

/// Decision state across calls: the external engine and what it was told.
pub struct Decider {
    engine: External,
    /// Per CPU: the task running there (as last decided).
    pub assign: Vec<Option<usize>>,
    /// Per task: release of the job last given to the engine (None: no job).
    seen: Vec<Option<Ns>>,
    /// Per task: release of the last job given, current or not (orders same-instant
    /// releases: the simulator queues a release when the one before it happens).
    last: Vec<Option<Ns>>,
    /// Per task: jobs given to the engine so far.
    jobs: Vec<u64>,
    /// Laxity values computed so far (the classes' own count, as in a simulation).
    pub laxity_evaluations: u64,
    fresh: Vec<usize>,
}

impl Decider {
    /// A decider for `w`'s tasks on its `cpus` CPUs, under `w`'s policy and options.
    /// Refused where the simulator refuses the workload under global placement (exact
    /// `llf`, a policy without a deadline/rt class).
    pub fn new(w: &Workload) -> Result<Decider, SimError> {
        let engine = Engine::external(w)?;
        let n = w.tasks.len();
        Ok(Decider {
            assign: vec![None; engine.cpus()],
            engine,
            seen: vec![None; n],
            last: vec![None; n],
            jobs: vec![0; n],
            laxity_evaluations: 0,
            fresh: Vec::with_capacity(n),
        })
    }

    /// Whether the dispatcher runs `p` (edf, llf, illf); the policy registry's
    /// `real.dispatcher` must agree (tested).
    pub fn decides(p: Policy) -> bool {
        matches!(p, Policy::Edf | Policy::Llf | Policy::Illf)
    }

    /// Give task `t`'s job `j` to the engine.
    fn release(&mut self, t: usize, j: JobView) {
        self.seen[t] = Some(j.release);
        self.last[t] = Some(j.release);
        self.jobs[t] += 1;
        self.engine.release(
            t,
            ExternalJob {
                release: j.release,
                deadline: j.deadline,
                // The dispatcher sees the job first now: what it has done before (at a
                // low priority, while a CPU was free) is not known apart.
                exec: j.remaining,
                remaining: j.remaining,
            },
        );
    }

    /// Decide at `now` for the ready jobs `jobs[task]` (released, not finished); `tick`
    /// tells a periodic tick from an event. Returns the per-CPU assignment
    /// ([`Decider::assign`]).
    pub fn decide(&mut self, now: u64, jobs: &[Option<JobView>], tick: bool) -> &[Option<usize>] {
        self.engine.at(now);
        for &t in self.assign.iter().flatten() {
            if let Some(j) = jobs[t].filter(|j| Some(j.release) == self.seen[t]) {
                self.engine.remaining(t, j.remaining);
            }
        }
        let mut fresh = std::mem::take(&mut self.fresh);
        fresh.clear();
        for (t, j) in jobs.iter().enumerate() {
            let rel = j.map(|j| j.release);
            if rel == self.seen[t] {
                continue;
            }
            match (self.seen[t], *j) {
                (Some(_), Some(j)) if j.release < now => {
                    // Released while its predecessor ran: next in the backlog.
                    self.release(t, j);
                    self.engine.complete(t);
                }
                (Some(_), j) => {
                    self.engine.complete(t);
                    self.seen[t] = None;
                    if j.is_some() {
                        fresh.push(t);
                    }
                }
                (None, _) => fresh.push(t),
            }
        }
        let (last, count) = (&self.last, &self.jobs);
        // A first job's release was queued when the run started (in task order), a later
        // one when its predecessor was released: earlier-queued events go first.
        fresh.sort_unstable_by_key(|&t| (last[t], count[t], t));
        for &t in &fresh {
            if let Some(j) = jobs[t] {
                self.release(t, j);
            }
        }
        self.fresh = fresh;
        if tick {
            self.engine.tick();
        }
        self.engine.decide();
        for (cpu, a) in self.assign.iter_mut().enumerate() {
            *a = self.engine.running(cpu);
        }
        self.laxity_evaluations = self.engine.laxity_evaluations();
        &self.assign
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_model::{IllfOptions, Overrides};
    use std::path::Path;

    #[test]
    fn the_registry_gives_the_dispatcher_exactly_the_policies_it_decides() {
        for e in &schedlab_model::POLICIES {
            assert_eq!(e.real.dispatcher, Decider::decides(e.policy), "{}", e.name);
        }
    }

    const MS: u64 = 1_000_000;

    /// `n` periodic tasks on `m` CPUs under `policy` (the jobs themselves come from the
    /// tests' [`JobView`]s).
    fn workload(policy: Policy, n: usize, m: usize) -> Workload {
        let yaml =
            format!("platform: {{ cpus: {m} }}\ntasks:\n  - {{ name: t, count: {n}, runtime: 1ms, period: 100ms }}\n");
        let ov = Overrides {
            policy: Some(policy),
            ..Overrides::default()
        };
        Workload::parse_str(&yaml, Path::new("w.yaml"), &ov).unwrap()
    }

    fn decider(policy: Policy, n: usize, m: usize) -> Decider {
        Decider::new(&workload(policy, n, m)).unwrap()
    }

    fn illf(opts: IllfOptions, n: usize, m: usize) -> Decider {
        let mut w = workload(Policy::Illf, n, m);
        w.scheduler.illf = opts;
        Decider::new(&w).unwrap()
    }

    fn j(release: u64, deadline_ms: u64, remaining_ms: u64) -> Option<JobView> {
        Some(JobView {
            release,
            deadline: deadline_ms * MS,
            remaining: remaining_ms * MS,
        })
    }

    #[test]
    fn edf_runs_the_m_earliest_deadlines_and_keeps_cpus() {
        let mut d = decider(Policy::Edf, 3, 2);
        let jobs = [j(0, 30, 1), j(0, 10, 1), j(0, 20, 1)];
        assert_eq!(d.decide(0, &jobs, false), &[Some(1), Some(2)]);
        // Task 1 completes: 0 takes its CPU, 2 stays where it was.
        let jobs = [j(0, 30, 1), None, j(0, 20, 1)];
        assert_eq!(d.decide(MS, &jobs, false), &[Some(0), Some(2)]);
    }

    #[test]
    fn edf_equal_deadlines_never_preempt_and_queue_in_release_order() {
        // The simulator's rule (SCHED_DEADLINE's): a tie keeps the running job, and
        // waiting jobs with equal deadlines run in the order they were queued.
        let mut d = decider(Policy::Edf, 3, 1);
        assert_eq!(d.decide(0, &[None, None, j(0, 20, 5)], false), &[Some(2)]);
        let jobs = [j(MS, 20, 5), j(MS, 20, 5), j(0, 20, 4)];
        assert_eq!(d.decide(MS, &jobs, false), &[Some(2)]);
        let jobs = [j(MS, 20, 5), j(MS, 20, 5), None];
        assert_eq!(d.decide(5 * MS, &jobs, false), &[Some(0)]);
    }

    #[test]
    fn llf_picks_least_laxity_and_counts_evaluations() {
        let mut d = decider(Policy::Llf, 3, 1);
        // Laxities at 0: 30-25 = 5, 10-1 = 9, 20-2 = 18.
        let jobs = [j(0, 30, 25), j(0, 10, 1), j(0, 20, 2)];
        assert_eq!(d.decide(0, &jobs, true), &[Some(0)]);
        // As the simulator's llf counts them: each release re-evaluates every ready job
        // of the run queue (1 + 1, 2 + 1, 3 + 1 with the running slot).
        assert_eq!(d.laxity_evaluations, 9);
    }

    #[test]
    fn llf_exact_is_refused_as_the_simulator_refuses_it_under_global_placement() {
        let mut w = workload(Policy::Llf, 2, 2);
        w.scheduler.llf.exact = true;
        let Err(e) = Decider::new(&w) else {
            panic!("exact llf accepted")
        };
        assert!(e.to_string().contains("per-CPU run queues"), "{e}");
    }

    #[test]
    fn illf_swaps_a_big_running_job_for_a_small_new_one() {
        // E2-like: K = (d 100, R 60) running, S_k = 40; Q = (d 60, R 5) arrives: swap.
        let mut d = illf(IllfOptions::default(), 2, 1);
        assert_eq!(d.decide(0, &[j(0, 100, 60), None], false), &[Some(0)]);
        assert_eq!(
            d.decide(0, &[j(0, 100, 60), j(0, 60, 5)], false),
            &[Some(1)]
        );
        // Without rule 4 the running job keeps the CPU (Q's laxity 55 > 0).
        let opts = IllfOptions {
            rules: [true, true, true, false],
            ..IllfOptions::default()
        };
        let mut d = illf(opts, 2, 1);
        d.decide(0, &[j(0, 100, 60), None], false);
        assert_eq!(
            d.decide(0, &[j(0, 100, 60), j(0, 60, 5)], false),
            &[Some(0)]
        );
    }

    #[test]
    fn illf_zero_laxity_preempts_rule_3() {
        let opts = IllfOptions {
            rules: [true, true, true, false],
            ..IllfOptions::default()
        };
        let mut d = illf(opts, 2, 1);
        d.decide(0, &[j(0, 100, 10), None], false);
        // A job with laxity 0 at activation runs at once.
        assert_eq!(d.decide(0, &[j(0, 100, 10), j(0, 5, 5)], false), &[Some(1)]);
    }

    #[test]
    fn a_job_released_while_its_predecessor_ran_goes_on_without_leaving_its_cpu() {
        // Task 0's second job, released at 10 ms, is published when the first completes
        // at 12 ms: it waited behind it (the simulator's backlog) and goes on on the same
        // CPU (its deadline, 20 ms, is still before task 1's).
        let mut d = decider(Policy::Edf, 2, 1);
        assert_eq!(d.decide(0, &[j(0, 10, 12), None], false), &[Some(0)]);
        let jobs = [j(0, 10, 2), j(5 * MS, 40, 5)];
        assert_eq!(d.decide(10 * MS, &jobs, false), &[Some(0)]);
        let jobs = [j(10 * MS, 20, 3), j(5 * MS, 40, 5)];
        assert_eq!(d.decide(12 * MS, &jobs, false), &[Some(0)]);
        assert_eq!(d.engine.task(0).stats.migrations, 0);
        assert_eq!(d.engine.task(0).stats.preemptions, 0);
    }
}
