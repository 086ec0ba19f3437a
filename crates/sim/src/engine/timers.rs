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
                    let decision = if class.uses_decision_timer() {
                        class.next_decision(&ctx!(self), ts.rq, cpu, t)
                    } else {
                        None
                    };
                    // A higher class may want this CPU back at an instant of its own (a
                    // server's budget running out while a lower class runs here).
                    let above = match self.decision_timers {
                        true => self.idle_decision(cpu, |c| c < ts.class),
                        false => None,
                    };
                    match decision {
                        Some(d) if d <= at && above.is_none_or(|a| d <= a) => {
                            debug_assert!(d > self.now, "decision instant {d} not after now");
                            // No decision before kernel work on the CPU ends.
                            let d = d.max(self.kernel.busy_until(cpu));
                            (d.max(self.now + 1), true)
                        }
                        // Not the running class's decision: the CPU is only marked for one.
                        _ => match above {
                            Some(a) if a < at => {
                                (a.max(self.kernel.busy_until(cpu)).max(self.now + 1), false)
                            }
                            _ => (at, false),
                        },
                    }
                }
                _ if self.decision_timers => match self.idle_decision(cpu, |_| true) {
                    Some(d) => (d.max(self.kernel.busy_until(cpu)).max(self.now + 1), true),
                    None => (Ns::MAX, false),
                },
                _ => (Ns::MAX, false),
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

    /// The earliest decision instant the classes `which` with tasks ask for on `cpu`,
    /// where none of their tasks runs ([`SchedClass::next_decision_idle`]).
    fn idle_decision(&self, cpu: CpuId, which: impl Fn(ClassId) -> bool) -> Option<Ns> {
        ClassId::ALL
            .into_iter()
            .filter(|&c| which(c) && self.class_has_tasks[c as usize])
            .filter(|&c| self.classes[c as usize].uses_decision_timer())
            .filter_map(|c| {
                let rq = self.rq_of(c, cpu);
                self.classes[c as usize].next_decision_idle(&ctx!(self), rq, cpu)
            })
            .min()
    }
}
