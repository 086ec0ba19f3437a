//! The boundary ("fluid") schedulers `dp-wrap`, `llref` and `lre-tl`: schedules worked by
//! hand, DP-Wrap's allocation, and the optimality property (no deadline miss on
//! implicit-deadline periodic sets with U <= m over the hyperperiod).
mod common;
mod rt_sets;
use common::{schedule, workload};
use rt_sets::{random_set, yaml_of, MS};
use schedlab_analysis::{Deadlines, RtTask};
use schedlab_model::{Overrides, Placement, Policy, Workload};
use schedlab_sim::{simulate_checked, SimError, SimOptions, SimResult};
use std::path::Path;

/// Simulate with a trace and the engine's invariant checker; no CPU runs two tasks and no
/// task runs on two CPUs at once (these schedulers leave CPUs idle while jobs wait, so
/// the suite's work-conservation check does not apply).
fn run(w: &Workload) -> SimResult {
    let r = simulate_checked(w, &SimOptions { trace: true }).unwrap();
    let segs = r.trace.as_ref().unwrap();
    for a in segs {
        assert!(a.start < a.end && a.end <= w.duration, "{a:?}");
        for b in segs {
            if a != b && a.start < b.end && b.start < a.end {
                assert!(a.cpu != b.cpu && a.task != b.task, "{a:?} overlaps {b:?}");
            }
        }
    }
    r
}

/// Two CPUs: A 4 ms every 5, B 4 every 10, C 6 every 10 (U = 1.8).
const ABC: &str = "
platform: { cpus: 2 }
duration: 10ms
tasks:
  - { name: A, runtime: 4ms, period: 5ms }
  - { name: B, runtime: 4ms, period: 10ms }
  - { name: C, runtime: 6ms, period: 10ms }
";

#[test]
fn dp_wrap_abc_by_hand() {
    // Slice [0,5): shares A 4, B 2, C 3. CPU 0: A 0-4, then B's first piece 4-5; B's
    // second piece wraps to CPU 1 at 0-1, then C 1-4. Slice [5,10): A 4, B 4-2 = 2,
    // C 6-3 = 3: the same layout.
    let w = workload(ABC, "dp-wrap", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 10),
        vec![
            "A[0]@0 0-4",
            "B[0]@1 0-1",
            "C[0]@1 1-4",
            "B[0]@0 4-5",
            "A[1]@0 5-9",
            "B[0]@1 5-6",
            "C[0]@1 6-9",
            "B[0]@0 9-10",
        ]
    );
    assert_eq!(r.deadline_misses, 0);
    // B moves at 1 (to CPU 0 at 4), at 5 and at 6 (back at 9); C waits from 4 to 6.
    assert_eq!((r.preemptions, r.migrations), (4, 3));
}

#[test]
fn llref_abc_by_hand() {
    // Plane [0,5): l = A 4, B 2, C 3. A and C run; B's local laxity reaches 0 at 5-2 = 3
    // (C event) while C's l reaches 0 then (B event): B replaces C. A's l ends at 4 with
    // its job; B runs to 5. Plane [5,10): A 4, B 2, C 3 again, B's C event at 8.
    let w = workload(ABC, "llref", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 10),
        vec![
            "A[0]@0 0-4",
            "C[0]@1 0-3",
            "B[0]@1 3-5",
            "A[1]@0 5-9",
            "C[0]@1 5-8",
            "B[0]@1 8-10",
        ]
    );
    assert_eq!(r.deadline_misses, 0);
}

#[test]
fn lre_tl_abc_by_hand() {
    // Plane [0,5): l = A 4, B 2, C 3; the first two jobs in workload order run (A, B).
    // At 2 B's budget ends (B event) and C, whose local laxity is 0 then, takes CPU 1.
    // Plane [5,10): A and B run again, C waits until B's budget ends at 7.
    let w = workload(ABC, "lre-tl", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 10),
        vec![
            "A[0]@0 0-4",
            "B[0]@1 0-2",
            "C[0]@1 2-5",
            "A[1]@0 5-9",
            "B[0]@1 5-7",
            "C[0]@1 7-10",
        ]
    );
    assert_eq!(r.deadline_misses, 0);
    assert_eq!((r.preemptions, r.migrations), (2, 0));
}

#[test]
fn dp_wrap_allocation_of_abc() {
    use schedlab_sim::policy::dp_wrap::{DpWrap, Piece};
    let p = |task, start, end| Piece {
        task,
        start: start * MS,
        end: end * MS,
    };
    // Shares A 4, B 2, C 3 of the slice [0, 5 ms) on 2 CPUs: B is cut at the slice's end.
    let cpus = DpWrap::wrap(&[(0, 4 * MS), (1, 2 * MS), (2, 3 * MS)], 2, 0, 5 * MS);
    assert_eq!(
        cpus,
        vec![vec![p(0, 0, 4), p(1, 4, 5)], vec![p(1, 0, 1), p(2, 1, 4)]]
    );
    // A share that ends exactly at the slice's end moves the next one to the next CPU.
    let cpus = DpWrap::wrap(&[(0, 5 * MS), (1, 5 * MS)], 3, 0, 5 * MS);
    assert_eq!(cpus, vec![vec![p(0, 0, 5)], vec![p(1, 0, 5)], vec![]]);
}

#[test]
fn fluid_schedulers_need_global_placement_and_free_tasks() {
    for policy in ["dp-wrap", "llref", "lre-tl"] {
        for placement in ["linux", "partitioned"] {
            let w = workload(ABC, policy, placement);
            match simulate_checked(&w, &SimOptions::default()) {
                Err(SimError::Unsupported(m)) => assert_eq!(
                    m,
                    format!("{policy} is a global scheduler: use placement global")
                ),
                other => panic!(
                    "{policy} {placement}: {:?}",
                    other.map(|r| r.deadline_misses)
                ),
            }
        }
        let pinned = ABC.replace("period: 10ms }", "period: 10ms, affinity: [1] }");
        let w = workload(&pinned, policy, "global");
        match simulate_checked(&w, &SimOptions::default()) {
            Err(SimError::Unsupported(m)) => assert!(m.contains("task `B` has an affinity"), "{m}"),
            other => panic!("{policy}: {:?}", other.map(|r| r.deadline_misses)),
        }
    }
}

/// The hyperperiod of [`rt_sets::PERIODS`].
const HYPER: u64 = 200 * MS;

/// Whether `ts`'s utilisation is at most `m`, exactly (every period divides HYPER).
fn fits(ts: &[RtTask], m: usize) -> bool {
    let demand: u128 = ts.iter().map(|t| t.c as u128 * (HYPER / t.t) as u128).sum();
    demand <= m as u128 * HYPER as u128
}

fn simulate_set(ts: &[RtTask], cpus: usize, policy: &str) -> SimResult {
    let y = yaml_of(ts, cpus, &format!("duration: {HYPER}ns\n"));
    let ov = Overrides {
        policy: Some(Policy::parse(policy).unwrap()),
        placement: Some(Placement::Global),
        ..Overrides::default()
    };
    let w = Workload::parse_str(&y, Path::new("fluid.yaml"), &ov).unwrap();
    simulate_checked(&w, &SimOptions::default()).unwrap()
}

/// `SETS_PER_CPUS` random implicit-deadline sets per CPU count (2, 4, 8), utilisation
/// from 0.6·m up to m itself, simulated over the hyperperiod with the invariant checker:
/// no deadline miss, every job released in the window completed.
const SETS_PER_CPUS: u64 = 70;

fn optimal_on_random_sets(policy: &str) {
    let mut checked = 0;
    let mut full = 0;
    for cpus in [2usize, 4, 8] {
        for seed in 0..SETS_PER_CPUS {
            let frac = 0.6 + 0.4 * (seed % 11) as f64 / 10.0;
            let tasks = cpus + 1 + (seed as usize % (2 * cpus));
            let ts = random_set(tasks, cpus, frac * cpus as f64, seed, Deadlines::Implicit);
            if !fits(&ts, cpus) {
                continue; // rounding to the ns put U above m
            }
            let r = simulate_set(&ts, cpus, policy);
            assert_eq!(
                r.deadline_misses, 0,
                "{policy}: {cpus} CPUs, seed {seed}, U = {frac}·m\n{ts:?}"
            );
            assert_eq!(
                r.jobs_completed, r.jobs_released,
                "{policy} {cpus} CPUs seed {seed}"
            );
            checked += 1;
            full += usize::from(seed % 11 == 10);
        }
    }
    assert!(checked >= 200, "{policy}: only {checked} sets checked");
    assert!(full > 0, "{policy}: no set with U = m");
}

#[test]
fn dp_wrap_is_optimal() {
    optimal_on_random_sets("dp-wrap");
}

#[test]
fn llref_is_optimal() {
    optimal_on_random_sets("llref");
}

#[test]
fn lre_tl_is_optimal() {
    optimal_on_random_sets("lre-tl");
}
