//! Time accounting (`update_curr`): CPU time, job progress and CBS runtime of the running tasks.

use super::*;

impl Engine {
    /// Count `n` CPUs looked at by a loop over CPUs ([`WorkStats::cpu_visits`]).
    pub(super) fn visit(&self, n: usize) {
        self.cpu_visits.set(self.cpu_visits.get() + n as u64);
    }

    /// Move the clock to `t`, accounting every running CPU up to it (the kernel's
    /// `update_curr`) — or, when no class reads running tasks' progress
    /// (`lazy_accounting`), none: each CPU is then accounted when something about it is
    /// read or changes ([`Engine::sync`]), which gives the same sums, since accounting an
    /// interval in two parts or in one is the same.
    pub(super) fn advance(&mut self, t: Ns) {
        if self.lazy_accounting {
            self.now = t;
            return;
        }
        self.advance_all(t);
    }

    /// Move the clock to `t`, accounting every CPU.
    pub(super) fn advance_all(&mut self, t: Ns) {
        self.visit(self.cpus.len());
        // The records as slices, borrowed once: `account`'s `&mut self` reloads the
        // engine's vectors at every CPU (the eager accounting of every event's instant).
        let cbs = self.cbs;
        let tasks: &mut [TaskState] = &mut self.tasks;
        for (cpu, c) in self.cpus.iter_mut().enumerate() {
            account_cpu(c, tasks, cbs, cpu, t);
        }
        self.now = t;
    }

    /// Bring `cpu`'s accounting up to now before its running task's progress is read or
    /// its overhead changes (a no-op unless accounting is lazy).
    #[inline]
    pub(super) fn sync(&mut self, cpu: CpuId) {
        // Inlined to its tests: a CPU accounted at this instant already (a switch's, then
        // the timer's re-arm) has nothing to add, and `account` would only store `now`.
        if self.lazy_accounting && self.cpus[cpu].last_update != self.now {
            self.account(cpu, self.now);
        }
    }

    pub(super) fn account(&mut self, cpu: CpuId, t: Ns) {
        account_cpu(&mut self.cpus[cpu], &mut self.tasks, self.cbs, cpu, t);
    }
}

/// [`Engine::account`] on the records: `c` is CPU `cpu`'s.
#[inline(always)]
pub(super) fn account_cpu(c: &mut CpuState, tasks: &mut [TaskState], cbs: bool, cpu: CpuId, t: Ns) {
    let delta = t - c.last_update;
    c.last_update = t;
    let Some(task) = c.curr else { return };
    if delta == 0 {
        return;
    }
    let oh = delta.min(c.overhead_left);
    c.overhead_left -= oh;
    c.busy += delta;
    let ts = &mut tasks[task];
    if let Some(j) = ts.job.as_mut() {
        debug_assert!(delta - oh <= j.remaining, "CPU {cpu} ran past a completion");
        j.remaining -= (delta - oh).min(j.remaining);
    }
    ts.stats.cpu_time += delta;
    if cbs && ts.class == ClassId::Dl {
        ts.dl.runtime -= delta as i64;
    }
}
