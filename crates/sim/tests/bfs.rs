//! BFS (`scheduler: { fair: bfs }`): the deadline arithmetic of bfs.c, the schedule it
//! produces on one and several CPUs, CPU shares by nice level, SCHED_ISO and SCHED_IDLEPRIO.
mod common;
use common::*;
use schedlab_model::{BfsParams, Overrides, TaskClass, Workload};
use schedlab_sim::class::{EnqueueReason, SchedClass};
use schedlab_sim::policy::bfs::{
    prio_deadline_diff, timeslice_ns, Bfs, Level, PRIO_RATIOS, RESCHED_NS,
};
use schedlab_sim::state::{ClassId, CpuState, Ctx, DlEntity, TaskState, TaskStats};
use schedlab_sim::{simulate, SimOptions, SimResult};
use std::cell::Cell;
use std::collections::VecDeque;
use std::path::Path;

/// BFS's millisecond (2^20 ns) and slice at rr_interval 6 ms.
const SLICE: u64 = 6 << 20;

fn sim(yaml: &str) -> (Workload, SimResult) {
    let w = Workload::parse_str(yaml, Path::new("bfs.yaml"), &Overrides::default()).unwrap();
    let r = simulate(&w, &SimOptions { trace: true }).unwrap();
    no_overlap(&w, &r);
    (w, r)
}

/// A CPU never runs two tasks at once and a task never runs on two CPUs at once.
fn no_overlap(w: &Workload, r: &SimResult) {
    let segs = r.trace.as_ref().unwrap();
    for key in [0usize, 1] {
        let n = if key == 0 { r.cpus } else { w.tasks.len() };
        for i in 0..n {
            let mut v: Vec<_> = segs
                .iter()
                .filter(|s| if key == 0 { s.cpu == i } else { s.task == i })
                .collect();
            v.sort_by_key(|s| s.start);
            for p in v.windows(2) {
                assert!(p[0].end <= p[1].start, "overlap {:?} {:?}", p[0], p[1]);
            }
        }
    }
}

fn yaml(cpus: usize, duration: &str, bfs: &str, tasks: &str) -> String {
    format!(
        "name: bfs\nplatform: {{ cpus: {cpus}, hz: 1000 }}\nduration: {duration}\n\
         scheduler: {{ fair: bfs{bfs} }}\ntasks:\n{tasks}"
    )
}

fn share(r: &SimResult, name: &str) -> f64 {
    let t = r.tasks.iter().find(|t| t.name == name).unwrap();
    t.cpu_time_ns as f64 / r.duration_ns as f64
}

fn first_start_ms(w: &Workload, r: &SimResult, name: &str) -> Option<f64> {
    segments_of(w, r, name).first().map(|s| s.2)
}

// ----- deadline arithmetic ---------------------------------------------------------------

#[test]
fn prio_ratios_table() {
    assert_eq!(PRIO_RATIOS.len(), 40);
    assert_eq!(PRIO_RATIOS[0], 128);
    assert_eq!(PRIO_RATIOS[20], 836, "nice 0");
    assert_eq!(PRIO_RATIOS[39], 5089, "nice 19");
    // The whole table of linux-sched.md §11 (integer ×11/10).
    let expected = [
        128, 140, 154, 169, 185, 203, 223, 245, 269, 295, 324, 356, 391, 430, 473, 520, 572, 629,
        691, 760, 836, 919, 1010, 1111, 1222, 1344, 1478, 1625, 1787, 1965, 2161, 2377, 2614, 2875,
        3162, 3478, 3825, 4207, 4627, 5089,
    ];
    assert_eq!(PRIO_RATIOS, expected);
    for i in 1..40 {
        assert_eq!(PRIO_RATIOS[i], PRIO_RATIOS[i - 1] * 11 / 10);
    }
}

#[test]
fn deadline_offsets_at_rr_interval_6() {
    assert_eq!(prio_deadline_diff(-20, 6), 6_291_456);
    assert_eq!(prio_deadline_diff(0, 6), 41_091_072);
    assert_eq!(prio_deadline_diff(19, 6), 250_134_528);
    // The slice: rr_interval << 10 = 6144 BFS µs of 2^10 ns (NS_TO_US is >> 10).
    assert_eq!(timeslice_ns(6), 6144 << 10);
    assert_eq!(timeslice_ns(6), SLICE);
    assert_eq!(RESCHED_NS, 100 << 10);
    // rr_interval scales every offset linearly.
    assert_eq!(prio_deadline_diff(0, 1) * 6, prio_deadline_diff(0, 6));
}

#[test]
fn nice_plus_one_stretches_the_offset_by_ten_percent() {
    for nice in -20i8..19 {
        let (a, b) = (prio_deadline_diff(nice, 6), prio_deadline_diff(nice + 1, 6));
        // ×1.1 with integer truncation of the ratio: between +9% and +10%.
        assert!(
            b * 100 <= a * 110 && b * 100 >= a * 109,
            "nice {nice}: {a} -> {b}"
        );
    }
    assert_eq!(prio_deadline_diff(1, 6), 919 * 6 * 8192);
}

// ----- the class on its own: deadlines kept across sleep, recomputed on expiry ------------

fn task(kind: TaskClass, nice: i8) -> TaskState {
    TaskState {
        class: ClassId::Fair,
        rt_key: 99,
        rel_deadline: u64::MAX,
        period: u64::MAX,
        round_robin: false,
        allowed: vec![true],
        nr_allowed: 1,
        allowed_everywhere: false,
        job: None,
        backlog: VecDeque::new(),
        runnable: true,
        on_cpu: None,
        rq: 0,
        job_last_cpu: None,
        last_cpu: 0,
        last_ran: 0,
        dl: DlEntity::default(),
        weight: 1024,
        kind,
        nice,
        job_started: false,
        stats: TaskStats::default(),
    }
}

struct World {
    now: u64,
    tasks: Vec<TaskState>,
    cpus: Vec<CpuState>,
    lax: Cell<u64>,
}

impl World {
    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            now: self.now,
            tasks: &self.tasks,
            cpus: &self.cpus,
            cbs: false,
            laxity_evals: &self.lax,
        }
    }

    /// `t` runs on CPU 0 from now for `d` ns.
    fn run(&mut self, t: usize, d: u64) {
        self.tasks[t].on_cpu = Some(0);
        self.now += d;
        self.tasks[t].stats.cpu_time += d;
    }
}

#[test]
fn deadline_is_kept_across_sleep_and_recomputed_on_slice_expiry() {
    let d0 = prio_deadline_diff(0, 6);
    let mut w = World {
        now: 1_000_000,
        tasks: vec![task(TaskClass::Normal, 0), task(TaskClass::Normal, 0)],
        cpus: vec![CpuState::default()],
        lax: Cell::new(0),
    };
    let mut bfs = Bfs::new(
        BfsParams {
            rr_interval: 6_000_000,
            locality: true,
        },
        1,
        1000,
    );
    bfs.init(1, 2);
    // A new task gets a full slice and a deadline one offset from now.
    bfs.enqueue_task(&w.ctx(), 0, 0, EnqueueReason::Wakeup);
    assert_eq!(bfs.deadline(0), 1_000_000 + d0);
    assert_eq!(bfs.slice_left(0), SLICE as i64);
    assert_eq!(bfs.pick_next_task(&w.ctx(), 0, 0), Some(0));
    // It runs 2 ms and sleeps: deadline and the rest of the slice are kept.
    w.run(0, 2_000_000);
    bfs.task_stopped(&w.ctx(), 0, 0);
    w.tasks[0].on_cpu = None;
    assert_eq!(bfs.deadline(0), 1_000_000 + d0);
    assert_eq!(bfs.slice_left(0), SLICE as i64 - 2_000_000);
    // Task 1 arrives later (later deadline), task 0 wakes 50 ms later: still its old one.
    w.now += 5_000_000;
    bfs.enqueue_task(&w.ctx(), 0, 1, EnqueueReason::Wakeup);
    w.now += 45_000_000;
    bfs.enqueue_task(&w.ctx(), 0, 0, EnqueueReason::Wakeup);
    assert_eq!(bfs.deadline(0), 1_000_000 + d0);
    assert!(bfs.deadline(1) > bfs.deadline(0));
    // Earliest deadline first: task 0 although task 1 was queued first.
    assert_eq!(bfs.pick_next_task(&w.ctx(), 0, 0), Some(0));
    // Its slice runs out exactly at the announced decision instant.
    let left = SLICE - 2_000_000;
    assert_eq!(
        bfs.next_decision(&w.ctx(), 0, 0, 0),
        Some(w.now + left),
        "exact expiry"
    );
    w.run(0, left);
    assert!(bfs.decision_due(&w.ctx(), 0, 0, 0));
    bfs.put_prev_task(&w.ctx(), 0, 0);
    // New deadline from now, full slice again: now task 1 is earlier.
    assert_eq!(bfs.deadline(0), w.now + d0);
    assert_eq!(bfs.slice_left(0), SLICE as i64);
    assert_eq!(bfs.pick_next_task(&w.ctx(), 0, 0), Some(1));
    // A slice with less than RESCHED_US left when the task sleeps counts as used up.
    w.tasks[0].on_cpu = None;
    w.run(1, SLICE - RESCHED_NS + 1);
    bfs.task_stopped(&w.ctx(), 0, 1);
    assert_eq!(bfs.deadline(1), w.now + d0);
    assert_eq!(bfs.slice_left(1), SLICE as i64);
}

#[test]
fn batch_tasks_get_a_new_deadline_whenever_descheduled() {
    let d0 = prio_deadline_diff(0, 6);
    let mut w = World {
        now: 0,
        tasks: vec![task(TaskClass::Batch, 0), task(TaskClass::Normal, 0)],
        cpus: vec![CpuState::default()],
        lax: Cell::new(0),
    };
    let mut bfs = Bfs::new(
        BfsParams {
            rr_interval: 6_000_000,
            locality: true,
        },
        1,
        1000,
    );
    bfs.init(1, 2);
    bfs.enqueue_task(&w.ctx(), 0, 0, EnqueueReason::Wakeup);
    bfs.enqueue_task(&w.ctx(), 0, 1, EnqueueReason::Wakeup);
    assert_eq!(bfs.pick_next_task(&w.ctx(), 0, 0), Some(0));
    w.run(0, 1_000_000);
    bfs.put_prev_task(&w.ctx(), 0, 0);
    assert_eq!(bfs.deadline(0), 1_000_000 + d0);
    assert_eq!(bfs.slice_left(0), SLICE as i64);
    assert_eq!(bfs.level(0), Level::Normal);
}

// ----- the schedule ---------------------------------------------------------------------

#[test]
fn woken_task_keeps_its_deadline_and_preempts_a_later_one() {
    // 1 CPU: a CPU-bound, i runs 1 ms every 10 ms. Both start at 0 with deadline D0 =
    // 41.091 ms; a was queued first and runs its slice (6.291 ms); then its new deadline
    // (6.291 + 41.091) is later than i's, so i runs. i sleeps with 5.291 ms of slice and
    // deadline 41.091 left; each time it wakes its old deadline beats a's (a's is always
    // > 41.091 once refilled), so it preempts a at once, until its slice runs out in its
    // 7th burst at 66.583 ms: new deadline 66.583 + 41.091 = 107.674 ms, later than a's
    // (its slice last expired at 62.623 → 103.714), so a runs; at 69.206 a's slice
    // expires again (→ 110.297) and i, now the earlier, finishes its burst.
    let (w, r) = sim(&yaml(
        1,
        "90ms",
        "",
        "  - { name: a }\n  - { name: i, run: 1ms, sleep: 9ms }\n",
    ));
    let s = schedule(&w, &r, 90);
    assert_eq!(
        s,
        vec![
            "a[0]@0 0-6.291",
            "i[0]@0 6.291-7.291",
            "a[0]@0 7.291-16.291",
            "i[1]@0 16.291-17.291",
            "a[0]@0 17.291-26.291",
            "i[2]@0 26.291-27.291",
            "a[0]@0 27.291-36.291",
            "i[3]@0 36.291-37.291",
            "a[0]@0 37.291-46.291",
            "i[4]@0 46.291-47.291",
            "a[0]@0 47.291-56.291",
            "i[5]@0 56.291-57.291",
            "a[0]@0 57.291-66.291",
            "i[6]@0 66.291-66.583",
            "a[0]@0 66.583-69.206",
            "i[6]@0 69.206-69.915",
            "a[0]@0 69.915-78.915",
            "i[7]@0 78.915-79.915",
            "a[0]@0 79.915-88.915",
            "i[8]@0 88.915-89.915",
            "a[0]@0 89.915-90",
        ]
    );
    // Exact instants: i's slice expires after 6 BFS ms = 6 × 2^20 ns of its CPU time.
    let i6: Vec<_> = r
        .trace
        .as_ref()
        .unwrap()
        .iter()
        .filter(|x| x.task == 1 && x.job == 6)
        .map(|x| (x.start, x.end))
        .collect();
    assert_eq!(i6[0], (60 * MS + SLICE, 54 * MS + 2 * SLICE));
    // Every wake-up but the first ran at once.
    let lat = r.tasks[1].latency.as_ref().unwrap();
    assert_eq!(lat.p50_ns, 0);
}

#[test]
fn wakeup_preempts_the_cpu_running_the_latest_deadline() {
    // 2 CPUs: a (nice 0) on CPU 0, b (nice 5) on CPU 1. At 10 ms their deadlines are
    // 6.291 + 41.091 = 47.4 ms and 6.291 + 66.060 = 72.4 ms; i (nice −5, deadline
    // 10 + 25.559 = 35.6 ms) beats both and takes CPU 1, b's.
    let (w, r) = sim(&yaml(
        2,
        "30ms",
        "",
        "  - { name: a }\n  - { name: b, nice: 5 }\n  - { name: i, nice: -5, offset: 10ms, work: 2ms }\n",
    ));
    let i = segments_of(&w, &r, "i");
    assert_eq!(i.len(), 1);
    assert_eq!((i[0].0, i[0].2, i[0].3), (1, 10.0, 12.0));
    let a = segments_of(&w, &r, "a");
    assert!(a.iter().all(|s| s.0 == 0), "a stays on CPU 0: {a:?}");
    assert_eq!(r.tasks[0].preemptions, 0);
    assert_eq!(r.tasks[1].preemptions, 1);
}

#[test]
fn nice_0_vs_0_is_fifty_fifty_and_nice_19_gets_about_3_percent() {
    let (_, r) = sim(&yaml(1, "20s", "", "  - { name: a }\n  - { name: b }\n"));
    let (a, b) = (share(&r, "a"), share(&r, "b"));
    println!("nice 0 vs 0: {a:.4} / {b:.4}");
    assert!((a - 0.5).abs() < 0.005 && (b - 0.5).abs() < 0.005);
    assert!(r.fairness.as_ref().unwrap().jain_index.unwrap() > 0.9999);

    // nice 0 vs 19: after each of b's slices, a runs until its fresh deadline passes b's:
    // k slices with k × 6.291 ms > 250.135 − 41.091 ms → k = 34, so b gets 1/35 = 2.86%.
    let (_, r) = sim(&yaml(
        1,
        "20s",
        "",
        "  - { name: a }\n  - { name: b, nice: 19 }\n",
    ));
    let b = share(&r, "b");
    println!(
        "nice 0 vs 19: nice 19 share {b:.5} (1/35 = {:.5})",
        1.0 / 35.0
    );
    assert!((0.02..0.04).contains(&b), "nice 19 share {b}");
    assert!((b - 1.0 / 35.0).abs() < 0.001, "nice 19 share {b}");

    // nice 0 vs 1: the offsets differ by less than a slice, so two tasks still alternate
    // slice by slice (shares are not a smooth 10% per level).
    let (_, r) = sim(&yaml(
        1,
        "10s",
        "",
        "  - { name: a }\n  - { name: b, nice: 1 }\n",
    ));
    let b = share(&r, "b");
    println!("nice 0 vs 1: nice 1 share {b:.4}");
    assert!((b - 0.5).abs() < 0.005);
}

#[test]
fn equal_cpu_bound_tasks_share_all_cpus_fairly() {
    for (cpus, n, loc) in [
        (2, 3, false),
        (2, 4, true),
        (4, 10, false),
        (4, 10, true),
        (3, 7, false),
    ] {
        let (_, r) = sim(&yaml(
            cpus,
            "10s",
            &format!(", bfs: {{ locality: {loc} }}"),
            &format!("  - {{ name: t, count: {n} }}\n"),
        ));
        let jain = r.fairness.as_ref().unwrap().jain_index.unwrap();
        let shares: Vec<f64> = r
            .tasks
            .iter()
            .map(|t| t.fair.as_ref().unwrap().share)
            .collect();
        println!(
            "{n} tasks on {cpus} CPUs, locality {loc}: Jain {jain:.6}, shares {:.4}..{:.4}, migrations {}",
            shares.iter().cloned().fold(f64::MAX, f64::min),
            shares.iter().cloned().fold(0.0, f64::max),
            r.migrations
        );
        assert!(jain > 0.999, "{n} on {cpus}: Jain {jain}");
        // Work conserving: every CPU always busy.
        for c in &r.per_cpu {
            assert!(c.utilisation > 0.9999, "{:?}", c);
        }
    }
}

#[test]
fn locality_bias_on_absolute_deadlines_pins_a_task_when_n_is_not_a_multiple_of_m() {
    // BFS 0.43x compares a sticky task on another CPU with `deadline << 2`, the absolute
    // niffies deadline: once time has run a little, that loses to any non-sticky task.
    // 3 CPU-bound tasks on 2 CPUs: the task alone on CPU 1 is always its own best
    // candidate there, the two others alternate on CPU 0 (each sticky to CPU 0 while it
    // waits) — 100% / 50% / 50%, no migration. Without the bias all get 2/3.
    let (w, r) = sim(&yaml(2, "10s", "", "  - { name: t, count: 3 }\n"));
    let shares: Vec<f64> = r
        .tasks
        .iter()
        .map(|t| t.fair.as_ref().unwrap().share)
        .collect();
    let jain = r.fairness.as_ref().unwrap().jain_index.unwrap();
    println!("3 on 2 with locality: shares {shares:?}, Jain {jain:.4}");
    assert!(shares.iter().any(|&s| s > 0.999));
    assert_eq!(
        shares.iter().filter(|&&s| (s - 0.5).abs() < 0.01).count(),
        2
    );
    assert!((jain - 8.0 / 9.0).abs() < 0.01);
    assert_eq!(r.migrations, 0);
    let _ = w;
}

#[test]
fn interactive_task_latency_next_to_cpu_hogs() {
    // 2 CPUs, 3 hogs and an interactive task: its old deadline lets it preempt at once.
    let (_, r) = sim(&yaml(
        2,
        "5s",
        "",
        "  - { name: a, count: 3 }\n  - { name: i, run: 1ms, sleep: 9ms }\n",
    ));
    let i = r.tasks.iter().find(|t| t.name == "i").unwrap();
    let lat = i.latency.as_ref().unwrap();
    println!(
        "interactive next to 3 hogs on 2 CPUs: {} wake-ups, mean {:.0} ns, p50 {} p99 {} max {} ns, share {:.4}",
        lat.samples,
        lat.mean_ns,
        lat.p50_ns,
        lat.p99_ns,
        lat.max_ns,
        share(&r, "i")
    );
    assert_eq!(lat.p50_ns, 0);
    assert!(lat.max_ns <= SLICE + 10_000, "{lat:?}");
    assert!(share(&r, "i") > 0.09);
}

#[test]
fn batch_work_finishes_and_shares_with_normal_tasks() {
    let (_, r) = sim(&yaml(
        1,
        "2s",
        "",
        "  - { name: a }\n  - { name: b, class: batch, work: 500ms }\n",
    ));
    let b = r.tasks.iter().find(|t| t.name == "b").unwrap();
    let fin = b.fair.as_ref().unwrap().finished_ns.unwrap();
    println!("batch 500 ms next to a hog finishes at {} ms", fin / MS);
    assert!((950 * MS..1100 * MS).contains(&fin), "{fin}");
}

// ----- SCHED_ISO and SCHED_IDLEPRIO -------------------------------------------------------

#[test]
fn iso_task_is_demoted_after_70_percent_over_5_seconds() {
    // 1 CPU: an ISO hog starves a normal task until iso_ticks, the decaying ISO share of
    // the last ~5 s, exceeds 70%: 1 − e^(−t/5 s) > 0.7 at t ≈ 6.02 s (a little later in
    // BFS's integer arithmetic). Then it runs as NORMAL and the other task gets the CPU;
    // when the share falls below 62% ISO comes back, and so on.
    let (w, r) = sim(&yaml(
        1,
        "30s",
        "",
        "  - { name: iso, class: iso }\n  - { name: n }\n",
    ));
    let first = first_start_ms(&w, &r, "n").unwrap();
    println!(
        "ISO hog vs normal hog: normal first runs at {first:.3} ms; shares iso {:.4} normal {:.4}",
        share(&r, "iso"),
        share(&r, "n")
    );
    assert!((6000.0..6200.0).contains(&first), "{first}");
    // Afterwards the normal task keeps getting CPU time in every 2 s window.
    let segs = segments_of(&w, &r, "n");
    for win in (8..30).step_by(2) {
        let lo = win as f64 * 1000.0;
        let ran: f64 = segs
            .iter()
            .map(|s| (s.3.min(lo + 2000.0) - s.2.max(lo)).max(0.0))
            .sum();
        assert!(
            ran > 100.0,
            "normal task ran {ran} ms in [{lo}, {})",
            lo + 2000.0
        );
    }
    let n = share(&r, "n");
    assert!((0.1..0.3).contains(&n), "{n}");

    // The budget is 70% of all CPUs: one ISO hog on 2 CPUs (50%) is never demoted.
    let (w, r) = sim(&yaml(
        2,
        "20s",
        "",
        "  - { name: iso, class: iso }\n  - { name: n, count: 2 }\n",
    ));
    assert!(share(&r, "iso") > 0.9999, "{}", share(&r, "iso"));
    assert_eq!(segments_of(&w, &r, "iso").len(), 1);
}

#[test]
fn iso_task_below_the_budget_keeps_preempting_normal_tasks() {
    // 50% duty: never demoted, so it always preempts the normal hog at once.
    let (_, r) = sim(&yaml(
        1,
        "20s",
        "",
        "  - { name: n }\n  - { name: iso, class: iso, run: 5ms, sleep: 5ms }\n",
    ));
    let iso = r.tasks.iter().find(|t| t.name == "iso").unwrap();
    let lat = iso.latency.as_ref().unwrap();
    println!(
        "ISO 50% duty vs hog: share {:.4}, latency max {} ns",
        share(&r, "iso"),
        lat.max_ns
    );
    assert_eq!(lat.max_ns, 0);
    assert!((share(&r, "iso") - 0.5).abs() < 0.01);

    // 90% duty: above the budget, it gets demoted and then has to wait at times.
    let (_, r) = sim(&yaml(
        1,
        "20s",
        "",
        "  - { name: n }\n  - { name: iso, class: iso, run: 9ms, sleep: 1ms }\n",
    ));
    let iso = r.tasks.iter().find(|t| t.name == "iso").unwrap();
    let lat = iso.latency.as_ref().unwrap();
    println!(
        "ISO 90% duty vs hog: share {:.4}, normal {:.4}, latency p99 {} max {} ns",
        share(&r, "iso"),
        share(&r, "n"),
        lat.p99_ns,
        lat.max_ns
    );
    assert!(lat.max_ns > 0);
    assert!(share(&r, "n") > 0.1);
    assert!(share(&r, "iso") < 0.9);
}

#[test]
fn idleprio_runs_only_when_nothing_else_can() {
    // 1 CPU: a normal hog starves an IDLEPRIO hog completely.
    let (_, r) = sim(&yaml(
        1,
        "5s",
        "",
        "  - { name: n }\n  - { name: z, class: idle }\n",
    ));
    assert_eq!(r.tasks[1].cpu_time_ns, 0);
    // A normal job of 500 ms: IDLEPRIO runs exactly when it is done, and is preempted by
    // the interactive task at each of its wake-ups.
    let (w, r) = sim(&yaml(
        1,
        "2s",
        "",
        "  - { name: z, class: idle }\n  - { name: b, work: 500ms }\n  - { name: i, run: 1ms, sleep: 9ms }\n",
    ));
    let z = segments_of(&w, &r, "z");
    assert!(z[0].2 >= 500.0, "{:?}", &z[..1]);
    let i = r.tasks.iter().find(|t| t.name == "i").unwrap();
    let lat = i.latency.as_ref().unwrap();
    println!("interactive over IDLEPRIO: latency max {} ns", lat.max_ns);
    assert!(r.tasks[0].preemptions > 100);
    // After b is done, i never waits for z: each burst starts 9 ms after the previous one
    // ended and runs its 1 ms in one piece.
    let i_segs: Vec<_> = segments_of(&w, &r, "i")
        .into_iter()
        .filter(|s| s.2 > 600.0)
        .collect();
    for p in i_segs.windows(2) {
        assert!((p[1].2 - p[0].3 - 9.0).abs() < 1e-6, "{p:?}");
        assert!((p[1].3 - p[1].2 - 1.0).abs() < 1e-6, "{p:?}");
    }
    // 2 CPUs: the IDLEPRIO task gets the CPU the normal task leaves free.
    let (_, r) = sim(&yaml(
        2,
        "2s",
        "",
        "  - { name: n }\n  - { name: z, class: idle }\n",
    ));
    assert!(share(&r, "z") > 0.999);
    assert!(share(&r, "n") > 0.999);
}

#[test]
fn realtime_tasks_stay_above_bfs() {
    let (_, r) = sim(&yaml(
        1,
        "1s",
        "",
        "  - { name: rt, class: fifo, priority: 50, runtime: 2ms, period: 10ms }\n  - { name: iso, class: iso }\n  - { name: n }\n",
    ));
    let rt = r.tasks.iter().find(|t| t.name == "rt").unwrap();
    assert_eq!(rt.misses, 0);
    assert_eq!(rt.max_response_ns, 2 * MS);
    assert!((share(&r, "rt") - 0.2).abs() < 0.001);
}

#[test]
fn runs_are_deterministic() {
    let y = yaml(
        3,
        "3s",
        "",
        "  - { name: a, count: 4 }\n  - { name: i, count: 2, run: 1ms, sleep: 4ms, nice: -3 }\n  - { name: b, work: 300ms, nice: 5 }\n  - { name: s, class: iso, run: 2ms, sleep: 8ms }\n",
    );
    let (_, r1) = sim(&y);
    let (_, r2) = sim(&y);
    assert_eq!(r1.trace, r2.trace);
    assert_eq!(r1.context_switches, r2.context_switches);
}
