//! Schedulability tests for sporadic tasks `(C, D, T)` in integer nanoseconds.
//!
//! Uniprocessor: Liu & Layland and the hyperbolic bound for rate-monotonic, exact
//! response-time analysis for fixed priorities, EDF utilisation / density, and EDF
//! processor-demand analysis (exact; QPA). Multiprocessor: global EDF by GFB and BCL,
//! partitioned first-fit decreasing with EDF or RM on each CPU, and (in [`crate::global`])
//! response-time analysis for global EDF and fixed priorities and a test for EDZL.
//!
//! Each test returns a [`Verdict`]: whether it applies, its answer and a one-line reason.
//! A sufficient test that fails says "not proven", never "unschedulable": only exact tests
//! and necessary conditions (total utilisation above the CPUs) prove a set unschedulable.

use crate::partition::{decreasing_utilisation, fit_test_ordered};
pub use crate::partition::{ffd, ffd_partition, fit_test, Fit, PerCpu};
use crate::taskset::RtTask;
use schedlab_model::format_ns;
use serde::Serialize;

use crate::exact::{cmp_product, cmp_sum, float_sum, Cmp};
use crate::global;
use std::cmp::Ordering;

/// What a test concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The test proves every deadline is met.
    Schedulable,
    /// The test proves a deadline can be missed (exact tests and necessary conditions).
    Unschedulable,
    /// A sufficient test could not prove the set schedulable (it may still be).
    NotProven,
    /// The test does not apply to this set (e.g. a uniprocessor test on 4 CPUs).
    NotApplicable,
}

impl Outcome {
    /// Words for a table.
    pub fn words(self) -> &'static str {
        match self {
            Outcome::Schedulable => "schedulable",
            Outcome::Unschedulable => "unschedulable",
            Outcome::NotProven => "not proven",
            Outcome::NotApplicable => "n/a",
        }
    }

    /// `Some(true)` when proven schedulable, `Some(false)` when the test applies and does
    /// not prove it, `None` when it does not apply.
    pub fn accepted(self) -> Option<bool> {
        match self {
            Outcome::Schedulable => Some(true),
            Outcome::Unschedulable | Outcome::NotProven => Some(false),
            Outcome::NotApplicable => None,
        }
    }
}

/// One test's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// Short name (`ll`, `hyperbolic`, `rta`, `edf-util`, `edf-pda`, `gfb`, `bcl`,
    /// `rta-gedf`, `rta-gfp`, `edzl`, `ffd-edf`, `ffd-rm`).
    pub test: &'static str,
    /// What it tests, for people.
    pub title: &'static str,
    /// Exact (necessary and sufficient) or only sufficient.
    pub exact: bool,
    /// The answer.
    pub outcome: Outcome,
    /// Why, in one line.
    pub why: String,
}

/// Names of every test, in the order [`analyze`] returns them.
pub const TESTS: [&str; 15] = [
    "ll",
    "hyperbolic",
    "rta",
    "edf-util",
    "edf-pda",
    "gfb",
    "bcl",
    "rta-gedf",
    "rta-gfp",
    "edzl",
    "ffd-edf",
    "ffd-rm",
    "ffd-dm",
    "bfd-edf",
    "wfd-edf",
];

thread_local! {
    /// Whether verdicts carry their reasons: off inside [`analyze_outcomes`].
    static REASONS: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// A verdict's reason, formatted only when verdicts carry their reasons (a sweep keeps
/// only the outcomes, and the reasons' formatting, decimals and durations, cost it more
/// than several of the tests).
pub(crate) fn reason(why: impl FnOnce() -> String) -> String {
    if REASONS.with(std::cell::Cell::get) {
        why()
    } else {
        String::new()
    }
}

/// What [`analyze`] answers, each test's name and [`Outcome::accepted`] only, without
/// formatting the reasons: what a sweep's rows keep. The outcomes never depend on the
/// reasons (debug builds compare them with [`analyze`]'s).
pub fn analyze_outcomes(tasks: &[RtTask], cpus: usize) -> Vec<(&'static str, Option<bool>)> {
    /// Reasons back on when the analysis ends, even by a panic.
    struct On;
    impl Drop for On {
        fn drop(&mut self) {
            REASONS.with(|r| r.set(true));
        }
    }
    let outcomes: Vec<(&'static str, Option<bool>)> = {
        REASONS.with(|r| r.set(false));
        let _on = On;
        analyze(tasks, cpus)
            .iter()
            .map(|v| (v.test, v.outcome.accepted()))
            .collect()
    };
    debug_assert_eq!(
        outcomes,
        analyze(tasks, cpus)
            .iter()
            .map(|v| (v.test, v.outcome.accepted()))
            .collect::<Vec<_>>()
    );
    outcomes
}

/// A verdict (the one constructor of the test modules).
pub(crate) fn verdict(
    test: &'static str,
    title: &'static str,
    exact: bool,
    outcome: Outcome,
    why: impl Into<String>,
) -> Verdict {
    Verdict {
        test,
        title,
        exact,
        outcome,
        why: why.into(),
    }
}

/// Σ C/T in floating point (display and clear-cut comparisons only).
pub(crate) fn util(ts: &[RtTask]) -> f64 {
    ts.iter().map(RtTask::utilisation).sum()
}

fn implicit(ts: &[RtTask]) -> bool {
    ts.iter().all(|t| t.d == t.t)
}

/// Every deadline at most its period.
pub(crate) fn constrained(ts: &[RtTask]) -> bool {
    ts.iter().all(|t| t.d <= t.t)
}

/// Every test on `tasks` for `cpus` CPUs, in [`TESTS`] order.
pub fn analyze(tasks: &[RtTask], cpus: usize) -> Vec<Verdict> {
    /// The cache of `util_vs` dropped when the analysis ends, even by a panic (and the
    /// one of an enclosing call, none, put back).
    struct Scope(Option<UtilCache>);
    impl Drop for Scope {
        fn drop(&mut self) {
            let outer = self.0.take();
            UTIL_VS.with(|c| *c.borrow_mut() = outer);
        }
    }
    let _scope = Scope(UTIL_VS.with(|c| {
        c.borrow_mut().replace(UtilCache {
            ptr: tasks.as_ptr(),
            len: tasks.len(),
            known: Vec::with_capacity(2),
        })
    }));
    // The four partitionings place the tasks in one order: sorted once.
    let order = decreasing_utilisation(tasks);
    let part = |how, fit| fit_test_ordered(tasks, cpus, how, fit, Some(&order));
    let ffd_rm = part(PerCpu::Rm, Fit::First);
    let ffd_dm = dm_as_rm(tasks, cpus, &ffd_rm, &order);
    vec![
        liu_layland(tasks, cpus),
        hyperbolic(tasks, cpus),
        rta_test(tasks, cpus),
        edf_utilisation(tasks, cpus),
        edf_pda(tasks, cpus),
        gfb(tasks, cpus),
        bcl(tasks, cpus),
        global::rta_gedf(tasks, cpus),
        global::rta_gfp(tasks, cpus),
        global::edzl(tasks, cpus),
        part(PerCpu::Edf, Fit::First),
        ffd_rm,
        ffd_dm,
        part(PerCpu::Edf, Fit::Best),
        part(PerCpu::Edf, Fit::Worst),
    ]
}

/// `ffd-dm` from `ffd-rm`'s verdict when every deadline equals its period: then the two
/// priority keys (deadline, period) are the same numbers, so the partitioning runs the
/// same steps to the same answer and reason; only the name and title differ. Otherwise
/// (and, in debug builds, as a check) the DM partitioning runs on its own.
fn dm_as_rm(tasks: &[RtTask], cpus: usize, rm: &Verdict, order: &[usize]) -> Verdict {
    if !implicit(tasks) {
        return fit_test_ordered(tasks, cpus, PerCpu::Dm, Fit::First, Some(order));
    }
    let (test, title) = crate::partition::test_name(PerCpu::Dm, Fit::First);
    let dm = Verdict {
        test,
        title,
        ..rm.clone()
    };
    debug_assert_eq!(dm, ffd(tasks, cpus, PerCpu::Dm));
    dm
}

fn one_cpu(test: &'static str, title: &'static str, exact: bool, cpus: usize) -> Option<Verdict> {
    (cpus != 1).then(|| {
        verdict(
            test,
            title,
            exact,
            Outcome::NotApplicable,
            reason(|| {
                format!("a uniprocessor test; the platform has {cpus} CPUs (see ffd-edf, ffd-rm)")
            }),
        )
    })
}

/// Terms C_i / T_i of the utilisation, for [`exact`](crate::exact) comparisons.
pub(crate) fn util_terms(ts: &[RtTask]) -> Vec<(u128, u64)> {
    ts.iter().map(|t| (t.c as u128, t.t)).collect()
}

/// Terms C_i / min(D_i, T_i) of the density (with room for one term more: `gfb` adds
/// one, and a push past the exact capacity reallocated).
pub(crate) fn density_terms(ts: &[RtTask]) -> Vec<(u128, u64)> {
    let mut terms = Vec::with_capacity(ts.len() + 1);
    terms.extend(ts.iter().map(|t| (t.c as u128, t.d.min(t.t))));
    terms
}

thread_local! {
    /// Inside [`analyze`]: its task slice (address and length) and the comparisons of
    /// its total utilisation made so far, by m. A dozen tests ask [`util_vs`] of the
    /// same set (about 1,200 instructions each, a sweep set's 16 exact terms); the slice
    /// is borrowed for the whole call, so its address names the same tasks throughout.
    static UTIL_VS: std::cell::RefCell<Option<UtilCache>> = const { std::cell::RefCell::new(None) };
}

struct UtilCache {
    ptr: *const RtTask,
    len: usize,
    known: Vec<(usize, Cmp)>,
}

/// Total utilisation compared exactly with `m` CPUs (inside [`analyze`], each m's
/// answer for its task set computed once; debug builds compare it with a fresh one).
pub(crate) fn util_vs(ts: &[RtTask], m: usize) -> Cmp {
    let fresh = || cmp_sum(&util_terms(ts), m as u64);
    let cached = UTIL_VS.with(|c| {
        let mut c = c.borrow_mut();
        let cache = c
            .as_mut()
            .filter(|c| c.ptr == ts.as_ptr() && c.len == ts.len())?;
        if let Some(&(_, v)) = cache.known.iter().find(|(k, _)| *k == m) {
            return Some(v);
        }
        let v = fresh();
        cache.known.push((m, v));
        Some(v)
    });
    match cached {
        Some(v) => {
            debug_assert_eq!(v, fresh());
            v
        }
        None => fresh(),
    }
}

/// The verdict for a total utilisation proven above `m` (a necessary condition), or
/// `None` when it is not proven above.
pub(crate) fn over_capacity(
    test: &'static str,
    title: &'static str,
    exact: bool,
    ts: &[RtTask],
    m: usize,
) -> Option<Verdict> {
    (util_vs(ts, m) == Cmp::Known(Ordering::Greater)).then(|| {
        verdict(
            test,
            title,
            exact,
            Outcome::Unschedulable,
            reason(|| {
                format!(
                    "U = {} > {m} (exact rational comparison)",
                    show(util(ts), m)
                )
            }),
        )
    })
}

/// `x` for a message: six decimals, or the distance to `r` when six decimals would hide it.
fn show(x: f64, r: usize) -> String {
    let d = x - r as f64;
    if d != 0.0 && d.abs() < 5e-7 {
        format!("{r} {} {:.1e}", if d > 0.0 { "+" } else { "−" }, d.abs())
    } else {
        format!("{x:.6}")
    }
}

/// Words for an exact comparison's relation.
fn rel(o: Ordering) -> &'static str {
    match o {
        Ordering::Less => "<",
        Ordering::Equal => "=",
        Ordering::Greater => ">",
    }
}

/// Work budget of one test: evaluations of one task's term (a ceiling, a demand, an
/// interference) summed over every iteration. A test that would need more says "not
/// proven (step limit)" — never "unschedulable" — or, when even one pass over every pair
/// of tasks exceeds it, refuses up front. At most about a second of work in a release
/// build.
pub const WORK_LIMIT: u64 = 20_000_000;

/// The verdict of a test refused up front because one pass over every pair of tasks
/// (n(n − 1)/2 terms) exceeds [`WORK_LIMIT`], or `None` when it fits.
pub(crate) fn too_many_pairs(
    test: &'static str,
    title: &'static str,
    exact: bool,
    n: usize,
) -> Option<Verdict> {
    let pairs = n as u64 * n.saturating_sub(1) as u64 / 2;
    (pairs > WORK_LIMIT).then(|| {
        verdict(
            test,
            title,
            exact,
            Outcome::NotProven,
            format!(
                "not run: {n} tasks need at least {pairs} interference terms, above the \
                 limit of {WORK_LIMIT} per test (O(n²) or worse)"
            ),
        )
    })
}

/// Liu & Layland (1973): RM meets implicit deadlines on one CPU if U ≤ n(2^{1/n} − 1).
/// The bound is irrational for n ≥ 2, so the comparison is made with U rounded up and the
/// bound rounded down (never optimistic); for n = 1 it is U ≤ 1, compared exactly.
pub fn liu_layland(ts: &[RtTask], cpus: usize) -> Verdict {
    const T: &str = "Liu & Layland bound (RM, 1 CPU)";
    if let Some(v) = one_cpu("ll", T, false, cpus) {
        return v;
    }
    if !implicit(ts) {
        return verdict(
            "ll",
            T,
            false,
            Outcome::NotApplicable,
            "needs implicit deadlines (D = T)",
        );
    }
    let n = ts.len() as f64;
    let (u, err) = float_sum(&util_terms(ts));
    let ok = if ts.len() == 1 {
        util_vs(ts, 1).at_most() == Some(true)
    } else {
        // exp_m1 keeps the relative error of n(2^{1/n} − 1) within a few ulps for any n.
        let bound = n * (std::f64::consts::LN_2 / n).exp_m1();
        u + err <= bound * (1.0 - 1e-14)
    };
    let bound = if ts.len() == 1 {
        1.0
    } else {
        n * (std::f64::consts::LN_2 / n).exp_m1()
    };
    let (o, rel) = if ok {
        (Outcome::Schedulable, "≤")
    } else {
        (Outcome::NotProven, ">")
    };
    verdict(
        "ll",
        T,
        false,
        o,
        format!(
            "U = {u:.6} {rel} n(2^(1/n) − 1) = {bound:.6} for n = {}",
            ts.len()
        ),
    )
}

/// Bini, Buttazzo & Buttazzo (2003): RM meets implicit deadlines on one CPU if
/// Π(U_i + 1) ≤ 2, compared exactly as Π(C_i + T_i) ≤ 2·ΠT_i.
pub fn hyperbolic(ts: &[RtTask], cpus: usize) -> Verdict {
    const T: &str = "hyperbolic bound (RM, 1 CPU)";
    if let Some(v) = one_cpu("hyperbolic", T, false, cpus) {
        return v;
    }
    if !implicit(ts) {
        return verdict(
            "hyperbolic",
            T,
            false,
            Outcome::NotApplicable,
            "needs implicit deadlines (D = T)",
        );
    }
    let factors: Vec<(u128, u64)> = ts
        .iter()
        .map(|t| (t.c as u128 + t.t as u128, t.t))
        .collect();
    let p: f64 = ts.iter().map(|t| t.utilisation() + 1.0).product();
    let (o, why) = match cmp_product(&factors, 2) {
        Cmp::Known(Ordering::Greater) => (Outcome::NotProven, format!("Π(U_i + 1) = {p:.6} > 2")),
        Cmp::Known(Ordering::Equal) => (
            Outcome::Schedulable,
            "Π(U_i + 1) = 2 exactly (Π(C_i + T_i) = 2·ΠT_i)".to_string(),
        ),
        Cmp::Known(Ordering::Less) => (Outcome::Schedulable, format!("Π(U_i + 1) = {p:.6} < 2")),
        Cmp::Unknown => (
            Outcome::NotProven,
            format!("Π(U_i + 1) = {p:.6}: too close to 2 to decide exactly"),
        ),
    };
    verdict("hyperbolic", T, false, o, why)
}

/// Fixed-point iterations of one response time, or of the busy period, or QPA steps
/// before a test gives up ("not proven"): hostile sets (1 ns periods beside deadlines of
/// years) could otherwise keep it busy for hours.
pub const MAX_STEPS: usize = 1_000_000;

/// What [`response_time`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Response {
    /// The worst-case response time, within the deadline.
    Within(u64),
    /// The response time exceeds the deadline.
    Late,
    /// No answer within [`MAX_STEPS`] iterations.
    GaveUp,
}

/// Worst-case response time of `ts[i]` under fixed priorities on one CPU, where
/// `higher` are the tasks that can delay it (higher or equal priority).
pub fn response_time(ts: &[RtTask], i: usize, higher: &[usize]) -> Response {
    response_time_from(ts, i, higher, 0)
}

/// [`response_time`] iterating from `start` when that is larger than the usual first
/// value: any lower bound of the response time (e.g. the response time before a task was
/// added to `higher`) gives the same fixed point in fewer steps.
pub fn response_time_from(ts: &[RtTask], i: usize, higher: &[usize], start: u64) -> Response {
    let c = ts[i].c as u128;
    let d = ts[i].d as u128;
    let mut r = (c + higher.iter().map(|&j| ts[j].c as u128).sum::<u128>()).max(start as u128);
    for _ in 0..MAX_STEPS {
        if r > d {
            return Response::Late;
        }
        let next = c + higher
            .iter()
            .map(|&j| r.div_ceil(ts[j].t as u128) * ts[j].c as u128)
            .sum::<u128>();
        if next == r {
            return Response::Within(r as u64);
        }
        r = next;
    }
    Response::GaveUp
}

/// RTA on one CPU for the given key (period for RM, deadline for DM): every task whose
/// key is smaller or equal delays a task (equal keys share a priority in the simulator
/// and the kernel, so they are counted as interference: exact for distinct keys,
/// pessimistic for ties). Returns the task with the largest response-time / deadline
/// ratio, or the first task that fails (late, or the analysis gave up). The plain form
/// of [`rta_budgeted`], kept as its reference in the unit tests.
#[cfg(test)]
fn rta_on(
    ts: &[RtTask],
    idx: &[usize],
    by_period: bool,
) -> Result<(usize, u64), (usize, Response)> {
    let key = |j: usize| if by_period { ts[j].t } else { ts[j].d };
    let mut order: Vec<usize> = idx.to_vec();
    order.sort_by_key(|&j| (key(j), j));
    let mut worst: (usize, u64) = (usize::MAX, 0);
    let mut worst_ratio = -1.0f64;
    for &i in &order {
        let higher: Vec<usize> = idx
            .iter()
            .copied()
            .filter(|&j| j != i && key(j) <= key(i))
            .collect();
        match response_time(ts, i, &higher) {
            Response::Within(r) => {
                let ratio = r as f64 / ts[i].d as f64;
                if ratio > worst_ratio {
                    worst_ratio = ratio;
                    worst = (i, r);
                }
            }
            other => return Err((i, other)),
        }
    }
    Ok(worst)
}

/// [`rta_on`] for a whole task set under one [`WORK_LIMIT`] for the test: tasks in
/// priority order, each iteration starting from the larger of C_i + ΣC_j and (when the
/// previous task has a strictly higher priority, so its interferers are a subset of this
/// one's) the previous task's response time plus C_i — a lower bound, so the same fixed
/// point in fewer steps — and stopping as soon as it passes the deadline.
fn rta_budgeted(ts: &[RtTask], by_period: bool) -> Result<(usize, u64), (usize, Response)> {
    let key = |j: usize| if by_period { ts[j].t } else { ts[j].d };
    let mut order: Vec<usize> = (0..ts.len()).collect();
    order.sort_by_key(|&j| (key(j), j));
    let mut work: u64 = 0;
    let mut worst: (usize, u64) = (usize::MAX, 0);
    let mut prev: Option<(u64, u128)> = None; // (key, response time) of the previous task
    let mut group_end = 0;
    for (p, &i) in order.iter().enumerate() {
        if group_end <= p {
            group_end = p + 1;
            while group_end < order.len() && key(order[group_end]) == key(i) {
                group_end += 1;
            }
        }
        let higher = || order[..group_end].iter().filter(move |&&j| j != i);
        let c = ts[i].c as u128;
        let d = ts[i].d as u128;
        let mut r = c + higher().map(|&j| ts[j].c as u128).sum::<u128>();
        if let Some((k, rp)) = prev {
            if k < key(i) {
                r = r.max(rp + c);
            }
        }
        let found = loop {
            if r > d {
                break Response::Late;
            }
            work += group_end as u64;
            if work > WORK_LIMIT {
                break Response::GaveUp;
            }
            let next = c + higher()
                .map(|&j| r.div_ceil(ts[j].t as u128) * ts[j].c as u128)
                .sum::<u128>();
            if next == r {
                break Response::Within(r as u64);
            }
            r = next;
        };
        match found {
            Response::Within(r) => {
                // Largest R/D, compared exactly: r·D_w > R_w·d.
                if worst.0 == usize::MAX
                    || r as u128 * ts[worst.0].d as u128 > worst.1 as u128 * ts[i].d as u128
                {
                    worst = (i, r);
                }
                prev = Some((key(i), r as u128));
            }
            other => return Err((i, other)),
        }
    }
    Ok(worst)
}

/// Exact response-time analysis (Joseph & Pandya 1986; Audsley et al. 1993) for
/// deadline-monotonic priorities (rate-monotonic for implicit deadlines) on one CPU,
/// constrained deadlines, synchronous release. Cost: pseudo-polynomial, bounded by
/// [`WORK_LIMIT`] per test (then "not proven (step limit)").
pub fn rta_test(ts: &[RtTask], cpus: usize) -> Verdict {
    const T: &str = "response-time analysis (RM/DM, 1 CPU)";
    if let Some(v) = one_cpu("rta", T, true, cpus) {
        return v;
    }
    if !constrained(ts) {
        return verdict(
            "rta",
            T,
            true,
            Outcome::NotApplicable,
            "needs constrained deadlines (D ≤ T)",
        );
    }
    let by_period = implicit(ts);
    let ties = {
        let mut k: Vec<u64> = ts
            .iter()
            .map(|t| if by_period { t.t } else { t.d })
            .collect();
        k.sort_unstable();
        k.windows(2).any(|w| w[0] == w[1])
    };
    let exact = !ties;
    if let Some(v) = over_capacity("rta", T, exact, ts, 1) {
        return v;
    }
    if let Some(v) = too_many_pairs("rta", T, exact, ts.len()) {
        return v;
    }
    match rta_budgeted(ts, by_period) {
        Ok((i, r)) => {
            let why = if i == usize::MAX {
                "no task".to_string()
            } else {
                format!(
                    "every response time within its deadline (tightest: {} R = {} ≤ D = {})",
                    ts[i].name,
                    format_ns(r),
                    format_ns(ts[i].d)
                )
            };
            verdict("rta", T, exact, Outcome::Schedulable, why)
        }
        Err((i, Response::GaveUp)) => verdict(
            "rta",
            T,
            exact,
            Outcome::NotProven,
            format!(
                "not proven (step limit): {WORK_LIMIT} interference terms evaluated, \
                 stopped at task {}",
                ts[i].name
            ),
        ),
        Err((i, _)) => {
            let o = if exact {
                Outcome::Unschedulable
            } else {
                Outcome::NotProven
            };
            let mut why = format!(
                "task {} has a response time above its deadline {}",
                ts[i].name,
                format_ns(ts[i].d)
            );
            if !exact {
                why.push_str(" (equal priorities counted as interference)");
            }
            verdict("rta", T, exact, o, why)
        }
    }
}

#[cfg(test)]
mod budgeted_rta {
    use super::*;
    use crate::generate::{generate, Deadlines, GenSpec, Periods};

    /// The warm-started, budgeted RTA finds the same response times (the same tightest
    /// task, the same failing task) as the plain iteration from C_i + ΣC_j.
    #[test]
    fn budgeted_rta_matches_the_plain_iteration() {
        let mut seen = [0; 2];
        for seed in 0..300 {
            let spec = GenSpec {
                tasks: 3 + (seed % 10) as usize,
                cpus: 1,
                utilization: 0.6 + (seed % 9) as f64 * 0.05,
                periods: Periods::LogUniform {
                    min: 1_000_000,
                    max: 50_000_000,
                    granularity: if seed % 3 == 0 { 1_000_000 } else { 0 },
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
            let all: Vec<usize> = (0..ts.len()).collect();
            let by_period = seed % 2 == 0;
            let plain = rta_on(&ts, &all, by_period);
            seen[plain.is_ok() as usize] += 1;
            assert_eq!(rta_budgeted(&ts, by_period), plain, "seed {seed}: {ts:?}");
        }
        assert!(seen[0] > 20 && seen[1] > 20, "both answers: {seen:?}");
    }

    /// A set whose lowest task needs about 10^10 fixed-point steps (its interferers load
    /// the CPU to 1 − 1e-9) stops at the test's budget with "not proven (step limit)",
    /// never "unschedulable", in bounded time.
    #[test]
    fn slow_convergence_stops_at_the_budget() {
        // 100 tasks of 99,999,999 ns every 10^10 ns: U = 0.9999999900; the last task
        // (C = 10^9 ns, D = T = 10^18 ns) converges geometrically at rate 1 − 1e-8.
        let mut ts: Vec<RtTask> = (0..100)
            .map(|i| RtTask::new(&format!("h{i}"), 99_999_999, 10_000_000_000, 10_000_000_000))
            .collect();
        ts.push(RtTask::new(
            "low",
            1_000_000_000,
            1_000_000_000_000_000_000,
            1_000_000_000_000_000_000,
        ));
        let t0 = std::time::Instant::now();
        let v = rta_test(&ts, 1);
        assert_eq!(v.outcome, Outcome::NotProven, "{v:?}");
        assert!(v.why.contains("step limit"), "{}", v.why);
        assert!(t0.elapsed().as_secs() < 60, "{:?}", t0.elapsed());
    }
}

/// EDF on one CPU: U ≤ 1 is exact for implicit deadlines; density Σ C/min(D, T) ≤ 1 is
/// sufficient otherwise. Both compared exactly (rational sums, see [`crate::exact`]).
pub fn edf_utilisation(ts: &[RtTask], cpus: usize) -> Verdict {
    const T: &str = "EDF utilisation / density (1 CPU)";
    let exact = implicit(ts);
    if let Some(v) = one_cpu("edf-util", T, exact, cpus) {
        return v;
    }
    let u = util(ts);
    if exact {
        return match util_vs(ts, 1) {
            Cmp::Known(o) => verdict(
                "edf-util",
                T,
                true,
                if o == Ordering::Greater {
                    Outcome::Unschedulable
                } else {
                    Outcome::Schedulable
                },
                format!(
                    "U = {} {} 1 (implicit deadlines: exact; rational comparison)",
                    show(u, 1),
                    rel(o)
                ),
            ),
            Cmp::Unknown => verdict(
                "edf-util",
                T,
                false,
                Outcome::NotProven,
                format!(
                    "U = {}: within rounding of 1 and too many distinct periods for an \
                     exact sum",
                    show(u, 1)
                ),
            ),
        };
    }
    let dens: f64 = ts.iter().map(RtTask::density).sum();
    if cmp_sum(&density_terms(ts), 1).at_most() == Some(true) {
        verdict(
            "edf-util",
            T,
            false,
            Outcome::Schedulable,
            format!("density {} ≤ 1", show(dens, 1)),
        )
    } else if let Some(v) = over_capacity("edf-util", T, false, ts, 1) {
        v
    } else {
        verdict(
            "edf-util",
            T,
            false,
            Outcome::NotProven,
            format!("density {} > 1 (see edf-pda)", show(dens, 1)),
        )
    }
}

/// Demand bound function: work of jobs released and due in any window of length `t`.
pub fn dbf(ts: &[RtTask], t: u64) -> u128 {
    dbf128(ts, t as u128)
}

fn dbf128(ts: &[RtTask], t: u128) -> u128 {
    ts.iter()
        .filter(|x| x.d as u128 <= t)
        .map(|x| ((t - x.d as u128) / x.t as u128 + 1) * x.c as u128)
        .sum()
}

/// Length of the synchronous busy period (all tasks released at 0), or `None` when it
/// does not converge within `steps` iterations or passes `cap` ns. Computed in u128, so
/// it is exact whenever it answers.
fn busy_period(ts: &[RtTask], cap: u128, steps: usize) -> Option<u128> {
    let mut w: u128 = ts.iter().map(|t| t.c as u128).sum();
    for _ in 0..steps {
        let next: u128 = ts
            .iter()
            .map(|t| w.div_ceil(t.t as u128) * t.c as u128)
            .sum();
        if next == w {
            return Some(w);
        }
        if next > cap {
            return None;
        }
        w = next;
    }
    None
}

/// Least common multiple of the periods, when it fits in u128.
pub(crate) fn hyperperiod(ts: &[RtTask]) -> Option<u128> {
    let mut h: u128 = 1;
    for t in ts {
        let p = t.t as u128;
        let (mut a, mut b) = (h, p);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        h = (h / a).checked_mul(p)?;
    }
    Some(h)
}

/// Largest absolute deadline strictly before `t` (synchronous release), if any.
fn deadline_before(ts: &[RtTask], t: u128) -> Option<u128> {
    ts.iter()
        .filter(|x| (x.d as u128) < t)
        .map(|x| {
            let k = (t - 1 - x.d as u128) / x.t as u128;
            k * x.t as u128 + x.d as u128
        })
        .max()
}

/// An upper bound of Zhang & Burns' L_a = max(D_max, Σ(T_i − D_i)·U_i / (1 − U)) for
/// U < 1, from certified floating-point bounds (numerator rounded up, 1 − U rounded
/// down); `None` when U is within rounding of 1. Any larger bound is as exact (more
/// deadlines are checked), so rounding up costs nothing but time.
fn la_bound(ts: &[RtTask]) -> Option<u128> {
    let (u, err) = float_sum(&util_terms(ts));
    let gap = 1.0 - (u + err);
    if gap.partial_cmp(&1e-12) != Some(Ordering::Greater) {
        return None;
    }
    let slack: Vec<(u128, u64)> = ts
        .iter()
        .filter(|t| t.t > t.d)
        .map(|t| ((t.t - t.d) as u128 * t.c as u128, t.t))
        .collect();
    let (a, aerr) = float_sum(&slack);
    let la = ((a + aerr) / gap) * (1.0 + 1e-9) + 1.0;
    let dmax = ts.iter().map(|t| t.d as u128).max().unwrap_or(0);
    (la < 1e36).then(|| (la.ceil() as u128).max(dmax))
}

/// Processor-demand analysis for EDF on one CPU (Baruah, Rosier & Howell 1990), checked
/// with QPA (Zhang & Burns 2009): exact for any deadlines, in integer arithmetic.
///
/// Decided without the demand check where a classic result decides: U > 1 (proven by an
/// exact rational sum) is unschedulable; D_i ≥ T_i for every task and U ≤ 1 is
/// schedulable (then dbf(t) ≤ U·t); density ≤ 1 is schedulable. Otherwise QPA checks
/// every deadline below L = min(L_a, busy period, hyperperiod + D_max): L_a for U < 1;
/// for U = 1 exactly, dbf(t + H) − (t + H) = dbf(t) − t for constrained deadlines, so the
/// hyperperiod bounds the check. QPA's steps share the test's [`WORK_LIMIT`]; past it the
/// answer is "not proven (step limit)", never a guess.
pub fn edf_pda(ts: &[RtTask], cpus: usize) -> Verdict {
    const T: &str = "EDF processor-demand analysis (QPA, 1 CPU)";
    if let Some(v) = one_cpu("edf-pda", T, true, cpus) {
        return v;
    }
    let u = util(ts);
    let ucmp = util_vs(ts, 1);
    match ucmp {
        Cmp::Known(Ordering::Greater) => {
            return verdict(
                "edf-pda",
                T,
                true,
                Outcome::Unschedulable,
                format!("U = {} > 1 (exact rational comparison)", show(u, 1)),
            )
        }
        Cmp::Unknown => {
            return verdict(
                "edf-pda",
                T,
                false,
                Outcome::NotProven,
                format!(
                    "U = {}: within rounding of 1 and too many distinct periods for an exact sum",
                    show(u, 1)
                ),
            )
        }
        Cmp::Known(_) => {}
    }
    if ts.iter().all(|t| t.d >= t.t) {
        return verdict(
            "edf-pda",
            T,
            true,
            Outcome::Schedulable,
            format!(
                "U = {} ≤ 1 with every D ≥ T: demand ≤ U·t ≤ t at every t",
                show(u, 1)
            ),
        );
    }
    if cmp_sum(&density_terms(ts), 1).at_most() == Some(true) {
        return verdict(
            "edf-pda",
            T,
            true,
            Outcome::Schedulable,
            "density ≤ 1: demand ≤ density·t ≤ t at every t",
        );
    }
    let n = ts.len() as u64;
    let dmax = ts.iter().map(|t| t.d as u128).max().unwrap_or(0);
    let la = if ucmp == Cmp::Known(Ordering::Less) {
        la_bound(ts)
    } else {
        None
    };
    let hyper = if constrained(ts) {
        hyperperiod(ts).and_then(|h| h.checked_add(dmax))
    } else {
        None
    };
    let bp_steps = (WORK_LIMIT / 10 / n.max(1)).clamp(1, 100_000) as usize;
    let cap = la.or(hyper).unwrap_or(u128::MAX / 4);
    let bp = busy_period(ts, cap, bp_steps);
    let mut work = bp_steps as u64 * n;
    let candidates = [
        (la, "L_a"),
        (bp, "busy period"),
        (hyper, "hyperperiod + D_max"),
    ];
    let Some((l, lname)) = candidates
        .iter()
        .filter_map(|&(v, name)| v.map(|v| (v, name)))
        .min_by_key(|&(v, _)| v)
    else {
        return verdict(
            "edf-pda",
            T,
            false,
            Outcome::NotProven,
            "not proven: U is within rounding of 1, the hyperperiod exceeds 2^128 ns and the \
             busy period did not converge: no finite bound to check up to",
        );
    };
    // Forward: every deadline from 0 in increasing order, the demand kept incrementally
    // (O(log n) a deadline), on half the budget: violations near the start (short
    // deadlines) show here at once, and QPA below stops where this scan ended.
    let scanned = match forward_scan(ts, l, (WORK_LIMIT - work.min(WORK_LIMIT)) / 2) {
        Scan::Late(t, h) => {
            return verdict(
                "edf-pda",
                T,
                true,
                Outcome::Unschedulable,
                format!(
                    "demand {} exceeds the time {} up to the deadline at {} (synchronous release)",
                    big_ns(h),
                    big_ns(t),
                    big_ns(t)
                ),
            )
        }
        Scan::Done => {
            return verdict(
                "edf-pda",
                T,
                true,
                Outcome::Schedulable,
                format!(
                    "demand ≤ time at every deadline up to {lname} = {} (U = {})",
                    big_ns(l),
                    show(u, 1)
                ),
            )
        }
        Scan::Upto(f, steps) => {
            work += steps;
            f
        }
    };
    let dmin = ts.iter().map(|t| t.d as u128).min().unwrap_or(0);
    let Some(mut t) = deadline_before(ts, l + 1) else {
        return verdict(
            "edf-pda",
            T,
            true,
            Outcome::Schedulable,
            format!("no deadline up to {lname} = {}", big_ns(l)),
        );
    };
    loop {
        work += 2 * n;
        if work > WORK_LIMIT {
            return verdict(
                "edf-pda",
                T,
                true,
                Outcome::NotProven,
                format!(
                    "not proven (step limit): {WORK_LIMIT} demand terms evaluated, down to \
                     t = {} of {lname} = {}",
                    big_ns(t),
                    big_ns(l)
                ),
            );
        }
        let h = dbf128(ts, t);
        if h > t {
            return verdict(
                "edf-pda",
                T,
                true,
                Outcome::Unschedulable,
                format!(
                    "demand {} exceeds the time {} up to the deadline at {} (synchronous release)",
                    big_ns(h),
                    big_ns(t),
                    big_ns(t)
                ),
            );
        }
        if h <= dmin || t <= scanned {
            return verdict(
                "edf-pda",
                T,
                true,
                Outcome::Schedulable,
                format!(
                    "demand ≤ time at every deadline up to {lname} = {} (U = {})",
                    big_ns(l),
                    show(u, 1)
                ),
            );
        }
        t = if h < t {
            h
        } else {
            match deadline_before(ts, t) {
                Some(d) => d,
                None => {
                    return verdict(
                        "edf-pda",
                        T,
                        true,
                        Outcome::Schedulable,
                        "every deadline checked",
                    )
                }
            }
        };
    }
}

/// What [`forward_scan`] found.
enum Scan {
    /// The demand exceeds the time at this deadline: (deadline, demand).
    Late(u128, u128),
    /// Every deadline up to the bound passed.
    Done,
    /// Every deadline up to this time passed; the budget ended there (and the work spent).
    Upto(u128, u64),
}

/// Every absolute deadline up to `l` in increasing order (synchronous release), the
/// demand dbf(t) kept incrementally, until a deadline where it exceeds t, `l`, or
/// `budget` units of work (a heap step counts as log2(n) + 1).
fn forward_scan(ts: &[RtTask], l: u128, budget: u64) -> Scan {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let cost = (usize::BITS - ts.len().leading_zeros()) as u64 + 1;
    let mut heap: BinaryHeap<Reverse<(u128, usize)>> = ts
        .iter()
        .enumerate()
        .map(|(i, t)| Reverse((t.d as u128, i)))
        .collect();
    let (mut demand, mut spent) = (0u128, 0u64);
    while let Some(&Reverse((t, _))) = heap.peek() {
        if t > l {
            return Scan::Done;
        }
        // Every deadline at t, then the check at t.
        while let Some(&Reverse((d, i))) = heap.peek() {
            if d != t {
                break;
            }
            heap.pop();
            demand += ts[i].c as u128;
            heap.push(Reverse((d + ts[i].t as u128, i)));
            spent += cost;
        }
        if demand > t {
            return Scan::Late(t, demand);
        }
        if spent > budget {
            return Scan::Upto(t, spent);
        }
    }
    Scan::Done
}

/// A time in ns for a message, also beyond u64.
fn big_ns(t: u128) -> String {
    u64::try_from(t)
        .map(format_ns)
        .unwrap_or_else(|_| format!("{t}ns"))
}

/// Goossens, Funk & Baruah (2003), with densities for constrained deadlines: global EDF
/// on m CPUs meets every deadline if Σδ ≤ m − (m − 1)·δmax, compared exactly as
/// Σδ_i + (m − 1)·δmax ≤ m.
pub fn gfb(ts: &[RtTask], m: usize) -> Verdict {
    const T: &str = "GFB density bound (global EDF)";
    if let Some(v) = over_capacity("gfb", T, false, ts, m) {
        return v;
    }
    let dens: f64 = ts.iter().map(RtTask::density).sum();
    // The densest task, by exact cross-multiplication.
    let k = (0..ts.len())
        .max_by(|&a, &b| {
            let (x, y) = (&ts[a], &ts[b]);
            (x.c as u128 * y.d.min(y.t) as u128).cmp(&(y.c as u128 * x.d.min(x.t) as u128))
        })
        .unwrap_or(0);
    let dmax = ts.get(k).map(RtTask::density).unwrap_or(0.0);
    let mut terms = density_terms(ts);
    if let Some(tk) = ts.get(k) {
        terms.push((tk.c as u128 * (m as u128 - 1), tk.d.min(tk.t)));
    }
    let bound = m as f64 - (m as f64 - 1.0) * dmax;
    let (o, rel) = match cmp_sum(&terms, m as u64).at_most() {
        Some(true) => (Outcome::Schedulable, "≤"),
        Some(false) => (Outcome::NotProven, ">"),
        None => (Outcome::NotProven, "≈ (too close to decide exactly)"),
    };
    let what = if implicit(ts) { "U" } else { "density" };
    verdict(
        "gfb",
        T,
        false,
        o,
        reason(|| {
            format!("{what} {dens:.6} {rel} m − (m − 1)·max = {bound:.6} (m = {m}, max {dmax:.6})")
        }),
    )
}

/// Bertogna, Cirinei & Lipari (2005) for global EDF, constrained deadlines: for every task
/// k, Σ_{i≠k} min(I_i, D_k − C_k) < m(D_k − C_k), where I_i bounds the work of task i in
/// task k's window (or equality with some 0 < I_i ≤ D_k − C_k). O(n²); refused up front
/// past [`WORK_LIMIT`] pairs.
pub fn bcl(ts: &[RtTask], m: usize) -> Verdict {
    const T: &str = "BCL interference test (global EDF)";
    if !constrained(ts) {
        return verdict(
            "bcl",
            T,
            false,
            Outcome::NotApplicable,
            "needs constrained deadlines (D ≤ T)",
        );
    }
    if let Some(v) = over_capacity("bcl", T, false, ts, m) {
        return v;
    }
    if let Some(v) = too_many_pairs("bcl", T, false, ts.len()) {
        return v;
    }
    for (k, tk) in ts.iter().enumerate() {
        let slack = (tk.d - tk.c) as i128;
        let mut sum: i128 = 0;
        let mut some_inside = false;
        for (i, ti) in ts.iter().enumerate() {
            if i == k {
                continue;
            }
            // ⌊(D_k − D_i) / T_i⌋ + 1, at least 0: with D_i ≤ T_i a negative difference is
            // above −T_i, so it gives 0, and a non-negative one divides in u64 (an i128
            // division is a library call).
            let n = if tk.d >= ti.d {
                ((tk.d - ti.d) / ti.t) as i128 + 1
            } else {
                0
            };
            debug_assert_eq!(
                n,
                ((tk.d as i128 - ti.d as i128).div_euclid(ti.t as i128) + 1).max(0)
            );
            let rest = (tk.d as i128 - n * ti.t as i128).max(0);
            let work = n * ti.c as i128 + (ti.c as i128).min(rest);
            let w = work.min(slack);
            if w > 0 && work <= slack {
                some_inside = true;
            }
            sum += w;
        }
        let cap = m as i128 * slack;
        if sum > cap || (sum == cap && !some_inside) {
            return verdict(
                "bcl",
                T,
                false,
                Outcome::NotProven,
                reason(|| {
                    format!(
                        "task {}: interference {} reaches m·(D − C) = {}",
                        tk.name,
                        format_ns(sum as u64),
                        format_ns(cap.min(u64::MAX as i128) as u64)
                    )
                }),
            );
        }
    }
    verdict(
        "bcl",
        T,
        false,
        Outcome::Schedulable,
        reason(|| format!("every task's interference < {m}·(D − C)")),
    )
}

#[cfg(test)]
mod unit {
    use super::*;

    fn t(c: u64, tt: u64) -> RtTask {
        RtTask::new("x", c, tt, tt)
    }

    #[test]
    fn textbook_cases() {
        // U = 0.833 is above the bound for 3 tasks (0.780); 0.667 is below it.
        let ts = vec![t(1, 4), t(2, 6), t(3, 12)];
        assert_eq!(liu_layland(&ts, 1).outcome, Outcome::NotProven);
        assert_eq!(rta_test(&ts, 1).outcome, Outcome::Schedulable);
        let ts = vec![t(1, 4), t(1, 6), t(3, 12)];
        assert_eq!(liu_layland(&ts, 1).outcome, Outcome::Schedulable);
        let ts = vec![t(2, 5), t(4, 7)]; // U = 0.971; RTA: R2 = 4+2*2=8 > 7
        assert_eq!(liu_layland(&ts, 1).outcome, Outcome::NotProven);
        assert_eq!(rta_test(&ts, 1).outcome, Outcome::Unschedulable);
        assert_eq!(edf_utilisation(&ts, 1).outcome, Outcome::Schedulable);
        assert_eq!(edf_pda(&ts, 1).outcome, Outcome::Schedulable);
        // Harmonic periods at U = 1: RM schedulable, hyperbolic not proven.
        let ts = vec![t(1, 2), t(2, 4)];
        assert_eq!(rta_test(&ts, 1).outcome, Outcome::Schedulable);
        assert_eq!(hyperbolic(&ts, 1).outcome, Outcome::NotProven);
        // Constrained: density 0.5/1 + ... demand check.
        let ts = vec![RtTask::new("a", 2, 10, 3), RtTask::new("b", 2, 10, 3)];
        assert_eq!(edf_pda(&ts, 1).outcome, Outcome::Unschedulable);
        assert_eq!(dbf(&ts, 3), 4);
        // Dhall: m light tasks and one heavy: GFB fails, partitioning works.
        let mut ts: Vec<RtTask> = (0..2).map(|_| t(2, 10)).collect();
        ts.push(t(10, 11));
        assert_eq!(gfb(&ts, 2).outcome, Outcome::NotProven);
        assert_eq!(ffd(&ts, 2, PerCpu::Edf).outcome, Outcome::Schedulable);
        assert_eq!(
            gfb(&[t(9, 10), t(9, 10), t(9, 10)], 2).outcome,
            Outcome::Unschedulable
        );
    }
}

#[cfg(test)]
mod shared_work {
    use super::*;
    use crate::generate::{generate, Deadlines, GenSpec};

    /// `analyze` gives `ffd-dm` the verdict of its own partitioning, whether it reuses
    /// `ffd-rm`'s (every D = T) or not; with D = T that verdict is `ffd-rm`'s renamed, and
    /// both outcomes (placed, not placed) occur.
    #[test]
    fn ffd_dm_is_its_own_partitioning() {
        let mut outcomes = std::collections::BTreeSet::new();
        for seed in 0..200u64 {
            let implicit_deadlines = seed % 4 != 0;
            let spec = GenSpec {
                tasks: 4 + (seed % 13) as usize,
                cpus: 1 + (seed % 4) as usize,
                utilization: 0.5 + (seed % 7) as f64 * 0.5,
                deadlines: if implicit_deadlines {
                    Deadlines::Implicit
                } else {
                    Deadlines::Constrained { min_ratio: 0.3 }
                },
                seed,
                ..GenSpec::default()
            };
            let Ok(set) = generate(&spec) else { continue };
            let ts = set.rt_tasks();
            let all = analyze(&ts, spec.cpus);
            let dm = &all[TESTS.iter().position(|&t| t == "ffd-dm").unwrap()];
            let rm = &all[TESTS.iter().position(|&t| t == "ffd-rm").unwrap()];
            assert_eq!(dm, &ffd(&ts, spec.cpus, PerCpu::Dm), "seed {seed}");
            if implicit_deadlines {
                assert_eq!((&dm.outcome, &dm.why), (&rm.outcome, &rm.why));
                outcomes.insert(format!("{:?}", dm.outcome));
            }
        }
        assert!(outcomes.contains("Schedulable"), "{outcomes:?}");
        assert!(outcomes.contains("NotProven"), "{outcomes:?}");
    }
}

#[cfg(test)]
mod outcomes_only {
    use super::*;
    use crate::generate::{generate, Deadlines, GenSpec};

    /// `analyze_outcomes` gives every test's name and `accepted()` as `analyze` does, on
    /// sets on 1 to 4 CPUs (uniprocessor tests applying or not, global and partition
    /// tests accepting and not), and leaves the reasons on for the next `analyze`.
    #[test]
    fn outcomes_match_analyze_and_reasons_come_back() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..120u64 {
            let spec = GenSpec {
                tasks: 3 + (seed % 12) as usize,
                cpus: 1 + (seed % 4) as usize,
                utilization: 0.4 + (seed % 9) as f64 * 0.4,
                deadlines: if seed % 3 == 0 {
                    Deadlines::Constrained { min_ratio: 0.3 }
                } else {
                    Deadlines::Implicit
                },
                seed,
                ..GenSpec::default()
            };
            let Ok(set) = generate(&spec) else { continue };
            let ts = set.rt_tasks();
            let fast = analyze_outcomes(&ts, spec.cpus);
            let full = analyze(&ts, spec.cpus);
            let want: Vec<_> = full
                .iter()
                .map(|v| (v.test, v.outcome.accepted()))
                .collect();
            assert_eq!(fast, want, "seed {seed}");
            assert!(
                full.iter().all(|v| !v.why.is_empty()),
                "seed {seed}: {full:?}"
            );
            seen.extend(want.iter().map(|&(_, a)| a));
        }
        assert_eq!(seen.len(), 3, "{seen:?}");
    }
}
