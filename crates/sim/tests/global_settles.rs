//! A global decision must settle: each preemption step raises the priority on one CPU, so
//! the loop ends well before its safety bound. A class whose wake-up test and pick
//! disagree makes each step undo the last; the invariant checker reports it instead of
//! letting the bound decide the schedule.

use schedlab_model::{Overrides, Placement, Policy, Workload};
use schedlab_sim::class::{EnqueueReason, SchedClass};
use schedlab_sim::engine::Engine;
use schedlab_sim::policy::{cfs::Cfs, edf::Edf, rt::Rt};
use schedlab_sim::state::{ClassId, CpuId, Ctx, RqId, TaskId};
use schedlab_sim::{simulate_checked, SimError, SimOptions};
use std::path::Path;

/// EDF whose wake-up test (with `always`) says every waiting task beats the running one:
/// a test its pick does not agree with, so with equal deadlines each step swaps back.
struct Restless {
    inner: Edf,
    always: bool,
}

impl SchedClass for Restless {
    fn name(&self) -> &'static str {
        "restless"
    }
    fn init(&mut self, nr_rqs: usize, nr_tasks: usize) {
        self.inner.init(nr_rqs, nr_tasks)
    }
    fn enqueue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId, why: EnqueueReason) {
        self.inner.enqueue_task(ctx, rq, t, why)
    }
    fn dequeue_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.inner.dequeue_task(ctx, rq, t)
    }
    fn peek_next_task(&self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.inner.peek_next_task(ctx, rq, cpu)
    }
    fn pick_next_task(&mut self, ctx: &Ctx, rq: RqId, cpu: CpuId) -> Option<TaskId> {
        self.inner.pick_next_task(ctx, rq, cpu)
    }
    fn put_prev_task(&mut self, ctx: &Ctx, rq: RqId, t: TaskId) {
        self.inner.put_prev_task(ctx, rq, t)
    }
    fn wakeup_preempt(&self, ctx: &Ctx, curr: TaskId, cand: TaskId) -> bool {
        self.always || self.inner.wakeup_preempt(ctx, curr, cand)
    }
}

/// Two tasks with the same deadlines on one CPU under global placement: whichever runs,
/// the other waits with an equal deadline.
fn engine(always: bool) -> Engine {
    let yaml = "platform: { cpus: 1, hz: 1000 }\nduration: 20ms\ntasks:\n\
      - { name: a, runtime: 3ms, period: 10ms }\n\
      - { name: b, runtime: 3ms, period: 10ms }\n";
    let ov = Overrides {
        placement: Some(Placement::Global),
        ..Overrides::default()
    };
    let w = Workload::parse_str(yaml, Path::new("settle.yaml"), &ov).unwrap();
    let classes: Vec<Box<dyn SchedClass>> = vec![
        Box::new(Restless {
            inner: Edf::default(),
            always,
        }),
        Box::new(Rt::new(100)),
        Box::new(Cfs::new(w.scheduler.cfs)),
    ];
    Engine::new(&w, classes, &[ClassId::Dl; 2], &[0; 2], vec![None; 2], true).unwrap()
}

#[test]
fn a_decision_that_never_settles_is_an_invariant_violation() {
    match engine(true).run_checked() {
        Err(SimError::Invariant(e)) => {
            assert!(e.contains("did not settle in 12 steps"), "{e}");
            assert!(e.starts_with("at 0 ns"), "{e}");
        }
        Err(e) => panic!("another error: {e}"),
        Ok(r) => panic!("the checker let it pass ({} jobs)", r.jobs_completed),
    }
}

#[test]
fn a_consistent_class_settles_and_runs_to_the_end() {
    let r = engine(false)
        .run_checked()
        .expect("EDF's test and pick agree");
    assert_eq!((r.jobs_released, r.jobs_completed), (4, 4));
    assert_eq!(r.deadline_misses, 0);
}

/// 26 tasks of the `scale-10k` bench set on 13 CPUs (found by shrinking it). Under ILLF with
/// global placement the decision at 940 µs handed CPUs round in a cycle (Algorithm 2 is
/// not a priority order: a task put back displaces another, and so on) and reached the
/// loop's bound of 1,404 steps, which then decided who ran. Each CPU now decides once per
/// instant (`SchedClass::preempts_in_order`), and the checker passes the whole run.
const ILLF_CYCLE: &str = "platform: { cpus: 13, hz: 1000 }\nduration: 1ms\nseed: 42\ntasks:\n\
  - { name: t1, runtime: 39us, period: 11ms }\n\
  - { name: t2, runtime: 14740us, period: 30ms }\n\
  - { name: t3, runtime: 212us, period: 17ms }\n\
  - { name: t4, runtime: 613us, period: 13ms }\n\
  - { name: t5, runtime: 316us, period: 14ms }\n\
  - { name: t6, runtime: 881us, period: 11ms }\n\
  - { name: t7, runtime: 981us, period: 15ms }\n\
  - { name: t8, runtime: 132us, period: 11ms }\n\
  - { name: t9, runtime: 1225us, period: 18ms }\n\
  - { name: t10, runtime: 709us, period: 17ms }\n\
  - { name: t11, runtime: 961us, period: 14ms }\n\
  - { name: t12, runtime: 897us, period: 14ms }\n\
  - { name: t13, runtime: 18507us, period: 32ms }\n\
  - { name: t14, runtime: 327us, period: 15ms }\n\
  - { name: t15, runtime: 146us, period: 13ms }\n\
  - { name: t16, runtime: 1631us, period: 12ms }\n\
  - { name: t17, runtime: 3427us, period: 11ms }\n\
  - { name: t18, runtime: 564us, period: 15ms }\n\
  - { name: t19, runtime: 268us, period: 11ms }\n\
  - { name: t20, runtime: 6407us, period: 18ms }\n\
  - { name: t21, runtime: 860us, period: 10ms }\n\
  - { name: t22, runtime: 3321us, period: 11ms }\n\
  - { name: t23, runtime: 2177us, period: 14ms }\n\
  - { name: t24, runtime: 17us, period: 14ms }\n\
  - { name: t25, runtime: 29us, period: 13ms }\n\
  - { name: t26, runtime: 2675us, period: 12ms }\n";

#[test]
fn illf_under_global_placement_decides_each_cpu_once_per_instant() {
    let ov = Overrides {
        policy: Some(Policy::Illf),
        placement: Some(Placement::Global),
        ..Overrides::default()
    };
    let w = Workload::parse_str(ILLF_CYCLE, Path::new("illf-cycle.yaml"), &ov).unwrap();
    let r = simulate_checked(&w, &SimOptions { trace: true }).expect("every decision settles");
    assert_eq!(r.deadline_misses, 0);
    assert_eq!(r.jobs_released, 26);
}
