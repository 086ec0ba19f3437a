//! What an aperiodic fair task does for real, as the simulator defines it
//! (crates/sim/src/engine/jobs.rs `fair_wake` / `after_burst`):
//!
//! - **run/sleep phases** (`run: 2ms, sleep: 8ms` or `phases: [...]`, repeated): each run
//!   phase is one wake-up (a "job"): the task wakes, burns the phase's CPU time as thread
//!   CPU time ([`crate::job::burn`]), then sleeps the sleeps that follow it, counted from
//!   the instant the burst completed. Phases that start with sleeps begin asleep. The
//!   sleep is a `clock_nanosleep(TIMER_ABSTIME)` to `burst end + sleep`, so time spent
//!   between the burst's end and the call does not shift the schedule;
//! - **`work:`**: CPU time to do in total (with phases: the bursts are cut to what is
//!   left); the task ends when it is done and reports when (`fair.finished_ns`);
//! - **neither**: CPU-bound for the whole run (one job that never completes).
//!
//! The **wake-up latency** of a burst is measured from the instant the task should have
//! become runnable (its absolute wake-up time) to the instant it runs (the return from
//! `clock_nanosleep`): the timer's own lateness plus the wait for the CPU, the
//! simulator's "wake-up to first dispatch". Worker threads of fair tasks set their timer
//! slack to 1 ns (`PR_SET_TIMERSLACK`): the default 50 µs slack of SCHED_OTHER threads
//! would add up to 50 µs that the model does not have.

use crate::job::{self, BurnCtx, BurnEnd, JobMode};
use crate::measure::{JobRecord, WorkerReport};
use schedlab_model::{Ns, Phase, Task};
use std::sync::atomic::{AtomicBool, Ordering};

/// Where the behaviour runs: the run's clock origin and end, and its stop flag.
pub struct Window<'a> {
    /// CLOCK_MONOTONIC instant of the run's time 0.
    pub t0: u64,
    /// CLOCK_MONOTONIC instant at which the run ends.
    pub end: u64,
    /// Raised to stop at once.
    pub stop: &'a AtomicBool,
    /// How bursts burn CPU.
    pub mode: JobMode,
}

/// The phase index of the first run phase and the sleep before it (phases that start
/// with sleeps begin asleep).
pub fn first_wake(phases: &[Phase]) -> (usize, Ns) {
    let first = phases
        .iter()
        .position(|p| matches!(p, Phase::Run(_)))
        .unwrap_or(0);
    let asleep = phases[..first]
        .iter()
        .map(|p| match p {
            Phase::Sleep(d) => *d,
            Phase::Run(_) => 0,
        })
        .sum();
    (first, asleep)
}

/// After the run phase at `done`: the index of the next run phase and the sleeps
/// between them.
pub fn next_wake(phases: &[Phase], done: usize) -> (usize, Ns) {
    let n = phases.len();
    let mut sleep: Ns = 0;
    let mut i = (done + 1) % n;
    for _ in 0..n {
        match phases[i] {
            Phase::Sleep(d) => sleep = sleep.saturating_add(d),
            Phase::Run(_) => break,
        }
        i = (i + 1) % n;
    }
    (i, sleep)
}

/// Ask for 1 ns of timer slack on the calling thread (see the module doc).
fn tight_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long; it affects the calling thread only.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Run `t`'s behaviour until the end of the run (or the stop flag, or its work is done),
/// recording one job per wake-up into `rep`; returns when its `work:` was done (ns after
/// t0), if it was.
pub fn run(t: &Task, win: &Window, rep: &mut WorkerReport) -> Option<Ns> {
    tight_timer_slack();
    let (mut next, asleep) = first_wake(&t.phases);
    let mut wake = win.t0.saturating_add(t.offset).saturating_add(asleep);
    let mut work_left = t.work;
    let stop = win.stop;
    loop {
        if wake >= win.end || stop.load(Ordering::SeqCst) {
            return None;
        }
        while job::now_ns() < wake && !stop.load(Ordering::SeqCst) {
            job::sleep_until(wake);
        }
        if stop.load(Ordering::SeqCst) {
            return None;
        }
        let start = job::now_ns();
        let mut exec = match t.phases.get(next) {
            Some(Phase::Run(r)) => *r,
            _ => work_left.unwrap_or(Ns::MAX),
        };
        if let Some(left) = work_left {
            exec = exec.min(left);
        }
        let (_, inv0) = crate::thread::thread_switches();
        let b = job::burn(
            exec,
            win.mode,
            &mut BurnCtx {
                stop,
                until: win.end,
                progress: None,
                per_cpu: &mut rep.per_cpu_ns,
            },
        );
        let fin = job::now_ns();
        let (_, inv1) = crate::thread::thread_switches();
        let done = b.end == BurnEnd::Done;
        rep.jobs.push(JobRecord {
            release: wake - win.t0,
            deadline: u64::MAX,
            exec: 0,
            start: Some(start - win.t0),
            finish: done.then(|| fin - win.t0),
            aborted: false,
            preemptions: inv1 - inv0,
            migrations: b.migrations as u64,
        });
        if !done {
            return None;
        }
        if let Some(left) = work_left.as_mut() {
            *left = left.saturating_sub(exec);
            if *left == 0 {
                return Some(fin - win.t0);
            }
        }
        if t.phases.is_empty() {
            return None;
        }
        let (i, sleep) = next_wake(&t.phases, next);
        next = i;
        wake = fin.saturating_add(sleep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_model::time::MS;
    use Phase::{Run, Sleep};

    #[test]
    fn phases_wake_as_the_simulator_wakes_them() {
        let p = [
            Sleep(3 * MS),
            Run(2 * MS),
            Sleep(5 * MS),
            Sleep(MS),
            Run(MS),
        ];
        assert_eq!(first_wake(&p), (1, 3 * MS));
        assert_eq!(next_wake(&p, 1), (4, 6 * MS));
        // Wrapping around: after the last run, the leading sleep, then run 1.
        assert_eq!(next_wake(&p, 4), (1, 3 * MS));
        assert_eq!(first_wake(&[Run(MS), Sleep(MS)]), (0, 0));
        assert_eq!(next_wake(&[Run(MS), Sleep(8 * MS)], 0), (0, 8 * MS));
    }

    fn task(yaml: &str) -> Task {
        let w = schedlab_model::Workload::parse_str(
            yaml,
            std::path::Path::new("w.yaml"),
            &Default::default(),
        )
        .unwrap();
        w.tasks[0].clone()
    }

    #[test]
    fn a_short_interactive_run_wakes_on_schedule_and_work_finishes() {
        // Unprivileged: SCHED_OTHER, whatever else runs. 100 ms of run 1ms / sleep 4ms is
        // at most 20 wake-ups; a loaded machine makes fewer, never more.
        let stop = AtomicBool::new(false);
        let t0 = job::now_ns() + 1_000_000;
        let win = Window {
            t0,
            end: t0 + 100 * MS,
            stop: &stop,
            mode: JobMode::ThreadCpu,
        };
        let mut rep = WorkerReport {
            per_cpu_ns: vec![0; 1024],
            ..WorkerReport::default()
        };
        let t = task("tasks: [{ name: ui, run: 1ms, sleep: 4ms }]");
        assert_eq!(run(&t, &win, &mut rep), None);
        assert!(
            (5..=20).contains(&rep.jobs.len()),
            "{} wake-ups",
            rep.jobs.len()
        );
        for (a, b) in rep.jobs.iter().zip(&rep.jobs[1..]) {
            // Each wake-up is planned 4 ms after the previous burst ended.
            assert_eq!(b.release, a.finish.unwrap() + 4 * MS, "{a:?} {b:?}");
            assert!(b.start.unwrap() >= b.release);
        }
        let mut rep = WorkerReport {
            per_cpu_ns: vec![0; 1024],
            ..WorkerReport::default()
        };
        let t = task("tasks: [{ name: b, work: 3ms, run: 1ms, sleep: 1ms }]");
        let win = Window {
            t0: job::now_ns(),
            end: job::now_ns() + 10_000 * MS,
            ..win
        };
        let fin = run(&t, &win, &mut rep).expect("3 ms of work finish within 10 s");
        assert_eq!(rep.jobs.len(), 3);
        assert_eq!(Some(fin), rep.jobs[2].finish);
    }
}
