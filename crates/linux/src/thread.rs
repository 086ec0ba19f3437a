//! Worker threads that do not page-fault or get surprised: memory locked with
//! `mlockall`, stacks pre-faulted, signals routed to one place.
//!
//! Signal plan: before any worker exists, the spawning thread blocks SIGINT, SIGTERM,
//! SIGXCPU and SIGUSR2 ([`block_control_signals`]); every thread inherits that mask and the
//! runner's watchdog collects them with `sigtimedwait`. SIGUSR1 stays unblocked with an
//! empty handler installed without SA_RESTART ([`install_wake_handler`]), so `tgkill`ing a
//! worker with it interrupts a `clock_nanosleep` (EINTR) and the worker sees the stop flag.

use std::io;

/// Stack size of a worker thread.
pub const STACK_SIZE: usize = 256 * 1024;
/// Bytes of stack touched at thread start (pre-faulting).
pub const PREFAULT: usize = 128 * 1024;

/// Lock current and future memory. Returns a warning (not an error) when it fails, e.g.
/// without CAP_IPC_LOCK and a small RLIMIT_MEMLOCK.
pub fn lock_memory() -> Option<String> {
    // SAFETY: mlockall has no memory-safety preconditions.
    let r = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if r == 0 {
        None
    } else {
        Some(format!(
            "mlockall failed ({}): running with unlocked memory",
            io::Error::last_os_error()
        ))
    }
}

/// Undo [`lock_memory`].
pub fn unlock_memory() {
    // SAFETY: as above.
    unsafe { libc::munlockall() };
}

/// Touch `PREFAULT` bytes of the calling thread's stack so later calls do not fault.
#[inline(never)]
pub fn prefault_stack() {
    let mut buf = [0u8; PREFAULT];
    for i in (0..PREFAULT).step_by(4096) {
        buf[i] = 1;
    }
    std::hint::black_box(&mut buf);
}

/// The signals that stop a run (Ctrl-C, `kill`).
const STOP_SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

/// The set of `signals`.
pub(crate) fn signal_set(signals: &[libc::c_int]) -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill a plain sigset_t.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for &s in signals {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// The signal set the watchdog waits for.
pub fn control_signals() -> libc::sigset_t {
    signal_set(&[libc::SIGINT, libc::SIGTERM, libc::SIGXCPU, libc::SIGUSR2])
}

/// Block the control signals in the calling thread (and so in threads it spawns later).
/// Returns the previous mask for [`restore_signal_mask`].
pub fn block_control_signals() -> libc::sigset_t {
    let set = control_signals();
    // SAFETY: valid sets; pthread_sigmask writes the old mask into `old`.
    unsafe {
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        old
    }
}

/// SIGINT or SIGTERM, if one is pending (blocked, not yet taken by the watchdog): set-up
/// steps that wait (SCHED_DEADLINE admission retries) give up at once on Ctrl-C instead
/// of finishing their wait. The signal stays pending for the watchdog to collect.
pub fn pending_stop_signal() -> Option<libc::c_int> {
    // SAFETY: sigpending fills a plain sigset_t; sigismember only reads it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        if libc::sigpending(&mut set) != 0 {
            return None;
        }
        STOP_SIGNALS
            .into_iter()
            .find(|&s| libc::sigismember(&set, s) == 1)
    }
}

/// Take a pending SIGINT or SIGTERM, if any, without waiting: before the mask is put
/// back after a failed set-up, so that the signal is reported, not acted on by its
/// default action before the process says what happened.
pub fn take_stop_signal() -> Option<libc::c_int> {
    timed_wait(&signal_set(&STOP_SIGNALS), std::time::Duration::ZERO)
}

/// Put back a mask saved by [`block_control_signals`].
pub fn restore_signal_mask(old: &libc::sigset_t) {
    // SAFETY: `old` came from pthread_sigmask.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, old, std::ptr::null_mut());
    }
}

extern "C" fn wake_handler(_: libc::c_int) {}

/// Install the empty SIGUSR1 handler (no SA_RESTART) used to interrupt sleeping workers.
pub fn install_wake_handler() {
    // SAFETY: the handler is async-signal-safe (it does nothing).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = wake_handler as *const () as usize;
        sa.sa_flags = 0;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut());
    }
}

/// Send `sig` to thread `tid` of this process.
pub fn signal_thread(tid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: tgkill only sends a signal.
    unsafe {
        libc::tgkill(libc::getpid(), tid, sig);
    }
}

/// Wait for a control signal until `timeout`; None on timeout.
pub fn wait_control_signal(timeout: std::time::Duration) -> Option<libc::c_int> {
    timed_wait(&control_signals(), timeout)
}

/// Take a pending signal of `set`, waiting up to `timeout` for one; None on timeout.
pub(crate) fn timed_wait(
    set: &libc::sigset_t,
    timeout: std::time::Duration,
) -> Option<libc::c_int> {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: valid set and timespec; siginfo may be null.
    let r = unsafe { libc::sigtimedwait(set, std::ptr::null_mut(), &ts) };
    (r > 0).then_some(r)
}

/// Spawn a named thread with the worker stack size that pre-faults its stack first.
pub fn spawn<F, T>(name: String, f: F) -> io::Result<std::thread::JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    std::thread::Builder::new()
        .name(name)
        .stack_size(STACK_SIZE)
        .spawn(move || {
            prefault_stack();
            f()
        })
}

/// Per-thread voluntary and involuntary context switches (`getrusage(RUSAGE_THREAD)`,
/// the same counters as `voluntary_ctxt_switches` / `nonvoluntary_ctxt_switches` in
/// /proc/self/task/TID/status, without opening a file).
pub fn thread_switches() -> (u64, u64) {
    // SAFETY: getrusage fills the struct.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut ru);
        (ru.ru_nvcsw as u64, ru.ru_nivcsw as u64)
    }
}
