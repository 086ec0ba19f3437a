//! Per-CPU timers (hrtimers): completion, exact CBS budget exhaustion, class decision instants.

use super::*;

impl Engine {
    /// Arm each CPU's timer for the next completion (or exact budget exhaustion), or for
    /// the class's own decision instant ([`SchedClass::next_decision`]) if that is earlier.
    /// Only CPUs whose timer may have moved are looked at (marked, switched, charged a
    /// cost), unless a class arms decision timers, which any change anywhere may move.
    pub(super) fn rearm_timers(&mut self) {
        // In CPU order: the timers' sequence numbers order equal instants.
        let mut list = std::mem::take(&mut self.rearm);
        if self.decision_timers {
            list.fill(self.cpus.len());
        }
        self.visit(list.len());
        for cpu in list.iter() {
            self.sync(cpu);
            let c = &self.cpus[cpu];
            let (want, decision) = match c.curr {
                Some(t) if self.tasks[t].runnable => {
                    let ts = &self.tasks[t];
                    let mut at = self.now + c.overhead_left + ts.remaining();
                    if self.hrtick && self.cbs && ts.class == ClassId::Dl {
                        at = at.min(self.now + ts.dl.runtime.max(0) as Ns);
                    }
                    let class = &self.classes[ts.class as usize];
                    let mut decision = if class.uses_decision_timer() {
                        class.next_decision(&ctx!(self), ts.rq, cpu, t)
                    } else {
                        None
                    };
                    if !class.decides_running() {
                        // A class that plans its running set may want this CPU back
                        // from a task of another class (a planned slot begins).
                        decision = match (decision, self.idle_decision(cpu)) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            (a, b) => a.or(b),
                        };
                    }
                    match decision {
                        Some(d) if d <= at => {
                            debug_assert!(d > self.now, "decision instant {d} not after now");
                            // No decision before kernel work on the CPU ends.
                            let d = d.max(self.kernel.busy_until(cpu));
                            (d.max(self.now + 1), true)
                        }
                        _ => (at, false),
                    }
                }
                _ => match self.idle_decision(cpu) {
                    Some(d) => (d.max(self.kernel.busy_until(cpu)).max(self.now + 1), true),
                    None => (Ns::MAX, false),
                },
            };
            let c = &mut self.cpus[cpu];
            c.timer_decision = decision;
            if want != c.timer_at {
                self.arm_cpu_timer(cpu, want);
            }
        }
        list.clear();
        self.rearm = list;
    }

    /// The earliest instant a class that plans its running set
    /// ([`SchedClass::decides_running`]) wants `cpu`, idle or running a task of another
    /// class, reconsidered ([`SchedClass::next_idle_decision`]).
    fn idle_decision(&self, cpu: CpuId) -> Option<Ns> {
        ClassId::ALL
            .into_iter()
            .filter(|&c| self.class_has_tasks[c as usize])
            .map(|c| &self.classes[c as usize])
            .filter(|cls| cls.uses_decision_timer() && cls.decides_running())
            .filter_map(|cls| cls.next_idle_decision(&ctx!(self), cpu))
            .min()
    }
}
