//! BFS's global run queue as ordered sets: what `earliest_deadline_task`'s O(n) scan of a
//! level finds — the earliest locality-adjusted virtual deadline allowed on the CPU, the
//! first queued among equals — in O(log n).
//!
//! A task's key on a CPU is its deadline, unless it is sticky to another CPU (with
//! locality on), where it is the shifted deadline. So each level keeps its non-sticky
//! tasks by `(deadline, seq)`, and its sticky tasks twice: by `(deadline, seq)` under
//! their home CPU and by `(shifted deadline, seq)` for every other CPU. `seq` is the
//! queueing order, kept when a queued task's stickiness changes (it keeps its place in
//! BFS's list).

use crate::state::{CpuId, TaskId};
use schedlab_model::Ns;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};

/// Number of levels (ISO, NORMAL, IDLEPRIO).
const LEVELS: usize = 3;

type Set = BTreeSet<(Ns, u64, TaskId)>;

/// Where a queued task is filed.
#[derive(Debug, Clone, Copy)]
struct Filed {
    level: usize,
    deadline: Ns,
    seq: u64,
    /// The CPU it is sticky to (and compared there by its plain deadline).
    home: Option<CpuId>,
}

/// One level of the queue.
#[derive(Debug, Default, Clone)]
struct Level {
    plain: Set,
    /// Sticky tasks by home CPU, plain deadlines.
    home: BTreeMap<CpuId, Set>,
    /// Sticky tasks by shifted deadline (their key on the other CPUs).
    far: Set,
    len: usize,
}

/// The global queue: per level, ordered sets (see the module documentation).
#[derive(Debug, Default, Clone)]
pub struct BfsQueue {
    levels: [Level; LEVELS],
    filed: Vec<Option<Filed>>,
    seq: u64,
    shift: u32,
    /// Entries looked at by [`BfsQueue::first_for`] plus one per filing (the work guard's
    /// count: a scan of a level would look at every task).
    steps: Cell<u64>,
}

impl BfsQueue {
    /// An empty queue for `nr_tasks` tasks; sticky tasks' deadlines are shifted left by
    /// `shift` on other CPUs.
    pub fn new(nr_tasks: usize, shift: u32) -> BfsQueue {
        BfsQueue {
            filed: vec![None; nr_tasks],
            shift,
            ..BfsQueue::default()
        }
    }

    /// Whether no task is queued at any level.
    pub fn is_empty(&self) -> bool {
        self.levels.iter().all(|l| l.len == 0)
    }

    /// Queue `t` at the tail of `level` with `deadline`, sticky to `home` if any.
    pub fn push(&mut self, t: TaskId, level: usize, deadline: Ns, home: Option<CpuId>) {
        debug_assert!(self.filed[t].is_none(), "task {t} queued twice");
        self.seq += 1;
        let f = Filed {
            level,
            deadline,
            seq: self.seq,
            home,
        };
        self.file(t, f);
        self.levels[level].len += 1;
    }

    /// Take `t` out of the queue if it is queued.
    pub fn remove(&mut self, t: TaskId) {
        if let Some(f) = self.filed[t] {
            self.unfile(t, f);
            self.filed[t] = None;
            self.levels[f.level].len -= 1;
        }
    }

    /// A queued `t` became sticky to `home` (or not sticky): refile it, in its place.
    pub fn set_home(&mut self, t: TaskId, home: Option<CpuId>) {
        if let Some(f) = self.filed[t] {
            if f.home != home {
                self.unfile(t, f);
                self.file(t, Filed { home, ..f });
            }
        }
    }

    /// The first task of the first level that has one allowed on `cpu`: the smallest
    /// `(key on cpu, seq)`.
    pub fn first_for(&self, cpu: CpuId, allowed: impl Fn(TaskId) -> bool) -> Option<TaskId> {
        for l in &self.levels {
            if l.len == 0 {
                continue;
            }
            let first = |s: &Set| {
                s.iter()
                    .inspect(|_| self.step())
                    .find(|e| allowed(e.2))
                    .copied()
            };
            let plain = first(&l.plain);
            let home = l.home.get(&cpu).and_then(first);
            let far = l
                .far
                .iter()
                .inspect(|_| self.step())
                .find(|e| self.filed[e.2].and_then(|f| f.home) != Some(cpu) && allowed(e.2))
                .copied();
            let best = [plain, home, far]
                .into_iter()
                .flatten()
                .min_by_key(|e| (e.0, e.1));
            if let Some(e) = best {
                return Some(e.2);
            }
        }
        None
    }

    /// Entries looked at and filings so far.
    pub fn steps(&self) -> u64 {
        self.steps.get()
    }

    fn step(&self) {
        self.steps.set(self.steps.get() + 1);
    }

    fn shifted(&self, deadline: Ns) -> Ns {
        deadline
            .checked_shl(self.shift)
            .filter(|&s| s >> self.shift == deadline)
            .unwrap_or(Ns::MAX)
    }

    fn file(&mut self, t: TaskId, f: Filed) {
        self.step();
        let far = self.shifted(f.deadline);
        let l = &mut self.levels[f.level];
        match f.home {
            None => {
                l.plain.insert((f.deadline, f.seq, t));
            }
            Some(c) => {
                l.home.entry(c).or_default().insert((f.deadline, f.seq, t));
                l.far.insert((far, f.seq, t));
            }
        }
        self.filed[t] = Some(f);
    }

    fn unfile(&mut self, t: TaskId, f: Filed) {
        let far = self.shifted(f.deadline);
        let l = &mut self.levels[f.level];
        match f.home {
            None => {
                l.plain.remove(&(f.deadline, f.seq, t));
            }
            Some(c) => {
                if let Some(s) = l.home.get_mut(&c) {
                    s.remove(&(f.deadline, f.seq, t));
                    if s.is_empty() {
                        l.home.remove(&c);
                    }
                }
                l.far.remove(&(far, f.seq, t));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The reference: BFS's lists scanned in queueing order, strict `<` on the key.
    fn scan(
        list: &[Vec<(TaskId, Ns, Option<CpuId>)>],
        cpu: CpuId,
        ok: &dyn Fn(TaskId) -> bool,
    ) -> Option<TaskId> {
        for level in list {
            let mut best: Option<(Ns, TaskId)> = None;
            for &(t, dl, home) in level {
                if !ok(t) {
                    continue;
                }
                let k = match home {
                    Some(h) if h != cpu => dl
                        .checked_shl(2)
                        .filter(|&s| s >> 2 == dl)
                        .unwrap_or(Ns::MAX),
                    _ => dl,
                };
                if best.is_none_or(|(b, _)| k < b) {
                    best = Some((k, t));
                }
            }
            if let Some((_, t)) = best {
                return Some(t);
            }
        }
        None
    }

    #[test]
    fn ordered_queue_picks_what_the_list_scan_picks() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (tasks, cpus) = (48, 4);
        let mut q = BfsQueue::new(tasks, 2);
        let mut list: Vec<Vec<(TaskId, Ns, Option<CpuId>)>> = vec![Vec::new(); LEVELS];
        let huge = Ns::MAX / 2; // overflows when shifted
        for _ in 0..20_000 {
            let t = rng.random_range(0..tasks);
            let pos = list
                .iter()
                .enumerate()
                .find_map(|(l, v)| v.iter().position(|e| e.0 == t).map(|i| (l, i)));
            let home = if rng.random_bool(0.4) {
                Some(rng.random_range(0..cpus))
            } else {
                None
            };
            match (pos, rng.random_range(0..3)) {
                (None, _) => {
                    let level = rng.random_range(0..LEVELS);
                    let dl = if rng.random_bool(0.05) {
                        huge
                    } else {
                        rng.random_range(0..40u64) * 10
                    };
                    q.push(t, level, dl, home);
                    list[level].push((t, dl, home));
                }
                (Some((l, i)), 0) => {
                    q.remove(t);
                    list[l].remove(i);
                }
                (Some((l, i)), _) => {
                    q.set_home(t, home);
                    list[l][i].2 = home;
                }
            }
            let m = rng.random_range(1..4);
            let ok = move |t: TaskId| t % m != 1;
            for cpu in 0..cpus {
                assert_eq!(q.first_for(cpu, |_| true), scan(&list, cpu, &|_| true));
                assert_eq!(q.first_for(cpu, ok), scan(&list, cpu, &ok));
            }
            assert_eq!(q.is_empty(), list.iter().all(|v| v.is_empty()));
        }
    }
}
