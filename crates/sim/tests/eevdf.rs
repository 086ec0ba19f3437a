//! EEVDF fair class: eligibility and pick order on hand-built queues, RUN_TO_PARITY,
//! DELAY_DEQUEUE, exact slice arithmetic, weighted shares, fairness across CPUs and
//! wake-up latency against the base slice.

mod common;

use common::{run, schedule, workload, MS};
use schedlab_model::{EevdfParams, TaskClass, Workload};
use schedlab_sim::class::{EnqueueReason, SchedClass};
use schedlab_sim::policy::cfs::calc_delta_fair;
use schedlab_sim::policy::eevdf::Eevdf;
use schedlab_sim::state::{ClassId, CpuState, Ctx, DlEntity, TaskState, TaskStats};
use schedlab_sim::{simulate, SimOptions, SimResult};
use std::cell::Cell;
use std::collections::VecDeque;

const WAKE: EnqueueReason = EnqueueReason::Wakeup;

/// A one-CPU machine driven by hand: the test plays the engine's part.
struct Bench {
    tasks: Vec<TaskState>,
    cpus: Vec<CpuState>,
    now: u64,
    evals: Cell<u64>,
}

impl Bench {
    fn new(weights: &[u64]) -> Bench {
        let task = |weight| TaskState {
            class: ClassId::Fair,
            rt_key: 0,
            rel_deadline: 0,
            period: 0,
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
            weight,
            kind: TaskClass::Normal,
            nice: 0,
            job_started: false,
            stats: TaskStats::default(),
        };
        Bench {
            tasks: weights.iter().map(|&w| task(w)).collect(),
            cpus: vec![CpuState::default()],
            now: 0,
            evals: Cell::new(0),
        }
    }

    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            now: self.now,
            tasks: &self.tasks,
            cpus: &self.cpus,
            cbs: false,
            laxity_evals: &self.evals,
        }
    }

    /// `t` runs for `ns` on CPU 0.
    fn run(&mut self, t: usize, ns: u64) {
        self.now += ns;
        self.tasks[t].stats.cpu_time += ns;
    }

    fn pick(&mut self, e: &mut Eevdf) -> usize {
        let t = e.pick_next_task(&self.ctx(), 0, 0).expect("a task to pick");
        self.tasks[t].on_cpu = Some(0);
        t
    }

    fn put_prev(&mut self, e: &mut Eevdf, t: usize) {
        e.put_prev_task(&self.ctx(), 0, t);
        self.tasks[t].on_cpu = None;
    }
}

fn eevdf(base_slice: u64, run_to_parity: bool) -> Eevdf {
    Eevdf::new(EevdfParams {
        base_slice,
        run_to_parity,
        hrtick: false,
    })
}

const NICE_M10: u64 = 9548;
const NICE_M5: u64 = 3121;
const NICE_0: u64 = 1024;

/// A task with positive lag is eligible and picked before one with negative lag, even
/// though the latter has the earlier virtual deadline (plain EDF on deadlines would take it).
#[test]
fn positive_lag_is_picked_before_negative_lag() {
    let (x, y) = (0, 1);
    let mut b = Bench::new(&[NICE_M5, NICE_0]);
    let mut e = eevdf(3 * MS, true);
    e.init(1, 2);
    e.enqueue_task(&b.ctx(), 0, x, WAKE);
    e.enqueue_task(&b.ctx(), 0, y, WAKE);
    // New tasks start at V = 0 with half a request (PLACE_DEADLINE_INITIAL).
    let vslice_x = calc_delta_fair(3 * MS, NICE_M5) as i64;
    assert_eq!(e.deadline(x), vslice_x / 2);
    assert_eq!(e.deadline(y), (3 * MS / 2) as i64);
    assert_eq!(
        b.pick(&mut e),
        x,
        "both eligible: the earliest deadline runs"
    );

    b.run(x, 300_000);
    b.put_prev(&mut e, x);
    let ctx = b.ctx();
    let v_x = calc_delta_fair(300_000, NICE_M5) as i64;
    assert_eq!(e.vruntime(&ctx, x), Some(v_x));
    // V = Σ w v / Σ w, floored.
    let v_avg = (NICE_M5 as i64 * v_x).div_euclid((NICE_M5 + NICE_0) as i64);
    assert_eq!(e.avg_vruntime(&ctx, 0), v_avg);
    assert!(e.lag(&ctx, x) < 0 && !e.eligible(&ctx, x));
    assert!(e.lag(&ctx, y) > 0 && e.eligible(&ctx, y));
    // Lags sum to zero up to the floor of V.
    let sum = e.lag(&ctx, x) + e.lag(&ctx, y);
    assert!(
        sum <= 0 && sum > -((NICE_M5 + NICE_0) as i64),
        "Σ lag = {sum}"
    );
    assert!(e.deadline(x) < e.deadline(y));
    assert_eq!(e.timeline(0), vec![x, y], "deadline order");
    assert_eq!(e.peek_next_task(&ctx, 0, 0), Some(y));
    assert_eq!(b.pick(&mut e), y, "eligible beats earlier deadline");
}

/// RUN_TO_PARITY: a just-picked, eligible current task is not preempted by a woken task
/// with an earlier deadline until its request is used up; without it, it is.
#[test]
fn run_to_parity_protects_the_current_request() {
    for rtp in [true, false] {
        let (z, x, w) = (0, 1, 2);
        let mut b = Bench::new(&[NICE_0, NICE_0, NICE_M10]);
        let mut e = eevdf(3 * MS, rtp);
        e.init(1, 3);
        e.enqueue_task(&b.ctx(), 0, z, WAKE);
        e.enqueue_task(&b.ctx(), 0, x, WAKE);
        assert_eq!(b.pick(&mut e), z, "equal deadlines: queue order");
        b.run(z, MS);
        assert!(
            !e.task_tick(&b.ctx(), 0, 0, z),
            "request not used up at 1 ms"
        );
        b.run(z, MS);
        assert!(e.task_tick(&b.ctx(), 0, 0, z), "request used up at 2 ms");
        assert_eq!(e.deadline(z), (2 * MS + 3 * MS) as i64, "vd = v + vslice");
        b.put_prev(&mut e, z);
        assert_eq!(b.pick(&mut e), x, "z has run ahead of V");
        b.run(x, 200_000);
        // A heavy task wakes: placed at V = 1.1 ms with half its (short) request.
        e.enqueue_task(&b.ctx(), 0, w, WAKE);
        let ctx = b.ctx();
        assert_eq!(e.avg_vruntime(&ctx, 0), 1_100_000);
        assert!(e.eligible(&ctx, w) && e.eligible(&ctx, x));
        assert!(e.deadline(w) < e.deadline(x));
        assert_eq!(e.peek_next_task(&ctx, 0, 0), Some(w));
        assert_eq!(e.wakeup_preempt(&ctx, x, w), !rtp, "run_to_parity {rtp}");
    }
}

/// DELAY_DEQUEUE: a task going to sleep with negative lag stays queued until it is
/// picked while eligible; it then leaves with zero lag and wakes at V.
#[test]
fn delay_dequeue_burns_negative_lag_while_asleep() {
    let (x, y) = (0, 1);
    let mut b = Bench::new(&[NICE_0, NICE_0]);
    let mut e = eevdf(3 * MS, true);
    e.init(1, 2);
    e.enqueue_task(&b.ctx(), 0, x, WAKE);
    e.enqueue_task(&b.ctx(), 0, y, WAKE);
    assert_eq!(b.pick(&mut e), x);
    b.run(x, MS);
    b.tasks[x].runnable = false;
    b.tasks[x].on_cpu = None;
    e.task_stopped(&b.ctx(), 0, x);
    assert!(e.is_delayed(x), "x sleeps with negative lag: delayed");
    assert_eq!(
        e.timeline(0),
        vec![y, x],
        "still queued, after y (equal deadlines)"
    );
    assert_eq!(b.pick(&mut e), y, "the delayed task is not eligible yet");
    b.run(y, MS);
    b.put_prev(&mut e, y);
    // V = 1 ms: x is eligible and, y having been queued again after it, first in
    // deadline order, so the pick dequeues it and takes y.
    assert_eq!(e.timeline(0), vec![x, y]);
    assert_eq!(e.peek_next_task(&b.ctx(), 0, 0), Some(y));
    assert_eq!(b.pick(&mut e), y);
    assert!(!e.is_delayed(x) && e.timeline(0).is_empty());
    let v_avg = e.avg_vruntime(&b.ctx(), 0);
    b.tasks[x].runnable = true;
    e.enqueue_task(&b.ctx(), 0, x, WAKE);
    assert_eq!(
        e.vruntime(&b.ctx(), x),
        Some(v_avg),
        "zero lag: placed at V"
    );
}

fn yaml(cpus: usize, eevdf: &str, tasks: &str, duration: &str) -> String {
    format!(
        "name: eevdf\nplatform: {{ cpus: {cpus}, hz: 1000 }}\nduration: {duration}\n\
         scheduler: {{ fair: eevdf{eevdf} }}\ntasks:\n{tasks}"
    )
}

/// Two nice-0 tasks, base_slice 3 ms at HZ=1000: each first runs half a request
/// (rounded up to the tick), then they alternate every base_slice.
#[test]
fn two_equal_tasks_alternate_every_base_slice() {
    let w = workload(
        &yaml(
            1,
            ", eevdf: { base_slice: 3ms }",
            "  - { name: a }\n  - { name: b }\n",
            "1s",
        ),
        "eevdf",
        "linux",
    );
    let r = run(&w);
    assert_eq!(
        schedule(&w, &r, 16),
        [
            "a[0]@0 0-2",
            "b[0]@0 2-4",
            "a[0]@0 4-7",
            "b[0]@0 7-10",
            "a[0]@0 10-13",
            "b[0]@0 13-16",
        ]
    );
    let mut segs = r.trace.clone().unwrap();
    segs.sort_by_key(|s| s.start);
    for (i, s) in segs.iter().enumerate().skip(2) {
        if s.end < w.duration {
            assert_eq!(s.end - s.start, 3 * MS, "segment {i}: {s:?}");
            assert_ne!(s.task, segs[i - 1].task, "segment {i} alternates");
        }
    }
}

/// Nice −5 / 0 / 5 CPU hogs on one CPU for 10 s get weight shares 3121:1024:335 (±1%).
#[test]
fn cpu_shares_follow_weights() {
    let w = workload(
        &yaml(
            1,
            "",
            "  - { name: a, nice: -5 }\n  - { name: b, nice: 0 }\n  - { name: c, nice: 5 }\n",
            "10s",
        ),
        "eevdf",
        "linux",
    );
    let r = run(&w);
    let total: u64 = r.tasks.iter().map(|t| t.cpu_time_ns).sum();
    assert_eq!(total, 10_000 * MS);
    let weights = [3121.0, 1024.0, 335.0];
    let wsum: f64 = weights.iter().sum();
    for (t, wt) in r.tasks.iter().zip(weights) {
        let share = t.cpu_time_ns as f64 / total as f64;
        let want = wt / wsum;
        assert!(
            (share / want - 1.0).abs() < 0.01,
            "{}: share {share:.5}, weight share {want:.5}",
            t.name
        );
    }
    // Lag stays bounded: the vruntime spread never exceeds the lightest task's request
    // plus a tick (in its virtual time).
    let bound = calc_delta_fair(3 * MS + MS, 335) as i64;
    let spread = r.fairness.unwrap().max_vruntime_spread_ns;
    assert!(spread <= bound, "spread {spread} > {bound}");
}

/// Equal CPU hogs spread over several CPUs are served fairly.
#[test]
fn equal_hogs_on_several_cpus_are_fair() {
    for (n, m) in [(8, 4), (16, 8), (6, 2)] {
        let w = workload(
            &yaml(m, "", &format!("  - {{ name: a, count: {n} }}\n"), "10s"),
            "eevdf",
            "linux",
        );
        let r = run(&w);
        let jain = r.fairness.unwrap().jain_index.unwrap();
        assert!(jain > 0.99, "{n} tasks on {m} CPUs: Jain {jain}");
    }
}

fn latency_of(r: &SimResult, name: &str) -> f64 {
    let t = r.tasks.iter().find(|t| t.name == name).unwrap();
    t.latency.as_ref().unwrap().mean_ns
}

fn interactive(base_slice: &str) -> Workload {
    workload(
        &yaml(
            1,
            &format!(", eevdf: {{ base_slice: {base_slice} }}"),
            "  - { name: a, count: 4 }\n  - { name: i, run: 2ms, sleep: 8ms }\n",
            "10s",
        ),
        "eevdf",
        "linux",
    )
}

/// A shorter base slice shortens the requests the interactive task waits behind.
#[test]
fn wakeup_latency_falls_with_the_base_slice() {
    let opts = SimOptions::default();
    let long = latency_of(&simulate(&interactive("3ms"), &opts).unwrap(), "i");
    let short = latency_of(&simulate(&interactive("0.75ms"), &opts).unwrap(), "i");
    assert!(
        short < 0.75 * long,
        "mean wake-up latency {short} ns at 0.75 ms vs {long} ns at 3 ms"
    );
    assert!(long <= 2.0 * (3 * MS) as f64, "latency {long} ns at 3 ms");
}

/// Without DELAY_DEQUEUE (v6.6–v6.11) the burst's negative lag survives the sleep: the
/// interactive task waits longer and gets less CPU than with it.
#[test]
fn delay_dequeue_helps_the_sleeper() {
    let w = interactive("3ms");
    let with = |dd: bool| {
        let n = w.tasks.len();
        let classes: Vec<Box<dyn SchedClass>> = vec![
            Box::new(schedlab_sim::policy::edf::Edf::default()),
            Box::new(schedlab_sim::policy::rt::Rt::new(100)),
            Box::new(Eevdf::new(w.scheduler.eevdf).with_delay_dequeue(dd)),
        ];
        let task_class = vec![ClassId::Fair; n];
        schedlab_sim::engine::Engine::new(
            &w,
            classes,
            &task_class,
            &vec![0; n],
            vec![None; n],
            false,
        )
        .unwrap()
        .run()
    };
    let (on, off) = (with(true), with(false));
    let share = |r: &SimResult| r.tasks[4].fair.as_ref().unwrap().share;
    assert!(
        share(&on) > share(&off) + 0.02,
        "{} vs {}",
        share(&on),
        share(&off)
    );
    assert!(latency_of(&on, "i") < latency_of(&off, "i"));
    // The default class is the DELAY_DEQUEUE one.
    let default = simulate(&w, &SimOptions::default()).unwrap();
    assert_eq!(share(&default), share(&on));
}

/// A mixed workload (real-time tasks, hogs, sleepers of every class, affinity, several
/// CPUs with load balancing) runs to the end and gives the same schedule every time.
#[test]
fn mixed_workload_is_deterministic() {
    let w = workload(
        &yaml(
            3,
            "",
            "  - { name: rt, class: fifo, priority: 10, runtime: 2ms, period: 15ms }\n\
             \x20 - { name: hog, count: 4, nice: -3 }\n\
             \x20 - { name: light, nice: 10 }\n\
             \x20 - { name: i, count: 3, run: 1.3ms, sleep: 4.1ms }\n\
             \x20 - { name: b, class: batch, run: 3ms, sleep: 2ms }\n\
             \x20 - { name: idle, class: idle, run: 500us, sleep: 700us }\n\
             \x20 - { name: pinned, run: 700us, sleep: 1ms, affinity: [2] }\n\
             \x20 - { name: job, work: 50ms, nice: 5 }\n",
            "2s",
        ),
        "eevdf",
        "linux",
    );
    let a = simulate(&w, &SimOptions { trace: true }).unwrap();
    let b = simulate(&w, &SimOptions { trace: true }).unwrap();
    assert_eq!(a.trace, b.trace);
    assert!(a.migrations > 0, "load balancing moved tasks");
    let pinned = a.tasks.iter().position(|t| t.name == "pinned").unwrap();
    assert!(a
        .trace
        .unwrap()
        .iter()
        .all(|s| s.task != pinned || s.cpu == 2));
    let job = a.tasks.iter().find(|t| t.name == "job").unwrap();
    assert!(job.fair.as_ref().unwrap().finished_ns.is_some());
}

/// The largest base slice the format accepts, with the lightest and heaviest weights:
/// the lag clamp's bounds were once computed with a wrapping cast, crossed, and
/// `clamp` panicked (`eevdf: { base_slice: 18446744073s }`, now refused at validation;
/// 1000s is the tunables' limit).
#[test]
fn the_largest_base_slice_with_extreme_weights_does_not_panic() {
    let w = workload(
        &yaml(
            2,
            ", eevdf: { base_slice: 1000s }",
            "  - { name: light, nice: 19 }\n  - { name: heavy, nice: -20 }\n  - { name: hog, nice: 19 }\n",
            "200ms",
        ),
        "eevdf",
        "linux",
    );
    let r = run(&w);
    let cpu: u64 = r.tasks.iter().map(|t| t.cpu_time_ns).sum();
    assert_eq!(cpu, 2 * w.duration, "three hogs keep both CPUs busy");
    assert_eq!(calc_delta_fair(u64::MAX / 2, 15), u64::MAX);
}

/// Lengths (ns) of the stretches each task ran without a switch, in time order.
fn slices(r: &SimResult) -> Vec<(usize, u64)> {
    let mut segs = r.trace.clone().unwrap();
    segs.sort_by_key(|s| s.start);
    let mut out: Vec<(usize, u64)> = Vec::new();
    let mut last_end = None;
    for s in segs {
        match out.last_mut() {
            Some((t, len)) if *t == s.task && last_end == Some(s.start) => *len += s.end - s.start,
            _ => out.push((s.task, s.end - s.start)),
        }
        last_end = Some(s.end);
    }
    out
}

#[test]
fn hrtick_ends_every_slice_at_base_slice_instead_of_at_the_tick() {
    let yaml = |hrtick: bool| {
        format!(
            "platform: {{ cpus: 1, hz: 250 }}
duration: 200ms
scheduler: {{ eevdf: {{ base_slice: 1400us, hrtick: {hrtick} }} }}
tasks: [{{ name: a }}, {{ name: b }}, {{ name: c }}]
"
        )
    };
    let tick = run(&workload(&yaml(false), "eevdf", "linux"));
    let hr = run(&workload(&yaml(true), "eevdf", "linux"));
    let (t, h) = (slices(&tick), slices(&hr));
    // Without HRTICK a request used up after 1.4 ms runs on to the next 4 ms tick.
    assert!(t[1..t.len() - 1].iter().all(|&(_, l)| l == 4 * MS), "{t:?}");
    // With it, each pick runs exactly base_slice once the first round is over (a new
    // task's half request, PLACE_DEADLINE_INITIAL, can leave it eligible and picked
    // again at the first tick, which re-arms the timer for a full slice).
    assert!(
        h[3..h.len() - 1].iter().all(|&(_, l)| l == 1_400_000),
        "{h:?}"
    );
    assert!(
        h.len() > 2 * t.len(),
        "{} slices with hrtick, {} without",
        h.len(),
        t.len()
    );
    // Same shares either way: the three always-runnable tasks split the CPU evenly.
    for r in [&tick, &hr] {
        for task in &r.tasks {
            let share = task.fair.as_ref().unwrap().share;
            assert!((share - 1.0 / 3.0).abs() < 0.03, "{share}");
        }
    }
}
