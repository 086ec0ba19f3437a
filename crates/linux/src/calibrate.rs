//! Measure this machine's scheduling costs for the simulator's `platform:` block:
//!
//! - **context switch**: two threads pinned to the same CPU ping-pong one byte through
//!   two pipes; a round trip is two switches (plus two pipe writes and reads, which a
//!   real switch between tasks also pays in some form). Median of many round trips / 2.
//! - **migration**: a thread moves itself to the other CPU with `sched_setaffinity`
//!   and re-reads a 64 KiB working set there; the cost is the median of that minus the
//!   same sequence staying on its CPU (syscall and the re-read of a warm set cancel).
//! - **wake-up latency**: a SCHED_FIFO thread sleeps to absolute 1 ms instants with
//!   `clock_nanosleep(TIMER_ABSTIME)` and records how late it wakes (cyclictest's
//!   measure): median, p99 and max — without a PM QoS request (idle states allowed),
//!   then again holding `/dev/cpu_dma_latency` at 0 (idle states held off, as cyclictest
//!   does); the difference of the medians is the cost of leaving an idle state, written
//!   as the platform's `idle_states` entry.
//! - **per-job cost**: a SCHED_FIFO thread runs the runner's job loop (sleep to an absolute
//!   release with `clock_nanosleep`, read the clocks and the switch counters, burn 200 µs
//!   of thread CPU time reading its own CPU clock, read them again) 1 ms apart; the CPU
//!   time the thread used beyond the burn, median per job, is what each job costs a
//!   real run beyond its work — the kernel charges all of it to the thread and so to its
//!   SCHED_DEADLINE budget. It is written as `job_costs.per_job`, with
//!   `reads_cpu_clock: true` (the burn loop's clock reads account the task at once). How
//!   late the thread runs after each release is timed twice — with a SCHED_OTHER hog on
//!   its CPU (the timer interrupts a running task: `wakeup_latency` and `_jitter`, 5th
//!   to 95th percentile) and alone (the CPU must leave idle first: `wakeup_from_idle`,
//!   the difference of the medians).
//!
//! Real-time policies are used when the process may (CAP_SYS_NICE), so that other
//! threads do not get in the way; otherwise SCHED_OTHER, and the result says so.

use crate::job::{burn, now_ns, sleep_until, thread_cpu_ns, BurnCtx, JobMode};
use crate::policy::{self, KernelPolicy};
use crate::privileges::Privileges;
use crate::thread;
use std::time::Duration;

/// Calibration results (ns).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Calibration {
    /// Kernel release.
    pub kernel: String,
    /// CPUs used.
    pub cpus: usize,
    /// CONFIG_HZ, when known.
    pub hz: Option<u32>,
    /// One context switch (median).
    pub context_switch_ns: u64,
    /// Its 99th percentile.
    pub context_switch_p99_ns: u64,
    /// Extra cost of resuming on another CPU (median), None on one CPU.
    pub migration_ns: Option<u64>,
    /// Wake-up latency of a timer sleep: median, p99, max.
    pub wakeup_median_ns: u64,
    /// p99 wake-up latency.
    pub wakeup_p99_ns: u64,
    /// Largest wake-up latency seen.
    pub wakeup_max_ns: u64,
    /// Median wake-up latency with the PM QoS request 0 held (None: it could not be).
    pub wakeup_held_median_ns: Option<u64>,
    /// Cost of leaving an idle state: median without the request − median with it (≥ 0).
    pub idle_exit_ns: Option<u64>,
    /// Why the request could not be held, if it could not.
    pub pm_qos_error: Option<String>,
    /// CPU time a job of the runner costs beyond its work (median per job).
    pub job_overhead_ns: u64,
    /// Of which the `clock_nanosleep` round trip (syscall, switch out and back in).
    pub job_sleep_ns: u64,
    /// How late the job loop's thread runs after its release when its CPU is busy
    /// (another task runs there): 5th percentile.
    pub job_wake_p5_ns: u64,
    /// 95th percentile.
    pub job_wake_p95_ns: u64,
    /// How much later it runs when its CPU was idle (median idle − median busy).
    pub job_wake_from_idle_ns: u64,
    /// Whether SCHED_FIFO was used for the measuring threads.
    pub realtime: bool,
}

fn pct(v: &mut [u64], p: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    let i = ((v.len() - 1) as f64 * p).round() as usize;
    v[i]
}

fn pipe() -> [libc::c_int; 2] {
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    unsafe { libc::pipe(fds.as_mut_ptr()) };
    fds
}

fn rw(fd_w: libc::c_int, fd_r: libc::c_int) {
    let b = [1u8];
    let mut r = [0u8];
    // SAFETY: one byte from/to valid buffers on our pipes.
    unsafe {
        libc::write(fd_w, b.as_ptr() as *const libc::c_void, 1);
        libc::read(fd_r, r.as_mut_ptr() as *mut libc::c_void, 1);
    }
}

fn close(fds: [libc::c_int; 2]) {
    for f in fds {
        // SAFETY: our descriptors.
        unsafe { libc::close(f) };
    }
}

/// Per-switch cost from a pipe ping-pong on `cpu` (`rounds` round trips, in batches).
fn ping_pong(cpu: usize, rounds: usize, rt: bool) -> (u64, u64) {
    let a = pipe();
    let b = pipe();
    let (a_r, a_w, b_r, b_w) = (a[0], a[1], b[0], b[1]);
    let partner = thread::spawn("sl-pong".into(), move || {
        let _ = policy::set_affinity(0, &[cpu]);
        if rt {
            let _ = policy::set_policy(0, &KernelPolicy::Fifo(50));
        }
        for _ in 0..rounds + 1 {
            rw(b_w, a_r); // wait for a ping, answer
        }
        let _ = policy::set_policy(0, &KernelPolicy::Other(0));
    })
    .expect("thread");
    let _ = policy::set_affinity(0, &[cpu]);
    if rt {
        let _ = policy::set_policy(0, &KernelPolicy::Fifo(50));
    }
    // Batches of 100 round trips: per-switch = batch time / 200.
    let mut samples = Vec::with_capacity(rounds / 100 + 1);
    // Warm up with one round trip.
    let mut r = [0u8];
    let b1 = [1u8];
    // SAFETY: as in rw.
    unsafe {
        libc::write(a_w, b1.as_ptr() as *const libc::c_void, 1);
        libc::read(b_r, r.as_mut_ptr() as *mut libc::c_void, 1);
    }
    let mut left = rounds;
    while left > 0 {
        let k = left.min(100);
        let t = now_ns();
        for _ in 0..k {
            rw(a_w, b_r);
        }
        samples.push((now_ns() - t) / (2 * k as u64));
        left -= k;
    }
    let _ = partner.join();
    close(a);
    close(b);
    let med = pct(&mut samples, 0.5);
    let p99 = pct(&mut samples, 0.99);
    (med, p99)
}

fn touch(buf: &mut [u8]) -> u64 {
    let mut s = 0u64;
    for i in (0..buf.len()).step_by(64) {
        buf[i] = buf[i].wrapping_add(1);
        s += buf[i] as u64;
    }
    std::hint::black_box(s)
}

/// Extra cost of continuing on another CPU.
fn migration(c0: usize, c1: usize, rounds: usize) -> u64 {
    let mut buf = vec![0u8; 64 * 1024];
    let mut same = Vec::with_capacity(rounds);
    let mut moved = Vec::with_capacity(rounds);
    let _ = policy::set_affinity(0, &[c0]);
    touch(&mut buf);
    for i in 0..rounds {
        // Alternate: stay (c0 → c0) or move (c0 → c1 → back at the next round).
        let t = now_ns();
        let _ = policy::set_affinity(0, &[c0]);
        touch(&mut buf);
        same.push(now_ns() - t);
        let target = if i % 2 == 0 { c1 } else { c0 };
        let t = now_ns();
        let _ = policy::set_affinity(0, &[target]);
        touch(&mut buf);
        moved.push(now_ns() - t);
        let _ = policy::set_affinity(0, &[c0]);
        touch(&mut buf);
    }
    pct(&mut moved, 0.5).saturating_sub(pct(&mut same, 0.5))
}

/// Timer wake-up latency over `samples` 1 ms sleeps.
fn wakeups(samples: usize, rt: bool) -> (u64, u64, u64) {
    let h = thread::spawn("sl-wakeup".into(), move || {
        if rt {
            let _ = policy::set_policy(0, &KernelPolicy::Fifo(90));
        }
        let mut lat = Vec::with_capacity(samples);
        let mut t = now_ns() + 1_000_000;
        for _ in 0..samples {
            sleep_until(t);
            lat.push(now_ns().saturating_sub(t));
            t += 1_000_000;
        }
        let _ = policy::set_policy(0, &KernelPolicy::Other(0));
        let max = lat.iter().copied().max().unwrap_or(0);
        (pct(&mut lat, 0.5), pct(&mut lat, 0.99), max)
    })
    .expect("thread");
    h.join().unwrap_or((0, 0, 0))
}

/// What the runner's job loop measures per job (ns).
struct JobLoop {
    /// Median CPU time per job beyond the burn.
    overhead: u64,
    /// Median `clock_nanosleep` round trip (thread CPU time).
    sleep: u64,
    /// 5th, 50th and 95th percentiles of how late the thread runs after its release.
    wake: (u64, u64, u64),
}

/// The runner's job loop, `samples` jobs of 200 µs released 1 ms apart; `busy`: with a
/// SCHED_OTHER hog on the same CPU, so that each release's timer interrupts a running
/// task instead of waking an idle CPU.
fn job_loop(cpu: usize, samples: usize, rt: bool, busy: bool) -> JobLoop {
    let hog_stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Bounded even if nobody stops it: the loop's length and a second.
    let hog_end = now_ns() + samples as u64 * 1_000_000 + 1_000_000_000;
    let hog = busy.then(|| {
        let stop = hog_stop.clone();
        thread::spawn("sl-jobhog".into(), move || {
            // A thread inherits its creator's policy, here SCHED_FIFO: the hog must be
            // an ordinary task, or it would never let the creator run again.
            if policy::set_policy(0, &KernelPolicy::Other(0)).is_err() {
                return;
            }
            let _ = policy::set_affinity(0, &[cpu]);
            let mut acc = 1u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && now_ns() < hog_end {
                for _ in 0..1000 {
                    acc =
                        std::hint::black_box(acc.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            }
        })
    });
    let h = thread::spawn("sl-jobcost".into(), move || {
        let _ = policy::set_affinity(0, &[cpu]);
        if rt {
            let _ = policy::set_policy(0, &KernelPolicy::Fifo(90));
        }
        let stop = std::sync::atomic::AtomicBool::new(false);
        let mut per_cpu = vec![0u64; libc::CPU_SETSIZE as usize];
        let (mut total, mut sleep) = (Vec::with_capacity(samples), Vec::with_capacity(samples));
        let mut late = Vec::with_capacity(samples);
        let mut release = now_ns() + 1_000_000;
        let mut prev = thread_cpu_ns();
        for _ in 0..samples {
            let before_sleep = thread_cpu_ns();
            sleep_until(release);
            let woke = thread_cpu_ns();
            // What the runner's worker does around each job (runner.rs `worker`).
            let start = now_ns();
            late.push(start.saturating_sub(release));
            let _ = thread::thread_switches();
            let b = burn(
                200_000,
                JobMode::ThreadCpu,
                &mut BurnCtx {
                    stop: &stop,
                    until: u64::MAX,
                    progress: None,
                    per_cpu: &mut per_cpu,
                },
            );
            let _fin = now_ns();
            let _ = thread::thread_switches();
            let end = thread_cpu_ns();
            total.push((end - prev).saturating_sub(b.cpu_ns));
            sleep.push(woke - before_sleep);
            prev = end;
            release += 1_000_000;
        }
        let _ = policy::set_policy(0, &KernelPolicy::Other(0));
        JobLoop {
            overhead: pct(&mut total, 0.5),
            sleep: pct(&mut sleep, 0.5),
            wake: (
                pct(&mut late, 0.05),
                pct(&mut late, 0.5),
                pct(&mut late, 0.95),
            ),
        }
    })
    .expect("thread");
    let r = h.join().unwrap_or(JobLoop {
        overhead: 0,
        sleep: 0,
        wake: (0, 0, 0),
    });
    hog_stop.store(true, std::sync::atomic::Ordering::Relaxed);
    if let Some(Ok(h)) = hog {
        let _ = h.join();
    }
    r
}

/// The deepest enabled cpuidle state of CPU 0 (name, target residency in ns), if listed.
fn deepest_idle_state() -> Option<(String, u64)> {
    let mut deepest = None;
    for i in 0..10 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cpuidle/state{i}");
        let Ok(name) = std::fs::read_to_string(format!("{dir}/name")) else {
            break;
        };
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).unwrap_or_default();
        if read("disable").trim() == "1" {
            continue;
        }
        let residency_us: u64 = read("residency").trim().parse().unwrap_or(0);
        deepest = Some((name.trim().to_string(), residency_us * 1000));
    }
    deepest
}

/// Measure this machine (about 3 s).
pub fn calibrate() -> Calibration {
    // Another schedlab real run (real-time threads, a shield) would be measured too: wait
    // for it. Without the lock (not root, or waited too long) the measurement goes on.
    let _lock = crate::machine_lock::MachineLock::acquire("calibrate").ok();
    let rt = Privileges::current().is_ok_and(|p| p.sys_nice);
    let cpus = crate::runner::host_cpus();
    let saved_aff = policy::get_affinity(0).ok();
    let saved_pol = policy::get_policy(0).ok();
    thread::lock_memory();
    let (cs, cs99) = ping_pong(cpus[0], 20_000, rt);
    let mig = (cpus.len() > 1).then(|| migration(cpus[0], cpus[1], 400));
    let (wm, w99, wmax) = wakeups(500, rt);
    let jl = job_loop(cpus[0], 300, rt, false);
    let busy = job_loop(cpus[0], 300, rt, true);
    let (held, pm_qos_error) = match crate::pm_qos::PmQosRequest::hold(0) {
        Ok(q) => {
            let (m, _, _) = wakeups(500, rt);
            drop(q);
            (Some(m), None)
        }
        Err(e) => (None, Some(e)),
    };
    thread::unlock_memory();
    if let Some(p) = saved_pol {
        let _ = policy::set_policy(0, &p);
    }
    if let Some(a) = saved_aff {
        let _ = policy::set_affinity(0, &a);
    }
    std::thread::sleep(Duration::from_millis(1));
    let kernel = policy::kernel_release();
    Calibration {
        hz: crate::measure::config_hz(&kernel),
        kernel,
        cpus: cpus.len(),
        context_switch_ns: cs,
        context_switch_p99_ns: cs99,
        migration_ns: mig,
        wakeup_median_ns: wm,
        wakeup_p99_ns: w99,
        wakeup_max_ns: wmax,
        wakeup_held_median_ns: held,
        idle_exit_ns: held.map(|h| wm.saturating_sub(h)),
        pm_qos_error,
        job_overhead_ns: jl.overhead,
        job_sleep_ns: jl.sleep,
        job_wake_p5_ns: busy.wake.0,
        job_wake_p95_ns: busy.wake.2,
        job_wake_from_idle_ns: jl.wake.1.saturating_sub(busy.wake.1),
        realtime: rt,
    }
}

/// A duration string the workload format reads (`2500ns`, `15.8us`).
fn dur(ns: u64) -> String {
    if ns < 10_000 {
        format!("{ns}ns")
    } else {
        let us = format!("{:.1}", ns as f64 / 1000.0);
        format!("{}us", us.trim_end_matches(".0"))
    }
}

impl Calibration {
    /// A `platform:` block for a workload file, with comments saying what was measured.
    pub fn platform_yaml(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!(
            "# Measured by `schedlab calibrate` on kernel {} ({} CPUs{}).\n",
            self.kernel,
            self.cpus,
            if self.realtime {
                ", SCHED_FIFO measuring threads"
            } else {
                ", SCHED_OTHER: no CAP_SYS_NICE"
            }
        ));
        s.push_str(&format!(
            "# context switch: pipe ping-pong on one CPU, median {} (p99 {}) per switch\n",
            dur(self.context_switch_ns),
            dur(self.context_switch_p99_ns)
        ));
        if let Some(m) = self.migration_ns {
            s.push_str(&format!(
                "# migration: resume on the other CPU and re-read 64 KiB, median extra {}\n",
                dur(m)
            ));
        }
        s.push_str(&format!(
            "# timer wake-up latency (not a platform field; a job's release is this late): median {}, p99 {}, max {}\n",
            dur(self.wakeup_median_ns),
            dur(self.wakeup_p99_ns),
            dur(self.wakeup_max_ns)
        ));
        s.push_str("# Paste into a workload, or pass to `schedlab compare --platform FILE`.\n");
        s.push_str("platform:\n");
        s.push_str(&format!("  cpus: {}\n", self.cpus));
        if let Some(hz) = self.hz {
            s.push_str(&format!("  hz: {hz}\n"));
        }
        s.push_str(&format!(
            "  context_switch: {}\n",
            dur(self.context_switch_ns.max(1))
        ));
        if let Some(m) = self.migration_ns {
            s.push_str(&format!("  migration: {}\n", dur(m)));
        }
        s.push_str(&self.idle_yaml(deepest_idle_state()));
        s.push_str(&self.job_costs_yaml());
        s
    }

    /// The `job_costs` lines: the runner's per-job CPU time, and budgets enforced at once.
    fn job_costs_yaml(&self) -> String {
        format!(
            "# per job: the runner's job loop uses {} of CPU beyond its work ({} of it the clock_nanosleep round trip);\n\
             # its thread runs {} to {} after its release on a busy CPU (5th to 95th percentile), {} later from an idle one\n\
             \x20 job_costs: {{ per_job: {}, reads_cpu_clock: true, wakeup_latency: {}, wakeup_jitter: {}, wakeup_from_idle: {} }}\n",
            dur(self.job_overhead_ns),
            dur(self.job_sleep_ns),
            dur(self.job_wake_p5_ns),
            dur(self.job_wake_p95_ns),
            dur(self.job_wake_from_idle_ns),
            dur(self.job_overhead_ns.max(1)),
            dur(self.job_wake_p5_ns),
            dur(self.job_wake_p95_ns.saturating_sub(self.job_wake_p5_ns)),
            dur(self.job_wake_from_idle_ns)
        )
    }

    /// The `idle_states` lines: one state whose exit latency is the measured difference,
    /// named and with the residency of the deepest cpuidle state listed (or, without
    /// cpuidle, a residency equal to the exit latency).
    fn idle_yaml(&self, deepest: Option<(String, u64)>) -> String {
        let (Some(exit), Some(held)) = (self.idle_exit_ns, self.wakeup_held_median_ns) else {
            return format!(
                "# idle exit cost not measured: {}\n",
                self.pm_qos_error.as_deref().unwrap_or("no PM QoS request")
            );
        };
        let mut s = format!(
            "# idle exit: timer wake-up median {} without a PM QoS request, {} holding /dev/cpu_dma_latency at 0\n",
            dur(self.wakeup_median_ns),
            dur(held)
        );
        if exit == 0 {
            s.push_str(
                "# no idle exit cost measured (the CPU may not have idled: a busy machine)\n",
            );
            return s;
        }
        let (name, residency) = deepest.unwrap_or_else(|| ("idle".into(), exit));
        s.push_str(&format!(
            "  idle_states: [{{ name: {name:?}, exit_latency: {}, target_residency: {} }}]\n",
            dur(exit),
            dur(residency.max(1))
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_in_the_workload_format() {
        assert_eq!(dur(2500), "2500ns");
        assert_eq!(dur(12_000), "12us");
        assert_eq!(dur(123_456), "123.5us");
        assert_eq!(schedlab_model::parse_duration(&dur(15_758)), Ok(15_800));
    }

    #[test]
    fn the_idle_exit_cost_is_written_as_an_idle_state_the_workload_format_reads() {
        let mut c = Calibration {
            kernel: "6.1".into(),
            cpus: 2,
            hz: Some(250),
            context_switch_ns: 3000,
            context_switch_p99_ns: 5000,
            migration_ns: None,
            wakeup_median_ns: 48_000,
            wakeup_p99_ns: 90_000,
            wakeup_max_ns: 900_000,
            wakeup_held_median_ns: Some(19_000),
            idle_exit_ns: Some(29_000),
            pm_qos_error: None,
            job_overhead_ns: 21_000,
            job_sleep_ns: 9_000,
            job_wake_p5_ns: 20_000,
            job_wake_p95_ns: 50_000,
            job_wake_from_idle_ns: 12_000,
            realtime: true,
        };
        let y = c.idle_yaml(Some(("haltpoll idle".into(), 1000)));
        assert!(
            y.contains(r#"idle_states: [{ name: "haltpoll idle", exit_latency: 29us, target_residency: 1000ns }]"#),
            "{y}"
        );
        let w = schedlab_model::Workload::parse_str(
            &format!("platform:\n  cpus: 1\n{y}duration: 1s\ntasks:\n  - {{ name: p, probe: {{ interval: 1ms }} }}\n"),
            std::path::Path::new("p.yaml"),
            &schedlab_model::Overrides::default(),
        )
        .unwrap();
        assert_eq!(w.platform.idle_states[0].exit_latency, 29_000);
        assert_eq!(
            w.platform.job_costs,
            schedlab_model::job_costs::JobCosts::default()
        );
        let j = c.job_costs_yaml();
        let w = schedlab_model::Workload::parse_str(
            &format!("platform:\n  cpus: 1\n{j}duration: 1s\ntasks:\n  - {{ name: p, runtime: 1ms, period: 10ms }}\n"),
            std::path::Path::new("p.yaml"),
            &schedlab_model::Overrides::default(),
        )
        .unwrap();
        assert_eq!(w.platform.job_costs.per_job, 21_000);
        assert!(w.platform.job_costs.reads_cpu_clock);
        assert_eq!(
            (
                w.platform.job_costs.wakeup_latency,
                w.platform.job_costs.wakeup_jitter
            ),
            (20_000, 30_000)
        );
        c.idle_exit_ns = Some(0);
        assert!(!c.idle_yaml(None).contains("idle_states:"));
        c.idle_exit_ns = None;
        c.wakeup_held_median_ns = None;
        c.pm_qos_error = Some("permission denied".into());
        assert!(c
            .idle_yaml(None)
            .contains("not measured: permission denied"));
    }

    #[test]
    fn the_busy_job_loop_ends_even_when_started_from_a_realtime_thread() {
        // calibrate's own thread is SCHED_FIFO and pinned by then; the hog it starts
        // must not inherit that, or it would never let it run again.
        let cpu = crate::runner::host_cpus()[0];
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = policy::set_affinity(0, &[cpu]);
            let rt = policy::set_policy(0, &KernelPolicy::Fifo(10)).is_ok();
            let r = job_loop(cpu, 20, rt, true);
            let _ = policy::set_policy(0, &KernelPolicy::Other(0));
            let _ = tx.send((r.wake, r.overhead));
        });
        let ((p5, p50, p95), overhead) = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the job loop ended");
        assert!(p5 <= p50 && p50 <= p95 && p95 > 0, "{p5} {p50} {p95}");
        assert!(overhead > 0);
    }

    #[test]
    fn ping_pong_measures_something() {
        let (m, p) = ping_pong(crate::runner::host_cpus()[0], 400, false);
        assert!(m > 0 && p >= m);
    }
}
