//! The schedule as the exporters see it: tasks with kernel-style pids and priorities,
//! every context switch, every wake-up and every job, built from one simulation
//! ([`Schedule::from_sim`]). Perfetto, ftrace text, the jobs CSV, the Gantt charts and the
//! HTML report are all drawn from this one structure, so they agree with each other and
//! with the counted metrics.

use schedlab_model::{Ns, SchedAttr, Workload};
use schedlab_sim::result::SimEvent;
use schedlab_sim::{Segment, SimResult};

/// The pid of the process that holds every task's thread; task `i` is thread
/// `PROCESS_PID + 1 + i`. Idle is pid 0 (`swapper/N`), as in the kernel.
pub const PROCESS_PID: u32 = 1000;

/// One task, with the names and numbers a kernel trace would show.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskInfo {
    /// Task name (the thread's comm).
    pub name: String,
    /// Thread id.
    pub pid: u32,
    /// Kernel `prio` as sched_switch prints it: -1 for SCHED_DEADLINE, 99 − rt_priority
    /// for SCHED_FIFO/RR, 120 + nice for fair tasks.
    pub prio: i32,
}

/// What the task switched out was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrevState {
    /// Still runnable: a preemption (`R+`).
    Preempted,
    /// Not runnable: its job completed, was aborted, or its budget ran out (`S`).
    Sleeping,
}

/// One context switch on one CPU (`None` = idle).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switch {
    /// Time (ns).
    pub time: Ns,
    /// CPU.
    pub cpu: usize,
    /// Task switched out.
    pub prev: Option<usize>,
    /// Task switched in.
    pub next: Option<usize>,
    /// State of `prev`.
    pub prev_state: PrevState,
}

/// A task made runnable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wakeup {
    /// Time (ns).
    pub time: Ns,
    /// Task.
    pub task: usize,
    /// CPU it runs on next (else the CPU it last ran on, else 0).
    pub target_cpu: usize,
    /// First wake-up of the task (`sched_wakeup_new`).
    pub first: bool,
}

/// One job, from release to completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct JobRow {
    /// Task.
    pub task: usize,
    /// Job number within the task (0-based).
    pub job: u64,
    /// Release time.
    pub release: Ns,
    /// Absolute deadline (`Ns::MAX` for a job without one: a burst of a fair task).
    pub deadline: Ns,
    /// Execution time drawn for the job.
    pub exec: Ns,
    /// When it first ran.
    pub start: Option<Ns>,
    /// When it completed.
    pub finish: Option<Ns>,
    /// CPU it completed on (else the one it last ran on).
    pub cpu: Option<usize>,
    /// Dropped at its deadline (`on_miss: abort`).
    pub aborted: bool,
    /// Missed its deadline (as the results count it).
    pub missed: bool,
}

impl JobRow {
    /// Whether the job has a deadline (fair-task bursts have none).
    pub fn has_deadline(&self) -> bool {
        self.deadline != Ns::MAX
    }

    /// Completion − release, for completed jobs.
    pub fn response(&self) -> Option<Ns> {
        self.finish.map(|f| f - self.release)
    }
}

/// A simulated (or measured) schedule, ready to export.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// Workload name.
    pub name: String,
    /// Policy that produced it.
    pub policy: String,
    /// Number of CPUs.
    pub cpus: usize,
    /// Length of the schedule (ns).
    pub duration: Ns,
    /// Tasks, in workload order.
    pub tasks: Vec<TaskInfo>,
    /// Context switches in time order (within an instant, in the engine's order).
    pub switches: Vec<Switch>,
    /// Wake-ups in time order.
    pub wakeups: Vec<Wakeup>,
    /// Jobs, per task in release order, tasks in workload order.
    pub jobs: Vec<JobRow>,
    /// Run segments (cpu, task, job, start, end), by start then CPU.
    pub segments: Vec<Segment>,
}

/// Kernel `prio` of each task under the workload's policy.
pub fn kernel_prios(w: &Workload) -> Vec<i32> {
    schedlab_model::sched_attrs(w)
        .into_iter()
        .map(SchedAttr::kernel_prio)
        .collect()
}

impl Schedule {
    /// Build the schedule of a result simulated with `SimOptions { trace: true }`.
    /// Returns `None` when the result carries no trace.
    pub fn from_sim(w: &Workload, r: &SimResult) -> Option<Schedule> {
        let log = r.log.as_ref()?;
        let segments = r.trace.clone()?;
        let prios = kernel_prios(w);
        let tasks: Vec<TaskInfo> = w
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| TaskInfo {
                name: t.name.clone(),
                pid: PROCESS_PID + 1 + i as u32,
                prio: prios[i],
            })
            .collect();
        let ntask = tasks.len();

        let mut switches = Vec::new();
        let mut raw_wakeups = Vec::new();
        // Per task: job index in `jobs_by_task` by job number (jobs are numbered 0..).
        let mut jobs_by_task: Vec<Vec<JobRow>> = vec![Vec::new(); ntask];
        for ev in log {
            match *ev {
                SimEvent::Release {
                    time,
                    task,
                    job,
                    deadline,
                    exec,
                } => {
                    debug_assert_eq!(jobs_by_task[task].len() as u64, job);
                    jobs_by_task[task].push(JobRow {
                        task,
                        job,
                        release: time,
                        deadline,
                        exec,
                        start: None,
                        finish: None,
                        cpu: None,
                        aborted: false,
                        missed: false,
                    });
                }
                SimEvent::Wakeup { time, task } => raw_wakeups.push((time, task)),
                SimEvent::Switch {
                    time,
                    cpu,
                    prev,
                    next,
                    prev_runnable,
                } => switches.push(Switch {
                    time,
                    cpu,
                    prev,
                    next,
                    prev_state: if prev_runnable {
                        PrevState::Preempted
                    } else {
                        PrevState::Sleeping
                    },
                }),
                SimEvent::Complete {
                    time,
                    task,
                    job,
                    cpu,
                } => {
                    if let Some(j) = jobs_by_task[task].get_mut(job as usize) {
                        j.finish = Some(time);
                        j.cpu = Some(cpu);
                    }
                }
                SimEvent::Abort { task, job, .. } => {
                    if let Some(j) = jobs_by_task[task].get_mut(job as usize) {
                        j.aborted = true;
                    }
                }
            }
        }
        for s in &segments {
            if let Some(j) = jobs_by_task[s.task].get_mut(s.job as usize) {
                j.start = Some(j.start.map_or(s.start, |x| x.min(s.start)));
                if j.finish.is_none() {
                    j.cpu = Some(s.cpu);
                }
            }
        }
        let end = r.duration_ns;
        for j in jobs_by_task.iter_mut().flatten() {
            j.missed = match j.finish {
                Some(f) => f > j.deadline,
                None => j.aborted || j.deadline <= end,
            };
        }

        // Wake-up targets: the CPU the task runs on next, else where it last ran.
        let mut ins: Vec<Vec<(Ns, usize)>> = vec![Vec::new(); ntask];
        for s in &switches {
            if let Some(n) = s.next {
                ins[n].push((s.time, s.cpu));
            }
        }
        let mut seen = vec![false; ntask];
        let wakeups = raw_wakeups
            .into_iter()
            .map(|(time, task)| {
                let v = &ins[task];
                let k = v.partition_point(|&(t, _)| t < time);
                let target_cpu = v
                    .get(k)
                    .or_else(|| k.checked_sub(1).and_then(|p| v.get(p)))
                    .map_or(0, |&(_, c)| c);
                let first = !std::mem::replace(&mut seen[task], true);
                Wakeup {
                    time,
                    task,
                    target_cpu,
                    first,
                }
            })
            .collect();

        Some(Schedule {
            name: r.workload.clone(),
            policy: r.policy.clone(),
            cpus: r.cpus,
            duration: end,
            tasks,
            switches,
            wakeups,
            jobs: jobs_by_task.into_iter().flatten().collect(),
            segments,
        })
    }

    /// Per-CPU busy time (ns) rebuilt from the switches: what the exporters show.
    pub fn busy_per_cpu(&self) -> Vec<Ns> {
        let mut busy = vec![0; self.cpus];
        let mut curr: Vec<Option<(usize, Ns)>> = vec![None; self.cpus];
        for s in &self.switches {
            if let Some((_, since)) = curr[s.cpu] {
                busy[s.cpu] += s.time - since;
            }
            curr[s.cpu] = s.next.map(|n| (n, s.time));
        }
        for (cpu, c) in curr.iter().enumerate() {
            if let Some((_, since)) = c {
                busy[cpu] += self.duration - since;
            }
        }
        busy
    }
}

/// A kernel-style event of the schedule, as ftrace would record it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelEvent {
    /// `sched_wakeup` (`sched_wakeup_new` when `first`), fired on the target CPU while
    /// `current` runs there.
    Wakeup {
        /// The wake-up.
        wakeup: Wakeup,
        /// Task running on the target CPU then (None = idle).
        current: Option<usize>,
    },
    /// `sched_switch`.
    Switch(Switch),
}

impl KernelEvent {
    /// Time (ns).
    pub fn time(&self) -> Ns {
        match self {
            KernelEvent::Wakeup { wakeup, .. } => wakeup.time,
            KernelEvent::Switch(s) => s.time,
        }
    }

    /// CPU the event is recorded on.
    pub fn cpu(&self) -> usize {
        match self {
            KernelEvent::Wakeup { wakeup, .. } => wakeup.target_cpu,
            KernelEvent::Switch(s) => s.cpu,
        }
    }
}

impl Schedule {
    /// Wake-ups and switches merged in time order; at one instant the wake-ups come
    /// before the switches they cause (as in the engine), switches keep the engine's order.
    pub fn kernel_events(&self) -> Vec<KernelEvent> {
        let mut out = Vec::with_capacity(self.wakeups.len() + self.switches.len());
        let mut running: Vec<Option<usize>> = vec![None; self.cpus];
        let mut sw = self.switches.iter().peekable();
        for w in &self.wakeups {
            while let Some(x) = sw.next_if(|x| x.time < w.time) {
                running[x.cpu] = x.next;
                out.push(KernelEvent::Switch(*x));
            }
            out.push(KernelEvent::Wakeup {
                wakeup: *w,
                current: running[w.target_cpu],
            });
        }
        out.extend(sw.map(|x| KernelEvent::Switch(*x)));
        out
    }
}
