//! Can this process set real-time policies? The runner needs `CAP_SYS_NICE` (root has
//! it) for SCHED_DEADLINE / SCHED_FIFO / SCHED_RR and negative nice values.
//! `CAP_IPC_LOCK` is only nice to have: without it `mlockall` is limited by
//! RLIMIT_MEMLOCK and the runner goes on unlocked, saying so.

/// Linux capability numbers (include/uapi/linux/capability.h).
pub const CAP_IPC_LOCK: u32 = 14;
/// Set real-time policies, raise priorities, lower nice values.
pub const CAP_SYS_NICE: u32 = 23;

/// What the runner may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Privileges {
    /// Effective CAP_SYS_NICE.
    pub sys_nice: bool,
    /// Effective CAP_IPC_LOCK.
    pub ipc_lock: bool,
}

/// Why the runner cannot run.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PrivilegeError {
    /// The capability is missing.
    #[error(
        "missing capability CAP_SYS_NICE: real-time policies (SCHED_DEADLINE, SCHED_FIFO, \
         SCHED_RR) need it. Run as root, or grant it (e.g. `sudo setcap cap_sys_nice+ep \
         $(command -v schedlab)`)"
    )]
    MissingSysNice,
    /// /proc/self/status could not be read or has no CapEff line.
    #[error("cannot read this process's capabilities from /proc/self/status: {0}")]
    Unreadable(String),
}

impl Privileges {
    /// The effective capabilities of this process.
    pub fn current() -> Result<Privileges, PrivilegeError> {
        let status = std::fs::read_to_string("/proc/self/status")
            .map_err(|e| PrivilegeError::Unreadable(e.to_string()))?;
        Privileges::from_status(&status)
    }

    /// Parse the `CapEff:` line of a /proc/PID/status text.
    pub fn from_status(status: &str) -> Result<Privileges, PrivilegeError> {
        let mask = cap_eff_of(status)?;
        Ok(Privileges {
            sys_nice: mask & (1 << CAP_SYS_NICE) != 0,
            ipc_lock: mask & (1 << CAP_IPC_LOCK) != 0,
        })
    }

    /// Ok when real-time policies can be set; the error names the missing capability.
    pub fn require_rt(&self) -> Result<(), PrivilegeError> {
        if self.sys_nice {
            Ok(())
        } else {
            Err(PrivilegeError::MissingSysNice)
        }
    }
}

/// The `CapEff:` mask of a /proc/PID/status text.
fn cap_eff_of(status: &str) -> Result<u64, PrivilegeError> {
    let hex = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .map(str::trim)
        .ok_or_else(|| PrivilegeError::Unreadable("no CapEff line".into()))?;
    u64::from_str_radix(hex, 16)
        .map_err(|e| PrivilegeError::Unreadable(format!("CapEff `{hex}`: {e}")))
}

/// This process's effective capability mask (bit N = capability N; 0 when
/// /proc/self/status cannot be read).
pub fn effective_mask() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| cap_eff_of(&s).ok())
        .unwrap_or(0)
}

/// Check the current process (see [`Privileges::require_rt`]).
pub fn check() -> Result<Privileges, PrivilegeError> {
    let p = Privileges::current()?;
    p.require_rt()?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_has_everything() {
        let p = Privileges::from_status("Name:\tx\nCapEff:\t000001fffeffffff\n").unwrap();
        assert!(p.sys_nice && p.ipc_lock);
        assert!(p.require_rt().is_ok());
    }

    #[test]
    fn dropped_sys_nice_is_named() {
        // root's set without bit 23 (capsh --drop=cap_sys_nice).
        let mask = 0x1fffeffffffu64 & !(1 << CAP_SYS_NICE);
        let p = Privileges::from_status(&format!("CapEff:\t{mask:016x}\n")).unwrap();
        assert!(!p.sys_nice && p.ipc_lock);
        let e = p.require_rt().unwrap_err().to_string();
        assert!(e.contains("CAP_SYS_NICE"), "{e}");
    }

    #[test]
    fn unreadable_status_is_an_error() {
        assert!(Privileges::from_status("Name: x\n").is_err());
        assert!(Privileges::from_status("CapEff: zz\n").is_err());
    }
}
