//! `linux` placement: pushing waiting RT/DL tasks to CPUs where they would run now
//! (`push_dl_task`/`push_rt_task`, and pulls towards CPUs that just scheduled).
//!
//! For a class that orders tasks by a key and whose tasks may run anywhere, the targets
//! come from [`PushState`] — which CPUs run the class's tasks and their keys in order,
//! kept between instants and refreshed for the CPUs an instant touches — and from the
//! classes' waiting masks, like the kernel's cpudl heap and free-CPU mask, instead of a
//! pass over every CPU.

use super::marks::CpuMask;
use super::*;
use crate::heap::{MinTree, SlotHeap};
use std::cmp::Reverse;

/// One unrestricted real-time class's running tasks under `linux` placement (and, for a
/// key-ordered class, their keys in order).
pub(super) struct PushState {
    /// Whether the class has a key order ([`SchedClass::preempt_key`]).
    keyed: bool,
    /// CPUs running a runnable task of the class.
    busy: CpuMask,
    /// Per CPU: the key of that task.
    key: Vec<Option<u64>>,
    /// Keyed classes: those keys, worst first ([`worst_first`]): the first entry is the
    /// lowest-priority running task, the lowest CPU among equal keys. One entry per CPU,
    /// moved in place when its task changes (a B-tree removed and inserted it).
    running: SlotHeap,
    /// Keyed classes: per CPU, the key of the first task waiting there (None: none
    /// waits), as of the last [`Engine::refresh_push_heads`].
    head_key: Vec<Option<u64>>,
    /// The same keys (`u64::MAX`: none) in a tree of minima by CPU: with no free CPU
    /// only the first tasks below the lowest-priority running key can be pushed, and the
    /// next such CPU in CPU order is found here, instead of by looking at every CPU's
    /// queue or at every key below that bound.
    heads: MinTree,
    /// Run queues to refresh (kept to reuse its allocation).
    changed: Vec<CpuId>,
}

impl Engine {
    /// The push state of each real-time class that can have one.
    pub(super) fn push_states_for(&self, task_class: &[ClassId]) -> [Option<PushState>; 2] {
        ClassId::RT.map(|class| {
            let first = task_class.iter().position(|&c| c == class)?;
            let keyed = self.classes[class as usize]
                .preempt_key(&ctx!(self), first)
                .is_some();
            (self.placement == Placement::Linux
                && !self.class_global[class as usize]
                && self.class_unrestricted[class as usize])
                .then(|| PushState {
                    keyed,
                    busy: CpuMask::new(self.cpus.len()),
                    key: vec![None; self.cpus.len()],
                    running: SlotHeap::new(self.cpus.len()),
                    head_key: vec![None; self.cpus.len()],
                    heads: MinTree::new(self.cpus.len()),
                    changed: Vec::new(),
                })
        })
    }

    /// Bring the push states up to date for `cpu`, whose task may have changed.
    fn refresh_push_state(&mut self, cpu: CpuId) {
        for class in ClassId::RT {
            if self.push_state[class as usize].is_none() {
                continue;
            }
            let keyed = self.push_state[class as usize].as_ref().unwrap().keyed;
            // Unkeyed classes keep only the busy mask: every running task counts as key 0.
            let key = self.cpus[cpu]
                .curr
                .filter(|&t| self.tasks[t].runnable && self.tasks[t].class == class)
                .map(|t| {
                    if keyed {
                        self.classes[class as usize]
                            .preempt_key(&ctx!(self), t)
                            .expect("a keyed class keys every task")
                    } else {
                        0
                    }
                });
            let st = self.push_state[class as usize].as_mut().unwrap();
            if st.key[cpu] == key {
                continue;
            }
            match key {
                Some(k) => {
                    if st.keyed {
                        st.running.set(cpu, worst_first(k, cpu));
                    }
                    st.busy.insert(cpu);
                }
                None => {
                    st.running.remove(cpu);
                    st.busy.remove(cpu);
                }
            }
            st.key[cpu] = key;
        }
    }

    /// Whether every class with tasks at or above `class` has a push state (so that the
    /// free CPUs for `class` can be read from masks).
    fn push_fast(&self, class: ClassId) -> bool {
        ClassId::RT
            .iter()
            .filter(|&&c| c <= class)
            .all(|&c| self.push_state[c as usize].is_some() || !self.class_has_tasks[c as usize])
    }

    /// Push waiting tasks to CPUs where they would run now (`push_dl_task` /
    /// `push_rt_task` from a CPU that just scheduled; `pull_*` towards a CPU that did).
    /// Only moves that start or end on a CPU touched in this instant are considered.
    ///
    /// Returns whether a task moved.
    pub(super) fn push_tasks(&mut self) -> bool {
        let mut any = false;
        let mut cpu = 0;
        while let Some(c) = self.touched.next_from(cpu) {
            self.refresh_push_state(c);
            cpu = c + 1;
        }
        let bound = self.settle_bound();
        // Where a task of each class would go, valid until the next move.
        let mut later: [Option<LaterCpus>; 2] = [None, None];
        let mut settled = false;
        for _ in 0..bound {
            let mut moved = false;
            // The CPUs with a real-time task waiting, in index order (a CPU that gains one
            // during the round is visited if it comes later, as in a scan of all CPUs).
            // When no push from an untouched CPU could end on a touched one, only the
            // touched CPUs can push.
            let mut next = 0;
            loop {
                let only_touched = ClassId::RT.iter().all(|&c| {
                    self.classes[c as usize].nr_waiting() == 0
                        || self
                            .later_cpus(c, &mut later[c as usize])
                            .is_some_and(|l| !l.reach)
                });
                let found = if only_touched {
                    let mut at = next;
                    loop {
                        let Some(c) = self.touched.next_from(at) else {
                            break None;
                        };
                        if ClassId::RT
                            .iter()
                            .any(|&k| self.classes[k as usize].waiting_on(c) > 0)
                        {
                            break Some(c);
                        }
                        at = c + 1;
                    }
                } else {
                    self.next_push_source(next, &mut later)
                };
                let Some(cpu) = found else { break };
                next = cpu + 1;
                self.visit(1);
                if self.cpus[cpu].curr.is_none() {
                    continue; // an idle CPU ran its queue already
                }
                // A CPU in kernel work has not scheduled: the kernel pushes from a CPU
                // after its `__schedule`, so its waiting tasks (one woken or pushed there
                // at this instant) wait for the work's end. Pushing them on would hand
                // them round the CPUs in kernel work until the rounds' bound chose.
                if self.kernel.blocked(cpu, self.now) {
                    continue;
                }
                for class in ClassId::RT {
                    if self.classes[class as usize].waiting_on(cpu) == 0 {
                        continue; // nothing to push from here
                    }
                    let keyed = self.later_cpus(class, &mut later[class as usize]);
                    if !self.touched.contains(cpu) && keyed.is_some_and(|l| !l.reach) {
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
                    if !self.touched.contains(cpu) && !self.touched.contains(target) {
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
                    self.touched.insert(target);
                    self.schedule_local(target);
                    self.refresh_push_state(target);
                    // Only `cpu` and `target` changed: the cached answers are brought up
                    // to date for those two instead of recomputed over every CPU.
                    for c in ClassId::RT {
                        let l = later[c as usize].take();
                        later[c as usize] =
                            l.and_then(|l| self.later_cpus_moved(c, l, &[cpu, target]));
                    }
                    moved = true;
                }
            }
            if !moved {
                settled = true;
                break;
            }
            any = true;
        }
        // Each push moves a task to a CPU where it runs at once, raising that CPU's
        // priority, so the rounds end by themselves; reaching the bound means pushes
        // handed tasks round in a cycle and the bound chose where they stay.
        if !settled {
            self.report_unsettled(&format!("the pushes did not settle in {bound} rounds"));
        }
        any
    }

    /// The lowest CPU at or after `from` from which a waiting real-time task may be
    /// pushed: one with a task of some class waiting, except that for a key-ordered class
    /// with no free CPU only a CPU whose first waiting task has a smaller key than the
    /// lowest-priority running task can push (what [`Engine::find_later_cpu_keyed`]
    /// requires), and those come from the index of first waiting tasks, not from a look
    /// at every CPU's queue. Visiting more CPUs than push changes nothing, so the CPUs
    /// returned may include some that do not.
    fn next_push_source(
        &mut self,
        from: CpuId,
        later: &mut [Option<LaterCpus>; 2],
    ) -> Option<CpuId> {
        let mut best: Option<CpuId> = None;
        for class in ClassId::RT {
            let cls = &self.classes[class as usize];
            if cls.nr_waiting() == 0 {
                continue;
            }
            let indexed = self
                .later_cpus(class, &mut later[class as usize])
                .filter(|l| l.keyed && l.first_free.is_none())
                .filter(|_| {
                    self.push_state[class as usize]
                        .as_ref()
                        .is_some_and(|s| s.keyed)
                });
            let next = match indexed {
                Some(l) => {
                    self.refresh_push_heads(class);
                    debug_assert_eq!(self.push_heads_check(class), Ok(()));
                    debug_assert_eq!(self.push_no_free_last(class), Ok(()));
                    let st = self.push_state[class as usize].as_ref().unwrap();
                    // The next CPU whose first waiting task is below the worst running
                    // key; each tree node looked at is one step (counted as a CPU visit
                    // for the work guard).
                    let (found, steps) = match l.worst[0] {
                        Some((worst, _)) => st.heads.first_below(from, worst),
                        None => (None, 0),
                    };
                    debug_assert_eq!(
                        found,
                        (from..self.cpus.len()).find(|&c| st.head_key[c]
                            .is_some_and(|k| l.worst[0].is_some_and(|(w, _)| k < w))),
                        "push index: the next CPU that can push"
                    );
                    self.visit(1 + steps);
                    found
                }
                None => self.classes[class as usize].next_waiting_rq(from),
            };
            best = match (best, next) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        best
    }

    /// Bring `class`'s index of first waiting tasks up to date for the run queues whose
    /// waiting tasks changed since the last refresh.
    fn refresh_push_heads(&mut self, class: ClassId) {
        let Some(st) = self.push_state[class as usize].as_mut() else {
            return;
        };
        let mut changed = std::mem::take(&mut st.changed);
        changed.clear();
        self.classes[class as usize].take_changed(&mut changed);
        for &rq in &changed {
            let cls = &self.classes[class as usize];
            let ctx = ctx!(self);
            let key = if cls.waiting_on(rq) == 0 {
                None
            } else {
                cls.peek_next_task(&ctx, rq, rq).map(|t| {
                    cls.preempt_key(&ctx, t)
                        .expect("a keyed class keys every task")
                })
            };
            let st = self.push_state[class as usize].as_mut().unwrap();
            if st.head_key[rq] != key {
                st.heads.set(rq, key.unwrap_or(u64::MAX));
                st.head_key[rq] = key;
            }
        }
        self.push_state[class as usize].as_mut().unwrap().changed = changed;
    }

    /// Debug builds: with no CPU free for `class` (as the masks say), no first waiting
    /// task's last CPU is free either — else [`Engine::find_later_cpu_keyed`] would push
    /// it there whatever its key, and the index would miss it.
    fn push_no_free_last(&self, class: ClassId) -> Result<(), String> {
        let st = self.push_state[class as usize].as_ref().unwrap();
        let ctx = ctx!(self);
        for (cpu, _) in st.head_key.iter().enumerate().filter(|(_, k)| k.is_some()) {
            let Some(t) = self.classes[class as usize].peek_uncounted(&ctx, cpu, cpu) else {
                continue;
            };
            let last = self.tasks[t].last_cpu;
            if last != cpu && self.cpu_free_for_uncounted(last, class) {
                return Err(format!(
                    "push index: CPU {last} free for task {t} but no CPU free"
                ));
            }
        }
        Ok(())
    }

    /// Debug builds: the index of first waiting tasks against each CPU's queue.
    fn push_heads_check(&self, class: ClassId) -> Result<(), String> {
        let st = self.push_state[class as usize].as_ref().unwrap();
        let cls = &self.classes[class as usize];
        let ctx = ctx!(self);
        for cpu in 0..self.cpus.len() {
            let want = cls
                .peek_uncounted(&ctx, cpu, cpu)
                .and_then(|t| cls.preempt_key_uncounted(&ctx, t));
            if st.head_key[cpu] != want {
                return Err(format!(
                    "push index: CPU {cpu} first waiting key {:?}, queue says {want:?}",
                    st.head_key[cpu]
                ));
            }
        }
        for (cpu, k) in st.head_key.iter().enumerate() {
            if st.heads.get(cpu) != k.unwrap_or(u64::MAX) {
                return Err(format!(
                    "push index: CPU {cpu} key {k:?} in the list, {} in the tree",
                    st.heads.get(cpu)
                ));
            }
        }
        Ok(())
    }

    /// The shortcut for [`Engine::find_later_cpu`] when `class` orders tasks by a key and
    /// none of its tasks has a restricted affinity (None otherwise): the first free CPU
    /// and the two running tasks of the class with the largest keys, computed once and
    /// reused until a task moves.
    fn later_cpus(&self, class: ClassId, cache: &mut Option<LaterCpus>) -> Option<LaterCpus> {
        if let Some(l) = cache {
            return Some(*l);
        }
        let mut l = if self.push_state[class as usize].is_some() && self.push_fast(class) {
            self.visit(1);
            self.later_cpus_from_state(class)
        } else {
            self.later_cpus_scan(class)?
        };
        self.set_reach(class, &mut l);
        *cache = Some(l);
        Some(l)
    }

    /// [`LaterCpus::reach`] from the other fields.
    fn set_reach(&self, class: ClassId, l: &mut LaterCpus) {
        l.reach = match l.first_free {
            // A free CPU: the target is the task's last CPU if free, else the first free.
            Some(_) => l
                .touched_free
                .unwrap_or_else(|| self.touched.iter().any(|c| self.cpu_free_for(c, class))),
            None if l.keyed => l
                .worst
                .iter()
                .flatten()
                .any(|&(_, c)| self.touched.contains(c)),
            None => true, // any CPU its task beats: not known without looking
        };
    }

    /// The masks whose union is the CPUs not free for `class` (its push state exists and
    /// [`Engine::push_fast`]): each class's waiting mask up to `class` and its busy mask.
    /// At most two per real-time class, on the stack: a heap allocation was a fair part
    /// of the cost when this ran after every push.
    fn free_masks(&self, class: ClassId) -> ([&CpuMask; 4], usize) {
        let first = self.classes[ClassId::RT[0] as usize].waiting_mask();
        let mut slots: [&CpuMask; 4] = [first; 4];
        let mut n = 0;
        for c in ClassId::RT.into_iter().filter(|&c| c <= class) {
            slots[n] = self.classes[c as usize].waiting_mask();
            n += 1;
            if let Some(st) = &self.push_state[c as usize] {
                slots[n] = &st.busy;
                n += 1;
            }
        }
        (slots, n)
    }

    /// `class`'s cached [`LaterCpus`] after pushes between the CPUs of `changed` (the
    /// touched set grown by some of them only): a push changes what is waiting or
    /// running on its two CPUs only, so the first free CPU moves only if one of them is
    /// or was it, a touched free CPU appears only among them, and the two
    /// lowest-priority running CPUs are the first two of the running keys' heap. None
    /// (recompute) for an answer found by a scan. Debug builds compare the result with
    /// a fresh computation.
    fn later_cpus_moved(
        &self,
        class: ClassId,
        mut l: LaterCpus,
        changed: &[CpuId],
    ) -> Option<LaterCpus> {
        let touched_free = l.touched_free?;
        if self.cpus.len() <= 64 {
            return None; // one word per mask: a fresh computation is as cheap
        }
        let (slots, n) = self.free_masks(class);
        let masks = &slots[..n];
        let free = |c: CpuId| !masks.iter().any(|m| m.contains(c));
        let ncpu = self.cpus.len();
        // Every CPU below the old first free one was busy, and only the changed ones can
        // have become free; past it, the masks are read again only if it is not free now.
        let mut first = match l.first_free {
            Some(f) if changed.contains(&f) && !free(f) => {
                CpuMask::next_in_none(masks, f + 1, ncpu)
            }
            f => f,
        };
        for &c in changed {
            if free(c) && first.is_none_or(|f| c < f) {
                first = Some(c);
            }
        }
        l.first_free = first;
        // A touched free CPU that did not change is still one; otherwise the set is read
        // again.
        let now_free = changed.iter().any(|&c| self.touched.contains(c) && free(c));
        l.touched_free = Some(if now_free {
            true
        } else if touched_free {
            self.touched.any_in_none(masks)
        } else {
            false
        });
        let st = self.push_state[class as usize].as_ref().unwrap();
        l.worst = st
            .running
            .first_two()
            .map(|e| e.map(|(k, c)| (!((k >> 64) as u64), c)));
        self.set_reach(class, &mut l);
        #[cfg(debug_assertions)]
        {
            let mut fresh = self.later_cpus_from_state(class);
            self.set_reach(class, &mut fresh);
            assert_eq!(
                l, fresh,
                "the cached LaterCpus after pushes between CPUs {changed:?}"
            );
        }
        Some(l)
    }

    /// [`LaterCpus`] from the push states and the waiting masks (`reach`: whether a
    /// touched CPU is free).
    fn later_cpus_from_state(&self, class: ClassId) -> LaterCpus {
        let (slots, n) = self.free_masks(class);
        let masks = &slots[..n];
        // Whether a touched CPU is free, from the same masks: a word at a time instead
        // of asking each touched CPU.
        let touched_free = self.touched.any_in_none(masks);
        debug_assert_eq!(
            touched_free,
            self.touched
                .iter()
                .any(|c| self.cpu_free_for_uncounted(c, class)),
            "the masks disagree with the CPUs"
        );
        let st = self.push_state[class as usize].as_ref().unwrap();
        let worst = st
            .running
            .first_two()
            .map(|e| e.map(|(k, c)| (!((k >> 64) as u64), c)));
        debug_assert_eq!(
            worst,
            {
                let mut v: Vec<(u64, Reverse<CpuId>)> = (0..self.cpus.len())
                    .filter_map(|c| st.key[c].filter(|_| st.keyed).map(|k| (k, Reverse(c))))
                    .collect();
                v.sort();
                let mut w = v.iter().rev().map(|&(k, Reverse(c))| (k, c));
                [w.next(), w.next()]
            },
            "push state: the two lowest-priority running CPUs"
        );
        LaterCpus {
            first_free: CpuMask::next_in_none(masks, 0, self.cpus.len()),
            worst,
            keyed: st.keyed,
            reach: touched_free,
            touched_free: Some(touched_free),
        }
    }

    /// [`LaterCpus`] by a pass over every CPU (None when the class has no key or a task
    /// with a restricted affinity).
    fn later_cpus_scan(&self, class: ClassId) -> Option<LaterCpus> {
        if !self.class_unrestricted[class as usize] {
            return None;
        }
        let cls = &self.classes[class as usize];
        let ctx = ctx!(self);
        let mut l = LaterCpus {
            first_free: None,
            worst: [None, None],
            keyed: true,
            reach: true,
            touched_free: None,
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
        if !l.keyed {
            return self.find_later_cpu(t, Some(from)); // the lowest-priority CPU it beats
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LaterCpus {
    first_free: Option<CpuId>,
    /// The two lowest-priority running CPUs (key-ordered classes only).
    worst: [Option<(u64, CpuId)>; 2],
    keyed: bool,
    /// Whether a push from an untouched CPU could end on a touched one: to a touched
    /// free CPU when some CPU is free, else to one of the two lowest-priority CPUs.
    reach: bool,
    /// Whether a touched CPU is free, when read from the masks (None: found by a scan,
    /// which is not kept between pushes).
    touched_free: Option<bool>,
}
