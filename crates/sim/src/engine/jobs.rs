//! Job lifecycle: releases, fair tasks' bursts and sleeps, completions, aborts at the deadline.

use super::*;
use schedlab_model::release::{JobDraw, ReleaseStream};

/// Per task: the jobs still to come (the release stream shared with the real runner)
/// and the number of the next one.
pub(super) struct ReleaseModel {
    pub(super) stream: ReleaseStream,
    pub(super) next_seq: u64,
}

/// What an aperiodic fair task does: CPU-bound, finite `work`, or run/sleep phases.
pub(super) struct Behaviour {
    pub(super) phases: Vec<Phase>,
    /// Index of the next phase to run.
    pub(super) next: usize,
    /// CPU time still to do for a task with `work:`.
    pub(super) work_left: Option<Ns>,
}

/// Execution time of a job that never ends within a run (a CPU-bound task).
pub(super) const FOREVER: Ns = Ns::MAX / 4;

impl Engine {
    pub(super) fn release(&mut self, t: TaskId) {
        let now = self.now;
        // A latency probe (periodic) still waiting for its previous wake-up skips this
        // period, as cyclictest does when it wakes after its next target: an overrun, no
        // job and no sample.
        if self.tasks[t].job.is_some() && self.latency[t].overrun() {
            let next = now.saturating_add(self.tasks[t].period);
            if next < self.duration {
                self.push(next, EventKind::Release { task: t as u32 });
            }
            return;
        }
        let rm = &mut self.releases[t];
        let seq = rm.next_seq;
        rm.next_seq += 1;
        let JobDraw { exec, gap } = rm.stream.next_job();
        let job = Job {
            seq,
            release: now,
            deadline: now.saturating_add(self.tasks[t].rel_deadline),
            exec,
            remaining: exec,
        };
        if let Some(next) = now.checked_add(gap) {
            if next < self.duration {
                self.push(next, EventKind::Release { task: t as u32 });
            }
        }
        if self.on_miss == OnMiss::Abort && job.deadline <= self.duration {
            self.push(
                job.deadline,
                EventKind::DeadlineCheck {
                    task: t as u32,
                    seq,
                },
            );
        }
        self.release_job(t, job);
    }

    /// `job` of `t` is released now: logged, counted, then queued behind the task's
    /// current job or woken. The seam between drawing a job (`release`) and running it,
    /// so that the external engine (`external.rs`) runs the caller's jobs through the
    /// same path: what a release does to the classes belongs here, not in `release`.
    pub(super) fn release_job(&mut self, t: TaskId, job: Job) {
        if let Some(log) = self.log.as_mut() {
            log.push(SimEvent::Release {
                time: self.now,
                task: t,
                job: job.seq,
                deadline: job.deadline,
                exec: job.exec,
            });
        }
        let class = self.tasks[t].class as usize;
        self.classes[class].job_released(&ctx!(self), t);
        if self.classes[class].release_reselects() {
            let rq = self.tasks[t].rq;
            self.poke(self.tasks[t].class, rq);
        }
        let ts = &mut self.tasks[t];
        ts.stats.jobs += 1;
        if ts.job.is_some() {
            ts.backlog.push_back(job);
            return;
        }
        ts.job = Some(job);
        ts.job_started = false;
        // A fresh job has not run anywhere yet, unless its task is still on a CPU.
        ts.job_last_cpu = ts.on_cpu;
        if self.defer_wakeup(t) {
            return; // woken by its timer a little later (`job_wake.rs`)
        }
        let ts = &self.tasks[t];
        if !ts.dl.throttled {
            self.cbs_wakeup_rule(t);
            self.wakeup(t, EnqueueReason::Wakeup);
        }
    }

    /// An aperiodic fair task wakes for its next burst (or starts its work).
    pub(super) fn fair_wake(&mut self, t: TaskId) {
        let Some(b) = self.behaviour[t].as_mut() else {
            return;
        };
        let mut exec = match b.phases.get(b.next) {
            Some(Phase::Run(r)) => *r,
            _ => b.work_left.unwrap_or(FOREVER),
        };
        if let Some(left) = b.work_left {
            exec = exec.min(left);
        }
        let rm = &mut self.releases[t];
        let seq = rm.next_seq;
        rm.next_seq += 1;
        let job = Job {
            seq,
            release: self.now,
            deadline: Ns::MAX,
            exec,
            remaining: exec,
        };
        if let Some(log) = self.log.as_mut() {
            log.push(SimEvent::Release {
                time: self.now,
                task: t,
                job: seq,
                deadline: Ns::MAX,
                exec,
            });
        }
        let ts = &mut self.tasks[t];
        ts.stats.jobs += 1;
        ts.job = Some(job);
        ts.job_started = false;
        ts.job_last_cpu = ts.on_cpu;
        self.wakeup(t, EnqueueReason::Wakeup);
    }

    /// An aperiodic fair task finished a burst of `ran` ns: sleep until its next run
    /// phase, or end when its work is done.
    pub(super) fn after_burst(&mut self, t: TaskId, ran: Ns) {
        let now = self.now;
        let Some(b) = self.behaviour[t].as_mut() else {
            return;
        };
        if let Some(left) = b.work_left.as_mut() {
            *left = left.saturating_sub(ran);
            if *left == 0 {
                self.tasks[t].stats.finished_at = Some(now);
                return;
            }
        }
        if b.phases.is_empty() {
            return;
        }
        // Past the run phase just done, sum the sleeps up to the next run.
        let n = b.phases.len();
        let mut sleep = 0;
        let mut i = (b.next + 1) % n;
        for _ in 0..n {
            match b.phases[i] {
                Phase::Sleep(d) => sleep += d,
                Phase::Run(_) => break,
            }
            i = (i + 1) % n;
        }
        b.next = i;
        if let Some(at) = now.checked_add(sleep) {
            if at < self.duration {
                self.push(at, EventKind::Wake { task: t as u32 });
            }
        }
    }

    pub(super) fn complete_job(&mut self, t: TaskId, cpu: CpuId) {
        let now = self.now;
        let class = self.tasks[t].class as usize;
        self.classes[class].job_completed(&ctx!(self), t);
        if let (Some(log), Some(j)) = (self.log.as_mut(), self.tasks[t].job) {
            log.push(SimEvent::Complete {
                time: now,
                task: t,
                job: j.seq,
                cpu,
            });
        }
        let ts = &mut self.tasks[t];
        let job = ts.job.take().expect("completing task has a job");
        ts.stats.completed += 1;
        let response = now - job.release;
        ts.stats.response_sum += response as u128;
        ts.stats.response_max = ts.stats.response_max.max(response);
        if now > job.deadline {
            ts.stats.misses += 1;
            ts.stats.tardiness_max = ts.stats.tardiness_max.max(now - job.deadline);
        }
        if let Some(tr) = self.trace.as_mut() {
            let since = self.cpus[cpu].since;
            if now > since {
                tr.push(Segment {
                    cpu,
                    task: t,
                    job: job.seq,
                    start: since,
                    end: now,
                });
            }
            self.cpus[cpu].since = now;
        }
        self.next_job_or_sleep(t, Some(cpu));
        if self.behaviour[t].is_some() {
            self.after_burst(t, job.exec);
        }
    }

    /// After the current job of `t` ended (completed or aborted): start the next released
    /// job at once, or put the task to sleep.
    pub(super) fn next_job_or_sleep(&mut self, t: TaskId, cpu: Option<CpuId>) {
        if cpu.is_none() {
            // A waiting task leaves or is queued again: it may have woken this instant
            // without being queued yet (`External::complete`).
            self.flush_woken();
        }
        let ts = &mut self.tasks[t];
        if let Some(next) = ts.backlog.pop_front() {
            ts.job = Some(next);
            ts.job_last_cpu = cpu;
            ts.job_started = false;
            if cpu.is_some() && self.tasks[t].runnable {
                self.note_dispatch(t); // it goes on running its next job at once
            }
            if self.budget_exhausted(t) {
                self.throttle(t);
            } else {
                let rq = self.tasks[t].rq;
                let class = self.tasks[t].class as usize;
                if cpu.is_some() {
                    self.classes[class].job_changed(&ctx!(self), rq, t);
                } else {
                    // Waiting with a new job: requeue so that its key is the new one.
                    self.classes[class].dequeue_task(&ctx!(self), rq, t);
                    self.classes[class].enqueue_task(&ctx!(self), rq, t, EnqueueReason::Wakeup);
                    self.poke(self.tasks[t].class, rq);
                }
            }
            return;
        }
        self.fair_untrack(t);
        self.tasks[t].runnable = false;
        self.note_busy_task(t);
        let ts = &mut self.tasks[t];
        if cpu.is_none() {
            // Not running: it is waiting on a run queue; take it off.
            let rq = ts.rq;
            let class = ts.class as usize;
            self.classes[class].dequeue_task(&ctx!(self), rq, t);
        } else {
            let rq = ts.rq;
            let class = ts.class as usize;
            self.classes[class].task_stopped(&ctx!(self), rq, t);
        }
        if self.cbs && self.tasks[t].class == ClassId::Dl && self.tasks[t].dl.runtime < 0 {
            // The job overran its budget before sleeping: throttled until the next period
            // (`update_curr_dl` at dequeue). A job ending exactly on its budget is not: with
            // no modelled overhead its dequeue charges nothing.
            self.arm_replenish(t);
        }
    }

    /// `on_miss: abort`: drop a job still unfinished at its deadline.
    pub(super) fn deadline_check(&mut self, t: TaskId, seq: u64) {
        if let Some(c) = self.tasks[t].on_cpu {
            self.sync(c); // its job may be dropped: charge it first
        }
        if let Some(log) = self.log.as_mut() {
            let ts = &self.tasks[t];
            if ts.job.is_some_and(|j| j.seq == seq) || ts.backlog.iter().any(|j| j.seq == seq) {
                log.push(SimEvent::Abort {
                    time: self.now,
                    task: t,
                    job: seq,
                });
            }
        }
        let ts = &mut self.tasks[t];
        if ts.job.is_some_and(|j| j.seq == seq) {
            ts.stats.misses += 1;
            ts.stats.aborted += 1;
            ts.job = None;
            let cpu = ts.on_cpu;
            if let Some(c) = cpu {
                self.mark_dirty(c);
            }
            let ts = &mut self.tasks[t];
            if !ts.runnable {
                // Throttled: it will find no job when replenished.
                if let Some(next) = ts.backlog.pop_front() {
                    ts.job = Some(next);
                    ts.job_last_cpu = None;
                }
                return;
            }
            if let (Some(cpu), Some(tr)) = (cpu, self.trace.as_mut()) {
                let since = self.cpus[cpu].since;
                if self.now > since {
                    tr.push(Segment {
                        cpu,
                        task: t,
                        job: seq,
                        start: since,
                        end: self.now,
                    });
                }
                self.cpus[cpu].since = self.now;
            }
            self.next_job_or_sleep(t, cpu);
        } else if let Some(pos) = ts.backlog.iter().position(|j| j.seq == seq) {
            ts.backlog.remove(pos);
            ts.stats.misses += 1;
            ts.stats.aborted += 1;
        }
    }

    /// Record the wake-up latency of `t`'s current job at its first dispatch.
    pub(super) fn note_dispatch(&mut self, t: TaskId) {
        self.note_dispatch_after(t, 0);
    }

    /// [`Engine::note_dispatch`] on a CPU that first pays `exit` (an idle-state exit):
    /// the task's work starts that much later, and so does its sample.
    #[inline(always)]
    pub(super) fn note_dispatch_after(&mut self, t: TaskId, exit: Ns) {
        // Inlined to this test (a call per switch in; a job's first dispatch only once).
        if !self.tasks[t].job_started {
            self.note_first_dispatch(t, exit);
        }
    }

    /// [`Engine::note_dispatch_after`] at a job's first dispatch.
    fn note_first_dispatch(&mut self, t: TaskId, exit: Ns) {
        let ts = &mut self.tasks[t];
        ts.job_started = true;
        if let Some(j) = ts.job {
            self.latency[t].record(self.now.saturating_sub(j.release) + exit);
        }
        // The job's own costs (return from the sleep, clock reads, the way back into
        // it) are paid on the CPU it starts on, before its work, like a switch cost.
        if self.job_cost > 0 {
            if let Some(cpu) = self.tasks[t].on_cpu {
                self.sync(cpu);
                self.cpus[cpu].overhead_left += self.job_cost;
                self.force_rearm(cpu);
            }
        }
    }
}
