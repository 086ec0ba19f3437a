//! The server-based optimal schedulers (issue 27): RUN's reduction tree and schedule on
//! a hand-worked example, and the optimality property on random implicit-deadline sets.
mod common;
mod rt_sets;
use common::{schedule, workload};
use schedlab_model::Workload;
use schedlab_sim::policy::run::{for_workload, Run};
use schedlab_sim::{simulate_checked, SimOptions, SimResult};

/// Simulate with a trace and the invariant checker (not `common::run`: RUN is not work
/// conserving, a CPU idles while a task whose server is out of budget waits).
fn run(w: &Workload) -> SimResult {
    simulate_checked(w, &SimOptions { trace: true }).unwrap()
}

/// Five tasks of rate 0.6 on three CPUs (the paper's reduction example).
const FIVE: &str = "
platform: { cpus: 3 }
duration: 30ms
tasks:
  - { name: t1, runtime: 3ms, period: 5ms }
  - { name: t2, runtime: 6ms, period: 10ms }
  - { name: t3, runtime: 9ms, period: 15ms }
  - { name: t4, runtime: 6ms, period: 10ms }
  - { name: t5, runtime: 3ms, period: 5ms }
";

/// The tree of [`FIVE`], worked by hand: no two 0.6 tasks share a server, so PACK gives
/// five servers of rate 3/5; their duals (2/5) pack two by two (worst fit, ties to the
/// first bin) into S15 = {t1*, t2*} and S16 = {t3*, t4*} at 4/5, with t5* alone at 2/5; the
/// duals of those (1/5, 1/5, 3/5) pack, decreasing, into one unit server: one subsystem on
/// the three CPUs.
#[test]
fn five_task_example_reduces_to_one_subsystem_on_three_cpus() {
    let w = workload(FIVE, "run", "global");
    let r: Run = for_workload(&w).unwrap();
    let want = "\
subsystem on cpus 0-2:
  S21 pack rate 1
    S20* dual rate 3/5
      S17 pack rate 2/5
        S14* dual rate 2/5
          S9 pack rate 3/5
            t5 task rate 3/5
    S18* dual rate 1/5
      S15 pack rate 4/5
        S10* dual rate 2/5
          S5 pack rate 3/5
            t1 task rate 3/5
        S11* dual rate 2/5
          S6 pack rate 3/5
            t2 task rate 3/5
    S19* dual rate 1/5
      S16 pack rate 4/5
        S12* dual rate 2/5
          S7 pack rate 3/5
            t3 task rate 3/5
        S13* dual rate 2/5
          S8 pack rate 3/5
            t4 task rate 3/5
";
    assert_eq!(r.tree().to_string(), want);
    assert_eq!(r.tree().subsystems.len(), 1);
    assert_eq!(r.tree().subsystems[0].cpus, 3);
}

/// The first 10 ms of [`FIVE`], worked by hand from the rules (budgets at 0: t_i = C_i,
/// duals t1*, t5* 2, t2*, t4* 4, t3* 6; S18* = S15's dual 1, S19* 2, S20* 3):
/// - 0: the root runs S20* (deadline 5, first of the equals): t5 runs; S15 runs t1* (d 5),
///   so t2 runs; S16 runs t4* (d 10 < 15), so t3 runs.
/// - 2: t1* is out: S15 runs t2*, t1 replaces t2.
/// - 3: S20* and t5 are out; the root runs S18* (S15 stops: t1, t2 run), S16 still t4*.
/// - 4: S18* and t4* are out; the root runs S19*: t3 and t4 run, S15 runs t2*: t1 runs.
/// - 5: t1 done (3 ms), t1 and t5 released: S20* again (t5), S15 runs t1* (t2 runs), S16
///   runs t3* (t4 goes on, t3 stops).
/// - 7: t1* out: t1 replaces t2. 8: S20* out, root runs S18*: t2 runs beside t1, t4.
/// - 9: t2 done (6 ms), S18* out, root runs S19*: t3 runs until 10 beside t1 and t4.
#[test]
fn five_task_example_schedule_matches_the_hand_worked_one() {
    let w = workload(FIVE, "run", "global");
    let r = run(&w);
    let got: Vec<String> = schedule(&w, &r, 10)
        .iter()
        .map(|l| {
            let (task, rest) = l.split_once('@').unwrap();
            format!("{task} {}", rest.split_once(' ').unwrap().1)
        })
        .collect();
    let want = [
        "t5[0] 0-3",
        "t2[0] 0-2",
        "t3[0] 0-5",
        "t1[0] 2-5",
        "t2[0] 3-4",
        "t4[0] 4-10",
        "t2[0] 5-7",
        "t5[1] 5-8",
        "t1[1] 7-10",
        "t2[0] 8-9",
        "t3[0] 9-10",
    ];
    assert_eq!(got, want);
    assert_eq!(r.deadline_misses, 0);
    assert_eq!(r.jobs_completed, r.jobs_released);
}

#[test]
fn run_is_refused_outside_global_placement_and_for_unfit_sets() {
    for placement in ["linux", "partitioned"] {
        let e = for_workload(&workload(FIVE, "run", placement))
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "run is a global scheduler: use placement global"
        );
    }
    // t1 and t5 at 4/5: 17/5 in all.
    let over = FIVE.replace(
        "runtime: 3ms, period: 5ms }\n",
        "runtime: 4ms, period: 5ms }\n",
    );
    let e = for_workload(&workload(&over, "run", "global"))
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "run: the tasks' total utilisation 17/5 exceeds the 3 CPUs"
    );
    let constrained = FIVE.replace("period: 15ms }", "period: 15ms, deadline: 12ms }");
    let e = for_workload(&workload(&constrained, "run", "global"))
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "run: task `t3` has a deadline other than its period (RUN needs implicit deadlines)"
    );
}

/// Below full load, idle leaves top the first servers up to 1: a set that partitions
/// becomes one subsystem per CPU (partitioned EDF), and the idle capacity is exact.
#[test]
fn idle_capacity_tops_servers_up_to_unit_servers() {
    let yaml = "
platform: { cpus: 2 }
duration: 30ms
tasks:
  - { name: a, runtime: 1ms, period: 10ms }
  - { name: b, runtime: 2ms, period: 10ms }
  - { name: c, runtime: 7ms, period: 10ms }
";
    let w = workload(yaml, "run", "global");
    let r: Run = for_workload(&w).unwrap();
    let want = "\
subsystem on cpu 0:
  S3 pack rate 1
    c task rate 7/10
    b task rate 1/5
    a task rate 1/10
subsystem on cpu 1:
  S4 pack rate 1
    idle5 idle rate 1
";
    assert_eq!(r.tree().to_string(), want);
    let res = run(&w);
    assert_eq!(res.deadline_misses, 0);
}

/// Random implicit-deadline sets with total utilisation in (0, m], simulated over their
/// hyperperiod under `policy`: the (seed, cpus, u, misses) of every set that misses.
fn optimal_on_random_sets(
    policy: &str,
    per_cpu_count: u64,
    top: f64,
) -> Vec<(u64, usize, f64, u64)> {
    let mut bad = Vec::new();
    for cpus in [2usize, 4, 8] {
        for seed in 0..per_cpu_count {
            let tasks = cpus + 1 + (seed as usize % (2 * cpus));
            // Utilisation from 50% to `top` of the CPUs.
            let frac = 0.5 + (top - 0.5) * ((seed % 11) as f64 / 10.0);
            let u = cpus as f64 * frac;
            let ts =
                rt_sets::random_set(tasks, cpus, u, 1000 + seed, rt_sets::deadlines(false, 1.0));
            let yaml = rt_sets::yaml_of(&ts, cpus, "duration: hyperperiod\n");
            let w = workload(&yaml, policy, "global");
            let r = simulate_checked(&w, &SimOptions::default())
                .unwrap_or_else(|e| panic!("seed {seed} cpus {cpus}: {e}\n{yaml}"));
            if r.deadline_misses > 0 {
                let tard = r
                    .tasks
                    .iter()
                    .map(|t| t.max_tardiness_ns)
                    .max()
                    .unwrap_or(0);
                bad.push((seed, cpus, u, tard));
            }
        }
    }
    bad
}

/// Random implicit-deadline sets at exactly full load (total utilisation m, no slack at
/// all), `per_cpu_count` per CPU count, simulated over their hyperperiod under `policy`
/// with the invariant checker: the (seed, cpus, misses) of every set that misses.
fn optimal_at_exactly_full_load(policy: &str, per_cpu_count: u64) -> Vec<(u64, usize, u64)> {
    let mut bad = Vec::new();
    for cpus in [2usize, 4, 8] {
        for seed in 0..per_cpu_count {
            let tasks = cpus + 1 + (seed as usize % (2 * cpus));
            let ts = rt_sets::random_set(
                tasks,
                cpus,
                cpus as f64,
                5000 + seed,
                rt_sets::deadlines(false, 1.0),
            );
            let yaml = rt_sets::yaml_of(&ts, cpus, "duration: hyperperiod\n");
            let w = workload(&yaml, policy, "global");
            let r = simulate_checked(&w, &SimOptions::default())
                .unwrap_or_else(|e| panic!("seed {seed} cpus {cpus}: {e}\n{yaml}"));
            assert!(r.horizon_complete, "seed {seed} cpus {cpus}");
            assert_eq!(r.jobs_released, r.tasks.iter().map(|t| t.jobs).sum::<u64>());
            if r.deadline_misses > 0 {
                bad.push((seed, cpus, r.deadline_misses));
            }
        }
    }
    bad
}

#[test]
fn run_meets_every_deadline_on_random_sets() {
    let bad = optimal_on_random_sets("run", 70, 0.9);
    assert!(bad.is_empty(), "{} sets miss: {bad:?}", bad.len());
}

/// Up to exactly full load (no slack at all), with the invariant checker: the whole-ns
/// budgets are consistent over the tree (policy/run.rs); rounded per job, 15 of these
/// 210 sets missed.
#[test]
fn run_meets_every_deadline_at_full_load() {
    let bad = optimal_on_random_sets("run", 70, 1.0);
    assert!(bad.is_empty(), "{} sets miss: {bad:?}", bad.len());
}

/// Every set at exactly U = m, 100 per CPU count (2, 4, 8), with the invariant checker
/// (213 of them missed with each server job's budget rounded on its own).
#[test]
fn run_meets_every_deadline_at_exactly_m_on_300_sets() {
    let bad = optimal_at_exactly_full_load("run", 100);
    assert!(bad.is_empty(), "{} sets miss: {bad:?}", bad.len());
}

/// Tasks with first releases at whole-ms offsets below their period, with the invariant
/// checker: 60 sets up to 0.9 m over 600 ms, and 60 at exactly U = m (30 per CPU count,
/// 2 and 4) over their feasibility interval (the largest offset plus two hyperperiods).
/// A server's jobs run between consecutive release instants below it, a first release
/// included (before, a task's first release replaced the jobs of the servers above it
/// before their deadlines, and their budget left was lost), and from time 0 even above
/// tasks not released yet (before, a dual above them had no job until then and its packed
/// parent ran out of jobs while it executed later: 5 of the 60 sets at U = m missed).
#[test]
fn run_meets_every_deadline_with_offsets() {
    let mut bad = Vec::new();
    for (full, count) in [(false, 30u64), (true, 30)] {
        for cpus in [2usize, 4] {
            for seed in 0..count {
                let tasks = cpus + 1 + (seed as usize % (2 * cpus));
                let u = if full {
                    cpus as f64
                } else {
                    cpus as f64 * (0.5 + 0.4 * (seed % 5) as f64 / 4.0)
                };
                let base = if full { 9000 } else { 8000 };
                let ts = rt_sets::random_set(
                    tasks,
                    cpus,
                    u,
                    base + seed,
                    rt_sets::deadlines(false, 1.0),
                );
                let duration = if full { "hyperperiod" } else { "600ms" };
                let mut yaml =
                    format!("platform: {{ cpus: {cpus} }}\nduration: {duration}\ntasks:\n");
                for (i, t) in ts.iter().enumerate() {
                    let offset = (seed * 7 + i as u64 * 3) % (t.t / 1_000_000);
                    yaml += &format!(
                        "  - {{ name: {}, runtime: {}ns, period: {}ns, offset: {offset}ms }}\n",
                        t.name, t.c, t.t
                    );
                }
                let r = simulate_checked(&workload(&yaml, "run", "global"), &SimOptions::default())
                    .unwrap_or_else(|e| panic!("seed {seed} cpus {cpus}: {e}\n{yaml}"));
                if full {
                    let total: u128 = ts
                        .iter()
                        .map(|t| t.c as u128 * 1_000_000 / t.t as u128)
                        .sum();
                    assert!(
                        total as f64 > cpus as f64 * 1e6 - 100.0,
                        "seed {seed} cpus {cpus}: U = {total}e-6"
                    );
                    assert!(r.horizon_complete, "seed {seed} cpus {cpus}");
                }
                if r.deadline_misses > 0 {
                    bad.push((full, seed, cpus, r.deadline_misses));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{} sets miss: {bad:?}", bad.len());
}

/// The SimSo cross-check's seed 8 of 2 CPUs / 4 tasks at U = m with offsets (U = 1.998):
/// t3 = (12.6, 25) is first released at 24 ms, its first job due at 49. The dual S8 is
/// above t1 = (21.6, 25), first released at 19, and an idle leaf only. S8 had no job
/// before 19, the root gave its share to the other duals ahead of their supply, then ran
/// out of jobs at 40.99 ms with 2 ms of its own budget left: all three packs executed,
/// t1, t2 and t3 were selected on 2 CPUs and t3 got about 9 ms of its 12.6 by 49. With
/// every server's jobs from time 0 the root never idles and no job misses.
#[test]
fn run_with_offsets_meets_the_crosscheck_set_that_misses() {
    let yaml = "platform: { cpus: 2 }\nduration: 224ms\ntasks:
  - { name: t1, runtime: 21600us, period: 25ms, offset: 19ms }
  - { name: t2, runtime: 5400us, period: 20ms, offset: 3ms }
  - { name: t3, runtime: 12600us, period: 25ms, offset: 24ms }
  - { name: t4, runtime: 3600us, period: 10ms, offset: 5ms }
";
    let r = simulate_checked(&workload(yaml, "run", "global"), &SimOptions::default()).unwrap();
    assert!(r.horizon_complete);
    assert_eq!(r.jobs_released, 9 + 12 + 8 + 22);
    assert_eq!(r.deadline_misses, 0);
}

/// Two 0.6 tasks and a 0.4 one on two CPUs, worked by hand from the allotment rule. At 0,
/// in EDF order a, b (deadline 10), c (20); s = 0, 0.6, 1.2:
/// - a: processor 0 min(10, 6) = 6, processor 1 nothing left to allot;
/// - b: processor 0 10 − 6 = 4, processor 1 min(10 − 4, 6 − 4) = 2;
/// - c: processor 0 20 − (6 + 10·0.6) − (4 + 10·0.4) = 0; processor 1 20 − (2 + 10·0.2)
///   = 16, capped at its WCET 8.
///
/// EDF-D: processor 0 runs a (6), processor 1 b until its 2 run out, then c (8); at 6 a
/// is done and b takes processor 0 for its 4. At 10 a and b again: a 6 on processor 0, b
/// 4 there and 2 on processor 1 (c's future share is now past a's and b's deadline):
/// b runs 2 on processor 1 (10-12), waits for a, then 4 on processor 0 (16-20).
#[test]
fn u_edf_allotments_schedule_the_hand_worked_example() {
    let yaml = "
platform: { cpus: 2 }
duration: 20ms
tasks:
  - { name: a, runtime: 6ms, period: 10ms }
  - { name: b, runtime: 6ms, period: 10ms }
  - { name: c, runtime: 8ms, period: 20ms }
";
    let w = workload(yaml, "u-edf", "global");
    let r = run(&w);
    let got: Vec<String> = schedule(&w, &r, 20)
        .iter()
        .map(|l| {
            let (task, rest) = l.split_once('@').unwrap();
            format!("{task} {}", rest.split_once(' ').unwrap().1)
        })
        .collect();
    let want = [
        "a[0] 0-6",
        "b[0] 0-2",
        "c[0] 2-10",
        "b[0] 6-10",
        "b[1] 10-12",
        "a[1] 10-16",
        "b[1] 16-20",
    ];
    assert_eq!(got, want);
    assert_eq!(r.deadline_misses, 0);
}

#[test]
fn u_edf_meets_every_deadline_on_random_sets() {
    let bad = optimal_on_random_sets("u-edf", 70, 0.9);
    assert!(bad.is_empty(), "{} sets miss: {bad:?}", bad.len());
}

/// Up to exactly full load (no slack at all), with the invariant checker.
#[test]
fn u_edf_meets_every_deadline_at_full_load() {
    let bad = optimal_on_random_sets("u-edf", 70, 1.0);
    assert!(bad.is_empty(), "{} sets miss: {bad:?}", bad.len());
}

/// Every set at exactly U = m, 100 per CPU count (2, 4, 8), with the invariant checker.
#[test]
fn u_edf_meets_every_deadline_at_exactly_m_on_300_sets() {
    let bad = optimal_at_exactly_full_load("u-edf", 100);
    assert!(bad.is_empty(), "{} sets miss: {bad:?}", bad.len());
}

#[test]
fn u_edf_is_refused_outside_global_placement() {
    let e = schedlab_sim::policy::u_edf::for_workload(&workload(FIVE, "u-edf", "linux"))
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "u-edf is a global scheduler: use placement global"
    );
}

/// Periods that are distinct primes (in µs): the rates' exact common denominator passes
/// 128 bits, so RUN rounds rates to 2^-60 and U-EDF to 2^-40; both still schedule the
/// set (U just under 3 on 4 CPUs) without a miss, and RUN's subsystems cover the 4 CPUs.
#[test]
fn many_unrelated_periods_fall_back_to_rounded_rates() {
    let primes = [
        1009u64, 1013, 1019, 1021, 1031, 1033, 1039, 1049, 1051, 1061, 1063, 1069, 1087, 1091,
        1093, 1097, 1103, 1109, 1117, 1123,
    ];
    let mut yaml = String::from("platform: { cpus: 4 }\nduration: 50ms\ntasks:\n");
    for (i, p) in primes.iter().enumerate() {
        // Just under 3/20 each (a few ns less: rates with the period's prime in their
        // denominator), just under 3 in all.
        let c = p * 1000 * 3 / 20 - 1 - i as u64;
        yaml += &format!(
            "  - {{ name: t{i}, runtime: {c}ns, period: {}ns }}\n",
            p * 1000
        );
    }
    let w = workload(&yaml, "run", "global");
    let r: Run = for_workload(&w).unwrap();
    let cpus: usize = r.tree().subsystems.iter().map(|s| s.cpus).sum();
    assert_eq!(cpus, 4);
    assert!(r
        .tree()
        .servers
        .iter()
        .all(|s| (1u128 << 60).is_multiple_of(s.rate.den)));
    for policy in ["run", "u-edf"] {
        let res = run(&workload(&yaml, policy, "global"));
        assert_eq!(res.deadline_misses, 0, "{policy}");
        assert!(res.jobs_completed > 800, "{policy}");
    }
}
