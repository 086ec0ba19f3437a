//! Fair load balancing between per-CPU fair run queues (`newidle_balance`, periodic `load_balance`).

use super::*;

impl Engine {
    /// Fair load balancing for CPU `cpu` (per-CPU fair run queues only): pull one queued,
    /// not cache-hot fair task from the busiest CPU when that evens the load out; a
    /// periodic balance first requires the busiest load to exceed this CPU's by the
    /// domain's `imbalance_pct` (117%). As the kernel's `detach_tasks` (migrate_load), a
    /// periodic balance also moves a task whose weight, halved once per balance that
    /// failed before (`nr_balance_failed`), fits the imbalance `min(busiest − avg, avg −
    /// this)`, and ignores cache-hotness after more than `cache_nice_tries` (1) failures:
    /// so 3 CPU-bound tasks on 2 CPUs take turns on the shared CPU instead of one of them
    /// keeping a CPU to itself for ever. Returns whether a task moved.
    ///
    /// `assigned` is global placement's tentative assignment (empty elsewhere): a fair
    /// task picked for CPU `c` there is its queue's current task although it is not on
    /// the CPU yet (`on_cpu` is set at the switch), and must not be pulled away, as the
    /// kernel's `can_migrate_task` refuses `task_current`. Per-CPU fair queues put the
    /// task picked from queue `c` on CPU `c`, so one look at `assigned[c]` tells.
    pub(super) fn fair_balance(
        &mut self,
        cpu: CpuId,
        newidle: bool,
        assigned: &[Option<TaskId>],
    ) -> bool {
        if self.class_global[ClassId::Fair as usize] {
            return false;
        }
        // Nothing queued anywhere (or no fair task at all): nothing to pull.
        if self.fair.queued_total == 0 {
            return false;
        }
        let this_load = self.rq_load(cpu);
        self.visit(self.cpus.len());
        self.work.balance_scans += 1;
        let mut busiest: Option<(u64, CpuId)> = None;
        // Groups are visited from the one after this CPU's, cyclically, as the kernel's
        // circular `sd->groups` list starts at the local group; the first of equally
        // loaded CPUs wins, so ties do not always favour the lowest-numbered CPU.
        let ncpu = self.cpus.len();
        for src in (1..ncpu).map(|k| (cpu + k) % ncpu) {
            if self.fair.queued[src] == 0 {
                continue;
            }
            let load = self.rq_load(src);
            if busiest.is_none_or(|(l, _)| load > l) {
                busiest = Some((load, src));
            }
        }
        let Some((load, src)) = busiest else {
            return false;
        };
        if !newidle && load * 100 <= this_load * 117 {
            return false;
        }
        let now = self.now;
        let hot = self.migration_cost;
        let failed = if newidle { 0 } else { self.balance_failed[cpu] };
        let avg = self.fair.load_total / self.cpus.len() as u64;
        let imbalance = load.saturating_sub(avg).min(avg.saturating_sub(this_load));
        // The lowest-numbered queued task that fits (the members are the runnable fair
        // tasks of `src`, by task index).
        let picked = assigned.get(src).copied().flatten();
        let cand = self.fair.members[src].iter().copied().find(|&i| {
            let x = &self.tasks[i];
            x.on_cpu.is_none()
                && picked != Some(i)
                && x.may_run_on(cpu)
                && (x.stats.cpu_time == 0 || now.saturating_sub(x.last_ran) >= hot || failed > 1)
                && (this_load + x.weight < load
                    || (failed > 0 && x.weight >> failed.min(63) <= imbalance))
        });
        let Some(t) = cand else {
            if !newidle {
                self.balance_failed[cpu] += 1;
            }
            return false;
        };
        self.balance_failed[cpu] = 0;
        let fair = ClassId::Fair as usize;
        self.classes[fair].dequeue_task(&ctx!(self), src, t);
        self.fair_untrack(t);
        self.tasks[t].rq = cpu;
        self.fair_track(t);
        self.classes[fair].enqueue_task(&ctx!(self), cpu, t, EnqueueReason::Migrated);
        self.mark_dirty(cpu);
        true
    }

    /// Fair load of CPU `cpu`'s run queue: weights of its runnable fair tasks.
    pub(super) fn rq_load(&self, cpu: CpuId) -> u64 {
        self.fair.load[cpu]
    }

    /// Take `t` out of the fair run-queue counters; call before changing its `runnable`,
    /// `rq` or `on_cpu`, and [`Engine::fair_track`] after.
    #[inline]
    pub(super) fn fair_untrack(&mut self, t: TaskId) {
        // Inlined to this test: without fair tasks (no task changes class) there is
        // nothing to count, and the call cost more than the work.
        if self.has_fair() {
            self.fair_untrack_task(t);
        }
    }

    fn fair_untrack_task(&mut self, t: TaskId) {
        let ts = &self.tasks[t];
        if ts.class != ClassId::Fair || !ts.runnable {
            return;
        }
        let f = &mut self.fair;
        f.load[ts.rq] -= ts.weight;
        f.load_total -= ts.weight;
        f.members[ts.rq].remove(&t);
        if ts.on_cpu.is_none() {
            f.queued[ts.rq] -= 1;
            f.queued_total -= 1;
        }
    }

    /// Count `t` in the fair run-queue counters again (see [`Engine::fair_untrack`]).
    #[inline]
    pub(super) fn fair_track(&mut self, t: TaskId) {
        if self.has_fair() {
            self.fair_track_task(t);
        }
    }

    fn fair_track_task(&mut self, t: TaskId) {
        let ts = &self.tasks[t];
        if ts.class != ClassId::Fair || !ts.runnable {
            return;
        }
        let f = &mut self.fair;
        f.load[ts.rq] += ts.weight;
        f.load_total += ts.weight;
        f.members[ts.rq].insert(t);
        if ts.on_cpu.is_none() {
            f.queued[ts.rq] += 1;
            f.queued_total += 1;
        }
    }
}

/// Per fair run queue, kept as tasks wake, sleep, move and run, so that balancing and
/// wake-up placement never scan every task: the weight of the runnable fair tasks
/// (`cfs_rq->load`), how many of them wait (`nr_running` less the current one), and
/// which they are.
#[derive(Debug, Default)]
pub(super) struct FairRqs {
    pub(super) load: Vec<u64>,
    pub(super) queued: Vec<u64>,
    pub(super) members: Vec<std::collections::BTreeSet<TaskId>>,
    pub(super) load_total: u64,
    pub(super) queued_total: u64,
}

impl FairRqs {
    pub(super) fn new(nr_rqs: usize) -> FairRqs {
        FairRqs {
            load: vec![0; nr_rqs],
            queued: vec![0; nr_rqs],
            members: vec![std::collections::BTreeSet::new(); nr_rqs],
            load_total: 0,
            queued_total: 0,
        }
    }
}
