//! The tests against the simulator: exact tests agree with simulation over the
//! hyperperiod from a synchronous release (EDF with implicit deadlines, fixed priorities by
//! RTA), and sufficient tests are never optimistic (a set they accept never misses a
//! deadline in simulation).

use proptest::prelude::*;
use schedlab_analysis::partition::{fit_partition, Fit};
use schedlab_analysis::tests::{self as sched, ffd_partition, Outcome, PerCpu};
use schedlab_analysis::RtTask;
use schedlab_model::{Overrides, Placement, Policy, Workload};
use schedlab_sim::{simulate, SimOptions};
use std::path::Path;

mod rt_sets;
use rt_sets::{deadlines, random_set, yaml_of, MS};

/// The hyperperiod of [`rt_sets::PERIODS`].
const HYPER: u64 = 200 * MS;

/// Deadline misses of `ts` simulated on `cpus` CPUs under `policy`/`placement` for two
/// hyperperiods (every deadline of the first is checked).
fn misses(ts: &[RtTask], cpus: usize, policy: &str, placement: &str) -> u64 {
    misses_with(ts, cpus, policy, placement, "")
}

/// [`misses`] with extra top-level workload lines (e.g. a `scheduler:` block).
fn misses_with(ts: &[RtTask], cpus: usize, policy: &str, placement: &str, extra: &str) -> u64 {
    let y = yaml_of(ts, cpus, &format!("duration: {}ns\n{extra}", 2 * HYPER));
    let ov = Overrides {
        policy: Some(Policy::parse(policy).unwrap()),
        placement: Some(Placement::parse(placement).unwrap()),
        ..Overrides::default()
    };
    let w = Workload::parse_str(&y, Path::new("agreement.yaml"), &ov).unwrap();
    simulate(&w, &SimOptions::default())
        .unwrap()
        .deadline_misses
}

fn tasks_of(tasks: usize, cpus: usize, u: f64, seed: u64, constrained: bool) -> Vec<RtTask> {
    random_set(tasks, cpus, u, seed, deadlines(constrained, 0.3))
}

#[test]
fn edf_utilisation_and_demand_tests_agree_with_uniprocessor_simulation() {
    let (mut yes, mut no) = (0, 0);
    for seed in 0..60 {
        let u = 0.8 + 0.4 * (seed as f64 / 60.0);
        let ts = tasks_of(5, 1, u, seed, false);
        let missed = misses(&ts, 1, "edf", "global") > 0;
        let util = sched::edf_utilisation(&ts, 1);
        let pda = sched::edf_pda(&ts, 1);
        assert!(util.exact && pda.exact);
        assert_eq!(
            util.outcome == Outcome::Schedulable,
            !missed,
            "seed {seed}: {util:?}"
        );
        assert_eq!(
            pda.outcome == Outcome::Schedulable,
            !missed,
            "seed {seed}: {pda:?}"
        );
        if missed {
            no += 1
        } else {
            yes += 1
        }
    }
    assert!(
        yes > 10 && no > 10,
        "both answers seen: {yes} schedulable, {no} not"
    );
}

#[test]
fn edf_demand_test_agrees_with_simulation_for_constrained_deadlines() {
    let (mut yes, mut no) = (0, 0);
    for seed in 0..60 {
        let u = 0.6 + 0.4 * (seed as f64 / 60.0);
        let ts = tasks_of(4, 1, u, seed, true);
        let missed = misses(&ts, 1, "edf", "global") > 0;
        let pda = sched::edf_pda(&ts, 1);
        assert_eq!(
            pda.outcome == Outcome::Schedulable,
            !missed,
            "seed {seed}: {pda:?} {ts:?}"
        );
        if missed {
            no += 1
        } else {
            yes += 1
        }
    }
    assert!(
        yes > 5 && no > 5,
        "both answers seen: {yes} schedulable, {no} not"
    );
}

#[test]
fn rta_agrees_with_fixed_priority_simulation() {
    let (mut yes, mut no) = (0, 0);
    let mut seed = 0;
    while yes + no < 60 {
        seed += 1;
        let u = 0.8 + 0.2 * ((seed % 40) as f64 / 40.0);
        let ts = tasks_of(4, 1, u, seed, false);
        let mut periods: Vec<u64> = ts.iter().map(|t| t.t).collect();
        periods.sort_unstable();
        periods.dedup();
        if periods.len() < ts.len() {
            continue; // equal periods share a priority: RTA is then only an upper bound
        }
        let v = sched::rta_test(&ts, 1);
        assert!(v.exact);
        let missed = misses(&ts, 1, "rm", "global") > 0;
        assert_eq!(
            v.outcome == Outcome::Schedulable,
            !missed,
            "seed {seed}: {v:?} {ts:?}"
        );
        if missed {
            no += 1
        } else {
            yes += 1
        }
    }
    assert!(
        yes > 5 && no > 5,
        "both answers seen: {yes} schedulable, {no} not"
    );
}

/// Simulate each CPU's tasks of a first-fit partition on one CPU.
fn partition_misses(ts: &[RtTask], bins: &[Vec<usize>], policy: &str) -> u64 {
    bins.iter()
        .filter(|b| !b.is_empty())
        .map(|b| {
            let sub: Vec<RtTask> = b.iter().map(|&i| ts[i].clone()).collect();
            misses(&sub, 1, policy, "global")
        })
        .sum()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every sufficient test: when it accepts, the matching simulation meets every deadline.
    #[test]
    fn sufficient_tests_are_never_optimistic(
        seed in 0u64..1_000_000,
        cpus in prop::sample::select(vec![1usize, 2, 4]),
        load in 0.3f64..1.0,
        constrained in any::<bool>(),
    ) {
        let n = 2 * cpus + 2;
        let ts = tasks_of(n, cpus, load * cpus as f64, seed, constrained);
        for v in sched::analyze(&ts, cpus) {
            if v.outcome != Outcome::Schedulable {
                continue;
            }
            let missed = match v.test {
                "ll" | "hyperbolic" => misses(&ts, 1, "rm", "global"),
                "rta" => misses(&ts, 1, "dm", "global"),
                "edf-util" | "edf-pda" => misses(&ts, 1, "edf", "global"),
                "gfb" | "bcl" | "rta-gedf" => misses(&ts, cpus, "edf", "global"),
                "rta-gfp" => misses(&ts, cpus, "dm", "global"),
                "edzl" => misses_with(&ts, cpus, "edzl", "global", "scheduler: { edzl: { mode: exact } }\n"),
                "ffd-edf" => partition_misses(&ts, &ffd_partition(&ts, cpus, PerCpu::Edf).unwrap(), "edf"),
                "ffd-rm" => partition_misses(&ts, &ffd_partition(&ts, cpus, PerCpu::Rm).unwrap(), "rm"),
                "ffd-dm" => partition_misses(&ts, &ffd_partition(&ts, cpus, PerCpu::Dm).unwrap(), "dm"),
                "bfd-edf" => partition_misses(&ts, &fit_partition(&ts, cpus, PerCpu::Edf, Fit::Best).unwrap(), "edf"),
                "wfd-edf" => partition_misses(&ts, &fit_partition(&ts, cpus, PerCpu::Edf, Fit::Worst).unwrap(), "edf"),
                other => panic!("test {other} not covered"),
            };
            prop_assert_eq!(missed, 0, "{} accepted but the simulation missed: {:?}", v.test, ts);
        }
    }
}
