//! `schedlab generate` and `schedlab analyze` end to end: files that simulate, the same
//! seed giving the same bytes, verdicts that match the simulation, and bad input.

mod common;
use common::{schedlab, Scratch};

fn stdout(args: &[&str]) -> String {
    let o = schedlab(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn error(args: &[&str]) -> String {
    let o = schedlab(args);
    assert_eq!(o.status.code(), Some(2), "{args:?} should fail with 2");
    String::from_utf8(o.stderr).unwrap()
}

#[test]
fn generated_sets_are_reproducible_and_simulate() {
    let d = Scratch::new("generate");
    let out = d.path("set.yaml");
    let args = [
        "generate",
        "--tasks",
        "10",
        "--utilization",
        "2.5",
        "--cpus",
        "4",
        "--seed",
        "42",
    ];
    let a = stdout(&args);
    assert_eq!(a, stdout(&args), "same seed, same file");
    let mut with_out = args.to_vec();
    with_out.extend(["-o", out.to_str().unwrap()]);
    stdout(&with_out);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), a);
    assert_ne!(
        a,
        stdout(&[
            "generate",
            "--tasks",
            "10",
            "--utilization",
            "2.5",
            "--seed",
            "43"
        ])
    );
    assert_eq!(a.matches("- { name: t").count(), 10);
    let sim: serde_json::Value =
        serde_json::from_str(&stdout(&["simulate", out.to_str().unwrap(), "--json"])).unwrap();
    assert_eq!(sim["tasks"].as_array().unwrap().len(), 10);
    assert_eq!(sim["cpus"], 4);
}

#[test]
fn analyze_verdicts_match_simulation_on_one_cpu() {
    let d = Scratch::new("analyze");
    // Harmonic periods, U = 0.97 on one CPU: EDF meets every deadline.
    let set = stdout(&[
        "generate",
        "--tasks",
        "5",
        "--utilization",
        "0.97",
        "--cpus",
        "1",
        "--periods",
        "10ms,20ms,40ms",
        "--seed",
        "3",
        "--json",
    ]);
    let f = d.file("set.json", &set);
    let r: serde_json::Value =
        serde_json::from_str(&stdout(&["analyze", f.to_str().unwrap(), "--json"])).unwrap();
    let tests = r["tests"].as_array().unwrap();
    let names: Vec<&str> = tests.iter().map(|t| t["test"].as_str().unwrap()).collect();
    assert_eq!(names, schedlab_analysis_names());
    let outcome = |n: &str| {
        tests.iter().find(|t| t["test"] == n).unwrap()["outcome"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(outcome("edf-pda"), "schedulable");
    assert_eq!(outcome("ll"), "not-proven");
    let sim: serde_json::Value = serde_json::from_str(&stdout(&[
        "simulate",
        f.to_str().unwrap(),
        "--policy",
        "edf",
        "--json",
    ]))
    .unwrap();
    assert_eq!(sim["deadline_misses"], 0);
    // The table names every test with its reason.
    let table = stdout(&["analyze", f.to_str().unwrap()]);
    assert!(
        table.contains("edf-pda") && table.contains("demand"),
        "{table}"
    );
    // Four CPUs: the uniprocessor tests say so instead of answering.
    let four = stdout(&["analyze", f.to_str().unwrap(), "--cpus", "4"]);
    assert!(
        four.contains("a uniprocessor test; the platform has 4 CPUs"),
        "{four}"
    );
}

fn schedlab_analysis_names() -> Vec<&'static str> {
    vec![
        "ll",
        "hyperbolic",
        "rta",
        "edf-util",
        "edf-pda",
        "gfb",
        "bcl",
        "rta-gedf",
        "rta-gfp",
        "edzl",
        "ffd-edf",
        "ffd-rm",
        "ffd-dm",
        "bfd-edf",
        "wfd-edf",
    ]
}

#[test]
fn bad_input_gets_a_clear_message() {
    let e = error(&["generate", "--utilization", "-0.5"]);
    assert!(e.contains("utilization -0.5 is negative"), "{e}");
    let e = error(&["generate", "--tasks", "3", "--utilization", "3.5"]);
    assert!(
        e.contains("cannot be split over 3 tasks of at most 1 each"),
        "{e}"
    );
    let e = error(&["generate", "--tasks", "4", "--utilization", "3.95"]);
    assert!(
        e.contains("none of 10000 draws") && e.contains("randfixedsum"),
        "{e}"
    );
    let e = error(&["generate", "--utilization", "1", "--method", "gauss"]);
    assert!(e.contains("unknown generator `gauss`"), "{e}");
    let e = error(&["generate", "--utilization", "1", "--policy", "sjf"]);
    assert!(e.contains("unknown policy `sjf`"), "{e}");
    let e = error(&["generate", "--utilization", "1", "--periods", "1s..10ms"]);
    assert!(e.contains("need 0 < min ≤ max"), "{e}");
    let d = Scratch::new("analyze-bad");
    let f = d.file("fair.yaml", "tasks:\n  - { name: hog, nice: 0 }\n");
    let e = error(&["analyze", f.to_str().unwrap()]);
    assert!(
        e.contains("fair.yaml") && e.contains("task hog has no period"),
        "{e}"
    );
    let e = error(&["analyze", d.path("missing.yaml").to_str().unwrap()]);
    assert!(e.contains("missing.yaml"), "{e}");
}
