//! The user-space dispatcher: a manager thread at SCHED_FIFO 99 that runs `edf`, `llf`
//! or `illf` over the workers' jobs — the simulator's classes in the simulator's engine,
//! driven from outside ([`crate::decide`]) — and enforces each decision with
//! SCHED_FIFO priorities and affinity: a chosen job's worker is pinned to its CPU at
//! priority [`DISPATCH_HIGH`](crate::runner::DISPATCH_HIGH), every other ready worker is
//! at [`DISPATCH_LOW`](crate::runner::DISPATCH_LOW) on every CPU.
//!
//! The manager decides at every tick (1 ms by default; `edf` needs no tick), at every
//! release (it knows the release times the workers publish) and at every completion
//! (the worker writes to an eventfd). Each job's consumed CPU time is published by its worker from
//! inside the burn loop (an atomic store after each thread-CPU-clock read), so laxities
//! are computed from thread CPU clocks without a system call. The cost of every
//! decision (the policy's choice, not the enforcement syscalls) goes into an HDR
//! histogram; enforcement is measured apart.

use crate::decide::{Decider, JobView};
use crate::job;
use crate::measure::DispatcherStats;
use crate::policy::{self, KernelPolicy, Tid};
use crate::runner::{DISPATCH_HIGH, DISPATCH_LOW};
use hdrhistogram::Histogram;
use schedlab_model::{Policy, Workload};
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicU8, Ordering};

const IDLE: u8 = 0;
const PENDING: u8 = 1;
const FINISHED: u8 = 3;

/// One worker's current job, published for the manager (a seqlock over the fields).
#[derive(Default)]
pub struct Slot {
    gen: AtomicU64,
    state: AtomicU8,
    release: AtomicU64,
    deadline: AtomicU64,
    exec: AtomicU64,
    /// CPU time the current job has consumed (updated inside the burn loop).
    pub done: AtomicU64,
}

impl Slot {
    /// The next job: released at `release` (absolute CLOCK_MONOTONIC ns).
    pub fn publish(&self, release: u64, deadline: u64, exec: u64) {
        self.gen.fetch_add(1, Ordering::AcqRel);
        self.release.store(release, Ordering::Relaxed);
        self.deadline.store(deadline, Ordering::Relaxed);
        self.exec.store(exec, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        self.state.store(PENDING, Ordering::Relaxed);
        self.gen.fetch_add(1, Ordering::AcqRel);
    }

    /// The current job completed (or was cut).
    pub fn complete(&self) {
        self.gen.fetch_add(1, Ordering::AcqRel);
        self.state.store(IDLE, Ordering::Relaxed);
        self.gen.fetch_add(1, Ordering::AcqRel);
    }

    /// No more jobs.
    pub fn finish(&self) {
        self.gen.fetch_add(1, Ordering::AcqRel);
        self.state.store(FINISHED, Ordering::Relaxed);
        self.gen.fetch_add(1, Ordering::AcqRel);
    }

    /// (state, release, deadline, exec), consistent.
    fn read(&self) -> (u8, u64, u64, u64) {
        loop {
            let g = self.gen.load(Ordering::Acquire);
            if g % 2 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let v = (
                self.state.load(Ordering::Relaxed),
                self.release.load(Ordering::Relaxed),
                self.deadline.load(Ordering::Relaxed),
                self.exec.load(Ordering::Relaxed),
            );
            if self.gen.load(Ordering::Acquire) == g {
                return v;
            }
        }
    }
}

/// What workers and the manager share.
pub struct DispatchShared {
    /// One slot per task.
    pub slots: Vec<Slot>,
    /// Host CPUs of the run.
    pub cpus: Vec<usize>,
    efd: libc::c_int,
    /// The manager's tid, once it runs.
    pub manager_tid: AtomicI32,
}

impl DispatchShared {
    /// Slots for `n` tasks on `cpus`.
    pub fn new(n: usize, cpus: Vec<usize>) -> DispatchShared {
        // SAFETY: eventfd has no memory preconditions.
        let efd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        DispatchShared {
            slots: (0..n).map(|_| Slot::default()).collect(),
            cpus,
            efd,
            manager_tid: AtomicI32::new(0),
        }
    }

    /// Wake the manager (a completion).
    pub fn notify(&self) {
        if self.efd >= 0 {
            let one = 1u64;
            // SAFETY: writing 8 bytes to our eventfd.
            unsafe { libc::write(self.efd, &one as *const u64 as *const libc::c_void, 8) };
        }
    }

    /// Wait until `deadline` (absolute) or a notification.
    fn wait(&self, deadline: u64) {
        let now = job::now_ns();
        if deadline <= now {
            return;
        }
        let d = deadline - now;
        let ts = libc::timespec {
            tv_sec: (d / 1_000_000_000) as libc::time_t,
            tv_nsec: (d % 1_000_000_000) as libc::c_long,
        };
        let mut pfd = libc::pollfd {
            fd: self.efd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, a valid timeout, no signal mask change.
        let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
        if r > 0 {
            let mut v = 0u64;
            // SAFETY: reading 8 bytes from our eventfd clears it.
            unsafe { libc::read(self.efd, &mut v as *mut u64 as *mut libc::c_void, 8) };
        }
    }
}

impl Drop for DispatchShared {
    fn drop(&mut self) {
        if self.efd >= 0 {
            // SAFETY: our fd, closed once.
            unsafe { libc::close(self.efd) };
        }
    }
}

/// Put a worker on `cpu` at the high priority, or back to the low one on every CPU.
fn enforce(tid: Tid, cpu: Option<usize>, all: &[usize]) {
    match cpu {
        Some(c) => {
            let _ = policy::set_affinity(tid, &[c]);
            let _ = policy::set_policy(tid, &KernelPolicy::Fifo(DISPATCH_HIGH));
        }
        None => {
            let _ = policy::set_policy(tid, &KernelPolicy::Fifo(DISPATCH_LOW));
            let _ = policy::set_affinity(tid, all);
        }
    }
}

/// The manager loop for `w`'s policy; returns its statistics and the laxity
/// evaluations. The caller has checked that [`Decider::new`] accepts `w`.
pub fn manager(
    d: &DispatchShared,
    tids: &[Tid],
    w: &Workload,
    tick: u64,
    t0: u64,
    end: u64,
    stop: impl Fn() -> bool,
) -> (DispatcherStats, u64) {
    d.manager_tid.store(policy::gettid(), Ordering::SeqCst);
    let n = d.slots.len();
    let pol = w.scheduler.policy;
    let mut dec = Decider::new(w).expect("the runner checks the workload before the run");
    debug_assert_eq!(
        dec.assign.len(),
        d.cpus.len(),
        "one host CPU per workload CPU"
    );
    let mut hist = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).expect("histogram");
    let mut enf = Histogram::<u64>::new_with_bounds(1, 10_000_000_000, 3).expect("histogram");
    let mut enforced: Vec<Option<usize>> = vec![None; n];
    let mut jobs: Vec<Option<JobView>> = vec![None; n];
    let mut changes = 0u64;
    let mut displaced = 0u64;
    // EDF's choice changes only at releases and completions: no tick needed.
    let ticking = pol != Policy::Edf;
    let mut next_tick = t0;
    job::sleep_until(t0);
    loop {
        if stop() || job::now_ns() >= end + tick {
            break;
        }
        let mut all_finished = true;
        let mut next_release = u64::MAX;
        let now = job::now_ns();
        for (t, s) in d.slots.iter().enumerate() {
            let (state, rel, dl, exec) = s.read();
            if state != FINISHED {
                all_finished = false;
            }
            jobs[t] = if state == PENDING && rel <= now {
                let done = s.done.load(Ordering::Relaxed).min(exec);
                Some(JobView {
                    release: rel,
                    deadline: dl,
                    remaining: exec - done,
                })
            } else {
                if state == PENDING {
                    next_release = next_release.min(rel);
                }
                None
            };
        }
        if all_finished {
            break;
        }
        let is_tick = now >= next_tick;
        if is_tick {
            while next_tick <= now {
                next_tick += tick;
            }
        }
        let c0 = job::now_ns();
        let assign = dec.decide(now, &jobs, is_tick);
        let c1 = job::now_ns();
        let _ = hist.record((c1 - c0).max(1));
        // Enforce: lower first (so an equal-priority holder does not block), then raise.
        let mut want: Vec<Option<usize>> = vec![None; n];
        for (cpu, a) in assign.iter().enumerate() {
            if let Some(t) = a {
                want[*t] = Some(d.cpus[cpu]);
            }
        }
        let mut changed = false;
        for t in 0..n {
            if enforced[t].is_some() && want[t] != enforced[t] {
                if jobs[t].is_some() {
                    displaced += 1;
                }
                enforce(tids[t], None, &d.cpus);
                enforced[t] = None;
                changed = true;
            }
        }
        for t in 0..n {
            if want[t].is_some() && enforced[t] != want[t] {
                enforce(tids[t], want[t], &d.cpus);
                enforced[t] = want[t];
                changed = true;
            }
        }
        if changed {
            changes += 1;
            let _ = enf.record((job::now_ns() - c1).max(1));
        }
        // Wake for the next tick or release, and at least every 50 ms to see a stop.
        let wake = if ticking {
            next_tick.min(next_release)
        } else {
            next_release
        };
        d.wait(wake.min(job::now_ns() + 50_000_000));
    }
    let q = |h: &Histogram<u64>, p: f64| {
        if h.is_empty() {
            0
        } else {
            h.value_at_quantile(p)
        }
    };
    (
        DispatcherStats {
            decisions: hist.len(),
            median_ns: q(&hist, 0.5),
            p99_ns: q(&hist, 0.99),
            max_ns: hist.max(),
            enforce_median_ns: q(&enf, 0.5),
            enforce_p99_ns: q(&enf, 0.99),
            changes,
            displaced,
            tick_ns: if ticking { tick } else { 0 },
        },
        dec.laxity_evaluations,
    )
}
