//! Every policy of the registry is visible everywhere a user or a reviewer looks for it:
//! its row in the policy tables of docs/usage.md and docs/format.md, its line in
//! `--help`, and its runs in the simulator's golden file. Adding a registry entry without
//! them fails here, naming what is missing (docs/architecture.md, "Adding a policy").

use schedlab_model::registry::{PolicyClass, PolicyInfo, POLICIES};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The table line that starts with `start` (the first cell), or "".
fn row<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines().find(|l| l.starts_with(start)).unwrap_or("")
}

/// docs/usage.md's "Policies and placements" table has a row (or several) per class.
fn usage_row(usage: &str, e: &PolicyInfo) -> bool {
    let class = match e.class {
        PolicyClass::Deadline => "deadline",
        PolicyClass::Rt => "rt",
        PolicyClass::Fair => "fair",
        PolicyClass::Whole => "whole",
    };
    let section = usage
        .split_once("## Policies and placements")
        .map_or("", |(_, rest)| rest);
    // A class may have several rows ("deadline", "deadline, quantum-based ...").
    section
        .lines()
        .filter(|l| l.starts_with(&format!("| {class} ")) || l.starts_with(&format!("| {class},")))
        .any(|l| l.contains(&format!("`{}`", e.name)))
}

/// docs/format.md's `scheduler:` table lists periodic policies under `deadline` and the
/// others under `fair`.
fn format_row(format: &str, e: &PolicyInfo) -> bool {
    let field = if e.class.is_periodic() {
        "deadline"
    } else {
        "fair"
    };
    row(format, &format!("| `{field}` |")).contains(&format!("`{}`", e.name))
}

/// The golden file's keys are `source policy placement on_miss fair`: a periodic
/// policy is a second word, a fair one a fifth.
fn golden_has(golden: &str, e: &PolicyInfo) -> bool {
    let at = if e.class.is_periodic() { 1 } else { 4 };
    golden.lines().any(|l| l.split(' ').nth(at) == Some(e.name))
}

#[test]
fn every_registered_policy_has_its_docs_rows_help_line_and_golden_runs() {
    let usage = read("docs/usage.md");
    let format = read("docs/format.md");
    let golden = read("crates/sim/tests/golden/results.txt");
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["simulate", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let mut missing = Vec::new();
    for e in &POLICIES {
        if !usage_row(&usage, e) {
            missing.push(format!(
                "{}: no `{}` in docs/usage.md's policy table",
                e.name, e.name
            ));
        }
        if !format_row(&format, e) {
            missing.push(format!(
                "{}: no `{}` in docs/format.md's `scheduler:` table",
                e.name, e.name
            ));
        }
        let line = format!("- {}:", e.name);
        if !help
            .lines()
            .any(|l| l.trim_start().starts_with(&line) && l.contains(e.summary))
        {
            missing.push(format!(
                "{}: no `- {}: <summary>` line in --help",
                e.name, e.name
            ));
        }
        if !golden_has(&golden, e) {
            missing.push(format!(
                "{}: no run in crates/sim/tests/golden/results.txt (re-record it: SCHEDLAB_BLESS=1 cargo test -p schedlab-sim --test golden)",
                e.name
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// The checks above can fail: a name that is nowhere is reported by each of them.
#[test]
fn the_checks_see_a_missing_policy() {
    let ghost = PolicyInfo {
        name: "ghost",
        ..POLICIES[0]
    };
    assert!(!usage_row(&read("docs/usage.md"), &ghost));
    assert!(!format_row(&read("docs/format.md"), &ghost));
    assert!(!golden_has(
        &read("crates/sim/tests/golden/results.txt"),
        &ghost
    ));
    let edf = &POLICIES[0];
    assert!(usage_row(&read("docs/usage.md"), edf));
    assert!(format_row(&read("docs/format.md"), edf));
    assert!(golden_has(
        &read("crates/sim/tests/golden/results.txt"),
        edf
    ));
}
