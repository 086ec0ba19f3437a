//! An optional CPU cgroup for a run's fair tasks, weighted far above the rest of the
//! machine, so that on a machine shared with other work the fair tasks compete among
//! themselves (what the simulator models) rather than with everyone else's sessions.
//!
//! With the kernel's autogroups every session is one scheduling entity of weight 1024 at
//! the top level: a compile in another terminal takes half of a CPU from the workload and
//! its wake-ups wait behind that session's slices. A group with `cpu.shares` 262144 (the
//! cgroup v1 maximum, 256 × a nice-0 task) leaves other sessions about 0.4 % of the CPU
//! while the run lasts, and nothing in the way the workload's tasks share their group
//! changes (one level of entities, as in an autogroup).
//!
//! cgroup v1's `cpu` controller only (`/sys/fs/cgroup/cpu`); only SCHED_OTHER/BATCH/IDLE
//! workers go in (with RT group scheduling a new group has no RT runtime, so RT threads
//! stay where they are). The group is `schedlab-<pid>-<n>`; dropping it moves any thread
//! still inside back to the root group and removes the directory, so it is gone on every
//! path that returns. A SIGKILL leaves an empty directory behind, which the next real run
//! removes when it takes the machine lock ([`recover_stale`]).

use std::io;
use std::path::{Path, PathBuf};

/// Where cgroup v1's cpu controller is mounted.
const CPU_ROOT: &str = "/sys/fs/cgroup/cpu";
/// The largest `cpu.shares` (kernel/sched/core.c MAX_SHARES = 1 << 18).
pub const MAX_SHARES: u64 = 1 << 18;

/// A cpu cgroup holding a run's fair workers; removed on drop.
#[derive(Debug)]
pub struct FairGroup {
    dir: PathBuf,
    /// Its `cpu.shares`.
    pub shares: u64,
}

impl FairGroup {
    /// Create `schedlab-<pid>-<n>` under the cpu controller with `shares`.
    pub fn create(shares: u64) -> Result<FairGroup, String> {
        let root = Path::new(CPU_ROOT);
        if !root.join("cpu.shares").exists() {
            return Err(format!(
                "no cgroup v1 cpu controller at {CPU_ROOT} (cgroup v2 is not supported for this yet)"
            ));
        }
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = root.join(format!("schedlab-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let g = FairGroup { dir, shares };
        std::fs::write(g.dir.join("cpu.shares"), shares.to_string())
            .map_err(|e| format!("cannot set {}/cpu.shares: {e}", g.dir.display()))?;
        Ok(g)
    }

    /// Move thread `tid` into the group.
    pub fn add(&self, tid: libc::pid_t) -> io::Result<()> {
        std::fs::write(self.dir.join("tasks"), tid.to_string())
    }

    /// The group's directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for FairGroup {
    fn drop(&mut self) {
        // Threads still inside (a worker that has not exited yet) go back to the root.
        if let Ok(tasks) = std::fs::read_to_string(self.dir.join("tasks")) {
            for tid in tasks.split_whitespace() {
                let _ = std::fs::write(Path::new(CPU_ROOT).join("tasks"), tid);
            }
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Remove the groups of runs that are gone (killed before their drop ran), as the
/// machine lock's holder does before its run; says what it removed. Only empty groups
/// can be removed (`rmdir`), and a killed run's threads have all exited.
pub fn recover_stale() -> Option<String> {
    recover_stale_in(Path::new(CPU_ROOT))
}

fn recover_stale_in(root: &Path) -> Option<String> {
    let mut gone = Vec::new();
    for e in std::fs::read_dir(root).ok()?.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = name
            .strip_prefix("schedlab-")
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == std::process::id() || crate::machine_lock::start_time(pid).is_some() {
            continue;
        }
        if std::fs::remove_dir(e.path()).is_ok() {
            gone.push(name);
        }
    }
    (!gone.is_empty()).then(|| {
        format!(
            "removed the cpu cgroup{} {} of a dead run",
            if gone.len() > 1 { "s" } else { "" },
            gone.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(
        not(cgroup_v1_cpu),
        ignore = "needs root and cgroup v1's cpu controller at /sys/fs/cgroup/cpu (see build.rs)"
    )]
    fn a_group_is_created_weighted_and_removed() {
        // build.rs found root and the controller, so a failure here is a failure.
        let g = FairGroup::create(MAX_SHARES).expect("cgroup v1 cpu controller, as root");
        let dir = g.path().to_path_buf();
        let shares = std::fs::read_to_string(dir.join("cpu.shares")).unwrap();
        assert_eq!(shares.trim(), MAX_SHARES.to_string());
        // A thread moved in is moved out again on drop.
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let h = std::thread::spawn(move || {
            tx.send(crate::policy::gettid()).unwrap();
            let _ = done_rx.recv();
        });
        let tid = rx.recv().unwrap();
        g.add(tid).unwrap();
        let inside = std::fs::read_to_string(dir.join("tasks")).unwrap();
        assert!(inside.split_whitespace().any(|t| t == tid.to_string()));
        drop(g);
        assert!(!dir.exists(), "{} left behind", dir.display());
        let cg = std::fs::read_to_string(format!("/proc/self/task/{tid}/cgroup")).unwrap();
        assert!(cg.lines().any(|l| l.ends_with(":cpu:/")), "{cg}");
        done_tx.send(()).unwrap();
        h.join().unwrap();
    }

    #[test]
    fn a_dead_runs_group_is_removed_and_a_live_ones_kept() {
        // A plain directory tree stands for the controller: the rule is about names and
        // PIDs (rmdir of a real group works the same way once it is empty).
        let root = std::env::temp_dir().join(format!("schedlab-cg-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        // PID_MAX_LIMIT is 2^22: this PID is never alive.
        let dead = root.join("schedlab-4194305-0");
        let mine = root.join(format!("schedlab-{}-7", std::process::id()));
        let init = root.join("schedlab-1-0");
        let other = root.join("user.slice");
        for d in [&dead, &mine, &init, &other] {
            std::fs::create_dir_all(d).unwrap();
        }
        let said = recover_stale_in(&root).expect("the dead run's group is named");
        assert!(said.contains("schedlab-4194305-0"), "{said}");
        assert!(!dead.exists());
        assert!(mine.exists() && init.exists() && other.exists());
        assert_eq!(recover_stale_in(&root), None, "nothing left to remove");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
