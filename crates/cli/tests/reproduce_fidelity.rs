//! `schedlab reproduce fidelity`: the calibrated simulator against this kernel. Without
//! root (or with `--no-real`) the real side is the recorded one; the tests assert only
//! what a loaded 2-core VM cannot change: the table's structure, the simulator's own
//! (deterministic) figures, and zero versus many misses.

mod common;

use serde_json::Value;
use std::process::Command;

fn fidelity(args: &[&str]) -> Value {
    let dir = common::Scratch::new("fidelity");
    let out = Command::new(common::BIN)
        .args(["reproduce", "fidelity", "--json", "--out-dir"])
        .arg(&dir.0)
        .args(args)
        .output()
        .unwrap();
    common::json_of(&out)
}

fn case<'a>(v: &'a Value, key: &str) -> &'a Value {
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["case"] == key)
        .unwrap_or_else(|| panic!("no case {key}: {v}"))
}

fn n(v: &Value, path: &[&str]) -> f64 {
    let mut x = v;
    for p in path {
        x = &x[*p];
    }
    x.as_f64().unwrap_or_else(|| panic!("{path:?} in {v}"))
}

/// The checks that hold whatever the machine: `real` names where the real side is from.
fn check(v: &Value) {
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 6, "five setups and the error table");
    // The collapse at margin 0 is predicted (every job misses), and the 5% margin
    // removes it; the old model (no job costs) missed the collapse.
    let m0 = case(v, "table1-2cpu edf margin 0");
    assert_eq!(n(m0, &["simulated", "calibrated", "jobs"]), 260.0);
    assert_eq!(n(m0, &["simulated", "calibrated", "misses"]), 260.0);
    assert!(n(m0, &["simulated", "without job costs", "misses"]) < 26.0);
    let m5 = case(v, "table1-2cpu edf margin 0.05");
    assert_eq!(n(m5, &["simulated", "calibrated", "misses"]), 0.0);
    // On the kernel: many misses at margin 0, few at 5%.
    let real = |c: &Value, k: &str| n(c, &["real", "figures", k]);
    assert!(real(m0, "misses") >= 0.9 * real(m0, "jobs"), "{m0}");
    assert!(real(m5, "misses") <= 0.1 * real(m5, "jobs"), "{m5}");
    // Under RM every job completes in time on both sides; the overloaded set misses.
    let rm = case(v, "table1-2cpu rm");
    assert_eq!(n(rm, &["simulated", "calibrated", "misses"]), 0.0);
    let over = case(v, "overload-1cpu rm");
    let sim_over = n(over, &["simulated", "calibrated", "misses"]);
    assert!(sim_over > 0.2 * n(over, &["simulated", "calibrated", "jobs"]));
    assert!(real(over, "misses") > 0.2 * real(over, "jobs"), "{over}");
    // Each setup has a row per metric in the error table, with both sides.
    let table = &cases[5]["simulated"];
    for key in [
        "table1-2cpu edf margin 0",
        "table1-2cpu edf margin 0.05",
        "table1-2cpu rm",
        "overload-1cpu rm",
        "fair-mix rm+eevdf",
    ] {
        for metric in ["misses", "switches/CPU/s", "median response ms (all)"] {
            let row = &table[format!("{key} / {metric}")];
            assert!(
                row["simulated"].is_number() && row["real"].is_number(),
                "{key} / {metric}: {table}"
            );
            // The range over the wake-up draws' seeds holds the file's own seed's value.
            let range = row["simulated, seeds 0-7"].as_str().unwrap_or_else(|| {
                panic!("{key} / {metric}: no seed range: {row}");
            });
            let (lo, hi) = range.split_once('-').unwrap();
            let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
            let sim = row["simulated"].as_f64().unwrap();
            assert!(
                lo <= sim + 0.01 && sim <= hi + 0.01,
                "{key} / {metric}: {row}"
            );
        }
    }
    // Table 1's schedules do not depend on the draws: their misses are one number.
    assert_eq!(
        table["table1-2cpu edf margin 0 / misses"]["simulated, seeds 0-7"],
        "260-260"
    );
    // The fair mix's fair tasks have their own row.
    assert!(table["fair-mix rm+eevdf / median response ms (ui)"]["real"].is_number());
}

#[test]
fn without_real_runs_the_recorded_kernel_figures_are_compared() {
    let v = fidelity(&["--no-real"]);
    check(&v);
    let m0 = case(&v, "table1-2cpu edf margin 0");
    assert!(m0["real"]["source"]
        .as_str()
        .unwrap()
        .starts_with("recorded"));
}

#[test]
fn record_without_a_measurement_is_refused_and_writes_nothing() {
    let dir = common::Scratch::new("fidelity-record");
    let target = dir.0.join("rec.json");
    let out = Command::new(common::BIN)
        .args(["reproduce", "fidelity", "--no-real", "--record"])
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nothing measured to record (--no-real)"),
        "{err}"
    );
    assert!(!target.exists());
}

#[test]
fn record_into_a_missing_directory_is_refused_before_any_run() {
    let out = Command::new(common::BIN)
        .args([
            "reproduce",
            "fidelity",
            "--record",
            "/nonexistent-dir/rec.json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("its directory does not exist"), "{err}");
}

#[test]
#[cfg_attr(
    not(real_kernel),
    ignore = "needs root and a quiet 2-CPU machine (about 20 s of real runs); cargo test -- --ignored"
)]
fn measured_on_this_kernel_the_collapse_and_its_absence_are_seen() {
    let dir = common::Scratch::new("fidelity-real");
    let target = dir.0.join("rec.json");
    let v = fidelity(&["--record", target.to_str().unwrap()]);
    check(&v);
    let m0 = case(&v, "table1-2cpu edf margin 0");
    assert_eq!(m0["real"]["source"], "measured now");
    // The record reads back as the built-in one does.
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert!(rec["calibration"]["job_overhead_ns"].as_u64().unwrap() > 0);
    assert_eq!(rec["cases"].as_object().unwrap().len(), 5);
}
