//! What a job does: burn CPU until it has consumed its execution time.
//!
//! The default ([`JobMode::ThreadCpu`]) spins until `CLOCK_THREAD_CPUTIME_ID` has advanced
//! by C, so a job consumes exactly C of CPU time whatever the CPU's speed: on these VMs a
//! fixed busy loop drifts 30-50% in speed within a minute, so a loop calibrated at start
//! (rt-app style) makes a "60 ms" job take 60-90 ms of CPU. [`JobMode::Loop`] is that
//! calibrated loop, offered for comparison with rt-app, never the default.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// How a job consumes its execution time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JobMode {
    /// Spin until the thread's CPU clock advanced by C (default).
    ThreadCpu,
    /// Run a loop calibrated at start: `iters_per_us` iterations per microsecond.
    Loop {
        /// Calibration result.
        iters_per_us: f64,
    },
}

impl JobMode {
    /// `thread-cpu` or `loop`.
    pub fn name(&self) -> &'static str {
        match self {
            JobMode::ThreadCpu => "thread-cpu",
            JobMode::Loop { .. } => "loop",
        }
    }
}

/// CLOCK_MONOTONIC in ns.
pub fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// The calling thread's CPU time in ns.
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// Read a clock in ns.
pub fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The CPU the calling thread runs on.
pub fn current_cpu() -> usize {
    // SAFETY: no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    c.max(0) as usize
}

/// Sleep until CLOCK_MONOTONIC reaches `t` (TIMER_ABSTIME). Returns false when
/// interrupted by a signal before `t`.
pub fn sleep_until(t: u64) -> bool {
    let ts = libc::timespec {
        tv_sec: (t / 1_000_000_000) as libc::time_t,
        tv_nsec: (t % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: valid timespec; no remaining-time pointer with TIMER_ABSTIME.
    let r = unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
    r == 0
}

/// A few ns of work between clock reads.
#[inline(always)]
fn spin(n: u32, acc: &mut u64) {
    for i in 0..n {
        *acc = acc
            .wrapping_mul(6364136223846793005)
            .wrapping_add(i as u64 | 1);
    }
    std::hint::black_box(acc);
}

/// Spin iterations between two clock reads.
const SPIN: u32 = 64;

/// How a burn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BurnEnd {
    /// The execution time was consumed.
    Done,
    /// The stop flag was raised.
    Stopped,
    /// `until` (the end of the run or the job's deadline) was reached first.
    Cut,
}

/// What a burn observed.
#[derive(Debug, Clone, Copy)]
pub struct Burn {
    /// How it ended.
    pub end: BurnEnd,
    /// Thread CPU time consumed (ns).
    pub cpu_ns: u64,
    /// Times the CPU changed between two samples (migrations within the job).
    pub migrations: u32,
}

/// Where a burn reports to while it runs.
pub struct BurnCtx<'a> {
    /// Raised to stop at once.
    pub stop: &'a AtomicBool,
    /// CLOCK_MONOTONIC instant at which to give up.
    pub until: u64,
    /// Published CPU time consumed by the job so far (for the dispatcher), if any.
    pub progress: Option<&'a AtomicU64>,
    /// CPU time consumed per CPU (attributed to the CPU sampled before each slice).
    pub per_cpu: &'a mut [u64],
}

/// Burn `amount` ns of CPU (ThreadCpu) or the loop equivalent (Loop).
pub fn burn(amount: u64, mode: JobMode, ctx: &mut BurnCtx) -> Burn {
    let start = thread_cpu_ns();
    let mut last = start;
    let mut cpu = current_cpu();
    let mut migrations = 0;
    let mut acc = start;
    let target_iters = match mode {
        JobMode::Loop { iters_per_us } => (amount as f64 / 1000.0 * iters_per_us) as u64,
        JobMode::ThreadCpu => 0,
    };
    let mut iters = 0u64;
    let end = loop {
        spin(SPIN, &mut acc);
        iters += SPIN as u64;
        let t = thread_cpu_ns();
        let c = current_cpu();
        if let Some(slot) = ctx.per_cpu.get_mut(cpu) {
            *slot += t - last;
        }
        if c != cpu {
            migrations += 1;
            cpu = c;
        }
        last = t;
        if let Some(p) = ctx.progress {
            p.store(t - start, Ordering::Relaxed);
        }
        let finished = match mode {
            JobMode::ThreadCpu => t - start >= amount,
            JobMode::Loop { .. } => iters >= target_iters,
        };
        if finished {
            break BurnEnd::Done;
        }
        if ctx.stop.load(Ordering::Relaxed) {
            break BurnEnd::Stopped;
        }
        if now_ns() >= ctx.until {
            break BurnEnd::Cut;
        }
    };
    Burn {
        end,
        cpu_ns: last - start,
        migrations,
    }
}

/// Calibrate [`JobMode::Loop`]: iterations per µs of the burn loop itself, measured by
/// thread CPU time over at least `ms` milliseconds.
pub fn calibrate_loop(ms: u64) -> f64 {
    let stop = AtomicBool::new(false);
    let mut per_cpu = vec![0u64; 1024];
    let mut ctx = BurnCtx {
        stop: &stop,
        until: u64::MAX,
        progress: None,
        per_cpu: &mut per_cpu,
    };
    // With iters_per_us = 1, an amount of n µs (n × 1000 ns) is n iterations.
    let mut n: u64 = 4096;
    loop {
        let t0 = thread_cpu_ns();
        burn(n * 1000, JobMode::Loop { iters_per_us: 1.0 }, &mut ctx);
        let dt = thread_cpu_ns() - t0;
        if dt >= ms * 1_000_000 || n > 1 << 40 {
            return n as f64 / (dt.max(1) as f64 / 1000.0);
        }
        n *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_cpu_burn_consumes_what_it_is_asked() {
        let stop = AtomicBool::new(false);
        let mut per_cpu = vec![0u64; 1024];
        let mut ctx = BurnCtx {
            stop: &stop,
            until: u64::MAX,
            progress: None,
            per_cpu: &mut per_cpu,
        };
        let b = burn(5_000_000, JobMode::ThreadCpu, &mut ctx);
        assert_eq!(b.end, BurnEnd::Done);
        assert!(
            b.cpu_ns >= 5_000_000 && b.cpu_ns < 6_000_000,
            "{}",
            b.cpu_ns
        );
        assert!(per_cpu.iter().sum::<u64>() >= 5_000_000);
    }

    #[test]
    fn stop_flag_ends_a_burn() {
        let stop = AtomicBool::new(true);
        let mut per_cpu = vec![0u64; 1024];
        let mut ctx = BurnCtx {
            stop: &stop,
            until: u64::MAX,
            progress: None,
            per_cpu: &mut per_cpu,
        };
        assert_eq!(
            burn(10_000_000_000, JobMode::ThreadCpu, &mut ctx).end,
            BurnEnd::Stopped
        );
    }

    #[test]
    fn calibrated_loop_is_roughly_right() {
        let ipu = calibrate_loop(20);
        assert!(ipu > 0.0);
    }
}
