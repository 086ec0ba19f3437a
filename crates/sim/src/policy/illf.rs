//! `illf`: the seed paper's improved least-laxity-first (Chen & Zhu), rules 1-4.
//!
//! Per run queue, every runnable task has a *stored* laxity (the paper keeps them all in
//! its laxity tree, [`crate::laxtree::LaxityTree`], the running one included; here the
//! waiting ones are kept in that order and the running ones in no order, which the
//! rules never read):
//! 1. all stored laxities of a queue are refreshed only when a task is activated there,
//!    or when its current task finishes;
//! 2. at each tick only the least-laxity waiting task (`rb_leftmost`, or `rb_left2most`
//!    when the leftmost is running) is refreshed;
//! 3. no switch happens unless a task is activated, a waiting task's laxity reaches 0, or
//!    the current task finishes;
//! 4. at activation (K = running task, Q = the new one) and at picks after a completion
//!    (K = leftmost, Q = left-2-most) Algorithm 2 decides: run Q iff K is big (R > S), Q
//!    is small, `R_k > S_q` and `S_k >= R_q` (the prose's strict `R_q < S_k` with
//!    `strict: true`).
//!
//! # Exact mode (`illf: { mode: exact }`)
//!
//! Rule 3 is defined on the instant a waiting task's laxity reaches 0; rule 2 is how the
//! paper's kernel finds that instant: at each tick, by refreshing one laxity. So in tick
//! mode (the default, the paper's algorithm as it ran at HZ = 1000) a waiting task is
//! seen at zero laxity only at the first tick at or after that instant, its laxity then
//! negative by up to a tick: a job shorter than a tick that has to wait for zero laxity
//! misses. Exact mode keeps rules 1, 3 and 4 as they are (they act at activations,
//! completions and the zero-laxity instant) and replaces rule 2's per-tick refresh by a
//! CPU timer ([`SchedClass::next_decision`]) at the instant the least-laxity waiting task
//! (the one rule 2 would refresh) reaches zero laxity, `deadline − remaining` (a waiting
//! task's laxity falls at rate 1, so that instant is known when it starts waiting). At
//! that instant its laxity is refreshed (one evaluation, as a tick's) and rule 3 decides.
//! Ticks then do nothing for ILLF. Exact mode needs rule 3 (without it ILLF preempts at
//! laxity crossings, LLF's thrashing in continuous time).
//!
//! Rules can be switched off for ablation (`scheduler.illf.rules`). Without rules 1-2
//! every laxity is refreshed at every tick (only the count changes: waiting tasks keep
//! their order, so decisions are the same). Without rule 3 the least-laxity waiting task
//! preempts whenever its laxity is below the running one's (LLF with the swap rule).
//! Without rule 4 Algorithm 2 always returns K ("LLF + rule 3").

use crate::class::{EnqueueReason, SchedClass};
use crate::laxtree::Entry;
use crate::state::{CpuId, Ctx, RqId, TaskId};
use schedlab_model::{IllfOptions, Ns};
use std::cell::{Cell, RefCell};
use super::progress;
use big::MaybeBig;
use candidates::Candidates;
use running::Running;
use waiting::{Held, WaitQueue};

mod big;
mod candidates;
mod running;
mod waiting;

/// Rule 4's candidates on the global queue at one instant, for the preemption scan: per
/// entry of `activated_waiting`, in order, its stored laxity and the least remaining
/// time among the small candidates up to it. Whether some candidate Q swaps with a
/// running K (`S_q < R_k`, Q small, `R_q <= S_k`) is then one binary search.
#[derive(Debug, Default)]
struct Rule4Scan {
    /// The instant and `activated_version` it was built for.
    built: Option<(Ns, u64)>,
    laxity: Vec<i64>,
    min_small_remaining: Vec<i64>,
}

/// Rule 4's answers at one tick for every running task of the global queue, worked out
/// in one pass over them ([`Illf::tick_rule4`]): the engine asks each running CPU in
/// turn, and between those calls neither the candidates nor a running task's values
/// change.
#[derive(Debug, Default)]
struct TickRule4 {
    /// The instant and `activated_version` the answers are for.
    built: Option<(Ns, u64)>,
    /// Bumped at each pass: an answer of another pass is not one.
    pass: u64,
    /// No candidate is small: no running task swaps (no answer is stored).
    none: bool,
    /// Per task: `pass << 1 | swaps`.
    answer: Vec<u64>,
}

/// Improved LLF.
pub struct Illf {
    opts: IllfOptions,
    /// Per run queue: the running tasks with a stored laxity, in no order. The paper's
    /// laxity tree holds every runnable task, the running one included, but the rules
    /// only ever look at the least-laxity *waiting* tasks (`waiting_set`, ordered) and
    /// at a running task's own key, so the running tasks need no order: rule 1
    /// evaluates theirs from here (only the stale ones when the platform charges no
    /// overhead).
    members: Running,
    /// The running tasks that may be big, for [`SchedClass::preempts_none_remote`]
    /// (kept only while `remaining_rises` is false).
    maybe_big: MaybeBig,
    /// Whether a running task's remaining time may rise (measured from outside).
    remaining_rises: bool,
    /// Whether a running task's laxity stays as it was while it runs
    /// ([`crate::class::Topology::no_overhead`]).
    no_overhead: bool,
    /// Per run queue: the entries of tasks not running, in the tree's order (laxity,
    /// then insertion sequence).
    waiting_set: Vec<WaitQueue>,
    /// Per task: its entry, queue, running mark, deadline and instants, in one record.
    tasks: Vec<PerTask>,
    /// Per run queue: the task put back at its `put_at` (still "current" for the rules).
    put_task: Vec<Option<TaskId>>,
    /// Per run queue: tasks activated at `activated_now.0` (rule 4 candidates).
    activated_now: Vec<(Ns, Vec<TaskId>)>,
    /// Per run queue: the entries of `waiting_set` activated at `activated_now.0` (rule
    /// 4's candidates still waiting there), in the tree's order, so that rule 4 looks
    /// only at candidates whose stored laxity is below the running task's remaining time
    /// instead of every task activated at the instant.
    activated_waiting: Vec<Candidates>,
    /// Bumped at every change of `activated_waiting`.
    activated_version: u64,
    /// Rule 4's candidates of the global queue as the preemption scan tests them.
    rule4_scan: RefCell<Rule4Scan>,
    /// Rule 4's answers at a tick, for every running task of the global queue.
    tick_rule4: TickRule4,
    /// Rule 4's lookups and the entries they looked at ([`SchedClass::queue_steps`]).
    steps: Cell<u64>,
    completed_at: Vec<Ns>,
    ticked_at: Vec<Ns>,
    /// Per run queue: its least waiting entry at its tick of `ticked_at`, after rule 2
    /// (nothing changes the waiting set while the engine asks each running CPU in turn).
    tick_first: Vec<Option<Entry>>,
    /// Per run queue: when rule 1 last refreshed every stored laxity.
    refreshed_at: Vec<Ns>,
    /// Reused by `refresh_all`: waiting tasks whose entry moved, with the new one.
    moved: Vec<(TaskId, Held)>,
    per_cpu: bool,
    /// How the engine lays out the queues (None when built outside the engine).
    topology: Option<crate::class::Topology>,
    seq: u64,
}

/// ILLF's fields of one task. A batch's put-back and pick and the tick's pass over the
/// running tasks read several of them per task: one record is one bounds check and
/// about one line, where six arrays were six (round nine's profile: the batch's
/// bookkeeping spread over `slot`, `running`, `activated_at`, `put_at`).
#[derive(Debug, Clone, Copy)]
struct PerTask {
    /// Its entry, as `waiting_set` of its queue `rq` holds it (a running task's is
    /// explicit), None when it has none.
    slot: Option<Held>,
    /// The run queue of its entry.
    rq: RqId,
    /// Its job's absolute deadline when its key was last evaluated while it runs
    /// (`i64::MIN`: no job), so that a fresh running task's remaining time is
    /// `deadline − now − key` without its and its CPU's records
    /// ([`Illf::member_remaining`]: a release tick's rule 4 asks it of every running
    /// task).
    deadline: i64,
    /// When it was last activated (`Ns::MAX`: never).
    activated_at: Ns,
    /// When it was last put back (`Ns::MAX`: never).
    put_at: Ns,
    running: bool,
}

impl PerTask {
    const NEW: PerTask = PerTask {
        slot: None,
        rq: 0,
        deadline: i64::MIN,
        activated_at: Ns::MAX,
        put_at: Ns::MAX,
        running: false,
    };
}

/// `t`'s job's absolute deadline (`i64::MIN`: no job), as `progress::laxity` reads it.
fn job_deadline(ctx: &Ctx, t: TaskId) -> i64 {
    ctx.task(t).job.map_or(i64::MIN, |j| j.deadline as i64)
}

impl Illf {
    /// ILLF with the given rule set.
    pub fn new(opts: IllfOptions) -> Illf {
        Illf {
            opts,
            members: Running::default(),
            maybe_big: MaybeBig::default(),
            remaining_rises: false,
            no_overhead: false,
            waiting_set: Vec::new(),
            tasks: Vec::new(),
            put_task: Vec::new(),
            activated_now: Vec::new(),
            activated_waiting: Vec::new(),
            activated_version: 0,
            rule4_scan: RefCell::new(Rule4Scan::default()),
            tick_rule4: TickRule4::default(),
            steps: Cell::new(0),
            completed_at: Vec::new(),
            ticked_at: Vec::new(),
            tick_first: Vec::new(),
            refreshed_at: Vec::new(),
            moved: Vec::new(),
            per_cpu: true,
            topology: None,
            seq: 0,
        }
    }

    /// `t`'s entry as the rules see it: (stored laxity, insertion sequence, task).
    fn entry_of(&self, t: TaskId) -> Option<Entry> {
        self.tasks[t].slot.map(|h| self.waiting_set[self.tasks[t].rq].entry(h))
    }

    fn lax(&self, t: TaskId) -> i64 {
        self.entry_of(t).map_or(i64::MAX, |e| e.0)
    }

    /// Store `laxity`, `t`'s laxity now, for `t`. An update keeps the task's place among
    /// equal keys (the paper assigns `laxity` in place); a new entry goes right of its
    /// equals.
    fn set_key(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, laxity: i64) {
        let seq = match self.entry_of(t) {
            Some(e) => {
                debug_assert_eq!(self.tasks[t].rq, rq, "ILLF: task {t} keyed on another queue");
                self.wait_remove(rq, t);
                e.1
            }
            None => {
                self.tasks[t].rq = rq;
                self.seq += 1;
                self.seq
            }
        };
        let e = (laxity, seq, t);
        self.tasks[t].slot = Some(Held::Dirty(e));
        if !self.tasks[t].running {
            self.wait_insert(rq, e);
        }
        self.track(t);
        if self.tasks[t].running {
            self.members.mark_fresh(rq, t); // evaluated now, while it runs
            self.tasks[t].deadline = job_deadline(ctx, t);
        }
        self.note_big(ctx, t);
    }

    /// Keep `maybe_big` in step after `t`'s key was stored or it started or stopped
    /// running: a running task with an entry is there if it is big now.
    fn note_big(&mut self, ctx: &Ctx, t: TaskId) {
        if !self.keeps_big() {
            return;
        }
        // Small, or not running: stays so until one of those moments.
        let big = matches!(self.tasks[t].slot, Some(Held::Dirty(e))
            if self.tasks[t].running && progress::remaining(ctx, t) > e.0);
        self.maybe_big.set(t, big);
    }

    /// Whether `maybe_big` is kept: it is asked only with per-CPU queues, and not kept
    /// when remaining times may rise.
    fn keeps_big(&self) -> bool {
        self.per_cpu && !self.remaining_rises
    }

    /// Keep `members` in step: a running task with an entry is there.
    /// A task joins stale: the key it brings is the one it had while waiting.
    fn track(&mut self, t: TaskId) {
        let member = self.tasks[t].running && self.tasks[t].slot.is_some();
        if member == self.members.contains(t) {
            return;
        }
        if member {
            self.members.add(self.tasks[t].rq, t);
        } else {
            self.members.remove(self.tasks[t].rq, t);
        }
    }

    /// Add `e` to the waiting tasks of `rq` (and to its rule 4 candidates if its task
    /// was activated at the instant they are for).
    fn wait_insert(&mut self, rq: RqId, e: Entry) {
        self.wait_insert_as(rq, e, false);
    }

    /// [`Illf::wait_insert`], sorted in at the next read when `later` (a put-back).
    fn wait_insert_as(&mut self, rq: RqId, e: Entry, later: bool) {
        let wq = &mut self.waiting_set[rq];
        let rec = &mut self.tasks[e.2];
        rec.slot = Some(if later { wq.insert_later(e) } else { wq.insert(e) });
        if rec.activated_at == self.activated_now[rq].0 {
            self.activated_waiting[rq].insert(e);
            self.activated_version += 1;
        }
    }

    /// Take `t` out of the waiting tasks of `rq` (if it is there); its entry stays, with
    /// the key it had.
    fn wait_remove(&mut self, rq: RqId, t: TaskId) {
        let Some(h) = self.tasks[t].slot else { return };
        let e = self.waiting_set[rq].entry(h);
        if self.waiting_set[rq].remove(h) {
            let rec = &mut self.tasks[t];
            rec.slot = Some(Held::Dirty(e));
            let activated = rec.activated_at == self.activated_now[rq].0;
            if self.drop_candidate(rq, &e, activated) {
                self.activated_version += 1;
            }
        }
    }

    /// Take `e` out of rule 4's candidates of `rq`; whether it was there. Only a task
    /// activated at the candidates' instant can be (`wait_insert_as`, `activate`; the set
    /// is cleared when the instant moves), so the others skip the tree's search: a
    /// batch's pick at a release instant searched it for every task it took.
    /// `activated`: whether `e`'s task was activated at the candidates' instant.
    #[inline]
    fn drop_candidate(&mut self, rq: RqId, e: &Entry, activated: bool) -> bool {
        debug_assert_eq!(
            activated,
            self.tasks[e.2].activated_at == self.activated_now[rq].0
        );
        let set = &mut self.activated_waiting[rq];
        if set.is_empty() || !activated {
            debug_assert!(!set.contains(e), "ILLF: candidate {e:?} of another instant");
            return false;
        }
        set.remove(e)
    }

    /// Mark `t` (queued on `rq`) running or not, keeping `waiting_set` in step.
    fn set_running(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, running: bool) {
        if self.tasks[t].running == running {
            return;
        }
        self.tasks[t].running = running;
        if let Some(e) = self.entry_of(t) {
            if running {
                self.wait_remove(rq, t);
            } else {
                // A put-back: a decision puts back its preempted tasks in a row, then
                // reads (`pick_next_task` settles them in, sorted once).
                self.wait_insert_as(rq, e, true);
            }
        }
        self.track(t);
        self.note_big(ctx, t);
    }

    /// `put_prev_task(0, t)` on the global queue as a batch's put-back
    /// ([`SchedClass::put_prev_and_pick_all`]): `set_running(t, false)` for a running task
    /// with its explicit entry (sorted in at the first pick), without its general tests.
    /// It stays in `members` until the batch's picks are done: most put-backs are picked
    /// again at once, and keep their place there and their fresh mark (their stored
    /// laxity is still their laxity: no time passed).
    /// The caller sets `put_task` (to the batch's last put-back).
    fn put_back_global(&mut self, ctx: &Ctx, t: TaskId) {
        debug_assert!(!self.keeps_big());
        let member = self.members.contains(t);
        let candidates_at = self.activated_now[0].0;
        let rec = &mut self.tasks[t];
        match rec.slot {
            Some(Held::Dirty(e)) if rec.running && member => {
                debug_assert_eq!(rec.rq, 0);
                rec.running = false;
                rec.put_at = ctx.now;
                let activated = rec.activated_at == candidates_at;
                self.waiting_set[0].insert_later(e);
                if activated {
                    self.activated_waiting[0].insert(e);
                    self.activated_version += 1;
                }
            }
            _ => {
                self.set_running(ctx, 0, t, false);
                self.tasks[t].put_at = ctx.now;
            }
        }
    }

    /// `pick_next_task(0, cpu)` on the global queue whose tasks may all run everywhere,
    /// as a batch's pick (its put-backs settled): `choose` with no current task, Algorithm
    /// 2 between the two least waiting entries, then `set_running(.., true)` for the
    /// entry taken, without their general tests (about 700 instructions a pick).
    /// With the task, whether it was put back in this batch (still in `members`).
    fn pick_global(&mut self, ctx: &Ctx) -> Option<(TaskId, bool)> {
        // Every entry dirty (the usual case after a rule-3 tick's put-backs): the two
        // least are the sorted entries' last two, read in place, and the one taken is
        // popped.
        let wq = &self.waiting_set[0];
        let sorted = wq.dirty_only();
        let all_dirty = sorted.is_some();
        let (w1, w2) = match sorted {
            Some(&[.., w2, w1]) => (w1, Some(w2)),
            Some(&[w1]) => (w1, None),
            Some([]) => return None,
            None => match wq.first_two() {
                (Some(w1), w2) => (w1, w2),
                (None, _) => return None,
            },
        };
        let (next, second) = match w2 {
            Some(w2) if self.alg2_takes_second(ctx, &w1, &w2) => (w2, true),
            _ => (w1, false),
        };
        let t = next.2;
        debug_assert_eq!(Some(t), self.choose(ctx, 0, 0, None), "ILLF: the batch's pick");
        debug_assert!(!self.tasks[t].running);
        if all_dirty {
            let taken = self.waiting_set[0].take_dirty_first(second);
            debug_assert_eq!(taken, next);
        } else {
            let held = self.tasks[t].slot.expect("ILLF: a waiting task without an entry");
            let removed = self.waiting_set[0].remove(held);
            debug_assert!(removed, "ILLF: task {t} picked but not waiting");
        }
        let candidates_at = self.activated_now[0].0;
        let rec = &mut self.tasks[t];
        rec.slot = Some(Held::Dirty(next));
        rec.running = true;
        let activated = rec.activated_at == candidates_at;
        if self.drop_candidate(0, &next, activated) {
            self.activated_version += 1;
        }
        // A task put back in this batch is still there.
        let again = self.members.contains(t);
        if !again {
            self.members.add(0, t);
        }
        Some((t, again))
    }

    fn erase(&mut self, rq: RqId, t: TaskId) {
        if self.tasks[t].slot.is_some() {
            self.wait_remove(rq, t);
            self.tasks[t].slot = None;
        }
        self.tasks[t].running = false;
        self.track(t);
        self.maybe_big.remove(t);
    }

    /// Rule 1: refresh every stored laxity of `rq` (ties keep their order).
    ///
    /// A second refresh at the same instant (several activations or completions at
    /// once) would store the values already stored: a laxity changes only with time
    /// (remaining times are accounted between instants), and every key set since the
    /// first refresh was computed at this instant. So it only counts its evaluations —
    /// the algorithm performs them — without recomputing (with 256 ready jobs, a release
    /// instant costs one refresh instead of one per released job).
    ///
    /// Every laxity is counted. The running tasks' are evaluated (a running task's key
    /// is stored in place: they are in no order), only the stale ones when a running
    /// laxity stays as it was ([`Running`]); the waiting tasks' are those of
    /// [`WaitQueue::refresh`], which evaluates only the entries stored since the last
    /// refresh (a waiting task's laxity falls with time alone).
    fn refresh_all(&mut self, ctx: &Ctx, rq: RqId) {
        let n = (self.members.all(rq).len() + self.waiting_set[rq].len()) as u64;
        ctx.count_laxity(n);
        if self.refreshed_at[rq] == ctx.now {
            return;
        }
        self.refreshed_at[rq] = ctx.now;
        let keeps_big = self.keeps_big();
        if cfg!(debug_assertions) && self.no_overhead {
            for &t in self.members.all(rq) {
                if self.members.is_fresh(rq, t) {
                    debug_assert_eq!(
                        self.lax(t),
                        progress::laxity(ctx, t),
                        "ILLF: running task {t}'s laxity moved while it ran"
                    );
                }
            }
        }
        let stale = self.members.take_stale(rq);
        let evaluated = if self.no_overhead {
            &stale[..]
        } else {
            self.members.all(rq)
        };
        // Queue steps too (tests/work.rs: evaluating every running task at every
        // refresh would count the CPUs busy at each one).
        self.steps.set(self.steps.get() + evaluated.len() as u64);
        for &t in evaluated {
            let Some(Held::Dirty(e)) = self.tasks[t].slot else {
                unreachable!("ILLF: a running task's entry is explicit")
            };
            let l = progress::laxity(ctx, t);
            if l != e.0 {
                self.tasks[t].slot = Some(Held::Dirty((l, e.1, t)));
            }
            self.tasks[t].deadline = job_deadline(ctx, t);
            if keeps_big {
                // `note_big` for a running task whose key is now `l`.
                self.maybe_big.set(t, progress::remaining(ctx, t) > l);
            }
        }
        self.members.give_back(rq, stale);
        let mut moved = std::mem::take(&mut self.moved);
        moved.clear();
        self.waiting_set[rq].refresh(
            ctx.now as i64,
            |t| (progress::laxity(ctx, t), ctx.task(t).job.is_some()),
            &mut moved,
        );
        for &(t, h) in &moved {
            self.tasks[t].slot = Some(h);
        }
        // The entries filed anew are this refresh's queue steps (tests/work.rs: a
        // rebuild of the waiting set would count every waiting task).
        self.steps.set(self.steps.get() + moved.len() as u64);
        self.moved = moved;
        // Rule 4's candidates carry the keys: re-keyed when they are for this instant,
        // else dropped (they are read only at their instant, and cleared at the next
        // activation).
        self.activated_version += 1;
        let mut old = self.activated_waiting[rq].take();
        if self.activated_now[rq].0 == ctx.now {
            for e in &mut old {
                *e = self.entry_of(e.2).expect("ILLF: a candidate without an entry");
            }
        } else {
            old.clear();
        }
        self.activated_waiting[rq].set(old);
    }

    /// Algorithm 2 with stored laxities (`s_q` given for a task not in the tree yet).
    fn swap_with(&self, ctx: &Ctx, k: TaskId, q: TaskId, s_q: i64) -> bool {
        if !self.opts.rules[3] {
            return false;
        }
        // Q's side first: a big Q never swaps, and K's record need not be read (a push
        // under `linux` placement asks this of every CPU for the same Q).
        let r_q = progress::remaining(ctx, q);
        if r_q > s_q {
            return false;
        }
        let (r_k, s_k) = (progress::remaining(ctx, k), self.lax(k));
        self.swaps(r_k, s_k, r_q, s_q)
    }

    /// Whether a pick with no current task takes `w2`, the second least waiting entry,
    /// over `w1`, the least: `alg2(w1, w2)` where rule 4 may act (Q's side first, then
    /// K's).
    #[inline]
    fn alg2_takes_second(&self, ctx: &Ctx, w1: &Entry, w2: &Entry) -> bool {
        let act = |t: TaskId| self.tasks[t].activated_at == ctx.now;
        if !self.opts.rules[3] || (self.opts.swap_at_activation_only && !act(w1.2) && !act(w2.2))
        {
            return false;
        }
        let r_q = self.batch_remaining(ctx, w2);
        r_q <= w2.0 && self.swaps(self.batch_remaining(ctx, w1), w1.0, r_q, w2.0)
    }

    /// The remaining time of `e`'s task, waiting on the global queue during a batch: a
    /// task put back in it is still in `members` with its key (most of the batch's
    /// picks take one), and [`Illf::member_remaining`] reads it without the task's and
    /// its CPU's records (it is still on its CPU for the engine).
    #[inline]
    fn batch_remaining(&self, ctx: &Ctx, e: &Entry) -> i64 {
        if self.members.contains(e.2) {
            self.member_remaining(ctx, e.2, e.0)
        } else {
            progress::remaining(ctx, e.2)
        }
    }

    /// Algorithm 2's test on the values it compares: K's remaining time and stored
    /// laxity, Q's.
    fn swaps(&self, r_k: i64, s_k: i64, r_q: i64, s_q: i64) -> bool {
        let big_k = r_k > s_k;
        let small_q = r_q <= s_q;
        big_k && small_q && r_k > s_q && self.fits(r_q, s_k)
    }

    /// Algorithm 2's last condition: small Q's remaining time fits in K's laxity
    /// (`R_q <= S_k`, `<` under `strict`).
    fn fits(&self, r_q: i64, s_k: i64) -> bool {
        if self.opts.strict {
            r_q < s_k
        } else {
            r_q <= s_k
        }
    }

    fn alg2(&self, ctx: &Ctx, k: TaskId, q: Option<TaskId>) -> TaskId {
        match q {
            Some(q) if self.swap_with(ctx, k, q, self.lax(q)) => q,
            _ => k,
        }
    }

    /// Waiting tasks of `rq` that may run on `cpu`, in laxity order.
    fn waiting<'a>(
        &'a self,
        ctx: &'a Ctx,
        rq: RqId,
        cpu: CpuId,
        curr: Option<TaskId>,
    ) -> impl Iterator<Item = TaskId> + 'a {
        self.waiting_set[rq]
            .iter()
            .map(|e| e.2)
            .filter(move |&t| Some(t) != curr && ctx.allowed(t, cpu))
    }

    /// The task `cpu` should run now given its current task `curr` (None when it has
    /// none): the rules applied to the stored laxities.
    fn choose(&self, ctx: &Ctx, rq: RqId, cpu: CpuId, curr: Option<TaskId>) -> Option<TaskId> {
        let now = ctx.now;
        let (w1, w2) = if curr.is_none() && self.unrestricted() {
            // Every waiting task may run on `cpu`: the queue's least two (a global
            // decision's pick, once per CPU it fills).
            let (a, b) = self.waiting_set[rq].first_two();
            (a.map(|e| e.2), b.map(|e| e.2))
        } else {
            let mut w = self.waiting(ctx, rq, cpu, curr);
            (w.next(), w.next())
        };
        let activation_now = |t: Option<TaskId>| t.is_some_and(|t| self.tasks[t].activated_at == now);
        let swap_allowed = |k: Option<TaskId>, q: Option<TaskId>| {
            !self.opts.swap_at_activation_only || activation_now(k) || activation_now(q)
        };
        let Some(c) = curr else {
            let k = w1?;
            return Some(if swap_allowed(w1, w2) {
                self.alg2(ctx, k, w2)
            } else {
                k
            });
        };
        if self.completed_at[rq] == now {
            // The current task finished a job and goes on with the next: pick anew among
            // the two least laxities, itself included.
            // The first two of the waiting tasks and itself, in tree order.
            let mut three: [Option<Entry>; 3] = [None; 3];
            for (slot, e) in three.iter_mut().zip(
                self.waiting_set[rq]
                    .iter()
                    .filter(|e| ctx.allowed(e.2, cpu))
                    .take(2),
            ) {
                *slot = Some(e);
            }
            if let Some(ec) = self.entry_of(c).filter(|_| self.tasks[c].running && ctx.allowed(c, cpu)) {
                three[2] = Some(ec);
                three.sort_unstable_by_key(|e| e.map_or((1, (0, 0, 0)), |e| (0, e)));
            }
            let mut all = three.into_iter().flatten().map(|e| e.2);
            let (k, q) = (all.next()?, all.next());
            return Some(if swap_allowed(Some(k), q) {
                self.alg2(ctx, k, q)
            } else {
                k
            });
        }
        if let Some(w1) = w1 {
            // Rule 3: zero laxity runs at once. With one queue for all CPUs, not in place
            // of a task whose laxity is as low (at zero laxity itself, or past it): the
            // two would take the CPU from each other without end within one instant, as
            // `wakeup_preempt` explains for a remote one. Per-CPU queues decide once per
            // instant, and the task displaced may be pushed to another CPU.
            if self.lax(w1) <= 0 && (self.per_cpu || self.lax(w1) < progress::laxity(ctx, c)) {
                return Some(w1);
            }
            if !self.opts.rules[2] && self.lax(w1) < progress::laxity(ctx, c) {
                return Some(w1); // without rule 3: plain least-laxity preemption
            }
        }
        // Rule 4 at activation: K = the running task, Q = a task activated now (the
        // least-laxity one that qualifies).
        // The list holds the tasks activated at `at`: stale (and not looked at, however
        // long it is) at any other instant, such as a tick.
        let activated = self.rule4_candidate(ctx, rq, cpu, c);
        if cfg!(debug_assertions) {
            // The index gives what testing every task activated at the instant gives.
            let (at, list) = &self.activated_now[rq];
            let current: &[TaskId] = if *at == now { list } else { &[] };
            let tested = current
                .iter()
                .copied()
                .filter(|&a| {
                    // Still queued here: a task activated on this queue may have been
                    // pushed to another one at the same instant (it stays in this list).
                    self.tasks[a].slot.is_some()
                        && ctx.task(a).rq == rq
                        && !self.tasks[a].running
                        && a != c
                        && ctx.allowed(a, cpu)
                        && self.swap_with(ctx, c, a, self.lax(a))
                })
                .min_by_key(|&a| self.entry_of(a));
            debug_assert_eq!(activated, tested, "ILLF rule 4: the index and the test differ");
        }
        Some(activated.unwrap_or(c))
    }

    /// Rule 4 at activation: the least-laxity task activated now and waiting on `rq`
    /// that may run on `cpu` and that Algorithm 2 runs in place of `k`. Algorithm 2 keeps
    /// a small K, and swaps only for `S_q < R_k`: so the candidates are looked at in
    /// laxity order up to `R_k` only, and the first that qualifies is the one.
    fn rule4_candidate(&self, ctx: &Ctx, rq: RqId, cpu: CpuId, k: TaskId) -> Option<TaskId> {
        if self.activated_now[rq].0 != ctx.now || !self.opts.rules[3] {
            return None;
        }
        self.steps.set(self.steps.get() + 1); // the lookup itself
        let r_k = progress::remaining(ctx, k);
        if r_k <= self.lax(k) {
            return None; // K is small
        }
        let mut looked = 0;
        let candidates = self.activated_waiting[rq].sorted();
        let found = candidates
            .iter()
            .rev()
            .take_while(|e| e.0 < r_k)
            .inspect(|_| looked += 1)
            .map(|e| e.2)
            .find(|&a| a != k && ctx.allowed(a, cpu) && self.swap_with(ctx, k, a, self.lax(a)));
        self.steps.set(self.steps.get() + looked);
        found
    }

    /// Whether rule 4 gives running `k`'s CPU of the global queue to a task activated
    /// now: `rule4_candidate(.., k).is_some()` for a queue whose tasks may all run
    /// everywhere, with the candidates' prefix minima built once per instant and change.
    fn rule4_swaps(&self, ctx: &Ctx, k: TaskId) -> bool {
        let swaps = self.rule4_swaps_indexed(ctx, k);
        if cfg!(debug_assertions) {
            let steps = self.steps.get();
            let cpu = self.cpu_of(ctx, k);
            debug_assert_eq!(swaps, self.rule4_candidate(ctx, 0, cpu, k).is_some());
            self.steps.set(steps);
        }
        swaps
    }

    /// [`Illf::rule4_swaps`] from the prefix minima. Q must be small: when no candidate
    /// is (or none waits, as at most ticks, the tasks released having found free CPUs),
    /// no running task is looked at (at a tick every running CPU asks).
    fn rule4_swaps_indexed(&self, ctx: &Ctx, k: TaskId) -> bool {
        self.steps.set(self.steps.get() + 1);
        if !self.rule4_scan_built(ctx) {
            return false;
        }
        let scan = self.rule4_scan.borrow();
        let (r_k, s_k) = (progress::remaining(ctx, k), self.lax(k));
        self.scan_swaps(&scan, r_k, s_k)
    }

    /// Algorithm 2 for a running K with remaining time `r_k` and stored laxity `s_k`
    /// against the candidates of `scan` (built, with a small one).
    fn scan_swaps(&self, scan: &Rule4Scan, r_k: i64, s_k: i64) -> bool {
        if r_k <= s_k {
            return false; // K is small
        }
        // Above every candidate's laxity (the tick asks each big running task): all.
        let n = if scan.laxity.last().is_some_and(|&s| s < r_k) {
            scan.laxity.len()
        } else {
            scan.laxity.partition_point(|&s| s < r_k)
        };
        n > 0 && self.fits(scan.min_small_remaining[n - 1], s_k)
    }

    /// Build `rule4_scan` for this instant and the candidates now if it is not;
    /// whether some candidate is small (none waits, as at most ticks, the tasks released
    /// having found free CPUs: then no running task is looked at).
    fn rule4_scan_built(&self, ctx: &Ctx) -> bool {
        if self.activated_waiting[0].is_empty() {
            return false;
        }
        let mut scan = self.rule4_scan.borrow_mut();
        let version = Some((ctx.now, self.activated_version));
        if scan.built != version {
            scan.built = version;
            let Rule4Scan {
                laxity,
                min_small_remaining: min_r,
                ..
            } = &mut *scan;
            laxity.clear();
            min_r.clear();
            let mut least = i64::MAX;
            for e in self.activated_waiting[0].sorted().iter().rev() {
                let r = progress::remaining(ctx, e.2);
                if r <= e.0 {
                    least = least.min(r);
                }
                laxity.push(e.0);
                min_r.push(least);
            }
            self.steps.set(self.steps.get() + laxity.len() as u64);
        }
        scan.min_small_remaining.last().is_some_and(|&r| r != i64::MAX)
    }

    /// [`Illf::rule4_swaps`] for running `k` at a tick of the global queue: the first
    /// call of the tick answers for every running task in one pass (the same test, the
    /// scan borrowed once, a task whose stored laxity is below every small candidate's
    /// remaining time settled without reading its record); the others read the answer.
    fn tick_rule4(&mut self, ctx: &Ctx, k: TaskId) -> bool {
        let stamp = Some((ctx.now, self.activated_version));
        if self.tick_rule4.built != stamp {
            self.tick_rule4.built = stamp;
            self.tick_rule4.pass += 1;
            let some_small = self.rule4_scan_built(ctx);
            self.tick_rule4.none = !some_small;
            if some_small {
                let scan = self.rule4_scan.borrow();
                let least_r_q = *scan.min_small_remaining.last().unwrap();
                let pass = self.tick_rule4.pass << 1;
                let members = self.members.all(0);
                // Each running task is one lookup, as when every CPU asked
                // (tests/work.rs).
                self.steps.set(self.steps.get() + members.len() as u64);
                for &m in members {
                    let s_m = self.lax(m);
                    // Algorithm 2 needs some small Q that fits: the least R_q first.
                    let swaps = self.fits(least_r_q, s_m)
                        && self.scan_swaps(&scan, progress::remaining(ctx, m), s_m);
                    self.tick_rule4.answer[m] = pass | swaps as u64;
                }
            }
        }
        let t4 = &self.tick_rule4;
        let swaps = if t4.none {
            false
        } else if t4.answer[k] >> 1 == t4.pass {
            t4.answer[k] & 1 == 1
        } else {
            self.rule4_swaps_indexed(ctx, k) // not running in the tree when the pass ran
        };
        if cfg!(debug_assertions) {
            let steps = self.steps.get();
            debug_assert_eq!(swaps, self.rule4_swaps(ctx, k), "ILLF: the tick's rule 4 pass");
            self.steps.set(steps);
        }
        swaps
    }

    /// The first `task_tick` of a tick on `rq`: rule 2 (or rule 1 without it), and on the
    /// global queue its least waiting entry, read once for every running CPU.
    // Inlined: per-CPU queues (`linux`) call both at every tick of every CPU.
    #[inline(always)]
    fn tick_begin(&mut self, ctx: &Ctx, rq: RqId) {
        self.ticked_at[rq] = ctx.now;
        self.waiting_set[rq].settle();
        if self.opts.rules[1] {
            self.refresh_least(ctx, rq);
        } else {
            self.refresh_all(ctx, rq);
        }
        if !self.per_cpu {
            self.waiting_set[rq].settle();
            self.tick_first[rq] = self.waiting_set[rq].first();
        }
    }

    /// `task_tick`'s answer for running `t` on `cpu`, after [`Illf::tick_begin`].
    // Inlined: per-CPU queues (`linux`) call both at every tick of every CPU.
    #[inline(always)]
    fn tick_one(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId, t: TaskId) -> bool {
        if let Some(preempted) = self.tick_preempts(ctx, rq, cpu, t) {
            debug_assert_eq!(preempted, self.choose(ctx, rq, cpu, Some(t)) != Some(t));
            return preempted;
        }
        self.choose(ctx, rq, cpu, Some(t)) != Some(t)
    }

    /// [`SchedClass::tick_all`] on the global queue: `task_tick` on every CPU running a
    /// task of it. Those are the running tasks with an entry (`members`); the first
    /// call's part runs once, and when neither rule 3 (the least waiting entry at zero
    /// laxity) nor rule 4 (a small candidate activated now) can displace a running task
    /// and no completion happened now, no running task is looked at.
    fn tick_all_global(&mut self, ctx: &Ctx, resched: &mut Vec<CpuId>) {
        if cfg!(debug_assertions) {
            for &m in self.members.all(0) {
                debug_assert!(
                    ctx.task(m).runnable
                        && ctx.task(m).on_cpu.is_some_and(|cpu| ctx.cpus[cpu].curr == Some(m)),
                    "ILLF: running task {m} is not the runnable current task of a CPU"
                );
            }
        }
        if self.members.all(0).is_empty() {
            return; // no CPU runs one: no `task_tick` call
        }
        self.tick_begin(ctx, 0);
        if self.opts.rules[2] {
            self.tick_all_fast(ctx, resched);
            return;
        }
        for &m in self.members.all(0) {
            // Without rule 3 `tick_preempts` has no answer: `task_tick` asks `choose`.
            let cpu = self.cpu_of(ctx, m);
            if self.choose(ctx, 0, cpu, Some(m)) != Some(m) {
                resched.push(cpu);
            }
        }
    }

    /// [`Illf::tick_all_global`] with rule 3 on: what `task_tick` answers for each
    /// running task, in one pass, with what the rules compare a running task with (the
    /// least waiting entries, the instant's candidates) worked out once.
    ///
    /// At a completion instant `choose` picks anew among the two least waiting entries
    /// and the running task's own ([`Illf::first_preempted`] has the same case). Else
    /// rule 3 (the least waiting entry `w1` at zero laxity) displaces every running task
    /// with more laxity, and rule 4 at an activation every big running task some small
    /// candidate swaps with ([`Illf::scan_swaps`], the candidates' prefix minima built
    /// once). When neither can displace any (`w1` above zero, no small candidate: most
    /// ticks), no running task is looked at.
    fn tick_all_fast(&self, ctx: &Ctx, resched: &mut Vec<CpuId>) {
        let members = self.members.all(0);
        if self.completed_at[0] == ctx.now {
            let (Some(w1), w2) = self.waiting_set[0].first_two() else {
                return self.tick_check(ctx, members, resched); // each task is the least
            };
            let act = |t: TaskId| self.tasks[t].activated_at == ctx.now;
            let swap_allowed_w1 = !self.opts.swap_at_activation_only || act(w1.2);
            // w1's side of Algorithm 2 as Q, the same for every running task.
            let r_w1 = progress::remaining(ctx, w1.2);
            let w1_may_swap_in = self.opts.rules[3] && r_w1 <= w1.0;
            for &m in members {
                let em = self.entry_of(m).expect("ILLF: a running task without an entry");
                let swap_allowed = swap_allowed_w1 || act(m);
                let preempted = if em < w1 {
                    // K = m, Q = w1.
                    w1_may_swap_in
                        && swap_allowed
                        && self.swaps(progress::remaining(ctx, m), em.0, r_w1, w1.0)
                } else if w2.is_none_or(|w2| em < w2) {
                    !(swap_allowed && self.swap_with(ctx, w1.2, m, em.0)) // K = w1, Q = m
                } else {
                    true // K = w1, Q = w2
                };
                if preempted {
                    resched.push(self.cpu_of(ctx, m));
                }
            }
            return self.tick_check(ctx, members, resched);
        }
        let rule3 = self.tick_first[0].filter(|w1| w1.0 <= 0).map(|w1| w1.0);
        let rule4 = self.activated_now[0].0 == ctx.now
            && self.opts.rules[3]
            && self.rule4_scan_built(ctx);
        if rule3.is_none() && !rule4 {
            return self.tick_check(ctx, members, resched);
        }
        let scan = self.rule4_scan.borrow();
        let least_r_q = scan.min_small_remaining.last().copied().unwrap_or(i64::MAX);
        // `fits(least_r_q, s_m)` as one comparison, `s_m >= fit_bar`, for every running
        // task (rule 4 holds only with a small candidate: `least_r_q` below `i64::MAX`).
        let fit_bar = if self.opts.strict {
            least_r_q.saturating_add(1)
        } else {
            least_r_q
        };
        if rule4 {
            // Each running task is one lookup, as when every CPU asked (tests/work.rs).
            self.steps.set(self.steps.get() + members.len() as u64);
        }
        for &m in members {
            // A running task's entry is explicit: its stored laxity, read once.
            let Some(Held::Dirty(em)) = self.tasks[m].slot else {
                unreachable!("ILLF: a running task's entry is explicit")
            };
            let s_m = em.0;
            let preempted = rule3.is_some_and(|l1| l1 < self.member_laxity(ctx, m, s_m))
                || (rule4
                    // Algorithm 2 needs some small Q that fits: the least R_q first.
                    && {
                        let fits = s_m >= fit_bar;
                        debug_assert_eq!(fits, self.fits(least_r_q, s_m));
                        fits
                    }
                    && self.scan_swaps(&scan, self.member_remaining(ctx, m, s_m), s_m));
            if preempted {
                resched.push(self.cpu_of(ctx, m));
            }
        }
        drop(scan);
        self.tick_check(ctx, members, resched);
    }

    /// Running `m`'s laxity now: on a platform without overhead, its stored key when it
    /// is fresh (evaluated while it runs: it stays as it was), read without the task's
    /// record; else evaluated. A rule-3 tick compares it for every running task.
    #[inline]
    fn running_laxity(&self, ctx: &Ctx, m: TaskId) -> i64 {
        match self.tasks[m].slot {
            Some(Held::Dirty(e)) if self.members.contains(m) => self.member_laxity(ctx, m, e.0),
            _ => progress::laxity(ctx, m),
        }
    }

    /// [`Illf::running_laxity`] for `m` in `members`, whose stored key is `s_m`.
    #[inline]
    fn member_laxity(&self, ctx: &Ctx, m: TaskId, s_m: i64) -> i64 {
        debug_assert!(self.members.contains(m));
        if self.no_overhead && self.members.is_fresh(0, m) {
            debug_assert_eq!(
                s_m,
                progress::laxity(ctx, m),
                "ILLF: running task {m}'s fresh key is not its laxity"
            );
            s_m
        } else {
            progress::laxity(ctx, m)
        }
    }

    /// Running `m`'s remaining time now (`m` in `members`, its stored key `s_m`): on a
    /// platform without overhead, `deadline − now − s_m` when it is fresh (its key is
    /// its laxity), read without the task's and its CPU's records; else evaluated.
    #[inline]
    fn member_remaining(&self, ctx: &Ctx, m: TaskId, s_m: i64) -> i64 {
        let d = self.tasks[m].deadline;
        let r = if self.no_overhead && d != i64::MIN && self.members.is_fresh(0, m) {
            d - ctx.now as i64 - s_m
        } else {
            progress::remaining(ctx, m)
        };
        debug_assert_eq!(r, progress::remaining(ctx, m), "ILLF: task {m}'s remaining time");
        r
    }

    /// Debug builds: `resched` holds exactly the CPUs of the running tasks `members`
    /// for which `choose` displaces the task (the checks' steps left out of the count).
    fn tick_check(&self, ctx: &Ctx, members: &[TaskId], resched: &[CpuId]) {
        if !cfg!(debug_assertions) {
            return;
        }
        let steps = self.steps.get();
        let mut asked: Vec<CpuId> = members
            .iter()
            .filter_map(|&m| {
                let cpu = self.cpu_of(ctx, m);
                (self.choose(ctx, 0, cpu, Some(m)) != Some(m)).then_some(cpu)
            })
            .collect();
        let mut found = resched.to_vec();
        asked.sort_unstable();
        found.sort_unstable();
        debug_assert_eq!(found, asked, "ILLF: the tick's pass and `choose` differ");
        self.steps.set(steps);
    }

    /// Rule 2: refresh only the least-laxity waiting task (leftmost, or left-2-most when
    /// the leftmost is running).
    fn refresh_least(&mut self, ctx: &Ctx, rq: RqId) {
        // The paper's `rb_leftmost`, or `rb_left2most` when the leftmost runs: either
        // way the least-laxity entry of a task not running.
        if let Some(left) = self.waiting_set[rq].first().map(|e| e.2) {
            let l = progress::laxity_counted(ctx, left);
            self.set_key(ctx, rq, left, l);
        }
    }

    /// `choose(c) != c` for running `c` on `cpu`, worked out from the least waiting entry
    /// alone when no completion and no activation happened at this instant (rules 1 and
    /// 4 act only then): rule 3 is then the only rule that may displace `c`, and it
    /// looks at the least-laxity waiting task that may run on `cpu`. When the queue's
    /// least entry is that task (or its laxity is above zero, so no entry qualifies), a
    /// tick costs one look at it instead of a walk of the queue per CPU. None: ask
    /// `choose`.
    // Inlined: per-CPU queues call it at every tick of every CPU (its one caller).
    #[inline]
    fn tick_preempts(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId, c: TaskId) -> Option<bool> {
        if !self.opts.rules[2] || self.completed_at[rq] == ctx.now {
            return None;
        }
        // Rule 4 at an activation instant (releases fall on ticks when periods are whole
        // ticks): answered by `rule4_swaps` on the one queue of tasks that may run
        // everywhere.
        let rule4 = self.activated_now[rq].0 == ctx.now && self.opts.rules[3];
        if rule4 && (self.per_cpu || !self.tasks[c].running || !self.unrestricted()) {
            return None;
        }
        // The global queue's is read at the tick's first call (every running CPU asks
        // for it); a per-CPU queue is asked once a tick.
        let w1 = if self.per_cpu {
            self.waiting_set[rq].first()
        } else {
            self.tick_first[rq]
        };
        debug_assert_eq!(w1, self.waiting_set[rq].first(), "ILLF: the tick's least entry");
        let rule3 = match w1 {
            Some(w1) if w1.0 <= 0 => {
                if w1.2 == c || !ctx.allowed(w1.2, cpu) {
                    return None;
                }
                self.per_cpu || w1.0 < progress::laxity(ctx, c)
            }
            _ => false,
        };
        Some(rule3 || (rule4 && self.tick_rule4(ctx, c)))
    }

    /// `deadline − remaining`: the instant a waiting task's laxity reaches zero.
    fn zero_instant(ctx: &Ctx, t: TaskId) -> Ns {
        ctx.task(t).job.map_or(Ns::MAX, |j| {
            j.deadline
                .saturating_sub(progress::remaining(ctx, t) as Ns)
        })
    }

    /// Exact mode: the least-laxity waiting task of `rq` that may run on `cpu` whose
    /// stored laxity is still positive (the one rule 2 would refresh next).
    fn next_zero(&self, ctx: &Ctx, rq: RqId, cpu: CpuId, curr: TaskId) -> Option<TaskId> {
        self.waiting_set[rq]
            .iter()
            .filter(|e| e.0 > 0)
            .map(|e| e.2)
            .find(|&t| t != curr && ctx.allowed(t, cpu) && ctx.task(t).job.is_some())
    }

    fn activate(&mut self, rq: RqId, t: TaskId, now: Ns) {
        self.tasks[t].activated_at = now;
        let (at, list) = &mut self.activated_now[rq];
        if *at != now {
            *at = now;
            list.clear();
            self.activated_waiting[rq].clear();
            self.activated_version += 1;
        }
        list.push(t);
        // Called after `set_key` (a task with an entry and not running waits: no search
        // of the waiting set needed) or for a task without an entry.
        if let Some(h) = self.tasks[t].slot.filter(|_| !self.tasks[t].running) {
            debug_assert!(self.waiting_set[rq].contains(h), "ILLF: task {t} not waiting");
            let e = self.waiting_set[rq].entry(h);
            self.activated_waiting[rq].insert(e);
            self.activated_version += 1;
        }
    }

    /// Whether `wakeup_preempt` gives `cpu` (running `curr` in the decision's assignment)
    /// to the task `peek_next_task` offers there: the engine's question, asked as it asks.
    fn preempted_as_asked(&self, ctx: &Ctx, cpu: CpuId, curr: TaskId) -> bool {
        self.peek_next_task(ctx, 0, cpu)
            .is_some_and(|cand| self.wakeup_preempt(ctx, curr, cand))
    }

    /// [`SchedClass::global_first_preempted`] for the one queue of global placement.
    ///
    /// On a CPU whose current task `c` is the one assigned (every CPU not in `unsure`),
    /// `peek_next_task` offers `choose(c)` when it is not `c`, and `wakeup_preempt`
    /// then agrees; when it is `c`, it offers a waiting task that `wakeup_preempt`
    /// declines. So the CPU is preempted iff `choose(c) != c`, and what `choose` tests
    /// against `c` is the same for every CPU (nothing is restricted in affinity): the
    /// least-laxity waiting entry `w1`, the instant's completion and activations. That
    /// is worked out once here, and each CPU costs a few comparisons of its task's
    /// values instead of two walks of the queue; at an instant where none of the rules
    /// can displace a running task (a tick with `w1`'s laxity above zero, no
    /// activation, no completion), only the `unsure` CPUs are asked.
    fn first_preempted(
        &self,
        ctx: &Ctx,
        assign: &[Option<TaskId>],
        unsure: &[CpuId],
    ) -> Option<CpuId> {
        let now = ctx.now;
        let w1 = self.waiting_set[0].first()?;
        let completed = self.completed_at[0] == now;
        let rule4 = self.activated_now[0].0 == now && self.opts.rules[3];
        // Rule 3 (or, without it, plain least-laxity preemption) for w1 against c.
        let rule3 = w1.0 <= 0 || !self.opts.rules[2];
        // An assigned task whose state is not that of a running task in the tree (not
        // expected on a CPU that kept its task) is asked as the engine asks.
        let settled = |cpu: CpuId, c: TaskId, is_unsure: bool| {
            self.tasks[c].running
                && self.tasks[c].slot.is_some()
                && !is_unsure
                && ctx.cpus[cpu].curr == Some(c)
        };
        if !completed && !rule4 && !rule3 {
            if cfg!(debug_assertions) {
                for (cpu, c) in assign.iter().enumerate() {
                    if let Some(c) = *c {
                        let is_unsure = unsure.binary_search(&cpu).is_ok();
                        debug_assert!(
                            is_unsure || settled(cpu, c, is_unsure),
                            "ILLF: CPU {cpu} kept task {c} but it is not running in the tree"
                        );
                    }
                }
            }
            return unsure
                .iter()
                .copied()
                .find(|&cpu| assign[cpu].is_some_and(|c| self.preempted_as_asked(ctx, cpu, c)));
        }
        let w2 = self.waiting_set[0].iter().nth(1);
        let act = |t: TaskId| self.tasks[t].activated_at == now;
        let swap_allowed_w1 = !self.opts.swap_at_activation_only || act(w1.2);
        // w1's side of Algorithm 2 with K = c, Q = w1, the same for every CPU.
        let r_w1 = progress::remaining(ctx, w1.2);
        let w1_may_swap_in = self.opts.rules[3] && r_w1 <= w1.0; // Q must be small
        // `unsure` is in CPU order, as the CPUs are visited: a cursor instead of a
        // binary search per CPU (with 1,024 CPUs that search was a quarter of a run).
        let mut next_unsure = unsure.iter().copied().peekable();
        assign.iter().enumerate().find_map(|(cpu, c)| {
            while next_unsure.next_if(|&u| u < cpu).is_some() {}
            let is_unsure = next_unsure.next_if_eq(&cpu).is_some();
            debug_assert_eq!(is_unsure, unsure.binary_search(&cpu).is_ok());
            let c = (*c)?;
            if !settled(cpu, c, is_unsure) {
                return self.preempted_as_asked(ctx, cpu, c).then_some(cpu);
            }
            let preempted = if completed {
                // The pick among the two least waiting entries and c's own: Algorithm 2
                // with K and Q the least two; c keeps its CPU only as one of them.
                let ec = self.entry_of(c).unwrap();
                let swap_allowed = swap_allowed_w1 || act(c);
                if ec < w1 {
                    // K = c, Q = w1: `swap_with(c, w1)` with w1's values worked out once.
                    let swap = w1_may_swap_in
                        && swap_allowed
                        && self.swaps(progress::remaining(ctx, c), ec.0, r_w1, w1.0);
                    debug_assert_eq!(swap, swap_allowed && self.swap_with(ctx, c, w1.2, w1.0));
                    swap
                } else if w2.is_none_or(|w2| ec < w2) {
                    !(swap_allowed && self.swap_with(ctx, w1.2, c, ec.0)) // K = w1, Q = c
                } else {
                    true // K = w1, Q = w2
                }
            } else {
                (rule3 && w1.0 < self.running_laxity(ctx, c))
                    || (rule4 && self.rule4_swaps(ctx, c))
            };
            preempted.then_some(cpu)
        })
    }

    /// Whether every task of this class may run on every CPU.
    fn unrestricted(&self) -> bool {
        self.topology.is_some_and(|t| t.unrestricted)
    }

    fn cpu_of(&self, ctx: &Ctx, t: TaskId) -> CpuId {
        ctx.task(t).on_cpu.unwrap_or(ctx.task(t).rq)
    }
}

impl SchedClass for Illf {
    fn name(&self) -> &'static str {
        "illf"
    }

    fn running_tasks_preempt(&self) -> bool {
        false // `choose` only ever returns a waiting task or the current one
    }

    fn never_yields(&self) -> bool {
        true
    }

    /// ILLF reads running tasks' remaining times and laxities, but through
    /// `policy/progress.rs`, which adds the accounting still pending on their CPU: the
    /// engine need not account every CPU at every instant for it.
    fn reads_progress(&self) -> bool {
        false
    }

    /// Measured remaining times move running laxities: rule 1 evaluates every running
    /// task again, as on a platform with overhead, and a running task small once may
    /// become big (so `preempts_none_remote` no longer answers).
    fn remaining_measured(&mut self) {
        self.no_overhead = false;
        self.remaining_rises = true;
    }

    /// Algorithm 2 is not a priority order: a task it lets preempt may itself be
    /// displaced by the task it put back, at the same instant.
    fn preempts_in_order(&self) -> bool {
        false
    }

    fn queue_steps(&self) -> u64 {
        self.steps.get()
    }

    fn set_topology(&mut self, topology: crate::class::Topology) {
        self.topology = Some(topology);
    }

    fn init(&mut self, nr_rqs: usize, nr_tasks: usize) {
        self.members = Running::new(nr_rqs, nr_tasks);
        self.maybe_big = MaybeBig::new(nr_tasks);
        self.tick_rule4 = TickRule4 {
            answer: vec![0; nr_tasks],
            ..TickRule4::default()
        };
        self.no_overhead = self.topology.is_some_and(|t| t.no_overhead);
        self.waiting_set = vec![WaitQueue::default(); nr_rqs];
        self.tasks = vec![PerTask::NEW; nr_tasks];
        self.put_task = vec![None; nr_rqs];
        self.activated_now = vec![(Ns::MAX, Vec::new()); nr_rqs];
        self.activated_waiting = vec![Candidates::default(); nr_rqs];
        self.completed_at = vec![Ns::MAX; nr_rqs];
        self.ticked_at = vec![Ns::MAX; nr_rqs];
        self.tick_first = vec![None; nr_rqs];
        self.refreshed_at = vec![Ns::MAX; nr_rqs];
        self.per_cpu = self.topology.map_or(nr_rqs > 1, |t| !t.global_queue);
    }

    fn enqueue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, _why: EnqueueReason) {
        if self.opts.rules[0] {
            self.refresh_all(ctx, rq);
        }
        let l = progress::laxity_counted(ctx, t);
        self.set_key(ctx, rq, t, l);
        self.activate(rq, t, ctx.now);
    }

    fn dequeue_task(&mut self, _ctx: &Ctx, rq: RqId, t: TaskId) {
        self.erase(rq, t);
    }

    fn peek_next_task(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        let curr = ctx.cpus[cpu]
            .curr
            .filter(|&c| self.tasks[c].running && ctx.task(c).rq == rq);
        match self.choose(ctx, rq, cpu, curr) {
            Some(c) if Some(c) != curr => Some(c),
            // Nothing should displace the current task; offer the least-laxity waiting
            // one (for push/pull), which `wakeup_preempt` will decline here.
            _ => self.waiting(ctx, rq, cpu, curr).next(),
        }
    }

    fn pick_next_task(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        // The tasks put back since are sorted in once, before the first read.
        self.waiting_set[rq].settle();
        // The task put back at this instant is still "current" for the rules (if it was
        // put back on this queue: it may have been put back on another one since).
        let prev = self.put_task[rq]
            .filter(|&t| self.per_cpu && !self.tasks[t].running && self.tasks[t].put_at == ctx.now)
            .filter(|&t| ctx.task(t).rq == rq)
            .filter(|&t| self.tasks[t].slot.is_some());
        let next = self.choose(ctx, rq, cpu, prev)?;
        self.set_running(ctx, rq, next, true);
        Some(next)
    }

    /// Global placement (one queue, every task allowed everywhere): the put-backs, then
    /// the picks, each as `put_prev_task` and `pick_next_task` would do it, without the
    /// engine's step and the hook per task (a rule-3 tick on scale-1k moves about 355
    /// tasks). Not under the user-space dispatcher (`remaining_rises`).
    fn put_prev_and_pick_all(
        &mut self,
        ctx: &Ctx,
        prev: &[TaskId],
        picks: usize,
        out: &mut Vec<TaskId>,
    ) -> bool {
        if self.per_cpu
            || self.remaining_rises
            || self.members.nr_rqs() != 1
            || !self.unrestricted()
        {
            return false;
        }
        for &t in prev {
            self.put_back_global(ctx, t);
        }
        if let Some(&last) = prev.last() {
            self.put_task[0] = Some(last);
        }
        self.waiting_set[0].settle();
        let mut again = 0;
        for _ in 0..picks {
            match self.pick_global(ctx) {
                Some((n, put_back)) => {
                    out.push(n);
                    again += usize::from(put_back);
                }
                None => break,
            }
        }
        // The put-backs not picked again leave `members` (`track`); none when every one
        // was picked again (most batches).
        if again < prev.len() {
            for &t in prev {
                if !self.tasks[t].running && self.members.contains(t) {
                    self.members.remove(0, t);
                }
            }
        }
        debug_assert!(prev
            .iter()
            .all(|&t| self.tasks[t].running || !self.members.contains(t)));
        true
    }

    fn put_prev_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.set_running(ctx, rq, t, false);
        self.tasks[t].put_at = ctx.now;
        self.put_task[rq] = Some(t);
    }

    fn task_stopped(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.erase(rq, t);
        if self.opts.rules[0] {
            self.refresh_all(ctx, rq);
        }
        self.completed_at[rq] = ctx.now;
    }

    fn job_changed(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        // It may have left the tree at the completion of this same instant.
        if self.tasks[t].slot.is_none() {
            self.activate(rq, t, ctx.now);
        }
        self.set_running(ctx, rq, t, true);
        if self.opts.rules[0] {
            let l = progress::laxity_counted(ctx, t);
            self.set_key(ctx, rq, t, l);
            self.refresh_all(ctx, rq);
        } else {
            let l = progress::laxity_counted(ctx, t);
            self.set_key(ctx, rq, t, l);
        }
        self.completed_at[rq] = ctx.now;
    }

    fn task_tick(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId, t: TaskId) -> bool {
        if self.opts.exact {
            return false; // zero laxity comes from next_decision
        }
        if self.ticked_at[rq] != ctx.now {
            self.tick_begin(ctx, rq);
        }
        self.tick_one(ctx, rq, cpu, t)
    }

    /// Global placement (one queue, no affinity restriction, tick mode): the tick's
    /// answers for every running task at once (`tick_all`).
    ///
    /// Not under the user-space dispatcher (`remaining_rises`): there a running task's
    /// job may end between the caller's instants, so the class's running set can hold a
    /// task the engine no longer counts as running, which the per-CPU path skips.
    fn ticks_all_at_once(&self) -> bool {
        !self.opts.exact
            && !self.per_cpu
            && !self.remaining_rises
            && self.members.nr_rqs() == 1
            && self.unrestricted()
    }

    fn tick_all(&mut self, ctx: &Ctx, resched: &mut Vec<CpuId>) {
        self.tick_all_global(ctx, resched);
    }

    fn uses_tick(&self, _ctx: &Ctx) -> bool {
        !self.opts.exact // exact mode does nothing at ticks
    }

    fn uses_decision_timer(&self) -> bool {
        self.opts.exact
    }

    /// Exact mode: the instant the next waiting task that may run on `cpu` reaches zero
    /// laxity (tasks already at or below zero have had their instant).
    fn next_decision(&self, ctx: &Ctx, rq: RqId, cpu: CpuId, curr: TaskId) -> Option<Ns> {
        if !self.opts.exact {
            return None;
        }
        let t = self.next_zero(ctx, rq, cpu, curr)?;
        Some(Self::zero_instant(ctx, t).max(ctx.now + 1))
    }

    fn decision_due(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId, curr: TaskId) -> bool {
        if !self.opts.rules[1] {
            self.refresh_all(ctx, rq);
            return false;
        }
        // Rule 2 at the zero-laxity instant: refresh the least-laxity waiting task(s)
        // whose instant has come; rule 3 then decides in the preemption test.
        while let Some(t) = self.next_zero(ctx, rq, cpu, curr) {
            if Self::zero_instant(ctx, t) > ctx.now {
                break;
            }
            let l = progress::laxity_counted(ctx, t);
            self.set_key(ctx, rq, t, l);
        }
        false
    }

    fn check(&self, ctx: &Ctx) -> Result<(), String> {
        for (rq, tree) in self.waiting_set.iter().enumerate() {
            for (_, _, t) in tree.iter() {
                if ctx.task(t).rq != rq || ctx.task(t).on_cpu.is_some() || self.tasks[t].running {
                    return Err(format!(
                        "task {t} waits on run queue {rq} but is on queue {} (on CPU {:?})",
                        ctx.task(t).rq,
                        ctx.task(t).on_cpu
                    ));
                }
            }
        }
        Ok(())
    }

    fn global_first_preempted(
        &self,
        ctx: &Ctx,
        assign: &[Option<TaskId>],
        unsure: &[CpuId],
    ) -> Option<Option<CpuId>> {
        if self.per_cpu || self.members.nr_rqs() != 1 {
            return None;
        }
        let found = self.first_preempted(ctx, assign, unsure);
        if cfg!(debug_assertions) {
            // Every CPU asked in turn, as the engine would (its rule 4 steps not counted
            // twice).
            let steps = self.steps.get();
            let asked = (0..assign.len())
                .find(|&cpu| assign[cpu].is_some_and(|c| self.preempted_as_asked(ctx, cpu, c)));
            self.steps.set(steps);
            debug_assert_eq!(found, asked, "ILLF: the preemption scan and asking every CPU differ");
        }
        Some(found)
    }

    /// A task from another queue preempts `curr` at zero laxity (rule 3) or through
    /// Algorithm 2, which needs it small: with positive laxity and big (or rule 4 off)
    /// it preempts none, whatever runs (`find_later_cpu` asked every CPU for each push
    /// after the synchronous release of scale-10k under `linux`, 99 % of the run).
    fn preempts_none_remote(&self, ctx: &Ctx, t: TaskId) -> bool {
        if !self.per_cpu {
            return false;
        }
        let r_q = progress::remaining(ctx, t);
        let s_q = match ctx.task(t).job {
            Some(j) => j.deadline as i64 - ctx.now as i64 - r_q,
            None => i64::MAX,
        };
        debug_assert_eq!(s_q, progress::laxity(ctx, t));
        if s_q <= 0 {
            return false; // rule 3 may let it in
        }
        if !self.opts.rules[3] || r_q > s_q {
            return true; // Algorithm 2 needs Q small
        }
        // Q small: only a big K swaps; every running task not kept is small.
        if cfg!(debug_assertions) && !self.remaining_rises {
            for rq in 0..self.members.nr_rqs() {
                for &k in self.members.all(rq) {
                    debug_assert!(
                        self.maybe_big.tasks().contains(&k)
                            || progress::remaining(ctx, k) <= self.lax(k),
                        "ILLF: running task {k} is big but not kept"
                    );
                }
            }
        }
        // Queue steps (tests/work.rs: asking every CPU would count the CPUs).
        let kept = self.maybe_big.tasks();
        self.steps.set(self.steps.get() + kept.len() as u64);
        !self.remaining_rises
            && kept.iter().all(|&k| {
                !self.swaps(progress::remaining(ctx, k), self.lax(k), r_q, s_q)
            })
    }

    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        let rq = ctx.task(curr).rq;
        if self.tasks[cand].slot.is_some() && ctx.task(cand).rq == rq {
            return self.choose(ctx, rq, self.cpu_of(ctx, curr), Some(curr)) == Some(cand);
        }
        // A task arriving from elsewhere is an activation on curr's CPU. At zero laxity
        // (rule 3) it displaces only a task with more laxity, as push_rt_task moves a task
        // only to a CPU running something of lower priority: two zero-laxity tasks would
        // otherwise push each other round the CPUs without end within one instant.
        let s_q = progress::laxity(ctx, cand);
        (s_q <= 0 && s_q < progress::laxity(ctx, curr)) || self.swap_with(ctx, curr, cand, s_q)
    }
}

/// Its entries in the simulator: the registry policies this file's class runs
/// (`schedlab_model::registry`), and how each is built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Illf,
    build: |w| Ok(Box::new(Illf::new(w.scheduler.illf))),
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{ClassId, CpuState, DlEntity, Job, TaskState, TaskStats};
    use std::cell::Cell;
    use std::collections::VecDeque;

    const MS: u64 = 1_000_000;

    fn task(deadline_ms: u64, remaining_ms: u64) -> TaskState {
        TaskState {
            class: ClassId::Dl,
            rt_key: 0,
            rel_deadline: deadline_ms * MS,
            period: deadline_ms * MS,
            round_robin: false,
            allowed: vec![true],
            nr_allowed: 1,
            allowed_everywhere: false,
            job: Some(Job {
                seq: 0,
                release: 0,
                deadline: deadline_ms * MS,
                exec: remaining_ms * MS,
                remaining: remaining_ms * MS,
            }),
            backlog: VecDeque::new(),
            runnable: true,
            on_cpu: None,
            rq: 0,
            job_last_cpu: None,
            last_cpu: 0,
            last_ran: 0,
            dl: DlEntity::default(),
            stats: TaskStats::default(),
            weight: 1024,
            kind: schedlab_model::TaskClass::Deadline,
            nice: 0,
            job_started: false,
        }
    }

    /// Algorithm 2 for K and Q given as (deadline, remaining) at t = 0, so S = D − R.
    fn swaps(k: (u64, u64), q: (u64, u64), strict: bool) -> bool {
        let tasks = vec![task(k.0, k.1), task(q.0, q.1)];
        let cpus = vec![CpuState::default()];
        let evals = Cell::new(0);
        let ctx = Ctx {
            now: 0,
            tasks: &tasks,
            cpus: &cpus,
            cbs: false,
            laxity_evals: &evals,
        };
        let mut p = Illf::new(IllfOptions {
            strict,
            ..IllfOptions::default()
        });
        p.init(1, 2);
        p.enqueue_task(&ctx, 0, 0, EnqueueReason::Wakeup);
        p.enqueue_task(&ctx, 0, 1, EnqueueReason::Wakeup);
        p.alg2(&ctx, 0, Some(1)) == 1
    }

    #[test]
    fn swap_rule_for_each_big_small_combination() {
        // K big (R 60 > S 40), Q small (R 5 <= S 55), R_k 60 > S_q 55, S_k 40 >= R_q 5: swap.
        assert!(swaps((100, 60), (60, 5), false));
        // K small (R 10 <= S 30): never swap.
        assert!(!swaps((40, 10), (60, 5), false));
        // K big, Q big (R 40 > S 20): never swap.
        assert!(!swaps((100, 60), (60, 40), false));
        // K small, Q big: never swap.
        assert!(!swaps((40, 10), (60, 40), false));
    }

    #[test]
    fn swap_rule_boundaries() {
        // R_k = S_q (60 = 60): the condition R_k > S_q fails under both readings.
        assert!(!swaps((100, 60), (65, 5), false));
        assert!(!swaps((100, 60), (65, 5), true));
        // R_q = S_k (40 = 40): Algorithm 2 (S_k >= R_q) swaps, the prose (R_q < S_k) does not.
        // K = (100, 60): S_k = 40; Q = (80, 40)? Q must be small: R 40 <= S 40 and S_q < R_k.
        assert!(swaps((100, 60), (80, 40), false));
        assert!(!swaps((100, 60), (80, 40), true));
    }
}
