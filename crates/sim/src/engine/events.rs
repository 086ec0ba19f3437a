//! Event queue: what can happen, in which order within an instant, and the dispatch of each event to its handler.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum EventKind {
    CpuTimer { cpu: CpuId, gen: u64 },
    Replenish { task: TaskId },
    DeadlineCheck { task: TaskId, seq: u64 },
    Release { task: TaskId },
    Wake { task: TaskId },
    Tick,
    // Interrupts and kernel work (engine/kernel.rs).
    Irq { src: usize },
    Section { cpu: CpuId },
    KernelEnd { cpu: CpuId },
}

impl EventKind {
    pub(super) fn rank(self) -> u8 {
        match self {
            EventKind::CpuTimer { .. } => 0,
            EventKind::Replenish { .. } => 1,
            EventKind::DeadlineCheck { .. } => 2,
            EventKind::Release { .. } | EventKind::Wake { .. } => 3,
            EventKind::Tick => 4,
            EventKind::Irq { .. } | EventKind::Section { .. } | EventKind::KernelEnd { .. } => 5,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Event {
    pub(super) time: Ns,
    pub(super) rank: u8,
    pub(super) seq: u64,
    pub(super) kind: EventKind,
}

impl Engine {
    pub(super) fn push(&mut self, time: Ns, kind: EventKind) {
        self.event_seq += 1;
        self.events.push(Reverse(Event {
            time,
            rank: kind.rank(),
            seq: self.event_seq,
            kind,
        }));
    }

    pub(super) fn handle(&mut self, kind: EventKind) {
        match kind {
            EventKind::CpuTimer { cpu, gen } => {
                if gen != self.cpus[cpu].timer_gen {
                    return; // superseded
                }
                self.events_processed += 1;
                let decision = std::mem::take(&mut self.cpus[cpu].timer_decision);
                self.cpus[cpu].timer_at = Ns::MAX;
                self.cpus[cpu].dirty = true;
                self.cpu_timer(cpu, decision);
            }
            EventKind::Replenish { task } => {
                self.events_processed += 1;
                self.replenish(task);
            }
            EventKind::DeadlineCheck { task, seq } => {
                self.events_processed += 1;
                self.deadline_check(task, seq);
            }
            EventKind::Release { task } => {
                self.events_processed += 1;
                self.release(task);
            }
            EventKind::Wake { task } => {
                self.events_processed += 1;
                self.fair_wake(task);
            }
            EventKind::Tick => {
                self.events_processed += 1;
                self.tick();
            }
            EventKind::Irq { src } => {
                self.events_processed += 1;
                self.irq(src);
            }
            EventKind::Section { cpu } => {
                self.events_processed += 1;
                self.kernel_section(cpu);
            }
            EventKind::KernelEnd { cpu } => self.kernel_end(cpu),
        }
    }

    /// The CPU timer fired: the running job completed, its CBS budget ran out, or (with
    /// `decision`) its class asked for a decision at this instant. A completion or a
    /// throttle at the same instant takes precedence: it is a decision point anyway.
    pub(super) fn cpu_timer(&mut self, cpu: CpuId, decision: bool) {
        let Some(t) = self.cpus[cpu].curr else { return };
        if !self.tasks[t].runnable {
            return;
        }
        if self.tasks[t].remaining() == 0 && self.cpus[cpu].overhead_left == 0 {
            self.complete_job(t, cpu);
        } else if self.budget_exhausted(t) {
            self.throttle(t);
        } else if decision {
            let (rq, class) = (self.tasks[t].rq, self.tasks[t].class as usize);
            if self.classes[class].decision_due(&ctx!(self), rq, cpu, t) {
                self.cpus[cpu].need_resched = true;
            }
        }
    }
}
