//! `bf`: Boundary Fair scheduling (Zhu, Mossé & Melhem, "Multiple-resource periodic
//! scheduling problem: how much fairness is necessary?", RTSS 2003).
//!
//! Decisions are taken only at period boundaries (every task's releases, which are its
//! deadlines), for the whole interval to the next boundary, in quanta of
//! `platform.quantum` ([`super::pfair`]). At boundary b with the next one at b' (n =
//! b' − b quanta), each task T_i of weight w_i = e_i/p_i gets its *mandatory* quanta
//! m_i = ⌊RW_i + n·w_i⌋ (RW_i its remaining fractional work, 0 at its own period
//! boundaries), leaving PW_i = RW_i + n·w_i − m_i pending. The quanta the CPUs still have,
//! m·n − Σ m_i, go one each as *optional* quanta to the tasks with PW_i > 0 and m_i < n of
//! highest priority; RW_i becomes PW_i − 1 for those, PW_i for the others. Priority
//! compares the tasks' characteristic strings from b' on, α(T_i, t) = sign(w_i(t+1) −
//! ⌊w_i t⌋ − 1) with t counted from the task's first release, character by character
//! with '+' > '0' > '−'; strings equal up to a '0' in both are a tie, which goes to the
//! lower task index (as does a comparison still undecided after 10⁶ characters). The
//! interval's quanta are then laid out with McNaughton's wrap-around rule over the CPUs
//! in task order: the tasks running in each quantum follow. BF is optimal for periodic
//! tasks with implicit deadlines and U ≤ m.
//!
//! A job that completes before its allocation is used up leaves its quanta idle (they
//! are its). Only periodic tasks with implicit deadlines, periods and offsets in whole
//! quanta are accepted; a WCET that is not whole quanta is rounded up as for Pfair.
//!
//! Differences from SimSo 0.8.5's `BF`: SimSo's quantum is 1 ms; it compares only the
//! first character of the strings, computed from the first two current job deadlines,
//! and then its urgency factors; here the strings are compared as the paper does.

use super::pfair::{ActiveJob, Quantum, SlotRule, TaskQuanta};
use crate::state::TaskId;
use crate::SimError;
use schedlab_model::workload::Release;
use schedlab_model::Workload;
use std::cmp::Ordering;

/// Comparisons of characteristic strings stop after this many characters (a tie).
const MAX_CHARS: u64 = 1_000_000;

/// BF's plan of the current interval.
pub struct BfRule {
    params: Vec<Option<TaskQuanta>>,
    /// The interval being run: [start, end) in quanta.
    start: u64,
    end: u64,
    /// Per task: RW_i · p_i (remaining work, in 1/p_i quanta).
    rw: Vec<i128>,
    /// Per task: its quanta in the interval's McNaughton layout, [from, to) over
    /// CPU 0's quanta, then CPU 1's, ...
    seg: Vec<Option<(u64, u64)>>,
}

impl BfRule {
    fn new(params: Vec<Option<TaskQuanta>>) -> BfRule {
        let n = params.len();
        BfRule {
            params,
            start: 0,
            end: 0,
            rw: vec![0; n],
            seg: vec![None; n],
        }
    }

    /// The first boundary of task `p` after quantum `b`.
    fn next_boundary(p: &TaskQuanta, b: u64) -> u64 {
        if b < p.offset {
            p.offset
        } else {
            p.offset + ((b - p.offset) / p.period + 1) * p.period
        }
    }

    /// α(T, t) as −1, 0, +1 (t in quanta from time 0).
    fn alpha(p: &TaskQuanta, t: u64) -> i8 {
        let tau = (t - p.offset) as i128;
        let (e, per) = (p.e as i128, p.period as i128);
        let v = e * (tau + 1) - per * (e * tau).div_euclid(per) - per;
        v.signum() as i8
    }

    /// Whether task `a` goes before task `b` for an optional quantum, strings read from
    /// quantum `from`.
    fn before(&self, a: TaskId, b: TaskId, from: u64) -> Ordering {
        let (pa, pb) = (self.params[a].unwrap(), self.params[b].unwrap());
        for t in from..from + MAX_CHARS {
            let (ca, cb) = (Self::alpha(&pa, t), Self::alpha(&pb, t));
            if ca != cb {
                return cb.cmp(&ca);
            }
            if ca == 0 {
                break;
            }
        }
        a.cmp(&b)
    }

    /// Plan the interval starting at quantum `b`.
    fn plan(&mut self, b: u64, jobs: &[ActiveJob], m: usize) {
        let end = self
            .params
            .iter()
            .flatten()
            .map(|p| Self::next_boundary(p, b))
            .min()
            .unwrap_or(b + 1);
        let n = end - b;
        self.start = b;
        self.end = end;
        self.seg.iter_mut().for_each(|s| *s = None);
        let mut mand = vec![0u64; self.params.len()];
        let mut active = vec![false; self.params.len()];
        jobs.iter().for_each(|j| active[j.task] = j.anchor <= b);
        let mut used = 0u64;
        let mut eligible = Vec::new();
        for (t, p) in self.params.iter().enumerate() {
            let Some(p) = p else { continue };
            if !active[t] {
                self.rw[t] = 0;
                continue;
            }
            if b >= p.offset && (b - p.offset).is_multiple_of(p.period) {
                self.rw[t] = 0; // its own period boundary: no lag
            }
            let per = p.period as i128;
            let total = self.rw[t] + n as i128 * p.e as i128;
            let mi = total.div_euclid(per).clamp(0, n as i128);
            mand[t] = mi as u64;
            used += mand[t];
            self.rw[t] = total - mi * per; // PW_i · p_i
            if self.rw[t] > 0 && mand[t] < n {
                eligible.push(t);
            }
        }
        let spare = (m as u64 * n).saturating_sub(used) as usize;
        eligible.sort_by(|&x, &y| self.before(x, y, end));
        for &t in eligible.iter().take(spare) {
            mand[t] += 1;
            self.rw[t] -= self.params[t].unwrap().period as i128;
        }
        let mut pos = 0;
        for (t, &k) in mand.iter().enumerate() {
            if k > 0 {
                self.seg[t] = Some((pos, pos + k));
                pos += k;
            }
        }
    }
}

impl SlotRule for BfRule {
    fn name(&self) -> &'static str {
        "bf"
    }

    fn choose(&mut self, slot: u64, jobs: &[ActiveJob], m: usize, out: &mut Vec<TaskId>) {
        if slot >= self.end {
            self.plan(slot, jobs, m);
        }
        let n = self.end - self.start;
        let j = slot - self.start;
        for cpu in 0..m as u64 {
            let at = cpu * n + j;
            let holder = self
                .seg
                .iter()
                .position(|s| s.is_some_and(|(a, b)| a <= at && at < b));
            if let Some(t) = holder.filter(|&t| jobs.iter().any(|x| x.task == t)) {
                out.push(t);
            }
        }
    }
}

/// The `bf` class for workload `w`: periodic tasks with implicit deadlines only.
pub fn bf(w: &Workload) -> Result<Quantum<BfRule>, SimError> {
    let q = w.platform.quantum;
    for t in w
        .tasks
        .iter()
        .filter(|t| t.period.is_some() && !t.class.is_fair())
    {
        if t.release != Release::Periodic || Some(t.deadline) != t.period {
            return Err(SimError::Unsupported(format!(
                "bf: task {}: BF schedules periodic tasks with implicit deadlines (release periodic, deadline = period)",
                t.name
            )));
        }
        // Its decisions are at the period boundaries: they must be quantum boundaries.
        for (field, v) in [("period", t.period.unwrap_or(0)), ("offset", t.offset)] {
            if !v.is_multiple_of(q) {
                return Err(SimError::Unsupported(format!(
                    "bf: task {}: {field} {} is not a whole number of quanta (platform.quantum {}): BF decides at period boundaries",
                    t.name,
                    schedlab_model::time::format_ns(v),
                    schedlab_model::time::format_ns(q)
                )));
            }
        }
    }
    let probe = Quantum::for_workload(w, BfRule::new(Vec::new()))?;
    let params = probe.params().to_vec();
    Quantum::for_workload(w, BfRule::new(params))
}


/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::Bf,
    build: |w| Ok(Box::new(bf(w)?)),
}];

#[cfg(test)]
mod tests {
    use super::*;

    fn task(e: u64, p: u64) -> Option<TaskQuanta> {
        Some(TaskQuanta {
            e,
            window: p,
            period: p,
            offset: 0,
        })
    }

    #[test]
    fn characteristic_string_of_weight_2_5() {
        // w = 2/5: w(t+1) − ⌊wt⌋ − 1 for t = 0..4 is −0.6, −0.2, +0.2, −0.4, 0.
        let p = task(2, 5).unwrap();
        let s: Vec<i8> = (0..5).map(|t| BfRule::alpha(&p, t)).collect();
        assert_eq!(s, [-1, -1, 1, -1, 0]);
    }

    #[test]
    fn interval_of_three_tasks_on_two_cpus() {
        // Weights 2/3, 2/3, 2/3 (U = 2) on 2 CPUs, boundaries every 3 quanta: each task
        // gets exactly its 2 mandatory quanta, laid out as [0,2) [2,4) [4,6).
        let mut r = BfRule::new(vec![task(2, 3), task(2, 3), task(2, 3)]);
        let jobs: Vec<ActiveJob> = (0..3)
            .map(|t| ActiveJob {
                task: t,
                q: r.params[t].unwrap(),
                anchor: 0,
                done: 0,
            })
            .collect();
        let mut out = Vec::new();
        let mut slots = Vec::new();
        for s in 0..3 {
            out.clear();
            r.choose(s, &jobs, 2, &mut out);
            slots.push(out.clone());
        }
        // CPU 0 runs quanta 0..3 of the layout, CPU 1 quanta 3..6.
        assert_eq!(slots, [vec![0, 1], vec![0, 2], vec![1, 2]]);
    }
}
