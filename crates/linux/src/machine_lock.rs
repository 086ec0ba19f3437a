//! One run at a time changes this machine: the system-wide lock every real run takes
//! (real-time threads, CPU shields, IRQ affinities), so that two schedlab runs never
//! overlap — a second shield would journal the first one's shielded state as "original"
//! and restore that, and two real-time runs would measure each other.
//!
//! The lock is an `flock` on [`LOCK_PATH`]: the kernel drops it when its holder exits,
//! however it exits (SIGKILL included), so it can never be left stale. The file says who
//! holds it (PID, start time, command) for the message a waiting run prints. A run waits
//! for the holder for up to `SCHEDLAB_LOCK_WAIT` seconds (default 600), then gives up
//! with that message; `SCHEDLAB_LOCK_WAIT=0` gives up at once.
//!
//! Once the lock is held, a shield journal left by a killed run is restored before
//! anything else ([`crate::latency::shield::Shield::recover_stale`]), and a killed run's
//! tracefs instance (and tracefs mount) removed ([`crate::tracefs::recover_stale`]), and
//! its `--fair-group` cgroup too ([`crate::cgroup::recover_stale`]), whatever this run
//! does: a plain run never measures a machine still shielded or traced by a run that
//! died.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The lock file (beside the shield journals).
pub const LOCK_PATH: &str = "/run/schedlab/machine.lock";

/// Where runs journal the changes they must undo (shields, tracefs instances).
pub const JOURNAL_DIR: &str = "/run/schedlab";

/// The lock, held until dropped.
#[derive(Debug)]
pub struct MachineLock {
    _file: Option<File>,
    /// What was restored from a killed run's journal when the lock was taken.
    pub recovered: Option<String>,
}

/// The start time of process or thread `pid` (field 22 of /proc/PID/stat), to tell a
/// reused PID apart; None when it does not exist.
pub fn start_time(pid: u32) -> Option<u64> {
    stat_start_time(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Field 22 (start time) of a /proc/PID/stat text, read past the command name (which
/// may contain spaces and parentheses).
pub fn stat_start_time(stat: &str) -> Option<u64> {
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// The journals `{prefix}PID.json` in [`JOURNAL_DIR`] written by runs that are gone (no
/// live process with that PID and the start time the journal recorded; a journal without
/// a start time trusts the PID alone, and this process's own are never stale): (pid,
/// path, text), for the next run to undo what the killed one changed.
pub fn dead_journals(prefix: &str) -> Vec<(u32, PathBuf, String)> {
    #[derive(serde::Deserialize)]
    struct Start {
        #[serde(default)]
        start: Option<u64>,
    }
    let Ok(dir) = std::fs::read_dir(JOURNAL_DIR) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = name
            .strip_prefix(prefix)
            .and_then(|s| s.strip_suffix(".json"))
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        let Ok(j) = serde_json::from_str::<Start>(&text) else {
            continue;
        };
        let alive = start_time(pid).is_some_and(|now| j.start.is_none_or(|then| then == now));
        if !alive && pid != std::process::id() {
            out.push((pid, e.path(), text));
        }
    }
    out
}

/// Write a journal file whole (a temporary file renamed over it), creating
/// [`JOURNAL_DIR`].
pub fn write_journal(path: &Path, text: &str) -> Result<(), String> {
    std::fs::create_dir_all(JOURNAL_DIR)
        .map_err(|e| format!("cannot create {JOURNAL_DIR}: {e}"))?;
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn wait_limit() -> Duration {
    let secs = std::env::var("SCHEDLAB_LOCK_WAIT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(600);
    Duration::from_secs(secs)
}

fn try_lock(f: &File) -> std::io::Result<bool> {
    // SAFETY: a valid open descriptor.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EWOULDBLOCK) => Ok(false),
        _ => Err(e),
    }
}

fn holder(f: &mut File) -> String {
    let mut s = String::new();
    let _ = f.rewind().and_then(|()| f.read_to_string(&mut s));
    match s.trim() {
        "" => "another schedlab run".to_string(),
        who => who.to_string(),
    }
}

impl MachineLock {
    /// Take the lock for `what` (e.g. `latency --shield 1`), waiting for a holder as
    /// described in the module documentation. Without the right to create
    /// `/run/schedlab` (not root: such a process cannot change what the lock protects)
    /// no lock is taken.
    pub fn acquire(what: &str) -> Result<MachineLock, String> {
        let dir = std::path::Path::new(LOCK_PATH)
            .parent()
            .expect("a directory");
        if std::fs::create_dir_all(dir).is_err() {
            return Ok(MachineLock {
                _file: None,
                recovered: None,
            });
        }
        let f = match OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(LOCK_PATH)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                return Ok(MachineLock {
                    _file: None,
                    recovered: None,
                })
            }
            Err(e) => return Err(format!("cannot open {LOCK_PATH}: {e}")),
        };
        let f = Self::wait_for(f)?;
        if let Some(mut f) = f.as_ref() {
            let pid = std::process::id();
            let me = format!(
                "schedlab pid {pid} (start time {}) running `{what}`",
                start_time(pid).unwrap_or(0)
            );
            let _ = f
                .set_len(0)
                .and_then(|()| f.rewind())
                .and_then(|()| f.write_all(me.as_bytes()));
        }
        let recovered = [
            crate::latency::shield::Shield::recover_stale(),
            crate::tracefs::recover_stale(),
            crate::cgroup::recover_stale(),
        ]
        .into_iter()
        .flatten()
        .reduce(|a, b| format!("{a}; {b}"));
        if let Some(r) = &recovered {
            eprintln!("note: {r} before this run");
        }
        Ok(MachineLock {
            _file: f,
            recovered,
        })
    }

    /// Wait for the lock on `f` as the module documentation says; None where the kernel
    /// or the file system cannot lock.
    fn wait_for(mut f: File) -> Result<Option<File>, String> {
        let limit = wait_limit();
        let started = Instant::now();
        let mut said = false;
        loop {
            match try_lock(&f) {
                Ok(true) => return Ok(Some(f)),
                Ok(false) => {}
                // A kernel without file locking (CONFIG_FILE_LOCKING=n, as in minimal
                // guests) or a file system without flock: nothing can exclude another
                // run, so this one goes on unlocked, saying so.
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::ENOSYS | libc::EOPNOTSUPP | libc::ENOLCK)
                    ) =>
                {
                    eprintln!(
                        "note: {LOCK_PATH} cannot be locked here ({e}): other schedlab real \
                         runs are not kept out"
                    );
                    return Ok(None);
                }
                Err(e) => return Err(format!("cannot lock {LOCK_PATH}: {e}")),
            }
            let who = holder(&mut f);
            if started.elapsed() >= limit {
                return Err(format!(
                    "{who} is using this machine for a real run (it holds {LOCK_PATH}); \
                     wait for it to finish or stop it, then try again (SCHEDLAB_LOCK_WAIT \
                     sets how many seconds to wait, now {})",
                    limit.as_secs()
                ));
            }
            if !said {
                eprintln!(
                    "waiting for {who} to finish (one real run at a time; up to {} s)...",
                    limit.as_secs()
                );
                said = true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
