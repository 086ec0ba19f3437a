//! The quantum-based schedulers (pd2, er-pd2, epdf, bf): hand-worked schedules, the
//! quantum setting, and the optimality of PD², ER-PD² and BF on random implicit-deadline
//! sets with U ≤ m over their hyperperiod (every run under the invariant checker).
mod common;
mod rt_sets;
use common::{schedule, workload, MS};
use rt_sets::{deadlines, random_set};
use schedlab_model::{Overrides, Workload};
use schedlab_sim::{simulate, simulate_checked, SimError, SimOptions, SimResult};
use std::path::Path;

/// Simulate with a trace under the invariant checker (not `common::run`: Pfair and BF
/// idle a CPU while a job whose next quantum is not due yet waits, by design).
fn run(w: &Workload) -> SimResult {
    simulate_checked(w, &SimOptions { trace: true }).unwrap()
}

/// Weights 1/2, 1/2, 1/3, 2/3 (U = 2) on two CPUs, quantum 1 ms (hz 1000).
const FOUR: &str = "
platform: { cpus: 2, hz: 1000 }
duration: 6ms
tasks:
  - { name: A, runtime: 1ms, period: 2ms }
  - { name: E, runtime: 1ms, period: 2ms }
  - { name: B, runtime: 1ms, period: 3ms }
  - { name: C, runtime: 2ms, period: 3ms }
";

#[test]
fn pd2_breaks_a_pseudo_deadline_tie_by_the_b_bit() {
    // Group deadlines: A and E (weight 1/2, heavy) their pseudo-deadlines; C (2/3) 3 for
    // both subtasks of each job; B (light) 0.
    // Quantum 0: A, E and C's first subtask are all due at 2; C's window overlaps its
    // next one (b-bit 1), so PD2 runs C, then A (A and E tie: group deadline 2, index).
    // Quantum 1: E (due 2), then C's second subtask (due 3, group deadline 3) before B
    // (due 3, light). Quantum 2: B (3), A (4, by index over E). Quantum 3: E (4), C (5).
    // Quantum 4: A, E and C's second subtask are due 6 with group deadline 6: A and E by
    // index. Quantum 5: C, then B (light).
    let w = workload(FOUR, "pd2", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 6),
        [
            "C[0]@0 0-2",
            "A[0]@1 0-1",
            "E[0]@1 1-2",
            "B[0]@0 2-3",
            "A[1]@1 2-3",
            "E[1]@0 3-4",
            "C[1]@1 3-4",
            "E[2]@0 4-5",
            "A[2]@1 4-5",
            "C[1]@0 5-6",
            "B[1]@1 5-6",
        ]
    );
    assert_eq!(r.deadline_misses, 0);
    // C's second job is preempted at 4. A job released at the instant the task's previous
    // one completes starts on that CPU (the engine keeps the thread there): E's second
    // job (released at 2 on CPU 1) and B's second (at 3 on CPU 0) run on the other CPU;
    // C's second job resumes at 5 on CPU 0. Three migrations.
    assert_eq!((r.preemptions, r.migrations), (1, 3));
}

#[test]
fn epdf_breaks_the_same_tie_by_task_index() {
    // Quantum 0: A and E (due 2, lower indices than C). Quantum 1: C's first subtask
    // (due 2), B (3). Quantum 2: C's second (3), A (4); from there as PD2.
    let w = workload(FOUR, "epdf", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 6),
        [
            "A[0]@0 0-1",
            "E[0]@1 0-1",
            "C[0]@0 1-3",
            "B[0]@1 1-2",
            "A[1]@1 2-3",
            "C[1]@0 3-4",
            "E[1]@1 3-4",
            "A[2]@0 4-5",
            "E[2]@1 4-5",
            "B[1]@0 5-6",
            "C[1]@1 5-6",
        ]
    );
    assert_eq!(r.deadline_misses, 0);
}

#[test]
fn bf_allots_quanta_at_period_boundaries() {
    // Boundaries 0, 2, 3, 4, 6. [0,2): mandatory A 1, E 1, C 1 (4/3), B 0 (2/3); the one
    // spare quantum goes to B or C, whose strings both start with '0' at 2: a tie, B by
    // index. Layout A E | B C. [2,3): C 1 (1/3 + 2/3); A and E tie ('0' at 3): A.
    // [3,4): E 1; B and C are new periods: C's string starts '+' at 4, B's '−': C.
    // [4,6): A, E, B (1/3 + 2/3) and C (−1/3 + 4/3) one each: A E | B C.
    let w = workload(FOUR, "bf", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 6),
        [
            "A[0]@0 0-1",
            "B[0]@1 0-1",
            "E[0]@0 1-2",
            "C[0]@1 1-3",
            "A[1]@0 2-3",
            "E[1]@0 3-4",
            "C[1]@1 3-4",
            "A[2]@0 4-5",
            "B[1]@1 4-5",
            "E[2]@0 5-6",
            "C[1]@1 5-6",
        ]
    );
    assert_eq!(r.deadline_misses, 0);
}

/// One task of weight 2/4 alone on one CPU.
const HALF: &str = "
platform: { cpus: 1, hz: 1000 }
duration: 4ms
tasks:
  - { name: h, runtime: 2ms, period: 4ms }
";

#[test]
fn early_release_runs_a_subtask_before_its_pseudo_release() {
    // Subtask windows [0,2) and [2,4): PD2 and EPDF idle quantum 1 (the second subtask is
    // not released yet); ER-PD2 runs it at once; BF lays the interval's two quanta out
    // from its start.
    for (policy, want) in [
        ("pd2", vec!["h[0]@0 0-1", "h[0]@0 2-3"]),
        ("epdf", vec!["h[0]@0 0-1", "h[0]@0 2-3"]),
        ("er-pd2", vec!["h[0]@0 0-2"]),
        ("bf", vec!["h[0]@0 0-2"]),
    ] {
        let w = workload(HALF, policy, "global");
        let r = run(&w);
        assert_eq!(schedule(&w, &r, 4), want, "{policy}");
    }
}

#[test]
fn a_job_that_ends_early_leaves_its_quantum_idle() {
    // With random execution times below the WCET, a job ending mid-quantum leaves the
    // CPU idle to the boundary: t (2 ms WCET, 1..2 ms actual) and u (1 ms) on one CPU,
    // quantum 1 ms: nothing starts inside a quantum.
    let yaml = "
platform: { cpus: 1, hz: 1000 }
duration: 40ms
seed: 3
tasks:
  - { name: t, runtime: 2ms, period: 4ms, exec: { uniform: [1ms, 2ms] } }
  - { name: u, runtime: 1ms, period: 4ms }
";
    for policy in ["pd2", "er-pd2", "epdf", "bf"] {
        let w = workload(yaml, policy, "global");
        let r = run(&w);
        assert_eq!(r.deadline_misses, 0, "{policy}");
        let segs = r.trace.as_ref().unwrap();
        assert!(
            segs.iter().any(|s| s.end % MS != 0),
            "{policy}: no early end"
        );
        for s in segs {
            assert_eq!(s.start % MS, 0, "{policy}: {s:?} starts inside a quantum");
        }
    }
}

fn parse(yaml: &str) -> Result<Workload, String> {
    Workload::parse_str(yaml, Path::new("q.yaml"), &Overrides::default()).map_err(|e| e.to_string())
}

#[test]
fn the_quantum_defaults_to_the_tick_period_or_1ms_without_a_tick() {
    let t = "tasks: [{ name: a, runtime: 1ms, period: 4ms }]";
    let q = |p: &str| {
        parse(&format!("platform: {p}\n{t}"))
            .unwrap()
            .platform
            .quantum
    };
    assert_eq!(q("{ hz: 250 }"), 4 * MS);
    assert_eq!(q("{ hz: 1000 }"), MS);
    assert_eq!(q("{ hz: 0 }"), MS);
    assert_eq!(q("{ hz: 250, quantum: 500us }"), MS / 2);
    let e = parse(&format!("platform: {{ quantum: 0ms }}\n{t}")).unwrap_err();
    assert!(e.contains("platform.quantum: must be longer than 0"), "{e}");
}

#[test]
fn parameters_that_are_not_whole_quanta_are_rounded_as_simso_does() {
    // WCET 1.5 ms reserves 2 quanta (windows [0,2) and [2,4) of weight 2/4): PD2 runs
    // quanta 0 and 2, the job ends half-way through the second. The period 4.5 ms gives
    // job 1 the quanta wholly inside [4.5, 9): windows from 5 to 9, L = 4 again.
    let yaml = "
platform: { cpus: 1, quantum: 1ms }
duration: 9ms
tasks:
  - { name: h, runtime: 1500us, period: 4500us }
";
    let w = workload(yaml, "pd2", "global");
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 9),
        [
            "h[0]@0 0-1",
            "h[0]@0 2-2.500",
            "h[1]@0 5-6",
            "h[1]@0 7-7.500"
        ]
    );
    let w = workload(yaml, "er-pd2", "global");
    let r = run(&w);
    assert_eq!(schedule(&w, &r, 9), ["h[0]@0 0-1.500", "h[1]@0 5-6.500"]);
    // BF decides at period boundaries, which must be quantum boundaries.
    let w = workload(yaml, "bf", "global");
    let e = simulate(&w, &SimOptions::default())
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "bf: task h: period 4500us is not a whole number of quanta (platform.quantum 1ms): BF decides at period boundaries"
    );
}

#[test]
fn global_placement_only_and_bf_wants_implicit_deadlines() {
    for placement in ["linux", "partitioned"] {
        let w = workload(HALF, "pd2", placement);
        match simulate(&w, &SimOptions::default()) {
            Err(SimError::Unsupported(m)) => {
                assert_eq!(m, "pd2 is a global scheduler: use placement global")
            }
            other => panic!("{placement}: {other:?}"),
        }
    }
    let w = workload(
        &HALF.replace("period: 4ms", "period: 4ms, deadline: 3ms"),
        "bf",
        "global",
    );
    let e = simulate(&w, &SimOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bf: task h:") && e.contains("implicit deadlines"),
        "{e}"
    );
}

/// A random implicit-deadline set of `n` tasks with U = `u` ≤ m on `m` CPUs, every WCET a
/// whole number of milliseconds (the quantum): the shared generator's set with each WCET
/// rounded down to whole quanta (at least one), then quanta added back, task by task,
/// while U stays ≤ `u`. Periods from rt_sets::PERIODS (hyperperiod 200 ms).
fn whole_quanta_set(n: usize, m: usize, u: f64, seed: u64) -> String {
    let set = random_set(n, m, u, seed, deadlines(false, 0.0));
    let mut c: Vec<u64> = set.iter().map(|t| (t.c / MS).max(1)).collect();
    let p: Vec<u64> = set.iter().map(|t| t.t / MS).collect();
    // U in units of 1/200 (every period divides 200 ms).
    let units = |c: &[u64]| -> u64 { c.iter().zip(&p).map(|(c, p)| c * (200 / p)).sum() };
    let cap = (u * 200.0).floor() as u64;
    while units(&c) > cap {
        let i = (0..n)
            .filter(|&i| c[i] > 1)
            .max_by_key(|&i| c[i] * 200 / p[i])
            .unwrap();
        c[i] -= 1;
    }
    'fill: loop {
        for i in 0..n {
            if c[i] < p[i] && units(&c) + 200 / p[i] <= cap {
                c[i] += 1;
                continue 'fill;
            }
        }
        break;
    }
    let mut y = format!("platform: {{ cpus: {m}, hz: 1000 }}\nduration: hyperperiod\ntasks:\n");
    for i in 0..n {
        y += &format!(
            "  - {{ name: t{i}, runtime: {}ms, period: {}ms }}\n",
            c[i], p[i]
        );
    }
    y
}

#[test]
fn pd2_er_pd2_and_bf_meet_every_deadline_with_u_at_most_m() {
    // 3 policies × 3 CPU counts × 24 sets = 216 sets per policy group, U from 0.8·m to m.
    let mut sets = 0;
    for m in [2usize, 4, 8] {
        for k in 0..24u64 {
            let n = m + 1 + (k as usize % (2 * m));
            let u = m as f64 * (0.8 + 0.2 * ((k % 5) as f64 / 4.0));
            let yaml = whole_quanta_set(n, m, u, 1000 * m as u64 + k);
            for policy in ["pd2", "er-pd2", "bf"] {
                let w = workload(&yaml, policy, "global");
                let r = simulate_checked(&w, &SimOptions::default())
                    .unwrap_or_else(|e| panic!("{policy} m={m} set {k}: {e}\n{yaml}"));
                assert!(r.horizon_complete, "{policy} m={m} set {k}");
                assert_eq!(r.deadline_misses, 0, "{policy} m={m} set {k}\n{yaml}");
                assert_eq!(r.jobs_completed, r.jobs_released, "{policy} m={m} set {k}");
                sets += 1;
            }
        }
    }
    assert_eq!(sets, 3 * 3 * 24);
}

#[test]
fn er_pd2_idles_no_cpu_while_a_job_waits_on_whole_quanta() {
    // With whole-quantum parameters, early release makes ER-PD2 work-conserving: the
    // shared schedule checks (no CPU idle while a released job waits, every job runs
    // exactly its WCET) hold, where PD2 idles by design.
    for k in 0..30u64 {
        let m = [2, 4][k as usize % 2];
        let yaml = whole_quanta_set(m + 2 + k as usize % 4, m, m as f64 * 0.9, 9000 + k);
        let w = workload(&yaml, "er-pd2", "global");
        let r = common::run(&w);
        assert_eq!(r.deadline_misses, 0, "set {k}\n{yaml}");
    }
}

#[test]
fn epdf_meets_every_deadline_on_two_cpus() {
    // EPDF is optimal on two processors (Anderson & Srinivasan 2000).
    for k in 0..40u64 {
        let yaml = whole_quanta_set(3 + k as usize % 5, 2, 2.0, 7000 + k);
        let w = workload(&yaml, "epdf", "global");
        let r = simulate_checked(&w, &SimOptions::default()).unwrap();
        assert_eq!(r.deadline_misses, 0, "set {k}\n{yaml}");
    }
}

#[test]
fn same_input_same_output() {
    let yaml = whole_quanta_set(9, 4, 4.0, 42);
    for policy in ["pd2", "er-pd2", "epdf", "bf"] {
        let w = workload(&yaml, policy, "global");
        let a = run(&w);
        let b = run(&w);
        assert_eq!(a.trace, b.trace, "{policy}");
        assert_eq!((a.preemptions, a.migrations), (b.preemptions, b.migrations));
    }
}
