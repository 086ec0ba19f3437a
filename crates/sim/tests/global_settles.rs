//! A global decision must settle: each preemption step raises the priority on one CPU, so
//! the loop ends well before its safety bound. A class whose wake-up test and pick
//! disagree makes each step undo the last; the invariant checker reports it instead of
//! letting the bound decide the schedule.

use schedlab_model::{Overrides, Placement, Workload};
use schedlab_sim::class::{EnqueueReason, SchedClass};
use schedlab_sim::engine::Engine;
use schedlab_sim::policy::{cfs::Cfs, edf::Edf, rt::Rt};
use schedlab_sim::state::{ClassId, CpuId, Ctx, RqId, TaskId};
use schedlab_sim::SimError;
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
