//! A private tracefs instance for one real run (`schedlab run --trace-out`): the
//! scheduler's and the interrupts' events of the run's CPUs, recorded in a ring buffer of
//! its own (`instances/schedlab-PID`) with the CLOCK_MONOTONIC trace clock, so the trace's
//! timestamps are the runner's own clock. No trace-cmd is needed, and the global buffer
//! (and anybody else's instance) is left alone.
//!
//! Where tracefs is not mounted, it is mounted at `/sys/kernel/tracing` for the run and
//! unmounted afterwards. Both changes are undone when the session ends, is dropped
//! (errors, panics; SIGINT/SIGTERM end the run normally) or, after a SIGKILL, by the next
//! real run: a journal (`/run/schedlab/trace-PID.json`) says what to remove, and
//! [`recover_stale`] removes it once that run holds the machine lock.

use crate::latency::shield::format_mask;
use crate::machine_lock::{self, JOURNAL_DIR};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Where tracefs is mounted when nobody mounted it.
pub const MOUNT_POINT: &str = "/sys/kernel/tracing";

/// Instance names start with this, followed by the run's PID.
pub const INSTANCE_PREFIX: &str = "schedlab-";

/// Events recorded: the scheduler's (sched_switch is required, the others are recorded
/// when the kernel has them), then what interrupts the workload's threads.
pub const EVENTS: &[&str] = &[
    "sched/sched_switch",
    "sched/sched_wakeup",
    "sched/sched_wakeup_new",
    "sched/sched_migrate_task",
    "sched/sched_process_exit",
    "irq/irq_handler_entry",
    "irq/irq_handler_exit",
    "irq/softirq_entry",
    "irq/softirq_exit",
    "irq_vectors/local_timer_entry",
    "irq_vectors/local_timer_exit",
];

/// What a killed run left to undo.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Journal {
    pid: u32,
    /// The run's start time (/proc/PID/stat field 22), to tell a reused PID apart.
    start: Option<u64>,
    /// The instance directory.
    instance: PathBuf,
    /// The tracefs mount point this run mounted (None: it was mounted already).
    mounted: Option<PathBuf>,
    /// The mount namespace it mounted in (`mnt:[INODE]`): a run in another namespace
    /// must not unmount a tracefs that is not this run's.
    #[serde(default)]
    mnt_ns: Option<String>,
}

fn mount_namespace() -> Option<String> {
    fs::read_link("/proc/self/ns/mnt")
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

fn journal_path(pid: u32) -> PathBuf {
    Path::new(JOURNAL_DIR).join(format!("trace-{pid}.json"))
}

/// A recording in progress; dropping it removes the instance (and the mount).
#[derive(Debug)]
pub struct TraceSession {
    journal: Journal,
    marker: Option<fs::File>,
    /// Optional events this kernel does not have (named in the result).
    pub missing_events: Vec<String>,
    done: bool,
}

/// What the instance recorded.
#[derive(Debug, Clone)]
pub struct Capture {
    /// The instance's `trace` file (raw ftrace text, CLOCK_MONOTONIC timestamps).
    pub text: String,
    /// Events the ring buffer could not keep (`dropped events` + `overrun` of every CPU).
    pub lost: u64,
    /// Optional events this kernel does not have.
    pub missing_events: Vec<String>,
}

/// The mount point of a mounted tracefs, if any.
fn tracefs_mount() -> Option<PathBuf> {
    let mounts = fs::read_to_string("/proc/self/mounts").ok()?;
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() > 2 && f[2] == "tracefs").then(|| PathBuf::from(f[1]))
    })
}

fn errno_words(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EPERM) => "EPERM".into(),
        Some(libc::EACCES) => "EACCES".into(),
        Some(libc::ENODEV) => "ENODEV".into(),
        Some(libc::ENOENT) => "ENOENT".into(),
        _ => e.to_string(),
    }
}

fn mount_tracefs(at: &Path) -> Result<(), String> {
    let target = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()).expect("no NUL");
    // SAFETY: valid NUL-terminated strings; no mount data.
    let r = unsafe {
        libc::mount(
            c"tracefs".as_ptr(),
            target.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if r == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    Err(match e.raw_os_error() {
        Some(libc::EPERM) => format!(
            "tracefs is not mounted and mounting it at {} needs CAP_SYS_ADMIN (EPERM)",
            at.display()
        ),
        Some(libc::ENODEV) => {
            "this kernel has no tracefs (CONFIG_FTRACE / CONFIG_TRACING off)".to_string()
        }
        _ => format!(
            "tracefs is not mounted and mounting it at {} failed: {}",
            at.display(),
            errno_words(&e)
        ),
    })
}

fn unmount(at: &Path) -> Result<(), String> {
    let target = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()).expect("no NUL");
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::umount2(target.as_ptr(), 0) } == 0 {
        Ok(())
    } else {
        Err(errno_words(&std::io::Error::last_os_error()))
    }
}

/// Remove an instance directory (its buffer goes with it); gone already is fine.
fn remove_instance(dir: &Path) -> Result<(), String> {
    if !dir.exists() {
        return Ok(());
    }
    let _ = fs::write(dir.join("tracing_on"), "0");
    fs::remove_dir(dir).map_err(|e| format!("cannot remove {}: {}", dir.display(), errno_words(&e)))
}

impl TraceSession {
    /// Start recording the CPUs `cpus` (host numbers) into a fresh instance whose
    /// per-CPU buffer holds `buffer_kb` KiB. The error says precisely what is missing
    /// (a capability, tracefs, the instance directory, an event).
    pub fn start(cpus: &[usize], buffer_kb: u64) -> Result<TraceSession, String> {
        let pid = std::process::id();
        let (root, mounted) = match tracefs_mount() {
            Some(root) => (root, None),
            None => (PathBuf::from(MOUNT_POINT), Some(PathBuf::from(MOUNT_POINT))),
        };
        let mut s = TraceSession {
            journal: Journal {
                pid,
                start: machine_lock::start_time(pid),
                instance: root
                    .join("instances")
                    .join(format!("{INSTANCE_PREFIX}{pid}")),
                mounted,
                mnt_ns: mount_namespace(),
            },
            marker: None,
            missing_events: Vec::new(),
            done: false,
        };
        // Journal first: a SIGKILL from here on is undone by the next run.
        let text = serde_json::to_string(&s.journal).map_err(|e| e.to_string())?;
        machine_lock::write_journal(&journal_path(pid), &text)
            .map_err(|e| format!("tracing: {e}"))?;
        if let Some(at) = &s.journal.mounted {
            if let Err(e) = mount_tracefs(at) {
                s.journal.mounted = None;
                return Err(e);
            }
        }
        let dir = s.journal.instance.clone();
        if let Err(e) = fs::create_dir(&dir) {
            return Err(match e.raw_os_error() {
                Some(libc::ENOENT) => format!(
                    "{} has no instances/ directory (a kernel without ftrace instances)",
                    root.display()
                ),
                Some(libc::EACCES | libc::EPERM) => format!(
                    "cannot create the tracefs instance {} ({}: needs root)",
                    dir.display(),
                    errno_words(&e)
                ),
                _ => format!("cannot create the tracefs instance {}: {e}", dir.display()),
            });
        }
        s.configure(cpus, buffer_kb)?;
        Ok(s)
    }

    fn configure(&mut self, cpus: &[usize], buffer_kb: u64) -> Result<(), String> {
        let dir = self.journal.instance.clone();
        let set = |file: &str, value: &str| -> Result<(), String> {
            fs::write(dir.join(file), value).map_err(|e| {
                format!(
                    "tracing: cannot write `{value}` to {}: {}",
                    dir.join(file).display(),
                    errno_words(&e)
                )
            })
        };
        set("tracing_on", "0")?;
        set("buffer_size_kb", &buffer_kb.to_string())?;
        // Keep the start of the run when the buffer fills (and count what is dropped).
        set("options/overwrite", "0")?;
        set("trace_clock", "mono")?;
        set("tracing_cpumask", &format_mask(cpus))?;
        for ev in EVENTS {
            let f = dir.join("events").join(ev).join("enable");
            if f.exists() {
                set(&format!("events/{ev}/enable"), "1")?;
            } else if *ev == "sched/sched_switch" {
                return Err(format!(
                    "tracing: this kernel has no sched_switch event ({} missing)",
                    f.display()
                ));
            } else {
                self.missing_events.push(ev.to_string());
            }
        }
        self.marker = fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(dir.join("trace_marker"))
            .ok();
        set("tracing_on", "1")
    }

    /// Write `text` into the trace (a `tracing_mark_write` event on the calling CPU);
    /// does nothing when the instance has no marker file.
    pub fn mark(&self, text: &str) {
        if let Some(mut f) = self.marker.as_ref() {
            let _ = f.write_all(text.as_bytes());
        }
    }

    /// Stop recording, read the trace, remove the instance (and the mount).
    pub fn finish(mut self) -> Result<Capture, String> {
        let dir = self.journal.instance.clone();
        let _ = fs::write(dir.join("tracing_on"), "0");
        let read = fs::read_to_string(dir.join("trace"))
            .map_err(|e| format!("tracing: cannot read {}: {e}", dir.join("trace").display()));
        let lost = lost_events(&dir);
        let missing_events = std::mem::take(&mut self.missing_events);
        let cleaned = self.cleanup();
        let text = read?;
        cleaned?;
        Ok(Capture {
            text,
            lost,
            missing_events,
        })
    }

    /// Remove the instance, unmount what this run mounted, drop the journal; idempotent.
    fn cleanup(&mut self) -> Result<(), String> {
        if self.done {
            return Ok(());
        }
        self.done = true;
        self.marker = None;
        let r = undo(&self.journal);
        let _ = fs::remove_file(journal_path(self.journal.pid));
        r
    }
}

impl Drop for TraceSession {
    fn drop(&mut self) {
        if let Err(e) = self.cleanup() {
            eprintln!("warning: {e}");
        }
    }
}

/// Undo what a journal says: the instance, then the mount.
fn undo(j: &Journal) -> Result<(), String> {
    let mut errors = Vec::new();
    if let Err(e) = remove_instance(&j.instance) {
        errors.push(e);
    }
    if let Some(at) = &j.mounted {
        if tracefs_mount().as_deref() == Some(at.as_path()) && j.mnt_ns == mount_namespace() {
            if let Err(e) = unmount(at) {
                errors.push(format!("cannot unmount tracefs at {}: {e}", at.display()));
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// Events lost by every CPU of an instance (`dropped events` and `overrun` lines of
/// `per_cpu/cpuN/stats`).
fn lost_events(dir: &Path) -> u64 {
    let Ok(cpus) = fs::read_dir(dir.join("per_cpu")) else {
        return 0;
    };
    cpus.flatten()
        .filter_map(|c| fs::read_to_string(c.path().join("stats")).ok())
        .flat_map(|s| {
            s.lines()
                .filter_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    matches!(k.trim(), "overrun" | "dropped events")
                        .then(|| v.trim().parse::<u64>().ok())
                        .flatten()
                })
                .collect::<Vec<_>>()
        })
        .sum()
}

/// Remove the tracefs instances (and mounts) of killed runs: their journals, and any
/// `schedlab-PID` instance whose PID is gone. Called with the machine lock held; says
/// what it removed.
pub fn recover_stale() -> Option<String> {
    let mut said = Vec::new();
    for (pid, path, text) in machine_lock::dead_journals("trace-") {
        let Ok(j) = serde_json::from_str::<Journal>(&text) else {
            continue;
        };
        match undo(&j) {
            Ok(()) => said.push(format!(
                "removed the tracefs instance{} left by killed run {pid}",
                if j.mounted.is_some() {
                    " and mount"
                } else {
                    ""
                }
            )),
            Err(e) => said.push(format!("could not undo killed run {pid}'s tracing: {e}")),
        }
        let _ = fs::remove_file(path);
    }
    // Instances without a journal (the journal could not be written, or was removed).
    if let Some(root) = tracefs_mount() {
        if let Ok(dir) = fs::read_dir(root.join("instances")) {
            for e in dir.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                let Some(pid) = name
                    .strip_prefix(INSTANCE_PREFIX)
                    .and_then(|p| p.parse::<u32>().ok())
                else {
                    continue;
                };
                if pid == std::process::id() || machine_lock::start_time(pid).is_some() {
                    continue;
                }
                if remove_instance(&e.path()).is_ok() {
                    said.push(format!("removed the tracefs instance {name} of a dead run"));
                }
            }
        }
    }
    (!said.is_empty()).then(|| said.join("; "))
}

/// Instances of schedlab runs present now, and whether tracefs is mounted (for tests
/// and `doctor`).
pub fn leftovers() -> (Vec<String>, bool) {
    let Some(root) = tracefs_mount() else {
        return (Vec::new(), false);
    };
    let names = fs::read_dir(root.join("instances"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| n.starts_with(INSTANCE_PREFIX))
                .collect()
        })
        .unwrap_or_default();
    (names, true)
}
