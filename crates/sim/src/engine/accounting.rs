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
        for cpu in 0..self.cpus.len() {
            self.account(cpu, t);
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
        let c = &mut self.cpus[cpu];
        let delta = t - c.last_update;
        c.last_update = t;
        let Some(task) = c.curr else { return };
        if delta == 0 {
            return;
        }
        let oh = delta.min(c.overhead_left);
        c.overhead_left -= oh;
        c.busy += delta;
        let ts = &mut self.tasks[task];
        if let Some(j) = ts.job.as_mut() {
            debug_assert!(delta - oh <= j.remaining, "CPU {cpu} ran past a completion");
            j.remaining -= (delta - oh).min(j.remaining);
        }
        ts.stats.cpu_time += delta;
        if self.cbs && ts.class == ClassId::Dl {
            ts.dl.runtime -= delta as i64;
        }
    }
}
