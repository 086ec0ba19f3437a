//! What the kernel did during a traced run, counted the simulator's way: rebuilt from the
//! run's private tracefs instance ([`crate::tracefs`]) and the runner's own identity of
//! the run (t0, worker threads, the planned releases).
//!
//! Definitions (those of the simulator's metrics, restricted to the workload):
//! - **context switch**: per run CPU, a timeline of "which workload thread, or idle"; a
//!   switch is a change of that timeline (idle counts). Other work on the CPU (kernel
//!   threads, softirq threads, the runner's threads, the dispatcher, other processes)
//!   counts as idle when it runs after a workload thread blocked, and is transparent when
//!   it preempted one (the simulator, which has no other work, would have kept that
//!   thread running): A preempted → kworker → A is no switch, A preempted → kworker → B
//!   is one (A → B), A blocks → kworker → B are two (A → idle → B). Other work is
//!   reported on its own line ([`OtherWork`]). `task_switches` leave out the
//!   switches to and from idle, as the simulator's `task_switches_per_cpu_per_s` does.
//! - **preemption**: a change of that timeline away from a workload thread that was still
//!   runnable while one of its jobs was in progress. A job put aside for other work and
//!   resumed on the same CPU is counted apart, as an *interruption*.
//! - **migration**: a job resumes on another CPU than the one it last ran on.
//! - **jobs**: a periodic task's job k starts when its thread first runs at or after its
//!   release (and after job k − 1 finished) and finishes when the thread blocks again
//!   (`clock_nanosleep` until the next release). When the next release is already due the
//!   thread does not block; the worker then writes a `schedlab-job-end K` trace marker at
//!   completion, which ends the job instead.
//!
//! The tracer of some kernels loses `sched_switch` events (notably switches away from an
//! idle task): a switch whose `prev` is not the task believed running on that CPU
//! implies a missing one, inferred at the task's last wake-up (or the CPU's previous
//! event) and counted in [`TracedRun::inferred_switches`].

use crate::measure::JobRecord;
use schedlab_model::Ns;
use schedlab_sim::Segment;
use schedlab_trace::import::kernel::{events, Ev, Left};
use schedlab_trace::schedule::{
    JobRow, PrevState, Schedule, Switch, TaskInfo, Wakeup, PROCESS_PID,
};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// The marker a worker writes when a job completes with its next release already due.
pub const JOB_END_MARK: &str = "schedlab-job-end ";

/// Who the runner's threads were, for reading the trace.
#[derive(Debug, Clone)]
pub struct TraceContext {
    /// The run's t0 (CLOCK_MONOTONIC ns; the instance's trace clock is `mono`).
    pub t0: u64,
    /// Length of the measured span (ns after t0).
    pub duration: u64,
    /// Host CPU number of each run CPU.
    pub cpus: Vec<usize>,
    /// The workload's tasks, in workload order.
    pub tasks: Vec<TaskContext>,
    /// The runner's own threads (main thread, watchdog).
    pub runner_tids: Vec<u32>,
    /// The user-space dispatcher's manager thread, if any.
    pub dispatcher_tid: Option<u32>,
}

/// One task of the run.
#[derive(Debug, Clone)]
pub struct TaskContext {
    /// Task name.
    pub name: String,
    /// Its worker thread.
    pub tid: u32,
    /// Kernel `prio` (for the exported trace).
    pub prio: i32,
    /// Whether it releases periodic jobs (whose boundaries are rebuilt).
    pub periodic: bool,
    /// The runner's records: release, deadline, exec and the abort flag are used.
    pub jobs: Vec<JobRecord>,
}

/// One job as the trace shows it (ns after t0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TracedJob {
    /// Task, number, release, deadline, execution time, start (when its thread first ran
    /// for it; None: never in the span), finish (None: not completed in the span), CPU,
    /// abort and miss: the exporters' job row.
    #[serde(flatten)]
    pub row: JobRow,
    /// Preemptions (by other workload threads, see the module documentation).
    pub preemptions: u64,
    /// Times other work (kernel threads, the runner) took its CPU and gave it back.
    pub interruptions: u64,
    /// CPU changes while it was in progress.
    pub migrations: u64,
}

impl TracedJob {
    /// Completion − release.
    pub fn response(&self) -> Option<u64> {
        self.row.response()
    }

    /// Start − release.
    pub fn start_latency(&self) -> Option<u64> {
        self.row.start.map(|s| s.saturating_sub(self.row.release))
    }
}

/// One run CPU's figures.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TracedCpu {
    /// Run CPU index.
    pub cpu: usize,
    /// Context switches of the workload timeline (idle included).
    pub context_switches: u64,
    /// Of which to or from idle.
    pub idle_switches: u64,
    /// Time workload threads ran (ns).
    pub workload_ns: u64,
    /// Time other work ran (ns).
    pub other_ns: u64,
}

/// The counted metrics, with the simulator's names and definitions.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TracedMetrics {
    /// Periodic jobs released in the span.
    pub jobs_released: u64,
    /// Of which completed.
    pub jobs_completed: u64,
    /// Deadline misses.
    pub deadline_misses: u64,
    /// Context switches (workload timeline, idle included), all CPUs.
    pub context_switches: u64,
    /// Context switches / CPUs / seconds.
    pub context_switches_per_cpu_per_s: f64,
    /// Switches between workload threads / CPUs / seconds.
    pub task_switches_per_cpu_per_s: f64,
    /// Preemptions.
    pub preemptions: u64,
    /// Interruptions by other work.
    pub interruptions: u64,
    /// Migrations.
    pub migrations: u64,
    /// Median response time of completed jobs (ns).
    pub median_response_ns: Option<u64>,
    /// Mean response time of completed jobs (ns).
    pub mean_response_ns: Option<f64>,
    /// Median release-to-start latency (ns).
    pub median_start_latency_ns: Option<u64>,
    /// Largest release-to-start latency (ns).
    pub max_start_latency_ns: Option<u64>,
    /// Per CPU.
    pub per_cpu: Vec<TracedCpu>,
}

/// Work on the run's CPUs that is not the workload's, by kind.
#[derive(Debug, Clone, Default, Serialize)]
pub struct OtherWork {
    /// `kernel threads`, `softirq threads`, `runner`, `dispatcher` or `other processes`.
    pub kind: &'static str,
    /// Distinct threads.
    pub threads: usize,
    /// Times one of them got a run CPU.
    pub switches_in: u64,
    /// CPU time they used there (ns).
    pub cpu_ns: u64,
    /// The busiest of them: (comm, ns), at most three.
    pub busiest: Vec<(String, u64)>,
}

/// Interrupts on the run's CPUs, by kind.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Interrupts {
    /// `hardirq`, `softirq` or `local timer`.
    pub kind: &'static str,
    /// How many (entered in the span).
    pub count: u64,
    /// Time in them (ns).
    pub time_ns: u64,
    /// How many interrupted a workload thread.
    pub on_workload: u64,
}

/// How the jobs rebuilt from the trace agree with the runner's own records (its clock
/// reads right after the wake-up and right after the last unit of work).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Agreement {
    /// Periodic jobs the runner recorded.
    pub runner_jobs: u64,
    /// Of which the trace shows with the same started / completed status.
    pub same_status: u64,
    /// Of the others, those the run's end explains: the one side's start or finish
    /// lies within the run's own largest start or finish difference of the end, so
    /// the other side put it past the end (a TCG guest's clock reads and switches can be
    /// ms apart). At most one per task, its last job.
    pub cut_by_end: u64,
    /// Largest |trace start − runner start| over jobs both saw start (ns).
    pub max_start_diff_ns: u64,
    /// Median of the same (ns).
    pub median_start_diff_ns: u64,
    /// Largest |trace finish − runner finish| over jobs both saw complete (ns).
    pub max_finish_diff_ns: u64,
    /// Median of the same (ns).
    pub median_finish_diff_ns: u64,
}

/// A traced run, read.
#[derive(Debug, Clone)]
pub struct TracedRun {
    /// The jobs compared with the runner's records.
    pub agreement: Agreement,
    /// Periodic jobs, per task in release order.
    pub jobs: Vec<TracedJob>,
    /// The counted metrics.
    pub metrics: TracedMetrics,
    /// Other work on the run's CPUs.
    pub other: Vec<OtherWork>,
    /// Interrupts on the run's CPUs.
    pub interrupts: Vec<Interrupts>,
    /// Switches the tracer lost, inferred from breaks in each CPU's chain.
    pub inferred_switches: u64,
    /// Events the ring buffer dropped (0 when it kept everything).
    pub lost_events: u64,
    /// Events read.
    pub events: usize,
    /// The schedule, for the exporters (Perfetto, ftrace text, jobs CSV, Gantt, report):
    /// the workload's tasks, then one pseudo-task `other` holding all other work.
    pub schedule: Schedule,
}

impl TracedRun {
    /// The JSON object `schedlab run --json` carries as `trace`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "metrics": self.metrics,
            "other_work": self.other,
            "interrupts": self.interrupts,
            "inferred_switches": self.inferred_switches,
            "lost_events": self.lost_events,
            "events": self.events,
            "agreement": self.agreement,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Task(usize),
    Idle,
    Other(u32),
}

/// One stretch a worker thread ran.
#[derive(Debug, Clone, Copy)]
struct RunSeg {
    cpu: usize,
    start: i64,
    end: i64,
    /// Still runnable when it left.
    runnable: bool,
    /// Left for other work.
    to_other: bool,
}

#[derive(Debug, Clone, Default)]
struct CpuState {
    /// Pid running (None: not known yet).
    cur: Option<u32>,
    since: i64,
    /// The workload timeline: the last workload thread (None: idle).
    view: Option<usize>,
    /// Whether `view`'s thread was still runnable when it left the CPU.
    view_runnable: bool,
    /// Open interrupts per kind: entry time and whether a worker was interrupted.
    open: [Option<(i64, bool)>; 3],
    stats: TracedCpu,
}

#[derive(Debug, Default)]
struct OtherThread {
    comm: String,
    ns: u64,
    switches_in: u64,
}

struct Replay<'a> {
    ctx: &'a TraceContext,
    dur: i64,
    task_of: HashMap<u32, usize>,
    cpus: Vec<CpuState>,
    segs: Vec<Vec<RunSeg>>,
    /// Per task: instants the workload timeline left it while runnable.
    preempted_at: Vec<Vec<i64>>,
    marks: Vec<BTreeMap<u64, i64>>,
    last_wake: HashMap<u32, i64>,
    wakeups: Vec<(i64, usize)>,
    switches: Vec<Switch>,
    others: HashMap<u32, OtherThread>,
    irqs: [Interrupts; 3],
    inferred: u64,
}

/// Length of `[a, b)` inside `[0, dur)`.
fn inside(a: i64, b: i64, dur: i64) -> u64 {
    (b.min(dur) - a.max(0)).max(0) as u64
}

impl Replay<'_> {
    fn who(&self, pid: u32) -> Who {
        match (pid, self.task_of.get(&pid)) {
            (0, _) => Who::Idle,
            (_, Some(&i)) => Who::Task(i),
            _ => Who::Other(pid),
        }
    }

    fn in_span(&self, t: i64) -> bool {
        (0..self.dur).contains(&t)
    }

    /// The schedule's task index of a pid (the pseudo-task `other` is last).
    fn sched_task(&self, w: Who) -> Option<usize> {
        match w {
            Who::Task(i) => Some(i),
            Who::Idle => None,
            Who::Other(_) => Some(self.ctx.tasks.len()),
        }
    }

    /// `prev` leaves CPU `c` at `t` for `next`.
    fn switch(&mut self, c: usize, t: i64, prev: u32, next: u32, runnable: bool, comm: &str) {
        let (wp, wn) = (self.who(prev), self.who(next));
        let since = self.cpus[c].since;
        let ran = inside(since, t, self.dur);
        match wp {
            Who::Task(i) => {
                self.segs[i].push(RunSeg {
                    cpu: c,
                    start: since,
                    end: t,
                    runnable,
                    to_other: matches!(wn, Who::Other(_)),
                });
                self.cpus[c].stats.workload_ns += ran;
                if self.cpus[c].view == Some(i) {
                    self.cpus[c].view_runnable = runnable;
                }
            }
            Who::Other(p) => {
                self.others.entry(p).or_default().ns += ran;
                self.cpus[c].stats.other_ns += ran;
            }
            Who::Idle => {}
        }
        if let Who::Other(p) = wn {
            let counted = self.in_span(t);
            let o = self.others.entry(p).or_default();
            if o.comm.is_empty() {
                o.comm = comm.to_string();
            }
            o.switches_in += counted as u64;
        }
        let (sp, sn) = (self.sched_task(wp), self.sched_task(wn));
        if sp != sn && self.in_span(t) {
            self.switches.push(Switch {
                time: t as Ns,
                cpu: c,
                prev: sp,
                next: sn,
                prev_state: if runnable {
                    PrevState::Preempted
                } else {
                    PrevState::Sleeping
                },
            });
        }
        // The workload timeline: other work is idle after a worker blocked, and
        // transparent when it preempted one (the simulator would have kept it running).
        let view = match wn {
            Who::Task(i) => Some(i),
            Who::Idle => None,
            Who::Other(_) if matches!(wp, Who::Task(_)) && !runnable => None,
            Who::Other(_) => self.cpus[c].view,
        };
        let st = &mut self.cpus[c];
        if view != st.view {
            if (0..self.dur).contains(&t) {
                st.stats.context_switches += 1;
                if view.is_none() || st.view.is_none() {
                    st.stats.idle_switches += 1;
                }
            }
            if let (Some(old), true) = (st.view, st.view_runnable) {
                self.preempted_at[old].push(t);
            }
            st.view = view;
            st.view_runnable = false;
        }
        st.cur = Some(next);
        st.since = t;
    }

    fn irq(&mut self, c: usize, t: i64, event: &str) {
        let (kind, entry) = match event {
            "irq_handler_entry" => (0, true),
            "irq_handler_exit" => (0, false),
            "softirq_entry" => (1, true),
            "softirq_exit" => (1, false),
            "local_timer_entry" => (2, true),
            "local_timer_exit" => (2, false),
            _ => return,
        };
        let on_worker = self.cpus[c]
            .cur
            .is_some_and(|p| matches!(self.who(p), Who::Task(_)));
        let st = &mut self.cpus[c];
        if entry {
            st.open[kind] = Some((t, on_worker));
        } else if let Some((a, worker)) = st.open[kind].take() {
            if (0..self.dur).contains(&a) {
                let i = &mut self.irqs[kind];
                i.count += 1;
                i.time_ns += inside(a, t, self.dur);
                i.on_workload += worker as u64;
            }
        }
    }
}

/// Read the instance's trace text of a run (`lost`: events the buffer dropped).
pub fn analyse(text: &str, ctx: &TraceContext, lost: u64) -> Result<TracedRun, String> {
    let lines = events(text).map_err(|e| format!("the run's trace: {e}"))?;
    let run_cpu: HashMap<usize, usize> =
        ctx.cpus.iter().enumerate().map(|(i, &h)| (h, i)).collect();
    let n = ctx.tasks.len();
    let mut r = Replay {
        ctx,
        dur: ctx.duration as i64,
        task_of: ctx
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.tid, i))
            .collect(),
        cpus: (0..ctx.cpus.len())
            .map(|cpu| CpuState {
                stats: TracedCpu {
                    cpu,
                    ..TracedCpu::default()
                },
                ..CpuState::default()
            })
            .collect(),
        segs: vec![Vec::new(); n],
        preempted_at: vec![Vec::new(); n],
        marks: vec![BTreeMap::new(); n],
        last_wake: HashMap::new(),
        wakeups: Vec::new(),
        switches: Vec::new(),
        others: HashMap::new(),
        irqs: ["hardirq", "softirq", "local timer"].map(|kind| Interrupts {
            kind,
            ..Interrupts::default()
        }),
        inferred: 0,
    };
    let mut last_t = 0i64;
    for l in &lines {
        let Some(&c) = run_cpu.get(&l.cpu) else {
            continue;
        };
        let t = l.ts as i64 - ctx.t0 as i64;
        last_t = last_t.max(t);
        match &l.ev {
            Ev::Switch {
                prev,
                prev_comm,
                left,
                next,
                next_comm,
                ..
            } => {
                match r.cpus[c].cur {
                    None => r.cpus[c].since = t,
                    Some(k) if k != *prev => {
                        // A lost switch k -> prev: at prev's last wake-up if that is
                        // after the CPU's previous event, else right after that event.
                        r.inferred += 1;
                        let at = r
                            .last_wake
                            .get(prev)
                            .copied()
                            .filter(|&w| w >= r.cpus[c].since && w <= t)
                            .unwrap_or(r.cpus[c].since);
                        r.switch(c, at, k, *prev, false, prev_comm);
                    }
                    Some(_) => {}
                }
                r.switch(c, t, *prev, *next, *left == Left::Runnable, next_comm);
            }
            Ev::Wakeup { pid, .. } => {
                r.last_wake.insert(*pid, t);
                if let Who::Task(i) = r.who(*pid) {
                    if r.in_span(t) {
                        r.wakeups.push((t, i));
                    }
                }
            }
            Ev::Exit { .. } => {}
            Ev::Other { event, body } if event == "tracing_mark_write" => {
                if let (Some(k), Who::Task(i)) = (
                    body.strip_prefix(JOB_END_MARK)
                        .and_then(|k| k.trim().parse::<u64>().ok()),
                    r.who(l.pid),
                ) {
                    r.marks[i].insert(k, t);
                }
            }
            Ev::Other { event, .. } => r.irq(c, t, event),
        }
    }
    // Close what still runs at the end of the trace.
    let end = last_t.max(r.dur);
    for c in 0..r.cpus.len() {
        if let Some(p) = r.cpus[c].cur {
            match r.who(p) {
                Who::Task(i) => {
                    let since = r.cpus[c].since;
                    r.segs[i].push(RunSeg {
                        cpu: c,
                        start: since,
                        end,
                        runnable: true,
                        to_other: false,
                    });
                    r.cpus[c].stats.workload_ns += inside(since, end, r.dur);
                }
                Who::Other(o) => {
                    let ran = inside(r.cpus[c].since, end, r.dur);
                    r.others.entry(o).or_default().ns += ran;
                    r.cpus[c].stats.other_ns += ran;
                }
                Who::Idle => {}
            }
        }
    }
    let jobs: Vec<TracedJob> = (0..n)
        .filter(|&i| ctx.tasks[i].periodic)
        .flat_map(|i| rebuild_jobs(&r, i))
        .collect();
    let metrics = metrics(&r, &jobs);
    let agreement = agreement(ctx, &jobs);
    let other = other_work(&r);
    let schedule = schedule(&r, &jobs, !other.is_empty());
    Ok(TracedRun {
        agreement,
        jobs,
        metrics,
        other,
        interrupts: r.irqs.to_vec(),
        inferred_switches: r.inferred,
        lost_events: lost,
        events: lines.len(),
        schedule,
    })
}

/// A periodic task's jobs from its thread's run stretches (module documentation).
fn rebuild_jobs(r: &Replay, i: usize) -> Vec<TracedJob> {
    let mut segs = r.segs[i].clone();
    segs.sort_by_key(|s| s.start);
    let marks = &r.marks[i];
    let mut out = Vec::with_capacity(r.ctx.tasks[i].jobs.len());
    let mut prev_fin = i64::MIN;
    let mut si = 0;
    for (k, rec) in r.ctx.tasks[i].jobs.iter().enumerate() {
        let mut job = TracedJob {
            row: JobRow {
                task: i,
                job: k as u64,
                release: rec.release,
                deadline: rec.deadline,
                exec: rec.exec,
                start: None,
                finish: None,
                cpu: None,
                aborted: rec.aborted,
                missed: false,
            },
            preemptions: 0,
            interruptions: 0,
            migrations: 0,
        };
        let from = (rec.release as i64).max(prev_fin);
        while si < segs.len() && segs[si].end <= from {
            si += 1;
        }
        let start = segs.get(si).map(|s| s.start.max(from));
        if let Some(start) = start.filter(|&s| s < r.dur && prev_fin != i64::MAX) {
            job.row.start = Some(start as u64);
            let blocked = segs[si..].iter().find(|s| !s.runnable).map(|s| s.end);
            let marked = marks.get(&(k as u64)).copied().filter(|&m| m >= start);
            // Where the thread left the job (its sleep or its marker), and where the
            // job's work ended (earlier when the thread was starved in between).
            let left = match (blocked, marked) {
                (Some(b), Some(m)) => Some(b.min(m)),
                (b, m) => b.or(m),
            };
            let fin = left
                .map(|e| work_end(&segs[si..], start, e, rec.exec))
                .filter(|&f| f <= r.dur);
            let until = fin.unwrap_or(r.dur);
            let mut last_cpu = None;
            for s in segs[si..].iter().take_while(|s| s.start < until) {
                if last_cpu.is_some_and(|c| c != s.cpu) {
                    job.migrations += 1;
                }
                last_cpu = Some(s.cpu);
                if s.runnable && s.end < until && s.to_other {
                    job.interruptions += 1;
                }
            }
            job.row.cpu = last_cpu;
            job.preemptions = r.preempted_at[i]
                .iter()
                .filter(|&&p| p > start && p < until)
                .count() as u64;
            job.row.finish = fin.map(|f| f as u64);
            prev_fin = match fin {
                Some(_) => left.unwrap_or(i64::MAX),
                None => i64::MAX,
            };
        } else {
            prev_fin = i64::MAX;
        }
        job.row.missed = match job.row.finish {
            Some(f) => f > job.row.deadline,
            None => rec.aborted || job.row.deadline <= r.ctx.duration,
        };
        out.push(job);
    }
    out
}

fn agreement(ctx: &TraceContext, jobs: &[TracedJob]) -> Agreement {
    let mut a = Agreement::default();
    let (mut starts, mut finishes) = (Vec::new(), Vec::new());
    // Each job with the runner's record beside it, once.
    let pairs: Vec<_> = jobs
        .iter()
        .filter_map(|j| Some((&j.row, ctx.tasks[j.row.task].jobs.get(j.row.job as usize)?)))
        .collect();
    for &(j, rec) in &pairs {
        a.runner_jobs += 1;
        if let (Some(x), Some(y)) = (rec.start, j.start) {
            starts.push(x.abs_diff(y));
        }
        if let (Some(x), Some(y)) = (rec.finish, j.finish) {
            finishes.push(x.abs_diff(y));
        }
    }
    a.max_start_diff_ns = starts.iter().max().copied().unwrap_or(0);
    a.max_finish_diff_ns = finishes.iter().max().copied().unwrap_or(0);
    a.median_start_diff_ns = median(starts).unwrap_or(0);
    a.median_finish_diff_ns = median(finishes).unwrap_or(0);
    // A status that differs is the run's end at work when the side that saw the event
    // saw it within the run's own largest difference of the end.
    let near_end =
        |t: Option<u64>, slack: u64| t.is_some_and(|t| t.saturating_add(slack) >= ctx.duration);
    for &(j, rec) in &pairs {
        let start_alike = rec.start.is_some() == j.start.is_some();
        let finish_alike = rec.finish.is_some() == j.finish.is_some();
        if start_alike && finish_alike {
            a.same_status += 1;
        } else if (start_alike || near_end(rec.start.or(j.start), a.max_start_diff_ns))
            && (finish_alike || near_end(rec.finish.or(j.finish), a.max_finish_diff_ns))
        {
            a.cut_by_end += 1;
        }
    }
    a
}

/// Longest run between a job's last unit of work and its thread's `clock_nanosleep`
/// (recording the job, drawing the next one): a thread preempted in that tail has
/// finished its job at the preemption, not when it later runs the tail and blocks.
const TAIL_NS: i64 = 50_000;

/// When a job that ran in `segs` from `start` and whose thread blocked (or marked the
/// job's end) at `until` did its last unit of work: `until`, or the preemption before a
/// short tail once the job had run for its whole execution time `exec` (run time counted
/// from the switch-in includes the wake-up's return, so a job preempted with work left
/// is not taken for one preempted in its tail).
fn work_end(segs: &[RunSeg], start: i64, until: i64, exec: u64) -> i64 {
    let ran = |s: &RunSeg| s.end.min(until) - s.start.max(start);
    let n = segs.iter().take_while(|s| s.start < until).count();
    if n == 0 {
        return until;
    }
    let mut k = n - 1;
    let mut tail = 0;
    while k > 0 {
        tail += ran(&segs[k]);
        let before: i64 = segs[..k].iter().map(ran).sum();
        if tail > TAIL_NS || !segs[k - 1].runnable || before < exec as i64 {
            break;
        }
        k -= 1;
    }
    if k == n - 1 {
        until
    } else {
        segs[k].end
    }
}

/// The lower median (None when empty): an observed value, never a mean of two, so a
/// bimodal sample reports one of its modes. The trace's metrics, `compare --real` and
/// `reproduce fidelity` all use it.
pub fn median(mut v: Vec<u64>) -> Option<u64> {
    v.sort_unstable();
    v.get(v.len().saturating_sub(1) / 2).copied()
}

fn metrics(r: &Replay, jobs: &[TracedJob]) -> TracedMetrics {
    let per_cpu: Vec<TracedCpu> = r.cpus.iter().map(|c| c.stats.clone()).collect();
    let cs: u64 = per_cpu.iter().map(|c| c.context_switches).sum();
    let idle: u64 = per_cpu.iter().map(|c| c.idle_switches).sum();
    let scale = per_cpu.len().max(1) as f64 * (r.dur.max(1) as f64 / 1e9);
    let responses: Vec<u64> = jobs.iter().filter_map(TracedJob::response).collect();
    let latencies: Vec<u64> = jobs.iter().filter_map(TracedJob::start_latency).collect();
    TracedMetrics {
        jobs_released: jobs.len() as u64,
        jobs_completed: responses.len() as u64,
        deadline_misses: jobs.iter().filter(|j| j.row.missed).count() as u64,
        context_switches: cs,
        context_switches_per_cpu_per_s: cs as f64 / scale,
        task_switches_per_cpu_per_s: (cs - idle) as f64 / scale,
        preemptions: jobs.iter().map(|j| j.preemptions).sum(),
        interruptions: jobs.iter().map(|j| j.interruptions).sum(),
        migrations: jobs.iter().map(|j| j.migrations).sum(),
        mean_response_ns: (!responses.is_empty())
            .then(|| responses.iter().sum::<u64>() as f64 / responses.len() as f64),
        median_response_ns: median(responses),
        max_start_latency_ns: latencies.iter().max().copied(),
        median_start_latency_ns: median(latencies),
        per_cpu,
    }
}

/// Whether `pid` is a kernel thread (PF_KTHREAD in /proc/PID/stat; pid 2 is kthreadd).
fn is_kthread(pid: u32) -> bool {
    const PF_KTHREAD: u64 = 0x0020_0000;
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let rest = s.get(s.rfind(')')? + 2..)?;
            rest.split_whitespace().nth(6)?.parse::<u64>().ok()
        })
        .is_some_and(|flags| flags & PF_KTHREAD != 0)
}

fn other_work(r: &Replay) -> Vec<OtherWork> {
    let kind = |pid: u32, comm: &str| -> &'static str {
        if Some(pid) == r.ctx.dispatcher_tid {
            "dispatcher"
        } else if r.ctx.runner_tids.contains(&pid) || comm.starts_with("sl-") {
            "runner"
        } else if comm.starts_with("ksoftirqd/") {
            "softirq threads"
        } else if is_kthread(pid)
            || [
                "kworker/",
                "rcu",
                "migration/",
                "cpuhp/",
                "irq/",
                "kthreadd",
            ]
            .iter()
            .any(|p| comm.starts_with(p))
        {
            "kernel threads"
        } else {
            "other processes"
        }
    };
    let mut by: BTreeMap<&'static str, OtherWork> = BTreeMap::new();
    for (&pid, o) in &r.others {
        if o.ns == 0 && o.switches_in == 0 {
            continue;
        }
        let k = kind(pid, &o.comm);
        let e = by.entry(k).or_insert_with(|| OtherWork {
            kind: k,
            ..OtherWork::default()
        });
        e.threads += 1;
        e.switches_in += o.switches_in;
        e.cpu_ns += o.ns;
        e.busiest.push((o.comm.clone(), o.ns));
    }
    by.into_values()
        .map(|mut w| {
            w.busiest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            w.busiest.truncate(3);
            w
        })
        .collect()
}

fn schedule(r: &Replay, jobs: &[TracedJob], with_other: bool) -> Schedule {
    let ctx = r.ctx;
    let n = ctx.tasks.len();
    let mut tasks: Vec<TaskInfo> = ctx
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| TaskInfo {
            name: t.name.clone(),
            pid: PROCESS_PID + 1 + i as u32,
            prio: t.prio,
        })
        .collect();
    if with_other {
        tasks.push(TaskInfo {
            name: "other".into(),
            pid: PROCESS_PID + 1 + n as u32,
            prio: 120,
        });
    }
    let dur = r.dur;
    let clip = |a: i64, b: i64| (a.max(0) as Ns, b.min(dur).max(0) as Ns);
    // Each run stretch belongs to the job in progress when it started: per task, the
    // jobs' starts in order.
    let mut starts: Vec<Vec<(i64, u64)>> = vec![Vec::new(); n];
    for j in jobs.iter().map(|j| &j.row) {
        if let Some(st) = j.start {
            starts[j.task].push((st as i64, j.job));
        }
    }
    let job_at = |i: usize, t: i64| -> u64 {
        let v = &starts[i];
        v.partition_point(|&(st, _)| st <= t)
            .checked_sub(1)
            .map_or(0, |k| v[k].1)
    };
    let mut segments: Vec<Segment> = Vec::new();
    for (i, segs) in r.segs.iter().enumerate() {
        for s in segs.iter().filter(|s| s.end > 0 && s.start < dur) {
            let (start, end) = clip(s.start, s.end);
            if end > start {
                segments.push(Segment {
                    cpu: s.cpu,
                    task: i,
                    job: job_at(i, s.start.max(0)),
                    start,
                    end,
                });
            }
        }
    }
    let mut switches = r.switches.clone();
    switches.sort_by_key(|s| s.time);
    if with_other {
        // Other work's stretches, from the switches into and out of it.
        let mut open: Vec<Option<Ns>> = vec![None; ctx.cpus.len()];
        for s in &switches {
            if s.prev == Some(n) {
                let from = open[s.cpu].take().unwrap_or(0);
                if s.time > from {
                    segments.push(Segment {
                        cpu: s.cpu,
                        task: n,
                        job: 0,
                        start: from,
                        end: s.time,
                    });
                }
            }
            if s.next == Some(n) {
                open[s.cpu] = Some(s.time);
            }
        }
        for (cpu, o) in open.iter().enumerate() {
            if let Some(from) = *o {
                if (dur as Ns) > from {
                    segments.push(Segment {
                        cpu,
                        task: n,
                        job: 0,
                        start: from,
                        end: dur as Ns,
                    });
                }
            }
        }
    }
    segments.sort_by_key(|s| (s.start, s.cpu));
    // Wake-up targets: the CPU the task runs on next, else where it last ran.
    let wakeups = {
        let mut ins: Vec<Vec<(i64, usize)>> = vec![Vec::new(); n];
        for s in &switches {
            if let Some(k) = s.next.filter(|&k| k < n) {
                ins[k].push((s.time as i64, s.cpu));
            }
        }
        let mut seen = vec![false; n];
        r.wakeups
            .iter()
            .map(|&(t, i)| {
                let v = &ins[i];
                let k = v.partition_point(|&(x, _)| x < t);
                let target_cpu = v
                    .get(k)
                    .or_else(|| k.checked_sub(1).and_then(|p| v.get(p)))
                    .map_or(0, |&(_, c)| c);
                Wakeup {
                    time: t as Ns,
                    task: i,
                    target_cpu,
                    first: !std::mem::replace(&mut seen[i], true),
                }
            })
            .collect()
    };
    let rows = jobs.iter().map(|j| j.row).collect();
    Schedule {
        name: String::new(),
        policy: String::new(),
        cpus: ctx.cpus.len(),
        duration: ctx.duration,
        tasks,
        switches,
        wakeups,
        jobs: rows,
        segments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 100_000_000_000;

    /// A raw ftrace line at `us` µs after t0 on CPU `cpu`, recorded while `pid` runs.
    fn line(us: f64, cpu: usize, pid: u32, event: &str, body: &str) -> String {
        let ns = T0 + (us * 1000.0).round() as u64;
        format!(
            "  {}-{pid} [{cpu:03}] d..2. {}.{:06}: {event}: {body}\n",
            comm(pid),
            ns / 1_000_000_000,
            ns % 1_000_000_000 / 1000
        )
    }

    fn comm(pid: u32) -> String {
        match pid {
            0 => "swapper/0".into(),
            200 => "kworker/0:1".into(),
            p => format!("w{p}"),
        }
    }

    fn sw(us: f64, prev: u32, state: &str, next: u32) -> String {
        line(
            us,
            0,
            prev,
            "sched_switch",
            &format!(
                "prev_comm={} prev_pid={prev} prev_prio=120 prev_state={state} ==> next_comm={} next_pid={next} next_prio=120",
                comm(prev),
                comm(next)
            ),
        )
    }

    fn job(release_ms: u64, exec_ms: f64) -> JobRecord {
        JobRecord {
            release: release_ms * 1_000_000,
            deadline: release_ms * 1_000_000 + 10_000_000,
            exec: (exec_ms * 1e6) as u64,
            ..JobRecord::default()
        }
    }

    /// Task `a` (tid 101, periodic, `jobs`) and fair task `b` (tid 102) on one CPU.
    fn ctx(jobs: Vec<JobRecord>) -> TraceContext {
        let task = |name: &str, tid, periodic, jobs| TaskContext {
            name: name.into(),
            tid,
            prio: 120,
            periodic,
            jobs,
        };
        TraceContext {
            t0: T0,
            duration: 20_000_000,
            cpus: vec![0],
            tasks: vec![task("a", 101, true, jobs), task("b", 102, false, vec![])],
            runner_tids: vec![],
            dispatcher_tid: None,
        }
    }

    #[test]
    fn jobs_switches_preemptions_and_other_work_follow_the_definitions() {
        let text = [
            sw(5.0, 0, "R", 101),
            sw(1000.0, 101, "R+", 200), // a put aside for a kworker...
            sw(1100.0, 200, "S", 101),  // ... and given back: no switch
            sw(2100.0, 101, "S", 0),    // job 0 done
            sw(10_000.0, 0, "R", 101),
            sw(12_000.0, 101, "R+", 102), // a preempted by b
            sw(13_000.0, 102, "S", 101),
            sw(14_000.0, 101, "S", 0), // job 1 done (3 ms of work)
        ]
        .concat();
        let t = analyse(&text, &ctx(vec![job(0, 2.0), job(10, 3.0)]), 0).unwrap();
        let j = &t.jobs;
        assert_eq!(j.len(), 2);
        assert_eq!(
            (j[0].row.start, j[0].row.finish),
            (Some(5_000), Some(2_100_000))
        );
        assert_eq!((j[0].interruptions, j[0].preemptions), (1, 0));
        assert_eq!(
            (j[1].row.start, j[1].row.finish),
            (Some(10_000_000), Some(14_000_000))
        );
        assert_eq!((j[1].interruptions, j[1].preemptions), (0, 1));
        let m = &t.metrics;
        // idle→a, a→idle, idle→a, a→b, b→a, a→idle: the kworker is invisible.
        assert_eq!(m.context_switches, 6);
        assert_eq!(m.per_cpu[0].idle_switches, 4);
        assert!((m.task_switches_per_cpu_per_s - 100.0).abs() < 1e-9);
        assert_eq!(m.preemptions, 1);
        assert_eq!(m.median_response_ns, Some(2_100_000));
        assert_eq!(t.other.len(), 1);
        assert_eq!(t.other[0].kind, "kernel threads");
        assert_eq!((t.other[0].switches_in, t.other[0].cpu_ns), (1, 100_000));
        // The exported schedule shows the kworker as the pseudo-task `other`.
        assert_eq!(t.schedule.tasks.last().unwrap().name, "other");
        assert!(t.schedule.segments.iter().any(|s| s.task == 2));
    }

    #[test]
    fn a_preempted_tail_after_the_work_does_not_extend_the_job() {
        let text = [
            sw(0.0, 0, "R", 101),
            sw(2000.0, 101, "R+", 102), // work done (2 ms), preempted before sleeping
            sw(7000.0, 102, "S", 101),
            sw(7004.0, 101, "S", 0), // 4 µs of tail, then clock_nanosleep
        ]
        .concat();
        let t = analyse(&text, &ctx(vec![job(0, 2.0)]), 0).unwrap();
        assert_eq!(t.jobs[0].row.finish, Some(2_000_000));
        assert_eq!(t.jobs[0].preemptions, 0);
    }

    #[test]
    fn a_marker_ends_a_job_whose_thread_did_not_block() {
        let text = [
            sw(5.0, 0, "R", 101),
            line(10_500.0, 0, 101, "tracing_mark_write", "schedlab-job-end 0"),
            sw(12_000.0, 101, "S", 0),
        ]
        .concat();
        let t = analyse(&text, &ctx(vec![job(0, 10.5), job(10, 1.5)]), 0).unwrap();
        let j = &t.jobs;
        assert_eq!(
            (j[0].row.start, j[0].row.finish),
            (Some(5_000), Some(10_500_000))
        );
        assert_eq!(
            (j[1].row.start, j[1].row.finish),
            (Some(10_500_000), Some(12_000_000))
        );
        // One thread ran throughout: idle→a, then a→idle.
        assert_eq!(t.metrics.context_switches, 2);
    }

    #[test]
    fn a_thread_starved_between_its_work_and_its_sleep_ends_its_job_at_the_preemption() {
        // Job 0's 2 ms of work end at 2 ms, where b preempts; a runs again only after
        // job 1's release, marks job 0's end and goes straight on with job 1.
        let text = [
            sw(0.0, 0, "R", 101),
            sw(2000.0, 101, "R+", 102),
            sw(12_000.0, 102, "S", 101),
            line(12_010.0, 0, 101, "tracing_mark_write", "schedlab-job-end 0"),
            sw(13_010.0, 101, "S", 0),
        ]
        .concat();
        let t = analyse(&text, &ctx(vec![job(0, 2.0), job(10, 1.0)]), 0).unwrap();
        let j = &t.jobs;
        assert_eq!(j[0].row.finish, Some(2_000_000));
        assert_eq!(
            (j[1].row.start, j[1].row.finish),
            (Some(12_010_000), Some(13_010_000))
        );
    }

    #[test]
    fn a_lost_switch_is_inferred_and_counted() {
        // a's switch back to idle after job 0 is missing: idle appears as `prev`.
        let text = [
            sw(5.0, 0, "R", 101),
            sw(10_000.0, 0, "R", 101),
            sw(11_000.0, 101, "S", 0),
        ]
        .concat();
        let t = analyse(&text, &ctx(vec![job(0, 1.0), job(10, 1.0)]), 0).unwrap();
        assert_eq!(t.inferred_switches, 1);
        assert_eq!(t.jobs[1].row.start, Some(10_000_000));
        assert_eq!(t.jobs[1].row.finish, Some(11_000_000));
        assert_eq!(t.metrics.context_switches, 4);
    }

    #[test]
    fn a_job_never_run_in_the_span_is_unstarted_and_missed() {
        let text = sw(5.0, 0, "R", 200);
        let t = analyse(&text, &ctx(vec![job(0, 1.0)]), 0).unwrap();
        assert_eq!((t.jobs[0].row.start, t.jobs[0].row.finish), (None, None));
        assert!(t.jobs[0].row.missed);
        assert_eq!(t.metrics.deadline_misses, 1);
    }

    #[test]
    fn a_last_job_straddling_the_end_is_cut_by_the_end_not_a_disagreement() {
        // Job 0: the runner read its clock 0.5 ms after the trace's end of the work
        // (the run's largest finish difference). Job 1's work ended, by the runner's
        // clock, 0.3 or 0.8 ms before the 20 ms end; its thread blocked only at 20.2 ms,
        // past the end, so the trace has no finish for it.
        let text = [
            sw(5.0, 0, "R", 101),
            sw(2100.0, 101, "S", 0),
            sw(10_000.0, 0, "R", 101),
            sw(20_200.0, 101, "S", 0),
        ]
        .concat();
        let rec = |start_us: u64, finish_us: u64, release_ms| JobRecord {
            start: Some(start_us * 1_000),
            finish: Some(finish_us * 1_000),
            ..job(release_ms, 2.0)
        };
        let runner = |left_us: u64| ctx(vec![rec(5, 2_600, 0), rec(10_000, 20_000 - left_us, 10)]);
        // 0.3 ms before the end, within the 0.5 ms: cut by the end.
        let t = analyse(&text, &runner(300), 0).unwrap();
        assert_eq!(t.jobs[1].row.finish, None);
        let a = &t.agreement;
        assert_eq!((a.runner_jobs, a.same_status, a.cut_by_end), (2, 1, 1));
        assert_eq!(a.max_finish_diff_ns, 500_000);
        // 0.8 ms before the end, beyond the run's largest difference: a disagreement.
        let t = analyse(&text, &runner(800), 0).unwrap();
        let a = &t.agreement;
        assert_eq!((a.runner_jobs, a.same_status, a.cut_by_end), (2, 1, 0));
    }
}
