//! Background load for `schedlab latency --load N`: `stress-ng --cpu N` when installed,
//! else N busy threads of this process at SCHED_OTHER; started on the given CPUs and
//! stopped by [`Load::stop`] or on drop.
//!
//! stress-ng runs in its own process group (Ctrl-C on the terminal reaches only
//! schedlab, which then stops it), with the parent-death signal set to SIGKILL (it dies
//! with schedlab even if schedlab is killed), an unblocked signal mask, its affinity set
//! before `exec`, and its own `--timeout` a few seconds after the run as a last resort.

use crate::policy;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What kind of load runs.
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct LoadReport {
    /// `stress-ng` or `threads`.
    pub kind: String,
    /// Workers.
    pub workers: usize,
    /// CPUs it ran on.
    pub cpus: Vec<usize>,
}

enum Inner {
    StressNg(Child),
    Threads(Arc<AtomicBool>, Vec<std::thread::JoinHandle<()>>),
    Stopped,
}

/// A running load.
pub struct Load {
    inner: Inner,
    report: LoadReport,
}

/// stress-ng's path, if installed.
pub fn stress_ng() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("stress-ng"))
        .find(|p| p.is_file())
}

fn cpu_set(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: plain data; CPU_SET writes bits.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    set
}

impl Load {
    /// Start `workers` CPU hogs on `cpus` for at most `limit`.
    pub fn start(workers: usize, cpus: &[usize], limit: Duration) -> Result<Load, String> {
        let report = |kind: &str| LoadReport {
            kind: kind.into(),
            workers,
            cpus: cpus.to_vec(),
        };
        if let Some(bin) = stress_ng() {
            let set = cpu_set(cpus);
            let mut cmd = Command::new(bin);
            cmd.args([
                "--cpu",
                &workers.to_string(),
                "--timeout",
                &format!("{}s", limit.as_secs() + 5),
                "--quiet",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
            // SAFETY: only async-signal-safe calls between fork and exec.
            unsafe {
                cmd.pre_exec(move || {
                    let empty: libc::sigset_t = std::mem::zeroed();
                    libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                    Ok(())
                });
            }
            let child = cmd
                .spawn()
                .map_err(|e| format!("--load: cannot start stress-ng: {e}"))?;
            return Ok(Load {
                inner: Inner::StressNg(child),
                report: report("stress-ng"),
            });
        }
        let stop = Arc::new(AtomicBool::new(false));
        let mut handles = Vec::new();
        for k in 0..workers {
            let stop = stop.clone();
            let cpus = cpus.to_vec();
            let h = crate::thread::spawn(format!("sl-load{k}"), move || {
                let _ = policy::set_affinity(0, &cpus);
                let _ = policy::set_policy(0, &policy::KernelPolicy::Other(0));
                let end = Instant::now() + limit + Duration::from_secs(5);
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) && Instant::now() < end {
                    for i in 0..100_000u64 {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
                    }
                    std::hint::black_box(x);
                }
            })
            .map_err(|e| format!("--load: cannot start a load thread: {e}"))?;
            handles.push(h);
        }
        Ok(Load {
            inner: Inner::Threads(stop, handles),
            report: report("threads"),
        })
    }

    /// The process id of stress-ng (None for thread load).
    pub fn pid(&self) -> Option<u32> {
        match &self.inner {
            Inner::StressNg(c) => Some(c.id()),
            _ => None,
        }
    }

    /// Stop the load and wait for it (stress-ng: SIGTERM to its group, SIGKILL after 1 s).
    pub fn stop(&mut self) {
        match std::mem::replace(&mut self.inner, Inner::Stopped) {
            Inner::StressNg(mut child) => {
                let pgid = child.id() as libc::pid_t;
                // SAFETY: kill only sends signals to the group we created.
                unsafe { libc::kill(-pgid, libc::SIGTERM) };
                let t = Instant::now();
                loop {
                    match child.try_wait() {
                        Ok(Some(_)) => break,
                        Ok(None) if t.elapsed() < Duration::from_secs(1) => {
                            std::thread::sleep(Duration::from_millis(10))
                        }
                        _ => {
                            unsafe { libc::kill(-pgid, libc::SIGKILL) };
                            let _ = child.wait();
                            break;
                        }
                    }
                }
            }
            Inner::Threads(stop, handles) => {
                stop.store(true, Ordering::SeqCst);
                for h in handles {
                    let _ = h.join();
                }
            }
            Inner::Stopped => {}
        }
    }

    /// What ran.
    pub fn report(&self) -> LoadReport {
        self.report.clone()
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop();
    }
}
