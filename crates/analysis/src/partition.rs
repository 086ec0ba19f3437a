//! Partitioned scheduling: each task bound to one CPU, each CPU checked by an exact
//! uniprocessor test ([`PerCpu`]), tasks placed by first-fit decreasing utilisation.
//!
//! The simulator's partitioned placement builds the same partition, so a set accepted
//! here is simulated on exactly the CPUs this analysis certified.

use crate::taskset::RtTask;
use crate::tests::{constrained, reason, util, verdict, Outcome, Response, Verdict};

/// The uniprocessor test each CPU gets in [`ffd`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerCpu {
    /// EDF, processor-demand analysis (exact).
    Edf,
    /// Rate-monotonic, response-time analysis (period order).
    Rm,
    /// Deadline-monotonic, response-time analysis (deadline order).
    Dm,
}

/// How a task's CPU is chosen among those where it passes the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// The first CPU (lowest index).
    First,
    /// The most loaded CPU (highest utilisation; ties: lowest index).
    Best,
    /// The least loaded CPU (lowest utilisation; ties: lowest index).
    Worst,
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Σ C/T ≤ 1 over `bin`, exactly: the float sum decides when it is clear of 1 by more
/// than its rounding error (n·2^-52 ≪ 1e-9 for n ≤ 10^5), exact fractions decide near 1.
/// A sum whose exact denominator does not fit in 128 bits is not proven (false).
pub fn utilisation_at_most_one(ts: &[RtTask], bin: &[usize]) -> bool {
    let u: f64 = bin.iter().map(|&i| ts[i].utilisation()).sum();
    if u > 1.0 + 1e-9 {
        return false;
    }
    if u < 1.0 - 1e-9 {
        return true;
    }
    let (mut num, mut den) = (0u128, 1u128);
    for &i in bin {
        let (c, t) = (ts[i].c as u128, ts[i].t as u128);
        let g = gcd(den, t);
        let Some(l) = (den / g).checked_mul(t) else {
            return false;
        };
        let Some(n) = num
            .checked_mul(l / den)
            .and_then(|a| c.checked_mul(l / t).and_then(|b| a.checked_add(b)))
        else {
            return false;
        };
        let g = gcd(n, l).max(1);
        (num, den) = (n / g, l / g);
    }
    num <= den
}

/// Work a partitioning may do (terms of response-time and demand sums, tasks visited)
/// before it gives up with "not proven": about a second or two of a release build. The
/// answers within it are exact; only sets that need more are left unproven.
pub const PARTITION_BUDGET: u64 = 200_000_000;

/// Why [`fit_partition`] placed no partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unplaced {
    /// This task (an index into the set) passes the test on no CPU.
    Task(usize),
    /// The work budget ([`PARTITION_BUDGET`]) ran out: no answer.
    Budget,
}

/// One CPU being filled: its tasks and running sums (floats only to skip exact work
/// when far from a boundary).
#[derive(Debug, Clone, Default)]
struct Bin {
    tasks: Vec<usize>,
    load: f64,
    density: f64,
    /// Some task has D ≠ T.
    not_implicit: bool,
}

/// The state of a partitioning run: per-task figures kept across insertions and the work
/// done so far.
struct Packer<'a> {
    ts: &'a [RtTask],
    how: PerCpu,
    /// RM/DM: each placed task's time demand at its deadline, C_i + Σ_{j ∈ hp(i)}
    /// ⌈D_i / T_j⌉ C_j. At most D_i means the response time is within the deadline
    /// (the demand meets the supply at D_i), so no fixed-point iteration is needed.
    demand: Vec<u128>,
    /// RM/DM: a lower bound of each placed task's response time (its last one computed).
    resp: Vec<u64>,
    work: u64,
    budget: u64,
    /// Scratch lists of [`Packer::fits_fixed_priority`] and [`Packer::response`], kept
    /// between admissions (allocated once per partitioning, not per CPU tried).
    scratch: Scratch,
}

/// The lists an RM/DM admission fills, emptied before each use.
#[derive(Default)]
struct Scratch {
    delayed: Vec<usize>,
    grown: Vec<(usize, u128)>,
    resp_updates: Vec<(usize, u64)>,
    higher: Vec<usize>,
}

/// A partitioning's lists (the CPUs' task lists, the per-task figures, the candidates,
/// the admissions' scratch), kept on the thread between partitionings: a sweep's
/// [`analyze`](crate::analyze) runs four on 16 tasks, whose 30-odd allocations and
/// frees cost about as much as their placing.
#[derive(Default)]
struct Space {
    bins: Vec<Bin>,
    demand: Vec<u128>,
    resp: Vec<u64>,
    cands: Vec<usize>,
    scratch: Scratch,
}

thread_local! {
    /// The thread's [`Space`], taken out for a partitioning (an empty one stands in).
    static SPACE: std::cell::Cell<Space> = std::cell::Cell::new(Space::default());
}

/// Sets up to this many tasks leave their [`Space`] to the next partitioning; a larger
/// one's is freed rather than held by the thread.
const KEEP_SPACE: usize = 4096;

/// Run `f` with the thread's [`Space`] (a fresh one if another call holds it), then put
/// it back.
fn with_space<R>(tasks: usize, f: impl FnOnce(&mut Space) -> R) -> R {
    let mut space = SPACE.with(std::cell::Cell::take);
    let r = f(&mut space);
    if tasks <= KEEP_SPACE {
        SPACE.with(|c| c.set(space));
    }
    r
}

impl Packer<'_> {
    fn spend(&mut self, n: usize) -> Result<(), Unplaced> {
        self.work += n as u64;
        if self.work > self.budget {
            Err(Unplaced::Budget)
        } else {
            Ok(())
        }
    }

    /// Exact U ≤ 1 of `bin` plus `new`, from the running load when it is clear of 1.
    fn utilisation_fits(&mut self, bin: &Bin, new: usize) -> Result<bool, Unplaced> {
        let u = bin.load + self.ts[new].utilisation();
        if u > 1.0 + 1e-9 {
            return Ok(false);
        }
        if u < 1.0 - 1e-9 {
            return Ok(true);
        }
        self.spend(bin.tasks.len())?;
        let mut all = bin.tasks.clone();
        all.push(new);
        Ok(utilisation_at_most_one(self.ts, &all))
    }

    /// Whether `new` can join `bin` under the per-CPU test; on success the per-task
    /// figures are updated (the caller then pushes it).
    fn fits(&mut self, bin: &Bin, new: usize) -> Result<bool, Unplaced> {
        if !self.utilisation_fits(bin, new)? {
            return Ok(false);
        }
        let ts = self.ts;
        match self.how {
            // Implicit deadlines: U ≤ 1 is exact (what the demand test concludes, sooner).
            PerCpu::Edf if ts[new].d == ts[new].t && !bin.not_implicit => Ok(true),
            PerCpu::Edf => {
                // Density ≤ 1 is sufficient; the demand test decides otherwise.
                if bin.density + ts[new].density() < 1.0 - 1e-9 {
                    return Ok(true);
                }
                let mut all = bin.tasks.clone();
                all.push(new);
                self.demand_test(&all)
            }
            PerCpu::Rm | PerCpu::Dm => self.fits_fixed_priority(bin, new),
        }
    }

    /// EDF's processor-demand test (Baruah, Rosier & Howell 1990) by QPA (Zhang & Burns
    /// 2009) over the synchronous busy period, as `edf-pda` does, each sum over the tasks
    /// charged to the budget. The caller has checked U ≤ 1 exactly.
    fn demand_test(&mut self, idx: &[usize]) -> Result<bool, Unplaced> {
        let ts = self.ts;
        let k = idx.len();
        // Synchronous busy period: w = Σ ⌈w/T⌉ C from Σ C.
        let mut w: u128 = idx.iter().map(|&i| ts[i].c as u128).sum();
        loop {
            self.spend(k)?;
            let next: u128 = idx
                .iter()
                .map(|&i| w.div_ceil(ts[i].t as u128) * ts[i].c as u128)
                .sum();
            if next == w {
                break;
            }
            w = next;
        }
        let dbf = |t: u128| -> u128 {
            idx.iter()
                .map(|&i| &ts[i])
                .filter(|x| x.d as u128 <= t)
                .map(|x| ((t - x.d as u128) / x.t as u128 + 1) * x.c as u128)
                .sum()
        };
        // Largest absolute deadline strictly before t.
        let before = |t: u128| -> Option<u128> {
            idx.iter()
                .map(|&i| &ts[i])
                .filter(|x| (x.d as u128) < t)
                .map(|x| (t - 1 - x.d as u128) / x.t as u128 * x.t as u128 + x.d as u128)
                .max()
        };
        let dmin = idx.iter().map(|&i| ts[i].d as u128).min().unwrap_or(0);
        self.spend(k)?;
        let Some(mut t) = before(w + 1) else {
            return Ok(true);
        };
        loop {
            self.spend(k)?;
            let h = dbf(t);
            if h > t {
                return Ok(false);
            }
            if h <= dmin {
                return Ok(true);
            }
            t = if h < t {
                h
            } else {
                self.spend(k)?;
                match before(t) {
                    Some(d) => d,
                    None => return Ok(true),
                }
            };
        }
    }

    /// RTA admission: `new` itself, then every task it can delay (key ≥ its own). A
    /// task whose demand at its deadline stays within it needs no iteration; the others
    /// get their exact response time, from their previous one (a lower bound: the same
    /// fixed point in fewer steps).
    fn fits_fixed_priority(&mut self, bin: &Bin, new: usize) -> Result<bool, Unplaced> {
        let ts = self.ts;
        let how = self.how;
        let k = key(&ts[new], how);
        let (c, d) = (ts[new].c as u128, ts[new].d as u128);
        // The scans below visit the CPU's tasks twice.
        self.spend(2 * bin.tasks.len())?;
        let own: u128 = c + bin
            .tasks
            .iter()
            .filter(|&&j| key(&ts[j], how) <= k)
            .map(|&j| d.div_ceil(ts[j].t as u128) * ts[j].c as u128)
            .sum::<u128>();
        let mut new_resp = None;
        if own > d {
            match self.response(bin, new, new, 0)? {
                Response::Within(r) => new_resp = Some(r),
                _ => return Ok(false),
            }
        }
        // Tasks `new` can delay: their demand at the deadline grows by ⌈D_i/T_new⌉ C_new.
        // (The lists are taken out of the scratch space while `response` borrows self.)
        let mut grown = std::mem::take(&mut self.scratch.grown);
        let mut resp_updates = std::mem::take(&mut self.scratch.resp_updates);
        let mut delayed = std::mem::take(&mut self.scratch.delayed);
        grown.clear();
        resp_updates.clear();
        delayed.clear();
        delayed.extend(bin.tasks.iter().copied().filter(|&i| key(&ts[i], how) >= k));
        let fits = self.delay(bin, new, c, &delayed, &mut grown, &mut resp_updates);
        if let Ok(true) = fits {
            for &(i, dem) in &grown {
                self.demand[i] = dem;
            }
            for &(i, r) in &resp_updates {
                self.resp[i] = r;
            }
            self.demand[new] = own;
            self.resp[new] = new_resp.unwrap_or(0);
        }
        self.scratch.grown = grown;
        self.scratch.resp_updates = resp_updates;
        self.scratch.delayed = delayed;
        fits
    }

    /// The tasks `new` can delay (`delayed`) still within their deadlines with it: each
    /// one's demand at its deadline with `new` into `grown`, and the response times that
    /// had to be computed into `resp_updates` (applied by the caller when all fit).
    fn delay(
        &mut self,
        bin: &Bin,
        new: usize,
        c: u128,
        delayed: &[usize],
        grown: &mut Vec<(usize, u128)>,
        resp_updates: &mut Vec<(usize, u64)>,
    ) -> Result<bool, Unplaced> {
        let ts = self.ts;
        self.spend(delayed.len())?;
        for &i in delayed {
            let di = ts[i].d as u128;
            let add = di.div_ceil(ts[new].t as u128) * c;
            let dem = self.demand[i] + add;
            grown.push((i, dem));
            if dem <= di {
                continue;
            }
            match self.response(bin, i, new, self.resp[i])? {
                Response::Within(r) => resp_updates.push((i, r)),
                _ => return Ok(false),
            }
        }
        Ok(true)
    }

    /// Exact response time of `i` among `bin` plus `new`, iterating from `start`.
    fn response(
        &mut self,
        bin: &Bin,
        i: usize,
        new: usize,
        start: u64,
    ) -> Result<Response, Unplaced> {
        let ts = self.ts;
        let ki = key(&ts[i], self.how);
        let mut higher = std::mem::take(&mut self.scratch.higher);
        higher.clear();
        higher.extend(
            bin.tasks
                .iter()
                .copied()
                .chain((i != new).then_some(new))
                .filter(|&j| j != i && key(&ts[j], self.how) <= ki),
        );
        let answer = self
            .spend(bin.tasks.len())
            .and_then(|()| self.iterate_response(i, &higher, start));
        self.scratch.higher = higher;
        answer
    }

    /// [`Packer::response`]'s fixed point, given the tasks of higher or equal priority.
    fn iterate_response(
        &mut self,
        i: usize,
        higher: &[usize],
        start: u64,
    ) -> Result<Response, Unplaced> {
        let ts = self.ts;
        // The fixed point R = C + Σ ⌈R/T_j⌉ C_j from `start`, each iteration charged.
        let c = ts[i].c as u128;
        let d = ts[i].d as u128;
        let mut r = (c + higher.iter().map(|&j| ts[j].c as u128).sum::<u128>()).max(start as u128);
        loop {
            if r > d {
                return Ok(Response::Late);
            }
            self.spend(higher.len())?;
            // r ≤ D here, so ⌈r/T_j⌉ in u64 (a u128 division is a library call); the sum
            // may still pass u64.
            let r64 = r as u64;
            let next = c + higher
                .iter()
                .map(|&j| r64.div_ceil(ts[j].t) as u128 * ts[j].c as u128)
                .sum::<u128>();
            if next == r {
                return Ok(Response::Within(r as u64));
            }
            r = next;
        }
    }
}

/// The priority key of `how` (smaller = higher priority): period for RM, deadline for DM.
fn key(t: &RtTask, how: PerCpu) -> u64 {
    if how == PerCpu::Dm {
        t.d
    } else {
        t.t
    }
}

/// First-fit decreasing: tasks by decreasing utilisation (ties: workload order), each to
/// the first CPU where the uniprocessor test (EDF: processor demand; RM/DM: response
/// times) still passes with it. The task indices on each CPU, or why there are none.
pub fn ffd_partition(ts: &[RtTask], m: usize, how: PerCpu) -> Result<Vec<Vec<usize>>, Unplaced> {
    fit_partition(ts, m, how, Fit::First)
}

/// [`ffd_partition`] with another choice among the CPUs where a task fits: best fit (the
/// most loaded) or worst fit (the least loaded).
pub fn fit_partition(
    ts: &[RtTask],
    m: usize,
    how: PerCpu,
    fit: Fit,
) -> Result<Vec<Vec<usize>>, Unplaced> {
    partition_within(ts, m, how, fit, PARTITION_BUDGET)
}

/// The tasks by decreasing utilisation, ties in workload order: the order in which every
/// heuristic places them (C_i·T_j against C_j·T_i, exact in 128 bits). It depends on the
/// set only, so [`analyze`](crate::analyze) sorts once for its four partitionings.
pub(crate) fn decreasing_utilisation(ts: &[RtTask]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..ts.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&ts[a], &ts[b]);
        ((y.c as u128) * (x.t as u128))
            .cmp(&((x.c as u128) * (y.t as u128)))
            .then(a.cmp(&b))
    });
    order
}

/// [`fit_partition`] with another work budget.
fn partition_within(
    ts: &[RtTask],
    m: usize,
    how: PerCpu,
    fit: Fit,
    budget: u64,
) -> Result<Vec<Vec<usize>>, Unplaced> {
    partition_ordered(ts, m, how, fit, budget, &decreasing_utilisation(ts))
}

/// [`partition_within`] with the tasks' [`decreasing_utilisation`] order given.
fn partition_ordered(
    ts: &[RtTask],
    m: usize,
    how: PerCpu,
    fit: Fit,
    budget: u64,
    order: &[usize],
) -> Result<Vec<Vec<usize>>, Unplaced> {
    with_space(ts.len(), |space| {
        place(ts, m, how, fit, budget, order, space)?;
        Ok(space.bins.iter().map(|b| b.tasks.clone()).collect())
    })
}

/// The partitioning of [`partition_ordered`], its `m` CPUs' tasks left in `space.bins`
/// (every list of `space` cleared first: the same start as new ones).
fn place(
    ts: &[RtTask],
    m: usize,
    how: PerCpu,
    fit: Fit,
    budget: u64,
    order: &[usize],
    space: &mut Space,
) -> Result<(), Unplaced> {
    debug_assert_eq!(order, decreasing_utilisation(ts));
    let Space {
        bins,
        demand,
        resp,
        cands,
        scratch,
    } = space;
    bins.truncate(m);
    for b in bins.iter_mut() {
        // Every field named, so that a field added to `Bin` fails to compile here rather
        // than carrying one partitioning's value into the next.
        let Bin {
            tasks,
            load,
            density,
            not_implicit,
        } = b;
        tasks.clear();
        (*load, *density, *not_implicit) = (0.0, 0.0, false);
    }
    bins.resize_with(m, Bin::default);
    demand.clear();
    demand.resize(ts.len(), 0);
    resp.clear();
    resp.resize(ts.len(), 0);
    let mut p = Packer {
        ts,
        how,
        demand: std::mem::take(demand),
        resp: std::mem::take(resp),
        work: 0,
        budget,
        scratch: std::mem::take(scratch),
    };
    // The CPUs in the order `fill` visits them (by load for best and worst fit).
    cands.clear();
    cands.extend(0..m);
    let placed = fill(&mut p, bins, cands, order, fit);
    *demand = p.demand;
    *resp = p.resp;
    *scratch = p.scratch;
    placed
}

/// [`place`]'s loop: each task of `order` onto the first of `cands` (in `fit`'s order)
/// where it fits.
fn fill(
    p: &mut Packer<'_>,
    bins: &mut [Bin],
    cands: &mut [usize],
    order: &[usize],
    fit: Fit,
) -> Result<(), Unplaced> {
    let ts = p.ts;
    // Best and worst fit visit the CPUs by load (heaviest or lightest first, then by
    // number). Only the CPU a task went to changes its load, so the order is sorted once
    // and that CPU moved to its new place after each task: the same order as sorting
    // before each task (a total order, so the sorted permutation is unique), without a
    // sort per task.
    if fit != Fit::First {
        cands.sort_by(|&a, &b| by_load(bins, fit, a, b));
    }
    for &i in order {
        let mut placed = None;
        for (pos, &c) in cands.iter().enumerate() {
            if p.fits(&bins[c], i)? {
                let b = &mut bins[c];
                b.tasks.push(i);
                b.load += ts[i].utilisation();
                b.density += ts[i].density();
                b.not_implicit |= ts[i].d != ts[i].t;
                placed = Some(pos);
                break;
            }
        }
        let Some(mut pos) = placed else {
            return Err(Unplaced::Task(i));
        };
        if fit != Fit::First {
            let after = |a: usize, b: usize| by_load(bins, fit, a, b).is_gt();
            while pos > 0 && after(cands[pos - 1], cands[pos]) {
                cands.swap(pos - 1, pos);
                pos -= 1;
            }
            while pos + 1 < cands.len() && after(cands[pos], cands[pos + 1]) {
                cands.swap(pos, pos + 1);
                pos += 1;
            }
            debug_assert!(cands.is_sorted_by(|&a, &b| by_load(bins, fit, a, b).is_lt()));
        }
    }
    Ok(())
}

/// The order in which best fit (heaviest CPU first) or worst fit (lightest first) visits
/// CPUs `a` and `b`; ties by number.
fn by_load(bins: &[Bin], fit: Fit, a: usize, b: usize) -> std::cmp::Ordering {
    let (x, y) = (bins[a].load, bins[b].load);
    match fit {
        Fit::Best => y.total_cmp(&x),
        _ => x.total_cmp(&y),
    }
    .then(a.cmp(&b))
}

/// The test name and title of a partitioning heuristic with its per-CPU test
/// (`ffd-edf`, `ffd-rm`, `ffd-dm`, `bfd-edf`, `wfd-edf`, ...).
pub fn test_name(how: PerCpu, fit: Fit) -> (&'static str, &'static str) {
    match (fit, how) {
        (Fit::First, PerCpu::Edf) => ("ffd-edf", "partitioned EDF, first-fit decreasing"),
        (Fit::First, PerCpu::Rm) => ("ffd-rm", "partitioned RM, first-fit decreasing"),
        (Fit::First, PerCpu::Dm) => ("ffd-dm", "partitioned DM, first-fit decreasing"),
        (Fit::Best, PerCpu::Edf) => ("bfd-edf", "partitioned EDF, best-fit decreasing"),
        (Fit::Best, PerCpu::Rm) => ("bfd-rm", "partitioned RM, best-fit decreasing"),
        (Fit::Best, PerCpu::Dm) => ("bfd-dm", "partitioned DM, best-fit decreasing"),
        (Fit::Worst, PerCpu::Edf) => ("wfd-edf", "partitioned EDF, worst-fit decreasing"),
        (Fit::Worst, PerCpu::Rm) => ("wfd-rm", "partitioned RM, worst-fit decreasing"),
        (Fit::Worst, PerCpu::Dm) => ("wfd-dm", "partitioned DM, worst-fit decreasing"),
    }
}

/// Partitioned scheduling by [`ffd_partition`]. Sufficient: another partition may exist
/// when first-fit decreasing finds none.
pub fn ffd(ts: &[RtTask], m: usize, how: PerCpu) -> Verdict {
    fit_test(ts, m, how, Fit::First)
}

/// Partitioned scheduling by [`fit_partition`] (sufficient).
pub fn fit_test(ts: &[RtTask], m: usize, how: PerCpu, fit: Fit) -> Verdict {
    fit_test_ordered(ts, m, how, fit, None)
}

/// [`fit_test`], with the tasks' [`decreasing_utilisation`] order when the caller has it
/// (the same verdict; debug builds check the order).
pub(crate) fn fit_test_ordered(
    ts: &[RtTask],
    m: usize,
    how: PerCpu,
    fit: Fit,
    order: Option<&[usize]>,
) -> Verdict {
    let (test, title) = test_name(how, fit);
    if how != PerCpu::Edf && !constrained(ts) {
        return verdict(
            test,
            title,
            false,
            Outcome::NotApplicable,
            "needs constrained deadlines (D ≤ T)",
        );
    }
    let u = util(ts);
    // Only a total clearly above m is proven too much; near m the partition decides.
    if u > m as f64 + 1e-9 {
        return verdict(
            test,
            title,
            false,
            Outcome::Unschedulable,
            reason(|| format!("U = {u:.6} > {m} CPUs")),
        );
    }
    let sorted;
    let order = match order {
        Some(order) => order,
        None => {
            sorted = decreasing_utilisation(ts);
            &sorted
        }
    };
    // The CPUs' tasks are read only for the reason (none for a sweep's outcomes).
    with_space(ts.len(), |space| {
        let placed = place(ts, m, how, fit, PARTITION_BUDGET, order, space);
        placed_verdict(ts, test, title, placed.map(|()| &space.bins[..]))
    })
}

/// [`fit_test_ordered`]'s verdict on a partitioning's answer.
fn placed_verdict(
    ts: &[RtTask],
    test: &'static str,
    title: &'static str,
    placed: Result<&[Bin], Unplaced>,
) -> Verdict {
    match placed {
        Ok(bins) => verdict(
            test,
            title,
            false,
            Outcome::Schedulable,
            reason(|| {
                let loads: Vec<String> = bins
                    .iter()
                    .map(|b| {
                        format!(
                            "{:.3}",
                            0.0 + b.tasks.iter().map(|&i| ts[i].utilisation()).sum::<f64>()
                        )
                    })
                    .collect();
                format!("every task placed; CPU loads {}", loads.join(", "))
            }),
        ),
        Err(Unplaced::Task(i)) => verdict(
            test,
            title,
            false,
            Outcome::NotProven,
            reason(|| format!(
                "task {} (U = {:.4}) fits on no CPU",
                ts[i].name,
                ts[i].utilisation()
            )),
        ),
        Err(Unplaced::Budget) => verdict(
            test,
            title,
            false,
            Outcome::NotProven,
            format!("gave up after {PARTITION_BUDGET} steps of per-CPU analysis (the set is too large to partition exactly)"),
        ),
    }
}

#[cfg(test)]
mod unit {
    use super::*;
    use crate::tests::response_time;

    /// The incremental first-fit RM (response times re-checked only below the new task,
    /// from their previous values) places every task where checking each whole CPU again
    /// would.
    /// First-fit decreasing utilisation, each CPU checked whole: every response time from
    /// 0 with the priorities `key` gives (smaller first). The slow reference the
    /// incremental partitioning must match.
    fn full_check_ffd(
        ts: &[RtTask],
        m: usize,
        key: fn(&RtTask) -> u64,
    ) -> (Vec<Vec<usize>>, Result<(), usize>) {
        let order = decreasing_utilisation(ts);
        let mut bins: Vec<Vec<usize>> = vec![Vec::new(); m];
        for i in order {
            let fit = bins.iter_mut().any(|b| {
                b.push(i);
                let ok = b.iter().all(|&k| {
                    let higher: Vec<usize> = b
                        .iter()
                        .copied()
                        .filter(|&j| j != k && key(&ts[j]) <= key(&ts[k]))
                        .collect();
                    matches!(response_time(ts, k, &higher), Response::Within(_))
                });
                if !ok {
                    b.pop();
                }
                ok
            });
            if !fit {
                return (bins, Err(i));
            }
        }
        (bins, Ok(()))
    }

    #[test]
    fn incremental_ffd_rm_matches_a_full_check() {
        use crate::generate::{generate, Deadlines, GenSpec, Periods};
        for seed in 0..200 {
            let spec = GenSpec {
                tasks: 12,
                cpus: 3,
                utilization: 1.5 + (seed % 10) as f64 * 0.15,
                periods: Periods::LogUniform {
                    min: 1_000_000,
                    max: 50_000_000,
                    granularity: 1_000_000,
                },
                deadlines: if seed % 2 == 0 {
                    Deadlines::Implicit
                } else {
                    Deadlines::Constrained { min_ratio: 0.5 }
                },
                seed,
                ..GenSpec::default()
            };
            let ts: Vec<RtTask> = generate(&spec).unwrap().rt_tasks();
            // RM orders priorities by period, DM by deadline.
            for (how, key) in [
                (PerCpu::Rm, (|t: &RtTask| t.t) as fn(&RtTask) -> u64),
                (PerCpu::Dm, |t: &RtTask| t.d),
            ] {
                let fast = ffd_partition(&ts, 3, how);
                let (bins, slow) = full_check_ffd(&ts, 3, key);
                match (fast, slow) {
                    (Ok(f), Ok(())) => assert_eq!(f, bins, "seed {seed} ({how:?})"),
                    (Err(Unplaced::Task(a)), Err(b)) => {
                        assert_eq!(a, b, "seed {seed} ({how:?})")
                    }
                    (f, s) => panic!("seed {seed} ({how:?}): {f:?} vs {s:?}"),
                }
            }
        }
    }

    /// Past its work budget a partitioning says so instead of answering; within it, the
    /// same set is placed.
    #[test]
    fn the_budget_gives_up_clearly() {
        let ts: Vec<RtTask> = (0..40)
            .map(|i| {
                RtTask::new(
                    &format!("t{i}"),
                    1_000 + i,
                    100_000 + 1_000 * i,
                    100_000 + 1_000 * i,
                )
            })
            .collect();
        assert!(partition_within(&ts, 2, PerCpu::Rm, Fit::First, PARTITION_BUDGET).is_ok());
        assert_eq!(
            partition_within(&ts, 2, PerCpu::Rm, Fit::First, 50),
            Err(Unplaced::Budget)
        );
    }
}
