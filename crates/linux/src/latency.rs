//! `schedlab latency`: a cyclictest-like probe on the real kernel (docs/latency.md).
//!
//! One thread per CPU, pinned, at SCHED_FIFO (or RR, or OTHER with a nice value), sleeps
//! with `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)` to `t0 + k × interval` and
//! records how late it wakes (`clock_gettime` after the sleep − the target), as
//! cyclictest does; a period it slept through is skipped and counted as an overrun, as
//! in cyclictest. Memory is locked (`mlockall`) and stacks pre-faulted.
//!
//! Safety:
//! - the run is bounded ([`MAX_DURATION`]); RLIMIT_RTTIME (soft 2 s of RT CPU without
//!   sleeping → SIGXCPU, hard 3 s → SIGKILL) stops a runaway probe thread;
//! - SIGINT, SIGTERM, SIGHUP and SIGXCPU are blocked in every thread and collected by the
//!   controlling thread (SCHED_OTHER, kept running by the kernel's fair server), which
//!   stops the probes within a few ms; the result is then marked partial;
//! - on every exit path (end, error, signal) the optional load is stopped, the shield
//!   ([`shield`]) restored, and this process's affinity, policy, memory lock, signal mask
//!   and RLIMIT_RTTIME put back.

pub mod load;
pub mod shield;

use crate::job::{now_ns, sleep_until};
use crate::pm_qos::{PmQosReport, PmQosRequest};
use crate::policy::{self, KernelPolicy};
use crate::privileges::{Privileges, CAP_SYS_NICE};
use crate::thread;
use load::{Load, LoadReport};
use serde::Serialize;
use shield::{Shield, ShieldReport};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::Duration;

/// Longest run accepted.
pub const MAX_DURATION: Duration = Duration::from_secs(3600);
/// Shortest interval accepted.
pub const MIN_INTERVAL: Duration = Duration::from_micros(100);
/// Longest interval accepted.
pub const MAX_INTERVAL: Duration = Duration::from_secs(1);
/// Exact 1 µs buckets are kept up to this latency; above it every value is kept (up to
/// [`MAX_OVER`] of them) — cyclictest's `-h` needs per-microsecond counts.
const HIST_US: usize = 20_000;
const MAX_OVER: usize = 16_384;
/// `CAP_DAC_OVERRIDE`: writing root-owned files such as /proc/irq/N/smp_affinity_list.
pub const CAP_DAC_OVERRIDE: u32 = 1;

/// The probe threads' policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbePolicy {
    /// SCHED_FIFO at a priority 1..99.
    Fifo(u8),
    /// SCHED_RR at a priority 1..99.
    Rr(u8),
    /// SCHED_OTHER with a nice value.
    Other(i8),
}

impl ProbePolicy {
    /// `fifo`, `rr` or `other`.
    pub fn name(&self) -> &'static str {
        match self {
            ProbePolicy::Fifo(_) => "fifo",
            ProbePolicy::Rr(_) => "rr",
            ProbePolicy::Other(_) => "other",
        }
    }

    fn kernel(&self) -> KernelPolicy {
        match *self {
            ProbePolicy::Fifo(p) => KernelPolicy::Fifo(p),
            ProbePolicy::Rr(p) => KernelPolicy::Rr(p),
            ProbePolicy::Other(n) => KernelPolicy::Other(n),
        }
    }

    fn needs_sys_nice(&self) -> bool {
        !matches!(self, ProbePolicy::Other(n) if *n >= 0)
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct LatencyConfig {
    /// Length of the run.
    pub duration: Duration,
    /// Wake-up interval.
    pub interval: Duration,
    /// Policy of the probe threads.
    pub policy: ProbePolicy,
    /// One probe thread per CPU listed (default: every CPU this process may use).
    pub cpus: Vec<usize>,
    /// Background load workers (0: none).
    pub load: usize,
    /// Shield this CPU: other threads, IRQs and unbound work move off it for the run.
    pub shield: Option<usize>,
    /// With `shield`: move only the interrupts (IRQ affinity), not threads or work.
    pub shield_irqs_only: bool,
    /// cyclictest's `-h N`: also record the cycle numbers of samples ≥ N µs (the first N).
    pub histogram: Option<usize>,
    /// PM QoS CPU latency request held for the run (µs; cyclictest's default 0); None:
    /// none (cyclictest's `--laptop`).
    pub dma_latency: Option<u32>,
    /// Failing to hold `dma_latency` is an error (asked for by value) rather than a
    /// warning (the default).
    pub dma_latency_required: bool,
}

/// One probe thread's figures.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ThreadStats {
    /// Thread index (cyclictest's `T:`).
    pub thread: usize,
    /// CPU it was pinned to.
    pub cpu: usize,
    /// Its thread id.
    pub tid: i32,
    /// Samples (wake-ups measured).
    pub samples: u64,
    /// Periods skipped because the thread woke after the next target.
    pub overruns: u64,
    /// Smallest latency.
    pub min_ns: u64,
    /// Mean.
    pub mean_ns: f64,
    /// Median (HDR bucket, 3 significant figures).
    pub p50_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Largest.
    pub max_ns: u64,
    /// `[microseconds, samples]` for every microsecond with samples (ascending).
    pub histogram_us: Vec<[u64; 2]>,
    /// With `-h N`: cycle numbers of the first N samples of N µs or more.
    pub overflow_cycles: Vec<u64>,
}

/// A run's result.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LatencyResult {
    /// `real`.
    pub mode: &'static str,
    /// Kernel release.
    pub kernel: String,
    /// CONFIG_HZ when known.
    pub hz: Option<u32>,
    /// Online CPUs.
    pub cpus_online: Vec<usize>,
    /// Probe policy (`fifo`, `rr`, `other`).
    pub policy: &'static str,
    /// RT priority (0 for `other`).
    pub priority: u8,
    /// Nice value (`other`).
    pub nice: Option<i8>,
    /// Interval.
    pub interval_ns: u64,
    /// Duration asked for.
    pub requested_duration_ns: u64,
    /// Time measured (shorter when stopped).
    pub duration_ns: u64,
    /// One entry per probe thread.
    pub threads: Vec<ThreadStats>,
    /// Background load, if any.
    pub load: Option<LoadReport>,
    /// The shield, if any.
    pub shield: Option<ShieldReport>,
    /// The PM QoS CPU latency request in force (idle states held off or not).
    pub pm_qos: PmQosReport,
    /// Per online CPU: time stolen by the hypervisor during the run (/proc/stat steal).
    pub steal_ns: Option<Vec<u64>>,
    /// Whether memory was locked.
    pub mlocked: bool,
    /// `SIGINT`, `SIGTERM`, `SIGHUP` or `RLIMIT_RTTIME` when the run was cut short.
    pub stopped_by: Option<String>,
    /// The run was cut short.
    pub partial: bool,
    /// Affinity, policy, memory lock, rlimit, load and shield all put back.
    pub restored: bool,
    /// Anything worth knowing.
    pub warnings: Vec<String>,
}

/// Why a run could not happen.
#[derive(Debug, thiserror::Error)]
pub enum LatencyError {
    /// A capability is missing.
    #[error("{0}")]
    Privilege(String),
    /// The configuration is not acceptable.
    #[error("{0}")]
    Input(String),
    /// Setting up failed.
    #[error("{0}")]
    Setup(String),
}

/// Samples of one probe thread, allocated before the run so that recording never
/// allocates.
struct Recorder {
    buckets: Vec<u64>,
    over: Vec<u64>,
    hdr: hdrhistogram::Histogram<u64>,
    min: u64,
    max: u64,
    sum: u128,
    n: u64,
    overruns: u64,
    outlier_at: Option<u64>,
    outliers: Vec<u64>,
}

impl Recorder {
    fn new(histogram: Option<usize>) -> Recorder {
        Recorder {
            buckets: vec![0; HIST_US],
            over: Vec::with_capacity(MAX_OVER),
            hdr: hdrhistogram::Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
                .expect("valid bounds"),
            min: u64::MAX,
            max: 0,
            sum: 0,
            n: 0,
            overruns: 0,
            outlier_at: histogram.map(|h| h as u64),
            outliers: Vec::with_capacity(histogram.unwrap_or(0).min(100_000)),
        }
    }

    fn record(&mut self, ns: u64, cycle: u64) {
        let us = ns / 1000;
        if (us as usize) < HIST_US {
            self.buckets[us as usize] += 1;
        } else if self.over.len() < self.over.capacity() {
            self.over.push(us);
        }
        let _ = self.hdr.record(ns.max(1));
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum += ns as u128;
        self.n += 1;
        if let Some(limit) = self.outlier_at {
            if us >= limit && self.outliers.len() < self.outliers.capacity() {
                self.outliers.push(cycle);
            }
        }
    }

    fn stats(mut self, thread: usize, cpu: usize, tid: i32) -> ThreadStats {
        let q = |h: &hdrhistogram::Histogram<u64>, x: f64, lo: u64, hi: u64| {
            h.lowest_equivalent(h.value_at_quantile(x)).clamp(lo, hi)
        };
        let (lo, hi) = if self.n == 0 {
            (0, 0)
        } else {
            (self.min, self.max)
        };
        let mut hist: Vec<[u64; 2]> = self
            .buckets
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(us, &c)| [us as u64, c])
            .collect();
        self.over.sort_unstable();
        for &us in &self.over {
            match hist.last_mut() {
                Some(last) if last[0] == us => last[1] += 1,
                _ => hist.push([us, 1]),
            }
        }
        ThreadStats {
            thread,
            cpu,
            tid,
            samples: self.n,
            overruns: self.overruns,
            min_ns: lo,
            mean_ns: if self.n > 0 {
                self.sum as f64 / self.n as f64
            } else {
                0.0
            },
            p50_ns: q(&self.hdr, 0.5, lo, hi),
            p99_ns: q(&self.hdr, 0.99, lo, hi),
            p999_ns: q(&self.hdr, 0.999, lo, hi),
            max_ns: hi,
            histogram_us: hist,
            overflow_cycles: self.outliers,
        }
    }
}

/// The CPUs online (/sys/devices/system/cpu/online).
pub fn online_cpus() -> Vec<usize> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .map(|s| shield::parse_list(&s))
        .unwrap_or_else(|_| crate::runner::host_cpus())
}

/// Check the configuration and this process's privileges; Ok(()) when the run can go.
pub fn check(cfg: &LatencyConfig) -> Result<(), LatencyError> {
    let input = |m: String| Err(LatencyError::Input(m));
    if cfg.duration.is_zero() || cfg.duration > MAX_DURATION {
        return input(format!(
            "--duration: must be between 1ns and {} s, got {:?}",
            MAX_DURATION.as_secs(),
            cfg.duration
        ));
    }
    if cfg.interval < MIN_INTERVAL || cfg.interval > MAX_INTERVAL {
        return input(format!(
            "--interval: must be between 100us and 1s, got {:?}",
            cfg.interval
        ));
    }
    if let ProbePolicy::Fifo(p) | ProbePolicy::Rr(p) = cfg.policy {
        if !(1..=99).contains(&p) {
            return input(format!("--priority: {p} is outside 1..99"));
        }
    }
    let allowed = crate::runner::host_cpus();
    if cfg.cpus.is_empty() {
        return input("--cpus: empty CPU list".into());
    }
    for c in &cfg.cpus {
        if !allowed.contains(c) {
            return input(format!(
                "--cpus: CPU {c} is not available to this process (available: {})",
                shield::format_list(&allowed)
            ));
        }
    }
    if cfg.dma_latency.is_some_and(|v| v > i32::MAX as u32) {
        return input(format!(
            "--dma-latency: {} us does not fit the kernel's 32-bit signed value",
            cfg.dma_latency.unwrap_or(0)
        ));
    }
    if cfg.load > 1024 {
        return input(format!("--load: {} workers is more than 1024", cfg.load));
    }
    if let Some(s) = cfg.shield {
        let online = online_cpus();
        if !online.contains(&s) || online.len() < 2 {
            return input(format!(
                "--shield {s}: needs CPU {s} online and another CPU for everything else (online: {})",
                shield::format_list(&online)
            ));
        }
    }
    let caps = crate::privileges::effective_mask();
    if cfg.policy.needs_sys_nice() && caps & (1 << CAP_SYS_NICE) == 0 {
        return Err(LatencyError::Privilege(format!(
            "missing capability CAP_SYS_NICE: a {} probe{} needs it. Run as root, or grant it \
             (`sudo setcap cap_sys_nice+ep $(command -v schedlab)`), or use --policy other",
            cfg.policy.name(),
            match cfg.policy {
                ProbePolicy::Other(n) => format!(" at nice {n}"),
                _ => String::new(),
            }
        )));
    }
    if cfg.shield.is_some() {
        let missing: Vec<&str> = [
            (
                CAP_DAC_OVERRIDE,
                "CAP_DAC_OVERRIDE (write /proc/irq/*/smp_affinity_list)",
            ),
            (CAP_SYS_NICE, "CAP_SYS_NICE (move other users' threads)"),
        ]
        .iter()
        .filter(|(b, _)| caps & (1 << b) == 0)
        .map(|(_, n)| *n)
        .collect();
        if !missing.is_empty() {
            return Err(LatencyError::Privilege(format!(
                "missing capability {}: --shield changes IRQ and thread affinities. Run as root",
                missing.join(" and ")
            )));
        }
    }
    Ok(())
}

/// The signals `latency` stops on (SIGHUP too, as Ctrl-C).
fn control_signals() -> libc::sigset_t {
    thread::signal_set(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGXCPU])
}

fn wait_signal(timeout: Duration) -> Option<libc::c_int> {
    thread::timed_wait(&control_signals(), timeout)
}

/// Per-CPU steal time (ns) from /proc/stat.
fn steal() -> Option<Vec<(usize, u64)>> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    let v: Vec<(usize, u64)> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let cpu: usize = f.next()?.strip_prefix("cpu")?.parse().ok()?;
            let ticks: u64 = f.nth(7)?.parse().ok()?;
            Some((cpu, ticks * 1_000_000_000 / hz))
        })
        .collect();
    Some(v)
}

struct Rttime(Option<libc::rlimit>);

impl Rttime {
    fn set() -> Rttime {
        // SAFETY: getrlimit/setrlimit on plain structs.
        unsafe {
            let mut old: libc::rlimit = std::mem::zeroed();
            if libc::getrlimit(libc::RLIMIT_RTTIME, &mut old) != 0 {
                return Rttime(None);
            }
            let new = libc::rlimit {
                rlim_cur: 2_000_000u64.min(old.rlim_max),
                rlim_max: 3_000_000u64.min(old.rlim_max),
            };
            libc::setrlimit(libc::RLIMIT_RTTIME, &new);
            Rttime(Some(old))
        }
    }
}

impl Drop for Rttime {
    fn drop(&mut self) {
        if let Some(old) = self.0 {
            // SAFETY: as above.
            unsafe { libc::setrlimit(libc::RLIMIT_RTTIME, &old) };
        }
    }
}

/// This process's own state, put back on drop.
struct Own {
    affinity: Option<Vec<usize>>,
    policy: Option<KernelPolicy>,
    mask: libc::sigset_t,
    locked: bool,
}

impl Drop for Own {
    fn drop(&mut self) {
        if self.locked {
            thread::unlock_memory();
        }
        if let Some(p) = &self.policy {
            let _ = policy::set_policy(0, p);
        }
        if let Some(a) = &self.affinity {
            let _ = policy::set_affinity(0, a);
        }
        thread::restore_signal_mask(&self.mask);
    }
}

struct Shared {
    stop: AtomicBool,
    tids: Mutex<Vec<i32>>,
    finished: AtomicUsize,
    setup_error: Mutex<Option<String>>,
}

impl Shared {
    fn stop_all(&self) {
        self.stop.store(true, Ordering::SeqCst);
        for &tid in self.tids.lock().unwrap().iter() {
            // Demote first: a runaway RT thread leaves the CPU now.
            let _ = policy::set_policy(tid, &KernelPolicy::Other(0));
            thread::signal_thread(tid, libc::SIGUSR1);
        }
    }
}

/// Run the probe.
pub fn run(cfg: &LatencyConfig) -> Result<LatencyResult, LatencyError> {
    check(cfg)?;
    let what = match cfg.shield {
        Some(cpu) => format!("latency --shield {cpu}"),
        None => "latency".to_string(),
    };
    let lock = crate::machine_lock::MachineLock::acquire(&what).map_err(LatencyError::Setup)?;
    let interval = cfg.interval.as_nanos() as u64;
    let duration = cfg.duration.as_nanos() as u64;
    let online = online_cpus();
    let mut warnings = Vec::new();
    warnings.extend(lock.recovered.clone());
    // Control signals are blocked before any thread exists, so every thread inherits it.
    let set = control_signals();
    // SAFETY: valid sets.
    let mask = unsafe {
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        old
    };
    thread::install_wake_handler();
    let mut own = Own {
        affinity: policy::get_affinity(0).ok(),
        policy: policy::get_policy(0).ok(),
        mask,
        locked: false,
    };
    match thread::lock_memory() {
        None => own.locked = true,
        Some(w) => warnings.push(w),
    }
    let rttime = Rttime::set();
    // Held until this function returns; the kernel withdraws it if the process dies.
    let qos = match cfg.dma_latency.map(PmQosRequest::hold) {
        None => None,
        Some(Ok(q)) => Some(q),
        Some(Err(e)) if cfg.dma_latency_required => return Err(LatencyError::Privilege(e)),
        Some(Err(e)) => {
            warnings.push(format!("{e}; measured without it"));
            None
        }
    };
    let pm_qos = PmQosReport {
        dma_latency_us: qos.as_ref().map(|q| q.value_us),
        limit_us: crate::pm_qos::current_limit_us(),
    };
    let steal0 = steal();

    let mut shield = match cfg.shield {
        Some(cpu) => {
            Some(Shield::apply(cpu, &online, !cfg.shield_irqs_only).map_err(LatencyError::Setup)?)
        }
        None => None,
    };
    if let Some(s) = &shield {
        if let Some(r) = &s.report().recovered {
            warnings.push(r.clone());
        }
    }
    let load_cpus: Vec<usize> = online
        .iter()
        .copied()
        .filter(|&c| cfg.shield_irqs_only || Some(c) != cfg.shield)
        .collect();
    let mut load = if cfg.load > 0 {
        Some(
            Load::start(cfg.load, &load_cpus, cfg.duration + Duration::from_secs(2))
                .map_err(LatencyError::Setup)?,
        )
    } else {
        None
    };
    // Let the load settle on its CPUs before measuring.
    if load.is_some() {
        std::thread::sleep(Duration::from_millis(100));
    }

    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        tids: Mutex::new(Vec::new()),
        finished: AtomicUsize::new(0),
        setup_error: Mutex::new(None),
    });
    let n = cfg.cpus.len();
    let ready = Arc::new(Barrier::new(n + 1));
    let go = Arc::new(Barrier::new(n + 1));
    let t0_cell = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut handles = Vec::with_capacity(n);
    for (k, &cpu) in cfg.cpus.iter().enumerate() {
        let (shared, ready, go, t0_cell) =
            (shared.clone(), ready.clone(), go.clone(), t0_cell.clone());
        let pol = cfg.policy;
        let mut rec = Recorder::new(cfg.histogram);
        let h = thread::spawn(format!("sl-probe{k}"), move || {
            let tid = policy::gettid();
            shared.tids.lock().unwrap().push(tid);
            let setup = policy::set_affinity(0, &[cpu])
                .map_err(|e| format!("CPU {cpu}: cannot pin the probe thread: {e}"))
                .and_then(|()| {
                    policy::set_policy(0, &pol.kernel())
                        .map_err(|e| format!("CPU {cpu}: cannot set {}: {e}", pol.kernel().name()))
                });
            if let Err(e) = setup {
                *shared.setup_error.lock().unwrap() = Some(e);
            }
            ready.wait();
            go.wait();
            let t0 = t0_cell.load(Ordering::SeqCst);
            let end = t0 + duration;
            let mut next = t0 + interval;
            let mut cycle = 0u64;
            while next <= end && !shared.stop.load(Ordering::SeqCst) {
                if !sleep_until(next) {
                    continue; // interrupted: the loop checks the stop flag
                }
                let now = now_ns();
                rec.record(now.saturating_sub(next), cycle);
                cycle += 1;
                next += interval;
                while next <= now {
                    next += interval;
                    rec.overruns += 1;
                }
            }
            let _ = policy::set_policy(0, &KernelPolicy::Other(0));
            shared.finished.fetch_add(1, Ordering::SeqCst);
            (rec, tid)
        })
        .map_err(|e| LatencyError::Setup(format!("cannot start a probe thread: {e}")))?;
        handles.push(h);
    }
    ready.wait();
    let setup_error = shared.setup_error.lock().unwrap().take();
    if setup_error.is_some() {
        shared.stop.store(true, Ordering::SeqCst);
    }
    let t0 = now_ns() + 20_000_000;
    t0_cell.store(t0, Ordering::SeqCst);
    go.wait();

    // Wait for the end of the run or a control signal.
    let mut stopped_by = None;
    let hard_end = t0 + duration + 2_000_000_000;
    while shared.finished.load(Ordering::SeqCst) < n {
        let now = now_ns();
        if now >= hard_end {
            stopped_by = Some("watchdog".to_string());
            shared.stop_all();
            break;
        }
        let wait = Duration::from_nanos((hard_end - now).min(50_000_000));
        match wait_signal(wait) {
            Some(libc::SIGINT) => stopped_by = Some("SIGINT".into()),
            Some(libc::SIGTERM) => stopped_by = Some("SIGTERM".into()),
            Some(libc::SIGHUP) => stopped_by = Some("SIGHUP".into()),
            Some(libc::SIGXCPU) => stopped_by = Some("RLIMIT_RTTIME".into()),
            _ => continue,
        }
        shared.stop_all();
        break;
    }
    let stop_at = now_ns();
    let mut threads = Vec::with_capacity(n);
    for (k, h) in handles.into_iter().enumerate() {
        // Wake threads still asleep (a stop between their check and their sleep).
        while !h.is_finished() {
            for &tid in shared.tids.lock().unwrap().iter() {
                thread::signal_thread(tid, libc::SIGUSR1);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        if let Ok((rec, tid)) = h.join() {
            threads.push(rec.stats(k, cfg.cpus[k], tid));
        }
    }
    if let Some(e) = setup_error {
        return Err(LatencyError::Setup(e));
    }
    let load_report = load.as_ref().map(Load::report);
    if let Some(l) = load.as_mut() {
        l.stop();
    }
    let shield_report = shield.as_mut().map(|s| {
        s.restore();
        s.report()
    });
    let steal_ns = match (steal0, steal()) {
        (Some(a), Some(b)) => Some(
            online
                .iter()
                .map(|c| {
                    let x = a.iter().find(|e| e.0 == *c).map_or(0, |e| e.1);
                    let y = b.iter().find(|e| e.0 == *c).map_or(0, |e| e.1);
                    y.saturating_sub(x)
                })
                .collect(),
        ),
        _ => None,
    };
    let mlocked = own.locked;
    drop(qos);
    drop(rttime);
    drop(own);
    let restored_self = policy::get_policy(0).is_ok();
    let restored = restored_self && shield_report.as_ref().is_none_or(|s| s.restored);
    let kernel = policy::kernel_release();
    let measured = if stopped_by.is_some() {
        stop_at.saturating_sub(t0).min(duration)
    } else {
        duration
    };
    Ok(LatencyResult {
        mode: "real",
        hz: crate::measure::config_hz(&kernel),
        kernel,
        cpus_online: online,
        policy: cfg.policy.name(),
        priority: match cfg.policy {
            ProbePolicy::Fifo(p) | ProbePolicy::Rr(p) => p,
            ProbePolicy::Other(_) => 0,
        },
        nice: match cfg.policy {
            ProbePolicy::Other(n) => Some(n),
            _ => None,
        },
        interval_ns: interval,
        requested_duration_ns: duration,
        duration_ns: measured,
        threads,
        load: load_report,
        shield: shield_report,
        pm_qos,
        steal_ns,
        mlocked,
        partial: stopped_by.is_some(),
        stopped_by,
        restored,
        warnings,
    })
}

/// Whether this process could run a real-time probe (CAP_SYS_NICE).
pub fn can_run_rt() -> bool {
    Privileges::current().is_ok_and(|p| p.sys_nice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorder_keeps_exact_microseconds_and_percentiles_within_min_max() {
        let mut r = Recorder::new(Some(100));
        for (i, ns) in [5_400u64, 5_900, 12_000, 150_000, 30_000_000]
            .into_iter()
            .enumerate()
        {
            r.record(ns, i as u64);
        }
        let s = r.stats(0, 1, 42);
        assert_eq!(s.samples, 5);
        assert_eq!((s.min_ns, s.max_ns), (5_400, 30_000_000));
        assert_eq!(s.histogram_us, vec![[5, 2], [12, 1], [150, 1], [30_000, 1]]);
        assert_eq!(s.overflow_cycles, vec![3, 4]);
        assert!(s.p50_ns >= s.min_ns && s.p999_ns <= s.max_ns);
        assert!((s.mean_ns - 6_034_660.0).abs() < 1.0);
    }

    #[test]
    fn bad_configurations_are_refused_before_anything_runs() {
        let cfg = LatencyConfig {
            duration: Duration::from_secs(7200),
            interval: Duration::from_millis(1),
            policy: ProbePolicy::Other(0),
            cpus: vec![0],
            load: 0,
            shield: None,
            shield_irqs_only: false,
            histogram: None,
            dma_latency: None,
            dma_latency_required: false,
        };
        let e = check(&cfg).unwrap_err().to_string();
        assert!(e.contains("--duration"), "{e}");
        let e = check(&LatencyConfig {
            duration: Duration::from_secs(1),
            interval: Duration::from_micros(10),
            ..cfg.clone()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("--interval"), "{e}");
        let e = check(&LatencyConfig {
            duration: Duration::from_secs(1),
            cpus: vec![4096],
            ..cfg.clone()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("CPU 4096"), "{e}");
        let e = check(&LatencyConfig {
            duration: Duration::from_secs(1),
            dma_latency: Some(u32::MAX),
            ..cfg.clone()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("--dma-latency") && e.contains("32-bit"), "{e}");
    }
}
