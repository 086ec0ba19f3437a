//! The doctor's checks, one function per line of its report, in [`CHECKS`] order. To add
//! a line: write `fn name(h: &dyn Host) -> Check` here (or in a module of its own) and
//! list it in [`CHECKS`]; a test with a [`FakeHost`](super::host::FakeHost) shows it for
//! each state it can report.

use super::host::Host;
use super::{Check, Status};
use schedlab_linux::policy::DlCapacity;
use schedlab_linux::privileges::Privileges;

/// Every check, in the order printed.
pub const CHECKS: &[fn(&dyn Host) -> Check] = &[
    kernel,
    cap_sys_nice,
    cap_sys_admin,
    memlock,
    cpus,
    sched_deadline,
    rt_throttling,
    tracefs,
    perf,
    irq_affinity,
    sched_ext,
    cpufreq,
    virtualisation,
    cpuidle,
    machine_lock,
    tools,
];

const CAP_SYS_ADMIN: u32 = 21;

fn release(h: &dyn Host) -> String {
    h.read("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// `6.12.3-foo` → (6, 12).
fn version(release: &str) -> Option<(u32, u32)> {
    let mut it = release
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|s| s.parse::<u32>().ok());
    Some((it.next()?, it.next()?))
}

fn read_i64(h: &dyn Host, path: &str) -> Option<i64> {
    h.read(path)?.trim().parse().ok()
}

/// The effective capability mask of this process (None when unreadable).
fn cap_mask(h: &dyn Host) -> Option<u64> {
    let status = h.read("/proc/self/status")?;
    let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
    u64::from_str_radix(hex.trim(), 16).ok()
}

/// CPUs online, from a list such as `0-3,6`.
fn online_cpus(h: &dyn Host) -> Vec<usize> {
    h.read("/sys/devices/system/cpu/online")
        .map(|s| schedlab_linux::latency::shield::parse_list(s.trim()))
        .unwrap_or_default()
}

/// Kernel release and HZ (the tick: every simulated platform has an `hz`).
pub fn kernel(h: &dyn Host) -> Check {
    let rel = release(h);
    match h.config_hz(&rel) {
        Some(hz) => Check::ok("kernel", format!("Linux {rel}, HZ {hz}")),
        None => Check::new(
            "kernel",
            Status::Info,
            format!(
                "Linux {rel}; HZ unknown (no /boot/config-{rel} or /proc/config.gz): real \
                 runs report `hz: null`"
            ),
            Some("schedlab calibrate measures this machine's tick and costs".into()),
        ),
    }
}

/// CAP_SYS_NICE: SCHED_DEADLINE / FIFO / RR and negative nice values.
pub fn cap_sys_nice(h: &dyn Host) -> Check {
    let Some(mask) = cap_mask(h) else {
        return Check::new(
            "cap_sys_nice",
            Status::Missing,
            "cannot read CapEff from /proc/self/status".into(),
            None,
        );
    };
    let status = format!("CapEff:\t{mask:016x}\n");
    match Privileges::from_status(&status) {
        Ok(p) if p.sys_nice => Check::ok(
            "cap_sys_nice",
            "real-time policies can be set (schedlab run, latency, compare --real)".into(),
        ),
        _ => Check::new(
            "cap_sys_nice",
            Status::Missing,
            "no CAP_SYS_NICE: `run`, `latency` and `compare --real` cannot set SCHED_DEADLINE, \
             SCHED_FIFO or SCHED_RR"
                .into(),
            Some(
                "run them as root (sudo schedlab ...), or `sudo setcap \
                 cap_sys_nice,cap_ipc_lock+ep $(command -v schedlab)`"
                    .into(),
            ),
        ),
    }
}

/// CAP_SYS_ADMIN: tracefs, system-wide perf counters, sched_ext, the CPU shield.
pub fn cap_sys_admin(h: &dyn Host) -> Check {
    match cap_mask(h) {
        Some(m) if m & (1 << CAP_SYS_ADMIN) != 0 => Check::ok(
            "cap_sys_admin",
            "tracing, system-wide perf counters, sched_ext and --shield are allowed".into(),
        ),
        _ => Check::new(
            "cap_sys_admin",
            Status::Missing,
            "no CAP_SYS_ADMIN: no trace recording (trace-cmd, tracefs), no sched_ext backend, \
             no `latency --shield`; context switches are counted from /proc/stat"
                .into(),
            Some("run those as root (sudo)".into()),
        ),
    }
}

/// Locked memory: the runner and the latency probe call mlockall.
pub fn memlock(h: &dyn Host) -> Check {
    const CAP_IPC_LOCK: u32 = 14;
    if cap_mask(h).is_some_and(|m| m & (1 << CAP_IPC_LOCK) != 0) {
        return Check::ok("memlock", "memory can be locked (CAP_IPC_LOCK)".into());
    }
    let limit = h.read("/proc/self/limits").and_then(|t| {
        t.lines()
            .find(|l| l.starts_with("Max locked memory"))
            .and_then(|l| l.split_whitespace().nth(3).map(str::to_string))
    });
    match limit.as_deref() {
        Some("unlimited") => Check::ok("memlock", "RLIMIT_MEMLOCK is unlimited".into()),
        other => Check::new(
            "memlock",
            Status::Warn,
            format!(
                "no CAP_IPC_LOCK and RLIMIT_MEMLOCK {} bytes: real runs go on unlocked (page \
                 faults can add latency)",
                other.unwrap_or("unknown")
            ),
            Some("ulimit -l unlimited (as root), or run as root".into()),
        ),
    }
}

/// CPUs online and isolated (isolcpus=).
pub fn cpus(h: &dyn Host) -> Check {
    let online = online_cpus(h);
    let isolated = h
        .read("/sys/devices/system/cpu/isolated")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let mut detail = format!(
        "{} online ({})",
        online.len(),
        schedlab_linux::latency::shield::format_list(&online)
    );
    if !isolated.is_empty() {
        detail.push_str(&format!(", isolated (isolcpus) {isolated}"));
    }
    if online.is_empty() {
        return Check::new(
            "cpus",
            Status::Warn,
            "cannot read /sys/devices/system/cpu/online".into(),
            None,
        );
    }
    Check::ok("cpus", detail)
}

/// SCHED_DEADLINE admission: the capacity and what already holds it.
pub fn sched_deadline(h: &dyn Host) -> Check {
    let n = online_cpus(h).len().max(1);
    let rt_share = match (
        read_i64(h, "/proc/sys/kernel/sched_rt_runtime_us"),
        read_i64(h, "/proc/sys/kernel/sched_rt_period_us"),
    ) {
        (Some(r), _) if r < 0 => None,
        (Some(r), Some(p)) if p > 0 => Some(r as f64 / p as f64),
        _ => Some(0.95),
    };
    let fs = (
        read_i64(h, "/sys/kernel/debug/sched/fair_server/cpu0/runtime"),
        read_i64(h, "/sys/kernel/debug/sched/fair_server/cpu0/period"),
    );
    let (fair_server_share, fair_server_source) = match fs {
        (Some(r), Some(p)) if p > 0 => (r as f64 / p as f64, "debugfs"),
        _ if version(&release(h)).is_some_and(|v| v >= (6, 12)) => (0.05, "v6.12+ default 50ms/1s"),
        _ => (0.0, "no fair_server before v6.12"),
    };
    let cap = DlCapacity {
        cpus: n,
        rt_share,
        fair_server_share,
        fair_server_source,
    };
    let held = h.deadline_threads();
    let used: f64 = held
        .iter()
        .map(|t| t.runtime as f64 / t.period.max(1) as f64)
        .sum();
    let available = cap.available();
    let mut detail = format!("capacity {}", cap.explain());
    if held.is_empty() {
        detail.push_str("; no SCHED_DEADLINE task holds any");
    } else {
        let list: Vec<String> = held
            .iter()
            .take(5)
            .map(|t| {
                format!(
                    "{} (tid {}, {:.3})",
                    t.comm,
                    t.tid,
                    t.runtime as f64 / t.period.max(1) as f64
                )
            })
            .collect();
        detail.push_str(&format!(
            "; held: {used:.3} by {} SCHED_DEADLINE thread(s): {}{}",
            held.len(),
            list.join(", "),
            if held.len() > 5 { ", ..." } else { "" }
        ));
    }
    if available.is_infinite() {
        return Check::new(
            "sched_deadline",
            Status::Warn,
            format!("{detail}; admission control is off"),
            Some(
                "nothing stops an over-committed set: echo 950000 > \
                 /proc/sys/kernel/sched_rt_runtime_us restores the default"
                    .into(),
            ),
        );
    }
    let free = available - used;
    detail.push_str(&format!("; free {free:.3}"));
    if free <= 0.0 {
        Check::new(
            "sched_deadline",
            Status::Missing,
            detail,
            Some(
                "stop the SCHED_DEADLINE threads listed (or `chrt -o -p 0 TID`), or raise \
                 kernel.sched_rt_runtime_us"
                    .into(),
            ),
        )
    } else {
        Check::ok("sched_deadline", detail)
    }
}

/// RT throttling: how much of each period real-time tasks may use.
pub fn rt_throttling(h: &dyn Host) -> Check {
    let runtime = read_i64(h, "/proc/sys/kernel/sched_rt_runtime_us");
    let period = read_i64(h, "/proc/sys/kernel/sched_rt_period_us");
    match (runtime, period) {
        (Some(r), _) if r < 0 => Check::ok(
            "rt_throttling",
            "off (sched_rt_runtime_us = -1): a runaway FIFO task can hold a CPU forever".into(),
        ),
        (Some(r), Some(p)) if p > 0 => {
            let detail = format!(
                "RT tasks may use {r} us of every {p} us ({:.0}%); a CPU-bound FIFO/RR task \
                 is then throttled for {} us",
                100.0 * r as f64 / p as f64,
                p - r
            );
            if r * 100 >= p * 95 {
                Check::ok("rt_throttling", format!("{detail} (the kernel's default)"))
            } else {
                Check::new(
                    "rt_throttling",
                    Status::Warn,
                    format!("{detail}: lower than the default 95%"),
                    Some("sysctl -w kernel.sched_rt_runtime_us=950000".into()),
                )
            }
        }
        _ => Check::new(
            "rt_throttling",
            Status::Warn,
            "cannot read /proc/sys/kernel/sched_rt_{runtime,period}_us".into(),
            None,
        ),
    }
}

/// tracefs, the scheduler tracepoints and the function tracer's filter files.
pub fn tracefs(h: &dyn Host) -> Check {
    let root = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .into_iter()
        .find(|r| h.exists(&format!("{r}/trace")));
    let Some(root) = root else {
        // Unmounted is no obstacle where the kernel has tracefs and this process may
        // mount it: schedlab's traced runs and `trace-cmd record` mount it themselves.
        let in_kernel = h.read("/proc/filesystems").is_some_and(|f| {
            f.lines()
                .any(|l| l.split_whitespace().last() == Some("tracefs"))
        });
        let may_mount = cap_mask(h).is_some_and(|m| m & (1 << CAP_SYS_ADMIN) != 0);
        return match (in_kernel, may_mount) {
            (true, true) => Check::ok(
                "tracefs",
                "not mounted yet; the kernel has tracefs and this process may mount it: \
                 traced runs (`run --trace-out`) and `trace-cmd record` mount it at \
                 /sys/kernel/tracing themselves"
                    .into(),
            ),
            (true, false) => Check::new(
                "tracefs",
                Status::Missing,
                "tracefs is not mounted (no /sys/kernel/tracing/trace) and this process \
                 may not mount it (no CAP_SYS_ADMIN): no trace recording"
                    .into(),
                Some("as root: mount -t tracefs nodev /sys/kernel/tracing".into()),
            ),
            (false, _) => Check::new(
                "tracefs",
                Status::Missing,
                "the kernel has no tracefs (not in /proc/filesystems): no trace recording".into(),
                Some("a kernel with CONFIG_TRACING and scheduler tracepoints".into()),
            ),
        };
    };
    if !h.exists(&format!("{root}/events/sched/sched_switch")) {
        return Check::new(
            "tracefs",
            Status::Missing,
            format!("{root} has no sched:sched_switch tracepoint"),
            Some("a kernel with CONFIG_TRACING and scheduler tracepoints".into()),
        );
    }
    let filter = format!("{root}/set_ftrace_filter");
    match h.open_error(&filter) {
        Some(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Check::new(
            "tracefs",
            Status::Warn,
            format!(
                "{root}: scheduler events ok; the function tracer's filter files refuse even \
                 root ({filter}: {e}), so `trace-cmd record` exits 1 at its final reset after \
                 writing a complete trace"
            ),
            Some(
                "use the trace anyway, or record through a tracefs instance (docs/traces.md, \
                 \"Importing a kernel trace\")"
                    .into(),
            ),
        ),
        _ => Check::ok(
            "tracefs",
            format!("{root}: scheduler events (sched_switch, sched_wakeup) can be recorded"),
        ),
    }
}

/// perf counters: the runner counts context switches with a software counter.
pub fn perf(h: &dyn Host) -> Check {
    let paranoid = h
        .read("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "?".into());
    let hw = match h.perf_hardware() {
        Ok(()) => "hardware counters available".to_string(),
        Err(e) => format!("no hardware counters ({e}; usual in a VM)"),
    };
    match h.perf_software() {
        Ok(()) => Check::ok(
            "perf",
            format!(
                "system-wide context-switch counter available (switch_source: perf); {hw}; \
                 perf_event_paranoid {paranoid}"
            ),
        ),
        Err(e) => Check::new(
            "perf",
            Status::Warn,
            format!(
                "system-wide context-switch counter refused ({e}; perf_event_paranoid \
                 {paranoid}): real runs count switches from /proc/stat (switch_source: \
                 proc_stat, split evenly over CPUs); {hw}"
            ),
            Some("run as root, or sysctl -w kernel.perf_event_paranoid=-1".into()),
        ),
    }
}

/// IRQ affinity: what `latency --shield` moves.
pub fn irq_affinity(h: &dyn Host) -> Check {
    let irqs: Vec<String> = h
        .list("/proc/irq")
        .into_iter()
        .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    let irqbalance = h
        .list("/proc")
        .iter()
        .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
        .any(|p| {
            h.read(&format!("/proc/{p}/comm")).as_deref().map(str::trim) == Some("irqbalance")
        });
    if !h.writable("/proc/irq/default_smp_affinity") {
        return Check::new(
            "irq_affinity",
            Status::Missing,
            format!(
                "{} IRQs; their affinity cannot be changed by this process: `latency \
                 --shield` cannot move them",
                irqs.len()
            ),
            Some("run as root".into()),
        );
    }
    if irqbalance {
        return Check::new(
            "irq_affinity",
            Status::Warn,
            format!(
                "{} IRQs, affinity writable; irqbalance is running and may move IRQs back \
                 onto a shielded CPU",
                irqs.len()
            ),
            Some("systemctl stop irqbalance (for the shielded runs)".into()),
        );
    }
    Check::ok(
        "irq_affinity",
        format!(
            "{} IRQs, affinity writable (`latency --shield` moves those that accept it)",
            irqs.len()
        ),
    )
}

/// sched_ext: the kernel side and the loader of `run --backend scx`.
pub fn sched_ext(h: &dyn Host) -> Check {
    let rel = release(h);
    let Some(state) = h.read("/sys/kernel/sched_ext/state") else {
        let why = match (
            version(&rel),
            h.config_option(&rel, "CONFIG_SCHED_CLASS_EXT"),
        ) {
            (Some(v), _) if v < (6, 12) => format!("Linux {rel} is older than 6.12"),
            (_, Some(false)) => format!("Linux {rel} is built without CONFIG_SCHED_CLASS_EXT"),
            _ => format!("Linux {rel} has no /sys/kernel/sched_ext"),
        };
        return Check::new(
            "sched_ext",
            Status::Missing,
            format!("{why}: `run --backend scx` is not available"),
            Some(
                "a Linux >= 6.12 kernel with CONFIG_SCHED_CLASS_EXT=y; or scx/guest/run.sh \
                 (the schedulers in a qemu guest, docs/scx.md)"
                    .into(),
            ),
        );
    };
    let loader = h
        .env("SCHEDLAB_SCX_LOADER")
        .filter(|p| h.exists(p))
        .or_else(|| Some("target/scx/scx_schedlab".to_string()).filter(|p| h.exists(p)));
    let state = state.trim();
    match loader {
        Some(l) => Check::ok(
            "sched_ext",
            format!("sched_ext state `{state}`; loader {l}"),
        ),
        None => Check::new(
            "sched_ext",
            Status::Warn,
            format!(
                "sched_ext state `{state}`; no loader (SCHEDLAB_SCX_LOADER or \
                 target/scx/scx_schedlab)"
            ),
            Some("scx/build.sh (docs/scx.md)".into()),
        ),
    }
}

/// CPU frequency governor: frequency changes show up as varying execution times.
pub fn cpufreq(h: &dyn Host) -> Check {
    let mut governors: Vec<String> = online_cpus(h)
        .iter()
        .filter_map(|c| {
            h.read(&format!(
                "/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"
            ))
        })
        .map(|s| s.trim().to_string())
        .collect();
    governors.sort();
    governors.dedup();
    match governors.as_slice() {
        [] => Check::new(
            "cpufreq",
            Status::Info,
            "no cpufreq driver: the frequency is fixed or the hypervisor's".into(),
            None,
        ),
        [g] if g == "performance" => Check::ok("cpufreq", "governor performance".into()),
        gs => Check::new(
            "cpufreq",
            Status::Warn,
            format!(
                "governor {}: the clock speed varies with load, and so do measured run times",
                gs.join(", ")
            ),
            Some(
                "as root: cpupower frequency-set -g performance (apt-get install \
                 linux-cpupower), or echo performance | tee \
                 /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"
                    .into(),
            ),
        ),
    }
}

/// CPU idle states (cpuidle driver, governor, states of CPU 0 with their exit latencies)
/// and whether a PM QoS CPU latency request holds them off now.
pub fn cpuidle(h: &dyn Host) -> Check {
    let base = "/sys/devices/system/cpu/cpuidle";
    let get = |f: &str| h.read(&format!("{base}/{f}")).map(|s| s.trim().to_string());
    let qos = schedlab_linux::pm_qos::DEVICE;
    let limit = h
        .read_bytes(qos)
        .filter(|b| b.len() == 4)
        .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]).max(0) as u32);
    let qos_text = match limit {
        Some(schedlab_linux::pm_qos::NO_CONSTRAINT_US) => "no PM QoS request active".to_string(),
        Some(us) => format!(
            "a PM QoS request is active: CPU latency limit {us} us (states slower to leave are held off)"
        ),
        None => format!("PM QoS limit unreadable ({qos} is root's)"),
    };
    let Some(driver) = get("current_driver").filter(|d| d != "none") else {
        return Check::new(
            "cpuidle",
            Status::Info,
            format!(
                "no cpuidle driver: an idle CPU halts in the architecture's default way; {qos_text}"
            ),
            None,
        );
    };
    let governor = get("current_governor")
        .or_else(|| get("current_governor_ro"))
        .unwrap_or_else(|| "unknown".into());
    let mut states = Vec::new();
    for i in 0..10 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cpuidle/state{i}");
        let Some(name) = h.read(&format!("{dir}/name")) else {
            break;
        };
        let num = |f: &str| h.read(&format!("{dir}/{f}")).map(|s| s.trim().to_string());
        let disabled = num("disable").is_some_and(|d| d == "1");
        states.push(format!(
            "{} exit {} us / residency {} us{}",
            name.trim(),
            num("latency").unwrap_or_else(|| "?".into()),
            num("residency").unwrap_or_else(|| "?".into()),
            if disabled { " (disabled)" } else { "" }
        ));
    }
    Check::new(
        "cpuidle",
        Status::Info,
        format!(
            "driver {driver}, governor {governor}; states of CPU 0: {}; {qos_text}",
            if states.is_empty() {
                "none listed".to_string()
            } else {
                states.join(", ")
            }
        ),
        Some(
            "`schedlab latency` holds the PM QoS request 0 as cyclictest does (--laptop: \
             not); `platform.idle_states` models these states in a workload"
                .into(),
        ),
    )
}

/// Whether this is a VM, and how much time the hypervisor stole.
pub fn virtualisation(h: &dyn Host) -> Check {
    let flag = h.read("/proc/cpuinfo").is_some_and(|c| {
        c.lines()
            .any(|l| l.starts_with("flags") && l.split_whitespace().any(|f| f == "hypervisor"))
    });
    let vendor = h
        .read("/sys/class/dmi/id/sys_vendor")
        .or_else(|| h.read("/sys/hypervisor/type"))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    // /proc/stat `cpu` line: user nice system idle iowait irq softirq steal ...
    let steal = h.read("/proc/stat").and_then(|s| {
        let f: Vec<u64> = s
            .lines()
            .find(|l| l.starts_with("cpu "))?
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        let total: u64 = f.iter().take(8).sum();
        Some(100.0 * *f.get(7)? as f64 / total.max(1) as f64)
    });
    let steal_text = steal.map_or("steal time unknown".to_string(), |s| {
        format!("steal {s:.2}% of CPU time since boot")
    });
    if !flag {
        return Check::ok("virtualisation", format!("bare metal; {steal_text}"));
    }
    Check::new(
        "virtualisation",
        Status::Warn,
        format!(
            "a virtual machine{}: the hypervisor can stop a vCPU at any time, and real \
             latencies and misses include it; {steal_text}",
            vendor.map(|v| format!(" ({v})")).unwrap_or_default()
        ),
        Some("for trustworthy real-time numbers: bare metal, or dedicated pinned vCPUs".into()),
    )
}

/// Whether another schedlab real run holds the machine now (a real run would wait for
/// it). The lock file keeps its last holder's line after the holder exits, so the holder
/// counts only while that PID lives with the same start time.
pub fn machine_lock(h: &dyn Host) -> Check {
    let path = schedlab_linux::machine_lock::LOCK_PATH;
    let text = h.read(path).unwrap_or_default();
    // `schedlab pid 6317 (start time 959928) running `latency --shield 1``
    let field = |after: &str| -> Option<u64> {
        let rest = &text[text.find(after)? + after.len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    };
    let alive = match (field("pid "), field("start time ")) {
        (Some(pid), Some(start)) => h
            .read(&format!("/proc/{pid}/stat"))
            .and_then(|s| schedlab_linux::machine_lock::stat_start_time(&s))
            .is_some_and(|t| t == start),
        _ => false,
    };
    if alive {
        Check::new(
            "machine_lock",
            Status::Warn,
            format!("held: {}; a real run started now waits for it", text.trim()),
            Some(
                "wait for that run, or stop it (kill PID); SCHEDLAB_LOCK_WAIT=N bounds the \
                 wait (seconds)"
                    .into(),
            ),
        )
    } else {
        Check::ok(
            "machine_lock",
            format!("free: no schedlab real run in progress ({path})"),
        )
    }
}

/// Programs the README's tour and the real commands use.
pub fn tools(h: &dyn Host) -> Check {
    let wanted = [
        ("trace-cmd", "trace-cmd", "recording kernel traces"),
        ("rt-app", "rt-app", "rt-app's example configurations"),
        ("jq", "jq", "the README's JSON examples"),
        (
            "stress-ng",
            "stress-ng",
            "`latency --load`, else busy threads",
        ),
    ];
    let missing: Vec<_> = wanted.iter().filter(|w| !h.has_program(w.0)).collect();
    if missing.is_empty() {
        return Check::ok(
            "tools",
            "trace-cmd, rt-app, jq and stress-ng are installed".into(),
        );
    }
    let what: Vec<String> = missing
        .iter()
        .map(|w| format!("{} (for {})", w.0, w.2))
        .collect();
    let pkgs: Vec<&str> = missing.iter().map(|w| w.1).collect();
    Check::new(
        "tools",
        Status::Warn,
        format!("not installed: {}", what.join(", ")),
        Some(format!("apt-get install {}", pkgs.join(" "))),
    )
}
