//! The HTML report: one section per policy with a Gantt row per CPU and a task table,
//! the metrics table, the plots; self-contained (no external resources).
use schedlab_model::{Overrides, Policy, Workload};
use schedlab_sim::{simulate, SimOptions};
use schedlab_trace::report::{render, PolicyRun, Report};
use schedlab_trace::Schedule;
use std::path::Path;

fn page(path: &str, policies: &[&str], window: (u64, u64)) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut sims = Vec::new();
    for p in policies {
        let ov = Overrides {
            policy: Some(Policy::parse(p).unwrap()),
            ..Overrides::default()
        };
        let w = Workload::load(&root.join(path), &ov).unwrap();
        let r = simulate(&w, &SimOptions { trace: true }).unwrap();
        let s = Schedule::from_sim(&w, &r).unwrap();
        sims.push((w, r, s));
    }
    render(&Report {
        source: path.into(),
        runs: sims
            .iter()
            .map(|(w, r, s)| PolicyRun {
                workload: w,
                result: r,
                schedule: s,
            })
            .collect(),
        window,
        prediction: Vec::new(),
    })
}

#[test]
fn sections_rows_and_tables() {
    let html = page(
        "examples/table1.yaml",
        &["edf", "llf", "illf"],
        (0, 300_000_000),
    );
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<section class=\"policy\"").count(), 3);
    assert_eq!(html.matches("<table class=\"tasks\"").count(), 3);
    assert_eq!(html.matches("<table class=\"metrics\"").count(), 1);
    // 4 CPUs x 3 policies.
    assert_eq!(html.matches("<g class=\"gantt-row\"").count(), 12);
    assert!(html.matches("<svg class=\"chart").count() >= 6);
    for p in ["edf", "llf", "illf"] {
        assert!(html.contains(&format!("data-policy=\"{p}\"")));
    }
    // Self-contained: nothing loaded from elsewhere.
    for bad in ["http://", "https://", "src=", "<link", "@import", "url("] {
        assert!(!html.contains(bad), "the page refers to `{bad}`");
    }
    // Kept for a look: target/tmp/report-table1.html.
    let _ = std::fs::write(
        Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-table1.html"),
        &html,
    );
}

#[test]
fn misses_are_marked_and_names_escaped() {
    let html = page(
        "examples/rm-overload.yaml",
        &["rm", "edf"],
        (0, 100_000_000),
    );
    assert!(html.contains("<g class=\"miss\">"));
    assert!(html.contains("missed its deadline at"));
    assert!(html.contains("class=\"bad\""));
}

#[test]
fn a_policy_that_builds_a_structure_shows_it_in_its_section() {
    let html = page("examples/dhall-m2.yaml", &["edf", "run"], (0, 10_000_000));
    // RUN's reduction tree, folded in its section; EDF builds nothing.
    assert_eq!(
        html.matches("<details><summary>scheduler structure</summary><pre>subsystem on cpu")
            .count(),
        1
    );
    assert!(html.contains("<td>scheduler calls</td>"));
}
