//! `ekg`: EKG, "EDF with task splitting and k processors in a group" (Andersson & Tovar,
//! "Multiprocessor Scheduling with Few Preemptions", RTCSA 2006). A semi-partitioned
//! scheduler with a parameter k (1 ≤ k ≤ m, option `scheduler.ekg.k`); with k = m it is
//! optimal for implicit-deadline periodic tasks (U ≤ m), with k < m its utilisation bound
//! is k/(k+1).
//!
//! # Assignment ([`assign`])
//!
//! SEP = k/(k+1) if k < m, else 1. A task is *heavy* when its utilisation exceeds SEP:
//! each heavy task gets a CPU of its own (CPUs 0, 1, ...). The other CPUs form groups of
//! k consecutive CPUs. The light tasks are placed in workload order by next fit: a task
//! goes to the current CPU p while p's utilisation stays ≤ 1 (a CPU filled to exactly 1
//! is closed); one that does not fit is *split* between p and p + 1 when both are in the
//! same group (p gets exactly its spare capacity 1 − U[p], p + 1 the rest), and goes
//! whole to p + 1 when p is the last CPU of its group. So every group has at most k − 1
//! split tasks, each on two consecutive CPUs.
//!
//! # Dispatching
//!
//! Time is cut, per group, into *slots* between consecutive deadlines of the group's
//! jobs (a slot begins when the previous one ends or at a release whose deadline comes
//! first). In a slot `[t0, tf)` the task split between p and p + 1 runs on p + 1 at the
//! start of the slot, `[t0, t0 + lo)`, and on p at its end, `[tf − hi, tf)`, with
//! `lo ≈ (u − (1 − U[p]))·(tf − t0)` and `hi ≈ (1 − U[p])·(tf − t0)`: the two pieces
//! never overlap (u ≤ 1). Elsewhere each CPU runs EDF over its own (non-split) tasks;
//! inside a window whose split job has no work left the CPU runs its EDF tasks too.
//! Decisions are per CPU; a split job never runs outside its windows.
//!
//! # Windows in integer time
//!
//! Rounding `hi` and `lo` per slot would add up (RUN's misses by a few ns at U = m come
//! from that), so each window is the difference of cumulative targets, functions of the
//! absolute time t ([`Ekg`]'s `targets`): along a chain of CPUs joined by split tasks,
//! every CPU's own tasks and every split task get their fluid work by t (u·t) rounded to
//! a neighbouring integer so that the chain's capacity is used exactly (largest
//! remainders; the last CPU's own tasks rounded up), and a split task's piece on p is
//! what p's own tasks and p's incoming piece leave. A window is the target at the slot's
//! end minus what was handed out before. So every entity stays within 1 ns of its fluid
//! schedule and is exact where that is whole: a split job gets exactly its WCET between
//! its release and its deadline, and a CPU's own tasks exactly their demand at the
//! common multiples of their periods; with U = m every deadline of the property test
//! (tests/ekg.rs) is met to the ns.
//!
//! # Differences from SimSo 0.8.5's `EKG` (the paper is followed here)
//!
//! - SimSo counts a task with utilisation *equal* to SEP as heavy (`wcet >= sep·period`);
//!   the paper's heavy tasks exceed SEP. With k = m (SEP = 1) SimSo gives each task of
//!   utilisation 1 a CPU of its own; here it is placed by next fit like any other.
//! - SimSo swaps each CPU's two split tasks at every slot (the task split between p and
//!   p + 1 runs at the start of the slot on p and at its end on p + 1 in the 1st, 3rd, ...
//!   slot); here the piece on p is always at the end, as in the paper.
//! - SimSo rounds the windows per slot (⌈·⌉ cycles for the first, ⌊·⌋ for the second);
//!   here they follow the cumulative targets above. It sums utilisations as fractions
//!   of its float milliseconds, so a CPU that its tasks fill to exactly 1 may split its
//!   last task with a piece of a few ns (here f64 with a 10⁻⁹ slack keeps it whole).
//! - SimSo declares `K` with default 0, which would make every task heavy (SEP = 0; given
//!   no `K` at all it takes m), and a set that overflows the last CPU raises an
//!   IndexError; here `k` absent (or 0) means m and a task EKG cannot place goes to the
//!   last CPU, where EDF runs it overloaded (its misses show in the counts).
//!
//! The paper's model has implicit deadlines: with deadlines below the periods a split
//! job still gets u·(d − r) ≤ C by its deadline, and may miss.

use super::fluid::{self, Plan};
use crate::state::{CpuId, Ctx, TaskId};
use schedlab_model::{Ns, Policy, TaskClass, Workload};

/// Registry name.
pub const NAME: &str = "ekg";

/// Slack in the next-fit utilisation comparisons (f64 sums of exact fractions).
const EPS: f64 = 1e-9;

/// Where a task runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Home {
    /// On one CPU, under that CPU's EDF (heavy tasks, light tasks that fit, and tasks
    /// of other classes, which this policy does not plan).
    Cpu(CpuId),
    /// Split between `hi` (its piece at the end of each slot) and `hi + 1` (its piece at
    /// the start).
    Split {
        /// The CPU it was split from.
        hi: CpuId,
    },
}

/// EKG's assignment of a workload's tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The parameter k actually used (1..=m).
    pub k: usize,
    /// Per task (workload order): where it runs.
    pub homes: Vec<Home>,
    /// Heavy tasks (each alone on its CPU), in workload order.
    pub heavy: Vec<TaskId>,
    /// The groups: each a range of CPUs `(first, last)` inclusive.
    pub groups: Vec<(CpuId, CpuId)>,
}

/// (C, T) of a task EKG plans, or None (other classes, no period).
fn rate(t: &schedlab_model::Task) -> Option<(Ns, Ns)> {
    match t.period {
        Some(p) if t.class == TaskClass::Deadline && p > 0 => Some((t.runtime, p)),
        _ => None,
    }
}

/// EKG's assignment of `w`'s tasks with parameter `k` (1..=m).
pub fn assign(w: &Workload, k: usize) -> Assignment {
    let m = w.platform.cpus.max(1);
    let k = k.clamp(1, m);
    let sep = if k < m { k as f64 / (k + 1) as f64 } else { 1.0 };
    let util = |t: &schedlab_model::Task| rate(t).map(|(c, p)| c as f64 / p as f64);
    let mut homes = vec![Home::Cpu(0); w.tasks.len()];
    let mut heavy = Vec::new();
    for (i, t) in w.tasks.iter().enumerate() {
        if util(t).is_some_and(|u| u > sep) {
            homes[i] = Home::Cpu(heavy.len().min(m - 1));
            heavy.push(i);
        }
    }
    let first = heavy.len().min(m);
    let groups: Vec<(CpuId, CpuId)> = (first..m)
        .step_by(k)
        .map(|g| (g, (g + k - 1).min(m - 1)))
        .collect();
    let last_of_group = |p: CpuId| (p + 1 - first).is_multiple_of(k) || p + 1 == m;
    let mut load = vec![0.0f64; m];
    let mut p = first;
    for (i, t) in w.tasks.iter().enumerate() {
        let Some(u) = util(t) else {
            continue; // not planned: CPU 0's list, where only its own class runs it
        };
        if u > sep {
            continue;
        }
        if p >= m {
            homes[i] = Home::Cpu(m - 1); // EKG cannot place it: the last CPU, overloaded
            continue;
        }
        if load[p] + u <= 1.0 + EPS {
            homes[i] = Home::Cpu(p);
            load[p] += u;
            if load[p] >= 1.0 - EPS {
                p += 1;
            }
        } else if last_of_group(p) {
            p += 1;
            homes[i] = Home::Cpu(p.min(m - 1));
            if p < m {
                load[p] = u;
            }
        } else {
            homes[i] = Home::Split { hi: p };
            load[p + 1] = u - (1.0 - load[p]);
            load[p] = 1.0;
            p += 1;
        }
    }
    Assignment {
        k,
        homes,
        heavy,
        groups,
    }
}

/// The fluid work `Σ C_i·t / T_i` of `terms` by `t`: its whole part and its fractional
/// part (as f64, for ordering; `None` when exactly 0). The fractional parts are summed
/// exactly while their common denominator fits in u128, else in f64 with a margin far
/// below 1 ns.
fn fluid_work(terms: &[(Ns, Ns)], t: Ns) -> (u128, Option<f64>) {
    let mut whole: u128 = 0;
    let mut fracs: Vec<(u128, u128)> = Vec::new();
    for &(c, p) in terms {
        let prod = c as u128 * t as u128;
        let p = p.max(1) as u128;
        whole += prod / p;
        if !prod.is_multiple_of(p) {
            fracs.push((prod % p, p));
        }
    }
    // Exact: num/den, reduced at every step.
    let exact = fracs.iter().try_fold((0u128, 1u128), |(num, den), &(r, p)| {
        let l = den.checked_mul(p / gcd(den, p))?;
        let s = num.checked_mul(l / den)?.checked_add(r.checked_mul(l / p)?)?;
        let g = gcd(s, l).max(1);
        Some((s / g, l / g))
    });
    match exact {
        Some((num, den)) => {
            let frac = num % den;
            (
                whole + num / den,
                (frac != 0).then(|| frac as f64 / den as f64),
            )
        }
        None => {
            let f: f64 = fracs.iter().map(|&(r, p)| r as f64 / p as f64).sum();
            let extra = (f + 1e-9).floor().max(0.0);
            let frac = f - extra;
            (whole + extra as u128, (frac > 1e-9).then_some(frac))
        }
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A split task and its windows.
#[derive(Debug, Clone)]
struct Split {
    task: TaskId,
    /// The CPU it was split from (its end-of-slot piece); the start piece is on `hi + 1`.
    hi: CpuId,
    /// Its (C, T).
    rate: (Ns, Ns),
    /// Windows handed out before the current slot (start piece, end piece).
    given: (Ns, Ns),
    /// The current slot's windows: (start piece, end piece) lengths.
    win: (Ns, Ns),
}

/// One group's current slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    start: Ns,
    end: Ns,
}

/// EKG's plan (see the module's doc).
pub struct Ekg {
    asg: Assignment,
    /// Per CPU: its own planned tasks (EDF), its incoming and outgoing split (indices in
    /// `splits`), its group.
    own: Vec<Vec<TaskId>>,
    lo_in: Vec<Option<usize>>,
    hi_out: Vec<Option<usize>>,
    group_of: Vec<Option<usize>>,
    splits: Vec<Split>,
    /// Per CPU: the (C, T) of its own tasks.
    own_rates: Vec<Vec<(Ns, Ns)>>,
    /// Chains of splits: runs of splits on consecutive CPUs (indices in `splits`).
    chains: Vec<std::ops::Range<usize>>,
    /// Per group: its tasks (own tasks of its CPUs and its split tasks), its slot.
    group_tasks: Vec<Vec<TaskId>>,
    slots: Vec<Option<Slot>>,
    /// Per task: the deadline of its latest job seen (0: none yet).
    deadline: Vec<Ns>,
    next: Option<Ns>,
}

impl Ekg {
    /// The plan of assignment `asg` for `w`'s tasks.
    pub fn new(w: &Workload, asg: Assignment) -> Ekg {
        let m = w.platform.cpus.max(1);
        let mut own = vec![Vec::new(); m];
        let mut lo_in = vec![None; m];
        let mut hi_out = vec![None; m];
        let mut group_of = vec![None; m];
        for (g, &(a, b)) in asg.groups.iter().enumerate() {
            for c in group_of.iter_mut().take(b + 1).skip(a) {
                *c = Some(g);
            }
        }
        let mut group_tasks = vec![Vec::new(); asg.groups.len()];
        let mut splits: Vec<Split> = Vec::new();
        let mut own_rates: Vec<Vec<(Ns, Ns)>> = vec![Vec::new(); m];
        for (t, task) in w.tasks.iter().enumerate() {
            let Some(r) = rate(task) else { continue };
            match asg.homes[t] {
                Home::Cpu(c) => {
                    own[c].push(t);
                    own_rates[c].push(r);
                    if let Some(g) = group_of[c] {
                        group_tasks[g].push(t);
                    }
                }
                Home::Split { hi } => {
                    hi_out[hi] = Some(splits.len());
                    lo_in[hi + 1] = Some(splits.len());
                    splits.push(Split {
                        task: t,
                        hi,
                        rate: r,
                        given: (0, 0),
                        win: (0, 0),
                    });
                    if let Some(g) = group_of[hi] {
                        group_tasks[g].push(t);
                    }
                }
            }
        }
        // Next fit splits in CPU order: a chain is a run of splits on consecutive CPUs.
        let mut chains: Vec<std::ops::Range<usize>> = Vec::new();
        for i in 0..splits.len() {
            match chains.last_mut() {
                Some(c) if splits[i - 1].hi + 1 == splits[i].hi => c.end = i + 1,
                _ => chains.push(i..i + 1),
            }
        }
        let groups = asg.groups.len();
        Ekg {
            asg,
            own,
            lo_in,
            hi_out,
            group_of,
            splits,
            own_rates,
            chains,
            group_tasks,
            slots: vec![None; groups],
            deadline: vec![0; w.tasks.len()],
            next: None,
        }
    }

    /// The assignment.
    pub fn assignment(&self) -> &Assignment {
        &self.asg
    }

    /// Every split's cumulative window targets by `t`: (start piece, end piece).
    ///
    /// Along a chain of CPUs c0..cn (splits s0..s(n−1), s_j from c_j to c_j+1), the
    /// own tasks of the last CPU get their fluid work by t rounded up, plus the chain's
    /// spare capacity rounded down (which only grows); the other entities own(c0), s0,
    /// own(c1), ..., s(n−1) share the rest by largest remainders (each gets its floor,
    /// the units left go one each to the largest fractional parts, ties in chain
    /// order): every entity is within 1 ns of its fluid work and exact where that is
    /// whole (a split task at each of its deadlines, a CPU's own tasks at the common
    /// multiples of their periods). Then CPU c_j, full but for its own tasks, gives
    /// s_j what its own tasks and s_(j−1)'s start piece leave: `hi_j = t − own_j −
    /// lo_(j−1)`, and `lo_j = s_j − hi_j`.
    fn targets(&self, t: Ns) -> Vec<(Ns, Ns)> {
        let mut out = vec![(0, 0); self.splits.len()];
        for chain in &self.chains {
            let first = self.splits[chain.start].hi;
            let cpus = chain.len() + 1;
            // (whole, fraction) per entity, in chain order.
            let mut ent: Vec<(u128, Option<f64>)> = Vec::with_capacity(2 * cpus - 1);
            for j in 0..cpus {
                ent.push(fluid_work(&self.own_rates[first + j], t));
                if j + 1 < cpus {
                    ent.push(fluid_work(&[self.splits[chain.start + j].rate], t));
                }
            }
            // The last CPU's own tasks get their fluid work rounded up, and its spare
            // capacity (the chain's, rounded down: it only grows) on top.
            let last = ent.len() - 1;
            let mut all: Vec<(Ns, Ns)> = Vec::new();
            for j in 0..cpus {
                all.extend_from_slice(&self.own_rates[first + j]);
            }
            all.extend(self.splits[chain.clone()].iter().map(|s| s.rate));
            let (work, frac) = fluid_work(&all, t);
            let capacity = cpus as u128 * t as u128;
            let spare = capacity.saturating_sub(work + u128::from(frac.is_some()));
            let last_own = ent[last].0 + u128::from(ent[last].1.is_some());
            let total = capacity.saturating_sub(spare + last_own);
            let floors: u128 = ent[..last].iter().map(|e| e.0).sum();
            let mut order: Vec<usize> = (0..last).filter(|&i| ent[i].1.is_some()).collect();
            let units = total.saturating_sub(floors).min(order.len() as u128) as usize;
            order.sort_by(|&a, &b| {
                let (x, y) = (ent[a].1.unwrap_or(0.0), ent[b].1.unwrap_or(0.0));
                y.total_cmp(&x).then(a.cmp(&b))
            });
            let mut alloc: Vec<u128> = ent.iter().map(|e| e.0).collect();
            for &i in order.iter().take(units) {
                alloc[i] += 1;
            }
            let mut lo_prev: u128 = 0;
            for j in 0..chain.len() {
                let own = alloc[2 * j];
                let share = alloc[2 * j + 1];
                let hi = (t as u128).saturating_sub(own + lo_prev).min(share);
                let lo = share - hi;
                out[chain.start + j] = (lo as Ns, hi as Ns);
                lo_prev = lo;
            }
        }
        out
    }

    /// The earliest deadline after now of a job of group `g`, completed jobs included
    /// (the paper's slots end at every deadline of the group's tasks).
    fn group_deadline(&mut self, ctx: &Ctx, g: usize) -> Option<Ns> {
        let mut min: Option<Ns> = None;
        for &t in &self.group_tasks[g] {
            if let Some(j) = ctx.task(t).job {
                self.deadline[t] = j.deadline;
            }
            let d = self.deadline[t];
            if d > ctx.now {
                min = Some(min.map_or(d, |m| m.min(d)));
            }
        }
        min
    }

    /// Close group `g`'s slot at `now` (what of its windows has elapsed counts as given)
    /// and open `[now, end)`.
    fn new_slot(&mut self, ctx: &Ctx, g: usize, end: Option<Ns>) {
        let now = ctx.now;
        let old = self.slots[g];
        let chained = old.is_some_and(|s| s.end >= now);
        let (first, last) = self.asg.groups[g];
        let in_group: Vec<usize> = (0..self.splits.len())
            .filter(|&i| (first..=last).contains(&self.splits[i].hi))
            .collect();
        let at_now = if chained { Vec::new() } else { self.targets(now) };
        for &i in &in_group {
            let s = &mut self.splits[i];
            match old {
                Some(o) if chained => {
                    let lo_done = s.win.0.min(now - o.start);
                    let hi_done = (now.saturating_sub(o.end - s.win.1)).min(s.win.1);
                    s.given = (s.given.0 + lo_done, s.given.1 + hi_done);
                }
                // After a time with no slot (no job in the group) the windows of that
                // time are forfeited: the targets are met from now on.
                _ => s.given = at_now[i],
            }
            s.win = (0, 0);
        }
        let Some(end) = end else {
            self.slots[g] = None;
            return;
        };
        self.slots[g] = Some(Slot { start: now, end });
        let len = end - now;
        // Windows from the targets, then fitted: a split's two pieces never overlap and
        // a CPU's incoming and outgoing windows never overlap (rounding is at most 1 ns;
        // a shortfall is made up in the next slot, as the targets are cumulative).
        let at_end = self.targets(end);
        for &i in &in_group {
            let s = &mut self.splits[i];
            let (lo_t, hi_t) = at_end[i];
            let lo = lo_t.saturating_sub(s.given.0).min(len);
            let hi = hi_t.saturating_sub(s.given.1).min(len - lo);
            s.win = (lo, hi);
        }
        for &i in &in_group {
            let hi_cpu = self.splits[i].hi;
            let incoming = self.lo_in[hi_cpu].map_or(0, |j| self.splits[j].win.0);
            let s = &mut self.splits[i];
            s.win.1 = s.win.1.min(len - incoming.min(len));
        }
    }

    /// Whether split `i`'s piece on `cpu` is running its window at `now`.
    fn in_window(&self, g: usize, i: usize, cpu: CpuId, now: Ns) -> bool {
        let Some(slot) = self.slots[g] else {
            return false;
        };
        let s = &self.splits[i];
        if cpu == s.hi + 1 {
            slot.start <= now && now < slot.start + s.win.0
        } else {
            slot.end - s.win.1 <= now && now < slot.end
        }
    }
}

impl Plan for Ekg {
    fn name(&self) -> &'static str {
        NAME
    }

    fn update(&mut self, ctx: &Ctx, _wcet: &[Ns], released: bool, _completed: bool) {
        let now = ctx.now;
        for g in 0..self.slots.len() {
            let due = match self.slots[g] {
                None => true,
                Some(s) => now >= s.end,
            };
            let end = self.group_deadline(ctx, g);
            if due {
                self.new_slot(ctx, g, end);
            } else if released {
                // A release whose deadline comes before the slot's end cuts the slot.
                if let (Some(e), Some(s)) = (end, self.slots[g]) {
                    if e < s.end {
                        self.new_slot(ctx, g, Some(e));
                    }
                }
            }
        }
        let mut next: Option<Ns> = None;
        let mut see = |e: Ns| {
            if e > now {
                next = Some(next.map_or(e, |n| n.min(e)));
            }
        };
        for s in &self.splits {
            let Some(g) = self.group_of[s.hi] else {
                continue;
            };
            if let Some(slot) = self.slots[g] {
                see(slot.start + s.win.0);
                see(slot.end - s.win.1);
            }
        }
        for slot in self.slots.iter().flatten() {
            see(slot.end);
        }
        self.next = next;
    }

    fn slot(&self, ctx: &Ctx, cpu: CpuId) -> Option<TaskId> {
        let now = ctx.now;
        if let Some(g) = self.group_of.get(cpu).copied().flatten() {
            for i in [self.lo_in[cpu], self.hi_out[cpu]].into_iter().flatten() {
                let t = self.splits[i].task;
                if self.in_window(g, i, cpu, now) && fluid::active(ctx, t) {
                    return Some(t);
                }
            }
        }
        self.own
            .get(cpu)?
            .iter()
            .copied()
            .filter(|&t| fluid::active(ctx, t))
            .min_by_key(|&t| (ctx.task(t).job.map_or(Ns::MAX, |j| j.deadline), t))
    }

    fn next_event(&self) -> Option<Ns> {
        self.next
    }

    /// The assignment: k, the groups, per CPU the tasks placed whole on it, and each
    /// split task with its two CPUs (it runs at the start of a slot on `cpus[1]` and at
    /// the end on `cpus[0]`).
    fn report(&self, ctx: &Ctx, names: &[String]) -> Option<serde_json::Value> {
        let a = &self.asg;
        let name = |t: TaskId| names.get(t).cloned().unwrap_or_default();
        let planned = |t: TaskId| {
            ctx.task(t).kind == TaskClass::Deadline && ctx.task(t).period != Ns::MAX
        };
        let m = self.own.len();
        let mut whole = vec![Vec::new(); m];
        let mut split = Vec::new();
        for (t, home) in a.homes.iter().enumerate().filter(|&(t, _)| planned(t)) {
            match *home {
                Home::Cpu(c) => whole[c].push(name(t)),
                Home::Split { hi } => split.push((name(t), hi)),
            }
        }
        let mut text = format!("k = {}\n", a.k);
        for (c, tasks) in whole.iter().enumerate() {
            text += &format!("  cpu{c}: [{}]\n", tasks.join(" "));
        }
        for (t, hi) in &split {
            text += &format!("  split {t}: cpu{hi} (end of slot), cpu{} (start)\n", hi + 1);
        }
        Some(serde_json::json!({
            "kind": "ekg-assignment",
            "k": a.k,
            "groups": a.groups.iter().map(|&(f, l)| [f, l]).collect::<Vec<_>>(),
            "heavy": a.heavy.iter().map(|&t| name(t)).collect::<Vec<_>>(),
            "cpus": whole,
            "split": split
                .iter()
                .map(|(t, hi)| serde_json::json!({ "task": t, "cpus": [hi, hi + 1] }))
                .collect::<Vec<_>>(),
            "text": text,
        }))
    }
}

/// The registry's constructor: global placement only (the class places the tasks);
/// `scheduler.ekg.k` absent or 0 means m, above m is an error.
pub fn build(w: &Workload) -> Result<fluid::Fluid<Ekg>, crate::SimError> {
    let m = w.platform.cpus.max(1);
    let k = w.scheduler.options_of(Policy::Ekg).map_or(0, |o| o.int("k"));
    let k = match usize::try_from(k) {
        Ok(0) => m,
        Ok(k) if k <= m => k,
        _ => {
            return Err(crate::SimError::Unsupported(format!(
                "scheduler.ekg.k: {k} is outside 1..{m} (platform.cpus is {m})"
            )))
        }
    };
    let plan = Ekg::new(w, assign(w, k));
    fluid::build(w, plan)
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Ekg,
    build: |w| Ok(Box::new(crate::policy::ekg::build(w)?)),
}];
