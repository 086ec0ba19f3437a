//! The class trait's placement seams: a class told its queue layout before `init`, and a
//! class that chooses the run queue of a waking task (`select_task_rq`).

use schedlab_model::{Overrides, Placement, Workload};
use schedlab_sim::class::{EnqueueReason, SchedClass, Topology};
use schedlab_sim::engine::Engine;
use schedlab_sim::policy::{cfs::Cfs, edf::Edf, rt::Rt};
use schedlab_sim::state::{ClassId, CpuId, Ctx, RqId, TaskId};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

/// EDF that sends every waking task to one CPU and records the topology it was told and
/// the job releases and completions it saw.
struct Steer {
    inner: Edf,
    to: CpuId,
    told: Rc<RefCell<Option<Topology>>>,
    jobs: Rc<RefCell<(u64, u64)>>,
}

impl SchedClass for Steer {
    fn name(&self) -> &'static str {
        "steer"
    }
    fn set_topology(&mut self, t: Topology) {
        *self.told.borrow_mut() = Some(t);
    }
    fn init(&mut self, nr_rqs: usize, nr_tasks: usize) {
        self.inner.init(nr_rqs, nr_tasks)
    }
    fn select_task_rq(&self, _ctx: &Ctx, _t: TaskId, _prev: CpuId) -> Option<CpuId> {
        Some(self.to)
    }
    fn job_released(&mut self, ctx: &Ctx, t: TaskId) {
        assert_eq!(ctx.task(t).class, ClassId::Dl);
        self.jobs.borrow_mut().0 += 1;
    }
    fn job_completed(&mut self, ctx: &Ctx, t: TaskId) {
        assert_eq!(
            ctx.task(t).job.map(|j| j.remaining),
            Some(0),
            "told before the job goes"
        );
        self.jobs.borrow_mut().1 += 1;
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
        self.inner.wakeup_preempt(ctx, curr, cand)
    }
}

fn engine(
    placement: Placement,
    to: CpuId,
    told: Rc<RefCell<Option<Topology>>>,
    jobs: Rc<RefCell<(u64, u64)>>,
) -> Engine {
    engine_on("cpus: 4, hz: 1000", placement, to, told, jobs)
}

/// [`engine`] on the platform `platform` (the inside of `platform: { .. }`).
fn engine_on(
    platform: &str,
    placement: Placement,
    to: CpuId,
    told: Rc<RefCell<Option<Topology>>>,
    jobs: Rc<RefCell<(u64, u64)>>,
) -> Engine {
    // Three tasks whose jobs never overlap (offsets 0, 3, 6 ms; 2 ms each, every 10 ms),
    // so no task ever waits and push/pull never moves one.
    let yaml = format!(
        "platform: {{ {platform} }}\nduration: 100ms\ntasks:\n\
      - {{ name: a, runtime: 2ms, period: 10ms }}\n\
      - {{ name: b, runtime: 2ms, period: 10ms, offset: 3ms }}\n\
      - {{ name: c, runtime: 2ms, period: 10ms, offset: 6ms }}\n"
    );
    let yaml = yaml.as_str();
    let ov = Overrides {
        placement: Some(placement),
        ..Overrides::default()
    };
    let w = Workload::parse_str(yaml, Path::new("hooks.yaml"), &ov).unwrap();
    let steer = Steer {
        inner: Edf::default(),
        to,
        told,
        jobs,
    };
    let classes: Vec<Box<dyn SchedClass>> = vec![
        Box::new(steer),
        Box::new(Rt::new(100)),
        Box::new(Cfs::new(w.scheduler.cfs)),
    ];
    Engine::new(&w, classes, &[ClassId::Dl; 3], &[0; 3], vec![None; 3], true).unwrap()
}

#[test]
fn select_task_rq_places_waking_tasks() {
    let told = Rc::new(RefCell::new(None));
    let jobs = Rc::new(RefCell::new((0, 0)));
    let r = engine(Placement::Linux, 2, told.clone(), jobs.clone()).run();
    assert_eq!(
        *jobs.borrow(),
        (r.jobs_released, r.jobs_completed),
        "job hooks"
    );
    assert_eq!(r.jobs_released, 30);
    let trace = r.trace.unwrap();
    assert!(!trace.is_empty());
    assert!(
        trace.iter().all(|s| s.cpu == 2),
        "every job runs where the class put it"
    );
    assert_eq!(r.deadline_misses, 0);
    let t = told.borrow().unwrap();
    assert_eq!(t.placement, Placement::Linux);
    assert_eq!(t.nr_cpus, 4);
    assert!(!t.global_queue);
}

#[test]
fn without_select_task_rq_the_engine_places_tasks() {
    // Under global placement the class has one queue: it is not asked, and tasks start
    // on the lowest free CPU.
    let told = Rc::new(RefCell::new(None));
    let r = engine(
        Placement::Global,
        2,
        told.clone(),
        Rc::new(RefCell::new((0, 0))),
    )
    .run();
    assert!(r.trace.unwrap().iter().any(|s| s.cpu != 2));
    assert!(told.borrow().unwrap().global_queue);
}

/// A class is told whether a running job progresses at rate 1 (ILLF then skips
/// re-evaluating running laxities): only on a platform that charges no overhead of any
/// kind.
#[test]
fn the_class_is_told_whether_the_platform_charges_overhead() {
    let told_on = |platform: &str| {
        let told = Rc::new(RefCell::new(None));
        let jobs = Rc::new(RefCell::new((0, 0)));
        engine_on(platform, Placement::Linux, 2, told.clone(), jobs);
        let t = told.borrow().unwrap();
        t.no_overhead
    };
    assert!(told_on("cpus: 4, hz: 1000"));
    for cost in [
        "context_switch: 2us",
        "migration: 5us",
        "preemption: 3us",
        "tick: 1us",
    ] {
        assert!(!told_on(&format!("cpus: 4, hz: 1000, {cost}")), "{cost}");
    }
}
