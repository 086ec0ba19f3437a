//! Run a workload on the host kernel: one thread per task, jobs released at
//! `t0 + offset + k·T` with `clock_nanosleep(TIMER_ABSTIME)`, each job burning its
//! execution time as thread CPU time ([`crate::job`]), every job's release, start and
//! finish recorded, and the whole run bounded and interruptible.
//!
//! Safety guarantees (see docs/run.md):
//! - the run is bounded: jobs stop at `t0 + duration`; a watchdog thread at SCHED_FIFO 99
//!   demotes every worker to SCHED_OTHER and stops the run one second later at the
//!   latest; RLIMIT_RTTIME (soft: duration + 2 s of RT CPU without blocking → SIGXCPU,
//!   caught by the watchdog; hard: one second more → SIGKILL) bounds a runaway RT thread
//!   even if the watchdog could not run;
//! - SIGINT/SIGTERM are collected by the watchdog (they are blocked in every other
//!   thread): it stops the run within a few ms and the result is printed marked
//!   `partial`;
//! - every worker puts back SCHED_OTHER and its original affinity before it exits, and
//!   the process's signal mask, memory lock and RLIMIT_RTTIME are restored;
//! - the kernel's RT/DL limits (sched_rt_runtime_us, the fair_server) are left as they
//!   are: fair tasks keep at least 5% of every CPU.

use crate::behaviour;
use crate::cgroup;
use crate::decide::Decider;
use crate::dispatcher::{self, DispatchShared, Slot};
use crate::fields;
use crate::host::HostSched;
use crate::job::{self, BurnCtx, BurnEnd, JobMode};
use crate::measure::{self, JobRecord, RunResult, SwitchCounter, WorkerReport};
use crate::policy::{self, AdmissionError, DlCapacity, KernelPolicy, Tid};
use crate::privileges::{self, PrivilegeError};
use crate::releases::JobPlan;
use crate::scx;
use crate::thread;
use crate::traced::{self, TaskContext, TraceContext};
use crate::tracefs::TraceSession;
use schedlab_model::registry::{and_list, POLICIES};
use schedlab_model::{
    format_ns, sched_attrs, OnMiss, Policy, SchedAttr, Task, TaskClass, Workload,
};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

/// Default SCHED_DEADLINE margin: budget = runtime × 1.05.
///
/// Why 5%: each job also pays its wake-up (timer interrupt, hrtimer, context switch),
/// the `clock_nanosleep` return and the thread-CPU clock reads, all charged to the
/// reservation, and CBS enforces the budget at tick granularity (4 ms at HZ=250). With
/// budget = C the 2-CPU Table-1 analogue misses nearly every deadline (1732/1732 measured
/// on this VM: every job overruns by a few µs and is throttled until its next period);
/// with 1.05 × C none of them does. 5% of a 5 ms job is 250 µs, far above the measured
/// per-job overhead (tens of µs), while keeping the bandwidth asked for — and so the
/// sets SCHED_DEADLINE admits — close to the task set's utilisation.
pub const DEFAULT_MARGIN: f64 = 0.05;

/// SCHED_FIFO priority of a job the dispatcher chose to run.
pub const DISPATCH_HIGH: u8 = 98;
/// SCHED_FIFO priority of a ready job the dispatcher did not choose.
pub const DISPATCH_LOW: u8 = 1;
/// Priority of the watchdog and of the dispatcher's manager thread.
pub const TOP_PRIO: u8 = 99;

/// Who schedules the periodic tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The kernel's own policies (SCHED_DEADLINE for edf, SCHED_FIFO/RR for rm/dm/fifo/rr).
    Kernel,
    /// The user-space dispatcher (llf, illf, edf).
    Dispatcher,
    /// schedlab's sched_ext BPF schedulers (illf, llf, edf; `scx/`, Linux >= 6.12 with
    /// CONFIG_SCHED_CLASS_EXT): the periodic tasks run as SCHED_EXT threads; in a
    /// workload without periodic tasks, `fair: bfs` / `cfs` load scx_bfs / scx_cfsw and
    /// the fair tasks run as SCHED_EXT threads ([`scx::FairScheduler`]).
    Scx,
}

/// How to run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Margin on SCHED_DEADLINE budgets (None: the file's `scheduler.dl_margin` if set,
    /// else [`DEFAULT_MARGIN`]).
    pub margin: Option<f64>,
    /// Backend (None: kernel when the kernel has the policy, else the dispatcher).
    pub backend: Option<Backend>,
    /// How jobs burn CPU.
    pub job_mode: JobMode,
    /// Dispatcher tick.
    pub tick: Duration,
    /// Whether the file set `scheduler.dl_margin` (then it is used when `margin` is None).
    pub file_margin: bool,
    /// PM QoS CPU latency request held for the run (µs; `--dma-latency`); None: none.
    pub dma_latency: Option<u32>,
    /// Put the fair workers in a CPU cgroup weighted far above other sessions
    /// ([`crate::cgroup`]), so other work on the machine barely disturbs them.
    pub fair_group: bool,
    /// Record the run's CPUs in a private tracefs instance ([`crate::tracefs`]) and
    /// rebuild its schedule ([`crate::traced`]); where tracing is not possible the run
    /// goes on with its counters and says why.
    pub trace: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            margin: None,
            backend: None,
            job_mode: JobMode::ThreadCpu,
            tick: Duration::from_millis(1),
            file_margin: false,
            dma_latency: None,
            fair_group: false,
            trace: false,
        }
    }
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Missing privileges.
    #[error(transparent)]
    Privilege(#[from] PrivilegeError),
    /// SCHED_DEADLINE refused the set.
    #[error(transparent)]
    Admission(#[from] AdmissionError),
    /// The workload asks for something the runner cannot do here.
    #[error("{0}")]
    Unsupported(String),
    /// A system call failed while setting up.
    #[error("{0}")]
    Setup(String),
    /// SIGINT or SIGTERM arrived during the set-up (e.g. while SCHED_DEADLINE admission
    /// was being retried): no job ran, and everything was put back.
    #[error("interrupted by {0} while setting up, before any job ran; every setting was put back")]
    Interrupted(&'static str),
}

/// One task's plan.
#[derive(Debug, Clone)]
struct Plan {
    policy: KernelPolicy,
    /// Host CPUs it may run on.
    cpus: Vec<usize>,
    /// Managed by the dispatcher.
    dispatched: bool,
    budget: Option<u64>,
}

/// The margin a run uses: the flag, else the file's `scheduler.dl_margin`, else the default.
pub fn effective_margin(w: &Workload, cfg: &RunConfig) -> f64 {
    cfg.margin.unwrap_or(if cfg.file_margin {
        w.scheduler.dl_margin
    } else {
        DEFAULT_MARGIN
    })
}

/// The backend a run uses: `--backend`, else [`Backend::default_for`] the policy; an
/// error when that backend does not run it (the policy registry says who runs what).
pub fn effective_backend(w: &Workload, cfg: &RunConfig) -> Result<Backend, RunError> {
    let p = w.scheduler.policy;
    match cfg.backend.or_else(|| Backend::default_for(p)) {
        Some(b) if b.runs(p) => Ok(b),
        Some(Backend::Kernel) => Err(RunError::Unsupported(format!(
            "the kernel has no `{}` policy; {}",
            p.name(),
            elsewhere(p)
        ))),
        Some(b) => Err(RunError::Unsupported(format!(
            "{} {}, not `{}`",
            match b {
                Backend::Dispatcher => "the dispatcher schedules",
                _ => "the sched_ext schedulers are",
            },
            and_list(&b.policies()),
            p.name()
        ))),
        None => Err(RunError::Unsupported(format!(
            "`{}` has no real backend (kernel, dispatcher or sched_ext): only the simulator runs it",
            p.name()
        ))),
    }
}

/// Where a policy the kernel lacks can run instead.
fn elsewhere(p: Policy) -> String {
    let real = p.info().real;
    let mut ways = Vec::new();
    if real.dispatcher {
        ways.push("the user-space dispatcher (--backend dispatcher)");
    }
    if real.scx {
        ways.push("a sched_ext scheduler (--backend scx)");
    }
    if ways.is_empty() {
        "only the simulator runs it".into()
    } else {
        format!("run it through {}", ways.join(" or "))
    }
}

impl Backend {
    /// Whether this backend runs the periodic policy `p` (the policy registry's
    /// `real` field).
    pub fn runs(self, p: Policy) -> bool {
        let real = p.info().real;
        p.is_periodic()
            && match self {
                Backend::Kernel => real.kernel.is_some(),
                Backend::Dispatcher => real.dispatcher,
                Backend::Scx => real.scx,
            }
    }

    /// The backend a run of `p` uses without `--backend`: the kernel when it has the
    /// policy, else the user-space dispatcher, else sched_ext (None: only the simulator
    /// runs it).
    pub fn default_for(p: Policy) -> Option<Backend> {
        [Backend::Kernel, Backend::Dispatcher, Backend::Scx]
            .into_iter()
            .find(|&b| b.runs(p))
    }

    /// The names of the periodic policies this backend runs, in registry order.
    pub fn policies(self) -> Vec<&'static str> {
        POLICIES
            .iter()
            .filter(|e| self.runs(e.policy))
            .map(|e| e.name)
            .collect()
    }
}

/// CPUs this process may use (the run's CPUs are the first `cpus` of them).
pub fn host_cpus() -> Vec<usize> {
    policy::get_affinity(0).unwrap_or_else(|_| vec![0])
}

/// `fair_ext`: the fair tasks are scheduled by a sched_ext fair scheduler (SCHED_EXT).
fn plan(
    w: &Workload,
    backend: Backend,
    margin: f64,
    host: &[usize],
    fair_ext: bool,
) -> Result<Vec<Plan>, RunError> {
    let n = w.platform.cpus;
    if n > host.len() {
        return Err(RunError::Unsupported(format!(
            "the workload asks for {n} CPUs but this machine lets the run use {} (give --cpus {})",
            host.len(),
            host.len()
        )));
    }
    let run_cpus: Vec<usize> = host[..n].to_vec();
    let online = online_cpus();
    let attrs = sched_attrs(w);
    let mut plans = Vec::with_capacity(w.tasks.len());
    for (i, t) in w.tasks.iter().enumerate() {
        let cpus: Vec<usize> = match &t.affinity {
            Some(a) => a.iter().map(|&c| run_cpus[c]).collect(),
            // Tasks without affinity avoid the isolated CPUs (`platform.isolated`), as
            // in the simulator; all of them if every CPU is isolated.
            None => {
                let free: Vec<usize> = (0..n)
                    .filter(|c| !w.platform.isolated.contains(c))
                    .map(|c| run_cpus[c])
                    .collect();
                if free.is_empty() {
                    run_cpus.clone()
                } else {
                    free
                }
            }
        };
        let mut budget = None;
        let mut dispatched = false;
        let policy = match (t.class, attrs[i]) {
            (c, _) if fair_ext && scx::FairScheduler::class_word(c).is_some() => KernelPolicy::Ext,
            (TaskClass::Deadline, _) if backend == Backend::Dispatcher => {
                dispatched = true;
                KernelPolicy::Fifo(DISPATCH_LOW)
            }
            (TaskClass::Deadline, _) if backend == Backend::Scx => KernelPolicy::Ext,
            (_, SchedAttr::Deadline) => {
                let (policy, b) = deadline_policy(t, margin, cpus.len(), online)?;
                budget = Some(b);
                policy
            }
            // Periodic tasks one below the model's priority (98 → 97 ...), keeping 98 and
            // 99 for the dispatcher and the watchdog.
            (TaskClass::Deadline, SchedAttr::Fifo(p)) => {
                KernelPolicy::Fifo(p.saturating_sub(1).max(1))
            }
            (TaskClass::Deadline, SchedAttr::Rr(p)) => KernelPolicy::Rr(p.saturating_sub(1).max(1)),
            (_, SchedAttr::Fifo(p)) => KernelPolicy::Fifo(p.min(97)),
            (_, SchedAttr::Rr(p)) => KernelPolicy::Rr(p.min(97)),
            (_, SchedAttr::Normal(nice)) => KernelPolicy::Other(nice),
            (_, SchedAttr::Batch(nice)) => KernelPolicy::Batch(nice),
            (_, SchedAttr::Idle(_)) => KernelPolicy::Idle,
            (_, SchedAttr::Iso(_)) => {
                return Err(RunError::Unsupported(format!(
                    "task {}: class iso (SCHED_ISO) exists only in BFS kernels",
                    t.name
                )))
            }
        };
        plans.push(Plan {
            policy,
            cpus,
            dispatched,
            budget,
        });
    }
    Ok(plans)
}

/// SCHED_DEADLINE parameters of a periodic task and its budget (runtime × (1 + margin)),
/// or why the kernel would refuse them.
fn deadline_policy(
    t: &Task,
    margin: f64,
    allowed_cpus: usize,
    online: usize,
) -> Result<(KernelPolicy, u64), RunError> {
    let period = t.period.unwrap_or(t.deadline);
    let b = ((t.runtime as f64) * (1.0 + margin)).ceil() as u64;
    let b = b.max(1024);
    if b > t.deadline {
        return Err(RunError::Unsupported(format!(
            "task {}: budget {} (runtime {} × (1 + margin {margin})) exceeds its deadline {}; SCHED_DEADLINE needs runtime <= deadline (lower the margin)",
            t.name,
            format_ns(b),
            format_ns(t.runtime),
            format_ns(t.deadline)
        )));
    }
    if !(100_000..=4_194_304_000).contains(&period) {
        return Err(RunError::Unsupported(format!(
            "task {}: period {} is outside SCHED_DEADLINE's 100us..4.194304s",
            t.name,
            format_ns(period)
        )));
    }
    if allowed_cpus != online {
        return Err(RunError::Unsupported(format!(
            "task {}: a SCHED_DEADLINE task must be allowed on every CPU of its root domain ({online} here); drop its affinity / run on all {online} CPUs (--cpus {online})",
            t.name
        )));
    }
    let policy = KernelPolicy::Deadline {
        runtime: b,
        deadline: t.deadline,
        period,
    };
    Ok((policy, b))
}

fn online_cpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    n.max(1) as usize
}

/// Σ budget/period of the SCHED_DEADLINE tasks of `w` with `margin` (the bandwidth asked
/// of admission control).
pub fn dl_bandwidth(w: &Workload, margin: f64) -> f64 {
    w.tasks
        .iter()
        .filter(|t| t.class == TaskClass::Deadline)
        .map(|t| {
            let b = ((t.runtime as f64) * (1.0 + margin)).ceil().max(1024.0);
            b / t.period.unwrap_or(t.deadline) as f64
        })
        .sum()
}

/// State shared by the run's threads.
struct Shared {
    stop: AtomicBool,
    /// Relative instant (ns after t0) at which the run was stopped, u64::MAX if not.
    stop_at: AtomicU64,
    t0: AtomicU64,
    /// Worker tids (filled before t0).
    tids: Mutex<Vec<Tid>>,
    exited: Vec<AtomicBool>,
    done: AtomicBool,
    throttles: AtomicU64,
    watchdog_tid: std::sync::atomic::AtomicI32,
    stopped_by: Mutex<Option<String>>,
    /// The run's trace, for the workers' job-end markers (set before t0).
    tracer: Mutex<Option<Arc<TraceSession>>>,
}

impl Shared {
    fn stop_all(&self, why: &str) {
        if self.stop.swap(true, Ordering::SeqCst) {
            return;
        }
        let t0 = self.t0.load(Ordering::SeqCst);
        let now = job::now_ns();
        self.stop_at.store(now.saturating_sub(t0), Ordering::SeqCst);
        *self.stopped_by.lock().unwrap() = Some(why.to_string());
        let tids = self.tids.lock().unwrap().clone();
        for (i, &tid) in tids.iter().enumerate() {
            if !self.exited[i].load(Ordering::SeqCst) {
                // Demote first: a throttled or runaway RT thread gets off the CPU now.
                let _ = policy::set_policy(tid, &KernelPolicy::Other(0));
                thread::signal_thread(tid, libc::SIGUSR1);
            }
        }
    }

    fn wake_stragglers(&self) {
        let tids = self.tids.lock().unwrap().clone();
        for (i, &tid) in tids.iter().enumerate() {
            if !self.exited[i].load(Ordering::SeqCst) {
                thread::signal_thread(tid, libc::SIGUSR1);
            }
        }
    }
}

/// Run `w` on this machine. `w.duration` bounds the run.
pub fn run(w: &Workload, cfg: &RunConfig) -> Result<RunResult, RunError> {
    privileges::check()?;
    // A workload this backend or kernel cannot run is refused before waiting for another
    // run's lock (up to minutes); the warnings are worked out again under the lock, after
    // a killed run's leftovers are recovered.
    let backend = effective_backend(w, cfg)?;
    fields::check(w, backend, &HostSched::read())?;
    if backend == Backend::Scx {
        scx::check_kernel().map_err(RunError::Unsupported)?;
    }
    // One real run at a time on this machine (held until this function returns).
    let lock = crate::machine_lock::MachineLock::acquire(&format!("run {}", w.name))
        .map_err(RunError::Setup)?;
    let backend = effective_backend(w, cfg)?;
    let margin = effective_margin(w, cfg);
    let field_warnings = fields::check(w, backend, &HostSched::read())?;
    let host = host_cpus();
    let scx_fair = match backend {
        Backend::Scx => scx::FairScheduler::for_workload(w),
        _ => None,
    };
    let plans = plan(w, backend, margin, &host, scx_fair.is_some())?;
    let scx_loader = match backend {
        Backend::Scx => {
            scx::check_kernel().map_err(RunError::Unsupported)?;
            let args = match scx_fair {
                Some(f) => f.loader_args(w),
                None => scx::loader_args(w.scheduler.policy, &w.scheduler.illf, &w.scheduler.llf)
                    .map_err(RunError::Unsupported)?,
            };
            Some((scx::find_loader().map_err(RunError::Unsupported)?, args))
        }
        _ => None,
    };
    if backend == Backend::Dispatcher {
        // The dispatcher runs the simulator's class under global placement: refused
        // where the simulator refuses it (e.g. exact llf), before any thread exists.
        Decider::new(w).map_err(|e| {
            RunError::Unsupported(format!(
                "the dispatcher decides as the simulator does under placement global, which refuses this workload: {e}"
            ))
        })?;
    }
    let ncpu = w.platform.cpus;
    let run_cpus: Vec<usize> = host[..ncpu].to_vec();

    // Admission, checked before any thread exists.
    let any_dl = plans
        .iter()
        .any(|p| matches!(p.policy, KernelPolicy::Deadline { .. }));
    let cap = DlCapacity::of_host(online_cpus());
    let asked = dl_bandwidth(w, margin);
    if any_dl && asked > cap.available() + 1e-9 {
        return Err(AdmissionError {
            asked,
            available: cap.explain(),
            margin,
            kernel: String::new(),
        }
        .into());
    }

    // PM QoS request, held until this function returns (the kernel drops it on exit).
    let _qos = match cfg.dma_latency {
        Some(us) => Some(crate::pm_qos::PmQosRequest::hold(us).map_err(RunError::Setup)?),
        None => None,
    };
    let mut warnings = field_warnings;
    // What a killed run left and this one undid (also printed as a note by the lock).
    warnings.extend(lock.recovered.clone());
    let wall = Instant::now();
    if let Some(wn) = thread::lock_memory() {
        warnings.push(wn);
    }
    let old_mask = thread::block_control_signals();
    thread::install_wake_handler();
    let old_rttime = set_rttime(w.duration);
    let main_affinity = policy::get_affinity(0).ok();
    let main_policy = policy::get_policy(0).ok();

    let n = w.tasks.len();
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        stop_at: AtomicU64::new(u64::MAX),
        t0: AtomicU64::new(0),
        tids: Mutex::new(vec![0; n]),
        exited: (0..n).map(|_| AtomicBool::new(false)).collect(),
        done: AtomicBool::new(false),
        throttles: AtomicU64::new(0),
        watchdog_tid: std::sync::atomic::AtomicI32::new(0),
        stopped_by: Mutex::new(None),
        tracer: Mutex::new(None),
    });
    let dshared = Arc::new(DispatchShared::new(n, run_cpus.clone()));
    let barrier = Arc::new(Barrier::new(n + 1));
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Tid)>();

    let mut handles = Vec::with_capacity(n);
    let mut spawn_err = None;
    for (i, t) in w.tasks.iter().enumerate() {
        let task = t.clone();
        let shared = Arc::clone(&shared);
        let dshared = Arc::clone(&dshared);
        let barrier = Arc::clone(&barrier);
        let tx = tx.clone();
        let host_all = host.clone();
        let pinned = (plans[i].cpus.len() == 1).then(|| plans[i].cpus[0]);
        let dispatched = plans[i].dispatched;
        let duration = w.duration;
        let on_miss = w.on_miss;
        let jobs = JobPlan::new(w, i);
        let mode = cfg.job_mode;
        let index_of: Vec<usize> = run_cpus.clone();
        let h = thread::spawn(format!("sl-{}", t.name), move || {
            let _ = tx.send((i, policy::gettid()));
            barrier.wait();
            let slot = dispatched.then(|| &dshared.slots[i]);
            let mut rep = if shared.stop.load(Ordering::SeqCst) {
                WorkerReport::default()
            } else {
                worker(
                    &task, jobs, &shared, slot, &dshared, duration, on_miss, mode,
                )
            };
            if let Some(s) = slot {
                s.finish();
                dshared.notify();
            }
            // Map host CPU numbers to the run's CPU indices.
            let mut per = vec![0u64; index_of.len()];
            for (k, &c) in index_of.iter().enumerate() {
                per[k] = rep.per_cpu_ns.get(c).copied().unwrap_or(0);
            }
            rep.per_cpu_ns = per;
            rep.pinned = pinned.and_then(|c| index_of.iter().position(|&x| x == c));
            rep.restore_error = match (
                policy::set_policy(0, &KernelPolicy::Other(0)),
                policy::set_affinity(0, &host_all),
            ) {
                (Ok(()), Ok(())) => None,
                (Err(e), _) => Some(format!("its policy (SCHED_OTHER): {e}")),
                (_, Err(e)) => Some(format!("its affinity: {e}")),
            };
            rep.restored = rep.restore_error.is_none();
            shared.exited[i].store(true, Ordering::SeqCst);
            rep
        });
        match h {
            Ok(h) => handles.push(h),
            Err(e) => {
                spawn_err = Some(format!("cannot create worker thread {}: {e}", t.name));
                break;
            }
        }
    }
    drop(tx);

    let mut setup_err: Option<RunError> = spawn_err.map(RunError::Setup);
    if setup_err.is_none() {
        for _ in 0..n {
            match rx.recv() {
                Ok((i, tid)) => shared.tids.lock().unwrap()[i] = tid,
                Err(_) => {
                    setup_err = Some(RunError::Setup("a worker thread died at start".into()));
                    break;
                }
            }
        }
    }
    // The fair workers' own CPU group, if asked for (kept until the workers are gone).
    let mut fair_group = None;
    if cfg.fair_group && setup_err.is_none() {
        let fair: Vec<usize> = (0..n)
            .filter(|&i| {
                matches!(
                    plans[i].policy,
                    KernelPolicy::Other(_) | KernelPolicy::Batch(_) | KernelPolicy::Idle
                )
            })
            .collect();
        if !fair.is_empty() {
            let tids = shared.tids.lock().unwrap().clone();
            match cgroup::FairGroup::create(cgroup::MAX_SHARES) {
                Ok(g) => {
                    match fair.iter().try_for_each(|&i| g.add(tids[i])) {
                        Ok(()) => fair_group = Some(g),
                        Err(e) => warnings.push(format!(
                            "fair group: cannot move the fair workers into {}: {e}; they compete with other sessions",
                            g.path().display()
                        )),
                    }
                }
                Err(e) => warnings.push(format!(
                    "fair group: {e}; the fair workers compete with other sessions"
                )),
            }
        }
    }
    // --backend scx: load the BPF scheduler and give it every periodic (or, for a fair
    // scheduler, fair) thread's parameters before the threads become SCHED_EXT
    // (dropping the session unloads it).
    let mut scx_session = None;
    if let (None, Some((loader, args))) = (&setup_err, &scx_loader) {
        let tids = shared.tids.lock().unwrap().clone();
        let started = scx::Session::start(loader, args).and_then(|mut s| {
            for (i, t) in w.tasks.iter().enumerate() {
                if plans[i].policy != KernelPolicy::Ext {
                    continue;
                }
                match (scx_fair, scx::FairScheduler::class_word(t.class)) {
                    (Some(f), Some(class)) => {
                        let reg = s.register_fair(tids[i], t.nice, class, i)?;
                        if f == scx::FairScheduler::Cfsw {
                            let want = schedlab_model::fair::fair_weight(w, t);
                            reg.check_weight(w.scheduler.weights, t.nice, want)
                                .map_err(|e| format!("task {}: {e}", t.name))?;
                        }
                    }
                    _ => {
                        let period = t.period.unwrap_or(t.deadline);
                        s.register(tids[i], t.runtime, t.deadline, period, i)?;
                    }
                }
            }
            Ok(s)
        });
        match started {
            Ok(s) => scx_session = Some(s),
            Err(e) => setup_err = Some(RunError::Setup(e)),
        }
    }
    // Policies and affinities, DL admission retried on EBUSY.
    if setup_err.is_none() {
        let tids = shared.tids.lock().unwrap().clone();
        let window = policy::ebusy_retry(&plans.iter().map(|p| &p.policy).collect::<Vec<_>>());
        for (i, p) in plans.iter().enumerate() {
            if !matches!(p.policy, KernelPolicy::Deadline { .. }) {
                if let Err(e) = policy::set_affinity(tids[i], &p.cpus) {
                    setup_err = Some(RunError::Setup(format!(
                        "sched_setaffinity for task {}: {e}",
                        w.tasks[i].name
                    )));
                    break;
                }
            }
            if let Err(e) = policy::set_policy_retrying(tids[i], &p.policy, window) {
                setup_err = Some(match e.raw_os_error() {
                    Some(libc::EBUSY) => RunError::Admission(AdmissionError {
                        asked,
                        available: cap.explain(),
                        margin,
                        kernel: format!(
                            " (the kernel refused task {} with EBUSY, retried for {} ms; \
                             other SCHED_DEADLINE tasks hold the rest, or a run that \
                             just ended still does: the kernel frees a task's bandwidth \
                             up to about two periods after it ends)",
                            w.tasks[i].name,
                            window.as_millis()
                        ),
                    }),
                    Some(libc::EPERM) => RunError::Privilege(PrivilegeError::MissingSysNice),
                    _ => RunError::Setup(format!(
                        "sched_setattr({}) for task {}: {e}",
                        p.policy.name(),
                        w.tasks[i].name
                    )),
                });
                break;
            }
        }
    }

    // The trace, if asked for: started before t0, so it holds the first releases.
    let mut trace_unavailable = None;
    if cfg.trace && setup_err.is_none() {
        match TraceSession::start(&run_cpus, trace_buffer_kb(w.duration)) {
            Ok(t) => {
                if !t.missing_events.is_empty() {
                    warnings.push(format!(
                        "tracing: this kernel has no {} events; the trace goes without them",
                        t.missing_events.join(", ")
                    ));
                }
                *shared.tracer.lock().unwrap() = Some(Arc::new(t));
            }
            Err(e) => trace_unavailable = Some(format!("{e}; measured with the counters only")),
        }
    }

    // Watchdog (and manager) at the top RT priority, then go.
    let t0 = (job::now_ns() + 50_000_000) / 1_000_000 * 1_000_000;
    shared.t0.store(t0, Ordering::SeqCst);
    let end = t0 + w.duration;
    let hard_end = end + 1_000_000_000;
    let any_dl_flag = any_dl;
    let wd = {
        let shared = Arc::clone(&shared);
        thread::spawn("sl-watchdog".into(), move || {
            watchdog(&shared, hard_end, any_dl_flag)
        })
        .map_err(|e| RunError::Setup(format!("cannot create the watchdog thread: {e}")))
    };
    let mut wd_tid = 0;
    let wd = match wd {
        Ok(h) => Some(h),
        Err(e) => {
            setup_err.get_or_insert(e);
            None
        }
    };
    if wd.is_some() {
        // The watchdog reports its tid through the shared slot below.
        while shared.watchdog_tid.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        wd_tid = shared.watchdog_tid.load(Ordering::SeqCst) as Tid;
        if let Err(e) = policy::set_policy(wd_tid, &KernelPolicy::Fifo(TOP_PRIO)) {
            setup_err.get_or_insert(RunError::Setup(format!(
                "cannot make the watchdog SCHED_FIFO {TOP_PRIO}: {e}"
            )));
        }
    }
    let mgr = if backend == Backend::Dispatcher && setup_err.is_none() {
        let shared2 = Arc::clone(&shared);
        let d = Arc::clone(&dshared);
        let stop = move || shared2.stop.load(Ordering::Relaxed);
        let wl = w.clone();
        let tick = cfg.tick.as_nanos() as u64;
        let tids = shared.tids.lock().unwrap().clone();
        match thread::spawn("sl-dispatch".into(), move || {
            dispatcher::manager(&d, &tids, &wl, tick, t0, end, stop)
        }) {
            Ok(h) => {
                while dshared.manager_tid.load(Ordering::SeqCst) == 0 {
                    std::thread::yield_now();
                }
                let tid = dshared.manager_tid.load(Ordering::SeqCst) as Tid;
                if let Err(e) = policy::set_policy(tid, &KernelPolicy::Fifo(TOP_PRIO)) {
                    setup_err.get_or_insert(RunError::Setup(format!(
                        "cannot make the dispatcher SCHED_FIFO {TOP_PRIO}: {e}"
                    )));
                }
                Some(h)
            }
            Err(e) => {
                setup_err.get_or_insert(RunError::Setup(format!(
                    "cannot create the dispatcher thread: {e}"
                )));
                None
            }
        }
    } else {
        None
    };

    if setup_err.is_some() {
        shared.stop.store(true, Ordering::SeqCst);
    }
    let counter = SwitchCounter::start(ncpu.min(online_cpus()));
    let c_start = job::now_ns();
    barrier.wait();
    if let Some(s) = scx_session.as_mut() {
        s.note_state();
    }
    let reports: Vec<WorkerReport> = handles
        .into_iter()
        .map(|h| h.join().unwrap_or_default())
        .collect();
    let c_end = job::now_ns();
    let (switch_source, per_cpu_sw, total_sw) = counter.finish();
    shared.done.store(true, Ordering::SeqCst);
    dshared.notify();
    let dstats = mgr.and_then(|h| match h.join() {
        Ok(d) => Some(d),
        // A dispatcher that died left its tasks at the priorities it last gave them: the
        // run no longer follows the policy, which the result must say.
        Err(p) => {
            let why = p
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| p.downcast_ref::<&str>().copied())
                .unwrap_or("no message");
            warnings.push(format!(
                "the dispatcher thread stopped early (a bug in schedlab: it panicked: {why}); \
                 from then on its tasks kept the priorities it had given them, so this run \
                 does not follow the policy"
            ));
            None
        }
    });
    // Every worker is gone: stop the trace (and remove its instance) before anything else.
    let capture = shared.tracer.lock().unwrap().take().map(|t| {
        Arc::try_unwrap(t)
            .map_err(|_| "tracing: the trace was still in use at the end of the run".to_string())
            .and_then(TraceSession::finish)
    });
    let fair_group_shares = fair_group.as_ref().map(|g| g.shares);
    drop(fair_group);
    // The workers are back in SCHED_OTHER: unload the BPF scheduler.
    let scx_report = scx_session.map(scx::Session::finish);
    if let Some(r) = &scx_report {
        warnings.extend(r.warnings());
    }
    if wd.is_some() {
        thread::signal_thread(wd_tid, libc::SIGUSR2);
    }
    if let Some(h) = wd {
        let _ = h.join();
    }

    // Put the process back as it was. A stop signal still pending after a failed set-up
    // (the watchdog had ended, or never started) is taken first, to be reported.
    let late_stop = setup_err.as_ref().and_then(|_| thread::take_stop_signal());
    restore_rttime(old_rttime);
    thread::restore_signal_mask(&old_mask);
    thread::unlock_memory();
    let main_ok = main_affinity
        .as_ref()
        .is_none_or(|a| policy::get_affinity(0).ok().as_ref() == Some(a))
        && main_policy.is_none_or(|p| policy::get_policy(0).ok() == Some(p));
    // "restored": false is rare (seen once under heavy load); say what was not put back.
    if !main_ok {
        warnings.push(format!(
            "not restored: the main thread's affinity or policy (was {:?} / {:?}, now {:?} / {:?})",
            main_affinity,
            main_policy.map(|p| p.name()),
            policy::get_affinity(0).ok(),
            policy::get_policy(0).ok().map(|p| p.name()),
        ));
    }
    for (t, r) in w.tasks.iter().zip(&reports) {
        if let Some(e) = &r.restore_error {
            warnings.push(format!(
                "not restored: task {}'s worker thread, {e}",
                t.name
            ));
        }
    }

    if let Some(e) = setup_err {
        // A Ctrl-C during the set-up, collected by the watchdog or taken above, is what
        // the user did: the set-up's own error (often the retries it cut short) is not.
        let by_watchdog = shared.stopped_by.lock().unwrap().clone();
        return Err(match (by_watchdog.as_deref(), late_stop) {
            (Some("SIGINT"), _) | (_, Some(libc::SIGINT)) => RunError::Interrupted("SIGINT"),
            (Some("SIGTERM"), _) | (_, Some(libc::SIGTERM)) => RunError::Interrupted("SIGTERM"),
            _ => e,
        });
    }

    let stop_at = shared.stop_at.load(Ordering::SeqCst);
    let span = w.duration.min(stop_at);
    let stopped_by = shared.stopped_by.lock().unwrap().clone();
    let names: Vec<String> = w.tasks.iter().map(|t| t.name.clone()).collect();
    let placement = match backend {
        Backend::Kernel | Backend::Scx => "linux",
        Backend::Dispatcher => "global",
    };
    let lax = dstats.as_ref().map_or(0, |d| d.1);
    let mut result = measure::assemble(
        &w.name,
        w.scheduler.policy.name(),
        placement,
        ncpu,
        &names,
        &reports,
        span,
        c_end - c_start,
        (per_cpu_sw, total_sw),
        wall.elapsed().as_secs_f64(),
        lax,
        shared.throttles.load(Ordering::SeqCst),
    );
    measure::add_fair_figures(w, &mut result, &reports);
    let trace = match capture {
        Some(Ok(cap)) => {
            let ctx = TraceContext {
                t0,
                duration: span,
                cpus: run_cpus.clone(),
                tasks: w
                    .tasks
                    .iter()
                    .zip(schedlab_trace::schedule::kernel_prios(w))
                    .zip(&reports)
                    .zip(shared.tids.lock().unwrap().iter())
                    .map(|(((t, prio), rep), &tid)| TaskContext {
                        name: t.name.clone(),
                        tid: tid as u32,
                        prio,
                        periodic: t.period.is_some(),
                        jobs: rep.jobs.clone(),
                    })
                    .collect(),
                runner_tids: vec![std::process::id(), wd_tid as u32],
                dispatcher_tid: Some(dshared.manager_tid.load(Ordering::SeqCst) as u32)
                    .filter(|&t| t != 0),
            };
            if cap.lost > 0 {
                warnings.push(format!(
                    "tracing: the trace buffer dropped {} events; the traced figures undercount",
                    cap.lost
                ));
            }
            match traced::analyse(&cap.text, &ctx, cap.lost) {
                Ok(mut t) => {
                    t.schedule.name = w.name.clone();
                    t.schedule.policy = w.scheduler.policy.name().to_string();
                    Some(t)
                }
                Err(e) => {
                    trace_unavailable = Some(e);
                    None
                }
            }
        }
        Some(Err(e)) => {
            trace_unavailable = Some(e);
            None
        }
        None => None,
    };
    // The counters cannot tell switches to and from idle apart (the field is null
    // untraced); the trace can, and its figure is the run's, not a second one beside it.
    if let Some(t) = &trace {
        result.task_switches_per_cpu_per_s = t.metrics.task_switches_per_cpu_per_s;
    }
    let kernel = policy::kernel_release();
    Ok(RunResult {
        result,
        budget_ns: plans.iter().map(|p| p.budget).collect(),
        kernel_policy: plans
            .iter()
            .map(|p| match (p.dispatched, p.policy) {
                (true, _) => format!("dispatched (SCHED_FIFO {DISPATCH_LOW}/{DISPATCH_HIGH})"),
                (_, KernelPolicy::Fifo(x)) | (_, KernelPolicy::Rr(x)) => {
                    format!("{} {x}", p.policy.name())
                }
                (_, KernelPolicy::Other(nv)) | (_, KernelPolicy::Batch(nv)) => {
                    format!("{} nice {nv}", p.policy.name())
                }
                _ => p.policy.name().to_string(),
            })
            .collect(),
        margin,
        switch_source,
        thread_switches: reports.iter().map(|r| r.thread_switches).sum(),
        hz: measure::config_hz(&kernel),
        kernel,
        partial: stopped_by.is_some(),
        stopped_by,
        restored: main_ok && reports.iter().all(|r| r.restored),
        job_mode: cfg.job_mode.name(),
        dl_bandwidth: any_dl.then(|| (asked, cap.available())),
        dispatcher: dstats.map(|d| d.0),
        fair_group: fair_group_shares,
        scx: scx_report,
        dma_latency_us: cfg.dma_latency,
        warnings,
        trace,
        trace_unavailable,
        jobs: reports.iter().map(|r| r.jobs.clone()).collect(),
    })
}

/// Per-CPU trace buffer for a run of `duration` ns: 4 MiB plus 2 MiB per second, at
/// most 128 MiB. A quiet CPU logs a few thousand events a second (~50 bytes each); with
/// a parallel build beside the run ten times more were seen (12,000/s, 0.7 MiB/s).
fn trace_buffer_kb(duration: u64) -> u64 {
    (4096 + duration.div_ceil(1_000_000_000) * 2048).min(131_072)
}

/// The watchdog: waits for a control signal or the hard end of the run.
fn watchdog(shared: &Shared, hard_end: u64, dl: bool) {
    shared
        .watchdog_tid
        .store(policy::gettid(), Ordering::SeqCst);
    loop {
        if shared.done.load(Ordering::SeqCst) {
            return;
        }
        let now = job::now_ns();
        if now >= hard_end {
            shared.stop_all("watchdog");
            break;
        }
        match thread::wait_control_signal(Duration::from_nanos(hard_end - now)) {
            Some(libc::SIGUSR2) => return,
            Some(libc::SIGINT) => {
                shared.stop_all("SIGINT");
                break;
            }
            Some(libc::SIGTERM) => {
                shared.stop_all("SIGTERM");
                break;
            }
            Some(libc::SIGXCPU) if dl => {
                // SCHED_FLAG_DL_OVERRUN: a reservation ran out (signals coalesce, so this
                // is a lower bound).
                shared.throttles.fetch_add(1, Ordering::SeqCst);
            }
            Some(libc::SIGXCPU) => {
                shared.stop_all("RLIMIT_RTTIME");
                break;
            }
            _ => {}
        }
    }
    // Keep waking workers that were between their stop check and a sleep.
    while !shared.done.load(Ordering::SeqCst) {
        shared.wake_stragglers();
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A worker this close to its next release writes the previous job's end marker: it may
/// reach `clock_nanosleep` only after the release and not block.
const MARK_AHEAD_NS: u64 = 50_000;

/// One task's thread: release, burn and record its jobs until the end of the run.
#[allow(clippy::too_many_arguments)]
fn worker(
    t: &Task,
    mut jobs: JobPlan,
    shared: &Shared,
    slot: Option<&Slot>,
    d: &DispatchShared,
    duration: u64,
    on_miss: OnMiss,
    mode: JobMode,
) -> WorkerReport {
    let t0 = shared.t0.load(Ordering::SeqCst);
    let end = t0 + duration;
    let mut rep = WorkerReport {
        per_cpu_ns: vec![0; libc::CPU_SETSIZE as usize],
        ..WorkerReport::default()
    };
    let (v0, i0) = thread::thread_switches();
    let cpu0 = job::thread_cpu_ns();
    let abort = on_miss == OnMiss::Abort;
    let stop = &shared.stop;
    let tracer = shared.tracer.lock().unwrap().clone();
    if t.class.is_fair() && t.period.is_none() {
        // Run/sleep phases, `work:` or CPU-bound: the simulator's fair behaviours.
        let win = behaviour::Window {
            t0,
            end,
            stop,
            mode,
        };
        rep.finished = behaviour::run(t, &win, &mut rep);
        return finish_report(rep, shared, (v0, i0), cpu0);
    }
    // The first job not started yet.
    let mut pending = jobs.next_job();
    // The last completed job, while the trace cannot yet see where it ended: a thread
    // that sleeps until its next release ends it with that sleep; one that goes straight
    // on (the release is due) or leaves (the run ends) writes a marker (crate::traced).
    let mut unmarked: Option<usize> = None;
    let mark = |k: Option<usize>| {
        if let (Some(tr), Some(k)) = (tracer.as_ref(), k) {
            tr.mark(&format!("{}{k}", traced::JOB_END_MARK));
        }
    };
    while let Some(job) = pending {
        let rel = t0.saturating_add(job.release);
        if rel >= end || stop.load(Ordering::SeqCst) {
            break;
        }
        let k = unmarked.take();
        if job::now_ns() + MARK_AHEAD_NS >= rel {
            mark(k);
        }
        let (exec, deadline) = (job.exec, t0.saturating_add(job.deadline));
        if let Some(s) = slot {
            s.publish(rel, deadline, exec);
        }
        while job::now_ns() < rel && !stop.load(Ordering::SeqCst) {
            job::sleep_until(rel);
        }
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let start = job::now_ns();
        let (_, inv0) = thread::thread_switches();
        let until = if abort { end.min(deadline) } else { end };
        let b = job::burn(
            exec,
            mode,
            &mut BurnCtx {
                stop,
                until,
                progress: slot.map(|s| &s.done),
                per_cpu: &mut rep.per_cpu_ns,
            },
        );
        let fin = job::now_ns();
        let (_, inv1) = thread::thread_switches();
        if let Some(s) = slot {
            s.complete();
            d.notify();
        }
        let aborted = b.end == BurnEnd::Cut && abort && fin >= deadline && deadline < end;
        rep.jobs.push(JobRecord {
            release: job.release,
            deadline: job.deadline,
            exec,
            start: Some(start - t0),
            finish: (b.end == BurnEnd::Done).then(|| fin - t0),
            aborted,
            preemptions: inv1 - inv0,
            migrations: b.migrations as u64,
        });
        pending = jobs.next_job();
        if b.end == BurnEnd::Done {
            unmarked = Some(rep.jobs.len() - 1);
        }
        if b.end != BurnEnd::Done && !aborted {
            break;
        }
    }
    mark(unmarked);
    // Jobs released (logically) but never started before the end (or the stop).
    let stop_at = shared.stop_at.load(Ordering::SeqCst);
    let eff_end = if stop_at == u64::MAX {
        duration
    } else {
        stop_at.min(duration)
    };
    if t.period.is_some() {
        while let Some(job) = pending.filter(|j| j.release < eff_end) {
            rep.jobs.push(JobRecord {
                release: job.release,
                deadline: job.deadline,
                exec: job.exec,
                ..JobRecord::default()
            });
            pending = jobs.next_job();
        }
    }
    finish_report(rep, shared, (v0, i0), cpu0)
}

/// Close a worker's report: drop jobs released after a stop (they do not belong to the
/// measured span), add the thread's switches and CPU time since `switches0` / `cpu0`.
fn finish_report(
    mut rep: WorkerReport,
    shared: &Shared,
    (v0, i0): (u64, u64),
    cpu0: u64,
) -> WorkerReport {
    let stop_at = shared.stop_at.load(Ordering::SeqCst);
    if stop_at != u64::MAX {
        rep.jobs.retain(|j| j.release < stop_at);
        rep.finished = rep.finished.filter(|&f| f < stop_at);
    }
    let (v1, i1) = thread::thread_switches();
    rep.thread_switches = (v1 - v0) + (i1 - i0);
    rep.cpu_ns = job::thread_cpu_ns() - cpu0;
    rep
}

fn set_rttime(duration: u64) -> Option<libc::rlimit> {
    // Soft limit: the whole run plus 2 s of RT CPU without blocking; hard: 1 s more.
    let soft = (duration / 1000).saturating_add(2_000_000);
    // SAFETY: getrlimit/setrlimit on plain structs.
    unsafe {
        let mut old: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_RTTIME, &mut old) != 0 {
            return None;
        }
        let new = libc::rlimit {
            rlim_cur: soft.min(old.rlim_max),
            rlim_max: soft.saturating_add(1_000_000).min(old.rlim_max),
        };
        libc::setrlimit(libc::RLIMIT_RTTIME, &new);
        Some(old)
    }
}

fn restore_rttime(old: Option<libc::rlimit>) {
    if let Some(old) = old {
        // SAFETY: as above. Raising the hard limit back needs CAP_SYS_RESOURCE (root).
        unsafe { libc::setrlimit(libc::RLIMIT_RTTIME, &old) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_model::Overrides;
    use std::path::Path;

    const SET: &str = "\
tasks:
  - { name: slow, runtime: 1ms, period: 30ms }
  - { name: fast, runtime: 1ms, period: 10ms }
  - { name: ctl, class: fifo, priority: 80, runtime: 1ms, period: 10ms }
  - { name: rr, class: rr, priority: 99, runtime: 1ms, period: 10ms }
  - { name: hog, nice: 3 }
  - { name: idle, class: idle }
";

    fn workload(policy: Policy) -> Workload {
        let ov = Overrides {
            policy: Some(policy),
            ..Overrides::default()
        };
        Workload::parse_str(SET, Path::new("w.yaml"), &ov).unwrap()
    }

    fn backend(policy: Policy, backend: Option<Backend>) -> Result<Backend, String> {
        let cfg = RunConfig {
            backend,
            ..RunConfig::default()
        };
        effective_backend(&workload(policy), &cfg).map_err(|e| e.to_string())
    }

    #[test]
    fn default_backends_follow_the_registry() {
        for p in [
            Policy::Edf,
            Policy::Rm,
            Policy::Dm,
            Policy::Fifo,
            Policy::Rr,
        ] {
            assert_eq!(backend(p, None), Ok(Backend::Kernel), "{p:?}");
        }
        for p in [Policy::Llf, Policy::Illf] {
            assert_eq!(backend(p, None), Ok(Backend::Dispatcher), "{p:?}");
        }
        let e = backend(Policy::Edzl, None).unwrap_err();
        assert!(e.contains("`edzl` has no real backend"), "{e}");
    }

    #[test]
    fn refusals_name_the_backends_that_would_run_the_policy() {
        let e = backend(Policy::Llf, Some(Backend::Kernel)).unwrap_err();
        assert!(
            e.contains("the kernel has no `llf` policy")
                && e.contains("--backend dispatcher")
                && e.contains("--backend scx"),
            "{e}"
        );
        let e = backend(Policy::Edzl, Some(Backend::Kernel)).unwrap_err();
        assert!(e.contains("only the simulator runs it"), "{e}");
        let e = backend(Policy::Rm, Some(Backend::Dispatcher)).unwrap_err();
        assert_eq!(e, "the dispatcher schedules edf, llf and illf, not `rm`");
        let e = backend(Policy::Rm, Some(Backend::Scx)).unwrap_err();
        assert_eq!(
            e,
            "the sched_ext schedulers are edf, llf and illf, not `rm`"
        );
        assert_eq!(backend(Policy::Edf, Some(Backend::Scx)), Ok(Backend::Scx));
    }

    #[test]
    fn a_sched_ext_fair_scheduler_takes_the_fair_tasks_and_leaves_rt_ones_to_the_kernel() {
        let w = Workload::parse_str(
            "scheduler: { fair: bfs }\ntasks:\n  - { name: a, nice: 19 }\n  - { name: b, class: batch }\n  - { name: i, class: idle }\n  - { name: f, class: fifo, priority: 10, runtime: 1ms, period: 10ms }\n",
            Path::new("w.yaml"),
            &Overrides::default(),
        )
        .unwrap();
        let got: Vec<KernelPolicy> = plan(&w, Backend::Scx, 0.05, &[0], true)
            .unwrap()
            .into_iter()
            .map(|p| p.policy)
            .collect();
        use KernelPolicy::*;
        assert_eq!(got, [Ext, Ext, Ext, Fifo(10)]);
        let got: Vec<KernelPolicy> = plan(&w, Backend::Scx, 0.05, &[0], false)
            .unwrap()
            .into_iter()
            .map(|p| p.policy)
            .collect();
        assert_eq!(got, [Other(19), Batch(0), Idle, Fifo(10)]);
    }

    fn policies(policy: Policy, backend: Backend) -> Vec<KernelPolicy> {
        plan(&workload(policy), backend, 0.05, &[0], false)
            .unwrap()
            .into_iter()
            .map(|p| p.policy)
            .collect()
    }

    #[test]
    fn kernel_priorities_are_one_below_the_models_for_periodic_tasks() {
        use KernelPolicy::*;
        // rm over every task's period: 10ms 98, 30ms 97 (then 96 for the fair tasks).
        assert_eq!(
            policies(Policy::Rm, Backend::Kernel),
            [Fifo(96), Fifo(97), Fifo(80), Rr(97), Other(3), Idle]
        );
        assert_eq!(
            policies(Policy::Rr, Backend::Kernel),
            [Rr(49), Rr(49), Fifo(80), Rr(97), Other(3), Idle]
        );
        assert_eq!(
            policies(Policy::Llf, Backend::Dispatcher)[..3],
            [Fifo(DISPATCH_LOW), Fifo(DISPATCH_LOW), Fifo(80)]
        );
        assert_eq!(policies(Policy::Illf, Backend::Scx)[..2], [Ext, Ext]);
    }
}
