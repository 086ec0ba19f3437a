//! Decides whether the real-kernel tests can run on the machine that builds them, so that
//! the test harness reports them as *ignored, with the reason* where they cannot (not as
//! passed): `cfg(real_kernel)` is set when this process has CAP_SYS_NICE and
//! CAP_DAC_OVERRIDE (root) and the machine has at least 2 CPUs.
//! `SCHEDLAB_REAL_TESTS=1` / `=0` forces the choice. `cfg(cyclictest)` is set when
//! `cyclictest` (rt-tests) is on PATH, for the comparison against it, and
//! `cfg(cgroup_v1_cpu)` when cgroup v1's cpu controller is mounted (`run --fair-group`),
//! `cfg(capsh)` when libcap's `capsh` exists (the tests that drop a capability with it).

/// Where libcap's capsh is installed (libcap2-bin).
const CAPSH: [&str; 3] = ["/usr/sbin/capsh", "/sbin/capsh", "/usr/bin/capsh"];

fn capable() -> bool {
    let caps = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
        })
        .unwrap_or(0);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    caps & (1 << 23) != 0 && caps & (1 << 1) != 0 && cpus >= 2
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(real_kernel)");
    println!("cargo::rustc-check-cfg=cfg(cyclictest)");
    println!("cargo::rustc-check-cfg=cfg(cgroup_v1_cpu)");
    println!("cargo::rustc-check-cfg=cfg(capsh)");
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=SCHEDLAB_REAL_TESTS");
    let on = match std::env::var("SCHEDLAB_REAL_TESTS").as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        _ => capable(),
    };
    if on {
        println!("cargo::rustc-cfg=real_kernel");
    }
    // The tests run the capsh found here (tests/common::capsh()).
    if let Some(capsh) = CAPSH.iter().find(|p| std::path::Path::new(p).exists()) {
        println!("cargo::rustc-cfg=capsh");
        println!("cargo::rustc-env=SCHEDLAB_TEST_CAPSH={capsh}");
    }
    if std::path::Path::new("/sys/fs/cgroup/cpu/cpu.shares").exists() {
        println!("cargo::rustc-cfg=cgroup_v1_cpu");
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|d| d.join("cyclictest").is_file()) {
        println!("cargo::rustc-cfg=cyclictest");
    }
}
