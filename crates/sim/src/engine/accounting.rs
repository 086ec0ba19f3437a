//! Time accounting (`update_curr`): CPU time, job progress and CBS runtime of the running tasks.

use super::*;

impl Engine {
    /// Count `n` CPUs looked at by a loop over CPUs ([`WorkStats::cpu_visits`]).
    pub(super) fn visit(&self, n: usize) {
        self.cpu_visits.set(self.cpu_visits.get() + n as u64);
    }

    /// Account every running CPU up to `t` (the kernel's `update_curr`).
    pub(super) fn advance(&mut self, t: Ns) {
        self.visit(self.cpus.len());
        for cpu in 0..self.cpus.len() {
            self.account(cpu, t);
        }
        self.now = t;
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
