//! Schedulability tests for sporadic tasks `(C, D, T)` in integer nanoseconds.
//!
//! Uniprocessor: Liu & Layland and the hyperbolic bound for rate-monotonic, exact
//! response-time analysis for fixed priorities, EDF utilisation / density, and EDF
//! processor-demand analysis (exact; QPA). Multiprocessor: global EDF by GFB and BCL,
//! partitioned first-fit decreasing with EDF or RM on each CPU.
//!
//! Each test returns a [`Verdict`]: whether it applies, its answer and a one-line reason.
//! A sufficient test that fails says "not proven", never "unschedulable": only exact tests
//! and necessary conditions (total utilisation above the CPUs) prove a set unschedulable.

pub use crate::partition::{ffd, ffd_partition, fit_test, Fit, PerCpu};
use crate::taskset::RtTask;
use schedlab_model::format_ns;
use serde::Serialize;

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
    /// `ffd-edf`, `ffd-rm`).
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
pub const TESTS: [&str; 12] = [
    "ll",
    "hyperbolic",
    "rta",
    "edf-util",
    "edf-pda",
    "gfb",
    "bcl",
    "ffd-edf",
    "ffd-rm",
    "ffd-dm",
    "bfd-edf",
    "wfd-edf",
];

fn verdict(
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

fn util(ts: &[RtTask]) -> f64 {
    ts.iter().map(RtTask::utilisation).sum()
}

fn implicit(ts: &[RtTask]) -> bool {
    ts.iter().all(|t| t.d == t.t)
}

fn constrained(ts: &[RtTask]) -> bool {
    ts.iter().all(|t| t.d <= t.t)
}

/// Every test on `tasks` for `cpus` CPUs, in [`TESTS`] order.
pub fn analyze(tasks: &[RtTask], cpus: usize) -> Vec<Verdict> {
    vec![
        liu_layland(tasks, cpus),
        hyperbolic(tasks, cpus),
        rta_test(tasks, cpus),
        edf_utilisation(tasks, cpus),
        edf_pda(tasks, cpus),
        gfb(tasks, cpus),
        bcl(tasks, cpus),
        ffd(tasks, cpus, PerCpu::Edf),
        ffd(tasks, cpus, PerCpu::Rm),
        ffd(tasks, cpus, PerCpu::Dm),
        fit_test(tasks, cpus, PerCpu::Edf, Fit::Best),
        fit_test(tasks, cpus, PerCpu::Edf, Fit::Worst),
    ]
}

fn one_cpu(test: &'static str, title: &'static str, exact: bool, cpus: usize) -> Option<Verdict> {
    (cpus != 1).then(|| {
        verdict(
            test,
            title,
            exact,
            Outcome::NotApplicable,
            format!("a uniprocessor test; the platform has {cpus} CPUs (see ffd-edf, ffd-rm)"),
        )
    })
}

/// Liu & Layland (1973): RM meets implicit deadlines on one CPU if U ≤ n(2^{1/n} − 1).
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
    let bound = n * (2f64.powf(1.0 / n) - 1.0);
    let u = util(ts);
    let (o, rel) = if u <= bound {
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
/// Π(U_i + 1) ≤ 2.
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
    let p: f64 = ts.iter().map(|t| t.utilisation() + 1.0).product();
    let (o, rel) = if p <= 2.0 {
        (Outcome::Schedulable, "≤")
    } else {
        (Outcome::NotProven, ">")
    };
    verdict(
        "hyperbolic",
        T,
        false,
        o,
        format!("Π(U_i + 1) = {p:.6} {rel} 2"),
    )
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
/// ratio, or the first task that fails (late, or the analysis gave up).
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

/// Exact response-time analysis (Joseph & Pandya 1986; Audsley et al. 1993) for
/// deadline-monotonic priorities (rate-monotonic for implicit deadlines) on one CPU,
/// constrained deadlines, synchronous release.
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
    let all: Vec<usize> = (0..ts.len()).collect();
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
    match rta_on(ts, &all, by_period) {
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
                "gave up on task {} after {MAX_STEPS} iterations of its response time",
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

/// EDF on one CPU: U ≤ 1 is exact for implicit deadlines; density Σ C/min(D, T) ≤ 1 is
/// sufficient otherwise.
pub fn edf_utilisation(ts: &[RtTask], cpus: usize) -> Verdict {
    const T: &str = "EDF utilisation / density (1 CPU)";
    let exact = implicit(ts);
    if let Some(v) = one_cpu("edf-util", T, exact, cpus) {
        return v;
    }
    if exact {
        let u = util(ts);
        let o = if u <= 1.0 + 1e-12 {
            Outcome::Schedulable
        } else {
            Outcome::Unschedulable
        };
        let rel = if o == Outcome::Schedulable {
            "≤"
        } else {
            ">"
        };
        verdict(
            "edf-util",
            T,
            true,
            o,
            format!("U = {u:.6} {rel} 1 (implicit deadlines: exact)"),
        )
    } else {
        let dens: f64 = ts.iter().map(RtTask::density).sum();
        if dens <= 1.0 + 1e-12 {
            verdict(
                "edf-util",
                T,
                false,
                Outcome::Schedulable,
                format!("density {dens:.6} ≤ 1"),
            )
        } else if util(ts) > 1.0 + 1e-12 {
            verdict(
                "edf-util",
                T,
                false,
                Outcome::Unschedulable,
                format!("U = {:.6} > 1", util(ts)),
            )
        } else {
            verdict(
                "edf-util",
                T,
                false,
                Outcome::NotProven,
                format!("density {dens:.6} > 1 (see edf-pda)"),
            )
        }
    }
}

/// Demand bound function: work of jobs released and due in any window of length `t`.
pub fn dbf(ts: &[RtTask], t: u64) -> u128 {
    ts.iter()
        .filter(|x| x.d <= t)
        .map(|x| ((t - x.d) / x.t + 1) as u128 * x.c as u128)
        .sum()
}

/// Length of the synchronous busy period (all tasks released at 0), or `None` when it
/// does not converge within [`MAX_STEPS`] iterations or `cap` ns.
fn busy_period(ts: &[RtTask], cap: u128) -> Option<u128> {
    let mut w: u128 = ts.iter().map(|t| t.c as u128).sum();
    for _ in 0..MAX_STEPS {
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

/// Processor-demand analysis for EDF on one CPU (Baruah, Rosier & Howell 1990), checked
/// with QPA (Zhang & Burns 2009) over the synchronous busy period: exact for any
/// deadlines.
pub fn edf_pda(ts: &[RtTask], cpus: usize) -> Verdict {
    const T: &str = "EDF processor-demand analysis (QPA, 1 CPU)";
    if let Some(v) = one_cpu("edf-pda", T, true, cpus) {
        return v;
    }
    let u = util(ts);
    if u > 1.0 + 1e-12 {
        return verdict(
            "edf-pda",
            T,
            true,
            Outcome::Unschedulable,
            format!("U = {u:.6} > 1"),
        );
    }
    let Some(l) = busy_period(ts, 1u128 << 80) else {
        return verdict(
            "edf-pda",
            T,
            true,
            Outcome::NotProven,
            format!("U = {u:.9}: the busy period is too long to check"),
        );
    };
    let dmin = ts.iter().map(|t| t.d as u128).min().unwrap_or(0);
    let Some(mut t) = deadline_before(ts, l + 1) else {
        return verdict(
            "edf-pda",
            T,
            true,
            Outcome::Schedulable,
            "no deadline in the busy period",
        );
    };
    let big = |t: u128| t.min(u64::MAX as u128) as u64;
    for _ in 0..MAX_STEPS {
        let h = dbf(ts, big(t));
        if h > t {
            return verdict(
                "edf-pda",
                T,
                true,
                Outcome::Unschedulable,
                format!(
                    "demand {} exceeds the time {} up to the deadline at {} (synchronous release)",
                    format_ns(big(h)),
                    format_ns(big(t)),
                    format_ns(big(t))
                ),
            );
        }
        if h <= dmin {
            return verdict(
                "edf-pda",
                T,
                true,
                Outcome::Schedulable,
                format!(
                    "demand ≤ time at every deadline in the busy period of {} (U = {u:.6})",
                    format_ns(big(l))
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
    verdict(
        "edf-pda",
        T,
        true,
        Outcome::NotProven,
        format!("gave up after {MAX_STEPS} steps of the demand check"),
    )
}

/// Goossens, Funk & Baruah (2003), with densities for constrained deadlines: global EDF
/// on m CPUs meets every deadline if Σδ ≤ m − (m − 1)·δmax.
pub fn gfb(ts: &[RtTask], m: usize) -> Verdict {
    const T: &str = "GFB density bound (global EDF)";
    let u = util(ts);
    if u > m as f64 + 1e-12 {
        return verdict(
            "gfb",
            T,
            false,
            Outcome::Unschedulable,
            format!("U = {u:.6} > {m} CPUs"),
        );
    }
    let dens: f64 = ts.iter().map(RtTask::density).sum();
    let dmax = ts.iter().map(RtTask::density).fold(0.0, f64::max);
    let bound = m as f64 - (m as f64 - 1.0) * dmax;
    let (o, rel) = if dens <= bound + 1e-12 {
        (Outcome::Schedulable, "≤")
    } else {
        (Outcome::NotProven, ">")
    };
    let what = if implicit(ts) { "U" } else { "density" };
    verdict(
        "gfb",
        T,
        false,
        o,
        format!("{what} {dens:.6} {rel} m − (m − 1)·max = {bound:.6} (m = {m}, max {dmax:.6})"),
    )
}

/// Bertogna, Cirinei & Lipari (2005) for global EDF, constrained deadlines: for every task
/// k, Σ_{i≠k} min(I_i, D_k − C_k) < m(D_k − C_k), where I_i bounds the work of task i in
/// task k's window (or equality with some 0 < I_i ≤ D_k − C_k).
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
    let u = util(ts);
    if u > m as f64 + 1e-12 {
        return verdict(
            "bcl",
            T,
            false,
            Outcome::Unschedulable,
            format!("U = {u:.6} > {m} CPUs"),
        );
    }
    for (k, tk) in ts.iter().enumerate() {
        let slack = (tk.d - tk.c) as i128;
        let mut sum: i128 = 0;
        let mut some_inside = false;
        for (i, ti) in ts.iter().enumerate() {
            if i == k {
                continue;
            }
            let n = ((tk.d as i128 - ti.d as i128).div_euclid(ti.t as i128) + 1).max(0);
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
                format!(
                    "task {}: interference {} reaches m·(D − C) = {}",
                    tk.name,
                    format_ns(sum as u64),
                    format_ns(cap.min(u64::MAX as i128) as u64)
                ),
            );
        }
    }
    verdict(
        "bcl",
        T,
        false,
        Outcome::Schedulable,
        format!("every task's interference < {m}·(D − C)"),
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
