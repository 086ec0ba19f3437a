//! `schedlab generate` refuses what it cannot write exactly or what `simulate` would
//! refuse, with exit 2, a message naming the option, and no file written.

mod common;
use common::{schedlab, Scratch};

/// Run `generate ARGS -o OUT`; expect exit 2, no OUT, and return stderr.
fn refused(args: &[&str]) -> String {
    let d = Scratch::new("generate-refused");
    let out = d.path("set.yaml");
    let mut all = vec!["generate"];
    all.extend_from_slice(args);
    all.extend(["-o", out.to_str().unwrap()]);
    let o = schedlab(&all);
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(!out.exists(), "{args:?} wrote a file");
    err
}

#[test]
fn requests_simulate_would_refuse_are_refused_before_writing() {
    let e = refused(&["--utilization", "2", "--cpus", "1025"]);
    assert!(e.contains("cpus 1025 is more than 1024"), "{e}");
    let e = refused(&["--utilization", "2", "--policy", "cfs"]);
    assert!(
        e.contains("--policy cfs") && e.contains("fair policy"),
        "{e}"
    );
    let e = refused(&["--utilization", "2", "--name", "a\u{1}b"]);
    assert!(e.contains("control character"), "{e}");
    let e = refused(&["--utilization", "2", "--duration", "2000000000s"]);
    assert!(e.contains("duration"), "{e}");
}

#[test]
fn requests_that_cannot_be_met_exactly_are_refused() {
    let e = refused(&["--utilization", "2", "--max-task-utilization", "1.5"]);
    assert!(e.contains("max_task_utilization 1.5 is above 1"), "{e}");
    let e = refused(&["--utilization", "2", "--max-task-utilization", "1e300"]);
    assert!(e.contains("max_task_utilization 1e300 is above 1"), "{e}");
    let e = refused(&[
        "--tasks",
        "2",
        "--utilization",
        "3",
        "--max-task-utilization",
        "2",
        "--method",
        "randfixedsum",
    ]);
    assert!(e.contains("above 1"), "{e}");
    // 10 × the double 0.1 is exactly above 1, so U = 1 is met (every task near 0.1);
    // U = 1.0000000000000002 is not.
    let e = refused(&[
        "--tasks",
        "10",
        "--utilization",
        "1.0000000000000002",
        "--max-task-utilization",
        "0.1",
        "--method",
        "cfs",
    ]);
    assert!(e.contains("cannot be split over 10 tasks"), "{e}");
    let e = refused(&["--utilization", "0"]);
    assert!(e.contains("at least 1 ns"), "{e}");
    let e = refused(&[
        "--tasks",
        "5000",
        "--utilization",
        "2",
        "--method",
        "randfixedsum",
    ]);
    assert!(
        e.contains("at most 4096 tasks") && e.contains("tilted"),
        "{e}"
    );
    let e = refused(&[
        "--utilization",
        "2",
        "--periods",
        "divisors:1000ms:11ms..19ms",
    ]);
    assert!(e.contains("periods: divisors: no divisor of 1s"), "{e}");
}

#[test]
fn the_former_cfs_panic_is_a_set_at_exactly_its_bounds() {
    // Was exit 101 (U = n × bound inexact in floating point). Now a set of 10 tasks at
    // most 0.1 each, total at most 1.
    let o = schedlab(&[
        "generate",
        "--tasks",
        "10",
        "--utilization",
        "1",
        "--max-task-utilization",
        "0.1",
        "--method",
        "cfs",
        "--periods",
        "10ms",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let tasks = v["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 10);
    for t in tasks {
        // 0.1 × 10 ms = 1 ms: every task at its bound.
        assert_eq!(t["runtime"], "1ms", "{t}");
    }
}
