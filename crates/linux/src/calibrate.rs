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
//!   measure): median, p99 and max.
//!
//! Real-time policies are used when the process may (CAP_SYS_NICE), so that other
//! threads do not get in the way; otherwise SCHED_OTHER, and the result says so.

use crate::job::{now_ns, sleep_until};
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

/// Measure this machine (about 1.5 s).
pub fn calibrate() -> Calibration {
    let rt = Privileges::current().is_ok_and(|p| p.sys_nice);
    let cpus = crate::runner::host_cpus();
    let saved_aff = policy::get_affinity(0).ok();
    let saved_pol = policy::get_policy(0).ok();
    thread::lock_memory();
    let (cs, cs99) = ping_pong(cpus[0], 20_000, rt);
    let mig = (cpus.len() > 1).then(|| migration(cpus[0], cpus[1], 400));
    let (wm, w99, wmax) = wakeups(500, rt);
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
    fn ping_pong_measures_something() {
        let (m, p) = ping_pong(crate::runner::host_cpus()[0], 400, false);
        assert!(m > 0 && p >= m);
    }
}
