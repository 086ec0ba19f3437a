//! How long a simulation must run for a clean run to decide schedulability: the
//! hyperperiod of a periodic task set and its feasibility interval.
//!
//! For a synchronous periodic set with constrained deadlines (D ≤ T) the interval is the
//! hyperperiod H: if no deadline is missed in [0, H), every job released before H is done
//! by H, so at H the system is in the state it started in and a deterministic,
//! memoryless scheduler repeats the same schedule (Cucu & Goossens 2006, 2007 for
//! multiprocessors). With offsets, the state at the largest offset Omax still carries work
//! released earlier, and the schedule is periodic only from Omax + H on: Leung & Merrill
//! (1980) check [0, Omax + 2H).

use crate::time::Ns;
use crate::workload::{ExecModel, Platform, Release, Task};

/// The horizon facts of one workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feasibility {
    /// The lcm of the task periods and of the tick period (when there is a tick); `None` when the schedule has no period: a sporadic,
    /// aperiodic or fair task, random execution times, modelled jitter or platform noise
    /// (interrupts, timer wheels, kernel sections, random wake-up delays), or an lcm that
    /// overflows.
    pub hyperperiod: Option<Ns>,
    /// The feasibility interval: H for synchronous sets, Omax + 2H with offsets; `None`
    /// with no hyperperiod or on overflow.
    pub interval: Option<Ns>,
    /// Every task has a constrained deadline (D ≤ T): the case where a clean run over the
    /// interval proves schedulability.
    pub constrained: bool,
}

impl Feasibility {
    /// Whether a run of `simulated` ns covers the feasibility interval of a deterministic
    /// schedule (see the module documentation for what that proves).
    pub fn complete(&self, simulated: Ns) -> bool {
        self.constrained && self.interval.is_some_and(|i| simulated >= i)
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Least common multiple of `values`, `None` on overflow of u64 (or an empty list).
pub fn lcm(values: impl IntoIterator<Item = Ns>) -> Option<Ns> {
    let mut l: Option<u64> = None;
    for v in values {
        if v == 0 {
            return None;
        }
        l = Some(match l {
            None => v,
            Some(a) => (a / gcd(a, v)).checked_mul(v)?,
        });
    }
    l
}

/// Whether the platform adds anything random or aperiodic to the schedule.
fn platform_is_periodic(p: &Platform) -> bool {
    p.irqs.is_empty()
        && p.timers.is_none()
        && p.kernel_sections.is_none()
        && p.job_costs.wakeup_jitter == 0
}

/// Whether `t` releases a job exactly every period and runs it for its runtime.
fn task_is_periodic(t: &Task) -> bool {
    !t.class.is_fair()
        && t.period.is_some()
        && t.release == Release::Periodic
        && t.exec == ExecModel::Wcet
        && t.work.is_none()
        && t.phases.is_empty()
        && t.probe.is_none()
}

/// The hyperperiod and feasibility interval of `tasks` on `platform`.
pub fn feasibility(platform: &Platform, tasks: &[Task]) -> Feasibility {
    let constrained = tasks
        .iter()
        .all(|t| t.period.is_some_and(|p| t.deadline <= p));
    let periodic = platform_is_periodic(platform) && tasks.iter().all(task_is_periodic);
    // The tick is periodic too: tick-driven decisions (laxity seen at ticks, CBS budgets
    // enforced at ticks) repeat only when the tick's phase does.
    let tick = (platform.hz > 0).then(|| crate::time::S / platform.hz as u64);
    let hyperperiod = if periodic && !tasks.is_empty() {
        lcm(tasks.iter().filter_map(|t| t.period).chain(tick))
    } else {
        None
    };
    let omax = tasks.iter().map(|t| t.offset).max().unwrap_or(0);
    let interval = hyperperiod.and_then(|h| {
        if omax == 0 {
            Some(h)
        } else {
            h.checked_mul(2)?.checked_add(omax)
        }
    });
    Feasibility {
        hyperperiod,
        interval,
        constrained,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lcm_by_hand_and_on_overflow() {
        assert_eq!(lcm([10, 15]), Some(30));
        assert_eq!(lcm([4, 6, 8]), Some(24));
        assert_eq!(lcm([7]), Some(7));
        assert_eq!(lcm(std::iter::empty()), None);
        // Two large coprime numbers: their product is above u64::MAX.
        assert_eq!(lcm([(1 << 40) + 1, (1 << 40) - 1]), None);
    }
}
