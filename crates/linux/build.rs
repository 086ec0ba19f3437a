//! `cfg(cgroup_v1_cpu)` when the building machine has cgroup v1's cpu controller mounted
//! and this build runs as root (CAP_DAC_OVERRIDE: creating a group writes under
//! /sys/fs/cgroup/cpu), so that `cgroup`'s unit test is reported as ignored, with the
//! reason, where it cannot run (not passed).

fn root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & (1 << 1) != 0)
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(cgroup_v1_cpu)");
    println!("cargo::rerun-if-changed=build.rs");
    if std::path::Path::new("/sys/fs/cgroup/cpu/cpu.shares").exists() && root() {
        println!("cargo::rustc-cfg=cgroup_v1_cpu");
    }
}
