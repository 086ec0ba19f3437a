//! The user-space dispatcher's decision: which ready jobs run on which CPU, for `edf`,
//! `llf` and `illf`, over one global queue (m CPUs, the m chosen jobs run).
//!
//! `illf` keeps the seed paper's four rules, as crates/sim/src/policy/illf.rs documents
//! them, applied globally instead of per run queue:
//! 1. all stored laxities are refreshed only when a job is activated or one completes;
//! 2. at a tick only the least-laxity waiting job's laxity is refreshed;
//! 3. no switch happens unless a job is activated, a waiting job's stored laxity reaches
//!    0 (it then displaces the running job with the largest stored laxity), or a running
//!    job completes;
//! 4. at an activation (K = the running job with the largest stored laxity, Q = the new
//!    job) and at picks after a completion (K = least-laxity waiting job, Q = the next
//!    one), Algorithm 2 decides: run Q iff K is big (R > S), Q is small (R <= S),
//!    `R_k > S_q` and `S_k >= R_q` (the prose's strict `R_q < S_k` with `strict: true`).
//!
//! `llf` recomputes every laxity at every decision and runs the m least (ties: least
//! recently scheduled, then task index); `edf` runs the m earliest deadlines (ties: task
//! index). Decisions keep a chosen job on the CPU it already has.

use schedlab_model::{IllfOptions, Policy};

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

/// Decision state across calls.
pub struct Decider {
    policy: Policy,
    opts: IllfOptions,
    /// Per CPU: the task running there (as last decided).
    pub assign: Vec<Option<usize>>,
    /// Per task: release of the job last seen (activation detection).
    seen: Vec<Option<u64>>,
    /// Per task: stored laxity (illf).
    stored: Vec<i64>,
    /// Per task: last decision that chose it (llf tie-break).
    last_run: Vec<u64>,
    /// Laxity values computed so far.
    pub laxity_evaluations: u64,
    activated: Vec<usize>,
    scratch: Vec<usize>,
}

impl Decider {
    /// A decider for `n` tasks on `m` CPUs.
    pub fn new(policy: Policy, opts: IllfOptions, n: usize, m: usize) -> Decider {
        Decider {
            policy,
            opts,
            assign: vec![None; m],
            seen: vec![None; n],
            stored: vec![i64::MAX; n],
            last_run: vec![0; n],
            laxity_evaluations: 0,
            activated: Vec::with_capacity(n),
            scratch: Vec::with_capacity(n),
        }
    }

    /// Whether the dispatcher has a rule of its own for `p` (edf, llf, illf); the policy
    /// registry's `real.dispatcher` must agree (tested).
    pub fn decides(p: Policy) -> bool {
        matches!(p, Policy::Edf | Policy::Llf | Policy::Illf)
    }

    fn running(&self, t: usize) -> bool {
        self.assign.contains(&Some(t))
    }

    /// Decide at `now` for the ready jobs `jobs[task]`; `tick` tells a periodic tick from
    /// an event. Returns the per-CPU assignment ([`Decider::assign`]).
    pub fn decide(&mut self, now: u64, jobs: &[Option<JobView>], tick: bool) -> &[Option<usize>] {
        // Activations and completions since the last call.
        self.activated.clear();
        let mut completed = false;
        for (t, j) in jobs.iter().enumerate() {
            let rel = j.map(|j| j.release);
            if rel != self.seen[t] {
                if self.seen[t].is_some() {
                    completed = true;
                }
                if rel.is_some() {
                    self.activated.push(t);
                }
                self.seen[t] = rel;
            }
        }
        for a in self.assign.iter_mut() {
            if let Some(t) = *a {
                if jobs[t].is_none() || self.activated.contains(&t) {
                    *a = None;
                    completed = true;
                }
            }
        }
        match self.policy {
            Policy::Llf => self.llf(now, jobs),
            Policy::Illf => self.illf(now, jobs, tick, completed),
            _ => self.edf(jobs),
        }
        for t in self.assign.iter().flatten() {
            self.last_run[*t] = now;
        }
        &self.assign
    }

    /// Keep chosen jobs on their CPUs, put the others on free CPUs (lowest index first).
    fn place(&mut self, chosen: &[usize]) {
        for a in self.assign.iter_mut() {
            if a.is_some_and(|t| !chosen.contains(&t)) {
                *a = None;
            }
        }
        for &t in chosen {
            if !self.running(t) {
                if let Some(slot) = self.assign.iter_mut().find(|a| a.is_none()) {
                    *slot = Some(t);
                }
            }
        }
    }

    fn edf(&mut self, jobs: &[Option<JobView>]) {
        let m = self.assign.len();
        let mut ready = std::mem::take(&mut self.scratch);
        ready.clear();
        ready.extend((0..jobs.len()).filter(|&t| jobs[t].is_some()));
        let key = |t: usize| (jobs[t].unwrap().deadline, t);
        if ready.len() > m {
            ready.select_nth_unstable_by_key(m - 1, |&t| key(t));
            ready.truncate(m);
        }
        self.place(&ready);
        self.scratch = ready;
    }

    fn llf(&mut self, now: u64, jobs: &[Option<JobView>]) {
        let m = self.assign.len();
        let mut ready = std::mem::take(&mut self.scratch);
        ready.clear();
        ready.extend((0..jobs.len()).filter(|&t| jobs[t].is_some()));
        self.laxity_evaluations += ready.len() as u64;
        let last = &self.last_run;
        let key = |t: usize| (jobs[t].unwrap().laxity(now), last[t], t);
        if ready.len() > m {
            ready.select_nth_unstable_by_key(m - 1, |&t| key(t));
            ready.truncate(m);
        }
        self.place(&ready);
        self.scratch = ready;
    }

    fn swap_with(&self, jobs: &[Option<JobView>], k: usize, q: usize) -> bool {
        if !self.opts.rules[3] {
            return false;
        }
        let (r_k, s_k) = (jobs[k].unwrap().remaining as i64, self.stored[k]);
        let (r_q, s_q) = (jobs[q].unwrap().remaining as i64, self.stored[q]);
        let fits = if self.opts.strict {
            r_q < s_k
        } else {
            s_k >= r_q
        };
        r_k > s_k && r_q <= s_q && r_k > s_q && fits
    }

    fn illf(&mut self, now: u64, jobs: &[Option<JobView>], tick: bool, completed: bool) {
        let n = jobs.len();
        let rules12 = self.opts.rules[0];
        // Rules 1 and 2: which stored laxities are refreshed.
        if !rules12 || completed || !self.activated.is_empty() {
            for (t, j) in jobs.iter().enumerate() {
                if let Some(j) = j {
                    self.stored[t] = j.laxity(now);
                    self.laxity_evaluations += 1;
                }
            }
        } else if tick {
            let least_waiting = (0..n)
                .filter(|&t| jobs[t].is_some() && !self.running(t))
                .min_by_key(|&t| (self.stored[t], t));
            if let Some(t) = least_waiting {
                self.stored[t] = jobs[t].unwrap().laxity(now);
                self.laxity_evaluations += 1;
            }
        }
        // Free CPUs: least stored laxity first, Algorithm 2 between the two least after a
        // completion. Only the m + 1 least waiting jobs can be picked: select, then sort.
        let m = self.assign.len();
        let mut w = std::mem::take(&mut self.scratch);
        w.clear();
        w.extend((0..n).filter(|&t| jobs[t].is_some() && !self.running(t)));
        let stored = &self.stored;
        if w.len() > m + 1 {
            w.select_nth_unstable_by_key(m, |&t| (stored[t], t));
            w.truncate(m + 1);
        }
        w.sort_unstable_by_key(|&t| (stored[t], t));
        let mut next = 0;
        while let Some(free) = self.assign.iter().position(Option::is_none) {
            let Some(&k) = w.get(next) else { break };
            match w.get(next + 1) {
                Some(&q) if completed && self.swap_with(jobs, k, q) => {
                    self.assign[free] = Some(q);
                    w.remove(next + 1);
                }
                _ => {
                    self.assign[free] = Some(k);
                    next += 1;
                }
            }
        }
        self.scratch = w;
        // Rule 3: a waiting job at zero laxity displaces the largest-laxity running job.
        // (Without rule 3: plain least-laxity preemption.)
        loop {
            let least = (0..n)
                .filter(|&t| jobs[t].is_some() && !self.running(t))
                .min_by_key(|&t| (self.stored[t], t));
            let Some(least) = least else { break };
            let Some((cpu, victim)) = self
                .assign
                .iter()
                .enumerate()
                .filter_map(|(c, a)| a.map(|t| (c, t)))
                .max_by_key(|&(_, t)| (self.stored[t], t))
            else {
                break;
            };
            let preempt = if self.opts.rules[2] {
                self.stored[least] <= 0 && self.stored[victim] > 0
            } else {
                self.stored[least] < self.stored[victim]
            };
            if !preempt {
                break;
            }
            self.assign[cpu] = Some(least);
        }
        // Rule 4 at activation.
        let activated = std::mem::take(&mut self.activated);
        for &q in &activated {
            if jobs[q].is_none() || self.running(q) {
                continue;
            }
            let Some((cpu, k)) = self
                .assign
                .iter()
                .enumerate()
                .filter_map(|(c, a)| a.map(|t| (c, t)))
                .max_by_key(|&(_, t)| (self.stored[t], t))
            else {
                continue;
            };
            if self.swap_with(jobs, k, q) {
                self.assign[cpu] = Some(q);
            }
        }
        self.activated = activated;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_gives_the_dispatcher_exactly_the_policies_it_decides() {
        for e in &schedlab_model::POLICIES {
            assert_eq!(e.real.dispatcher, Decider::decides(e.policy), "{}", e.name);
        }
    }

    const MS: u64 = 1_000_000;

    fn j(release: u64, deadline_ms: u64, remaining_ms: u64) -> Option<JobView> {
        Some(JobView {
            release,
            deadline: deadline_ms * MS,
            remaining: remaining_ms * MS,
        })
    }

    #[test]
    fn edf_runs_the_m_earliest_deadlines_and_keeps_cpus() {
        let mut d = Decider::new(Policy::Edf, IllfOptions::default(), 3, 2);
        let jobs = [j(0, 30, 1), j(0, 10, 1), j(0, 20, 1)];
        assert_eq!(d.decide(0, &jobs, false), &[Some(1), Some(2)]);
        // Task 1 completes: 0 takes its CPU, 2 stays where it was.
        let jobs = [j(0, 30, 1), None, j(0, 20, 1)];
        assert_eq!(d.decide(MS, &jobs, false), &[Some(0), Some(2)]);
    }

    #[test]
    fn llf_picks_least_laxity_and_counts_evaluations() {
        let mut d = Decider::new(Policy::Llf, IllfOptions::default(), 3, 1);
        // Laxities at 0: 30-25 = 5, 10-1 = 9, 20-2 = 18.
        let jobs = [j(0, 30, 25), j(0, 10, 1), j(0, 20, 2)];
        assert_eq!(d.decide(0, &jobs, true), &[Some(0)]);
        assert_eq!(d.laxity_evaluations, 3);
    }

    #[test]
    fn illf_swaps_a_big_running_job_for_a_small_new_one() {
        // E2-like: K = (d 100, R 60) running, S_k = 40; Q = (d 60, R 5) arrives: swap.
        let mut d = Decider::new(Policy::Illf, IllfOptions::default(), 2, 1);
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
        let mut d = Decider::new(Policy::Illf, opts, 2, 1);
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
        let mut d = Decider::new(Policy::Illf, opts, 2, 1);
        d.decide(0, &[j(0, 100, 10), None], false);
        // A job with laxity 0 at activation runs at once.
        assert_eq!(d.decide(0, &[j(0, 100, 10), j(0, 5, 5)], false), &[Some(1)]);
    }
}
