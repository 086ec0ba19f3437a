//! CPU idle states (docs/latency.md, "Idle states"): a CPU that has been idle long enough
//! to enter a state pays its exit latency before the task woken on it runs.
//!
//! The governor is taken to predict the idle time exactly: the CPU is in the deepest state
//! whose target residency has elapsed and whose exit latency the PM QoS limit allows
//! ([`schedlab_model::Platform::idle_exit_cost`]). The exit latency is charged as overhead
//! of the incoming task (as a context switch is), so the CPU is busy leaving the state and
//! the task's work starts that much later; its wake-up latency sample includes it.
//! Interrupts handled on an idle CPU do not reset its idle time in this model.

use super::*;

/// Idle states of the platform and, per CPU, since when it is idle.
pub(super) struct IdleStates {
    platform: schedlab_model::Platform,
    /// Per CPU: the instant it went idle (None: running).
    since: Vec<Option<Ns>>,
}

impl IdleStates {
    /// None when the platform has no idle states (nothing to model, nothing to pay).
    pub(super) fn new(p: &schedlab_model::Platform) -> Option<IdleStates> {
        (!p.idle_states.is_empty()).then(|| IdleStates {
            platform: schedlab_model::Platform {
                irqs: Vec::new(),
                timers: None,
                kernel_sections: None,
                ..p.clone()
            },
            // Every CPU starts idle at time 0.
            since: vec![Some(0); p.cpus],
        })
    }
}

impl Engine {
    /// `cpu` switches to `next` now: the exit latency it pays (0 unless it leaves idle).
    pub(super) fn idle_exit(&mut self, cpu: CpuId, next: Option<TaskId>) -> Ns {
        let now = self.now;
        let Some(idle) = self.idle.as_mut() else {
            return 0;
        };
        match next {
            None => {
                idle.since[cpu].get_or_insert(now);
                0
            }
            Some(_) => match idle.since[cpu].take() {
                Some(s) => idle.platform.idle_exit_cost(now - s),
                None => 0,
            },
        }
    }
}
