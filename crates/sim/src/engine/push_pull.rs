//! `linux` placement: pushing waiting RT/DL tasks to CPUs where they would run now (`push_dl_task`/`push_rt_task`, and pulls towards CPUs that just scheduled).

use super::*;

impl Engine {
    /// Push waiting tasks to CPUs where they would run now (`push_dl_task` /
    /// `push_rt_task` from a CPU that just scheduled; `pull_*` towards a CPU that did).
    /// Only moves that start or end on a CPU touched in this instant are considered.
    pub(super) fn push_tasks(&mut self, touched: &mut [bool], list: &mut Vec<CpuId>) {
        let bound = 4 * (self.tasks.len() + 1) * self.cpus.len();
        // Where a task of each class would go, valid until the next move.
        let mut later: [Option<LaterCpus>; 2] = [None, None];
        for _ in 0..bound {
            let mut moved = false;
            for cpu in 0..self.cpus.len() {
                self.visit(1);
                if self.cpus[cpu].curr.is_none() {
                    continue; // an idle CPU ran its queue already
                }
                for class in ClassId::RT {
                    if self.classes[class as usize].waiting_on(cpu) == 0 {
                        continue; // nothing to push from here
                    }
                    let keyed = self.later_cpus(class, &mut later[class as usize]);
                    if !touched[cpu] && keyed.is_some_and(|l| !l.may_reach(touched)) {
                        continue; // its target could only be untouched: not considered
                    }
                    let cand = self.classes[class as usize].peek_next_task(&ctx!(self), cpu, cpu);
                    let Some(cand) = cand else { continue };
                    if self.tasks[cand].nr_allowed < 2 {
                        continue;
                    }
                    let target = match keyed {
                        Some(l) => self.find_later_cpu_keyed(cand, cpu, &l),
                        None => self.find_later_cpu(cand, Some(cpu)),
                    };
                    let Some(target) = target else {
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
                    self.mark_dirty(target);
                    if !touched[target] {
                        touched[target] = true;
                        list.push(target);
                    }
                    self.schedule_local(target);
                    later = [None, None];
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
    }

    /// The shortcut for [`Engine::find_later_cpu`] when `class` orders tasks by a key and
    /// none of its tasks has a restricted affinity (None otherwise): the first free CPU
    /// and the two running tasks of the class with the largest keys, computed once and
    /// reused until a task moves.
    fn later_cpus(&self, class: ClassId, cache: &mut Option<LaterCpus>) -> Option<LaterCpus> {
        if let Some(l) = cache {
            return Some(*l);
        }
        if !self.class_unrestricted[class as usize] {
            return None;
        }
        let cls = &self.classes[class as usize];
        let ctx = ctx!(self);
        let mut l = LaterCpus {
            first_free: None,
            worst: [None, None],
        };
        for c in 0..self.cpus.len() {
            self.visit(1);
            if l.first_free.is_none() && self.cpu_free_for(c, class) {
                l.first_free = Some(c);
            }
            let Some(cur) = self.cpus[c].curr.filter(|&x| self.tasks[x].runnable) else {
                continue;
            };
            if self.tasks[cur].class != class {
                continue;
            }
            let key = cls.preempt_key(&ctx, cur)?;
            // Largest keys first, the lowest CPU among equals.
            match l.worst {
                [Some((k, _)), _] if key > k => l.worst = [Some((key, c)), l.worst[0]],
                [Some(_), Some((k, _))] if key > k => l.worst[1] = Some((key, c)),
                [Some(_), None] => l.worst[1] = Some((key, c)),
                [None, _] => l.worst[0] = Some((key, c)),
                _ => {}
            }
        }
        *cache = Some(l);
        Some(l)
    }

    /// [`Engine::find_later_cpu`]`(t, Some(from))` from the cached [`LaterCpus`]: `from`
    /// has `t` waiting, so it is never free; the lowest-priority running task is the
    /// largest key that is not `from`'s.
    fn find_later_cpu_keyed(&self, t: TaskId, from: CpuId, l: &LaterCpus) -> Option<CpuId> {
        let ts = &self.tasks[t];
        let last = ts.last_cpu;
        if last != from && self.cpu_free_for(last, ts.class) {
            return Some(last);
        }
        if l.first_free.is_some() {
            return l.first_free;
        }
        let key = self.classes[ts.class as usize].preempt_key(&ctx!(self), t)?;
        let worst = if l.worst[0].is_some_and(|(_, c)| c == from) {
            l.worst[1]
        } else {
            l.worst[0]
        };
        worst.filter(|&(k, _)| k > key).map(|(_, c)| c)
    }
}

/// For pushing tasks of one key-ordered class: the first CPU free for it and the two
/// CPUs running its tasks with the largest keys (ties: lowest CPU first).
#[derive(Debug, Clone, Copy)]
struct LaterCpus {
    first_free: Option<CpuId>,
    worst: [Option<(u64, CpuId)>; 2],
}

impl LaterCpus {
    /// Whether a push could end on a touched CPU: with no free CPU, a task can only go
    /// to one of the two lowest-priority CPUs (its own CPU excluded).
    fn may_reach(&self, touched: &[bool]) -> bool {
        self.first_free.is_some() || self.worst.iter().flatten().any(|&(_, c)| touched[c])
    }
}
