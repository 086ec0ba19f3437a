//! The engine's invariant checker (`simulate --check`, and every test run through
//! [`crate::simulate_checked`]). After the decisions of every instant it verifies what
//! must hold whatever the policy:
//! - time never goes backwards;
//! - a CPU runs at most one task and a task runs on at most one CPU (the CPUs' `curr`
//!   and the tasks' `on_cpu` agree both ways);
//! - no task has executed more than the time elapsed, no job more than it demands, and
//!   the CPUs together have not been busy longer than they exist;
//! - each class's waiting tasks, as the engine counts them, are runnable, not on a CPU,
//!   of that class and on the run queue they say; every runnable task off the CPUs (and
//!   not throttled) is waiting somewhere;
//! - class priority order at every decided CPU: no CPU idles or runs a lower class while
//!   a higher class has a task waiting that may run there (work conservation under
//!   global placement is the idle case of this);
//! - under global placement, within a class whose order is a fixed key (EDF's deadline,
//!   a fixed priority), no waiting task beats a running one;
//! - the class's own bookkeeping ([`crate::class::SchedClass::check`]).
//!
//! CPUs still marked for a decision (deferred to the next instant) or busy in kernel work
//! are exempt from the decision checks, as their decision is pending by design.
//!
//! **Cost.** Every CPU is checked at every instant. The per-task checks (a task's CPU,
//! its accounting, its queue) and the classes' own bookkeeping cost O(tasks), which at
//! the task ceiling (100,000 tasks) made a checked run hundreds of times slower than an
//! unchecked one. So the per-task checks cover, at each instant, the tasks running on a
//! CPU plus the next [`Engine::check_window`] tasks of a rotation over all of them, and
//! the class checks run when the rotation wraps: every task and every class is checked
//! at least once every `ceil(tasks / window)` instants, and a workload of at most
//! `window` tasks (every test workload) is checked in full at every instant, as before.

use super::*;

impl Engine {
    /// Check the invariants after the instant at `self.now`; the first violation found.
    pub(super) fn check_state(&mut self) -> Result<(), String> {
        let now = self.now;
        if now < self.last_checked {
            return Err(format!(
                "time went backwards: {now} ns after {} ns",
                self.last_checked
            ));
        }
        self.last_checked = now;
        let (tasks, wrapped) = self.check_rotation();
        self.check_placement(tasks.clone())?;
        self.check_accounting_of(tasks.clone())?;
        self.check_queues(tasks)?;
        if now < self.duration {
            self.check_decisions()?;
        }
        if wrapped {
            let ctx = ctx!(self);
            for c in &self.classes {
                c.check(&ctx)
                    .map_err(|e| format!("class {}: {e}", c.name()))?;
            }
        }
        Ok(())
    }

    /// Tasks checked per instant besides the running ones: one per CPU, at least 1024.
    pub(super) fn check_window(&self) -> usize {
        self.cpus.len().max(1024)
    }

    /// The tasks to check at this instant (the running ones are added by each check) and
    /// whether the rotation wrapped (then the classes' bookkeeping is checked too).
    fn check_rotation(&mut self) -> (std::ops::Range<usize>, bool) {
        let n = self.tasks.len();
        let window = self.check_window();
        if n <= window {
            return (0..n, true);
        }
        let from = self.check_cursor;
        let to = (from + window).min(n);
        self.check_cursor = if to == n { 0 } else { to };
        (from..to, to == n)
    }

    /// The tasks of `window` and the tasks running on a CPU (each once).
    fn checked_tasks(&self, window: std::ops::Range<usize>) -> impl Iterator<Item = TaskId> + '_ {
        let (lo, hi) = (window.start, window.end);
        let running = self
            .cpus
            .iter()
            .filter_map(|c| c.curr)
            .filter(move |&t| t < lo || t >= hi);
        window.chain(running)
    }

    fn task_name(&self, t: TaskId) -> &str {
        &self.names[t]
    }

    fn check_placement(&self, window: std::ops::Range<usize>) -> Result<(), String> {
        for (cpu, c) in self.cpus.iter().enumerate() {
            if let Some(t) = c.curr {
                if self.tasks[t].on_cpu != Some(cpu) {
                    return Err(format!(
                        "CPU {cpu} runs {} but the task says it is on {:?}",
                        self.task_name(t),
                        self.tasks[t].on_cpu
                    ));
                }
            }
        }
        for t in self.checked_tasks(window) {
            let ts = &self.tasks[t];
            if let Some(cpu) = ts.on_cpu {
                if self.cpus.get(cpu).and_then(|c| c.curr) != Some(t) {
                    return Err(format!(
                        "{} says it runs on CPU {cpu}, which runs {:?}",
                        self.task_name(t),
                        self.cpus.get(cpu).and_then(|c| c.curr)
                    ));
                }
            }
        }
        Ok(())
    }

    /// The accounting bounds for every task (at the end of a run).
    pub(super) fn check_accounting(&self) -> Result<(), String> {
        self.check_accounting_of(0..self.tasks.len())
    }

    fn check_accounting_of(&self, window: std::ops::Range<usize>) -> Result<(), String> {
        let now = self.now;
        for t in self.checked_tasks(window) {
            let ts = &self.tasks[t];
            if ts.stats.cpu_time > now {
                return Err(format!(
                    "{} has run {} ns in the first {now} ns",
                    self.task_name(t),
                    ts.stats.cpu_time
                ));
            }
            for j in ts.job.iter().chain(ts.backlog.iter()) {
                if j.remaining > j.exec {
                    return Err(format!(
                        "{} job {} has {} ns left of a {} ns demand",
                        self.task_name(t),
                        j.seq,
                        j.remaining,
                        j.exec
                    ));
                }
            }
        }
        let busy: u128 = self.cpus.iter().map(|c| c.busy as u128).sum();
        if busy > now as u128 * self.cpus.len() as u128 {
            return Err(format!(
                "the CPUs were busy {busy} ns in total in the first {now} ns"
            ));
        }
        Ok(())
    }

    fn check_queues(&self, window: std::ops::Range<usize>) -> Result<(), String> {
        for t in self.checked_tasks(window) {
            let ts = &self.tasks[t];
            for class in ClassId::ALL {
                let Some(rq) = self.classes[class as usize].waiting_rq(t) else {
                    continue;
                };
                let problem = if ts.class != class {
                    Some("of another class")
                } else if !ts.runnable {
                    Some("not runnable")
                } else if ts.on_cpu.is_some() {
                    Some("on a CPU")
                } else if rq != ts.rq {
                    Some("on another run queue")
                } else {
                    None
                };
                if let Some(p) = problem {
                    return Err(format!(
                        "{} waits on run queue {rq} of class {:?} but is {p}",
                        self.task_name(t),
                        class
                    ));
                }
            }
            let waiting = self.classes[ts.class as usize].waiting_rq(t).is_some();
            if ts.runnable && ts.on_cpu.is_none() && !ts.dl.throttled && !waiting {
                return Err(format!(
                    "{} is runnable and off the CPUs but waits in no queue",
                    self.task_name(t)
                ));
            }
        }
        Ok(())
    }

    /// Whether `class` has a task waiting that may run on `cpu`.
    pub(super) fn waiting_for(&self, class: ClassId, cpu: CpuId) -> bool {
        let c = &self.classes[class as usize];
        if c.nr_waiting() == 0 {
            return false;
        }
        if self.class_global[class as usize] {
            c.peek_next_task(&ctx!(self), 0, cpu).is_some()
        } else {
            c.waiting_on(cpu) > 0
        }
    }

    fn check_decisions(&self) -> Result<(), String> {
        let decided =
            |cpu: CpuId| !self.marked.contains(cpu) && !self.kernel.blocked(cpu, self.now);
        for cpu in (0..self.cpus.len()).filter(|&c| decided(c)) {
            let running = self.cpus[cpu].curr.filter(|&t| self.tasks[t].runnable);
            let level = running.map_or(ClassId::ALL.len(), |t| self.tasks[t].class as usize);
            for class in ClassId::ALL.into_iter().take(level) {
                if self.waiting_for(class, cpu) {
                    return Err(format!(
                        "CPU {cpu} runs {} while class {class:?} has a task waiting for it",
                        running.map_or("nothing", |t| self.task_name(t))
                    ));
                }
            }
        }
        if self.placement == Placement::Global {
            self.check_global_order(&decided)?;
        }
        Ok(())
    }

    /// Global placement, classes ordered by a fixed key: the best waiting task does not
    /// beat the worst running one of its class (among CPUs it may use).
    fn check_global_order(&self, decided: &dyn Fn(CpuId) -> bool) -> Result<(), String> {
        let ctx = ctx!(self);
        for class in ClassId::ALL {
            let c = &self.classes[class as usize];
            if !self.class_global[class as usize] || c.reads_progress() || c.nr_waiting() == 0 {
                continue;
            }
            for cpu in (0..self.cpus.len()).filter(|&x| decided(x)) {
                let Some(curr) = self.cpus[cpu]
                    .curr
                    .filter(|&t| self.tasks[t].runnable && self.tasks[t].class == class)
                else {
                    continue;
                };
                let Some(cand) = c.peek_next_task(&ctx, 0, cpu) else {
                    continue;
                };
                if let (Some(kc), Some(kw)) = (c.preempt_key(&ctx, curr), c.preempt_key(&ctx, cand))
                {
                    if kw < kc {
                        return Err(format!(
                            "{} waits with key {kw} while {} runs on CPU {cpu} with key {kc}",
                            self.task_name(cand),
                            self.task_name(curr)
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}
