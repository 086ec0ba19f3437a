//! An ordered run queue keyed by `(key, seq)`: the rb-tree most key-ordered policies need.

use crate::state::{CpuId, Ctx, TaskId};
use std::collections::BTreeSet;

/// Tasks ordered by a policy key, ties by insertion sequence (FIFO), then task id.
#[derive(Debug, Default, Clone)]
pub struct KeyQueue {
    set: BTreeSet<(u64, u64, TaskId)>,
}

impl KeyQueue {
    /// Insert `t` with `key` and tie-break `seq`.
    pub fn insert(&mut self, key: u64, seq: u64, t: TaskId) {
        self.set.insert((key, seq, t));
    }

    /// Remove the entry `(key, seq, t)`.
    pub fn remove(&mut self, key: u64, seq: u64, t: TaskId) -> bool {
        self.set.remove(&(key, seq, t))
    }

    /// First task allowed on `cpu`.
    pub fn first_for(&self, ctx: &Ctx, cpu: CpuId) -> Option<(u64, u64, TaskId)> {
        self.set.iter().find(|e| ctx.allowed(e.2, cpu)).copied()
    }

    /// Iterate in order.
    pub fn iter(&self) -> impl Iterator<Item = &(u64, u64, TaskId)> {
        self.set.iter()
    }

    /// Number of queued tasks.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

/// Per-task record of where a task sits in a [`KeyQueue`], so it can be removed.
#[derive(Debug, Default, Clone)]
pub struct Keyed {
    /// Per run queue.
    pub rqs: Vec<KeyQueue>,
    /// Per task: `(key, seq)` while queued.
    pub pos: Vec<Option<(u64, u64)>>,
    seq: u64,
}

impl Keyed {
    /// Size for `nr_rqs` queues and `nr_tasks` tasks.
    pub fn new(nr_rqs: usize, nr_tasks: usize) -> Keyed {
        Keyed {
            rqs: vec![KeyQueue::default(); nr_rqs],
            pos: vec![None; nr_tasks],
            seq: 1 << 62,
        }
    }

    /// Next tail sequence number (FIFO among equal keys).
    pub fn tail_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Insert `t` into `rq` with `key` at the tail of its key.
    pub fn push(&mut self, rq: usize, t: TaskId, key: u64) {
        let seq = self.tail_seq();
        self.push_seq(rq, t, key, seq);
    }

    /// Insert with an explicit sequence number.
    pub fn push_seq(&mut self, rq: usize, t: TaskId, key: u64, seq: u64) {
        debug_assert!(self.pos[t].is_none(), "task {t} queued twice");
        self.rqs[rq].insert(key, seq, t);
        self.pos[t] = Some((key, seq));
    }

    /// Remove `t` from `rq` if queued.
    pub fn remove(&mut self, rq: usize, t: TaskId) {
        if let Some((k, s)) = self.pos[t].take() {
            let found = self.rqs[rq].remove(k, s, t);
            debug_assert!(found, "task {t} not on rq {rq}");
        }
    }

    /// First task of `rq` allowed on `cpu`.
    pub fn peek(&self, ctx: &Ctx, rq: usize, cpu: CpuId) -> Option<TaskId> {
        self.rqs[rq].first_for(ctx, cpu).map(|e| e.2)
    }

    /// Take the first task of `rq` allowed on `cpu` out of the queue.
    pub fn pop(&mut self, ctx: &Ctx, rq: usize, cpu: CpuId) -> Option<TaskId> {
        let (k, s, t) = self.rqs[rq].first_for(ctx, cpu)?;
        self.rqs[rq].remove(k, s, t);
        self.pos[t] = None;
        Some(t)
    }
}
