//! One run at a time changes this machine: the system-wide lock every real run takes
//! (real-time threads, CPU shields, IRQ affinities), so that two schedlab runs never
//! overlap — a second shield would journal the first one's shielded state as "original"
//! and restore that, and two real-time runs would measure each other.
//!
//! The lock is an `flock` on [`LOCK_PATH`]: the kernel drops it when its holder exits,
//! however it exits (SIGKILL included), so it can never be left stale. The file says who
//! holds it (PID, start time, command) for the message a waiting run prints. A run waits
//! for the holder for up to `SCHEDLAB_LOCK_WAIT` seconds (default 600; a number from 0 to
//! 86400, fractions allowed; anything else is refused), then gives up with that message;
//! `SCHEDLAB_LOCK_WAIT=0` gives up at once. A lock held by a process that is not a
//! schedlab run is named from /proc/locks, never by a PID an earlier run left in the file.
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
/// path, text), for the next run to undo what the killed one changed. The temporary
/// files `{prefix}PID.tmp` of runs that are gone are removed on the way.
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
        // A run killed inside `write_journal` leaves its temporary file (often empty):
        // its journal, if any, is the `.json` beside it, so once no process has that PID
        // the temporary file is only litter, removed here.
        if let Some(pid) = name
            .strip_prefix(prefix)
            .and_then(|s| s.strip_suffix(".tmp"))
            .and_then(|s| s.parse::<u32>().ok())
        {
            if start_time(pid).is_none() {
                let _ = std::fs::remove_file(e.path());
            }
            continue;
        }
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

/// The longest `SCHEDLAB_LOCK_WAIT` accepted: a day.
pub const MAX_LOCK_WAIT_S: f64 = 86_400.0;

/// How long a run waits for the lock: `SCHEDLAB_LOCK_WAIT` seconds (a number >= 0,
/// fractions allowed, at most [`MAX_LOCK_WAIT_S`]), 600 when unset. Anything else is an
/// error naming the variable, never a silent default.
pub fn wait_limit() -> Result<Duration, String> {
    match std::env::var("SCHEDLAB_LOCK_WAIT") {
        Err(std::env::VarError::NotPresent) => Ok(Duration::from_secs(600)),
        Err(std::env::VarError::NotUnicode(v)) => Err(format!(
            "SCHEDLAB_LOCK_WAIT={}: not a number of seconds",
            v.to_string_lossy()
        )),
        Ok(v) => parse_wait(&v),
    }
}

/// `SCHEDLAB_LOCK_WAIT`'s value as a duration (see [`wait_limit`]).
pub fn parse_wait(v: &str) -> Result<Duration, String> {
    let bad = |why: &str| {
        format!(
            "SCHEDLAB_LOCK_WAIT={v}: {why} (seconds to wait for another real run: a number \
             from 0 to {MAX_LOCK_WAIT_S}, e.g. 600 or 0.5)"
        )
    };
    let secs: f64 = v
        .trim()
        .parse()
        .map_err(|_| bad("not a number of seconds"))?;
    if !secs.is_finite() || !(0.0..=MAX_LOCK_WAIT_S).contains(&secs) {
        return Err(bad("out of range"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The opening of the message of a run refused because another one holds the lock.
const BUSY: &str = "is using this machine for a real run";

/// Whether an error of [`MachineLock::acquire`] is the lock being held by another run
/// (not an error of this machine or of `SCHEDLAB_LOCK_WAIT`).
pub fn is_busy(message: &str) -> bool {
    message.contains(BUSY)
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

/// Who holds the lock, for the messages: what the holder wrote in the file when that
/// process is still alive (same PID and start time); else the lock is held by a process
/// that did not write it (not a schedlab run, e.g. `flock` on the file), found in
/// /proc/locks, and the PID left in the file by an earlier run is not named.
fn holder(f: &mut File) -> String {
    let mut s = String::new();
    let _ = f.rewind().and_then(|()| f.read_to_string(&mut s));
    if let Some((pid, start)) = written_holder(&s) {
        if start_time(pid) == Some(start) {
            return s.trim().to_string();
        }
    }
    use std::os::unix::fs::MetadataExt;
    let from_locks = f.metadata().ok().and_then(|m| {
        let locks = std::fs::read_to_string("/proc/locks").ok()?;
        lock_holder(&locks, libc::major(m.dev()), libc::minor(m.dev()), m.ino())
    });
    match from_locks {
        Some(pid) if pid != std::process::id() => {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .map(|c| c.trim().to_string())
                .unwrap_or_else(|_| "?".into());
            format!("process {pid} ({comm}), not a schedlab run,")
        }
        _ => "a process that is not a schedlab run".to_string(),
    }
}

/// (PID, start time) from the lock file's text
/// (`schedlab pid N (start time S) running ...`).
fn written_holder(text: &str) -> Option<(u32, u64)> {
    let rest = text.trim().strip_prefix("schedlab pid ")?;
    let (pid, rest) = rest.split_once(" (start time ")?;
    let (start, _) = rest.split_once(')')?;
    Some((pid.parse().ok()?, start.parse().ok()?))
}

/// The PID holding a FLOCK on the file (device `major:minor`, inode `ino`) in a
/// /proc/locks text (`1: FLOCK  ADVISORY  WRITE 1234 fe:00:5678 0 EOF`, the device in hex).
fn lock_holder(locks: &str, major: u32, minor: u32, ino: u64) -> Option<u32> {
    let file = format!("{major:02x}:{minor:02x}:{ino}");
    locks.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        // Blocked waiters are listed as `1: -> FLOCK ...`: skip them.
        if f.get(1) != Some(&"FLOCK") {
            return None;
        }
        (f.get(5) == Some(&file.as_str()))
            .then(|| f.get(4)?.parse().ok())
            .flatten()
    })
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
        let limit = wait_limit()?;
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
                    "{who} {BUSY} (it holds {LOCK_PATH}); wait for it to finish or stop \
                     it, then try again (SCHEDLAB_LOCK_WAIT sets how many seconds to wait, \
                     now {})",
                    limit.as_secs_f64()
                ));
            }
            if !said {
                eprintln!(
                    "waiting for {who} to finish (one real run at a time; up to {} s)...",
                    limit.as_secs_f64()
                );
                said = true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_wait_takes_seconds_with_fractions_and_refuses_the_rest() {
        assert_eq!(parse_wait("0"), Ok(Duration::ZERO));
        assert_eq!(parse_wait(" 600 "), Ok(Duration::from_secs(600)));
        assert_eq!(parse_wait("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_wait("86400"), Ok(Duration::from_secs(86_400)));
        for bad in ["abc", "", "-1", "86401", "1e300", "inf", "NaN", "10s"] {
            let e = parse_wait(bad).unwrap_err();
            assert!(e.starts_with(&format!("SCHEDLAB_LOCK_WAIT={bad}: ")), "{e}");
            assert!(e.contains("from 0 to 86400"), "{e}");
        }
    }

    #[test]
    fn the_written_holder_is_read_back() {
        assert_eq!(
            written_holder("schedlab pid 42 (start time 777) running `run t`"),
            Some((42, 777))
        );
        assert_eq!(written_holder(""), None);
        assert_eq!(written_holder("pid 42"), None);
    }

    #[test]
    fn the_lock_holder_is_found_by_device_and_inode() {
        let locks = "1: FLOCK  ADVISORY  WRITE 28791 fe:00:5816548 0 EOF\n\
                     1: -> FLOCK  ADVISORY  WRITE 999 00:19:77 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 1234 00:19:77 0 EOF\n\
                     3: POSIX  ADVISORY  WRITE 55 00:19:78 0 EOF\n";
        assert_eq!(lock_holder(locks, 0, 0x19, 77), Some(1234));
        assert_eq!(lock_holder(locks, 0xfe, 0, 5_816_548), Some(28791));
        assert_eq!(lock_holder(locks, 0, 0x19, 78), None);
        assert_eq!(lock_holder(locks, 1, 0x19, 77), None);
    }
}
