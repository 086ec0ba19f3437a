//! Partitioned placement. Under a policy a partitioned test certifies (EDF-like policies:
//! `ffd-edf`; `rm`: `ffd-rm`; `dm`: `ffd-dm`; `bfd-*`/`wfd-*` with best or worst fit), the
//! CPUs are exactly those the test built, so a set the analysis accepts is simulated on
//! the partition it proved. Otherwise (fifo/rr, explicit fifo/rr tasks, affinities, or a
//! set no certified partition admits), the same fit by utilisation with each CPU's load at
//! most 1, exactly. `load-balance` (SimSo's `LB_P_EDF`, `P_RM`) uses no test at all.

use crate::result::PartitionReport;
use schedlab_analysis::partition::{
    fit_partition, test_name, utilisation_at_most_one, Fit, PerCpu,
};
use schedlab_analysis::RtTask;
use schedlab_model::{PartitionHeuristic, Policy, Task, TaskClass};

/// The per-CPU test whose partition `policy` is simulated on: EDF's processor demand for
/// the deadline-driven policies (EDF and EDZL match it on one CPU; LLF with exact laxity
/// is optimal there too), response times in period or deadline order for RM and DM.
pub fn per_cpu_test(policy: Policy) -> Option<PerCpu> {
    match policy {
        Policy::Edf | Policy::Llf | Policy::Illf | Policy::Edzl => Some(PerCpu::Edf),
        Policy::Rm => Some(PerCpu::Rm),
        Policy::Dm => Some(PerCpu::Dm),
        _ => None,
    }
}

/// The CPU of each task in `rt` (indices into `tasks`, in `rt` order) and the partition
/// for the result: under a fit heuristic, the certified one when `policy` has a test that
/// accepts the set, else the load-based fit of the same kind; under `load-balance`, the
/// least loaded CPU for each task in workload order.
pub fn place(
    tasks: &[Task],
    rt: &[usize],
    cpus: usize,
    policy: Policy,
    heuristic: PartitionHeuristic,
) -> Result<(Vec<usize>, PartitionReport), String> {
    let fit = match heuristic {
        PartitionHeuristic::FirstFitDecreasing => Fit::First,
        PartitionHeuristic::BestFitDecreasing => Fit::Best,
        PartitionHeuristic::WorstFitDecreasing => Fit::Worst,
        PartitionHeuristic::LoadBalance => {
            let out = load_balance(tasks, rt, cpus)?;
            let report = report(tasks, rt, &out, cpus, "load-balance", false);
            return Ok((out, report));
        }
    };
    let plain = rt.iter().all(|&i| {
        let t = &tasks[i];
        t.class == TaskClass::Deadline && t.affinity.is_none() && t.period.is_some()
    });
    if let (Some(how), true) = (per_cpu_test(policy), plain) {
        let ts: Vec<RtTask> = rt
            .iter()
            .map(|&i| {
                let t = &tasks[i];
                RtTask::new(&t.name, t.runtime, t.period.unwrap_or(1), t.deadline)
            })
            .collect();
        let constrained = ts.iter().all(|t| t.d <= t.t);
        if how == PerCpu::Edf || constrained {
            if let Ok(bins) = fit_partition(&ts, cpus, how, fit) {
                let mut out = vec![0; rt.len()];
                for (c, bin) in bins.iter().enumerate() {
                    for &k in bin {
                        out[k] = c;
                    }
                }
                let report = report(tasks, rt, &out, cpus, test_name(how, fit).0, true);
                return Ok((out, report));
            }
        }
    }
    let out = fit_decreasing(tasks, rt, cpus, fit)?;
    let method = match fit {
        Fit::First => "load-ffd",
        Fit::Best => "load-bfd",
        Fit::Worst => "load-wfd",
    };
    let report = report(tasks, rt, &out, cpus, method, false);
    Ok((out, report))
}

/// SimSo's load balancing (`LB_P_EDF`, `P_RM`): each task in `rt` order to the allowed CPU
/// with the lowest utilisation so far (ties: lowest index), with no test: a CPU may end
/// above 1 (its jobs then miss). An error only when a task's affinity allows no CPU.
pub fn load_balance(tasks: &[Task], rt: &[usize], cpus: usize) -> Result<Vec<usize>, String> {
    let mut load = vec![0.0f64; cpus];
    let mut out = Vec::with_capacity(rt.len());
    for &i in rt {
        let t = &tasks[i];
        let cpu = (0..cpus)
            .filter(|&c| t.allowed_on(c))
            .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
            .ok_or_else(|| format!("partitioned placement: task {} may run on no CPU", t.name))?;
        load[cpu] += t.utilisation();
        out.push(cpu);
    }
    Ok(out)
}

fn report(
    tasks: &[Task],
    rt: &[usize],
    cpu_of: &[usize],
    cpus: usize,
    method: &str,
    certified: bool,
) -> PartitionReport {
    let mut per_cpu = vec![Vec::new(); cpus];
    for (k, &i) in rt.iter().enumerate() {
        per_cpu[cpu_of[k]].push(tasks[i].name.clone());
    }
    PartitionReport {
        method: method.into(),
        certified,
        cpus: per_cpu,
    }
}

/// [`fit_decreasing`] with first fit.
pub fn first_fit_decreasing(
    tasks: &[Task],
    rt: &[usize],
    cpus: usize,
) -> Result<Vec<usize>, String> {
    fit_decreasing(tasks, rt, cpus, Fit::First)
}

/// Assign each task in `rt` (indices into `tasks`) to a CPU: tasks sorted by decreasing
/// utilisation (ties: workload order) go to an allowed CPU whose load stays ≤ 1 (exactly:
/// a load of 1 + 1e-9 does not fit): the first such CPU, the most loaded (best fit) or the
/// least loaded (worst fit; ties: lowest index). Returns the CPU per task in `rt` order, or
/// a message naming the task that fits nowhere.
pub fn fit_decreasing(
    tasks: &[Task],
    rt: &[usize],
    cpus: usize,
    fit: Fit,
) -> Result<Vec<usize>, String> {
    let mut order: Vec<usize> = (0..rt.len()).collect();
    // Exact comparison of runtime/period by cross-multiplication, so ties are real ties.
    let util = |i: usize| -> (u128, u128) {
        let t = &tasks[rt[i]];
        (t.runtime as u128, t.period.unwrap_or(1) as u128)
    };
    order.sort_by(|&a, &b| {
        let (ra, pa) = util(a);
        let (rb, pb) = util(b);
        (rb * pa).cmp(&(ra * pb)).then(a.cmp(&b))
    });
    // The same (C, T) view the analysis uses, for its exact load check.
    let ts: Vec<RtTask> = rt
        .iter()
        .map(|&i| {
            let t = &tasks[i];
            let p = t.period.unwrap_or(u64::MAX);
            RtTask::new(&t.name, t.runtime, p, p)
        })
        .collect();
    let mut bins: Vec<Vec<usize>> = vec![Vec::new(); cpus];
    let mut load = vec![0.0f64; cpus];
    let mut out = vec![usize::MAX; rt.len()];
    for i in order {
        let t = &tasks[rt[i]];
        let u = t.utilisation();
        let fits = |c: usize, bins: &mut Vec<Vec<usize>>| {
            if !t.allowed_on(c) {
                return false;
            }
            // The running float load decides when clear of 1; the exact sum near 1.
            let s = load[c] + u;
            if s > 1.0 + 1e-6 {
                return false;
            }
            if s < 1.0 - 1e-6 {
                return true;
            }
            bins[c].push(i);
            let ok = utilisation_at_most_one(&ts, &bins[c]);
            bins[c].pop();
            ok
        };
        let mut cands: Vec<usize> = (0..cpus).collect();
        match fit {
            Fit::First => {}
            Fit::Best => cands.sort_by(|&a, &b| load[b].total_cmp(&load[a]).then(a.cmp(&b))),
            Fit::Worst => cands.sort_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b))),
        }
        let name = match fit {
            Fit::First => "first-fit",
            Fit::Best => "best-fit",
            Fit::Worst => "worst-fit",
        };
        let Some(cpu) = cands.into_iter().find(|&c| fits(c, &mut bins)) else {
            let loads: Vec<String> = load
                .iter()
                .enumerate()
                .map(|(c, l)| format!("cpu{c} {l:.3}"))
                .collect();
            return Err(format!(
                "partitioned placement: task {} (utilisation {u:.3}) fits on no CPU by {name} decreasing (loads: {}); use more CPUs or another placement",
                t.name,
                loads.join(", ")
            ));
        };
        bins[cpu].push(i);
        load[cpu] += u;
        out[i] = cpu;
    }
    Ok(out)
}
