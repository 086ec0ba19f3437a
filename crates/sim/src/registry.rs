//! The simulator's half of the policy registry ([`schedlab_model::registry`]): the
//! constructor of each policy's scheduling class.
//!
//! The engine stacks three class slots, deadline > rt > fair. A policy's class goes in
//! the slot of its registry class: a deadline-class policy (edf, llf, ...) fills the
//! deadline slot, an rt-class one (rm, dm, fifo, rr: the kernel's rt class with
//! priorities from [`schedlab_model::classes`]) the rt slot, a fair or whole policy the
//! fair slot. [`crate::engine_for`] fills the other slots with their defaults.

use crate::class::SchedClass;
use crate::policy;
use crate::SimError;
use schedlab_model::time::S;
use schedlab_model::{Placement, Policy, Workload};

/// Builds a policy's class for a workload, or says why the workload cannot use it.
pub type BuildClass = fn(&Workload) -> Result<Box<dyn SchedClass>, SimError>;

/// One policy's simulator entry.
#[derive(Clone, Copy)]
pub struct SimPolicy {
    /// The policy (its name, class and the rest are in the model's registry).
    pub policy: Policy,
    /// Its class's constructor.
    pub build: BuildClass,
}

/// Every simulated policy's constructor, in the model registry's order.
pub const SIM_POLICIES: &[SimPolicy] = &[
    SimPolicy {
        policy: Policy::Edf,
        build: |_| Ok(Box::new(policy::edf::Edf::default())),
    },
    SimPolicy {
        policy: Policy::Llf,
        build: llf,
    },
    SimPolicy {
        policy: Policy::Illf,
        build: |w| Ok(Box::new(policy::illf::Illf::new(w.scheduler.illf))),
    },
    SimPolicy {
        policy: Policy::Edzl,
        build: |w| Ok(Box::new(policy::edzl::Edzl::new(w.scheduler.edzl.exact))),
    },
    // SimSo's priority-driven global schedulers (issue 27).
    SimPolicy {
        policy: Policy::EdfUs,
        build: |w| Ok(Box::new(policy::edf_us::build(w)?)),
    },
    SimPolicy {
        policy: Policy::Prid,
        build: |w| Ok(Box::new(policy::prid::build(w)?)),
    },
    SimPolicy {
        policy: Policy::GFl,
        build: |w| Ok(Box::new(policy::g_fl::build(w)?)),
    },
    SimPolicy {
        policy: Policy::GFlZl,
        build: |w| Ok(Box::new(policy::g_fl_zl::build(w)?)),
    },
    // SimSo's laxity-driven global schedulers (issue 27, item 2).
    SimPolicy {
        policy: Policy::Mllf,
        build: |w| Ok(Box::new(policy::mllf::build(w)?)),
    },
    SimPolicy {
        policy: Policy::Edcl,
        build: |w| Ok(Box::new(policy::edcl::build(w)?)),
    },
    SimPolicy {
        policy: Policy::Nvnlf,
        build: |w| Ok(Box::new(policy::nvnlf::build(w)?)),
    },
    SimPolicy {
        policy: Policy::Edhs,
        build: |w| Ok(Box::new(policy::edhs::build(w)?)),
    },
    SimPolicy {
        policy: Policy::Rm,
        build: rt_class,
    },
    SimPolicy {
        policy: Policy::Dm,
        build: rt_class,
    },
    SimPolicy {
        policy: Policy::Fifo,
        build: rt_class,
    },
    SimPolicy {
        policy: Policy::Rr,
        build: rt_class,
    },
    SimPolicy {
        policy: Policy::Cfs,
        build: |w| Ok(Box::new(policy::cfs::Cfs::new(w.scheduler.cfs))),
    },
    SimPolicy {
        policy: Policy::Eevdf,
        build: |w| {
            let tick = S.checked_div(w.platform.hz as u64).unwrap_or(0);
            let mut p = w.scheduler.eevdf;
            // A task reading its own CPU clock runs `update_curr` at every read, which
            // ends a used-up request at once (`update_deadline`), as HRTICK would.
            p.hrtick |= w.platform.job_costs.reads_cpu_clock;
            Ok(Box::new(policy::eevdf::Eevdf::new(p).with_tick(tick)))
        },
    },
    SimPolicy {
        policy: Policy::Bfs,
        build: |w| {
            Ok(Box::new(policy::bfs::Bfs::new(
                w.scheduler.bfs,
                w.platform.cpus,
                w.platform.hz,
            )))
        },
    },
];

/// `llf`: decisions at ticks, or exactly at laxity crossings (per-CPU queues only).
fn llf(w: &Workload) -> Result<Box<dyn SchedClass>, SimError> {
    let o = w.scheduler.llf;
    if !o.exact {
        return Ok(Box::new(policy::llf::Llf::new(o.lrs_tie)));
    }
    if w.scheduler.placement == Placement::Global {
        return Err(SimError::Unsupported(
            "llf mode exact needs per-CPU run queues: use placement linux or partitioned (global placement works with mode tick)".into(),
        ));
    }
    Ok(Box::new(policy::llf::Llf::exact(policy::llf::TieRule::Edf)))
}

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
    use schedlab_model::{Overrides, Workload};
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
        let order: Vec<Policy> = SIM_POLICIES.iter().map(|s| s.policy).collect();
        let model: Vec<Policy> = POLICIES.iter().map(|e| e.policy).collect();
        assert_eq!(order, model, "keep the model registry's order");
    }

    #[test]
    fn every_policy_builds_the_class_named_after_it() {
        for e in &POLICIES {
            let build = sim_policy(e.policy).unwrap().build;
            // The global schedulers refuse the default (linux) placement.
            let class = match build(&workload(e.policy)) {
                Err(SimError::Unsupported(m)) if m.contains("global scheduler") => {
                    let mut w = workload(e.policy);
                    w.scheduler.placement = Placement::Global;
                    build(&w).unwrap()
                }
                other => other.unwrap(),
            };
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
