//! Which kernel class and priority each task of a workload gets: the one mapping that
//! the simulator (class slot and rt priority), the real runner (`sched_setattr`
//! arguments) and the trace exporters (the kernel `prio` of sched_switch) all use.
//!
//! A periodic (`deadline`) task belongs to the workload's policy: SCHED_DEADLINE under a
//! deadline-class policy, SCHED_FIFO/RR with a priority from [`assign_priorities`] under
//! an rt-class one. Explicit `fifo`/`rr` tasks keep their own priority (50 by default);
//! `normal`/`batch`/`idle`/`iso` tasks are in the fair class with their nice value.

use crate::registry::{PolicyClass, SchedPolicy};
use crate::workload::{Policy, Task, TaskClass, Workload};

/// The kernel class a task is scheduled in (stacked deadline > rt > fair).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelClass {
    /// The deadline class.
    Deadline,
    /// The rt class (SCHED_FIFO/RR).
    Rt,
    /// The fair class (or BFS, which replaces it).
    Fair,
}

/// How the kernel schedules one task: the policy, rt priority or nice value that
/// `sched_setattr` would be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedAttr {
    /// SCHED_DEADLINE: a periodic task under a deadline-class policy.
    Deadline,
    /// SCHED_FIFO at this rt priority (1..99).
    Fifo(u8),
    /// SCHED_RR at this rt priority (1..99).
    Rr(u8),
    /// SCHED_OTHER at this nice value.
    Normal(i8),
    /// SCHED_BATCH at this nice value.
    Batch(i8),
    /// SCHED_IDLE (SCHED_IDLEPRIO under BFS) at this nice value.
    Idle(i8),
    /// BFS's SCHED_ISO at this nice value.
    Iso(i8),
}

impl SchedAttr {
    /// The kernel class it puts the task in.
    pub fn class(self) -> KernelClass {
        match self {
            SchedAttr::Deadline => KernelClass::Deadline,
            SchedAttr::Fifo(_) | SchedAttr::Rr(_) => KernelClass::Rt,
            SchedAttr::Normal(_) | SchedAttr::Batch(_) | SchedAttr::Idle(_) | SchedAttr::Iso(_) => {
                KernelClass::Fair
            }
        }
    }

    /// The rt priority (1..99) of a SCHED_FIFO/RR task, 0 otherwise.
    pub fn rt_priority(self) -> u8 {
        match self {
            SchedAttr::Fifo(p) | SchedAttr::Rr(p) => p,
            _ => 0,
        }
    }

    /// Whether the task is SCHED_RR (its slice runs out and it goes to the tail).
    pub fn round_robin(self) -> bool {
        matches!(self, SchedAttr::Rr(_))
    }

    /// The kernel `prio` as sched_switch prints it: -1 for SCHED_DEADLINE,
    /// 99 − rt priority for SCHED_FIFO/RR, 120 + nice for the fair classes.
    pub fn kernel_prio(self) -> i32 {
        match self {
            SchedAttr::Deadline => -1,
            SchedAttr::Fifo(p) | SchedAttr::Rr(p) => 99 - p as i32,
            SchedAttr::Normal(n) | SchedAttr::Batch(n) | SchedAttr::Idle(n) | SchedAttr::Iso(n) => {
                120 + n as i32
            }
        }
    }
}

impl SchedAttr {
    /// What a kernel `prio` (as sched_switch prints it) stands for, the inverse of
    /// [`SchedAttr::kernel_prio`] as far as a trace tells: SCHED_FIFO for both FIFO and
    /// RR (rt priority `99 − prio`, within 1..99), SCHED_OTHER for every fair policy.
    pub fn from_kernel_prio(prio: i32) -> SchedAttr {
        match prio {
            ..=-1 => SchedAttr::Deadline,
            0..=99 => SchedAttr::Fifo((99 - prio).clamp(1, 99) as u8),
            _ => SchedAttr::Normal((prio - 120).clamp(-128, 127) as i8),
        }
    }
}

/// Each task's [`SchedAttr`] under the workload's policy, in task order.
pub fn sched_attrs(w: &Workload) -> Vec<SchedAttr> {
    let policy = w.scheduler.policy;
    let auto = assign_priorities(policy, &w.tasks);
    // Periodic tasks under an rt-class policy take the rt policy the kernel runs it with
    // (the registry's: SCHED_RR for rr, SCHED_FIFO for rm, dm and fifo).
    let periodic_rr = policy.info().real.kernel == Some(SchedPolicy::Rr);
    w.tasks
        .iter()
        .zip(auto)
        .map(|(t, auto)| match t.class {
            TaskClass::Deadline if policy.class() == PolicyClass::Deadline => SchedAttr::Deadline,
            TaskClass::Deadline if periodic_rr => SchedAttr::Rr(auto),
            TaskClass::Deadline => SchedAttr::Fifo(auto),
            TaskClass::Fifo => SchedAttr::Fifo(t.priority.unwrap_or(50)),
            TaskClass::Rr => SchedAttr::Rr(t.priority.unwrap_or(50)),
            TaskClass::Normal => SchedAttr::Normal(t.nice),
            TaskClass::Batch => SchedAttr::Batch(t.nice),
            TaskClass::Idle => SchedAttr::Idle(t.nice),
            TaskClass::Iso => SchedAttr::Iso(t.nice),
        })
        .collect()
}

/// Kernel rt_priority (1..99) for each periodic task under a fixed-priority policy:
/// `rm` by period, `dm` by relative deadline (shorter = higher, ties share a priority,
/// 98 downwards; past 97 distinct values the rest share priority 1), `fifo`/`rr` the
/// task's own `priority` (50 when absent, so equal tasks run in FIFO order).
///
/// Ranks are taken over every task of the list (as the simulator always has), so only
/// the values of periodic tasks are meaningful.
pub fn assign_priorities(policy: Policy, tasks: &[Task]) -> Vec<u8> {
    let rank_by = |key: &dyn Fn(&Task) -> u64| -> Vec<u8> {
        let mut keys: Vec<u64> = tasks.iter().map(key).collect();
        keys.sort_unstable();
        keys.dedup();
        tasks
            .iter()
            .map(|t| {
                let rank = keys.binary_search(&key(t)).unwrap_or(0);
                98u8.saturating_sub(rank.min(97) as u8)
            })
            .collect()
    };
    match policy {
        Policy::Rm => rank_by(&|t: &Task| t.period.unwrap_or(u64::MAX)),
        Policy::Dm => rank_by(&|t: &Task| t.deadline),
        _ => tasks.iter().map(|t| t.priority.unwrap_or(50)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{inline_path, Overrides};

    fn load(yaml: &str, policy: &str) -> Workload {
        let ov = Overrides {
            policy: Some(Policy::parse(policy).unwrap()),
            ..Overrides::default()
        };
        Workload::parse_str(yaml, &inline_path(), &ov).unwrap()
    }

    const MIX: &str = "\
tasks:
  - { name: slow, runtime: 1ms, period: 30ms }
  - { name: fast, runtime: 1ms, period: 10ms, deadline: 9ms }
  - { name: mid, runtime: 1ms, period: 20ms, deadline: 5ms, priority: 7 }
  - { name: ctl, class: fifo, priority: 80, runtime: 1ms, period: 10ms }
  - { name: rr, class: rr, runtime: 1ms, period: 10ms }
  - { name: hog, nice: -3 }
  - { name: batch, class: batch, nice: 4, work: 5ms }
  - { name: idle, class: idle }
";

    #[test]
    fn deadline_policies_put_periodic_tasks_in_sched_deadline() {
        let a = sched_attrs(&load(MIX, "illf"));
        assert_eq!(
            a,
            [
                SchedAttr::Deadline,
                SchedAttr::Deadline,
                SchedAttr::Deadline,
                SchedAttr::Fifo(80),
                SchedAttr::Rr(50),
                SchedAttr::Normal(-3),
                SchedAttr::Batch(4),
                SchedAttr::Idle(0),
            ]
        );
        assert_eq!(
            a.iter().map(|x| x.kernel_prio()).collect::<Vec<_>>(),
            [-1, -1, -1, 19, 49, 117, 124, 120]
        );
    }

    #[test]
    fn rt_policies_assign_priorities_and_rr_makes_them_round_robin() {
        // rm ranks by period over every task: 10ms (fast, ctl, rr) 98, 20ms 97, 30ms 96.
        let rm = sched_attrs(&load(MIX, "rm"));
        assert_eq!(
            rm[..3],
            [
                SchedAttr::Fifo(96),
                SchedAttr::Fifo(98),
                SchedAttr::Fifo(97)
            ]
        );
        // dm by relative deadline, the fair tasks' 0 included: 0 98, 5ms 97, 9ms 96,
        // 10ms (ctl, rr) 95, 30ms 94.
        let dm = sched_attrs(&load(MIX, "dm"));
        assert_eq!(
            dm[..3],
            [
                SchedAttr::Fifo(94),
                SchedAttr::Fifo(96),
                SchedAttr::Fifo(97)
            ]
        );
        let fifo = sched_attrs(&load(MIX, "fifo"));
        assert_eq!(
            fifo[..3],
            [SchedAttr::Fifo(50), SchedAttr::Fifo(50), SchedAttr::Fifo(7)]
        );
        let rr = sched_attrs(&load(MIX, "rr"));
        assert_eq!(
            rr[..3],
            [SchedAttr::Rr(50), SchedAttr::Rr(50), SchedAttr::Rr(7)]
        );
        assert!(rr[..3]
            .iter()
            .all(|a| a.round_robin() && a.class() == KernelClass::Rt));
        // Explicit fifo/rr tasks keep their own policy whatever the workload's.
        for a in [&rm, &dm, &fifo, &rr] {
            assert_eq!(a[3], SchedAttr::Fifo(80));
            assert_eq!(a[4], SchedAttr::Rr(50));
        }
    }

    #[test]
    fn classes_priorities_and_kernel_prios_agree() {
        for attr in sched_attrs(&load(MIX, "rr")) {
            match attr.class() {
                KernelClass::Deadline => assert_eq!(attr.kernel_prio(), -1),
                KernelClass::Rt => {
                    assert!((1..=99).contains(&attr.rt_priority()));
                    assert_eq!(attr.kernel_prio(), 99 - attr.rt_priority() as i32);
                }
                KernelClass::Fair => {
                    assert_eq!(attr.rt_priority(), 0);
                    assert!((100..140).contains(&attr.kernel_prio()));
                }
            }
        }
    }

    #[test]
    fn kernel_prios_read_back_as_what_a_trace_can_tell() {
        for attr in sched_attrs(&load(MIX, "dm")) {
            let back = SchedAttr::from_kernel_prio(attr.kernel_prio());
            assert_eq!(back.kernel_prio(), attr.kernel_prio(), "{attr:?}");
            assert_eq!(back.class(), attr.class(), "{attr:?}");
        }
        assert_eq!(SchedAttr::from_kernel_prio(99), SchedAttr::Fifo(1));
    }

    #[test]
    fn more_than_97_distinct_periods_share_priority_1() {
        let mut y = String::from("tasks:\n");
        for i in 1..=100 {
            y += &format!("  - {{ name: t{i}, runtime: 1us, period: {i}ms }}\n");
        }
        let p = assign_priorities(Policy::Rm, &load(&y, "rm").tasks);
        assert_eq!((p[0], p[1], p[96], p[97], p[99]), (98, 97, 2, 1, 1));
    }
}
