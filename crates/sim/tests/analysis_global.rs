//! The tests against the simulator over thousands of generated sets: a set accepted by a
//! sufficient global test never misses in the matching global simulation (global EDF for
//! `gfb`, `bcl`, `rta-gedf`; global DM for `rta-gfp`; EDZL in its exact mode for
//! `edzl`), and every uniprocessor rejection by an exact test (`edf-util`, `edf-pda`,
//! `rta` with distinct priorities) shows a miss in simulation over the hyperperiod.
//!
//! A periodic synchronous release is one of the sporadic release patterns the tests
//! cover, so an accepted set missing there would prove a test optimistic.

use schedlab_analysis::tests::{self as sched, Outcome};
use schedlab_analysis::RtTask;
use schedlab_model::{Overrides, Placement, Policy, Workload};
use schedlab_sim::{simulate, SimOptions};
use std::path::Path;

mod rt_sets;
use rt_sets::{deadlines, random_set, yaml_of};

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The hyperperiod of `ts`, computed here (not by the crate under test).
fn hyperperiod(ts: &[RtTask]) -> u64 {
    ts.iter().fold(1, |h, t| h / gcd(h, t.t) * t.t)
}

/// Misses of `ts` on `cpus` CPUs under `policy` (global placement) from a synchronous
/// release, over `duration` ns.
fn misses(ts: &[RtTask], cpus: usize, policy: &str, extra: &str, duration: u64) -> u64 {
    let y = yaml_of(ts, cpus, &format!("duration: {duration}ns\n{extra}"));
    let ov = Overrides {
        policy: Some(Policy::parse(policy).unwrap()),
        placement: Some(Placement::parse("global").unwrap()),
        ..Overrides::default()
    };
    let w = Workload::parse_str(&y, Path::new("analysis_global.yaml"), &ov).unwrap();
    simulate(&w, &SimOptions::default())
        .unwrap()
        .deadline_misses
}

fn tasks(tasks: usize, cpus: usize, u: f64, seed: u64, constrained: bool) -> Vec<RtTask> {
    random_set(tasks, cpus, u, seed, deadlines(constrained, 0.3))
}

/// `sets` sets on 2 and 4 CPUs: every acceptance by a global test checked in simulation
/// over two hyperperiods. Returns how many acceptances each test had.
fn global_sweep(sets: u64, first_seed: u64) -> Vec<(&'static str, usize)> {
    let names = ["gfb", "bcl", "rta-gedf", "rta-gfp", "edzl"];
    let mut accepted = vec![0usize; names.len()];
    for s in 0..sets {
        let seed = first_seed + s;
        let cpus = if s % 2 == 0 { 2 } else { 4 };
        let n = cpus + 1 + (s as usize % (2 * cpus));
        // Loads from 0.3 to 0.95 of the platform: acceptances thin out towards the top.
        let u = cpus as f64 * (0.3 + 0.65 * ((s * 7919) % 1000) as f64 / 1000.0);
        let ts = tasks(n, cpus, u, seed, s % 3 != 0);
        let horizon = 2 * hyperperiod(&ts);
        let verdicts = sched::analyze(&ts, cpus);
        let mut sim_edf = None;
        for (k, name) in names.iter().enumerate() {
            let v = verdicts.iter().find(|v| v.test == *name).unwrap();
            if v.outcome != Outcome::Schedulable {
                continue;
            }
            accepted[k] += 1;
            let missed = match *name {
                "rta-gfp" => misses(&ts, cpus, "dm", "", horizon),
                "edzl" => misses(
                    &ts,
                    cpus,
                    "edzl",
                    "scheduler: { edzl: { mode: exact } }\n",
                    horizon,
                ),
                _ => *sim_edf.get_or_insert_with(|| misses(&ts, cpus, "edf", "", horizon)),
            };
            assert_eq!(
                missed, 0,
                "{name} accepted seed {seed} but it missed: {v:?} {ts:?}"
            );
        }
    }
    names.iter().copied().zip(accepted).collect()
}

#[test]
fn global_tests_are_never_optimistic() {
    let accepted = global_sweep(2000, 0);
    eprintln!("acceptances of 2000 sets: {accepted:?}");
    for (name, n) in accepted {
        // Each test accepts enough sets for the check to mean something.
        assert!(n >= 100, "{name} accepted only {n} of 2000 sets");
    }
}

#[test]
#[ignore = "long: 20,000 sets, several minutes in a debug build"]
fn global_tests_are_never_optimistic_long() {
    eprintln!("{:?}", global_sweep(20_000, 1_000_000));
}

/// Every rejection on one CPU (by an exact test, or by U > 1) shows a miss within the
/// hyperperiod (plus the longest deadline, for the jobs due just after it).
#[test]
fn exact_rejections_show_a_miss_within_the_hyperperiod() {
    let mut rejected = [0usize; 3];
    for seed in 0..1500u64 {
        let n = 3 + (seed % 6) as usize;
        let u = 0.85 + 0.3 * ((seed * 7919) % 1000) as f64 / 1000.0;
        let constrained = seed % 2 == 1;
        let ts = tasks(n, 1, u, seed, constrained);
        let horizon = hyperperiod(&ts) + ts.iter().map(|t| t.d).max().unwrap();
        let mut keys: Vec<u64> = ts.iter().map(|t| t.d).collect();
        keys.sort_unstable();
        keys.dedup();
        let distinct = keys.len() == ts.len();
        let checks = [
            (sched::edf_utilisation(&ts, 1), "edf"),
            (sched::edf_pda(&ts, 1), "edf"),
            (sched::rta_test(&ts, 1), "dm"),
        ];
        for (k, (v, policy)) in checks.iter().enumerate() {
            // The exact tests always decide (edf-util is only sufficient for D < T).
            if v.exact {
                assert_ne!(v.outcome, Outcome::NotProven, "seed {seed}: {v:?}");
            }
            // An "unschedulable" is a proof: an exact test's, or U > 1.
            if v.outcome != Outcome::Unschedulable {
                continue;
            }
            if k == 2 && !distinct {
                assert!(v.why.contains("U ="), "rta with tied priorities: {v:?}");
            }
            rejected[k] += 1;
            let missed = misses(&ts, 1, policy, "", horizon);
            assert!(
                missed > 0,
                "seed {seed}: {v:?} but no miss in {horizon} ns: {ts:?}"
            );
        }
    }
    eprintln!("exact rejections [edf-util, edf-pda, rta]: {rejected:?}");
    assert!(rejected.iter().all(|&r| r >= 100), "{rejected:?}");
}
