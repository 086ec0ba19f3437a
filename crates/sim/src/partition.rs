//! Partitioned placement. Under a policy a partitioned test certifies (EDF-like policies:
//! `ffd-edf`; `rm`: `ffd-rm`; `dm`: `ffd-dm`), the CPUs are exactly those the test built,
//! so a set the analysis accepts is simulated on the partition it proved. Otherwise
//! (fifo/rr, explicit fifo/rr tasks, affinities, or a set no certified partition admits),
//! first-fit decreasing by utilisation with each CPU's load at most 1, exactly.

use crate::result::PartitionReport;
use schedlab_analysis::partition::{
    ffd_partition, test_name, utilisation_at_most_one, Fit, PerCpu,
};
use schedlab_analysis::RtTask;
use schedlab_model::{Policy, Task, TaskClass};

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
/// for the result: the certified one when `policy` has a test that accepts the set, else
/// the load-based first-fit decreasing.
pub fn place(
    tasks: &[Task],
    rt: &[usize],
    cpus: usize,
    policy: Policy,
) -> Result<(Vec<usize>, PartitionReport), String> {
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
            if let Ok(bins) = ffd_partition(&ts, cpus, how) {
                let mut out = vec![0; rt.len()];
                for (c, bin) in bins.iter().enumerate() {
                    for &k in bin {
                        out[k] = c;
                    }
                }
                let report = report(tasks, rt, &out, cpus, test_name(how, Fit::First).0, true);
                return Ok((out, report));
            }
        }
    }
    let out = first_fit_decreasing(tasks, rt, cpus)?;
    let report = report(tasks, rt, &out, cpus, "load-ffd", false);
    Ok((out, report))
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

/// Assign each task in `rt` (indices into `tasks`) to a CPU: tasks sorted by decreasing
/// utilisation (ties: workload order) go to the first allowed CPU whose load stays ≤ 1
/// (exactly: a load of 1 + 1e-9 does not fit). Returns the CPU per task in `rt` order, or
/// a message naming the task that fits nowhere.
pub fn first_fit_decreasing(
    tasks: &[Task],
    rt: &[usize],
    cpus: usize,
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
        let Some(cpu) = (0..cpus).find(|&c| fits(c, &mut bins)) else {
            let loads: Vec<String> = load
                .iter()
                .enumerate()
                .map(|(c, l)| format!("cpu{c} {l:.3}"))
                .collect();
            return Err(format!(
                "partitioned placement: task {} (utilisation {u:.3}) fits on no CPU by first-fit decreasing (loads: {}); use more CPUs or another placement",
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
