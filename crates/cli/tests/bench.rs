//! `schedlab bench` end to end, on the tiny smoke rows: its numbers agree with
//! `schedlab simulate` on the exported sets, exports are deterministic, and the failure
//! paths (unknown row, timeout, SimSo file) behave.

mod common;
use common::{schedlab, Scratch};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

fn ok_json(args: &[&str]) -> Value {
    let out = schedlab(args);
    assert!(
        out.status.success(),
        "schedlab {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "schedlab {args:?}: not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn rows(doc: &Value) -> &Vec<Value> {
    doc["rows"].as_array().expect("rows array")
}

fn s(v: &Value, key: &str) -> String {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} in {v}"))
        .to_string()
}

fn u(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn events_match_simulate_on_the_exported_sets() {
    let dir = Scratch::new("events");
    let sets = dir.path("sets");
    let exported = schedlab(&[
        "bench",
        "--rows",
        "tiny,tiny-fair",
        "--export",
        sets.to_str().unwrap(),
    ]);
    assert!(exported.status.success());

    let doc = ok_json(&["bench", "--rows", "tiny,tiny-fair", "--json"]);
    let rows = rows(&doc);
    // tiny: edf/llf global, edf linux; tiny-fair: cfs and eevdf under linux.
    assert_eq!(rows.len(), 5, "{doc}");
    let mut variants = Vec::new();
    for r in rows {
        assert_eq!(s(r, "status"), "ok", "{r}");
        let (row, policy, placement) = (s(r, "row"), s(r, "policy"), s(r, "placement"));
        variants.push(format!("{row}:{policy}:{placement}"));
        let file = sets.join(format!("{row}.json"));
        let sim = ok_json(&[
            "simulate",
            file.to_str().unwrap(),
            "--policy",
            &policy,
            "--placement",
            &placement,
            "--json",
        ]);
        assert_eq!(
            u(r, "events"),
            u(&sim, "events"),
            "{row} {policy} {placement}"
        );
        assert_eq!(
            u(r, "deadline_misses"),
            u(&sim, "deadline_misses"),
            "{row} {policy} {placement}"
        );
        assert_eq!(u(r, "tasks"), sim["tasks"].as_array().unwrap().len() as u64);
        assert_eq!(u(r, "cpus"), u(&sim, "cpus"));
        assert_eq!(u(r, "duration_ns"), u(&sim, "duration_ns"));
        assert_eq!(u(r, "sim_reached_ns"), u(r, "duration_ns"));
        assert!(u(r, "events") > 0);

        let (events, wall, rate) = (u(r, "events") as f64, f(r, "wall_s"), f(r, "events_per_s"));
        assert!(wall > 0.0, "{r}");
        assert!(
            (rate - events / wall).abs() <= 1e-9 * rate,
            "events/s {rate} != {events} / {wall}"
        );
        let (base, rest, peak) = (
            u(r, "rss_base_kb"),
            u(r, "rss_rest_kb"),
            u(r, "rss_peak_kb"),
        );
        assert!(base > 0 && rest > 0 && peak > 0, "{r}");
        assert!(peak >= rest, "peak {peak} KiB below rest {rest} KiB");
        assert!(f(r, "kb_per_task") >= 0.0);
        assert!(r["simso_s"].is_null() && r["ratio"].is_null());
    }
    assert_eq!(
        variants,
        [
            "tiny:edf:global",
            "tiny:llf:global",
            "tiny:edf:linux",
            "tiny-fair:cfs:linux",
            "tiny-fair:eevdf:linux"
        ]
    );
}

#[test]
fn export_is_deterministic_and_writes_one_file_per_row() {
    let dir = Scratch::new("export");
    let (a, b) = (dir.path("a/deeper"), dir.path("b"));
    for d in [&a, &b] {
        // tiny twice (a whole row and one of its variants): still one file.
        let out = schedlab(&[
            "bench",
            "--rows",
            "tiny,tiny-fair,tiny:llf:global,simso-64x8",
            "--export",
            d.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let listed = String::from_utf8(out.stdout).unwrap();
        assert_eq!(listed.lines().count(), 3, "{listed}");
    }
    let mut names: Vec<String> = std::fs::read_dir(&a)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["simso-64x8.json", "tiny-fair.json", "tiny.json"]);
    for n in &names {
        let (x, y) = (
            std::fs::read(a.join(n)).unwrap(),
            std::fs::read(b.join(n)).unwrap(),
        );
        assert!(x == y, "{n} differs between two exports");
    }
    // The 64-task SimSo set: 64 periodic tasks on 8 CPUs, total utilisation 6.
    let w: Value =
        serde_json::from_slice(&std::fs::read(a.join("simso-64x8.json")).unwrap()).unwrap();
    assert_eq!(w["platform"]["cpus"], 8);
    assert_eq!(w["duration"], "10s");
    let tasks = w["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 64);
    let num = |v: &Value, unit: &str| -> f64 {
        v.as_str()
            .unwrap()
            .strip_suffix(unit)
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    let util: f64 = tasks
        .iter()
        .map(|t| num(&t["runtime"], "us") / (1000.0 * num(&t["period"], "ms")))
        .sum();
    assert!((util - 6.0).abs() < 0.01, "U = {util}");
    assert!(tasks.iter().all(|t| {
        let p = num(&t["period"], "ms");
        (10.0..=1000.0).contains(&p)
    }));
}

#[test]
fn unknown_row_exits_2_listing_the_known_rows() {
    for spec in ["nosuch", "tiny:rm", "tiny:edf:partitioned:x"] {
        let out = schedlab(&["bench", "--rows", spec]);
        assert_eq!(out.status.code(), Some(2), "{spec}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("`{spec}`")), "{err}");
        if spec == "nosuch" {
            for known in [
                "simso-64x8",
                "simso-256x16",
                "scale-100k",
                "fair-10k",
                "tiny",
            ] {
                assert!(err.contains(known), "{known} missing from: {err}");
            }
        } else if spec == "tiny:rm" {
            assert!(err.contains("tiny:edf:global"), "{err}");
        }
    }
}

#[test]
fn a_variant_past_its_timeout_is_reported_not_waited_for() {
    let start = Instant::now();
    let doc = ok_json(&["bench", "--rows", "tiny:edf", "--timeout", "0", "--json"]);
    assert!(start.elapsed() < Duration::from_secs(10));
    let timed = rows(&doc);
    assert_eq!(timed.len(), 2);
    for r in timed {
        assert_eq!(s(r, "status"), "timeout", "{r}");
        assert!(r["events"].is_null() && r["events_per_s"].is_null());
    }
    // A child killed in the middle of a long run (100,000 tasks): the parent goes on.
    let start = Instant::now();
    let doc = ok_json(&[
        "bench",
        "--rows",
        "scale-100k:edf:global,tiny:edf:global",
        "--timeout",
        "1",
        "--json",
    ]);
    assert!(start.elapsed() < Duration::from_secs(15));
    let killed = rows(&doc);
    assert_eq!(s(&killed[0], "status"), "timeout", "{doc}");
    assert!(f(&killed[0], "elapsed_s") < 5.0, "{doc}");
    assert_eq!(s(&killed[1], "status"), "ok", "{doc}");
    // And in the table.
    let out = schedlab(&["bench", "--rows", "tiny:edf:global", "--timeout", "0"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().nth(1).expect("a row");
    assert!(
        line.starts_with("tiny") && line.contains(" timeout"),
        "{text}"
    );
}

#[test]
fn simso_times_give_ratios_for_global_variants_only() {
    let dir = Scratch::new("simso");
    let times = dir.path("simso.json");
    std::fs::write(
        &times,
        r#"{"simso": "0.8.5", "sets": {"tiny": {"edf": {"wall_s": 2.5, "deadline_misses": 0}, "llf": 4}}}"#,
    )
    .unwrap();
    let doc = ok_json(&[
        "bench",
        "--rows",
        "tiny",
        "--simso",
        times.to_str().unwrap(),
        "--json",
    ]);
    for r in rows(&doc) {
        let want = match (s(r, "policy").as_str(), s(r, "placement").as_str()) {
            ("edf", "global") => Some(2.5),
            ("llf", "global") => Some(4.0),
            _ => None,
        };
        match want {
            Some(t) => {
                assert_eq!(f(r, "simso_s"), t);
                let ratio = f(r, "ratio");
                assert!((ratio - t / f(r, "wall_s")).abs() <= 1e-9 * ratio, "{r}");
            }
            None => assert!(r["simso_s"].is_null() && r["ratio"].is_null(), "{r}"),
        }
    }
    let out = schedlab(&[
        "bench",
        "--rows",
        "tiny",
        "--simso",
        times.to_str().unwrap(),
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    let header = text.lines().next().unwrap();
    assert!(
        header.contains("simso s") && header.contains("ratio"),
        "{header}"
    );

    // A file that is not a timing file is bad input, reported before running anything.
    std::fs::write(&times, r#"{"edf": 3}"#).unwrap();
    let out = schedlab(&[
        "bench",
        "--rows",
        "tiny",
        "--simso",
        times.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no `sets` object"), "{err}");
    assert!(
        !err.contains("bench: [1/"),
        "ran before checking the file: {err}"
    );
    let missing = Path::new("/nonexistent/simso.json");
    let out = schedlab(&[
        "bench",
        "--rows",
        "tiny",
        "--simso",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// `-q` leaves nothing but errors on stderr (usage.md), even redirected to a file;
/// without it, each variant's start and end lines are there.
#[test]
fn quiet_bench_writes_no_progress_lines() {
    let quiet = schedlab(&["bench", "--rows", "tiny", "--json", "-q"]);
    assert!(quiet.status.success());
    assert_eq!(String::from_utf8_lossy(&quiet.stderr), "");
    assert_eq!(
        rows(&serde_json::from_slice(&quiet.stdout).unwrap()).len(),
        3
    );
    let loud = schedlab(&["bench", "--rows", "tiny", "--json"]);
    let e = String::from_utf8_lossy(&loud.stderr);
    assert_eq!(e.matches("bench: [").count(), 6, "{e}");
}

/// A child's progress lines are writes to the parent's pipe inside the timed run: at most
/// one per 100 ms of wall time, so SimSo's small rows (a few milliseconds) are timed
/// without any, and a long run still tells how far it got.
#[test]
fn a_child_tells_its_progress_at_most_every_100_ms() {
    // About 0.3 s in the test (debug) build, 99 steps: the old code told a line at each.
    let out = schedlab(&["bench", "--child", "simso-64x8:llf:global"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert!(lines[0].get("rest").is_some(), "{lines:?}");
    let last = lines.last().unwrap();
    let wall = f(last, "wall_s");
    let progress: Vec<&Value> = lines[1..lines.len() - 1].iter().collect();
    let mut previous = (0.0, 0);
    for p in &progress {
        let (at, ns) = (f(p, "elapsed_s"), u(p, "progress_ns"));
        assert!(at - previous.0 >= 0.1, "two lines within 100 ms: {lines:?}");
        assert!(ns > previous.1 && ns < 10_000_000_000, "{lines:?}");
        previous = (at, ns);
    }
    // Every 100 ms can tell at most one line, and a run past 500 ms tells at least one
    // (the 100 steps are each well under 100 ms).
    assert!(progress.len() as f64 <= wall / 0.1, "{lines:?}");
    if wall > 0.5 {
        assert!(!progress.is_empty(), "{lines:?}");
    }
}
