//! What a new user meets in the first hour (issue 14): help that answers, headers that
//! say what ran, output that fits a terminal, `doctor`, completions and man pages.

mod common;

use common::{schedlab, Scratch};
use std::path::PathBuf;
use std::process::Output;

fn repo(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
        .display()
        .to_string()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(args: &[&str]) -> String {
    let o = schedlab(args);
    assert!(o.status.success(), "{args:?}: {}", err(&o));
    out(&o)
}

#[test]
fn latency_dash_h_alone_is_help_and_with_a_number_a_histogram() {
    let help = ok(&["latency", "-h"]);
    assert!(help.contains("Usage: schedlab latency"), "{help}");
    assert!(help.contains("--histogram"), "{help}");
    let hist = ok(&[
        "latency",
        "--simulate",
        &repo("examples/latency-shield.yaml"),
        "-h",
        "5",
    ]);
    assert!(!hist.contains("Usage:"), "{hist}");
    assert!(
        hist.contains("# Histogram") || hist.contains("Histogram"),
        "{hist}"
    );
}

#[test]
fn help_texts_say_what_each_thing_is() {
    let top = ok(&["--help"]);
    for want in [
        "run for real",
        "doctor",
        "completions",
        "manpage",
        "--quiet",
    ] {
        assert!(top.contains(want), "top-level help lacks `{want}`:\n{top}");
    }
    let run = ok(&["run", "--help"]);
    let dur = run
        .lines()
        .skip_while(|l| !l.contains("--duration"))
        .nth(1)
        .unwrap_or_default();
    assert!(dur.contains("on this machine"), "run --duration: {dur}");
    assert!(!run.contains("Simulated time"), "{run}");
    let trace = ok(&["trace", "--help"]);
    assert!(
        !trace.lines().any(|l| l.trim() == "\\"),
        "stray backslash:\n{trace}"
    );
}

#[test]
fn simulate_takes_a_calibrated_platform_like_compare() {
    let d = Scratch::new("platform");
    let pf = d.file(
        "machine.yaml",
        "platform: { hz: 250, context_switch: 400us, migration: 900us }\n",
    );
    let dhall = repo("examples/table1.yaml");
    let json = |extra: &[&str]| -> serde_json::Value {
        let mut a = vec!["simulate", dhall.as_str(), "--json", "--duration", "1s"];
        a.extend_from_slice(extra);
        serde_json::from_str(&ok(&a)).unwrap()
    };
    let plain = json(&[]);
    let cal = json(&["--platform", pf.to_str().unwrap()]);
    // Charged switch costs change the schedule: more CPU time is spent per job.
    assert_ne!(plain["tasks"], cal["tasks"]);
    let same = json(&["--platform", pf.to_str().unwrap()]);
    assert_eq!(cal["tasks"], same["tasks"], "deterministic");

    let bad = d.file("nope.yaml", "name: x\n");
    let o = schedlab(&["simulate", &dhall, "--platform", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("no `platform:` block"), "{}", err(&o));
}

#[test]
fn fair_only_workloads_are_not_shown_as_edf() {
    let s = ok(&["simulate", &repo("examples/nice-mix.yaml")]);
    let head: Vec<&str> = s.lines().take(3).collect();
    assert!(head[1].starts_with("policy     eevdf (fair)"), "{head:?}");
    assert!(head[2].starts_with("tasks      3 (3 fair)"), "{head:?}");
    assert!(!s.contains("utilisation 0.000"), "{s}");
    let rt = ok(&["simulate", &repo("examples/dhall.yaml")]);
    assert!(
        rt.lines().nth(1).unwrap().starts_with("policy     edf "),
        "{rt}"
    );
    assert!(rt.contains("utilisation "), "{rt}");
}

#[test]
fn reproduce_reads_in_a_terminal_and_no_real_means_no_host_run() {
    let d = Scratch::new("cfsw");
    let o = schedlab(&[
        "reproduce",
        "cfs-weights",
        "--no-real",
        "--out-dir",
        d.0.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let s = out(&o);
    assert!(!s.contains("numbers=null"), "{s}");
    assert!(
        s.contains("paper      CFS shares CPU between tasks in proportion"),
        "{s}"
    );
    assert!(s.contains("not measured (--no-real)"), "{s}");
    assert!(!s.contains("once the runner reports fair tasks"), "{s}");
    for l in s.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
}

#[test]
fn reproduce_bfs_tables_fit_in_100_columns() {
    let d = Scratch::new("bfs");
    let s = ok(&["reproduce", "bfs", "--out-dir", d.0.to_str().unwrap()]);
    for l in s.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    // The split table still has every column and the per-machine paper figures.
    for want in [
        "makespan_ms",
        "wakeup_p99_us",
        "bfs_faster_than_cfs_pct",
        "Intel E5200: ",
    ] {
        assert!(s.contains(want), "missing {want}:\n{s}");
    }
}

#[test]
fn report_says_where_it_wrote_unless_quiet() {
    let d = Scratch::new("report");
    let page = d.path("r.html");
    let o = schedlab(&[
        "report",
        &repo("examples/dhall.yaml"),
        "--policies",
        "edf",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(
        err(&o).contains(&format!("wrote {}", page.display())),
        "{}",
        err(&o)
    );
    let o = schedlab(&[
        "--quiet",
        "report",
        &repo("examples/dhall.yaml"),
        "--policies",
        "edf",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(o.status.success() && err(&o).is_empty(), "{}", err(&o));
    assert!(std::fs::metadata(&page).unwrap().len() > 1000);
}

#[test]
fn completions_and_man_pages_cover_every_command() {
    let commands = [
        "simulate",
        "compare",
        "reproduce",
        "run",
        "calibrate",
        "report",
        "trace",
        "latency",
        "bench",
        "doctor",
    ];
    for shell in ["bash", "zsh", "fish"] {
        let s = ok(&["completions", shell]);
        for c in commands {
            assert!(s.contains(c), "{shell} completion lacks {c}");
        }
    }
    assert!(ok(&["completions", "bash"]).contains("complete -F _schedlab"));
    let o = schedlab(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));

    let man = ok(&["manpage"]);
    assert!(
        man.starts_with(".ie") || man.contains(".TH schedlab 1"),
        "{man}"
    );
    for c in commands {
        assert!(man.contains(c), "man page lacks {c}");
    }
    let d = Scratch::new("man");
    let dir = d.path("man1");
    ok(&["manpage", "--out-dir", dir.to_str().unwrap()]);
    for c in commands {
        let page = std::fs::read_to_string(dir.join(format!("schedlab-{c}.1"))).unwrap();
        assert!(page.contains(&format!(".TH schedlab-{c} 1")), "{page}");
    }
    let sim = std::fs::read_to_string(dir.join("schedlab-simulate.1")).unwrap();
    assert!(
        sim.contains("platform") && sim.contains("trace\\-out"),
        "{sim}"
    );
}

#[test]
fn doctor_json_has_a_status_for_every_check() {
    let v: serde_json::Value = serde_json::from_str(&ok(&["doctor", "--json"])).unwrap();
    let checks = v["checks"].as_array().unwrap();
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    for want in [
        "kernel",
        "cap_sys_nice",
        "cap_sys_admin",
        "sched_deadline",
        "rt_throttling",
        "tracefs",
        "perf",
        "irq_affinity",
        "sched_ext",
        "cpufreq",
        "virtualisation",
    ] {
        assert!(names.contains(&want), "no {want} in {names:?}");
    }
    let mut missing = 0;
    for c in checks {
        let st = c["status"].as_str().unwrap();
        assert!(["ok", "warning", "missing", "info"].contains(&st), "{c}");
        if st == "missing" {
            missing += 1;
            assert!(c["fix"].is_string(), "missing without a fix: {c}");
        }
    }
    assert_eq!(v["missing"], missing);
    // The text report has the same lines.
    let text = ok(&["doctor"]);
    for n in names {
        assert!(text.lines().any(|l| l.starts_with(n)), "{n} not in\n{text}");
    }
}

#[test]
#[cfg_attr(
    not(capsh),
    ignore = "needs capsh to drop CAP_SYS_NICE (apt-get install libcap2-bin)"
)]
fn real_commands_failing_for_a_host_reason_point_to_doctor() {
    let capsh = common::capsh();
    let file = repo("examples/table1-2cpu.yaml");
    for cmd in [
        format!("exec {} run {file} --duration 1s", common::BIN),
        format!("exec {} latency --duration 1s", common::BIN),
    ] {
        let o = std::process::Command::new(capsh)
            .args(["--drop=cap_sys_nice", "--", "-c", &cmd])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", err(&o));
        let e = err(&o);
        assert!(e.contains("CAP_SYS_NICE"), "{e}");
        assert!(e.contains("`schedlab doctor`"), "{e}");
        assert!(o.stdout.is_empty());
    }
}
