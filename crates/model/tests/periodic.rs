//! `Workload::with_periodic_tasks` (a sweep's shortcut past the spec) against
//! `Workload::from_spec` on the spec it stands for: the same workload whenever
//! `from_spec` accepts the tasks, `None` whenever it refuses them.

use schedlab_model::spec::{Dur, PlatformSpec, SimDur, TaskSpec, WorkloadSpec};
use schedlab_model::time::MS;
use schedlab_model::{Overrides, PeriodicTask, Placement, Policy, SimDuration, Workload};

/// The spec a generated set is read back as: name, CPUs, a fixed duration, seed, and
/// tasks with name, runtime, period and (when it differs) deadline.
fn spec(name: &str, seed: u64, tasks: &[PeriodicTask<'_>]) -> WorkloadSpec {
    WorkloadSpec {
        name: Some(name.into()),
        platform: Some(PlatformSpec {
            cpus: Some(4),
            ..PlatformSpec::default()
        }),
        duration: Some(SimDur(SimDuration::Fixed(500 * MS))),
        seed: Some(seed),
        tasks: tasks
            .iter()
            .map(|&(n, c, p, d)| TaskSpec {
                name: Some(n.into()),
                runtime: Some(Dur(c)),
                period: Some(Dur(p)),
                deadline: (d != p).then_some(Dur(d)),
                ..TaskSpec::default()
            })
            .collect(),
        ..WorkloadSpec::default()
    }
}

fn overrides(policy: Policy, placement: Placement) -> Overrides {
    Overrides {
        policy: Some(policy),
        placement: Some(placement),
        ..Overrides::default()
    }
}

#[test]
fn same_workload_as_from_spec_or_none_when_it_refuses() {
    let first: &[PeriodicTask<'_>] = &[
        ("t1", 2 * MS, 10 * MS, 10 * MS),
        ("t2", 5 * MS, 20 * MS, 20 * MS),
    ];
    let cases: &[(&str, Vec<PeriodicTask<'_>>, bool)] = &[
        (
            "implicit",
            vec![("t1", 3 * MS, 10 * MS, 10 * MS), ("t2", 1, 7 * MS, 7 * MS)],
            true,
        ),
        (
            "constrained",
            vec![
                ("a", 3 * MS, 10 * MS, 4 * MS),
                ("b", 6 * MS, 9 * MS, 6 * MS),
            ],
            true,
        ),
        ("runtime = deadline = period", vec![("a", 5, 5, 5)], true),
        (
            "runtime above deadline",
            vec![("a", 5 * MS, 10 * MS, 4 * MS)],
            false,
        ),
        (
            "deadline above period",
            vec![("a", MS, 10 * MS, 11 * MS)],
            false,
        ),
        ("zero runtime", vec![("a", 0, 10 * MS, 10 * MS)], false),
        ("zero period", vec![("a", 0, 0, 0)], false),
        (
            "two tasks named t1",
            vec![("t1", MS, 10 * MS, 10 * MS), ("t1", MS, 20 * MS, 20 * MS)],
            false,
        ),
        ("blank name", vec![("  ", MS, 10 * MS, 10 * MS)], false),
        ("no task", vec![], false),
    ];
    for (policy, placement) in [
        (Policy::Edf, Placement::Global),
        (Policy::Llf, Placement::Linux),
        (Policy::Rm, Placement::Partitioned),
    ] {
        let ov = overrides(policy, placement);
        let template =
            Workload::from_spec(spec("first", 1, first), &ov).expect("the first set is valid");
        for (what, tasks, valid) in cases {
            let reference = Workload::from_spec(spec("next", 7, tasks), &ov);
            assert_eq!(reference.is_ok(), *valid, "{what}: {reference:?}");
            let fast = template.with_periodic_tasks("next", 7, tasks);
            assert_eq!(
                fast,
                reference.ok(),
                "{what} under {policy:?} {placement:?}"
            );
        }
    }
}

/// The template's own tasks play no part: a workload of 3 tasks built on one of 2.
#[test]
fn the_template_lends_platform_and_scheduler_only() {
    let ov = overrides(Policy::Edf, Placement::Global);
    let template = Workload::from_spec(
        spec(
            "first",
            1,
            &[("x", MS, 2 * MS, 2 * MS), ("y", MS, 3 * MS, 3 * MS)],
        ),
        &ov,
    )
    .unwrap();
    let tasks: &[PeriodicTask<'_>] = &[
        ("t1", MS, 4 * MS, 4 * MS),
        ("t2", MS, 5 * MS, 5 * MS),
        ("t3", 2 * MS, 6 * MS, 3 * MS),
    ];
    let w = template.with_periodic_tasks("second", 99, tasks).unwrap();
    assert_eq!(w.name, "second");
    assert_eq!(w.seed, 99);
    assert_eq!(w.tasks.len(), 3);
    assert_eq!(w.tasks[2].deadline, 3 * MS);
    assert_eq!(
        Some(w),
        Workload::from_spec(spec("second", 99, tasks), &ov).ok()
    );
}

/// Names that differ only past 7 bytes, or only in length, or that repeat a long name:
/// the uniqueness check agrees with `from_spec` on each.
#[test]
fn names_long_and_short() {
    let ov = overrides(Policy::Edf, Placement::Global);
    let template =
        Workload::from_spec(spec("first", 1, &[("x", MS, 2 * MS, 2 * MS)]), &ov).unwrap();
    let lists: &[&[&str]] = &[
        &["t1", "t11", "t111"],
        &["t1", "t1\0"],
        &["abcdefg", "abcdefgh", "abcdefgi"],
        &["abcdefgh", "abcdefgh"],
        &["abcdefg", "abcdefg"],
        &["\u{e9}t\u{e9}", "\u{e9}t\u{e9}"],
        &[" t", "t"],
        &["\t", "t"],
    ];
    for names in lists {
        let tasks: Vec<PeriodicTask<'_>> =
            names.iter().map(|&n| (n, MS, 10 * MS, 10 * MS)).collect();
        let reference = Workload::from_spec(spec("next", 3, &tasks), &ov).ok();
        assert_eq!(
            template.with_periodic_tasks("next", 3, &tasks),
            reference,
            "{names:?}"
        );
    }
}
