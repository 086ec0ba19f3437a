//! SimSo's priority-driven global schedulers (issue 27): hand-worked schedules, the
//! refusal of per-CPU placements, the papers' schedulability theorems on random sets,
//! and the invariant checker on random sets.
mod common;
mod rt_sets;
use common::*;

/// Every policy of this file.
const POLICIES: [&str; 4] = ["edf-us", "prid", "g-fl", "g-fl-zl"];

/// Two CPUs: H (7 ms every 10, from 2 ms) is heavy for EDF-US[2/3] (0.7 > 2/3);
/// B and C (4 ms every 8) are not.
const EDF_US: &str = "
platform: { cpus: 2, hz: 1000 }
duration: 14ms
tasks:
  - { name: h, runtime: 7ms, period: 10ms, offset: 2ms }
  - { name: b, runtime: 4ms, period: 8ms }
  - { name: c, runtime: 4ms, period: 8ms }
";

#[test]
fn edf_us_runs_the_heavy_task_first() {
    let w = workload(EDF_US, "edf-us", "global");
    let r = run(&w);
    // At 2 h (deadline 12) preempts b (deadline 8) on CPU 0, the lowest-numbered of the
    // two equal-deadline CPUs; b resumes on CPU 1 when c completes. At 12 h[1] takes
    // CPU 1, idle since b[1] completed.
    assert_eq!(
        schedule(&w, &r, 14),
        vec![
            "b[0]@0 0-2",
            "c[0]@1 0-4",
            "h[0]@0 2-9",
            "b[0]@1 4-6",
            "b[1]@1 8-12",
            "c[1]@0 9-13",
            "h[1]@1 12-14",
        ]
    );
    assert_eq!((r.deadline_misses, r.preemptions, r.migrations), (0, 1, 1));
    // Global EDF keeps the earlier deadlines: h waits for a CPU.
    let edf = run_yaml(EDF_US, "edf", "global");
    assert_eq!(edf.preemptions, 0);
}

/// Two CPUs: A (7 ms every 8, from 1 ms), B and C (2 ms every 8). PriD: m(1) =
/// ⌈0.5 / (1/8)⌉ = 4, m(2) = 1 + ⌈0.25 / 0.75⌉ = 2, m(3) = 2 + max(1, 0) = 3: k = 2, A is
/// favoured.
const PRID: &str = "
platform: { cpus: 2, hz: 1000 }
duration: 12ms
tasks:
  - { name: a, runtime: 7ms, period: 8ms, offset: 1ms }
  - { name: b, runtime: 2ms, period: 8ms }
  - { name: c, runtime: 2ms, period: 8ms }
";

#[test]
fn prid_favours_the_k_minus_1_heaviest_tasks() {
    let w = workload(PRID, "prid", "global");
    let rule = schedlab_sim::policy::prid::PriD::for_workload(&w);
    assert_eq!(
        (rule.k, rule.favoured.clone()),
        (2, vec![true, false, false])
    );
    let r = run(&w);
    // At 1 a (deadline 9) preempts b (deadline 8) on CPU 0; at 9 a[1] (deadline 17)
    // preempts b[1] (deadline 16), again on CPU 0.
    assert_eq!(
        schedule(&w, &r, 12),
        vec![
            "b[0]@0 0-1",
            "c[0]@1 0-2",
            "a[0]@0 1-8",
            "b[0]@1 2-3",
            "b[1]@0 8-9",
            "c[1]@1 8-10",
            "a[1]@0 9-12",
            "b[1]@1 10-11",
        ]
    );
    assert_eq!((r.deadline_misses, r.preemptions, r.migrations), (0, 2, 2));
}

#[test]
fn prid_picks_the_first_smallest_m_of_k() {
    // The set that misses when m(n) = n − 1 is allowed (5 tasks on 4 CPUs): PriD keeps
    // a CPU for the EDF part, so it does not favour all four heavy tasks.
    let w = rt_sets::global_workload(5, 4, 4.0 * (0.5 + 0.45 * (32.0 / 39.0)), 32, "prid");
    let rule = schedlab_sim::policy::prid::PriD::for_workload(&w);
    assert!(rule.k < 5, "k = {}", rule.k);
    assert_eq!(run(&w).deadline_misses, 0);

    // u = 3/4, 1/4, 1/4: m(1) = ⌈0.5 / 0.25⌉ = 2, m(2) = 1 + ⌈0.25 / 0.75⌉ = 2: k = 1,
    // plain EDF.
    let yaml = PRID.replace("runtime: 7ms", "runtime: 6ms");
    let w = workload(&yaml, "prid", "global");
    let rule = schedlab_sim::policy::prid::PriD::for_workload(&w);
    assert_eq!((rule.k, rule.favoured), (1, vec![false; 3]));
}

/// Two CPUs: x (6 ms, deadline 10) has priority point 10 − 6/2 = 7, y and z (1 ms,
/// deadline 8) 8 − 1/2 = 7.5: G-FL runs x first where EDF would run y and z.
const G_FL: &str = "
platform: { cpus: 2, hz: 1000 }
duration: 10ms
tasks:
  - { name: x, runtime: 6ms, period: 10ms }
  - { name: y, runtime: 1ms, period: 8ms }
  - { name: z, runtime: 1ms, period: 8ms }
";

#[test]
fn g_fl_orders_jobs_by_priority_point() {
    let w = workload(G_FL, "g-fl", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 10),
        vec![
            "x[0]@0 0-6",
            "y[0]@1 0-1",
            "z[0]@1 1-2",
            "y[1]@0 8-9",
            "z[1]@1 8-9",
        ]
    );
    let edf = workload(G_FL, "edf", "global");
    assert_eq!(
        schedule(&edf, &run(&edf), 2),
        vec!["y[0]@0 0-1", "z[0]@1 0-1", "x[0]@0 1-7"]
    );
}

/// Two CPUs: a and b (2 ms every 4) have priority point 4 − 2/2 = 3, h (5 ms every 6)
/// 6 − 5/2 = 3.5. Under G-FL a and b run first and h misses; its laxity reaches zero at
/// 1 ms (6 − 5), when G-FL-ZL promotes it.
const G_FL_ZL: &str = "
platform: { cpus: 2, hz: 1000 }
duration: 8ms
tasks:
  - { name: a, runtime: 2ms, period: 4ms }
  - { name: b, runtime: 2ms, period: 4ms }
  - { name: h, runtime: 5ms, period: 6ms }
";

#[test]
fn g_fl_zl_promotes_a_job_at_zero_laxity() {
    let w = workload(G_FL_ZL, "g-fl-zl", "global");
    let r = run(&w);
    // At 1 h takes CPU 0 from a (equal priority points with b: the lowest-numbered CPU
    // gives way); a resumes on CPU 1 when b completes. At 4 a[1] takes the idle CPU.
    assert_eq!(
        schedule(&w, &r, 6),
        vec![
            "a[0]@0 0-1",
            "b[0]@1 0-2",
            "h[0]@0 1-6",
            "a[0]@1 2-3",
            "a[1]@1 4-6",
        ]
    );
    assert_eq!(r.tasks[2].misses, 0);
    assert!(r.laxity_evaluations > 0);
    let gfl = workload(G_FL_ZL, "g-fl", "global");
    let g = run(&gfl);
    assert_eq!(
        schedule(&gfl, &g, 3),
        vec!["a[0]@0 0-2", "b[0]@1 0-2", "h[0]@0 2-7"]
    );
    assert_eq!(g.tasks[2].misses, 1);
}

/// Srinivasan & Baruah's theorem: EDF-US[m/(2m−1)] meets every deadline of an
/// implicit-deadline set with U ≤ m²/(2m−1), over the hyperperiod (200 ms).
#[test]
fn edf_us_meets_its_utilisation_bound() {
    let mut sets = 0;
    for m in [2usize, 4, 8] {
        let bound = (m * m) as f64 / (2 * m - 1) as f64;
        for seed in 0..25u64 {
            let u = bound * (0.6 + 0.4 * (seed as f64 / 24.0)) - 1e-6;
            let w =
                rt_sets::global_workload(m + 1 + (seed as usize % (2 * m)), m, u, seed, "edf-us");
            let r = run(&w);
            assert_eq!(r.deadline_misses, 0, "m={m} seed={seed} U={u}");
            sets += 1;
        }
    }
    assert_eq!(sets, 75);
}

/// Goossens, Funk & Baruah's theorem: EDF(k) with PriD's k meets every deadline of an
/// implicit-deadline set on m ≥ m(k) CPUs.
#[test]
fn prid_meets_deadlines_when_m_of_k_fits() {
    let mut checked = 0;
    for m in [2usize, 4, 8] {
        for seed in 0..40u64 {
            let u = m as f64 * (0.5 + 0.45 * (seed as f64 / 39.0));
            let w = rt_sets::global_workload(m + 1 + (seed as usize % (2 * m)), m, u, seed, "prid");
            let tasks: Vec<(f64, bool)> = {
                let rule = schedlab_sim::policy::prid::PriD::for_workload(&w);
                w.tasks
                    .iter()
                    .zip(rule.favoured)
                    .map(|(t, f)| (t.utilisation(), f))
                    .collect()
            };
            // m(k) for the chosen k, recomputed from the favoured set.
            let k1 = tasks.iter().filter(|t| t.1).count();
            let mut rest: Vec<f64> = tasks.iter().filter(|t| !t.1).map(|t| t.0).collect();
            rest.sort_by(|a, b| b.partial_cmp(a).unwrap());
            let uk = rest[0];
            let edf_part = (rest[1..].iter().sum::<f64>() / (1.0 - uk)).ceil().max(1.0);
            let need = k1 + edf_part as usize;
            if need > m {
                continue;
            }
            let r = run(&w);
            assert_eq!(r.deadline_misses, 0, "m={m} seed={seed} U={u}");
            checked += 1;
        }
    }
    assert!(checked >= 60, "only {checked} sets within m(k)");
}

/// The invariant checker (`simulate --check`) on random sets, over and under the
/// utilisation the policies guarantee.
#[test]
fn invariant_checker_passes_on_random_sets() {
    for p in POLICIES {
        for m in [2usize, 3, 4] {
            for seed in 0..6u64 {
                let u = m as f64 * (0.5 + 0.1 * seed as f64);
                let w = rt_sets::global_workload(2 * m + seed as usize, m, u, 100 + seed, p);
                run(&w); // simulate_checked + the schedule invariants
            }
        }
    }
}
