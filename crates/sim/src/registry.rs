//! The simulator's half of the policy registry ([`schedlab_model::registry`]): the
//! constructor of each policy's scheduling class, declared in the policy's own file
//! (its `SIM` entries, collected by [`crate::policy`]) and looked up here.
//!
//! The engine stacks three class slots, deadline > rt > fair. A policy's class goes in
//! the slot of its registry class: a deadline-class policy (edf, llf, ...) fills the
//! deadline slot, an rt-class one (rm, dm, fifo, rr: the kernel's rt class with
//! priorities from [`schedlab_model::classes`]) the rt slot, a fair or whole policy the
//! fair slot. [`crate::engine_for`] fills the other slots with their defaults.

use crate::class::SchedClass;
use crate::policy;
use crate::SimError;
use schedlab_model::registry::POLICIES;
use schedlab_model::time::S;
use schedlab_model::{Policy, Workload};
use std::sync::LazyLock;

/// A built class, or why the workload cannot use the policy.
pub type Built = Result<Box<dyn SchedClass>, SimError>;

/// Builds a policy's class for a workload, or says why the workload cannot use it.
pub type BuildClass = fn(&Workload) -> Built;

/// One policy's simulator entry.
#[derive(Clone, Copy)]
pub struct SimPolicy {
    /// The policy (its name, class and the rest are in the model's registry).
    pub policy: Policy,
    /// Its class's constructor.
    pub build: BuildClass,
}

/// Every simulated policy's constructor, in the model registry's order.
pub static SIM_POLICIES: LazyLock<Vec<SimPolicy>> = LazyLock::new(|| {
    POLICIES
        .iter()
        .filter_map(|e| {
            policy::ALL
                .iter()
                .flat_map(|file| file.iter())
                .find(|s| s.policy == e.policy)
                .copied()
        })
        .collect()
});

/// The rt class (SCHED_FIFO/RR) with the workload's RR slice in ticks.
pub fn rt_class(w: &Workload) -> Result<Box<dyn SchedClass>, SimError> {
    let hz = w.platform.hz as u64;
    let slice_ticks = if hz == 0 {
        0
    } else {
        (w.scheduler.rr_timeslice * hz / S).max(1)
    };
    Ok(Box::new(policy::rt::Rt::new(slice_ticks)))
}

/// The simulator's entry of `p`, if it simulates it.
pub fn sim_policy(p: Policy) -> Option<&'static SimPolicy> {
    SIM_POLICIES.iter().find(|e| e.policy == p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_model::registry::{PolicyClass, POLICIES};
    use schedlab_model::{Overrides, Placement, Workload};
    use std::path::Path;

    fn workload(policy: Policy) -> Workload {
        let yaml = "platform: { cpus: 2 }\ntasks:\n  - { name: a, runtime: 1ms, period: 10ms }\n  - { name: b, nice: 1 }\n";
        let ov = Overrides {
            policy: Some(policy),
            ..Overrides::default()
        };
        Workload::parse_str(yaml, Path::new("w.yaml"), &ov).unwrap()
    }

    #[test]
    fn every_registry_policy_has_exactly_one_constructor() {
        for e in &POLICIES {
            let n = SIM_POLICIES.iter().filter(|s| s.policy == e.policy).count();
            assert_eq!(n, 1, "{} has {n} simulator entries", e.name);
        }
        assert_eq!(SIM_POLICIES.len(), POLICIES.len());
        // One file's entry per policy: two files claiming one policy is a mistake.
        for e in &POLICIES {
            let n = policy::ALL
                .iter()
                .flat_map(|f| f.iter())
                .filter(|s| s.policy == e.policy)
                .count();
            assert_eq!(n, 1, "{} is built by {n} policy files", e.name);
        }
        let order: Vec<Policy> = SIM_POLICIES.iter().map(|s| s.policy).collect();
        let model: Vec<Policy> = POLICIES.iter().map(|e| e.policy).collect();
        assert_eq!(order, model, "keep the model registry's order");
    }

    #[test]
    fn every_policy_builds_the_class_named_after_it() {
        for e in &POLICIES {
            let build = sim_policy(e.policy).unwrap().build;
            let mut w = workload(e.policy);
            // Global schedulers (pd2, llref, ...) refuse per-CPU placements.
            if let Err(SimError::Unsupported(_)) = build(&w) {
                w.scheduler.placement = Placement::Global;
            }
            let class = build(&w).unwrap();
            // fifo, rr, rm and dm are the kernel's one rt class; they differ in the
            // priorities and round-robin flag of their tasks (schedlab_model::classes).
            let want = match e.class {
                PolicyClass::Rt => "rt",
                _ => e.name,
            };
            assert_eq!(class.name(), want, "{}", e.name);
        }
    }

    #[test]
    fn exact_llf_is_refused_under_global_placement() {
        let llf = sim_policy(Policy::Llf).unwrap().build;
        let mut w = workload(Policy::Llf);
        w.scheduler.llf.exact = true;
        assert!(llf(&w).is_ok());
        w.scheduler.placement = Placement::Global;
        let Err(SimError::Unsupported(msg)) = llf(&w) else {
            panic!("exact llf under global placement was accepted")
        };
        assert!(msg.contains("per-CPU run queues"), "{msg}");
    }
}
