//! `simulate --trace-out / --gantt / --jobs-csv` end to end (the Python suite checks the
//! trace contents against Perfetto's official proto).

use std::path::PathBuf;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn schedlab(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn gantt_follows_the_summary() {
    let o = schedlab(&[
        "simulate",
        "examples/rm-overload.yaml",
        "--gantt",
        "0ms..350ms",
        "--gantt-width",
        "70",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let g = out
        .find("Gantt 0..350ms: 70 columns of 5ms (rm, 1 CPU)")
        .unwrap();
    assert!(out[..g].contains("deadline misses"));
    assert!(out[g..].contains("\ncpu0  "));
    assert!(out[g..].contains("\nmiss  "));
}

#[test]
fn gantt_goes_to_stderr_with_json() {
    let o = schedlab(&[
        "simulate",
        "examples/e2.yaml",
        "--json",
        "--gantt",
        "..50ms",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["workload"].as_str().is_some());
    assert!(text(&o.stderr).starts_with("Gantt 0..50ms"));
}

#[test]
fn bad_gantt_windows_are_usage_errors() {
    for (arg, want) in [
        (
            "5s..",
            "--gantt: the window starts at 5s, but the schedule ends at 350ms",
        ),
        ("200ms", "is not a time window"),
        ("3ms..1ms", "is empty"),
    ] {
        let o = schedlab(&["simulate", "examples/rm-overload.yaml", "--gantt", arg]);
        assert_eq!(o.status.code(), Some(2), "{arg}");
        assert!(text(&o.stderr).contains(want), "{arg}: {}", text(&o.stderr));
        assert!(o.stdout.is_empty());
    }
    let o = schedlab(&["simulate", "examples/e2.yaml", "--gantt-width", "50"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn report_writes_one_page_with_a_section_per_policy() {
    let out = std::env::temp_dir().join(format!("schedlab-report-{}.html", std::process::id()));
    let o = schedlab(&[
        "report",
        "examples/e2.yaml",
        "--policies",
        "edf,illf,edf",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
    let html = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    assert_eq!(html.matches("<section class=\"policy\"").count(), 2);
    assert!(html.contains("data-policy=\"illf\""));
}

#[test]
fn report_errors_are_usage_errors() {
    let o = schedlab(&["report", "examples/e2.yaml", "--window", "10s.."]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--window: the window starts at 10s"));
    assert!(o.stdout.is_empty());
    let o = schedlab(&["report", "examples/e2.yaml", "--policies", "sjf"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("unknown policy `sjf`"));
    let o = schedlab(&["report", "no-such.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no-such.yaml"));
}
