//! `run`: RUN, Reduction to UNiprocessor (Regnier, Lima, Massa, Levin & Brandt, "RUN:
//! Optimal Multiprocessor Real-Time Scheduling via Reduction to Uniprocessor", RTSS 2011).
//! Optimal for periodic tasks with implicit deadlines and total utilisation at most m.
//!
//! Offline, the task set is reduced to a forest of servers ([`Tree`], in
//! `run_tree.rs`: PACK by worst-fit decreasing, DUAL, until unit servers; each unit server
//! is a proper subsystem on its own CPUs). Online, every server's job runs from one of its
//! release instants (the release of any job below it) to the next, with budget
//! `⌊rate × (next release − now)⌋` ns, replenished at each release; time 0 is a release
//! instant of every server, also above tasks first released later (`offset:`: such a task
//! is an idle job of its rate until then). A server consumes its budget while it
//! *executes* (a task leaf: while its task runs):
//! - a subsystem's root always executes;
//! - an executing packed server executes the child with the earliest deadline among those
//!   with budget left (the first in packing order among equals; none: it idles);
//! - a dual server executes exactly when its child does not, and conversely;
//! - a task runs while its leaf executes with budget left.
//!
//! The executing set changes only at releases, completions and when a consuming
//! server's budget runs out; the class arms a decision timer for the latter
//! ([`SchedClass::next_decision`], and [`SchedClass::next_decision_idle`] when no CPU runs
//! a task). A task runs on a CPU of its subsystem; a task whose leaf stops executing gives
//! up its CPU ([`SchedClass::must_yield`]).
//!
//! Whole nanoseconds. A task leaf's budget is its exact runtime. A server above it gets,
//! for its job on `[r, d)`, `G(d) − G(r)` ns, where `G(t)` is an integer version of its
//! exact cumulative supply `ρ·t` chosen consistently over the whole tree ([`Supply`]:
//! the leaves' `ρ·t` rounded so that the root's is exactly `t`, every server's the sum
//! or complement of its children's as the exact rates are). Each packed server then gets
//! exactly what its children's jobs ask for, its EDF meets their deadlines and never
//! idles while it executes, and exactly as many leaves execute as the subsystem has
//! CPUs: no job misses at exactly full load either (300 random sets at U = m, 210 up to
//! m, and 120 with offsets, 60 of them at U = m, with the invariant checker;
//! tests/servers.rs). Rounding each job's `ρ·(d − r)`
//! on its own (as before) lost up to 1 ns per server job: 213 of those 300 sets missed.
//! Two rules remain for budgets the conditions of [`Supply`] do not cover (a rate so
//! small that `ρ·gap` is under 1 ns): a leaf's budget is consumed only while its task
//! runs, and when selected tasks outnumber the CPUs the earliest deadlines run.
//!
//! Differences from SimSo 0.8.5's `RUN` (the cross-check): SimSo packs first-fit in task
//! order where the paper's evaluation packs worst-fit decreasing (as here); SimSo arms
//! its budget timer only when every executing server has budget left (an executing
//! packed server with none disables it until the next release or completion), where here
//! every budget exhaustion of a consuming task leaf or dual is a decision instant; SimSo
//! consumes a leaf's budget while it executes whether or not its job runs, and keeps a
//! leaf whose job completed before its WCET executing until its budget runs out, where
//! here a completed job gives up the rest of its leaf's budget (the parent's EDF moves on;
//! with WCET execution times both are the same).
//!
//! Decisions: the executing set is recomputed at every release, completion and budget
//! exhaustion; [`Run::decisions`] counts these recomputations (not in the results yet).

use super::run_tree::{Kind, Tree};
use crate::class::{EnqueueReason, SchedClass};
use crate::state::{CpuId, Ctx, RqId, TaskId};
use schedlab_model::Ns;
use std::cell::RefCell;

/// The state of the virtual schedule, advanced lazily to the engine's clock.
#[derive(Debug, Clone, Default)]
struct Virtual {
    /// Instant the budgets are accounted to.
    last: Ns,
    /// Per server: budget left in its current job (ns).
    budget: Vec<u64>,
    /// Per server: the deadline of its current job (`Ns::MAX`: none yet).
    deadline: Vec<Ns>,
    /// Per server: whether it executes now.
    executing: Vec<bool>,
    /// Per task: its leaf executes with budget left.
    selected: Vec<bool>,
    /// Per task: on a CPU (picked and not put back or stopped).
    running: Vec<bool>,
    /// Recomputations of the executing set.
    decisions: u64,
}

/// RUN: the reduction tree and its virtual schedule.
pub struct Run {
    tree: Tree,
    /// Per task: its leaf server, for the tasks RUN schedules.
    leaf_of: Vec<Option<usize>>,
    /// Per server: the task of a task leaf.
    task_of: Vec<Option<TaskId>>,
    /// Per server: the runtime of a task leaf's task.
    runtime: Vec<Ns>,
    /// Per server: the task leaves below it (itself for a leaf).
    below: Vec<Vec<usize>>,
    /// Per server: its subsystem.
    sub_of: Vec<usize>,
    /// Per CPU: its subsystem.
    cpu_sub: Vec<usize>,
    /// The whole-ns supply functions ([`Supply`]).
    supply: Supply,
    /// Per task: waiting in this class's queue.
    queued: Vec<bool>,
    v: RefCell<Virtual>,
}

impl Run {
    /// RUN for the tasks `tasks[i] = (task id, name, runtime, period)` on `cpus` CPUs.
    /// Errors as [`Tree::build`].
    /// Tasks may carry a first-release offset with [`Run::with_offsets`] (here: 0).
    pub fn new(tasks: &[(TaskId, String, u64, u64)], cpus: usize) -> Result<Run, String> {
        let offsets = vec![0; tasks.len()];
        Run::with_offsets(tasks, &offsets, cpus)
    }

    /// [`Run::new`] with each task's first release at `offsets[i]`.
    pub fn with_offsets(
        tasks: &[(TaskId, String, u64, u64)],
        offsets: &[Ns],
        cpus: usize,
    ) -> Result<Run, String> {
        let list: Vec<(String, u64, u64)> = tasks.iter().map(|t| (t.1.clone(), t.2, t.3)).collect();
        let tree = Tree::build(&list, cpus)?;
        let n = tree.servers.len();
        let nr_tasks = tasks.iter().map(|t| t.0 + 1).max().unwrap_or(0);
        let mut leaf_of = vec![None; nr_tasks];
        let mut task_of = vec![None; n];
        let mut runtime = vec![0; n];
        let mut below = vec![Vec::new(); n];
        let mut sub_of = vec![0; n];
        for (s, srv) in tree.servers.iter().enumerate() {
            if let Kind::Task(i) = srv.kind {
                leaf_of[tasks[i].0] = Some(s);
                task_of[s] = Some(tasks[i].0);
                runtime[s] = tasks[i].2;
                let mut a = Some(s);
                while let Some(x) = a {
                    below[x].push(s);
                    a = tree.servers[x].parent;
                }
            }
        }
        let mut cpu_sub = vec![0; cpus];
        for (k, sub) in tree.subsystems.iter().enumerate() {
            let mut stack = vec![sub.root];
            while let Some(x) = stack.pop() {
                sub_of[x] = k;
                match &tree.servers[x].kind {
                    Kind::Dual(c) => stack.push(*c),
                    Kind::Pack(ch) => stack.extend(ch),
                    _ => {}
                }
            }
            cpu_sub[sub.first_cpu..sub.first_cpu + sub.cpus].fill(k);
        }
        let supply = Supply::new(&tree, &sub_of, offsets);
        let v = Virtual {
            last: 0,
            budget: vec![0; n],
            deadline: vec![Ns::MAX; n],
            executing: vec![false; n],
            selected: vec![false; nr_tasks],
            running: vec![false; nr_tasks],
            decisions: 0,
        };
        let run = Run {
            tree,
            leaf_of,
            task_of,
            runtime,
            below,
            sub_of,
            cpu_sub,
            supply,
            queued: Vec::new(),
            v: RefCell::new(v),
        };
        // Time 0 is a release instant of every server, whether or not a task below it is
        // released then: RUN's servers' jobs tile time from 0, each asking its rate's
        // share of every span, so that at every instant a packed server's children's jobs
        // together ask for all its supply (the root's: all the time). A task not released yet is an idle job of its rate until its
        // first release (its leaf has no budget, like an idle leaf: its parent idles for
        // its share), and the servers above it still run jobs from 0. Without these
        // jobs, a dual above only tasks with offsets had no job before their first
        // releases, its packed parent gave that share to its siblings ahead of their
        // supply, then ran out of jobs while it executed: more leaves executed than the
        // subsystem has CPUs, and a task selected but not running missed (t3 of the
        // cross-check set in tests/servers.rs).
        {
            let mut v = run.v.borrow_mut();
            for s in 0..n {
                if run.task_of[s].is_none() && !run.below[s].is_empty() {
                    run.start_job(&mut v, s, 0);
                }
            }
            run.reselect(&mut v);
        }
        Ok(run)
    }

    /// The reduction tree.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// Recomputations of the executing set so far.
    pub fn decisions(&self) -> u64 {
        self.v.borrow().decisions
    }

    /// Budget left of server `s` as of the last instant the class was asked about.
    pub fn budget(&self, s: usize) -> u64 {
        self.v.borrow().budget[s]
    }

    /// Whether task `t`'s leaf executes with budget left (as of the last instant seen).
    pub fn selected(&self, t: TaskId) -> bool {
        self.v.borrow().selected.get(t).copied().unwrap_or(false)
    }

    /// Recompute which servers execute, from every subsystem's root.
    fn reselect(&self, v: &mut Virtual) {
        v.decisions += 1;
        v.executing.iter_mut().for_each(|e| *e = false);
        v.selected.iter_mut().for_each(|e| *e = false);
        for sub in &self.tree.subsystems {
            self.walk(v, sub.root, true);
        }
    }

    fn walk(&self, v: &mut Virtual, s: usize, exec: bool) {
        v.executing[s] = exec;
        match &self.tree.servers[s].kind {
            Kind::Task(_) => {
                if let Some(t) = self.task_of[s].filter(|_| exec && v.budget[s] > 0) {
                    v.selected[t] = true;
                }
            }
            Kind::Idle => {}
            Kind::Dual(c) => self.walk(v, *c, !exec),
            Kind::Pack(children) => {
                let mut pick: Option<usize> = None;
                if exec {
                    for &c in children {
                        if v.budget[c] > 0 && pick.is_none_or(|p| v.deadline[c] < v.deadline[p]) {
                            pick = Some(c);
                        }
                    }
                }
                for &c in children {
                    self.walk(v, c, exec && pick == Some(c));
                }
            }
        }
    }

    /// Start server `s`'s job at its release instant `now`: to its next release instant,
    /// the earliest deadline below it or the first release of a task below it not
    /// released yet (with offsets), so that a server's jobs run between consecutive
    /// release instants and none is replaced before its deadline. A task leaf's budget is
    /// its task's runtime (exact even when rates are rounded), a server's its supply over
    /// the job ([`Supply`]).
    fn start_job(&self, v: &mut Virtual, s: usize, now: Ns) {
        let d = self.below[s]
            .iter()
            .map(|&l| match v.deadline[l] {
                Ns::MAX => self.supply.first_release(l),
                d => d,
            })
            .filter(|&d| d > now)
            .min()
            .unwrap_or(Ns::MAX);
        v.deadline[s] = d;
        v.budget[s] = if d == Ns::MAX {
            0
        } else if self.task_of[s].is_some() {
            self.runtime[s]
        } else {
            let sub = self.sub_of[s];
            let (g0, g1) = (self.supply.at(s, sub, now), self.supply.at(s, sub, d));
            (g1 - g0).clamp(0, (d - now) as i128) as u64
        };
    }

    /// Whether server `s`'s budget running out changes the executing set: task leaves and
    /// duals (the children of packed servers); a packed server's own budget does not.
    fn decides(&self, s: usize) -> bool {
        matches!(self.tree.servers[s].kind, Kind::Task(_) | Kind::Dual(_))
    }

    /// Whether server `s` consumes budget now: it executes, and for a task leaf, its task
    /// runs (a selected task waiting for a CPU keeps its budget).
    fn consumes(&self, v: &Virtual, s: usize) -> bool {
        v.executing[s] && self.task_of[s].is_none_or(|t| v.running[t])
    }

    /// The smallest budget left among consuming servers whose exhaustion decides.
    fn next_exhaustion(&self, v: &Virtual) -> Option<u64> {
        (0..self.tree.servers.len())
            .filter(|&s| v.budget[s] > 0 && self.decides(s) && self.consumes(v, s))
            .map(|s| v.budget[s])
            .min()
    }

    /// Account the budgets up to `now`, recomputing the executing set at each exhaustion.
    fn advance(&self, now: Ns) {
        let mut v = self.v.borrow_mut();
        while v.last < now {
            let left = now - v.last;
            let step = self.next_exhaustion(&v).map_or(left, |b| b.min(left));
            let mut out = false;
            for s in 0..self.tree.servers.len() {
                if self.consumes(&v, s) {
                    let b = v.budget[s].saturating_sub(step);
                    out |= b == 0 && v.budget[s] > 0 && self.decides(s);
                    v.budget[s] = b;
                }
            }
            v.last += step;
            if out {
                self.reselect(&mut v);
            }
        }
    }

    fn sub_of_task(&self, t: TaskId) -> Option<usize> {
        self.leaf_of
            .get(t)
            .copied()
            .flatten()
            .map(|l| self.sub_of[l])
    }
}

impl SchedClass for Run {
    fn name(&self) -> &'static str {
        "run"
    }

    fn init(&mut self, _nr_rqs: usize, nr_tasks: usize) {
        self.queued = vec![false; nr_tasks];
        self.leaf_of.resize(nr_tasks, None);
        self.v.get_mut().selected.resize(nr_tasks, false);
        self.v.get_mut().running.resize(nr_tasks, false);
    }

    fn job_released(&mut self, ctx: &Ctx, t: TaskId) {
        self.advance(ctx.now);
        let Some(leaf) = self.leaf_of.get(t).copied().flatten() else {
            return;
        };
        let now = ctx.now;
        let mut v = self.v.borrow_mut();
        v.deadline[leaf] = now.saturating_add(ctx.task(t).period);
        // The release is a release instant of every server above the leaf: each starts a
        // job lasting to its next deadline (the earliest of the jobs below it).
        let mut a = Some(leaf);
        while let Some(s) = a {
            self.start_job(&mut v, s, now);
            a = self.tree.servers[s].parent;
        }
        self.reselect(&mut v);
    }

    fn enqueue_task(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId, _why: EnqueueReason) {
        self.advance(ctx.now);
        self.queued[t] = true;
    }

    fn dequeue_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.queued[t] = false;
    }

    fn peek_next_task(&self, ctx: &Ctx, _rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.advance(ctx.now);
        let sub = *self.cpu_sub.get(cpu)?;
        let v = self.v.borrow();
        (0..self.queued.len())
            .filter(|&t| {
                self.queued[t]
                    && v.selected[t]
                    && self.sub_of_task(t) == Some(sub)
                    && ctx.allowed(t, cpu)
            })
            .min_by_key(|&t| ctx.sched_deadline(t))
    }

    fn pick_next_task(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        let t = self.peek_next_task(ctx, rq, cpu)?;
        self.queued[t] = false;
        self.v.get_mut().running[t] = true;
        Some(t)
    }

    fn put_prev_task(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.advance(ctx.now);
        self.queued[t] = true;
        self.v.get_mut().running[t] = false;
    }

    fn task_stopped(&mut self, ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.advance(ctx.now);
        self.v.get_mut().running[t] = false;
    }

    fn job_completed(&mut self, ctx: &Ctx, t: TaskId) {
        self.advance(ctx.now);
        // A job done before its WCET gives up the rest of its leaf's budget: the leaf
        // has nothing left to serve until the task's next release.
        let Some(leaf) = self.leaf_of.get(t).copied().flatten() else {
            return;
        };
        let mut v = self.v.borrow_mut();
        if v.budget[leaf] > 0 {
            v.budget[leaf] = 0;
            self.reselect(&mut v);
        }
    }

    fn release_reselects(&self) -> bool {
        true
    }

    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        self.advance(ctx.now);
        let v = self.v.borrow();
        // Selected tasks outnumber their subsystem's CPUs only for the few ns the
        // rounding of server budgets leaves: the earliest deadlines run then.
        v.selected[cand]
            && (!v.selected[curr] || ctx.sched_deadline(cand) < ctx.sched_deadline(curr))
    }

    fn must_yield(&self, ctx: &Ctx, t: TaskId) -> bool {
        self.advance(ctx.now);
        !self.v.borrow().selected[t]
    }

    fn uses_tick(&self, _ctx: &Ctx) -> bool {
        false
    }

    fn uses_decision_timer(&self) -> bool {
        true
    }

    fn next_decision(&self, ctx: &Ctx, _rq: RqId, _cpu: CpuId, _curr: TaskId) -> Option<Ns> {
        self.advance(ctx.now);
        let b = self.next_exhaustion(&self.v.borrow())?;
        Some(ctx.now + b)
    }

    fn next_decision_idle(&self, ctx: &Ctx, _rq: RqId, _cpu: CpuId) -> Option<Ns> {
        self.advance(ctx.now);
        let b = self.next_exhaustion(&self.v.borrow())?;
        Some(ctx.now + b)
    }

    fn decision_due(&mut self, ctx: &Ctx, _rq: RqId, _cpu: CpuId, curr: TaskId) -> bool {
        self.advance(ctx.now);
        !self.v.get_mut().selected[curr]
    }

    fn check(&self, ctx: &Ctx) -> Result<(), String> {
        for (t, &q) in self.queued.iter().enumerate() {
            if q && ctx.task(t).on_cpu.is_some() {
                return Err(format!("task {t} is queued while it runs"));
            }
        }
        for (cpu, c) in ctx.cpus.iter().enumerate() {
            let Some(t) = c.curr.filter(|&t| ctx.task(t).runnable) else {
                continue;
            };
            if let Some(sub) = self.sub_of_task(t) {
                if self.cpu_sub[cpu] != sub {
                    return Err(format!(
                        "task {t} runs on cpu {cpu}, outside its subsystem {sub}"
                    ));
                }
            }
        }
        Ok(())
    }

    /// The reduction tree: every server (`id` = its index, as in the labels) with its
    /// kind, exact rate, children and level (task and idle leaves 0, a packed server
    /// its children's, a dual one more than its child), the subsystems with their CPUs,
    /// and the tree's display form as `text`.
    fn report(&self, _ctx: &Ctx, _names: &[String]) -> Option<serde_json::Value> {
        fn level(tree: &Tree, s: usize) -> usize {
            match &tree.servers[s].kind {
                Kind::Task(_) | Kind::Idle => 0,
                Kind::Pack(ch) => ch.iter().map(|&c| level(tree, c)).max().unwrap_or(0),
                Kind::Dual(c) => level(tree, *c) + 1,
            }
        }
        let tree = &self.tree;
        let servers: Vec<serde_json::Value> = (0..tree.servers.len())
            .map(|s| {
                let srv = &tree.servers[s];
                let (kind, children, task) = match &srv.kind {
                    Kind::Task(i) => ("task", Vec::new(), Some(tree.names[*i].clone())),
                    Kind::Idle => ("idle", Vec::new(), None),
                    Kind::Pack(ch) => ("pack", ch.clone(), None),
                    Kind::Dual(c) => ("dual", vec![*c], None),
                };
                serde_json::json!({
                    "id": s,
                    "label": tree.label(s),
                    "kind": kind,
                    "rate": srv.rate.to_string(),
                    "utilisation": srv.rate.num as f64 / srv.rate.den as f64,
                    "level": level(tree, s),
                    "parent": srv.parent,
                    "children": children,
                    "task": task,
                })
            })
            .collect();
        let subsystems: Vec<serde_json::Value> = tree
            .subsystems
            .iter()
            .map(|sub| {
                let cpus: Vec<usize> = (sub.first_cpu..sub.first_cpu + sub.cpus).collect();
                serde_json::json!({ "root": sub.root, "cpus": cpus })
            })
            .collect();
        Some(serde_json::json!({
            "kind": "run-reduction-tree",
            "servers": servers,
            "subsystems": subsystems,
            "text": tree.to_string(),
        }))
    }
}

/// An instant and every leaf's `G` there (one subsystem).
type LeafValues = (Ns, Vec<i128>);

/// Whole-ns supply functions: per server `X` and instant `t`, `G(X, t)`, the ns its jobs
/// get over `[0, t)`; a job on `[r, d)` gets `G(X, d) − G(X, r)`. Each leaf `L` (task or
/// idle) gets `G(L, t)`, `ρ_L·t − frac(ρ_L·offset)` (whole at the task's releases)
/// rounded down or up; above, as the exact
/// rates: a packed server's `G` is its children's sum, a dual's `t − G(child)`, so `G(X,
/// t) = a_X·t + Σ_L s_XL·G(L, t)` (`s_XL` = ±1). At every instant the leaves of a
/// subsystem are rounded (down, then up the largest fractional parts of the side that
/// needs it, Hamilton's rule) so that the root's `G` is exactly `t`; idle leaves are
/// only rounded down (an idle leaf's rate can be a few 1e-8, and rounding it up at one
/// instant and down at the next would make its `G` fall).
///
/// Why this makes the integer schedule exact: every server then gets from its parent
/// exactly what its children's jobs ask for (`G` of a packed server is their sum, a
/// dual's and its child's add up to the span, the root's supply is all the time), so
/// each packed server's EDF meets its children's deadlines (over any `[t1, t2]` between
/// its release instants, its children's jobs inside ask for at most `Σ G(c, t2) −
/// G(c, t1)`, its supply) and idles while it executes only for its idle leaves' share
/// (its children's current jobs ask for at least the rest of its supply up to its next
/// release), so exactly as many task leaves execute as the subsystem has CPUs, less its
/// idle leaves'. A task leaf's own job gets `G(L, r + T) − G(L, r)
/// = C` since `ρ_L·t − frac(ρ_L·offset)` is whole at its releases (with offsets the
/// root's `G` is `t` less a constant). What this needs: every `G`
/// non-decreasing and a dual's child's rising no faster than time, which the rounding
/// (each `G(L, ·)` within 1 ns of exact) gives when every server's rate and co-rate
/// times the gap between release instants exceed its leaves' count in ns; budgets are
/// clamped to `[0, span]` otherwise.
#[derive(Debug, Clone, Default)]
struct Supply {
    /// Per subsystem: its leaves (server index) and their sign at the root.
    leaves: Vec<Vec<(usize, i128)>>,
    /// Per subsystem: `a_root`.
    root_a: Vec<i128>,
    /// Per server: `a_X` and, per leaf of its subsystem (same order), `s_XL` (0: not below).
    expr: Vec<(i128, Vec<i128>)>,
    /// Per leaf server: rate numerator, denominator and offset.
    quota: Vec<(u128, u128, Ns)>,
    /// Per server: an idle leaf (rounded down, never up: see [`Supply::leaves_at`]).
    idle: Vec<bool>,
    /// The last instants' leaf values, per subsystem.
    memo: RefCell<Vec<Vec<LeafValues>>>,
}

impl Supply {
    fn new(tree: &Tree, sub_of: &[usize], offsets: &[Ns]) -> Supply {
        let n = tree.servers.len();
        let subs = tree.subsystems.len();
        let mut leaves = vec![Vec::new(); subs];
        let mut pos = vec![0; n];
        let mut quota = vec![(0, 1, 0); n];
        let idle: Vec<bool> = tree.servers.iter().map(|x| x.kind == Kind::Idle).collect();
        for (x, srv) in tree.servers.iter().enumerate() {
            let off = match srv.kind {
                Kind::Task(i) => offsets.get(i).copied().unwrap_or(0),
                Kind::Idle => 0,
                _ => continue,
            };
            if subs == 0 {
                continue;
            }
            pos[x] = leaves[sub_of[x]].len();
            leaves[sub_of[x]].push((x, 0));
            quota[x] = (srv.rate.num, srv.rate.den, off);
        }
        // Depth first from each root (idle leaves come after their packed server in
        // `servers`, so index order is not children first).
        fn build(
            tree: &Tree,
            x: usize,
            width: usize,
            pos: &[usize],
            expr: &mut [(i128, Vec<i128>)],
        ) {
            let e = match &tree.servers[x].kind {
                Kind::Task(_) | Kind::Idle => {
                    let mut v = vec![0; width];
                    v[pos[x]] = 1;
                    (0, v)
                }
                Kind::Pack(ch) => {
                    let mut acc = (0, vec![0; width]);
                    for &c in ch {
                        build(tree, c, width, pos, expr);
                        acc.0 += expr[c].0;
                        acc.1.iter_mut().zip(&expr[c].1).for_each(|(a, b)| *a += b);
                    }
                    acc
                }
                Kind::Dual(c) => {
                    build(tree, *c, width, pos, expr);
                    (1 - expr[*c].0, expr[*c].1.iter().map(|b| -b).collect())
                }
            };
            expr[x] = e;
        }
        let mut expr: Vec<(i128, Vec<i128>)> = vec![(0, Vec::new()); n];
        for (k, sub) in tree.subsystems.iter().enumerate() {
            build(tree, sub.root, leaves[k].len(), &pos, &mut expr);
        }
        let mut root_a = vec![0; subs];
        for (k, sub) in tree.subsystems.iter().enumerate() {
            root_a[k] = expr[sub.root].0;
            for (i, l) in leaves[k].iter_mut().enumerate() {
                l.1 = expr[sub.root].1[i];
            }
        }
        Supply {
            leaves,
            root_a,
            expr,
            quota,
            idle,
            memo: RefCell::new(vec![Vec::new(); subs]),
        }
    }

    /// `G(L, t)` for every leaf of subsystem `k`, the root's `G` exactly `t`.
    fn leaves_at(&self, k: usize, t: Ns) -> Vec<i128> {
        if let Some(v) = self.memo.borrow()[k].iter().find(|m| m.0 == t) {
            return v.1.clone();
        }
        let leaves = &self.leaves[k];
        // ρ·(t − offset) = whole + rem/den per leaf.
        let mut g = Vec::with_capacity(leaves.len());
        let mut frac = Vec::with_capacity(leaves.len());
        // ρ·t less the fractional part of ρ·offset: whole at the leaf's releases.
        let mut shift = 0i128; // Σ s_L·frac(ρ_L·offset_L), in units of 1/den of each
        let mut shift_f = 0f64;
        for &(x, sign) in leaves {
            let (num, den, off) = self.quota[x];
            let (whole, rem) = Self::times(num, den, t);
            let (_, rem_off) = Self::times(num, den, off);
            let (w, r) = if rem >= rem_off {
                (whole as i128, rem - rem_off)
            } else {
                (whole as i128 - 1, rem + den - rem_off)
            };
            g.push(w);
            frac.push((r, den));
            shift_f += sign as f64 * rem_off as f64 / den as f64;
        }
        shift += shift_f.round() as i128;
        // The root's G is a·t + Σ s_L·G(L, t); it must be t (less a constant with offsets).
        let want = t as i128 - self.root_a[k] * t as i128 - shift;
        let have: i128 = g.iter().zip(leaves).map(|(v, l)| v * l.1).sum();
        let need = want - have;
        let sign = need.signum();
        let mut cand: Vec<usize> = (0..leaves.len())
            .filter(|&i| frac[i].0 > 0 && leaves[i].1 == sign && !self.idle[leaves[i].0])
            .collect();
        // Largest fractional part first (a/b > c/d ⇔ a·d > c·b), ties in leaf order.
        cand.sort_by(|&a, &b| {
            let (x, y) = (frac[a], frac[b]);
            let by = match (y.0.checked_mul(x.1), x.0.checked_mul(y.1)) {
                (Some(p), Some(q)) => p.cmp(&q),
                _ => (y.0 as f64 / y.1 as f64).total_cmp(&(x.0 as f64 / x.1 as f64)),
            };
            by.then(a.cmp(&b))
        });
        for &i in cand.iter().take(need.unsigned_abs() as usize) {
            g[i] += 1;
        }
        let mut memo = self.memo.borrow_mut();
        if memo[k].len() >= 4 {
            memo[k].remove(0);
        }
        memo[k].push((t, g.clone()));
        g
    }

    /// The first release of leaf `x`'s task (its offset).
    fn first_release(&self, x: usize) -> Ns {
        self.quota.get(x).map_or(Ns::MAX, |q| q.2)
    }

    /// `num·t / den` as (whole, remainder in 1/den).
    fn times(num: u128, den: u128, t: Ns) -> (u128, u128) {
        let (q, r) = (t as u128 / den, t as u128 % den);
        // r·num overflows only for denominators past 2^64 (never with the 2^-60 rounded
        // rates): then its floor in floating point and no fraction.
        match r.checked_mul(num) {
            Some(p) => (q * num + p / den, p % den),
            None => (q * num + ((r as f64) * (num as f64) / (den as f64)) as u128, 0),
        }
    }

    /// `G(X, t)` of server `x` in subsystem `k`.
    fn at(&self, x: usize, k: usize, t: Ns) -> i128 {
        let g = self.leaves_at(k, t);
        let (a, s) = &self.expr[x];
        a * t as i128 + s.iter().zip(&g).map(|(s, v)| s * v).sum::<i128>()
    }
}

/// RUN for the workload's deadline-class tasks, or why it cannot schedule them: RUN is a
/// global scheduler for periodic tasks with implicit deadlines, no affinities, and total
/// utilisation at most the CPUs.
pub fn for_workload(w: &schedlab_model::Workload) -> Result<Run, crate::SimError> {
    use schedlab_model::{Placement, Release, TaskClass};
    let unsupported = |m: String| crate::SimError::Unsupported(m);
    if w.scheduler.placement != Placement::Global {
        return Err(unsupported(
            "run is a global scheduler: use placement global".into(),
        ));
    }
    let mut tasks = Vec::new();
    let mut offsets = Vec::new();
    for (i, t) in w.tasks.iter().enumerate() {
        if t.class != TaskClass::Deadline {
            continue;
        }
        let why = match (t.period, &t.release) {
            (None, _) => Some("has no period"),
            (_, Release::Sporadic { .. }) => Some("is sporadic (RUN needs periodic releases)"),
            (Some(p), _) if t.deadline != p => {
                Some("has a deadline other than its period (RUN needs implicit deadlines)")
            }
            _ if t.affinity.is_some() => Some("has an affinity (RUN places tasks itself)"),
            _ => None,
        };
        if let Some(why) = why {
            return Err(unsupported(format!("run: task `{}` {why}", t.name)));
        }
        tasks.push((i, t.name.clone(), t.runtime, t.period.unwrap_or(0)));
        offsets.push(t.offset);
    }
    Run::with_offsets(&tasks, &offsets, w.platform.cpus)
        .map_err(|e| unsupported(format!("run: {e}")))
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Run,
    build: |w| Ok(Box::new(crate::policy::run::for_workload(w)?)),
}];
