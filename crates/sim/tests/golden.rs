//! Golden results: every example × periodic policy × placement (and fair policy where the
//! example has fair tasks), plus generated sets that exercise the many-task paths, must
//! simulate to exactly the result recorded in `tests/golden/results.txt` — the whole JSON
//! result (less `wall_s`), the schedule and the event log, hashed.
//!
//! The file was recorded before the engine was split and optimised; a change to it means
//! a simulated result changed. Re-record deliberately with
//! `SCHEDLAB_BLESS=1 cargo test -p schedlab-sim --test golden` and say why in the commit.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedlab_model::{OnMiss, Overrides, Placement, Policy, Workload};
use schedlab_sim::{simulate_checked, SimOptions, PERIODIC_POLICIES};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

mod common;
use common::periodic_set;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// FNV-1a, 64 bits: stable across platforms and Rust versions.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// One line: key, hash of everything, and a few readable figures for a quick diff.
fn line(key: &str, w: &Workload) -> String {
    // Checked: every golden run also passes the engine's invariant checker.
    match simulate_checked(w, &SimOptions { trace: true }) {
        Err(schedlab_sim::SimError::Invariant(m)) => panic!("{key}: invariant violated {m}"),
        Err(e) => format!("{key} error {:016x}\n", fnv(e.to_string().as_bytes())),
        Ok(mut r) => {
            r.wall_s = 0.0;
            let mut text = serde_json::to_string(&r).unwrap();
            text += &serde_json::to_string(&r.trace).unwrap();
            text += &serde_json::to_string(&r.log).unwrap();
            format!(
                "{key} {:016x} events={} switches={} misses={} migrations={}\n",
                fnv(text.as_bytes()),
                r.events,
                r.context_switches,
                r.deadline_misses,
                r.migrations
            )
        }
    }
}

/// Fair tasks of every behaviour (hogs, run/sleep, work) at several nice values, with a
/// few periodic RT tasks above them.
fn fair_set(n: usize, cpus: usize, ms: u64, seed: u64) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut y = format!("platform: {{ cpus: {cpus}, hz: 1000 }}\nduration: {ms}ms\ntasks:\n");
    for i in 0..n {
        let nice = rng.random_range(-5i32..=5);
        y += &match i % 4 {
            0 => format!("  - {{ name: hog{i}, nice: {nice} }}\n"),
            1 => format!(
                "  - {{ name: ia{i}, nice: {nice}, run: {}us, sleep: {}us }}\n",
                rng.random_range(200..5000),
                rng.random_range(500..20000)
            ),
            2 => format!(
                "  - {{ name: batch{i}, class: batch, work: {}ms }}\n",
                rng.random_range(5..200)
            ),
            _ => format!(
                "  - {{ name: rt{i}, class: fifo, priority: {}, runtime: {}us, period: {}ms }}\n",
                rng.random_range(1..99),
                rng.random_range(100..900),
                rng.random_range(5..20)
            ),
        };
    }
    y
}

fn all_lines() -> String {
    let mut out = String::new();
    let mut examples: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    examples.sort();
    let mut sources: Vec<(String, String)> = examples
        .iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(p).unwrap(),
            )
        })
        .collect();
    sources.push((
        "gen-periodic-32x4".into(),
        periodic_set(32, 4, 3.2, 2000, 1),
    ));
    sources.push((
        "gen-periodic-64x8".into(),
        periodic_set(64, 8, 6.0, 1000, 2),
    ));
    sources.push(("gen-fair-24x4".into(), fair_set(24, 4, 1000, 3)));
    sources.push(("gen-fair-40x8".into(), fair_set(40, 8, 500, 4)));
    for (name, text) in &sources {
        let base = Workload::parse_str(text, Path::new(name), &Overrides::default()).unwrap();
        let has_fair = base.tasks.iter().any(|t| t.class.is_fair());
        let fairs: &[Policy] = if has_fair {
            &[Policy::Cfs, Policy::Eevdf, Policy::Bfs]
        } else {
            &[]
        };
        for policy in PERIODIC_POLICIES {
            for placement in [Placement::Global, Placement::Partitioned, Placement::Linux] {
                for on_miss in [OnMiss::Continue, OnMiss::Abort] {
                    if on_miss == OnMiss::Abort && !matches!(policy, Policy::Edf | Policy::Llf) {
                        continue;
                    }
                    let mut w = base.clone();
                    w.scheduler.policy = policy;
                    w.scheduler.placement = placement;
                    w.on_miss = on_miss;
                    let key = format!(
                        "{name} {} {} {}",
                        policy.name(),
                        placement.name(),
                        if on_miss == OnMiss::Abort {
                            "abort"
                        } else {
                            "continue"
                        }
                    );
                    if fairs.is_empty() {
                        out += &line(&format!("{key} -"), &w);
                    }
                    for &fair in fairs {
                        w.scheduler.fair = fair;
                        out += &line(&format!("{key} {}", fair.name()), &w);
                    }
                }
            }
        }
    }
    let _ = writeln!(out, "# {} results", out.lines().count());
    out
}

#[test]
fn results_match_the_recorded_golden_file() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/results.txt");
    let got = all_lines();
    if std::env::var_os("SCHEDLAB_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).expect("tests/golden/results.txt");
    let diff: Vec<String> = want
        .lines()
        .zip(got.lines())
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("  want {a}\n  got  {b}"))
        .collect();
    assert!(
        diff.is_empty() && want.lines().count() == got.lines().count(),
        "{} of {} simulated results changed:\n{}",
        diff.len(),
        want.lines().count(),
        diff.join("\n")
    );
}
