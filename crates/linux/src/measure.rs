//! Measurements with the simulator's definitions (DESIGN.md "Definitions"), and the
//! result object: the same [`SimResult`] the simulator prints, plus runner keys.
//!
//! Sources:
//! - **context switches**: the kernel's own per-CPU count of task switches (prev ≠ next,
//!   idle included: `nr_switches`' meaning) read with a `perf_event_open` software counter
//!   `PERF_COUNT_SW_CONTEXT_SWITCHES` on every CPU (`switch_source: "perf"`, what `perf
//!   stat -a -e cs` reports). Where perf is not allowed, the `ctxt` line of /proc/stat
//!   (same count, summed over CPUs; `switch_source: "proc_stat"`, per-CPU split even).
//!   Both are system-wide: kernel threads and the runner's own threads are included, as
//!   they are on a real machine. Per worker thread, voluntary + involuntary switches
//!   (`getrusage(RUSAGE_THREAD)`, the counters of /proc/self/task/TID/status) are reported
//!   as `thread_switches`.
//! - **preemptions**: involuntary switches of a worker while one of its jobs ran.
//! - **migrations**: `sched_getcpu()` sampled throughout every job (between two reads of
//!   the thread CPU clock, i.e. every few µs): a job that resumes on another CPU counts
//!   one migration per CPU change.
//! - **deadline misses, response times**: CLOCK_MONOTONIC release/start/finish of every job.

use schedlab_model::Workload;
use schedlab_sim::result::{FairTaskStats, FairnessStats, LatencyStats};
use schedlab_sim::{CpuResult, SimResult, TaskResult};
use serde::Serialize;
use serde_json::{json, Value};

/// `struct perf_event_attr` up to `PERF_ATTR_SIZE_VER0` (64 bytes). The libc crate does
/// not define it; the layout is include/uapi/linux/perf_event.h's first version, which
/// every kernel accepts (`size` tells it which version we pass).
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}
/// PERF_TYPE_SOFTWARE
const PERF_TYPE_SOFTWARE: u32 = 1;
/// PERF_COUNT_SW_CONTEXT_SWITCHES
const PERF_COUNT_SW_CONTEXT_SWITCHES: u64 = 3;

/// Counts context switches over a window.
pub enum SwitchCounter {
    /// One perf fd per CPU.
    Perf(Vec<libc::c_int>),
    /// /proc/stat `ctxt` at the start.
    ProcStat(u64),
}

fn proc_stat_ctxt() -> u64 {
    std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("ctxt "))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(0)
}

impl SwitchCounter {
    /// Start counting on CPUs `0..cpus` (perf if allowed, else /proc/stat).
    pub fn start(cpus: usize) -> SwitchCounter {
        let mut fds = Vec::with_capacity(cpus);
        for cpu in 0..cpus {
            let attr = PerfEventAttr {
                type_: PERF_TYPE_SOFTWARE,
                size: std::mem::size_of::<PerfEventAttr>() as u32,
                config: PERF_COUNT_SW_CONTEXT_SWITCHES,
                ..PerfEventAttr::default()
            };
            // SAFETY: attr is a valid VER0 perf_event_attr; pid -1 + cpu = every task on
            // that CPU; no group, no flags.
            let fd = unsafe {
                libc::syscall(
                    libc::SYS_perf_event_open,
                    &attr as *const PerfEventAttr,
                    -1 as libc::pid_t,
                    cpu as libc::c_int,
                    -1 as libc::c_int,
                    0 as libc::c_ulong,
                )
            };
            if fd < 0 {
                for f in fds {
                    // SAFETY: closing fds we opened.
                    unsafe { libc::close(f) };
                }
                return SwitchCounter::ProcStat(proc_stat_ctxt());
            }
            fds.push(fd as libc::c_int);
        }
        SwitchCounter::Perf(fds)
    }

    /// Stop: (source, per-CPU counts or None when only the total is known, total).
    pub fn finish(self) -> (&'static str, Option<Vec<u64>>, u64) {
        match self {
            SwitchCounter::Perf(fds) => {
                let counts: Vec<u64> = fds
                    .iter()
                    .map(|&fd| {
                        let mut v = 0u64;
                        // SAFETY: reading 8 bytes (the counter) into v, then closing our fd.
                        unsafe {
                            libc::read(fd, &mut v as *mut u64 as *mut libc::c_void, 8);
                            libc::close(fd);
                        }
                        v
                    })
                    .collect();
                let total = counts.iter().sum();
                ("perf", Some(counts), total)
            }
            SwitchCounter::ProcStat(start) => {
                ("proc_stat", None, proc_stat_ctxt().saturating_sub(start))
            }
        }
    }
}

/// The running kernel's configuration text, from /boot/config-RELEASE or
/// /proc/config.gz; None when neither is there.
pub fn kernel_config(release: &str) -> Option<String> {
    std::fs::read_to_string(format!("/boot/config-{release}"))
        .ok()
        .or_else(|| {
            let out = std::process::Command::new("gzip")
                .args(["-dc", "/proc/config.gz"])
                .output()
                .ok()?;
            String::from_utf8(out.stdout).ok().filter(|s| !s.is_empty())
        })
}

/// CONFIG_HZ of the running kernel, from /boot/config-RELEASE or /proc/config.gz.
pub fn config_hz(release: &str) -> Option<u32> {
    let text = kernel_config(release)?;
    text.lines()
        .find_map(|l| l.strip_prefix("CONFIG_HZ="))
        .and_then(|v| v.trim().parse().ok())
}

/// One job as it happened (CLOCK_MONOTONIC ns, relative to the run's t0).
#[derive(Debug, Clone, Copy, Default)]
pub struct JobRecord {
    /// Release.
    pub release: u64,
    /// Absolute deadline (u64::MAX for tasks without one).
    pub deadline: u64,
    /// Execution time asked of it (0 where unknown: a fair task's burst).
    pub exec: u64,
    /// When the job got the CPU (None: never started).
    pub start: Option<u64>,
    /// When it completed (None: not completed).
    pub finish: Option<u64>,
    /// Aborted at its deadline (`on_miss: abort`).
    pub aborted: bool,
    /// Involuntary switches while it ran.
    pub preemptions: u64,
    /// CPU changes while it ran.
    pub migrations: u64,
}

/// Everything one worker thread observed.
#[derive(Debug, Clone, Default)]
pub struct WorkerReport {
    /// Its jobs, in release order.
    pub jobs: Vec<JobRecord>,
    /// Thread CPU time consumed in jobs.
    pub cpu_ns: u64,
    /// Per CPU, CPU time consumed there.
    pub per_cpu_ns: Vec<u64>,
    /// Voluntary + involuntary switches of the thread over the run.
    pub thread_switches: u64,
    /// Whether the thread put back SCHED_OTHER and its original affinity before exiting.
    pub restored: bool,
    /// What could not be put back, and the kernel's answer, when `restored` is false.
    pub restore_error: Option<String>,
    /// The CPU it was pinned to (single-CPU affinity), if any.
    pub pinned: Option<usize>,
    /// When a fair task with `work:` finished it (ns after t0).
    pub finished: Option<u64>,
}

/// The user-space dispatcher's own figures.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DispatcherStats {
    /// Decisions taken (ticks and events).
    pub decisions: u64,
    /// Median cost of a decision (ns), the policy's choice only.
    pub median_ns: u64,
    /// 99th percentile (ns).
    pub p99_ns: u64,
    /// Largest (ns).
    pub max_ns: u64,
    /// Median cost of enforcing a decision that changed something (sched_setattr and
    /// sched_setaffinity calls), ns.
    pub enforce_median_ns: u64,
    /// 99th percentile of the enforcement cost (ns).
    pub enforce_p99_ns: u64,
    /// Decisions that changed which jobs run where.
    pub changes: u64,
    /// Times a decision took the CPU from a job that was still ready (the policy's own
    /// preemptions; the `preemptions` total also counts every tick of the manager).
    pub displaced: u64,
    /// Tick period (ns; 0 when the policy decides at releases and completions only).
    pub tick_ns: u64,
}

/// The runner's result: the simulator's object plus what only a real run has.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The DESIGN.md result object, measured.
    pub result: SimResult,
    /// Per task (workload order): the SCHED_DEADLINE budget used, if any.
    pub budget_ns: Vec<Option<u64>>,
    /// Per task: the kernel policy given (e.g. `SCHED_DEADLINE`, `SCHED_FIFO 98`).
    pub kernel_policy: Vec<String>,
    /// Margin on SCHED_DEADLINE budgets.
    pub margin: f64,
    /// Where `context_switches` comes from (`perf` or `proc_stat`).
    pub switch_source: &'static str,
    /// Σ voluntary + involuntary switches of the worker threads.
    pub thread_switches: u64,
    /// Kernel release.
    pub kernel: String,
    /// CONFIG_HZ when known.
    pub hz: Option<u32>,
    /// The run was cut short (signal or watchdog); the numbers cover the part that ran.
    pub partial: bool,
    /// What cut it short: `SIGINT`, `SIGTERM`, `watchdog`, `RLIMIT_RTTIME`.
    pub stopped_by: Option<String>,
    /// Every thread's policy and affinity were put back.
    pub restored: bool,
    /// How jobs burn CPU (`thread-cpu` or `loop`).
    pub job_mode: &'static str,
    /// SCHED_DEADLINE bandwidth asked for and available, when DL was used.
    pub dl_bandwidth: Option<(f64, f64)>,
    /// Dispatcher figures, under the dispatcher.
    pub dispatcher: Option<DispatcherStats>,
    /// `cpu.shares` of the fair workers' own CPU group, when they had one.
    pub fair_group: Option<u64>,
    /// The sched_ext scheduler's report, under `--backend scx`.
    pub scx: Option<crate::scx::ScxReport>,
    /// The PM QoS CPU latency request held for the run (µs), if any.
    pub dma_latency_us: Option<u32>,
    /// Warnings (e.g. memory not locked).
    pub warnings: Vec<String>,
    /// The run's schedule from its kernel trace (`RunConfig::trace`), counted the
    /// simulator's way.
    pub trace: Option<crate::traced::TracedRun>,
    /// Why a trace was asked for and not recorded (the counters above remain).
    pub trace_unavailable: Option<String>,
    /// Per task (workload order): its jobs as the worker recorded them.
    pub jobs: Vec<Vec<JobRecord>>,
}

impl RunResult {
    /// The JSON object: every SimResult key, `budget_ns` and `kernel_policy` in each task,
    /// and the runner keys at the top level.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(&self.result).unwrap_or(Value::Null);
        if let Some(tasks) = v.get_mut("tasks").and_then(Value::as_array_mut) {
            for (i, t) in tasks.iter_mut().enumerate() {
                if let Some(o) = t.as_object_mut() {
                    o.insert(
                        "budget_ns".into(),
                        json!(self.budget_ns.get(i).copied().flatten()),
                    );
                    o.insert(
                        "kernel_policy".into(),
                        json!(self.kernel_policy.get(i).cloned().unwrap_or_default()),
                    );
                }
            }
        }
        if let Some(o) = v.as_object_mut() {
            o.insert("real".into(), json!(true));
            o.insert("margin".into(), json!(self.margin));
            o.insert("switch_source".into(), json!(self.switch_source));
            o.insert("thread_switches".into(), json!(self.thread_switches));
            o.insert("kernel".into(), json!(self.kernel));
            o.insert("hz".into(), json!(self.hz));
            o.insert("partial".into(), json!(self.partial));
            o.insert("stopped_by".into(), json!(self.stopped_by));
            o.insert("restored".into(), json!(self.restored));
            o.insert("job_mode".into(), json!(self.job_mode));
            o.insert(
                "dl_bandwidth".into(),
                match self.dl_bandwidth {
                    Some((asked, available)) => json!({
                        "asked": asked,
                        "available": if available.is_finite() { json!(available) } else { Value::Null },
                    }),
                    None => Value::Null,
                },
            );
            o.insert("dispatcher".into(), json!(self.dispatcher));
            o.insert("fair_group".into(), json!(self.fair_group));
            o.insert(
                "scx".into(),
                self.scx.as_ref().map_or(Value::Null, |s| s.to_json()),
            );
            o.insert("dma_latency_us".into(), json!(self.dma_latency_us));
            o.insert("warnings".into(), json!(self.warnings));
            o.insert(
                "trace".into(),
                match (&self.trace, &self.trace_unavailable) {
                    (Some(t), _) => t.to_json(),
                    (None, Some(why)) => json!({ "unavailable": why }),
                    (None, None) => Value::Null,
                },
            );
            // What only the simulator sees (vruntimes, the fair class's picks): null, not 0.
            if let Some(f) = o.get_mut("fairness").and_then(Value::as_object_mut) {
                f.insert("max_vruntime_spread_ns".into(), Value::Null);
                f.insert("decisions".into(), Value::Null);
            }
        }
        v
    }
}

/// Turn per-worker reports into the result object. `window_ns` is the time over which
/// switches were counted; `span_ns` the run's measured length (t0 to its end).
#[allow(clippy::too_many_arguments)]
pub fn assemble(
    workload: &str,
    policy: &str,
    placement: &str,
    cpus: usize,
    names: &[String],
    reports: &[WorkerReport],
    span_ns: u64,
    window_ns: u64,
    switches: (Option<Vec<u64>>, u64),
    wall_s: f64,
    laxity_evaluations: u64,
    throttles: u64,
) -> SimResult {
    let mut tasks = Vec::with_capacity(reports.len());
    for (i, r) in reports.iter().enumerate() {
        let mut t = TaskResult {
            name: names[i].clone(),
            jobs: r.jobs.len() as u64,
            completed: 0,
            misses: 0,
            cpu_time_ns: r.cpu_ns,
            mean_response_ns: 0.0,
            max_response_ns: 0,
            max_tardiness_ns: 0,
            preemptions: 0,
            migrations: 0,
            throttles: 0,
            latency: latency(&r.jobs),
            fair: None,
            cpu: r.pinned,
        };
        let mut sum = 0u128;
        for j in &r.jobs {
            t.preemptions += j.preemptions;
            t.migrations += j.migrations;
            let late = match j.finish {
                Some(f) => f > j.deadline,
                None => j.deadline <= span_ns,
            };
            if late {
                t.misses += 1;
            }
            if let (Some(f), false) = (j.finish, j.aborted) {
                t.completed += 1;
                let resp = f - j.release;
                sum += resp as u128;
                t.max_response_ns = t.max_response_ns.max(resp);
                if j.deadline != u64::MAX {
                    t.max_tardiness_ns = t.max_tardiness_ns.max(f.saturating_sub(j.deadline));
                }
            }
        }
        if t.completed > 0 {
            t.mean_response_ns = sum as f64 / t.completed as f64;
        }
        tasks.push(t);
    }
    let secs = window_ns.max(1) as f64 / 1e9;
    let (per_cpu_sw, total_sw) = switches;
    let per_cpu = (0..cpus)
        .map(|c| CpuResult {
            cpu: c,
            utilisation: reports
                .iter()
                .map(|r| r.per_cpu_ns.get(c).copied().unwrap_or(0))
                .sum::<u64>() as f64
                / span_ns.max(1) as f64,
            context_switches: per_cpu_sw
                .as_ref()
                .and_then(|v| v.get(c).copied())
                .unwrap_or(total_sw / cpus.max(1) as u64),
            idle_switches: 0,
        })
        .collect();
    SimResult {
        fairness: None,
        kernel: None,
        workload: workload.into(),
        policy: policy.into(),
        placement: placement.into(),
        cpus,
        duration_ns: span_ns,
        // A real run is not a deterministic schedule: no horizon decides it.
        hyperperiod_ns: None,
        horizon_complete: false,
        feasibility_interval_ns: None,
        partition: None,
        events: reports.iter().map(|r| r.jobs.len() as u64 * 2).sum(),
        wall_s,
        jobs_released: tasks.iter().map(|t| t.jobs).sum(),
        jobs_completed: tasks.iter().map(|t| t.completed).sum(),
        jobs_aborted: reports
            .iter()
            .flat_map(|r| &r.jobs)
            .filter(|j| j.aborted)
            .count() as u64,
        deadline_misses: tasks.iter().map(|t| t.misses).sum(),
        context_switches: total_sw,
        context_switches_per_cpu_per_s: total_sw as f64 / cpus.max(1) as f64 / secs,
        // Switches to/from idle are not told apart by the kernel's counters.
        task_switches_per_cpu_per_s: f64::NAN,
        preemptions: tasks.iter().map(|t| t.preemptions).sum(),
        migrations: tasks.iter().map(|t| t.migrations).sum(),
        laxity_evaluations,
        // The kernel's scheduling decisions are not counted on a real run.
        scheduler_invocations: 0,
        scheduler_structure: None,
        throttles,
        tasks,
        per_cpu,
        trace: None,
        log: None,
        work: Default::default(),
    }
}

/// Fill in the fair-class figures the simulator reports, measured: per fair task `fair`
/// (`share` = thread CPU time / the run's span, `weight` and `entitled_share` as the
/// simulator computes them, `finished_ns` of a task with `work:`; `vruntime_ns` is not
/// observable and stays None) and `fairness` (Jain's index, makespan). The kernel-only
/// figures the simulator also has (`max_vruntime_spread_ns`, `decisions`) are set to 0
/// here and to null by [`RunResult::to_json`].
pub fn add_fair_figures(w: &Workload, r: &mut SimResult, reports: &[WorkerReport]) {
    let entitled = schedlab_model::fair::entitled_shares(w);
    let span = r.duration_ns.max(1) as f64;
    let mut any = false;
    for (i, t) in w.tasks.iter().enumerate() {
        if !t.class.is_fair() {
            continue;
        }
        any = true;
        let finished = reports.get(i).and_then(|rep| rep.finished);
        r.tasks[i].fair = Some(FairTaskStats {
            nice: t.nice,
            weight: schedlab_model::fair::fair_weight(w, t),
            share: r.tasks[i].cpu_time_ns as f64 / span,
            entitled_share: entitled[i],
            vruntime_ns: None,
            finished_ns: finished,
        });
    }
    if !any {
        return;
    }
    let shares: Vec<(f64, Option<f64>)> = r
        .tasks
        .iter()
        .filter_map(|t| t.fair.as_ref())
        .map(|f| (f.share, f.entitled_share))
        .collect();
    let work: Vec<Option<u64>> = w
        .tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.class.is_fair() && t.period.is_none() && t.work.is_some())
        .map(|(i, _)| reports.get(i).and_then(|rep| rep.finished))
        .collect();
    r.fairness = Some(FairnessStats {
        jain_index: schedlab_model::fair::jain_index(&shares),
        max_vruntime_spread_ns: 0,
        decisions: 0,
        makespan_ns: if work.is_empty() || work.iter().any(Option::is_none) {
            None
        } else {
            work.iter().flatten().max().copied()
        },
    });
}

/// Release-to-start latency of the jobs that started: the timer wake-up plus the wait
/// for a CPU (the simulator's "release to first dispatch").
fn latency(jobs: &[JobRecord]) -> Option<LatencyStats> {
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).ok()?;
    for j in jobs {
        if let Some(s) = j.start {
            let _ = h.record(s.saturating_sub(j.release).max(1));
        }
    }
    (!h.is_empty()).then(|| LatencyStats {
        samples: h.len(),
        min_ns: h.min(),
        mean_ns: h.mean(),
        p50_ns: h.value_at_quantile(0.5),
        p99_ns: h.value_at_quantile(0.99),
        p999_ns: h.value_at_quantile(0.999),
        max_ns: h.max(),
        histogram_us: None,
        overruns: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(release: u64, deadline: u64, finish: Option<u64>) -> JobRecord {
        JobRecord {
            release,
            deadline,
            start: finish.map(|_| release),
            finish,
            ..JobRecord::default()
        }
    }

    #[test]
    fn misses_and_responses_follow_the_definitions() {
        let r = WorkerReport {
            jobs: vec![
                job(0, 100, Some(60)),    // on time
                job(100, 200, Some(250)), // late: miss, tardiness 50
                job(200, 300, None),      // never finished, deadline inside the run: miss
                job(300, 400, None),      // deadline after the end of the run: not a miss
            ],
            cpu_ns: 10,
            per_cpu_ns: vec![5, 5],
            ..WorkerReport::default()
        };
        let s = assemble(
            "w",
            "edf",
            "linux",
            2,
            &["a".into()],
            &[r],
            350,
            1_000_000_000,
            (Some(vec![10, 30]), 40),
            0.1,
            0,
            0,
        );
        assert_eq!(s.jobs_released, 4);
        assert_eq!(s.jobs_completed, 2);
        assert_eq!(s.deadline_misses, 2);
        assert_eq!(s.tasks[0].max_response_ns, 150);
        assert_eq!(s.tasks[0].max_tardiness_ns, 50);
        assert_eq!(s.context_switches, 40);
        assert!((s.context_switches_per_cpu_per_s - 20.0).abs() < 1e-9);
        assert_eq!(s.per_cpu[1].context_switches, 30);
        // Two jobs started, each at its release (latency recorded as 1 ns).
        assert_eq!(s.tasks[0].latency.as_ref().unwrap().samples, 2);
        // NaN serialises as null.
        let v = serde_json::to_value(&s).unwrap();
        assert!(v["task_switches_per_cpu_per_s"].is_null());
    }

    #[test]
    fn counts_switches_somehow() {
        let c = SwitchCounter::start(1);
        std::thread::sleep(std::time::Duration::from_millis(5));
        let (src, _, _) = c.finish();
        assert!(src == "perf" || src == "proc_stat");
    }
}
