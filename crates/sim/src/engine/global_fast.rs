//! Global placement when it is simple enough to be incremental: one real-time class holds
//! every task, it orders them by a key ([`SchedClass::preempt_key`]: EDF, fixed
//! priorities) and no task has a restricted affinity. Then the m tasks with the smallest
//! keys run, and a decision needs only the lowest free CPU and the running task with the
//! largest key — kept between instants (a bitmap of free CPUs and an indexed heap of
//! running keys, one entry per CPU) and updated for the CPUs that change — instead of a
//! pass over every CPU per step. The state stays boxed in the engine, so a decision
//! moves a pointer, not the state. The steps, and so every hook call and every result, are those of
//! `global.rs`, which handles all other cases.

use super::marks::CpuMask;
use super::*;
use crate::heap::SlotHeap;

/// Up to this many CPUs the running task with the largest key is found by a scan of
/// `key` when a decision asks (a comparison per CPU), not kept in a heap: a heap move at
/// every occupation (about 150 instructions on 8 CPUs) costs more than the scans, which
/// only the decisions with no CPU free make (64x8 EDF: 10,873 scans for 18,626 moves).
const SCAN_CPUS: usize = 32;

/// The assignment of the one global class between instants.
pub(super) struct GlobalFast {
    class: ClassId,
    /// Per CPU: the task it runs (runnable), as of the last decision.
    slot: Vec<Option<TaskId>>,
    /// Per CPU: the key of `slot`'s task.
    key: Vec<u64>,
    /// CPUs with no runnable task.
    free: CpuMask,
    /// (key, CPU) of the running tasks; the first is the one a waiting task preempts
    /// first: the largest key, the lowest CPU among equals. A CPU that is vacated keeps
    /// its stale entry until it is occupied again (one move in place instead of a removal
    /// and an insertion): the heap is read only when no CPU is free, when every entry is
    /// current. None up to [`SCAN_CPUS`] CPUs: `key` is scanned instead.
    running: Option<SlotHeap>,
    changed: Vec<CpuId>,
    /// The class's queue is a plain key order ([`SchedClass::plain_key_queue`]) and
    /// there is no CBS: a woken task waits in `woken` until the decision, which hands it
    /// straight to a free CPU when it would have been queued and picked at once.
    direct: bool,
    /// The class's key is the task's scheduling deadline
    /// ([`SchedClass::key_is_sched_deadline`]): read without the hook's dynamic call.
    deadline_key: bool,
    /// Tasks woken since the last decision, in wake-up order, not yet queued: no queue
    /// operation of the class happened since the first of them woke (anything that
    /// could queue them first with [`Engine::enqueue_woken`]).
    woken: Vec<TaskId>,
    /// Scratch: `woken` with their keys, in the order they take the free CPUs.
    order: Vec<(u64, TaskId)>,
}

impl GlobalFast {
    fn new(class: ClassId, ncpu: usize, direct: bool, deadline_key: bool) -> GlobalFast {
        let mut free = CpuMask::new(ncpu);
        (0..ncpu).for_each(|c| free.insert(c));
        GlobalFast {
            class,
            slot: vec![None; ncpu],
            key: vec![0; ncpu],
            free,
            running: (ncpu > SCAN_CPUS).then(|| SlotHeap::new(ncpu)),
            changed: Vec::new(),
            direct,
            deadline_key,
            woken: Vec::new(),
            order: Vec::new(),
        }
    }

    /// Whether tasks woke since the last decision without being queued.
    pub(super) fn has_woken(&self) -> bool {
        !self.woken.is_empty()
    }

    /// `cpu`'s task may change in this decision. A CPU vacated and filled again at once
    /// (a completion whose CPU takes the next waiting task) is listed once, so that the
    /// decision takes the one-CPU path (the same steps as the general path's, for one CPU).
    #[inline]
    fn note_changed(&mut self, cpu: CpuId) {
        if self.changed.last() != Some(&cpu) {
            self.changed.push(cpu);
        }
    }

    fn vacate(&mut self, cpu: CpuId) {
        if self.slot[cpu].take().is_some() {
            self.free.insert(cpu);
        }
    }

    #[inline(always)]
    fn occupy(&mut self, cpu: CpuId, t: TaskId, key: u64) {
        // The CPU's entry is moved in place (not removed and inserted).
        self.slot[cpu] = Some(t);
        self.key[cpu] = key;
        if let Some(running) = self.running.as_mut() {
            running.set(cpu, worst_first(key, cpu));
        }
        self.free.remove(cpu);
    }

    /// The CPU a waiting task preempts first, when no CPU is free: the largest key, the
    /// lowest CPU among equals.
    fn worst(&self) -> Option<CpuId> {
        debug_assert!(self.free.is_empty());
        let cpu = match &self.running {
            Some(running) => running.first().map(|(_, cpu)| cpu),
            None => {
                // The largest key kept in a register, no bounds checks: the lowest CPU
                // among equals, since only a larger key replaces it.
                let (first, rest) = self.key.split_first()?;
                let (mut worst, mut max) = (0, *first);
                for (c, &k) in rest.iter().enumerate() {
                    if k > max {
                        (worst, max) = (c + 1, k);
                    }
                }
                Some(worst)
            }
        };
        // Debug builds check it against the definition, and the heap's entries.
        debug_assert_eq!(
            cpu,
            (0..self.key.len()).min_by_key(|&c| (std::cmp::Reverse(self.key[c]), c))
        );
        debug_assert!(self.running.as_ref().is_none_or(
            |r| (0..self.slot.len()).all(|c| r.get(c) == Some(worst_first(self.key[c], c)))
        ));
        cpu
    }
}

impl Engine {
    /// The incremental global placement for this workload, if it applies.
    pub(super) fn global_fast_for(&self, task_class: &[ClassId]) -> Option<Box<GlobalFast>> {
        let used: Vec<ClassId> = ClassId::ALL
            .into_iter()
            .filter(|&c| self.class_has_tasks[c as usize])
            .collect();
        let &[class] = used.as_slice() else {
            return None;
        };
        let keyed = self.classes[class as usize]
            .preempt_key(&ctx!(self), task_class.iter().position(|&c| c == class)?)
            .is_some();
        (class != ClassId::Fair
            && self.class_global[class as usize]
            && self.class_unrestricted[class as usize]
            && keyed)
            .then(|| {
                let cls = &self.classes[class as usize];
                let direct = cls.plain_key_queue() && !self.cbs;
                let deadline_key = cls.key_is_sched_deadline();
                Box::new(GlobalFast::new(
                    class,
                    self.cpus.len(),
                    direct,
                    deadline_key,
                ))
            })
    }

    /// Under incremental global placement with a plain key queue, keep the woken task
    /// `t` for the decision instead of queueing it; false when it must be queued.
    pub(super) fn wake_direct(&mut self, t: TaskId, why: EnqueueReason) -> bool {
        match self.global_fast.as_mut() {
            Some(g) if g.direct && why == EnqueueReason::Wakeup => {
                debug_assert_eq!(self.tasks[t].class, g.class);
                g.woken.push(t);
                self.woken_pending = true;
                true
            }
            _ => false,
        }
    }

    /// Queue the tasks [`Engine::wake_direct`] kept, in wake-up order, as their wake-ups
    /// would have: before anything else reads or changes the class's queue.
    #[inline]
    pub(super) fn flush_woken(&mut self) {
        if self.woken_pending {
            self.flush_woken_now();
        }
    }

    /// Before the event `kind` is handled: [`Engine::flush_woken`] unless it is one that
    /// cannot read the class's queue (a release or a wake-up, which may add to `woken`,
    /// or a CPU timer: a completion, with no CBS).
    #[inline(never)]
    pub(super) fn flush_woken_before(&mut self, kind: EventKind) {
        if !matches!(
            kind,
            EventKind::Release { .. } | EventKind::JobWake { .. } | EventKind::CpuTimer { .. }
        ) {
            self.flush_woken_now();
        }
    }

    #[inline(never)]
    fn flush_woken_now(&mut self) {
        if let Some(mut g) = self.global_fast.take() {
            self.enqueue_woken(&mut g);
            self.global_fast = Some(g);
        }
    }

    fn enqueue_woken(&mut self, g: &mut GlobalFast) {
        self.woken_pending = false;
        for i in 0..g.woken.len() {
            let t = g.woken[i];
            self.classes[g.class as usize].enqueue_task(&ctx!(self), 0, t, EnqueueReason::Wakeup);
        }
        g.woken.clear();
    }

    /// The tasks woken since the last decision, before the fill loop: each takes what
    /// the loop would give it after queueing them, without the queue. In key order
    /// (equal keys in wake-up order, the queue's FIFO), a woken task takes the lowest
    /// free CPU unless the queue's first task comes first (a key not larger: it was
    /// queued earlier), which then takes it from the queue as the loop would. With no
    /// CPU free, the first woken task left preempts the running task with the largest
    /// key if it beats it: the others are queued first (they woke before that task is
    /// put back), and the loop goes on from there. The woken tasks left are queued.
    fn place_woken(&mut self, g: &mut GlobalFast) {
        let class = g.class;
        // `order` stays in `g` (read by index, not taken out and put back: about 20
        // instructions a call for the move and the drop of the empty vector left behind).
        g.order.clear();
        for i in 0..g.woken.len() {
            let t = g.woken[i];
            debug_assert!(self.tasks[t].runnable && self.tasks[t].on_cpu.is_none());
            let key = self.key_of(g, t);
            g.order.push((key, t));
        }
        g.woken.clear();
        self.woken_pending = false;
        // Stable: equal keys keep their wake-up order.
        g.order.sort_by_key(|&(key, _)| key);
        let mut next = 0;
        while next < g.order.len() {
            let (key, t) = g.order[next];
            let free = g.free.next_from(0);
            if self.classes[class as usize].nr_waiting() > 0 {
                let cls = &self.classes[class as usize];
                let head = cls.peek_next_task(&ctx!(self), 0, free.unwrap_or(0));
                let head = head.expect("a task waits");
                let head_key = self.key_of(g, head);
                if head_key <= key {
                    let Some(cpu) = free else {
                        break; // the loop decides whether the queue's first task preempts
                    };
                    self.visit(1);
                    let n = self.classes[class as usize].pick_next_task(&ctx!(self), 0, cpu);
                    debug_assert_eq!(n, Some(head));
                    g.occupy(cpu, head, head_key);
                    g.note_changed(cpu);
                    continue;
                }
            }
            self.visit(1);
            if let Some(cpu) = free {
                g.occupy(cpu, t, key);
                g.note_changed(cpu);
                next += 1;
                continue;
            }
            let Some(cpu) = self.worst_running(g) else {
                break;
            };
            if key >= g.key[cpu] {
                break;
            }
            for &(_, w) in &g.order[next + 1..] {
                self.classes[class as usize].enqueue_task(&ctx!(self), 0, w, EnqueueReason::Wakeup);
            }
            let curr = g.slot[cpu].expect("a running CPU has a task");
            g.vacate(cpu);
            self.put_prev(curr);
            g.occupy(cpu, t, key);
            g.note_changed(cpu);
            next = g.order.len();
        }
        // The rest wait (the order they are queued in is immaterial: the queue orders by
        // key, and equal keys are in wake-up order here).
        for &(_, w) in &g.order[next..] {
            self.classes[class as usize].enqueue_task(&ctx!(self), 0, w, EnqueueReason::Wakeup);
        }
    }

    /// The CPU a waiting task preempts first, when no CPU is free (see [`GlobalFast::worst`]).
    fn worst_running(&self, g: &GlobalFast) -> Option<CpuId> {
        debug_assert!(g.slot.iter().all(|s| s.is_some()));
        if g.running.is_none() {
            self.visit(g.key.len()); // the scan
        }
        g.worst()
    }

    /// `schedule_global` for the simple case: see the module documentation.
    pub(super) fn schedule_global_fast(&mut self, g: &mut GlobalFast) {
        self.invocations += 1;
        self.global_poked = false; // no CPU's own state changed by a wake-up alone
        g.changed.clear();
        // The marked CPUs are the only ones whose task may have stopped, changed job or
        // been asked to reschedule since the last decision.
        // Visited word by word, not searched from each CPU found; nothing in the loop marks
        // a CPU (the mask is out of the engine meanwhile: a mark would panic, not be lost).
        let marked = std::mem::take(&mut self.marked);
        for c in marked.iter() {
            self.visit(1);
            self.cpus[c].dirty = false;
            let resched = std::mem::take(&mut self.cpus[c].need_resched);
            match self.cpus[c].curr.filter(|&t| self.tasks[t].runnable) {
                Some(t) if resched => {
                    self.enqueue_woken(g); // they woke before it is put back
                    self.put_prev(t);
                    g.vacate(c);
                    g.note_changed(c);
                }
                Some(t) => {
                    let key = self.key_of(g, t);
                    g.occupy(c, t, key);
                }
                None => {
                    g.vacate(c);
                    g.note_changed(c); // its current task leaves
                }
            }
        }
        self.marked = marked;
        self.marked.clear();
        let class = g.class;
        if g.has_woken() {
            self.place_woken(g);
        }
        while self.classes[class as usize].nr_waiting() > 0 {
            self.visit(1);
            if let Some(cpu) = g.free.next_from(0) {
                // Fill the lowest free CPU.
                let Some(n) = self.classes[class as usize].pick_next_task(&ctx!(self), 0, cpu)
                else {
                    break;
                };
                let key = self.key_of(g, n);
                g.occupy(cpu, n, key);
                g.note_changed(cpu);
                continue;
            }
            // Preempt the largest key if the first waiting task beats it. No CPU is free,
            // so every CPU's key is current.
            let Some(cpu) = self.worst_running(g) else {
                break;
            };
            let worst = g.key[cpu];
            let cls = &self.classes[class as usize];
            let Some(cand) = cls.peek_next_task(&ctx!(self), 0, cpu) else {
                break;
            };
            if self.key_of(g, cand) >= worst {
                break;
            }
            let curr = g.slot[cpu].expect("a running CPU has a task");
            g.vacate(cpu);
            let rq = self.tasks[curr].rq;
            debug_assert_eq!(rq, 0, "a global class has one run queue");
            let picked = self.classes[class as usize].put_prev_and_pick(&ctx!(self), rq, cpu, curr);
            if let Some(n) = picked {
                let key = self.key_of(g, n);
                g.occupy(cpu, n, key);
            }
            g.note_changed(cpu);
        }
        if let [c] = g.changed[..] {
            // One CPU changes (most decisions): its departure and arrival in one call.
            if self.plain_switches() {
                self.switch_plain(g);
            } else {
                self.switch_cpu(c, g.slot[c]);
            }
            return;
        }
        // All departures before all arrivals, in CPU order, as `schedule_global`.
        g.changed.sort_unstable();
        g.changed.dedup();
        if self.plain_switches() {
            self.switch_plain(g);
            return;
        }
        // A departure touches its CPU and its task (and appends to the log and trace,
        // which only departures do), an arrival its CPU and its task: the two halves of
        // different CPUs meet only in a task that leaves one CPU and arrives on another
        // (its progress there is accounted when it leaves). Without such a task each
        // CPU's two halves go together, in CPU order, as the two passes would leave it.
        let moves = g
            .changed
            .iter()
            .any(|&c| g.slot[c].is_some_and(|n| self.tasks[n].on_cpu.is_some_and(|on| on != c)));
        if !moves {
            for i in 0..g.changed.len() {
                let c = g.changed[i];
                self.switch_cpu(c, g.slot[c]);
            }
            return;
        }
        for i in 0..g.changed.len() {
            let c = g.changed[i];
            if self.cpus[c].curr != g.slot[c] {
                self.switch_out(c, g.slot[c]);
            }
        }
        for i in 0..g.changed.len() {
            let c = g.changed[i];
            if self.cpus[c].curr != g.slot[c] {
                self.switch_in(c, g.slot[c]);
            }
        }
    }

    /// The switches of `g.changed` when [`Engine::plain_switches`] holds: each CPU's
    /// departure and arrival in one walk over the records (`PlainSwitch::switch`, which
    /// gives the state of all departures then all arrivals, lazy accounting's `sync`
    /// included).
    /// Debug builds compare the records it writes with `switch_out`/`switch_in`'s.
    fn switch_plain(&mut self, g: &GlobalFast) {
        #[cfg(debug_assertions)]
        let before = super::decide::SwitchRecords::take(self, g.changed.clone(), |c| g.slot[c]);
        let mut sw = self.plain_switch();
        for &c in &g.changed {
            sw.switch(c, g.slot[c]);
        }
        #[cfg(debug_assertions)]
        {
            let plain = before.again(self);
            before.restore(self);
            for &c in &g.changed {
                self.switch_out(c, g.slot[c]);
            }
            for &c in &g.changed {
                self.switch_in(c, g.slot[c]);
            }
            let general = before.again(self);
            // Compared as text: the records have no `PartialEq`.
            assert!(
                format!("{plain:?}") == format!("{general:?}"),
                "at {} ns: the plain switch walk and leave/arrive disagree",
                self.now
            );
        }
    }

    #[inline]
    fn key_of(&self, g: &GlobalFast, t: TaskId) -> u64 {
        let cls = &self.classes[g.class as usize];
        if g.deadline_key {
            // The hook's answer read here (about 30 instructions less a key), counted as
            // the call it stands for; debug builds ask the class too.
            cls.count_key();
            let key = ctx!(self).sched_deadline(t);
            debug_assert_eq!(cls.preempt_key_uncounted(&ctx!(self), t), Some(key));
            return key;
        }
        cls.preempt_key(&ctx!(self), t)
            .expect("a keyed class keys every task")
    }
}

#[cfg(test)]
mod tests {
    use crate::{engine_for, SimOptions, SimResult};
    use schedlab_model::{Overrides, Workload};
    use std::path::Path;

    /// `n` periodic tasks on `cpus` CPUs, periods of 5 to 40 ms and half of the runtimes
    /// in whole milliseconds (many equal deadlines, releases and completions at the same
    /// instants), total utilisation about `load` x `cpus` (above 1: queues grow).
    fn workload(n: usize, cpus: usize, load: f64, seed: u64, on_miss: &str) -> Workload {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut y = format!(
            "platform: {{ cpus: {cpus}, hz: 1000 }}\nduration: 400ms\non_miss: {on_miss}\n\
             scheduler: {{ deadline: edf, placement: global }}\ntasks:\n"
        );
        let u = load * cpus as f64 / n as f64;
        for i in 0..n {
            let period = [5u64, 10, 20, 40][(next() % 4) as usize];
            let share = u * (0.5 + (next() % 1000) as f64 / 1000.0);
            let mut runtime = ((period * 1000) as f64 * share.min(0.95)).max(1.0) as u64;
            if next() % 2 == 0 {
                // Whole milliseconds: completions at the instants of releases.
                runtime = (runtime / 1000).max(1) * 1000;
            }
            let offset = if next() % 3 == 0 { next() % 3 } else { 0 };
            y += &format!(
                "  - {{ name: t{i}, runtime: {runtime}us, period: {period}ms, offset: {offset}ms }}\n"
            );
        }
        Workload::parse_str(&y, Path::new("direct.yaml"), &Overrides::default()).unwrap()
    }

    fn run(w: &Workload, direct: bool) -> SimResult {
        let mut e = engine_for(w, &SimOptions { trace: true }).unwrap();
        let g = e
            .global_fast
            .as_mut()
            .expect("global EDF runs incrementally");
        assert!(g.direct, "EDF without CBS places woken tasks directly");
        g.direct = direct;
        let mut r = e.run();
        r.wall_s = 0.0;
        r
    }

    /// Woken tasks handed to CPUs without the queue give the schedule of queueing them
    /// and picking them (every segment, every number); only the hook calls differ.
    #[test]
    fn direct_placement_is_the_queue_s_schedule() {
        let mut placed = 0;
        for (n, cpus) in [(5, 2), (12, 4), (24, 4), (40, 8)] {
            for (seed, load) in [(1, 0.6), (2, 0.9), (3, 1.1), (4, 0.95)] {
                for on_miss in ["continue", "abort"] {
                    let w = workload(n, cpus, load, seed * 31 + n as u64, on_miss);
                    let (mut a, mut b) = (run(&w, true), run(&w, false));
                    assert!(a.trace.as_ref().is_some_and(|t| !t.is_empty()));
                    placed += (a.work.class_calls != b.work.class_calls) as usize;
                    a.work = Default::default();
                    b.work = Default::default();
                    assert_eq!(a, b, "{n} tasks, {cpus} CPUs, load {load}, {on_miss}");
                }
            }
        }
        assert!(placed >= 24, "the direct path ran in {placed} of 32 runs");
    }
}
