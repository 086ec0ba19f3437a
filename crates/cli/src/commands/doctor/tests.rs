//! Each check on fake machines: the states it reports and the fixes it gives.

use super::checks::*;
use super::host::{DeadlineThread, FakeHost};
use super::{diagnose, render, Status};

const ROOT_CAPS: &str = "Name:\tx\nCapEff:\t000001ffffffffff\n";
const NO_CAPS: &str = "Name:\tx\nCapEff:\t0000000000000000\n";

/// A 2-CPU 6.18 machine as root, default RT limits.
fn machine() -> FakeHost {
    FakeHost {
        hz: Some(1000),
        ..FakeHost::default()
    }
    .file("/proc/sys/kernel/osrelease", "6.18.4-test\n")
    .file("/proc/self/status", ROOT_CAPS)
    .file("/sys/devices/system/cpu/online", "0-1\n")
    .file("/proc/sys/kernel/sched_rt_runtime_us", "950000\n")
    .file("/proc/sys/kernel/sched_rt_period_us", "1000000\n")
}

#[test]
fn every_check_gives_one_line_and_missing_ones_give_a_fix() {
    let checks = diagnose(&machine());
    assert_eq!(checks.len(), CHECKS.len());
    let mut names: Vec<_> = checks.iter().map(|c| c.name).collect();
    names.dedup();
    assert_eq!(names.len(), checks.len(), "names are unique");
    for c in &checks {
        if c.status == Status::Missing {
            assert!(c.fix.is_some(), "{} is missing without a fix", c.name);
        }
    }
    let text = render(&checks);
    assert!(
        text.contains("kernel") && text.contains("Linux 6.18.4-test, HZ 1000"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("fix: ")),
        "{text}"
    );
}

#[test]
fn capabilities_are_read_from_capeff() {
    assert_eq!(cap_sys_nice(&machine()).status, Status::Ok);
    assert_eq!(cap_sys_admin(&machine()).status, Status::Ok);
    let user = machine().file("/proc/self/status", NO_CAPS);
    let nice = cap_sys_nice(&user);
    assert_eq!(nice.status, Status::Missing);
    assert!(nice.fix.as_deref().unwrap().contains("setcap"), "{nice:?}");
    assert_eq!(cap_sys_admin(&user).status, Status::Missing);
}

#[test]
fn deadline_capacity_names_what_holds_it() {
    // 2 CPUs × (0.95 − 0.05 fair_server) = 1.8; a 0.5 reservation leaves 1.3.
    let mut m = machine();
    m.deadline = vec![DeadlineThread {
        tid: 42,
        comm: "rtapp".into(),
        runtime: 5_000_000,
        period: 10_000_000,
    }];
    let c = sched_deadline(&m);
    assert_eq!(c.status, Status::Ok, "{c:?}");
    assert!(c.detail.contains("1.800"), "{}", c.detail);
    assert!(c.detail.contains("rtapp (tid 42, 0.500)"), "{}", c.detail);
    assert!(c.detail.contains("free 1.300"), "{}", c.detail);

    // Held completely: missing, and the fix says how to free it.
    m.deadline[0].runtime = 9_500_000;
    m.deadline.push(DeadlineThread {
        tid: 43,
        comm: "hog".into(),
        runtime: 9_000_000,
        period: 10_000_000,
    });
    let c = sched_deadline(&m);
    assert_eq!(c.status, Status::Missing, "{c:?}");
    assert!(c.fix.unwrap().contains("chrt"));

    // Admission off.
    let off = machine().file("/proc/sys/kernel/sched_rt_runtime_us", "-1\n");
    assert_eq!(sched_deadline(&off).status, Status::Warn);
    assert!(rt_throttling(&off).detail.contains("off"));
}

#[test]
fn lowered_rt_throttling_is_a_warning() {
    assert_eq!(rt_throttling(&machine()).status, Status::Ok);
    let low = machine().file("/proc/sys/kernel/sched_rt_runtime_us", "500000\n");
    let c = rt_throttling(&low);
    assert_eq!(c.status, Status::Warn);
    assert!(
        c.detail.contains("50%") && c.detail.contains("500000 us"),
        "{}",
        c.detail
    );
}

#[test]
fn tracefs_unmounted_refused_or_fine() {
    // A kernel without tracefs.
    let c = tracefs(&machine());
    assert_eq!(c.status, Status::Missing);
    assert!(c.detail.contains("no tracefs"), "{}", c.detail);
    // Unmounted, but root may mount it: trace-cmd and traced runs do, so it is fine.
    let fs = "nodev\tsysfs\nnodev\ttracefs\n";
    let c = tracefs(&machine().file("/proc/filesystems", fs));
    assert_eq!(c.status, Status::Ok, "{}", c.detail);
    assert!(c
        .detail
        .contains("mount it at /sys/kernel/tracing themselves"));
    // Unmounted and not allowed to mount it.
    let c = tracefs(
        &machine()
            .file("/proc/filesystems", fs)
            .file("/proc/self/status", NO_CAPS),
    );
    assert_eq!(c.status, Status::Missing);
    assert!(c.detail.contains("no CAP_SYS_ADMIN"), "{}", c.detail);
    assert!(c.fix.unwrap().contains("mount -t tracefs"));

    let mounted = machine()
        .file("/sys/kernel/tracing/trace", "")
        .file("/sys/kernel/tracing/events/sched/sched_switch/enable", "0");
    assert_eq!(tracefs(&mounted).status, Status::Ok);

    let mut locked = mounted;
    locked
        .refused
        .push("/sys/kernel/tracing/set_ftrace_filter".into());
    let c = tracefs(&locked);
    assert_eq!(c.status, Status::Warn);
    assert!(c.detail.contains("trace-cmd record"), "{}", c.detail);
}

#[test]
fn perf_refused_falls_back_to_proc_stat() {
    let mut m = machine().file("/proc/sys/kernel/perf_event_paranoid", "2\n");
    m.perf_hw = Some("No such file or directory".into());
    let c = perf(&m);
    assert_eq!(c.status, Status::Ok);
    assert!(c.detail.contains("no hardware counters"), "{}", c.detail);
    m.perf_sw = Some("Permission denied".into());
    let c = perf(&m);
    assert_eq!(c.status, Status::Warn);
    assert!(c.detail.contains("proc_stat"), "{}", c.detail);
}

#[test]
fn irq_affinity_needs_write_access_and_no_irqbalance() {
    let m = machine().file("/proc/irq/24/smp_affinity_list", "0-1");
    assert_eq!(irq_affinity(&m).status, Status::Missing);
    let mut w = m.file("/proc/77/comm", "irqbalance\n");
    w.writable.push("/proc/irq/default_smp_affinity".into());
    let c = irq_affinity(&w);
    assert_eq!(c.status, Status::Warn);
    assert!(c.fix.unwrap().contains("irqbalance"));
    let mut fine = machine().file("/proc/irq/24/smp_affinity_list", "0-1");
    fine.writable.push("/proc/irq/default_smp_affinity".into());
    let c = irq_affinity(&fine);
    assert_eq!(c.status, Status::Ok);
    assert!(c.detail.starts_with("1 IRQs"), "{}", c.detail);
}

#[test]
fn sched_ext_says_why_it_is_missing() {
    let mut m = machine();
    m.config = Some(vec![]);
    let c = sched_ext(&m);
    assert_eq!(c.status, Status::Missing);
    assert!(
        c.detail.contains("without CONFIG_SCHED_CLASS_EXT"),
        "{}",
        c.detail
    );
    let old = machine().file("/proc/sys/kernel/osrelease", "6.1.0-27-amd64\n");
    assert!(sched_ext(&old).detail.contains("older than 6.12"));
    let scx = machine().file("/sys/kernel/sched_ext/state", "disabled\n");
    assert_eq!(sched_ext(&scx).status, Status::Warn, "no loader built");
    let mut built = scx.file("/opt/scx_schedlab", "");
    built
        .env
        .push(("SCHEDLAB_SCX_LOADER".into(), "/opt/scx_schedlab".into()));
    assert_eq!(sched_ext(&built).status, Status::Ok);
}

#[test]
fn governors_and_vms() {
    assert_eq!(cpufreq(&machine()).status, Status::Info);
    let ps = machine()
        .file(
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            "powersave\n",
        )
        .file(
            "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
            "performance\n",
        );
    let c = cpufreq(&ps);
    assert_eq!(c.status, Status::Warn);
    assert!(c.detail.contains("performance, powersave"), "{}", c.detail);

    let vm = machine()
        .file(
            "/proc/cpuinfo",
            "processor\t: 0\nflags\t\t: fpu hypervisor sse\n",
        )
        .file("/proc/stat", "cpu  900 0 50 40 0 0 0 10 0 0\n");
    let c = virtualisation(&vm);
    assert_eq!(c.status, Status::Warn);
    assert!(c.detail.contains("steal 1.00%"), "{}", c.detail);
    let metal = machine().file("/proc/cpuinfo", "flags\t\t: fpu sse\n");
    assert_eq!(virtualisation(&metal).status, Status::Ok);
}

#[test]
fn the_machine_lock_counts_only_while_its_holder_lives() {
    let line = "schedlab pid 77 (start time 4242) running `latency --shield 1`\n";
    let stat = |start: u64| {
        let mut f: Vec<String> = (0..30).map(|i| i.to_string()).collect();
        f[19] = start.to_string();
        format!("77 (schedlab) {}", f.join(" "))
    };
    let path = "/run/schedlab/machine.lock";
    let free = machine().file(path, line);
    assert_eq!(machine_lock(&free).status, Status::Ok, "holder gone");
    let reused = machine().file(path, line).file("/proc/77/stat", &stat(1));
    assert_eq!(machine_lock(&reused).status, Status::Ok, "PID reused");
    let held = machine()
        .file(path, line)
        .file("/proc/77/stat", &stat(4242));
    let c = machine_lock(&held);
    assert_eq!(c.status, Status::Warn);
    assert!(c.detail.contains("latency --shield 1"), "{}", c.detail);
}

#[test]
fn missing_tools_are_named_with_their_package() {
    let mut m = machine();
    m.programs = vec!["jq".into(), "trace-cmd".into()];
    let c = tools(&m);
    assert_eq!(c.status, Status::Warn);
    assert_eq!(c.fix.as_deref(), Some("apt-get install rt-app stress-ng"));
    m.programs
        .extend(["rt-app".to_string(), "stress-ng".to_string()]);
    assert_eq!(tools(&m).status, Status::Ok);
}

#[test]
fn cpuidle_lists_driver_governor_states_and_the_pm_qos_request() {
    let c = cpuidle(&machine());
    assert_eq!(c.status, Status::Info);
    assert!(c.detail.starts_with("no cpuidle driver"), "{}", c.detail);
    assert!(c.detail.contains("PM QoS limit unreadable"), "{}", c.detail);
    let s = "/sys/devices/system/cpu/cpu0/cpuidle";
    let idle = || {
        machine()
            .file(
                "/sys/devices/system/cpu/cpuidle/current_driver",
                "intel_idle\n",
            )
            .file("/sys/devices/system/cpu/cpuidle/current_governor", "menu\n")
            .file(&format!("{s}/state0/name"), "POLL\n")
            .file(&format!("{s}/state0/latency"), "0\n")
            .file(&format!("{s}/state0/residency"), "0\n")
            .file(&format!("{s}/state1/name"), "C6\n")
            .file(&format!("{s}/state1/latency"), "133\n")
            .file(&format!("{s}/state1/residency"), "600\n")
            .file(&format!("{s}/state1/disable"), "1\n")
    };
    let c = cpuidle(&idle().file("/dev/cpu_dma_latency", "\0\0\0\0"));
    assert!(
        c.detail.contains("driver intel_idle, governor menu")
            && c.detail.contains("POLL exit 0 us / residency 0 us")
            && c.detail
                .contains("C6 exit 133 us / residency 600 us (disabled)")
            && c.detail
                .contains("a PM QoS request is active: CPU latency limit 0 us"),
        "{}",
        c.detail
    );
    let c = cpuidle(&idle().file("/dev/cpu_dma_latency", "\u{14}\0\0\0"));
    assert!(c.detail.contains("limit 20 us"), "{}", c.detail);
}

/// The report wraps every detail and fix whole: each one's words all appear, in order,
/// each separated by one space or a line break and indentation (none cut, no run of
/// spaces from a source line continuation).
#[test]
fn the_report_keeps_every_word_of_every_line() {
    let ps = machine().file(
        "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
        "powersave\n",
    );
    let checks = diagnose(&ps);
    let text = render(&checks);
    let words: Vec<&str> = text.split_whitespace().collect();
    let joined = words.join(" ");
    for c in &checks {
        for part in std::iter::once(&c.detail).chain(&c.fix) {
            let want = part.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(joined.contains(&want), "`{want}` is not whole in:\n{text}");
        }
    }
    // Past the name and status columns (and the indentation of a continued line), the
    // text has single spaces only.
    let w = checks.iter().map(|c| c.name.len()).max().unwrap() + 11;
    for line in text.lines().filter(|l| l.len() > w) {
        let rest = line[w..].trim_start();
        assert!(!rest.contains("  "), "a run of spaces in `{line}`");
    }
    let cpufreq = checks.iter().find(|c| c.name == "cpufreq").unwrap();
    assert_eq!(cpufreq.status, Status::Warn);
    assert!(text.contains("/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor\n"));
}
