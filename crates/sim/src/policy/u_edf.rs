//! `u-edf`: U-EDF (Nelissen, Berten, Milojevic & Goossens, "U-EDF: An Unfair but Optimal
//! Multiprocessor Scheduling Algorithm for Sporadic Tasks", ECRTS 2012). Optimal for
//! implicit-deadline tasks with total utilisation at most m.
//!
//! At every release the class computes, for each active job in EDF order (deadline, then
//! task order), its *allotment* on each of the m virtual processors j = 0..m−1, filling
//! processor 0 first: a job gets on j at most what is left of processor j before its
//! deadline once the jobs before it have taken their allotments there and reserved their
//! tasks' future share, `res(x, j) = (d − d_x) × (min(1, max(0, s_x + u_x − j)) −
//! min(1, max(0, s_x − j)))` (s_x: the utilisations of the tasks before x), and at most
//! its remaining WCET:
//!
//! `al(J, j) = ⌈min((d − now) − Σ_{x before J} (al(x, j) + res(x, j)) − Σ_{k<j} al(J, k),
//! ret(J) − Σ_{k<j} al(J, k))⌉`.
//!
//! Between releases (EDF-D), processor by processor, the earliest-deadline job not yet
//! taken with allotment left on that processor runs and consumes its allotment there;
//! the set is recomputed whenever an allotment runs out or a job completes. The selected
//! jobs run on any CPU (the engine keeps a running job where it is).
//!
//! Utilisations are exact: every quantity is kept in units of 1/L ns, L the least
//! common multiple of the utilisations' denominators (i128), so `s_x + u_x` crossing a
//! whole processor is decided exactly (when L would pass 2^60, many unrelated periods,
//! L = 2^40 and utilisations are rounded down to it); an allotment is rounded up to whole ns, as SimSo
//! 0.8.5's `U_EDF` does (the cross-check), whose rules these are. Rounding up over-allots
//! by under 1 ns per job and processor, and the allotments are recomputed from the jobs'
//! remaining WCETs at every release, so the excess never accumulates. No random set of
//! the tests misses, at exactly full load included (210 sets up to m, 300 at exactly m,
//! with the invariant checker; tests/servers.rs): measured, not proven.
//!
//! Differences from SimSo: SimSo leaves a job that loses its selection (its allotment on
//! its processor ran out) running on its CPU until something else is dispatched there,
//! so it runs past its allotment (a SimSo bug: U-EDF runs a job only on its allotments);
//! here it gives up the CPU ([`SchedClass::must_yield`]).

use crate::class::{EnqueueReason, SchedClass};
use crate::state::{CpuId, Ctx, RqId, TaskId};
use schedlab_model::Ns;
use std::cell::RefCell;

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

#[derive(Debug, Clone, Default)]
struct State {
    /// Instant the allotments are accounted to.
    last: Ns,
    /// Allotments must be recomputed (a release).
    stale: bool,
    /// Per task: allotment of its current job on each virtual processor (ns).
    al: Vec<Vec<i64>>,
    /// Per task: the virtual processor it runs on, if selected.
    on: Vec<Option<usize>>,
    /// The selected jobs as (task, virtual processor): `on` as a list, at most m long.
    picked: Vec<(TaskId, usize)>,
    /// The selection must be made again (allotments recomputed, a job completed).
    reselect: bool,
    /// Recomputations of the allotments.
    allotments: u64,
}

/// U-EDF.
pub struct UEdf {
    m: usize,
    /// Per task: utilisation × L, for the tasks U-EDF schedules (None: not scheduled).
    util: Vec<Option<i128>>,
    /// L: the common denominator.
    l: i128,
    /// Per task: WCET.
    wcet: Vec<Ns>,
    queued: Vec<bool>,
    /// Per task: the deadline of its last released job (`Ns::MAX` before the first).
    last_deadline: Vec<Ns>,
    st: RefCell<State>,
}

impl UEdf {
    /// U-EDF for tasks `(task id, runtime, period)` on `m` CPUs. Errors: utilisation
    /// above m, a runtime above its period, an overflow of the common denominator.
    pub fn new(tasks: &[(TaskId, Ns, Ns)], m: usize) -> Result<UEdf, String> {
        let nr = tasks.iter().map(|t| t.0 + 1).max().unwrap_or(0);
        let mut l: Option<i128> = Some(1);
        for &(_, c, p) in tasks {
            if p == 0 || c > p {
                return Err(format!("runtime {c} ns must be at most the period {p} ns"));
            }
            let den = p as i128 / gcd(c as i128, p as i128).max(1);
            l = l.and_then(|l| (l / gcd(l, den)).checked_mul(den).filter(|&x| x < 1 << 60));
        }
        // Many unrelated periods: utilisations rounded down to multiples of 2^-40.
        let l = l.unwrap_or(1 << 40);
        let mut util = vec![None; nr];
        let mut wcet = vec![0; nr];
        let mut total: i128 = 0;
        for &(t, c, p) in tasks {
            let a = c as i128 * l / p as i128;
            util[t] = Some(a);
            wcet[t] = c;
            total += a;
        }
        if total > m as i128 * l {
            return Err(format!(
                "the tasks' total utilisation {:.6} exceeds the {m} CPUs",
                total as f64 / l as f64
            ));
        }
        Ok(UEdf {
            m,
            util,
            l,
            wcet,
            queued: Vec::new(),
            last_deadline: vec![Ns::MAX; nr],
            st: RefCell::new(State::default()),
        })
    }

    /// Recomputations of the allotments so far.
    pub fn allotments(&self) -> u64 {
        self.st.borrow().allotments
    }

    /// The current allotments of task `t`'s job (ns per virtual processor).
    pub fn allotment(&self, t: TaskId) -> Vec<i64> {
        self.st.borrow().al.get(t).cloned().unwrap_or_default()
    }

    /// Active: a job with work left.
    fn active(ctx: &Ctx, t: TaskId) -> bool {
        ctx.task(t).job.is_some_and(|j| j.remaining > 0)
    }

    /// The deadline of `t`'s current job, or of its last one when it has none (a job
    /// done keeps its place in the order: its task's future share stays reserved).
    fn deadline(&self, ctx: &Ctx, t: TaskId) -> Ns {
        ctx.task(t)
            .job
            .map_or(self.last_deadline[t], |j| j.deadline)
    }

    /// Remaining WCET of `t`'s job: its WCET less what it has executed.
    fn ret(&self, ctx: &Ctx, t: TaskId) -> i128 {
        let done = ctx.task(t).job.map_or(0, |j| j.exec - j.remaining);
        self.wcet[t].saturating_sub(done) as i128
    }

    /// The allotments of every active job, from scratch (see the module documentation).
    fn compute(&self, ctx: &Ctx, st: &mut State) {
        st.allotments += 1;
        let l = self.l;
        let mut order: Vec<TaskId> = (0..self.util.len())
            .filter(|&t| self.util[t].is_some())
            .collect();
        // Every task by its last job's deadline, jobs done included: their future share
        // stays reserved (as SimSo).
        order.sort_by_key(|&t| (self.deadline(ctx, t), t));
        st.al
            .iter_mut()
            .for_each(|a| a.iter_mut().for_each(|x| *x = 0));
        let now = ctx.now as i128;
        let mut s: i128 = 0; // utilisation × L of the tasks before
        // Per processor j, over the tasks x before: Σ al(x, j) × L, Σ w(x, j) and
        // Σ d_x × w(x, j), w(x, j) = min(1, max(0, s_x + u_x − j)) − min(1, max(0, s_x − j))
        // (× L). Then Σ_x (al(x, j) + res(x, j)) = Σ al + d × Σ w − Σ d_x × w, exactly
        // (integers): O(m) per job instead of a pass over the jobs before it.
        let mut sum_al = vec![0i128; self.m];
        let mut sum_w = vec![0i128; self.m];
        let mut sum_dw = vec![0i128; self.m];
        for &t in &order {
            let u = self.util[t].unwrap_or(0);
            let d = self.deadline(ctx, t) as i128;
            if Self::active(ctx, t) {
                let ret = self.ret(ctx, t) * l;
                let mut sum: i128 = 0; // Σ_{k<j} al(J, k) × L
                for j in 0..self.m {
                    let taken = sum_al[j] + d * sum_w[j] - sum_dw[j];
                    let almax = (d - now) * l - taken - sum;
                    let want = almax.min(ret - sum);
                    // ⌈want / L⌉ (want may be negative).
                    let al = want.div_euclid(l) + i128::from(want.rem_euclid(l) != 0);
                    st.al[t][j] = al as i64;
                    sum += al * l;
                }
            }
            for j in 0..self.m {
                let jl = j as i128 * l;
                let clamp = |x: i128| (x - jl).clamp(0, l);
                let w = clamp(s + u) - clamp(s);
                sum_al[j] += st.al[t][j] as i128 * l;
                sum_w[j] += w;
                sum_dw[j] += d * w;
            }
            s += u;
        }
    }

    /// EDF-D: processor by processor, the earliest-deadline job not yet taken with
    /// allotment left there.
    fn select(&self, ctx: &Ctx, st: &mut State) {
        st.on.iter_mut().for_each(|o| *o = None);
        st.picked.clear();
        for j in 0..self.m {
            let pick = (0..self.util.len())
                .filter(|&t| {
                    self.util[t].is_some()
                        && Self::active(ctx, t)
                        && st.on[t].is_none()
                        && st.al[t][j] > 0
                })
                .min_by_key(|&t| (self.deadline(ctx, t), t));
            if let Some(t) = pick {
                st.on[t] = Some(j);
                st.picked.push((t, j));
            }
        }
    }

    /// Account the allotments of the selected jobs up to now and decide again if the
    /// selection may have changed.
    ///
    /// The selection is a function of the allotments, the active jobs and their
    /// deadlines. Between releases (which recompute the allotments) only the selected
    /// jobs' allotments change (they consume them), and a job stops being active only by
    /// running, which a job not selected does not do for any time. A job not selected that
    /// leaves the candidates changes no processor's pick (it was nobody's earliest), so
    /// the selection stays the same until a selected job's allotment there runs out or
    /// the job completes: only then (or after a recomputation) is it made again, which
    /// gives the same schedule as making it at every question, at O(m) per question.
    fn sync(&self, ctx: &Ctx) {
        let mut st = self.st.borrow_mut();
        let st = &mut *st;
        if ctx.now > st.last {
            let dt = (ctx.now - st.last) as i64;
            for &(t, j) in &st.picked {
                st.al[t][j] -= dt;
            }
            st.last = ctx.now;
        }
        if st.stale {
            st.stale = false;
            self.compute(ctx, st);
            st.reselect = true;
        }
        let spent = st
            .picked
            .iter()
            .any(|&(t, j)| st.al[t][j] <= 0 || !Self::active(ctx, t));
        if st.reselect || spent {
            st.reselect = false;
            self.select(ctx, st);
        }
    }

    fn selected(&self, ctx: &Ctx, t: TaskId) -> bool {
        self.sync(ctx);
        self.st.borrow().on.get(t).is_some_and(|o| o.is_some())
    }

    fn next_event(&self, ctx: &Ctx) -> Option<Ns> {
        self.sync(ctx);
        let st = self.st.borrow();
        st.picked
            .iter()
            .map(|&(t, j)| st.al[t][j])
            .filter(|&a| a > 0)
            .min()
            .map(|a| ctx.now + a as Ns)
    }
}

impl SchedClass for UEdf {
    fn name(&self) -> &'static str {
        "u-edf"
    }

    fn init(&mut self, _nr_rqs: usize, nr_tasks: usize) {
        self.queued = vec![false; nr_tasks];
        self.util.resize(nr_tasks, None);
        self.wcet.resize(nr_tasks, 0);
        self.last_deadline.resize(nr_tasks, Ns::MAX);
        let st = self.st.get_mut();
        st.al = vec![vec![0; self.m]; nr_tasks];
        st.on = vec![None; nr_tasks];
        st.picked.clear();
        st.reselect = true;
    }

    fn job_released(&mut self, ctx: &Ctx, t: TaskId) {
        self.sync(ctx);
        if let Some(d) = self.last_deadline.get_mut(t) {
            *d = ctx.now.saturating_add(ctx.task(t).rel_deadline);
        }
        // Recomputed once the instant's releases are in (at the next question asked).
        self.st.get_mut().stale = true;
    }

    fn release_reselects(&self) -> bool {
        true
    }

    fn enqueue_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId, _why: EnqueueReason) {
        self.queued[t] = true;
    }

    fn dequeue_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.queued[t] = false;
    }

    fn peek_next_task(&self, ctx: &Ctx, _rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.sync(ctx);
        let st = self.st.borrow();
        (0..self.queued.len())
            .filter(|&t| self.queued[t] && st.on[t].is_some() && ctx.allowed(t, cpu))
            .min_by_key(|&t| (self.deadline(ctx, t), t))
    }

    fn pick_next_task(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        let t = self.peek_next_task(ctx, rq, cpu)?;
        self.queued[t] = false;
        Some(t)
    }

    fn put_prev_task(&mut self, _ctx: &Ctx, _rq: RqId, t: TaskId) {
        self.queued[t] = true;
    }

    fn job_completed(&mut self, ctx: &Ctx, _t: TaskId) {
        self.sync(ctx);
    }

    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        self.selected(ctx, cand) && !self.selected(ctx, curr)
    }

    fn must_yield(&self, ctx: &Ctx, t: TaskId) -> bool {
        !self.selected(ctx, t)
    }

    fn running_tasks_preempt(&self) -> bool {
        false // running tasks are selected (the others yield); selected ones never preempt
    }

    fn uses_tick(&self, _ctx: &Ctx) -> bool {
        false
    }

    fn uses_decision_timer(&self) -> bool {
        true
    }

    fn next_decision(&self, ctx: &Ctx, _rq: RqId, _cpu: CpuId, _curr: TaskId) -> Option<Ns> {
        self.next_event(ctx)
    }

    fn next_decision_idle(&self, ctx: &Ctx, _rq: RqId, _cpu: CpuId) -> Option<Ns> {
        self.next_event(ctx)
    }

    fn decision_due(&mut self, ctx: &Ctx, _rq: RqId, _cpu: CpuId, curr: TaskId) -> bool {
        !self.selected(ctx, curr)
    }

    fn check(&self, ctx: &Ctx) -> Result<(), String> {
        for (t, &q) in self.queued.iter().enumerate() {
            if q && ctx.task(t).on_cpu.is_some() {
                return Err(format!("task {t} is queued while it runs"));
            }
        }
        Ok(())
    }

    /// The allotments as of `ctx.now` (the first decision instant): the tasks in EDF
    /// order, each with its utilisation, the utilisation of the tasks before it
    /// (`reserved_from`: its future share starts there on the virtual processors), its
    /// deadline, its job's allotment per virtual processor (ns) and the virtual
    /// processor EDF-D selected it on. Read as it is: asking changes nothing.
    fn report(&self, ctx: &Ctx, names: &[String]) -> Option<serde_json::Value> {
        let st = self.st.borrow();
        let mut order: Vec<TaskId> = (0..self.util.len())
            .filter(|&t| self.util[t].is_some())
            .collect();
        order.sort_by_key(|&t| (self.deadline(ctx, t), t));
        let l = self.l as f64;
        let mut before: i128 = 0;
        let mut text = format!("allotments at {}:\n", schedlab_model::format_ns(ctx.now));
        let mut tasks = Vec::new();
        for &t in &order {
            let u = self.util[t].unwrap_or(0);
            let al: Vec<i64> = st.al.get(t).cloned().unwrap_or_default();
            let on = st.on.get(t).copied().flatten();
            let d = self.deadline(ctx, t);
            let name = names.get(t).cloned().unwrap_or_default();
            let shown: Vec<String> = al.iter().map(|&a| a.to_string()).collect();
            text += &format!(
                "  {name} u {:.4} deadline {} allotment [{}] ns{}\n",
                u as f64 / l,
                if d == Ns::MAX { "-".into() } else { schedlab_model::format_ns(d) },
                shown.join(", "),
                on.map_or(String::new(), |j| format!(" on vp{j}"))
            );
            tasks.push(serde_json::json!({
                "task": name,
                "utilisation": u as f64 / l,
                "reserved_from": before as f64 / l,
                "deadline_ns": (d != Ns::MAX).then_some(d),
                "allotment_ns": al,
                "selected_on": on,
            }));
            before += u;
        }
        Some(serde_json::json!({
            "kind": "u-edf-allotments",
            "at_ns": ctx.now,
            "virtual_processors": self.m,
            "tasks": tasks,
            "text": text,
        }))
    }
}

/// U-EDF for the workload's deadline-class tasks, or why it cannot schedule them: a
/// global scheduler for implicit-deadline tasks without affinities, total utilisation at
/// most the CPUs.
pub fn for_workload(w: &schedlab_model::Workload) -> Result<UEdf, crate::SimError> {
    use schedlab_model::{Placement, TaskClass};
    let unsupported = |m: String| crate::SimError::Unsupported(m);
    if w.scheduler.placement != Placement::Global {
        return Err(unsupported(
            "u-edf is a global scheduler: use placement global".into(),
        ));
    }
    let mut tasks = Vec::new();
    for (i, t) in w.tasks.iter().enumerate() {
        if t.class != TaskClass::Deadline {
            continue;
        }
        let why = match t.period {
            None => Some("has no period"),
            Some(p) if t.deadline != p => {
                Some("has a deadline other than its period (U-EDF needs implicit deadlines)")
            }
            _ if t.affinity.is_some() => Some("has an affinity (U-EDF places tasks itself)"),
            _ => None,
        };
        if let Some(why) = why {
            return Err(unsupported(format!("u-edf: task `{}` {why}", t.name)));
        }
        tasks.push((i, t.runtime, t.period.unwrap_or(0)));
    }
    UEdf::new(&tasks, w.platform.cpus).map_err(|e| unsupported(format!("u-edf: {e}")))
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::UEdf,
    build: |w| Ok(Box::new(crate::policy::u_edf::for_workload(w)?)),
}];
