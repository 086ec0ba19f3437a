//! Event queue: what can happen, in which order within an instant, and the dispatch of each event to its handler.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum EventKind {
    /// A CPU's hrtimer (kept apart from the heap so that re-arming cancels it).
    CpuTimer {
        cpu: u32,
    },
    Replenish {
        task: u32,
    },
    DeadlineCheck {
        task: u32,
        seq: u64,
    },
    Release {
        task: u32,
    },
    Wake {
        task: u32,
    },
    /// A released periodic job's thread is woken (`job_wake.rs`).
    JobWake {
        task: u32,
    },
    Tick,
    /// A quantum boundary of a quantum-driven class ([`crate::class::SchedClass::quantum`]).
    Quantum {
        class: u32,
    },
    // Interrupts and kernel work (engine/kernel.rs).
    Irq {
        src: u32,
    },
    Section {
        cpu: u32,
    },
    KernelEnd {
        cpu: u32,
    },
}

impl EventKind {
    pub(super) fn rank(self) -> u8 {
        match self {
            EventKind::CpuTimer { .. } => 0,
            EventKind::Replenish { .. } => 1,
            EventKind::DeadlineCheck { .. } => 2,
            EventKind::Release { .. } | EventKind::Wake { .. } | EventKind::JobWake { .. } => 3,
            EventKind::Tick | EventKind::Quantum { .. } => 4,
            EventKind::Irq { .. } | EventKind::Section { .. } | EventKind::KernelEnd { .. } => 5,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Event {
    pub(super) time: Ns,
    /// Rank in the top 8 bits, sequence number below: one comparison orders both.
    pub(super) order: u64,
    pub(super) kind: EventKind,
}

// Ids are u32 (CPUs ≤ 1024, tasks far below 2^32) so that an event is 32 bytes: the heap
// moves events on every push and pop.
const _: () = assert!(std::mem::size_of::<Event>() == 32);

impl Event {
    fn order(rank: u8, seq: u64) -> u64 {
        debug_assert!(seq < 1 << 56);
        (rank as u64) << 56 | seq
    }
}

/// A CPU timer's key in `cpu_timers`: its instant, then its sequence number.
fn timer_key(at: Ns, seq: u64) -> u128 {
    (at as u128) << 64 | seq as u128
}

impl Engine {
    pub(super) fn push(&mut self, time: Ns, kind: EventKind) {
        let seq = self.next_seq();
        let order = Event::order(kind.rank(), seq);
        self.events.push((time as u128) << 64 | order as u128, kind);
    }

    /// The sequence number of a new event (ties at one instant and rank go in this order).
    fn next_seq(&mut self) -> u64 {
        self.seq_with_pending(self.events.len() + self.cpu_timers.len() + 1)
    }

    /// `next_seq` when `pending` events will wait once the new one is queued.
    fn seq_with_pending(&mut self, pending: usize) -> u64 {
        self.event_seq += 1;
        self.work.events_queued += 1;
        self.work.queue_peak = self.work.queue_peak.max(pending as u64);
        self.event_seq
    }

    /// Arm `cpu`'s timer for `at` (`Ns::MAX`: disarm), cancelling the one armed before:
    /// a timer that moved leaves nothing behind, so the queue stays as long as the number
    /// of CPUs and pending events, however long the run.
    pub(super) fn arm_cpu_timer(&mut self, cpu: CpuId, at: Ns) {
        // `timer_at` may have been overwritten to force re-arming; the armed entry is
        // remembered apart, in `cpu_timers`.
        if at == Ns::MAX {
            if self.cpu_timers.remove(cpu).is_some() {
                self.work.timers_cancelled += 1;
            }
        } else {
            // A timer moved in place: the queue holds the new instant instead of the old.
            let cancelled = self.cpu_timers.get(cpu).is_some();
            let pending = self.events.len() + self.cpu_timers.len() + 1 - cancelled as usize;
            let seq = self.seq_with_pending(pending);
            if cancelled {
                self.work.timers_cancelled += 1;
            }
            self.cpus[cpu].timer_gen = seq;
            self.cpu_timers.set(cpu, timer_key(at, seq));
        }
        self.cpus[cpu].timer_at = at;
    }

    /// When the next event is due (`&mut`: the event queue may look ahead).
    pub(super) fn next_event_time(&mut self) -> Option<Ns> {
        let heap = self.events.peek().map(|&(k, _)| (k >> 64) as Ns);
        let timer = self
            .cpu_timers
            .first(&self.cpu_visits)
            .map(|(k, _)| (k >> 64) as Ns);
        match (heap, timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Take the next event in (time, rank, sequence) order if it is due at `at`: the
    /// event loop's test and pop in one look at the two queues' first entries.
    pub(super) fn pop_event_at(&mut self, at: Ns) -> Option<Event> {
        let heap = self
            .events
            .peek()
            .map(|&(k, _)| ((k >> 64) as Ns, k as u64));
        let timer = self
            .cpu_timers
            .first(&self.cpu_visits)
            .map(|(k, cpu)| ((k >> 64) as Ns, k as u64, cpu));
        match (heap, timer) {
            (Some(h), Some((t, seq, cpu))) if (t, Event::order(0, seq)) < h => {
                (t == at).then(|| self.pop_timer(t, seq, cpu))
            }
            (None, Some((t, seq, cpu))) => (t == at).then(|| self.pop_timer(t, seq, cpu)),
            (Some((t, _)), _) if t == at => self.events.pop().map(|(k, kind)| Event {
                time: (k >> 64) as Ns,
                order: k as u64,
                kind,
            }),
            _ => None,
        }
    }

    fn pop_timer(&mut self, time: Ns, seq: u64, cpu: CpuId) -> Event {
        self.cpu_timers.remove(cpu);
        let kind = EventKind::CpuTimer { cpu: cpu as u32 };
        Event {
            time,
            order: Event::order(kind.rank(), seq),
            kind,
        }
    }

    pub(super) fn handle(&mut self, kind: EventKind) {
        match kind {
            EventKind::CpuTimer { cpu } => {
                let cpu = cpu as CpuId;
                self.events_processed += 1;
                self.sync(cpu);
                let decision = std::mem::take(&mut self.cpus[cpu].timer_decision);
                self.cpus[cpu].timer_at = Ns::MAX;
                self.mark_dirty(cpu);
                self.cpu_timer(cpu, decision);
            }
            EventKind::Replenish { task } => {
                let task = task as TaskId;
                self.events_processed += 1;
                self.replenish(task);
            }
            EventKind::DeadlineCheck { task, seq } => {
                let task = task as TaskId;
                self.events_processed += 1;
                self.deadline_check(task, seq);
            }
            EventKind::Release { task } => {
                let task = task as TaskId;
                self.events_processed += 1;
                self.release(task);
            }
            EventKind::Wake { task } => {
                let task = task as TaskId;
                self.events_processed += 1;
                self.fair_wake(task);
            }
            EventKind::JobWake { task } => {
                self.events_processed += 1;
                self.job_wake(task as TaskId);
            }
            EventKind::Tick => {
                self.events_processed += 1;
                self.tick();
            }
            EventKind::Quantum { class } => {
                self.events_processed += 1;
                self.quantum_boundary(class as usize);
            }
            EventKind::Irq { src } => {
                let src = src as usize;
                self.events_processed += 1;
                self.irq(src);
            }
            EventKind::Section { cpu } => {
                let cpu = cpu as CpuId;
                self.events_processed += 1;
                self.kernel_section(cpu);
            }
            EventKind::KernelEnd { cpu } => self.kernel_end(cpu as CpuId),
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
        } else if decision && self.classes[self.tasks[t].class as usize].uses_decision_timer() {
            // (A timer armed for a planning class while a task of another class runs
            // only marks the CPU: the placement lets the planned task take it.)
            let (rq, class) = (self.tasks[t].rq, self.tasks[t].class as usize);
            if self.classes[class].decision_due(&ctx!(self), rq, cpu, t) {
                self.mark_resched(cpu);
            }
        }
    }

    /// A quantum boundary of class `class`: it decides the next quantum, the CPUs running
    /// its tasks that must give way are asked to reschedule, and every CPU is reconsidered.
    fn quantum_boundary(&mut self, class: usize) {
        let Some(q) = self.classes[class].quantum() else {
            return;
        };
        if self.now + q < self.duration {
            self.push(
                self.now + q,
                EventKind::Quantum {
                    class: class as u32,
                },
            );
        }
        self.classes[class].quantum_boundary(&ctx!(self));
        for cpu in 0..self.cpus.len() {
            self.mark_dirty(cpu);
            let Some(t) = self.cpus[cpu].curr else {
                continue;
            };
            if !self.tasks[t].runnable || self.tasks[t].class as usize != class {
                continue;
            }
            self.sync(cpu);
            let rq = self.tasks[t].rq;
            if self.classes[class].decision_due(&ctx!(self), rq, cpu, t) {
                self.mark_resched(cpu);
            }
        }
        self.global_poked = true;
    }
}

/// Ask the cache for the line at `p` (a hint: no effect on any result; nothing on other
/// architectures).
#[inline(always)]
fn prefetch<T>(p: *const T) {
    // SAFETY: a prefetch reads nothing the program sees and cannot fault, whatever the
    // address; SSE is part of the x86_64 baseline.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Prefetch the first `lines` 64-byte lines of `*p`.
#[inline(always)]
fn prefetch_lines<T>(p: &T, lines: usize) {
    let p = p as *const T as *const u8;
    for i in 0..lines {
        prefetch(p.wrapping_add(64 * i));
    }
}

impl Engine {
    /// Hint the cache to fetch the task records the next event will read, while this one
    /// is handled. With 100,000 tasks each release and completion touches a task whose
    /// records (`tasks`, `releases`, `latency`: ~55 MB) are out of the caches, and the
    /// instant's events (about 2,000 releases at each millisecond of `scale-100k`) came
    /// one miss after the other. Only the entries already at hand are read (the current
    /// instant's heap, the timer heap's root), so the queues are left as they are.
    /// Not inlined: the event loop's code for the small sets stays as it was (inlined,
    /// it cost `simso-64x8` 6 % more instructions through the loop's other inlining).
    #[inline(never)]
    pub(super) fn prefetch_next_event(&self) {
        if let Some(&(_, EventKind::Release { task } | EventKind::JobWake { task })) =
            self.events.peek_ready()
        {
            let t = task as TaskId;
            if let (Some(ts), Some(r)) = (self.tasks.get(t), self.releases.get(t)) {
                // The hot lines (job, placement, flags, per-job counters), the release
                // stream (80 bytes, maybe across two lines), the latency record read at
                // the first dispatch.
                prefetch_lines(ts, 4);
                prefetch(r);
                prefetch(
                    (r as *const ReleaseModel)
                        .wrapping_add(1)
                        .cast::<u8>()
                        .wrapping_sub(1),
                );
                if let Some(l) = self.latency.get(t) {
                    prefetch(l);
                }
            }
        }
        if let Some(cpu) = self.cpu_timers.first_cpu_hint() {
            // A timer is mostly a completion: the running task's job (line 0), its
            // backlog and flags (line 2) and counters (line 3).
            if let Some(ts) = self
                .cpus
                .get(cpu)
                .and_then(|c| c.curr)
                .and_then(|t| self.tasks.get(t))
            {
                prefetch_lines(ts, 4);
            }
        }
    }
}
