//! What the simulator and the real runner both report about fair tasks: a task's load
//! weight and the CPU share its weight entitles it to. One definition, so that
//! `fair.weight` and `fair.entitled_share` mean the same in a simulated and a real result.

use crate::weights::WEIGHT_IDLEPRIO;
use crate::workload::{Policy, Task, TaskClass, Workload};

/// Load weight of a fair task: SCHED_IDLE tasks weigh 3 (outside BFS, where SCHED_IDLEPRIO
/// has no weight of its own), others take their nice value's weight from the workload's
/// table.
pub fn fair_weight(w: &Workload, t: &Task) -> u64 {
    if t.class == TaskClass::Idle && w.scheduler.fair != Policy::Bfs {
        WEIGHT_IDLEPRIO
    } else {
        w.scheduler.weights.weight(t.nice)
    }
}

/// Whether `t` is an aperiodic fair task that is runnable for the whole run (no phases,
/// no `work:`): the tasks a fair share is defined for.
pub fn always_runnable(t: &Task) -> bool {
    t.class.is_fair() && t.period.is_none() && t.phases.is_empty() && t.work.is_none()
}

/// Per task (workload order), the CPU share each always-runnable fair task is entitled
/// to: weight / total weight of such tasks × CPUs, no task more than one CPU
/// (water-filling); None for every other task.
pub fn entitled_shares(w: &Workload) -> Vec<Option<f64>> {
    let weights: Vec<u64> = w.tasks.iter().map(|t| fair_weight(w, t)).collect();
    let mut out = vec![None; w.tasks.len()];
    let mut cpus = w.platform.cpus as f64;
    let mut left: Vec<usize> = (0..w.tasks.len())
        .filter(|&i| always_runnable(&w.tasks[i]))
        .collect();
    left.sort_by_key(|&i| std::cmp::Reverse(weights[i]));
    while let Some(&i) = left.first() {
        let total: u64 = left.iter().map(|&j| weights[j]).sum();
        if cpus * weights[i] as f64 / total as f64 > 1.0 {
            out[i] = Some(1.0);
            cpus -= 1.0;
            left.remove(0);
        } else {
            for &j in &left {
                out[j] = Some(cpus * weights[j] as f64 / total as f64);
            }
            break;
        }
    }
    out
}

/// Jain's fairness index over `share / entitled_share` of the tasks that have an
/// entitlement (1 = perfectly fair); None with fewer than two such tasks.
pub fn jain_index(shares: &[(f64, Option<f64>)]) -> Option<f64> {
    let xs: Vec<f64> = shares
        .iter()
        .filter_map(|&(s, e)| e.map(|e| s / e))
        .collect();
    (xs.len() >= 2).then(|| {
        let sum: f64 = xs.iter().sum();
        let sq: f64 = xs.iter().map(|x| x * x).sum();
        sum * sum / (xs.len() as f64 * sq)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Overrides;
    use std::path::Path;

    fn load(yaml: &str) -> Workload {
        Workload::parse_str(yaml, Path::new("w.yaml"), &Overrides::default()).unwrap()
    }

    #[test]
    fn heavy_tasks_are_capped_at_one_cpu_and_the_rest_share() {
        let w = load(
            "platform: { cpus: 2 }
tasks:
  - { name: big, nice: -10 }
  - { name: a }
  - { name: b }
  - { name: ui, run: 1ms, sleep: 9ms }
  - { name: batch, work: 10ms }
",
        );
        let e = entitled_shares(&w);
        assert_eq!(e[0], Some(1.0));
        assert!((e[1].unwrap() - 0.5).abs() < 1e-12 && (e[2].unwrap() - 0.5).abs() < 1e-12);
        assert_eq!((e[3], e[4]), (None, None));
        assert_eq!(
            jain_index(&[(0.5, Some(0.5)), (0.25, Some(0.5))]),
            Some(0.9)
        );
        assert_eq!(jain_index(&[(0.5, Some(0.5)), (0.1, None)]), None);
    }
}
