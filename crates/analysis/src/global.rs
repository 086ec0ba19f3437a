//! Sufficient tests for global scheduling on m identical CPUs beyond GFB and BCL:
//! response-time analysis for global EDF and global fixed priorities (Bertogna & Cirinei
//! 2007) and a zero-laxity counting test for EDZL (after Cirinei & Baker 2007).
//!
//! All three assume sporadic tasks with constrained deadlines (D ≤ T), independent,
//! fully preemptive, migrating freely, every job running for at most C, and are
//! computed in integer nanoseconds. They answer "schedulable" or "not proven", never
//! "unschedulable" (except when U > m, which is necessary).

use crate::exact::Cmp;
use crate::taskset::RtTask;
use crate::tests::{over_capacity, reason, too_many_pairs, util_vs, Outcome, Verdict, WORK_LIMIT};
use schedlab_model::format_ns;
use std::cmp::Ordering;

fn verdict(test: &'static str, title: &'static str, outcome: Outcome, why: String) -> Verdict {
    Verdict {
        test,
        title,
        exact: false,
        outcome,
        why,
    }
}

/// Checks shared by the three tests: constrained deadlines, U ≤ m, the pair budget.
fn precheck(test: &'static str, title: &'static str, ts: &[RtTask], m: usize) -> Option<Verdict> {
    if ts.iter().any(|t| t.d > t.t) {
        return Some(verdict(
            test,
            title,
            Outcome::NotApplicable,
            "needs constrained deadlines (D ≤ T)".into(),
        ));
    }
    if let Some(v) = over_capacity(test, title, false, ts, m) {
        return Some(v);
    }
    if util_vs(ts, m) == Cmp::Unknown {
        return Some(verdict(
            test,
            title,
            Outcome::NotProven,
            format!("U within rounding of {m} and too many distinct periods for an exact sum"),
        ));
    }
    too_many_pairs(test, title, false, ts.len())
}

/// Bertogna & Cirinei's bound on the work of task `i` in any window of length `l`, given
/// a bound `r` (C_i ≤ r ≤ D_i) on its response time: the carry-in job finishing `r`
/// after its release at the window's start, then jobs every T_i, the last one cut by
/// the window's end. W = N·C + min(C, L + R − C − N·T), N = ⌊(L + R − C) / T⌋.
pub fn workload(t: &RtTask, r: u64, l: u64) -> u128 {
    work_in(t.c, t.t, r, l)
}

/// [`workload`] of a task given by its C and T.
fn work_in(c: u64, t: u64, r: u64, l: u64) -> u128 {
    // u64 when L + R fits (N·C ≤ span since C ≤ T): u128 division is several times slower.
    if let Some(span) = (l.checked_add(r)).map(|x| x - c) {
        let n = span / t;
        return (n * c + c.min(span - n * t)) as u128;
    }
    let (c, p) = (c as u128, t as u128);
    let span = l as u128 + r as u128 - c;
    let n = span / p;
    n * c + c.min(span - n * p)
}

/// Bertogna & Cirinei's EDF-specific bound on the interference of task `i` on a job of
/// task `k` (jobs of i with deadlines inside k's window), with i's slack D_i − R_i:
/// ⌊D_k / T_i⌋·C_i + min(C_i, (D_k mod T_i − (D_i − R_i))⁺).
fn edf_interference(ti: &RtTask, ri: u64, dk: u64) -> u128 {
    // ⌊D_k/T_i⌋·C_i ≤ D_k since C_i ≤ T_i: u64 throughout.
    let (c, p) = (ti.c, ti.t);
    ((dk / p) * c + c.min((dk % p).saturating_sub(ti.d.saturating_sub(ri)))) as u128
}

/// [`edf_interference`] in two parts fixed for the whole RTA, (⌊D_k/T_i⌋·C_i, D_k mod T_i),
/// so that the term, computed again at each of task k's iterations as R_i rises, takes
/// no division: ⌊D_k/T_i⌋·C_i + min(C_i, (D_k mod T_i − (D_i − R_i))⁺).
fn edf_parts(ti: &RtTask, dk: u64) -> (u64, u64) {
    ((dk / ti.t) * ti.c, dk % ti.t)
}

/// [`edf_interference`] from its [`edf_parts`].
#[inline(always)]
fn edf_from_parts(ti: &RtTask, ri: u64, (whole, rest): (u64, u64)) -> u64 {
    whole + ti.c.min(rest.saturating_sub(ti.d.saturating_sub(ri)))
}

/// Which global scheduler an RTA is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sched {
    /// Global EDF: every other task interferes, bounded also by the EDF-specific term.
    Edf,
    /// Global fixed priorities, deadline-monotonic (rate-monotonic when D = T): tasks
    /// with a shorter or equal deadline interfere (equal ones both ways, as the
    /// simulator and the kernel share a priority between them).
    Fp,
}

/// Why an RTA stopped without proving the set.
enum Stop {
    /// Task `k`'s bound exceeds its deadline.
    Late(usize, u128),
    /// Task `k`'s iteration crept upwards for [`INNER_STEPS`] steps and D_k is not a
    /// post-fixed point either.
    Creeping(usize),
    /// The test's work budget ran out.
    Budget,
}

/// Steps of one task's response-time iteration before trying its deadline instead: when
/// m or more interferers are capped at R − C + 1 the iteration can rise by a nanosecond
/// a step, for millions of steps.
const INNER_STEPS: usize = 256;

/// One interferer of the task under analysis, with what stays fixed while that task's
/// bound iterates (its response-time bound and its EDF-specific term) and its job count
/// in the current window.
#[derive(Clone, Copy)]
struct Interferer {
    /// C_i.
    c: u64,
    /// T_i.
    t: u64,
    /// R_i.
    r: u64,
    /// The EDF-specific bound J_i^k (u64::MAX under fixed priorities: no such term;
    /// [`edf_interference`] is at most D_k + C_i, computed in u64).
    edf: u64,
    /// Whole periods in the span `at` + R_i − C_i = `n`·T_i + `rem` (kept by
    /// [`Terms::place_line`] and [`Terms::refresh_line`]).
    n: u64,
    /// The rest of the span after `n` whole periods.
    rem: u64,
    /// The window where the term was last placed.
    at: u64,
    /// The term's value there.
    g: u64,
    /// It rises with slope 1 from there (else it is flat).
    rising: bool,
    /// The last window its piece holds for (`at` + how long, saturated).
    end: u64,
}

/// The interferers of the task whose bound iterates, kept from one step to the next.
struct Terms {
    /// C_k.
    ck: u64,
    list: Vec<Interferer>,
    /// The largest R_i: every span fits in u64 when x + `r_max` does.
    r_max: u64,
    /// Every interference sum the line takes at a window up to D_k fits in u64 (see
    /// [`Terms::sums_fit`]); else the bound is computed by [`Terms::bound_at`] in u128.
    sums_fit: bool,
    /// Under EDF, [`edf_parts`] of each pair (task k, interferer i) at k·n + i (computed
    /// once per RTA); empty under fixed priorities.
    edf_parts: Vec<(u64, u64)>,
}

impl Terms {
    /// The tasks interfering with task `k`: every other one under EDF, those with a
    /// deadline at most D_k under fixed priorities. Only R_k changes while k's bound
    /// iterates (and k does not interfere with itself), so each term's R_i and
    /// EDF-specific bound are fixed for that whole iteration and computed once here.
    fn of(&mut self, ts: &[RtTask], r: &[u64], k: usize, how: Sched) {
        let tk = &ts[k];
        self.ck = tk.c;
        self.list.clear();
        self.r_max = 0;
        self.sums_fit = Self::sums_fit(ts.len(), tk.d);
        let parts = self.edf_parts.get(k * ts.len()..).unwrap_or(&[]);
        for (i, ti) in ts.iter().enumerate() {
            if i == k || (how == Sched::Fp && ti.d > tk.d) {
                continue;
            }
            self.r_max = self.r_max.max(r[i]);
            self.list.push(Interferer {
                c: ti.c,
                t: ti.t,
                r: r[i],
                edf: match how {
                    Sched::Edf => {
                        let edf = edf_from_parts(ti, r[i], parts[i]);
                        debug_assert_eq!(edf as u128, edf_interference(ti, r[i], tk.d));
                        edf
                    }
                    Sched::Fp => u64::MAX,
                },
                n: 0,
                rem: 0,
                at: 0,
                g: 0,
                rising: false,
                end: 0,
            });
        }
    }

    /// Whether a line's sums fit in u64 for `n` tasks and the deadline `d`: the line is
    /// read only at windows x ≤ D_k (a bound past D_k ends the iteration before its window
    /// is taken), where each of the n − 1 terms is at most x − C_k + 1 ≤ D_k + 1, and
    /// [`Terms::refresh_line`]'s extended sum is at most twice that.
    fn sums_fit(n: usize, d: u64) -> bool {
        2 * (n as u128) * (d as u128 + 1) <= u64::MAX as u128
    }

    /// C_k + ⌊(1/m) Σ_{i interferes with k} min(W_i(x), [EDF: J_i^k,] x − C_k + 1)⌋,
    /// each W_i by [`workload`] (a division per term).
    fn bound_at(&self, x: u64, m: usize) -> u128 {
        let cap = (x - self.ck) as u128 + 1;
        let mut sum: u128 = 0;
        for ti in &self.list {
            sum += work_in(ti.c, ti.t, ti.r, x).min(cap).min(ti.edf as u128);
        }
        self.ck as u128 + per_cpu(sum, m)
    }

    /// Place every term at window `x` (one division each) and draw the interference sum
    /// Σ min(W_i, J_i^k, x − C_k + 1) there as a line in the window, exact up to a
    /// horizon (each term's piece, see [`set_piece`], summed); None when a span does not
    /// fit in u64, or the sums might not ([`Terms::sums_fit`]; then [`Terms::bound_at`]
    /// goes on, with its u128 path).
    fn place_line(&mut self, x: u64) -> Option<Line> {
        if !self.sums_fit {
            return None;
        }
        x.checked_add(self.r_max)?;
        let cap = (x - self.ck).saturating_add(1);
        let (mut sum, mut slope, mut end) = (0u64, 0u64, u64::MAX);
        for ti in &mut self.list {
            let span = x + ti.r - ti.c;
            ti.n = span / ti.t;
            ti.rem = span - ti.n * ti.t;
            set_piece(ti, x, cap);
            sum += ti.g;
            slope += ti.rising as u64;
            end = end.min(ti.end);
        }
        Some(Line {
            at: x,
            sum,
            slope,
            horizon: end - x,
        })
    }

    /// The line `l` moved to the window `to` past its horizon: only the terms whose
    /// piece ended before `to` are placed again (their span grows by `to − at`, a
    /// division only when it crosses a period boundary) and their values replace their
    /// pieces' extension in the sum; every other term's piece still holds at `to`.
    /// None as [`Terms::place_line`].
    fn refresh_line(&mut self, l: &Line, to: u64) -> Option<Line> {
        to.checked_add(self.r_max)?;
        let cap = (to - self.ck).saturating_add(1);
        // Σ over the terms of g_i + (rising_i)·(to − at_i): each piece extended to `to`.
        let mut sum = l.sum + l.slope * (to - l.at);
        let mut slope = l.slope;
        let mut end = u64::MAX;
        for ti in &mut self.list {
            if ti.end < to {
                let delta = to - ti.at;
                sum -= ti.g + if ti.rising { delta } else { 0 };
                slope -= ti.rising as u64;
                // rem + delta ≤ the new span, which fits.
                let rem = ti.rem + delta;
                if rem < ti.t {
                    ti.rem = rem;
                } else {
                    let q = rem / ti.t;
                    ti.n += q;
                    ti.rem = rem - q * ti.t;
                }
                set_piece(ti, to, cap);
                sum += ti.g;
                slope += ti.rising as u64;
            }
            end = end.min(ti.end);
        }
        Some(Line {
            at: to,
            sum,
            slope,
            horizon: end - to,
        })
    }
}

/// The piece of a term placed at window `x` (`cap` = x − C_k + 1 saturated: only compared
/// with u64 values, which it then exceeds): the term is the least of three
/// non-decreasing pieces, W_i = n·C_i + min(C_i, rem) (as [`workload`]'s u64 path
/// computes it), rising with slope 1 while rem < C_i and flat until the next period
/// otherwise; the cap, rising with slope 1; and J_i^k, flat. It keeps the slope of its
/// least piece (the least slope on a tie) until that piece changes slope or a flat
/// piece above it is reached.
#[inline(always)]
fn set_piece(ti: &mut Interferer, x: u64, cap: u64) {
    let (w, w_rises, w_until) = if ti.rem < ti.c {
        (ti.n * ti.c + ti.rem, true, ti.c - ti.rem)
    } else {
        (ti.n * ti.c + ti.c, false, ti.t - ti.rem)
    };
    let g = w.min(cap).min(ti.edf);
    let (rising, until) = if g == ti.edf {
        // Flat for good: the other two pieces never come down.
        (false, u64::MAX)
    } else if g == w && !w_rises {
        (false, w_until)
    } else {
        // Rising (W with slope 1, or the cap): until W's slope changes, J_i^k is
        // reached, or a flat W is.
        let mut u = w_until.min(ti.edf - g);
        if !w_rises && w > g {
            u = u.min(w - g);
        }
        (true, u)
    };
    ti.at = x;
    ti.g = g;
    ti.rising = rising;
    ti.end = x.saturating_add(until);
}

/// ⌊sum / m⌋, in u64 when the sum fits (u128 division is a library call, many times
/// slower, and the sum of a real set's terms fits), by a shift when m is a power of two
/// (a division is tens of cycles, and every step of the iteration takes one).
fn per_cpu(sum: u128, m: usize) -> u128 {
    match u64::try_from(sum) {
        Ok(s) if m.is_power_of_two() => (s >> m.trailing_zeros()) as u128,
        Ok(s) => (s / m as u64) as u128,
        Err(_) => sum / m as u128,
    }
}

/// ⌊sum / m⌋ for a sum in u64, by a shift when m is a power of two (fixed per RTA).
#[derive(Clone, Copy)]
struct PerCpu {
    m: u64,
    /// log2 m when m is a power of two.
    shift: Option<u32>,
}

impl PerCpu {
    fn new(m: usize) -> Self {
        PerCpu {
            m: m as u64,
            shift: m.is_power_of_two().then(|| m.trailing_zeros()),
        }
    }

    #[inline(always)]
    fn of(self, sum: u64) -> u64 {
        match self.shift {
            Some(s) => sum >> s,
            None => sum / self.m,
        }
    }
}

/// The interference sum from window `at` to `at + horizon`: `sum + slope·(x − at)`, in
/// u64 (a line is drawn only when its sums fit, [`Terms::sums_fit`]).
#[derive(Clone, Copy)]
struct Line {
    at: u64,
    sum: u64,
    slope: u64,
    horizon: u64,
}

impl Line {
    /// Whether window `x` (≥ `at`) is within the horizon.
    fn covers(&self, x: u64) -> bool {
        x - self.at <= self.horizon
    }

    /// The bound at window `x` (≤ D_k): C_k + ⌊sum(x) / m⌋.
    #[inline(always)]
    fn bound(&self, ck: u64, x: u64, m: PerCpu) -> u64 {
        ck + m.of(self.sum + self.slope * (x - self.at))
    }

    /// The last window the line covers.
    fn last(&self) -> u64 {
        self.at + self.horizon
    }

    /// How many steps of the iteration from window `x` (covered, its bound `bound`) can
    /// be taken at once, at most `limit`: with slope m the bound is
    /// C_k + ⌊sum/m⌋ + (x − at), x plus a constant K, so from x the windows are
    /// x + K, x + 2K, ... as long as they stay within the horizon and no bound exceeds
    /// the deadline `d`; those steps end no iteration and redraw no line. 0 when the slope
    /// is not m or the bound does not rise.
    fn equal_steps(&self, x: u64, bound: u64, d: u64, m: PerCpu, limit: usize) -> u64 {
        debug_assert!(self.covers(x));
        if self.slope != m.m || bound <= x || bound > d {
            return 0;
        }
        let inc = bound - x;
        // Step j (from 0) reaches x + (j + 1)·K: within the deadline and the horizon.
        let room = (d - x).min(self.horizon - (x - self.at));
        (room / inc).min(limit as u64)
    }
}

/// The response-time bounds of every task by Bertogna & Cirinei's RTA on m CPUs:
/// R_k = C_k + ⌊(1/m) Σ_{i interferes with k} min(W_i(R_k), [EDF: J_i^k,] R_k − C_k + 1)⌋.
/// Every bound starts at C and only rises (each task's iteration starts from its last
/// bound; the operator is monotone), task after task, in rounds until no bound changes:
/// the least fixed point, the form proven in Prosa's Coq formalisation of the analysis.
/// A task whose iteration creeps is given its deadline if that is a post-fixed point
/// (bound(D) ≤ D: the least fixed point is below it, and a larger bound is safe).
/// For fixed priorities one round in priority order settles every task but ties.
/// Where the interference sum rises with slope m the bound is the window plus a
/// constant, so the steps along it are taken at once ([`Line::equal_steps`]) and counted
/// as the steps (and work) they are: the creep limit and the budget stop where they did.
fn rta(ts: &[RtTask], m: usize, how: Sched) -> Result<Vec<u64>, Stop> {
    let n = ts.len() as u64;
    let per = PerCpu::new(m);
    let mut r: Vec<u64> = ts.iter().map(|t| t.c).collect();
    // The tasks by (D, index), sorted as packed words (D above, the index below: the
    // same order, without indexing the tasks at each comparison).
    let mut order: Vec<u128> = ts
        .iter()
        .enumerate()
        .map(|(k, t)| (t.d as u128) << 64 | k as u128)
        .collect();
    order.sort_unstable();
    let mut work: u64 = 0;
    let mut terms = Terms {
        ck: 0,
        list: Vec::with_capacity(ts.len()),
        r_max: 0,
        sums_fit: false,
        edf_parts: match how {
            Sched::Edf => {
                // Allocated at its size: a `flat_map`'s collect cannot know it and grew the
                // vector through seven reallocations (about 9,000 instructions a sweep cell).
                let mut parts = Vec::with_capacity(ts.len() * ts.len());
                for tk in ts {
                    parts.extend(ts.iter().map(|ti| edf_parts(ti, tk.d)));
                }
                parts
            }
            Sched::Fp => Vec::new(),
        },
    };
    // Bounds changed so far; when each bound last changed (that count); the count when
    // each task's iteration last ended.
    let mut changes = 0u64;
    let mut changed_at = vec![0u64; ts.len()];
    let mut ended_at: Vec<Option<u64>> = vec![None; ts.len()];
    loop {
        let mut changed = false;
        for k in order.iter().map(|&key| key as u64 as usize) {
            // No interferer's bound changed since k's last iteration ended: its terms are
            // the same, and its bound is where that iteration settled, where the bound
            // does not rise (a fixed point, or a deadline found post-fixed). Running it
            // again would end at its first step, unchanged: that step's work is counted
            // (the budget stops where it did) and nothing else is done.
            if let Some(end) = ended_at[k] {
                let same_terms = (0..ts.len()).all(|i| {
                    i == k || (how == Sched::Fp && ts[i].d > ts[k].d) || changed_at[i] <= end
                });
                if same_terms {
                    work += n;
                    if work > WORK_LIMIT {
                        return Err(Stop::Budget);
                    }
                    debug_assert!({
                        terms.of(ts, &r, k, how);
                        terms.bound_at(r[k], m) <= r[k] as u128
                    });
                    continue;
                }
            }
            terms.of(ts, &r, k, how);
            let mut x = r[k];
            // The bound at x, computed ahead of its turn (it has no side effect): from the
            // line of the placed terms while every span fits in u64 (the terms moved and
            // the line redrawn only past its horizon), else by `bound_at`.
            let mut line = terms.place_line(x);
            let mut bound = match &line {
                Some(l) => {
                    debug_assert_eq!(l.bound(terms.ck, x, per) as u128, terms.bound_at(x, m));
                    l.bound(terms.ck, x, per) as u128
                }
                None => terms.bound_at(x, m),
            };
            let mut steps = 0;
            let settled = loop {
                if let Some(l) = &line {
                    // Steps that change nothing but x, steps and work, taken at once.
                    // (A line's bounds fit in u64.)
                    let mut run =
                        l.equal_steps(x, bound as u64, ts[k].d, per, INNER_STEPS - 1 - steps);
                    if run > 0 {
                        // (A division: only when there is a run to bound.)
                        run = run.min(WORK_LIMIT.saturating_sub(work) / n);
                    }
                    if run > 0 {
                        let inc = bound as u64 - x;
                        work += run * n;
                        steps += run as usize;
                        x += run * inc;
                        bound = x as u128 + inc as u128;
                        debug_assert_eq!(bound, terms.bound_at(x, m));
                    }
                    // Steps of another slope within the line, each the step below where
                    // nothing stops or redraws: the work fits the budget, the bound is
                    // within the deadline and above x, the creep limit is not reached and
                    // the line covers the next window. (A tight loop: most of a set's
                    // steps are these.)
                    // (`last` ≥ x: the line covers x; `work` ≤ WORK_LIMIT here.)
                    if l.slope != per.m {
                        let lim = ts[k].d.min(l.last());
                        let (room, max_steps) = (WORK_LIMIT - work, INNER_STEPS - 1 - steps);
                        let (mut b, mut w, mut s) = (bound as u64, 0u64, 0usize);
                        while b <= lim && b > x && s < max_steps && w + n <= room {
                            w += n;
                            s += 1;
                            x = b;
                            b = l.bound(terms.ck, x, per);
                            debug_assert_eq!(b as u128, terms.bound_at(x, m));
                        }
                        work += w;
                        steps += s;
                        bound = b as u128;
                    }
                }
                work += n;
                if work > WORK_LIMIT {
                    return Err(Stop::Budget);
                }
                let next = bound;
                if next > ts[k].d as u128 {
                    return Err(Stop::Late(k, next));
                }
                if next <= x as u128 {
                    break x;
                }
                let to = next as u64;
                steps += 1;
                if steps == INNER_STEPS {
                    let d = ts[k].d;
                    work += n;
                    if terms.bound_at(d, m) <= d as u128 {
                        break d;
                    }
                    return Err(Stop::Creeping(k));
                }
                if let Some(l) = line {
                    if !l.covers(to) {
                        line = terms.refresh_line(&l, to);
                    }
                }
                bound = match &line {
                    Some(l) => {
                        debug_assert_eq!(l.bound(terms.ck, to, per) as u128, terms.bound_at(to, m));
                        l.bound(terms.ck, to, per) as u128
                    }
                    None => terms.bound_at(to, m),
                };
                x = to;
            };
            if settled != r[k] {
                r[k] = settled;
                changed = true;
                changes += 1;
                changed_at[k] = changes;
            }
            ended_at[k] = Some(changes);
        }
        if !changed {
            return Ok(r);
        }
    }
}

/// The verdict of an RTA.
fn rta_verdict(ts: &[RtTask], m: usize, how: Sched) -> Verdict {
    let (test, title) = match how {
        Sched::Edf => ("rta-gedf", "Bertogna–Cirinei response times (global EDF)"),
        Sched::Fp => ("rta-gfp", "Bertogna–Cirinei response times (global DM/RM)"),
    };
    if let Some(v) = precheck(test, title, ts, m) {
        return v;
    }
    match rta(ts, m, how) {
        Ok(r) => verdict(
            test,
            title,
            Outcome::Schedulable,
            // The reason only (a sweep keeps the outcome): the tightest task, largest
            // R/D, compared exactly.
            reason(|| {
                let k = (0..ts.len())
                    .max_by(|&a, &b| {
                        (r[a] as u128 * ts[b].d as u128)
                            .cmp(&(r[b] as u128 * ts[a].d as u128))
                            .then(b.cmp(&a))
                    })
                    .unwrap_or(0);
                format!(
                    "every response-time bound within its deadline (tightest: {} R ≤ {} of D = {})",
                    ts[k].name,
                    format_ns(r[k]),
                    format_ns(ts[k].d)
                )
            }),
        ),
        Err(Stop::Late(k, bound)) => verdict(
            test,
            title,
            Outcome::NotProven,
            reason(|| {
                format!(
                    "task {}: response-time bound {} exceeds its deadline {}",
                    ts[k].name,
                    u64::try_from(bound)
                        .map(format_ns)
                        .unwrap_or_else(|_| format!("{bound}ns")),
                    format_ns(ts[k].d)
                )
            }),
        ),
        Err(Stop::Creeping(k)) => verdict(
            test,
            title,
            Outcome::NotProven,
            reason(|| {
                format!(
                    "not proven (step limit): task {}'s bound still rising after {INNER_STEPS} \
                     steps, and its deadline is not a fixed point",
                    ts[k].name
                )
            }),
        ),
        Err(Stop::Budget) => verdict(
            test,
            title,
            Outcome::NotProven,
            format!("not proven (step limit): {WORK_LIMIT} interference terms evaluated"),
        ),
    }
}

/// Response-time analysis for global EDF (Bertogna & Cirinei, "Response-time analysis for
/// globally scheduled symmetric multiprocessor platforms", RTSS 2007): each task's
/// interference bounded by the workload of every other task (with its response-time
/// bound as slack) and by the EDF-specific term, iterated to a fixed point. Sufficient;
/// constrained deadlines. O(n²) per iteration.
pub fn rta_gedf(ts: &[RtTask], m: usize) -> Verdict {
    rta_verdict(ts, m, Sched::Edf)
}

/// Response-time analysis for global fixed priorities (Bertogna & Cirinei, RTSS 2007),
/// deadline-monotonic priorities (rate-monotonic when D = T), the simulator's `dm`/`rm`
/// on global placement. Sufficient; constrained deadlines. O(n²) per iteration.
pub fn rta_gfp(ts: &[RtTask], m: usize) -> Verdict {
    rta_verdict(ts, m, Sched::Fp)
}

/// EDZL (earliest deadline until zero laxity) on m CPUs, sufficient, after Cirinei &
/// Baker ("EDZL scheduling analysis", ECRTS 2007; Baker, Cirinei & Bertogna, Real-Time
/// Systems 40(3), 2008): under EDZL a deadline is missed only when m + 1 jobs have zero
/// laxity at once, and with constrained deadlines those are jobs of m + 1 distinct tasks.
/// A job of task k reaches zero laxity only after D_k − C_k instants in which it does
/// not run, each with all m CPUs busy with other tasks; so if
/// Σ_{i≠k} min(W_i(D_k), D_k − C_k) < m(D_k − C_k), task k never reaches zero laxity.
/// The set is schedulable when at most m tasks fail that condition.
///
/// W_i is Bertogna & Cirinei's workload bound with R_i = D_i (no slack), which bounds all
/// of task i's work in the window whatever its priority — zero-laxity jobs with later
/// deadlines included — where Cirinei & Baker use the EDF interference term; ours is
/// therefore more pessimistic than theirs, never less. O(n²).
pub fn edzl(ts: &[RtTask], m: usize) -> Verdict {
    const TEST: &str = "edzl";
    const TITLE: &str = "zero-laxity count (global EDZL)";
    if let Some(v) = precheck(TEST, TITLE, ts, m) {
        return v;
    }
    // At most m + 1 entries (allocated once, not grown from empty).
    let mut can_reach: Vec<usize> = Vec::with_capacity((m + 1).min(ts.len()));
    for (k, tk) in ts.iter().enumerate() {
        let slack = tk.d.saturating_sub(tk.c) as u128;
        let sum: u128 = ts
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != k)
            .map(|(_, ti)| workload(ti, ti.d, tk.d).min(slack))
            .sum();
        if sum >= m as u128 * slack {
            can_reach.push(k);
            if can_reach.len() > m {
                break;
            }
        }
    }
    let names = |v: &[usize]| {
        v.iter()
            .map(|&k| ts[k].name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match can_reach.len().cmp(&(m + 1)) {
        Ordering::Less => verdict(
            TEST,
            TITLE,
            Outcome::Schedulable,
            if can_reach.is_empty() {
                reason(|| "no task can reach zero laxity".to_string())
            } else {
                reason(|| {
                    format!(
                        "only {} task(s) can reach zero laxity ({}), at most m = {m}",
                        can_reach.len(),
                        names(&can_reach)
                    )
                })
            },
        ),
        _ => verdict(
            TEST,
            TITLE,
            Outcome::NotProven,
            reason(|| {
                format!(
                    "at least m + 1 = {} tasks may reach zero laxity ({})",
                    m + 1,
                    names(&can_reach)
                )
            }),
        ),
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    fn t(c: u64, p: u64) -> RtTask {
        RtTask::new("x", c, p, p)
    }

    /// Hand-worked: W for C = 2, T = 5, R = 3 over L = 10: N = ⌊(10 + 3 − 2)/5⌋ = 2,
    /// W = 2·2 + min(2, 11 − 10) = 5. EDF term for D_k = 7: ⌊7/5⌋·2 + min(2, 2 − 2) = 2.
    #[test]
    fn bounds_by_hand() {
        let ti = RtTask::new("i", 2, 5, 5);
        assert_eq!(workload(&ti, 3, 10), 5);
        // R = C: N = ⌊10/5⌋ = 2, W = 2·2 + min(2, 10 − 10) = 4.
        assert_eq!(workload(&ti, 2, 10), 4);
        assert_eq!(edf_interference(&ti, 3, 7), 2);
        assert_eq!(edf_interference(&ti, 5, 7), 4);
    }

    /// ⌊sum / m⌋ by a shift for powers of two, by a division otherwise, past u64 too.
    #[test]
    fn per_cpu_divides() {
        for m in 1..=70usize {
            for sum in [
                0u128,
                1,
                7,
                63,
                64,
                65,
                1 << 40,
                u64::MAX as u128,
                u128::MAX - 3,
            ] {
                assert_eq!(per_cpu(sum, m), sum / m as u128, "{sum} / {m}");
            }
        }
    }

    /// Two tasks on two CPUs never interfere; m + 1 heavy tasks on m CPUs are not proven.
    #[test]
    fn small_cases() {
        let two = [t(9, 10), t(9, 10)];
        for v in [rta_gedf(&two, 2), rta_gfp(&two, 2), edzl(&two, 2)] {
            assert_eq!(v.outcome, Outcome::Schedulable, "{v:?}");
        }
        // Three tasks of U = 0.6 on 2 CPUs (U = 1.8): global EDF and FP run two jobs on
        // [0, 6] and the third on [6, 12], past its deadline 10: no EDF/FP test may
        // accept it.
        let three = [t(6, 10), t(6, 10), t(6, 10)];
        assert_eq!(rta_gedf(&three, 2).outcome, Outcome::NotProven);
        assert_eq!(rta_gfp(&three, 2).outcome, Outcome::NotProven);
        // EDZL does meet every deadline here (the third job takes a CPU at zero laxity,
        // at 4), but all three tasks can reach zero laxity, so the count proves nothing.
        assert_eq!(edzl(&three, 2).outcome, Outcome::NotProven);
    }

    /// The RTA iteration as written before its terms were kept between steps: every step
    /// evaluates every term from scratch ([`workload`] and [`edf_interference`], one
    /// division each). The fast iteration must take exactly the same steps.
    fn rta_reference(ts: &[RtTask], m: usize, how: Sched) -> Result<Vec<u64>, Stop> {
        let bound = |r: &[u64], k: usize, x: u64| -> u128 {
            let tk = &ts[k];
            let cap = (x - tk.c) as u128 + 1;
            let mut sum: u128 = 0;
            for (i, ti) in ts.iter().enumerate() {
                if i == k || (how == Sched::Fp && ti.d > tk.d) {
                    continue;
                }
                let mut b = workload(ti, r[i], x).min(cap);
                if how == Sched::Edf {
                    b = b.min(edf_interference(ti, r[i], tk.d));
                }
                sum += b;
            }
            tk.c as u128 + sum / m as u128
        };
        let n = ts.len() as u64;
        let mut r: Vec<u64> = ts.iter().map(|t| t.c).collect();
        let mut order: Vec<usize> = (0..ts.len()).collect();
        order.sort_by_key(|&k| (ts[k].d, k));
        let mut work: u64 = 0;
        loop {
            let mut changed = false;
            for &k in &order {
                let mut x = r[k];
                let mut steps = 0;
                let settled = loop {
                    work += n;
                    if work > WORK_LIMIT {
                        return Err(Stop::Budget);
                    }
                    let next = bound(&r, k, x);
                    if next > ts[k].d as u128 {
                        return Err(Stop::Late(k, next));
                    }
                    if next <= x as u128 {
                        break x;
                    }
                    x = next as u64;
                    steps += 1;
                    if steps == INNER_STEPS {
                        let d = ts[k].d;
                        work += n;
                        if bound(&r, k, d) <= d as u128 {
                            break d;
                        }
                        return Err(Stop::Creeping(k));
                    }
                };
                if settled != r[k] {
                    r[k] = settled;
                    changed = true;
                }
            }
            if !changed {
                return Ok(r);
            }
        }
    }

    fn outcome(r: Result<Vec<u64>, Stop>) -> String {
        match r {
            Ok(r) => format!("ok {r:?}"),
            Err(Stop::Late(k, b)) => format!("late {k} {b}"),
            Err(Stop::Creeping(k)) => format!("creeping {k}"),
            Err(Stop::Budget) => "budget".into(),
        }
    }

    /// Random constrained-deadline sets, light to overloaded, short periods (so bounds
    /// cross period boundaries often), on 1 to 4 CPUs: the iteration with kept terms
    /// ends exactly as the reference (same bounds, or the same task and bound when it
    /// stops), under EDF and fixed priorities. Settled, late and creeping sets all occur.
    #[test]
    fn kept_terms_iterate_as_the_reference() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut seen = std::collections::BTreeSet::new();
        for round in 0..6000 {
            let m = rng.random_range(1..=4usize);
            let n = rng.random_range(2..=12usize);
            // Short periods (bounds cross period boundaries often), long ones (bounds
            // creep by a few ns a step), or periods near 2^64 (windows past u64, where
            // the workload takes its u128 path).
            let (pmin, pmax) = match round % 3 {
                0 => (2, 400),
                1 => (2, 1_000_000),
                _ => (u64::MAX / 4, u64::MAX - 1),
            };
            let ts: Vec<RtTask> = (0..n)
                .map(|_| {
                    let p = rng.random_range(pmin..=pmax);
                    let c = rng.random_range(1..=p);
                    let d = rng.random_range(c..=p);
                    RtTask::new("x", c, p, d)
                })
                .collect();
            for how in [Sched::Edf, Sched::Fp] {
                let want = outcome(rta_reference(&ts, m, how));
                let got = outcome(rta(&ts, m, how));
                assert_eq!(got, want, "{how:?} m = {m} {ts:?}");
                seen.insert(want.split(' ').next().unwrap().to_string());
            }
        }
        for kind in ["ok", "late", "creeping"] {
            assert!(seen.contains(kind), "{seen:?}");
        }
    }
}
