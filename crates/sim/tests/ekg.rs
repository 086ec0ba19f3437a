//! EKG (Andersson & Tovar, RTCSA 2006): its next-fit assignment with split tasks, a
//! schedule worked by hand on three CPUs with two split tasks at U = m, the parameter k,
//! and the optimality property with k = m (no deadline miss on implicit-deadline
//! periodic sets with U <= m, U = m included, over the hyperperiod, invariant checker on).
mod common;
mod rt_sets;
use common::{schedule, workload};
use rt_sets::{random_set, yaml_of, MS};
use schedlab_analysis::{Deadlines, RtTask};
use schedlab_model::{Overrides, Placement, Policy, Workload};
use schedlab_sim::policy::ekg::{assign, Home};
use schedlab_sim::{simulate_checked, SimError, SimOptions, SimResult};
use std::path::Path;

/// Simulate with a trace and the invariant checker, no CPU running two tasks and no task
/// on two CPUs at once (EKG is not work conserving: a split job waits for its windows).
fn run(w: &Workload) -> SimResult {
    let r = simulate_checked(w, &SimOptions { trace: true }).unwrap();
    let segs = r.trace.as_ref().unwrap();
    for a in segs {
        for b in segs {
            if a != b && a.start < b.end && b.start < a.end {
                assert!(a.cpu != b.cpu && a.task != b.task, "{a:?} overlaps {b:?}");
            }
        }
    }
    r
}

/// Three CPUs, U = 3: A 3/5, B 6/10, C 6/10, D 4/10, E 4/5 (ms).
const FIVE: &str = "
platform: { cpus: 3 }
duration: 10ms
tasks:
  - { name: A, runtime: 3ms, period: 5ms }
  - { name: B, runtime: 6ms, period: 10ms }
  - { name: C, runtime: 6ms, period: 10ms }
  - { name: D, runtime: 4ms, period: 10ms }
  - { name: E, runtime: 4ms, period: 5ms }
";

#[test]
fn next_fit_splits_two_tasks_of_five() {
    // k = m = 3, SEP = 1: no heavy task, one group of three CPUs. A (0.6) on CPU 0; B
    // (0.6) does not fit: 0.4 on CPU 0, 0.2 on CPU 1; C (0.6) on CPU 1 (0.8); D (0.4)
    // does not fit: 0.2 on CPU 1, 0.2 on CPU 2; E (0.8) on CPU 2 (exactly 1).
    let w = workload(FIVE, "ekg", "global");
    let a = assign(&w, 3);
    assert_eq!(
        a.homes,
        vec![
            Home::Cpu(0),
            Home::Split { hi: 0 },
            Home::Cpu(1),
            Home::Split { hi: 1 },
            Home::Cpu(2)
        ]
    );
    assert_eq!((a.heavy.clone(), a.groups.clone()), (vec![], vec![(0, 2)]));
}

#[test]
fn five_tasks_by_hand() {
    // Slots between the deadlines: [0,5), [5,10).
    // [0,5): B gets ⌊0.6·5⌋ = 3, of which CPU 0's spare 5 − 3 (A) = 2 at the end, 1 at
    // the start of CPU 1. D gets ⌊0.4·5⌋ = 2, of which CPU 1's spare 2·5 − (A 3 + B 3 +
    // C 3) = 1 at the end, 1 at the start of CPU 2. CPU 0: A 0-3, B 3-5. CPU 1: B 0-1,
    // C 1-4, D 4-5. CPU 2: D 0-1, E 1-5.
    // [5,10): targets by 10: B 6 (hi 10 − 6 = 4, lo 2), D 4 (hi 20 − 18 = 2, lo 2); minus
    // what [0,5) gave: B lo 1, hi 2; D lo 1, hi 1. CPU 0: A 5-8, B 8-10. CPU 1: B 5-6,
    // C 6-9 (its 6 ms done), D 9-10. CPU 2: D 5-6, E 6-10.
    // Every job ends by its deadline, B and D at 10 exactly (U = 3: no slack anywhere).
    // SimSo 0.8.5's EKG gives this schedule exactly with its per-slot swap of the split
    // pieces switched off (scripts/simso_crosscheck_ekg_aligned.py's simso_no_swap); as
    // released it runs [0,5) with the pieces the other way round (B@0 0-2, D@1 0-1, B@1
    // 4-5, D@2 4-5) and [5,10) as here.
    let w = workload(FIVE, "ekg", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 10),
        vec![
            "A[0]@0 0-3",
            "B[0]@1 0-1",
            "D[0]@2 0-1",
            "C[0]@1 1-4",
            "E[0]@2 1-5",
            "B[0]@0 3-5",
            "D[0]@1 4-5",
            "A[1]@0 5-8",
            "B[0]@1 5-6",
            "D[0]@2 5-6",
            "C[0]@1 6-9",
            "E[1]@2 6-10",
            "B[0]@0 8-10",
            "D[0]@1 9-10",
        ]
    );
    assert_eq!((r.deadline_misses, r.jobs_completed), (0, 7));
    // B moves 1 → 0 → 1 → 0 and D 2 → 1 → 2 → 1: three migrations each.
    assert_eq!(r.migrations, 6);
}

/// Three CPUs: H 4/5 (0.8), then four tasks of 0.4.
const HEAVY: &str = "
platform: { cpus: 3 }
duration: 20ms
tasks:
  - { name: L1, runtime: 4ms, period: 10ms }
  - { name: H, runtime: 4ms, period: 5ms }
  - { name: L2, runtime: 4ms, period: 10ms }
  - { name: L3, runtime: 4ms, period: 10ms }
  - { name: L4, runtime: 4ms, period: 10ms }
";

fn with_k(yaml: &str, k: i64) -> String {
    yaml.replacen(
        "duration:",
        &format!("scheduler: {{ ekg: {{ k: {k} }} }}\nduration:"),
        1,
    )
}

#[test]
fn k_sets_the_heavy_threshold_and_the_groups() {
    // k = 1: SEP = 1/2, H (0.8) is heavy and has CPU 0; groups of one CPU: next fit
    // without splits, L1 L2 on CPU 1 (0.8), L3 does not fit and CPU 1 ends its group:
    // L3 L4 on CPU 2.
    let w = workload(&with_k(HEAVY, 1), "ekg", "global");
    let a = assign(&w, 1);
    assert_eq!(a.heavy, vec![1]);
    assert_eq!(a.groups, vec![(1, 1), (2, 2)]);
    assert_eq!(
        a.homes,
        vec![
            Home::Cpu(1),
            Home::Cpu(0),
            Home::Cpu(1),
            Home::Cpu(2),
            Home::Cpu(2)
        ]
    );
    let r = run(&w);
    assert_eq!((r.deadline_misses, r.migrations), (0, 0));
    // k = 2: SEP = 2/3, H heavy again; one group of CPUs 1-2: L3 is split (0.2 + 0.2).
    let a = assign(&w, 2);
    assert_eq!(a.groups, vec![(1, 2)]);
    assert_eq!(a.homes[3], Home::Split { hi: 1 });
    // k = 3 = m: SEP = 1, no heavy task: H goes by next fit after L1 and is split.
    let a = assign(&w, 3);
    assert!(a.heavy.is_empty());
    assert_eq!(a.homes[..2], [Home::Cpu(0), Home::Split { hi: 0 }]);
    // The option reaches the class: k = 1 never migrates, the default (k = m) does.
    let r = run(&workload(HEAVY, "ekg", "global"));
    assert_eq!(r.deadline_misses, 0);
    assert!(r.migrations > 0);
}

#[test]
fn k_above_m_is_refused_and_below_1_is_a_syntax_error() {
    let w = workload(&with_k(HEAVY, 4), "ekg", "global");
    match simulate_checked(&w, &SimOptions::default()) {
        Err(SimError::Unsupported(m)) => {
            assert_eq!(m, "scheduler.ekg.k: 4 is outside 1..3 (platform.cpus is 3)")
        }
        other => panic!("{:?}", other.map(|r| r.deadline_misses)),
    }
    let ov = Overrides::default();
    let e = Workload::parse_str(&with_k(HEAVY, -1), Path::new("k.yaml"), &ov).unwrap_err();
    assert!(
        e.to_string()
            .contains("scheduler.ekg.k: -1 is outside 0..1024"),
        "{e}"
    );
}

/// The hyperperiod of [`rt_sets::PERIODS`].
const HYPER: u64 = 200 * MS;

/// Whether `ts`'s utilisation is at most `m`, exactly (every period divides HYPER).
fn fits(ts: &[RtTask], m: usize) -> bool {
    let demand: u128 = ts.iter().map(|t| t.c as u128 * (HYPER / t.t) as u128).sum();
    demand <= m as u128 * HYPER as u128
}

/// Whether `ts`'s utilisation is exactly `m`.
fn full(ts: &[RtTask], m: usize) -> bool {
    let demand: u128 = ts.iter().map(|t| t.c as u128 * (HYPER / t.t) as u128).sum();
    demand == m as u128 * HYPER as u128
}

/// `ts` with WCETs raised so that the set's utilisation is exactly `m`: one task (the
/// last that can) takes the gap, after another gives up a few ns per job where the gap
/// is not a whole number of ns per job of the first. None when no task can (a WCET
/// would pass its period).
fn filled(ts: &[RtTask], m: usize) -> Option<Vec<RtTask>> {
    let per_job = |t: &RtTask| (HYPER / t.t) as u128;
    let demand: u128 = ts.iter().map(|t| t.c as u128 * per_job(t)).sum();
    let gap = (m as u128 * HYPER as u128).checked_sub(demand)?;
    for i in (0..ts.len()).rev() {
        let n = per_job(&ts[i]);
        // Give up δ ns per job of task j (δ < n) so that the gap divides by n.
        for j in 0..ts.len() {
            for delta in 0..n {
                let g = gap + per_job(&ts[j]) * delta;
                if g % n != 0 || (delta > 0 && (j == i || ts[j].c as u128 <= delta)) {
                    continue;
                }
                let mut out = ts.to_vec();
                out[j].c -= delta as u64;
                out[i].c += (g / n) as u64;
                if out[i].c <= out[i].t {
                    return Some(out);
                }
            }
        }
    }
    None
}

fn simulate_set(ts: &[RtTask], cpus: usize) -> SimResult {
    let y = yaml_of(ts, cpus, &format!("duration: {HYPER}ns\n"));
    let ov = Overrides {
        policy: Some(Policy::Ekg),
        placement: Some(Placement::Global),
        ..Overrides::default()
    };
    let w = Workload::parse_str(&y, Path::new("ekg.yaml"), &ov).unwrap();
    simulate_checked(&w, &SimOptions::default()).unwrap()
}

/// 80 random implicit-deadline sets per CPU count (2, 4, 8), utilisation from 0.6·m up
/// to m, and each set that can be filled to exactly m by raising its last task's WCET
/// also filled: with k = m (the default) no deadline is missed and every job released in
/// the hyperperiod completes.
#[test]
fn ekg_with_k_m_is_optimal() {
    let (mut checked, mut at_m) = (0, 0);
    for cpus in [2usize, 4, 8] {
        for seed in 0..80u64 {
            let frac = 0.6 + 0.4 * (seed % 11) as f64 / 10.0;
            let tasks = cpus + 1 + (seed as usize % (2 * cpus));
            let ts = random_set(tasks, cpus, frac * cpus as f64, seed, Deadlines::Implicit);
            let mut sets = vec![];
            if fits(&ts, cpus) {
                sets.push(ts.clone());
            }
            sets.extend(filled(&ts, cpus).filter(|f| f != &ts));
            for set in sets {
                let r = simulate_set(&set, cpus);
                assert_eq!(
                    r.deadline_misses, 0,
                    "{cpus} CPUs, seed {seed}, U = {frac}·m\n{set:?}"
                );
                assert_eq!(r.jobs_completed, r.jobs_released, "{cpus} CPUs seed {seed}");
                checked += 1;
                at_m += usize::from(full(&set, cpus));
            }
        }
    }
    assert!(checked >= 200, "only {checked} sets checked");
    assert!(at_m >= 100, "only {at_m} sets with U = m");
}

/// With k < m, EKG's utilisation bound is k/(k+1) (the paper's theorem): random
/// implicit-deadline sets with U up to m·k/(k+1), for k = 1, 2 and m − 1 on 4 and 8
/// CPUs and k = 1 on 2, miss no deadline over the hyperperiod.
#[test]
fn ekg_with_k_below_m_meets_its_bound() {
    let mut checked = 0;
    for cpus in [2usize, 4, 8] {
        let mut ks = vec![1, 2, cpus - 1];
        ks.retain(|&k| k < cpus);
        ks.dedup();
        for k in ks {
            let bound = cpus as f64 * k as f64 / (k + 1) as f64;
            for seed in 0..12u64 {
                let u = bound * (0.7 + 0.3 * (seed % 4) as f64 / 3.0);
                let tasks = cpus + 1 + (seed as usize % (2 * cpus));
                let ts = random_set(tasks, cpus, u, seed, Deadlines::Implicit);
                let y = yaml_of(
                    &ts,
                    cpus,
                    &format!("scheduler: {{ ekg: {{ k: {k} }} }}\nduration: {HYPER}ns\n"),
                );
                let ov = Overrides {
                    policy: Some(Policy::Ekg),
                    placement: Some(Placement::Global),
                    ..Overrides::default()
                };
                let w = Workload::parse_str(&y, Path::new("ekg.yaml"), &ov).unwrap();
                let r = simulate_checked(&w, &SimOptions::default()).unwrap();
                assert_eq!(
                    r.deadline_misses, 0,
                    "k = {k}, {cpus} CPUs, seed {seed}, U = {u}\n{ts:?}"
                );
                assert_eq!(r.jobs_completed, r.jobs_released);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 12 * 7);
}

#[test]
fn the_result_reports_the_assignment() {
    // The five tasks' assignment (next_fit_splits_two_tasks_of_five) as the result's
    // scheduler_structure: B split between CPUs 0 and 1, D between 1 and 2.
    let w = workload(FIVE, "ekg", "global");
    let r = run(&w);
    let s = r.scheduler_structure.expect("EKG reports its assignment");
    assert_eq!(s["kind"], "ekg-assignment");
    assert_eq!(s["k"], 3);
    assert_eq!(s["groups"], serde_json::json!([[0, 2]]));
    assert_eq!(s["heavy"], serde_json::json!([]));
    assert_eq!(s["cpus"], serde_json::json!([["A"], ["C"], ["E"]]));
    assert_eq!(
        s["split"],
        serde_json::json!([{ "task": "B", "cpus": [0, 1] }, { "task": "D", "cpus": [1, 2] }])
    );
    assert!(s["text"].as_str().unwrap().contains("split B: cpu0"));
}
