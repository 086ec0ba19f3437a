//! What a real run does with each field of the workload format: run it, use the host's
//! own value (and warn when the file's differs), warn that it is simulated only, or
//! refuse the workload. [`TREATMENTS`] covers every field of
//! [`schedlab_model::fields::field_paths`] (a block's entry covers the fields inside it;
//! the test fails when a field has none), docs/run.md has the same table, and [`check`]
//! turns a workload into the run's warnings or a refusal before any thread exists.

use crate::host::HostSched;
use crate::runner::{Backend, RunError};
use schedlab_model::{format_ns, Phase, Placement, Policy, TaskClass, WeightTable, Workload};

/// Shortest run/sleep cycle a real run accepts (ns).
pub const MIN_CYCLE: u64 = 50_000;

/// How the runner treats a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Treatment {
    /// Executed for real.
    Run,
    /// The host kernel's own value applies (the runner changes no kernel tunable); a
    /// warning says so when the file's value differs from the host's.
    Host,
    /// Simulated only (a modelled cost or device): a warning when the file sets it.
    Warn,
    /// The run is refused when the file sets it to something the kernel cannot do.
    Refuse,
}

impl Treatment {
    /// The word used in docs/run.md's table.
    pub fn word(self) -> &'static str {
        match self {
            Treatment::Run => "run",
            Treatment::Host => "host",
            Treatment::Warn => "warned",
            Treatment::Refuse => "refused",
        }
    }
}

/// Every field (or block) of the format and its treatment. Longest prefix wins.
pub const TREATMENTS: &[(&str, Treatment)] = &[
    ("name", Treatment::Run),
    ("duration", Treatment::Run),
    ("seed", Treatment::Run),
    ("on_miss", Treatment::Run),
    ("platform", Treatment::Run),
    ("platform.cpus", Treatment::Run),
    ("platform.hz", Treatment::Host),
    ("platform.quantum", Treatment::Warn),
    ("platform.context_switch", Treatment::Warn),
    ("platform.migration", Treatment::Warn),
    ("platform.preemption", Treatment::Warn),
    ("platform.tick", Treatment::Warn),
    ("platform.hrtick", Treatment::Host),
    ("platform.wakeup_cost", Treatment::Warn),
    ("platform.irqs", Treatment::Warn),
    ("platform.timers", Treatment::Warn),
    ("platform.isolated", Treatment::Run),
    ("platform.kernel_sections", Treatment::Warn),
    ("platform.idle_states", Treatment::Warn),
    ("platform.pm_qos_latency", Treatment::Run),
    ("platform.job_costs", Treatment::Warn),
    ("scheduler", Treatment::Run),
    ("scheduler.deadline", Treatment::Run),
    ("scheduler.rt", Treatment::Run),
    ("scheduler.fair", Treatment::Refuse),
    ("scheduler.placement", Treatment::Warn),
    ("scheduler.partition", Treatment::Warn),
    ("scheduler.rr_timeslice", Treatment::Host),
    ("scheduler.dl_margin", Treatment::Run),
    ("scheduler.cbs", Treatment::Host),
    ("scheduler.llf", Treatment::Run),
    ("scheduler.illf", Treatment::Run),
    ("scheduler.edzl", Treatment::Run),
    ("scheduler.weights", Treatment::Refuse),
    ("scheduler.cfs", Treatment::Host),
    ("scheduler.eevdf", Treatment::Host),
    ("scheduler.bfs", Treatment::Refuse),
    ("scheduler.migration_cost", Treatment::Host),
    ("tasks", Treatment::Run),
];

/// The options block of a policy without its own entry above (a registry policy's
/// declared `scheduler.<name>:`): its options go with the policy, which each backend
/// runs or refuses by name, so a policy added to the registry needs no entry here.
pub const POLICY_OPTIONS: (&str, Treatment) = ("scheduler.<policy>", Treatment::Run);

/// The entry covering `path` (the longest prefix at a `.` or `[` boundary; a declared
/// policy block without one: [`POLICY_OPTIONS`]).
pub fn treatment(path: &str) -> Option<(&'static str, Treatment)> {
    let found = TREATMENTS
        .iter()
        .filter(|(p, _)| {
            path == *p
                || path
                    .strip_prefix(p)
                    .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
        })
        .max_by_key(|(p, _)| p.len())
        .copied();
    let block = path
        .strip_prefix("scheduler.")
        .map(|r| r.split('.').next().unwrap_or(r));
    let declared = block.is_some_and(|b| {
        schedlab_model::POLICIES
            .iter()
            .any(|e| e.name == b && !e.options.is_empty())
    });
    match found {
        Some(("scheduler", _)) if declared => Some(POLICY_OPTIONS),
        other => other,
    }
}

/// The warnings of a real run of `w` under `backend` on `host`, or why it cannot run.
pub fn check(w: &Workload, backend: Backend, host: &HostSched) -> Result<Vec<String>, RunError> {
    let mut warn = Vec::new();
    let pf = &w.platform;
    let has_fair = w.tasks.iter().any(|t| t.class.is_fair());
    let sc = &w.scheduler;
    let refuse = |m: String| Err(RunError::Unsupported(m));

    // Fair class: the kernel has exactly one, and the linux weight table; under
    // --backend scx a workload without periodic tasks runs `bfs` / `cfs` (any table) in
    // schedlab's sched_ext schedulers instead.
    let scx_fair = match backend {
        Backend::Scx => crate::scx::FairScheduler::for_workload(w),
        _ => None,
    };
    if let Some(t) = w.tasks.iter().find(|t| t.class == TaskClass::Iso) {
        if backend == Backend::Scx {
            return refuse(format!(
                "task {}: class iso (SCHED_ISO) has no sched_ext version: scx_bfs schedules normal, batch and idle tasks (docs/scx.md)",
                t.name
            ));
        }
    }
    if has_fair && scx_fair.is_none() {
        let periodic = w.tasks.iter().any(|t| t.class == TaskClass::Deadline);
        let via_scx = if backend == Backend::Scx && periodic {
            " (--backend scx runs it only in a workload without periodic tasks: one sched_ext scheduler at a time, and the periodic tasks' is loaded)"
        } else {
            " (--backend scx runs it in schedlab's sched_ext scheduler, on a kernel with sched_ext)"
        };
        if sc.fair == Policy::Bfs {
            return refuse(format!(
                "scheduler.fair: `bfs` is simulated only on this backend: this kernel ({}) schedules normal tasks with {}{via_scx}",
                host.release,
                host.fair_policy().name()
            ));
        }
        if sc.weights != WeightTable::Linux {
            let how = if sc.fair == Policy::Cfs {
                via_scx.to_string()
            } else {
                format!(
                    " (--backend scx runs it with `fair: cfs`, not `{}`)",
                    sc.fair.name()
                )
            };
            return refuse(format!(
                "scheduler.weights: the kernel's nice-to-weight table is `linux`; `{}` is simulated only on this backend{how}",
                sc.weights.name()
            ));
        }
    }
    if has_fair && scx_fair.is_none() {
        if backend == Backend::Scx && !w.tasks.iter().any(|t| t.class == TaskClass::Deadline) {
            warn.push(format!(
                "scheduler.fair: `{}` has no sched_ext version (bfs and cfs have): the fair tasks run in the kernel's own fair class",
                sc.fair.name()
            ));
        }
        if sc.fair != host.fair_policy() {
            warn.push(format!(
                "scheduler.fair: `{}` is simulated; this kernel ({}) runs the normal tasks under {}",
                sc.fair.name(),
                host.release,
                host.fair_policy().name()
            ));
        } else if host.eevdf && sc.eevdf.base_slice != host.base_slice.ns {
            warn.push(format!(
                "scheduler.eevdf.base_slice: the simulator uses {}, this kernel {} ({}; the runner does not change it)",
                format_ns(sc.eevdf.base_slice),
                format_ns(host.base_slice.ns),
                source(host.base_slice.source, host.online_cpus)
            ));
        } else if !host.eevdf && sc.cfs.min_granularity != host.base_slice.ns {
            warn.push(format!(
                "scheduler.cfs: the simulator uses min_granularity {}, this kernel {} ({})",
                format_ns(sc.cfs.min_granularity),
                format_ns(host.base_slice.ns),
                source(host.base_slice.source, host.online_cpus)
            ));
        }
        if sc.migration_cost != host.migration_cost.ns && pf.cpus > 1 {
            warn.push(format!(
                "scheduler.migration_cost: the simulator uses {}, this kernel {}",
                format_ns(sc.migration_cost),
                format_ns(host.migration_cost.ns)
            ));
        }
    }
    // A wake-up costs tens of µs for real (timer interrupt, clock_nanosleep, clock reads):
    // shorter cycles cannot be timed, and each one is a recorded job.
    for t in &w.tasks {
        let cycle: u64 = t
            .phases
            .iter()
            .map(|p| match *p {
                Phase::Run(d) | Phase::Sleep(d) => d,
            })
            .sum();
        if !t.phases.is_empty() && cycle < MIN_CYCLE {
            return refuse(format!(
                "task {}: its phases repeat every {}, shorter than the {} a real wake-up needs to be timed (clock_nanosleep and clock reads cost tens of µs)",
                t.name,
                format_ns(cycle),
                format_ns(MIN_CYCLE)
            ));
        }
    }
    if let Some(hz) = host.hz {
        if pf.hz != hz {
            warn.push(format!(
                "platform.hz: the simulator ticks at {} Hz, this kernel at {hz} (CONFIG_HZ)",
                pf.hz
            ));
        }
    }
    for (field, ns) in [
        ("context_switch", pf.context_switch),
        ("migration", pf.migration),
        ("preemption", pf.preemption),
        ("tick", pf.tick),
        ("wakeup_cost", pf.wakeup_cost),
    ] {
        if ns > 0 {
            warn.push(format!(
                "platform.{field}: {} is a simulated cost; the real run pays this machine's own",
                format_ns(ns)
            ));
        }
    }
    if !pf.job_costs.is_off() {
        warn.push(
            "platform.job_costs: a model of what each job costs a real run; the real run pays the runner's own".into(),
        );
    }
    if pf.hrtick {
        warn.push(
            "platform.hrtick: the kernel's own HRTICK_DL feature decides how CBS budgets are enforced"
                .into(),
        );
    }
    if !pf.irqs.is_empty() {
        warn.push(format!(
            "platform.irqs: the {} simulated interrupt source(s) are not generated; the real run has this machine's own interrupts",
            pf.irqs.len()
        ));
    }
    if pf.timers.is_some() {
        warn.push("platform.timers: the simulated timer wheels are not armed; the real run has this machine's own timers".into());
    }
    if !pf.idle_states.is_empty() {
        warn.push(format!(
            "platform.idle_states: the {} simulated idle state(s) are not used; the real run has this machine's own (cpuidle)",
            pf.idle_states.len()
        ));
    }
    if pf.kernel_sections.is_some() {
        warn.push("platform.kernel_sections: the simulated non-preemptible sections are not injected; the real run has this kernel's own".into());
    }
    if !pf.isolated.is_empty() {
        if let Some(t) = w.tasks.iter().find(|t| {
            t.affinity.is_none() && t.class == TaskClass::Deadline && backend == Backend::Kernel
        }) {
            return refuse(format!(
                "platform.isolated: task {} is SCHED_DEADLINE, which must be allowed on every CPU of its root domain, so it cannot avoid the isolated CPUs (give it an affinity, drop `isolated`, or use --backend dispatcher)",
                t.name
            ));
        }
        warn.push(format!(
            "platform.isolated: tasks without affinity avoid CPUs {:?}, but interrupts and timers are not moved off them (`schedlab latency --shield` does that)",
            pf.isolated
        ));
    }
    let real_placement = match backend {
        Backend::Dispatcher => Placement::Global,
        _ => Placement::Linux,
    };
    let has_periodic = w.tasks.iter().any(|t| t.class == TaskClass::Deadline);
    if has_periodic && sc.placement != real_placement && sc.placement != Placement::Linux {
        warn.push(format!(
            "scheduler.placement: `{}` is simulated; the real run's placement is `{}`",
            sc.placement.name(),
            real_placement.name()
        ));
    }
    let has_rr = w.tasks.iter().any(|t| {
        t.class == TaskClass::Rr || (t.class == TaskClass::Deadline && sc.policy == Policy::Rr)
    });
    if let (true, Some(host_rr)) = (has_rr, host.rr_timeslice) {
        if sc.rr_timeslice != host_rr {
            warn.push(format!(
                "scheduler.rr_timeslice: the simulator uses {}, this kernel {} (sched_rr_timeslice_ms)",
                format_ns(sc.rr_timeslice),
                format_ns(host_rr)
            ));
        }
    }
    if !sc.cbs && has_periodic && backend == Backend::Kernel && sc.policy == Policy::Edf {
        warn.push(
            "scheduler.cbs: false is simulated; SCHED_DEADLINE always enforces budgets".into(),
        );
    }
    Ok(warn)
}

fn source(src: &str, online: usize) -> String {
    if src == "debugfs" {
        "read from /sys/kernel/debug/sched".into()
    } else {
        format!("its default for {online} online CPUs; debugfs not mounted")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_model::fields::field_paths;
    use schedlab_model::time::MS;
    use schedlab_model::Overrides;
    use std::path::Path;

    #[test]
    fn every_field_of_the_format_has_a_treatment_and_a_row_in_docs_run_md() {
        let doc = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/run.md"),
        )
        .unwrap();
        let mut missing = Vec::new();
        for path in field_paths() {
            match treatment(&path) {
                None => missing.push(format!("{path}: no treatment in TREATMENTS")),
                Some((entry, how)) => {
                    let row = format!("| `{entry}` | {} |", how.word());
                    if !doc.contains(&row) {
                        missing.push(format!("{path}: docs/run.md has no row `{row}`"));
                    }
                }
            }
        }
        let (entry, how) = POLICY_OPTIONS;
        let row = format!("| `{entry}` | {} |", how.word());
        if !doc.contains(&row) {
            missing.push(format!("docs/run.md has no row `{row}`"));
        }
        assert!(missing.is_empty(), "{}", missing.join("\n"));
        // Every entry names a real field (no stale rows).
        let all = field_paths();
        for (p, _) in TREATMENTS {
            assert!(all.iter().any(|f| f == p), "{p} is not a field");
        }
    }

    #[test]
    fn a_declared_policy_block_is_covered_without_an_entry() {
        // llf has its own entry; a block without one falls back to POLICY_OPTIONS.
        assert_eq!(treatment("scheduler.llf.mode").unwrap().0, "scheduler.llf");
        assert_eq!(treatment("scheduler.rt").unwrap().0, "scheduler.rt");
        assert_eq!(treatment("scheduler").unwrap().0, "scheduler");
        for e in schedlab_model::POLICIES
            .iter()
            .filter(|e| !e.options.is_empty())
        {
            let (entry, how) = treatment(&format!("scheduler.{}", e.name)).unwrap();
            assert!(entry != "scheduler", "{}", e.name);
            if entry == POLICY_OPTIONS.0 {
                assert_eq!(how, Treatment::Run);
            }
        }
    }

    fn host() -> HostSched {
        HostSched {
            release: "6.18.0".into(),
            eevdf: true,
            online_cpus: 2,
            hz: Some(250),
            base_slice: crate::host::Tunable {
                ns: 1_400_000,
                source: "default",
            },
            latency: crate::host::Tunable {
                ns: 12 * MS,
                source: "default",
            },
            wakeup_granularity: crate::host::Tunable {
                ns: 2 * MS,
                source: "default",
            },
            migration_cost: crate::host::Tunable {
                ns: 500_000,
                source: "default",
            },
            rr_timeslice: Some(100 * MS),
        }
    }

    fn check_yaml(yaml: &str) -> Result<Vec<String>, String> {
        let w = Workload::parse_str(yaml, Path::new("w.yaml"), &Overrides::default()).unwrap();
        check(&w, Backend::Kernel, &host()).map_err(|e| e.to_string())
    }

    #[test]
    fn irqs_isolated_and_model_costs_are_warned_about() {
        let w = check_yaml(
            "platform:
  cpus: 2
  hz: 250
  context_switch: 2us
  isolated: [1]
  irqs: [{ period: 1ms, handler: 5us }]
scheduler: { fair: eevdf, eevdf: { base_slice: 1400us } }
tasks: [{ name: ui, run: 1ms, sleep: 9ms }]
",
        )
        .unwrap();
        let has = |f: &str| w.iter().any(|m| m.starts_with(f));
        assert!(has("platform.irqs: the 1 simulated"), "{w:?}");
        assert!(
            has("platform.isolated: tasks without affinity avoid CPUs [1]"),
            "{w:?}"
        );
        assert!(has("platform.context_switch: 2us"), "{w:?}");
        assert_eq!(w.len(), 3, "{w:?}");
    }

    #[test]
    fn a_matching_fair_workload_runs_without_warnings() {
        let w = check_yaml(
            "platform: { cpus: 1, hz: 250 }
scheduler: { fair: eevdf, eevdf: { base_slice: 1400us } }
tasks: [{ name: hog }, { name: ui, run: 2ms, sleep: 8ms }]
",
        )
        .unwrap();
        assert!(w.is_empty(), "{w:?}");
        // The simulator's default slice for one CPU is not this 2-CPU kernel's.
        let w = check_yaml(
            "platform: { hz: 250 }\nscheduler: { fair: eevdf }\ntasks: [{ name: hog }]\n",
        )
        .unwrap();
        assert!(
            w[0].starts_with(
                "scheduler.eevdf.base_slice: the simulator uses 700us, this kernel 1400us"
            ),
            "{w:?}"
        );
        let w = check_yaml("platform: { hz: 1000 }\ntasks: [{ name: hog }]\n").unwrap();
        assert!(
            w.iter()
                .any(|m| m.starts_with("scheduler.fair: `cfs` is simulated")),
            "{w:?}"
        );
        assert!(
            w.iter().any(|m| m
                .starts_with("platform.hz: the simulator ticks at 1000 Hz, this kernel at 250")),
            "{w:?}"
        );
    }

    #[test]
    fn bfs_and_other_weight_tables_run_only_in_the_sched_ext_fair_schedulers() {
        let load = |yaml: &str| {
            Workload::parse_str(yaml, Path::new("w.yaml"), &Overrides::default()).unwrap()
        };
        let bfs = load("scheduler: { fair: bfs }\ntasks: [{ name: a }, { name: b, nice: 19 }]\n");
        let e = check(&bfs, Backend::Kernel, &host())
            .unwrap_err()
            .to_string();
        assert!(e.contains("--backend scx runs it"), "{e}");
        assert!(check(&bfs, Backend::Scx, &host()).is_ok());
        let g5 = load("scheduler: { weights: grouped-5 }\ntasks: [{ name: a, nice: -5 }]\n");
        assert!(check(&g5, Backend::Scx, &host()).is_ok());
        let e = check(&g5, Backend::Dispatcher, &host())
            .unwrap_err()
            .to_string();
        assert!(e.contains("--backend scx runs it"), "{e}");
        // One sched_ext scheduler at a time: periodic tasks take it.
        let mixed = load(
            "scheduler: { fair: bfs }\ntasks: [{ name: a }, { name: p, runtime: 1ms, period: 10ms }]\n",
        );
        let e = check(&mixed, Backend::Scx, &host())
            .unwrap_err()
            .to_string();
        assert!(e.contains("one sched_ext scheduler at a time"), "{e}");
        let eevdf_g2 =
            load("scheduler: { fair: eevdf, weights: grouped-2 }\ntasks: [{ name: a }]\n");
        let e = check(&eevdf_g2, Backend::Scx, &host())
            .unwrap_err()
            .to_string();
        assert!(e.contains("with `fair: cfs`, not `eevdf`"), "{e}");
        let iso = load("scheduler: { fair: bfs }\ntasks: [{ name: a, class: iso }]\n");
        let e = check(&iso, Backend::Scx, &host()).unwrap_err().to_string();
        assert!(
            e.starts_with("task a: class iso (SCHED_ISO) has no sched_ext version"),
            "{e}"
        );
    }

    #[test]
    fn what_the_kernel_cannot_do_is_refused() {
        let e = check_yaml("scheduler: { fair: bfs }\ntasks: [{ name: hog }]\n").unwrap_err();
        assert!(
            e.starts_with("scheduler.fair: `bfs` is simulated only"),
            "{e}"
        );
        let e =
            check_yaml("scheduler: { weights: grouped-5 }\ntasks: [{ name: hog }]\n").unwrap_err();
        assert!(
            e.starts_with("scheduler.weights: the kernel's nice-to-weight table is `linux`"),
            "{e}"
        );
        let e = check_yaml(
            "platform: { cpus: 2, isolated: [1] }\ntasks: [{ name: p, runtime: 1ms, period: 10ms }]\n",
        )
        .unwrap_err();
        assert!(
            e.starts_with("platform.isolated: task p is SCHED_DEADLINE"),
            "{e}"
        );
        let e = check_yaml("tasks: [{ name: ui, run: 10us, sleep: 20us }]\n").unwrap_err();
        assert!(
            e.starts_with("task ui: its phases repeat every 30us, shorter than the 50us"),
            "{e}"
        );
    }
}
