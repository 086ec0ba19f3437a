//! `linux` placement: pushing waiting RT/DL tasks to CPUs where they would run now (`push_dl_task`/`push_rt_task`, and pulls towards CPUs that just scheduled).

use super::*;

impl Engine {
    /// Push waiting tasks to CPUs where they would run now (`push_dl_task` /
    /// `push_rt_task` from a CPU that just scheduled; `pull_*` towards a CPU that did).
    /// Only moves that start or end on a CPU touched in this instant are considered.
    pub(super) fn push_tasks(&mut self, touched: &mut [bool]) {
        let bound = 4 * (self.tasks.len() + 1) * self.cpus.len();
        for _ in 0..bound {
            let mut moved = false;
            for cpu in 0..self.cpus.len() {
                if self.cpus[cpu].curr.is_none() {
                    continue; // an idle CPU ran its queue already
                }
                for class in ClassId::RT {
                    let cand = self.classes[class as usize].peek_next_task(&ctx!(self), cpu, cpu);
                    let Some(cand) = cand else { continue };
                    if self.tasks[cand].nr_allowed < 2 {
                        continue;
                    }
                    let Some(target) = self.find_later_cpu(cand, Some(cpu)) else {
                        continue;
                    };
                    if !touched[cpu] && !touched[target] {
                        continue;
                    }
                    self.classes[class as usize].dequeue_task(&ctx!(self), cpu, cand);
                    self.tasks[cand].rq = target;
                    self.classes[class as usize].enqueue_task(
                        &ctx!(self),
                        target,
                        cand,
                        EnqueueReason::Migrated,
                    );
                    self.cpus[target].dirty = true;
                    touched[target] = true;
                    self.schedule_local(target);
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
    }
}
