//! The host kernel's fair-class rules and tunables, read where the kernel shows them and
//! otherwise taken from its documented defaults, each with where it came from: what a
//! simulation must be given to model this machine, and what a real run cannot change.
//!
//! - fair class: EEVDF from v6.6, CFS before (kernel/sched/fair.c);
//! - `base_slice` (EEVDF) / `min_granularity`, `latency`, `wakeup_granularity` (CFS) and
//!   `migration_cost`: `/sys/kernel/debug/sched/*_ns` when debugfs is mounted (it is not
//!   mounted here by the runner: mounting changes the machine), else the kernel's defaults
//!   × `1 + ilog2(min(online CPUs, 8))` (SCHED_TUNABLESCALING_LOG, the boot-time scaling:
//!   the kernel scales by the CPUs online at boot, not by the CPUs a workload uses);
//! - `HZ`: CONFIG_HZ from the kernel config;
//! - SCHED_RR slice: `/proc/sys/kernel/sched_rr_timeslice_ms`.

use crate::policy;
use schedlab_model::time::{MS, US};
use schedlab_model::workload::tunable_factor;
use schedlab_model::Ns;

/// One tunable's value and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tunable {
    /// Value in ns.
    pub ns: Ns,
    /// `debugfs` (read from /sys/kernel/debug/sched) or `default` (documented default).
    pub source: &'static str,
}

/// What the host's scheduler is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSched {
    /// Kernel release (`uname -r`).
    pub release: String,
    /// Whether its fair class is EEVDF (v6.6+), else CFS.
    pub eevdf: bool,
    /// CPUs online (the tunables' scaling uses them).
    pub online_cpus: usize,
    /// CONFIG_HZ when known.
    pub hz: Option<u32>,
    /// EEVDF `base_slice` (v6.6+), or CFS `min_granularity`.
    pub base_slice: Tunable,
    /// CFS `sched_latency` (meaningless under EEVDF).
    pub latency: Tunable,
    /// CFS `wakeup_granularity` (meaningless under EEVDF).
    pub wakeup_granularity: Tunable,
    /// `sysctl_sched_migration_cost`.
    pub migration_cost: Tunable,
    /// SCHED_RR time slice.
    pub rr_timeslice: Option<Ns>,
}

const DEBUGFS: &str = "/sys/kernel/debug/sched";

fn debugfs_ns(name: &str) -> Option<Ns> {
    std::fs::read_to_string(format!("{DEBUGFS}/{name}"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn tunable(name: &str, default: Ns) -> Tunable {
    match debugfs_ns(name) {
        Some(ns) => Tunable {
            ns,
            source: "debugfs",
        },
        None => Tunable {
            ns: default,
            source: "default",
        },
    }
}

impl HostSched {
    /// Read this machine's.
    pub fn read() -> HostSched {
        let release = policy::kernel_release();
        let eevdf = policy::kernel_at_least(6, 6);
        // SAFETY: sysconf has no preconditions.
        let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as usize;
        let factor = tunable_factor(online);
        // v6.15 lowered the default base slice from 0.75 ms to 0.70 ms.
        let slice_default = if policy::kernel_at_least(6, 15) {
            700 * US
        } else {
            750 * US
        };
        let base_slice = if eevdf {
            tunable("base_slice_ns", slice_default * factor)
        } else {
            tunable("min_granularity_ns", 750 * US * factor)
        };
        HostSched {
            hz: crate::measure::config_hz(&release),
            release,
            eevdf,
            online_cpus: online,
            base_slice,
            latency: tunable("latency_ns", 6 * MS * factor),
            wakeup_granularity: tunable("wakeup_granularity_ns", MS * factor),
            migration_cost: tunable("migration_cost_ns", 500 * US),
            rr_timeslice: std::fs::read_to_string("/proc/sys/kernel/sched_rr_timeslice_ms")
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .map(|ms| ms * MS),
        }
    }

    /// The fair policy of this kernel (`eevdf` or `cfs`).
    pub fn fair_policy(&self) -> schedlab_model::Policy {
        if self.eevdf {
            schedlab_model::Policy::Eevdf
        } else {
            schedlab_model::Policy::Cfs
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_described_with_sources() {
        let h = HostSched::read();
        assert!(h.online_cpus >= 1);
        assert!(h.base_slice.ns >= 100 * US, "{h:?}");
        assert!(matches!(h.base_slice.source, "debugfs" | "default"));
        assert_eq!(h.eevdf, policy::kernel_at_least(6, 6));
    }
}
