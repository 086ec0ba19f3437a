//! The tasks a schedulability test sees: sporadic `(C, D, T)` in integer nanoseconds,
//! taken from a workload's periodic real-time tasks.

use schedlab_model::{TaskClass, Workload};
use serde::Serialize;

/// A sporadic task: worst-case execution time `c`, relative deadline `d`, minimum
/// inter-arrival time (period) `t`, all in ns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RtTask {
    /// Task name.
    pub name: String,
    /// Worst-case execution time.
    pub c: u64,
    /// Period (minimum inter-arrival time).
    pub t: u64,
    /// Relative deadline.
    pub d: u64,
}

impl RtTask {
    /// A task from its name, runtime, period and deadline.
    pub fn new(name: &str, c: u64, t: u64, d: u64) -> RtTask {
        RtTask {
            name: name.into(),
            c,
            t,
            d,
        }
    }

    /// C / T.
    pub fn utilisation(&self) -> f64 {
        self.c as f64 / self.t as f64
    }

    /// C / min(D, T).
    pub fn density(&self) -> f64 {
        self.c as f64 / self.d.min(self.t) as f64
    }
}

/// The periodic deadline-class tasks of `w` as sporadic tasks. Fails (with the task's name)
/// on what the tests do not model: tasks without a period, fixed-priority or fair tasks,
/// affinities. Offsets, release jitter and execution times below the runtime are accepted:
/// the tests assume the worst case (synchronous release, minimum inter-arrival time,
/// every job running for its full runtime), which covers them.
pub fn from_workload(w: &Workload) -> Result<Vec<RtTask>, String> {
    tasks_of(w, true)
}

/// [`from_workload`] with every task's name left empty (the same checks and messages):
/// for [`crate::analyze_outcomes`], whose verdicts carry no reason and so read no name,
/// without allocating and freeing a copy of each name (a sweep cell's 16).
pub fn from_workload_unnamed(w: &Workload) -> Result<Vec<RtTask>, String> {
    tasks_of(w, false)
}

/// [`from_workload`], the names copied when `named`.
fn tasks_of(w: &Workload, named: bool) -> Result<Vec<RtTask>, String> {
    let mut out = Vec::with_capacity(w.tasks.len());
    for t in &w.tasks {
        let Some(period) = t.period else {
            return Err(format!(
                "task {} has no period: the schedulability tests take periodic tasks only",
                t.name
            ));
        };
        if t.class != TaskClass::Deadline {
            return Err(format!(
                "task {} is a {} task: the tests take deadline-class periodic tasks only",
                t.name,
                t.class.name()
            ));
        }
        if t.affinity.is_some() {
            return Err(format!(
                "task {} has an affinity: the tests assume every task may run on every CPU",
                t.name
            ));
        }
        // An empty name allocates nothing.
        let name = if named { t.name.as_str() } else { "" };
        out.push(RtTask::new(name, t.runtime, period, t.deadline));
    }
    if out.is_empty() {
        return Err("the workload has no periodic task to analyse".into());
    }
    Ok(out)
}
