//! `schedlab bench`'s rows and measurement: built-in random task sets (each generated
//! from a fixed seed, so a row is the same workload on every machine and every run), the
//! policy/placement variants each runs under, and the measurement of one variant in this
//! process (events, wall time, engine build time, RSS at rest and at peak). The command
//! line runs each variant in a child process and prints the table (docs/performance.md).

use crate::Error;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedlab_analysis::utilisation::{uunifast, uunifast_discard};
use schedlab_model::time::{MS, S};
use schedlab_model::{format_ns, Ns, Overrides, Placement, Policy, Workload};
use schedlab_sim::{engine_for, SimOptions};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

/// The seed of every generated set.
pub const SEED: u64 = 42;

/// What a row's tasks are.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// Periodic deadline-class tasks, UUniFast utilisations summing to `util`.
    Periodic { util: f64 },
    /// CPU-bound fair tasks with nice values in -10..10; one in five runs and sleeps.
    Fair,
}

/// One built-in task set and the policy/placement variants it runs under.
#[derive(Debug)]
pub struct Row {
    /// Row name (`--rows NAME`).
    pub name: &'static str,
    /// CPUs of the platform.
    pub cpus: usize,
    /// Tasks in the set.
    pub tasks: usize,
    /// Simulated time.
    pub duration: Ns,
    /// What the tasks are.
    pub kind: Kind,
    /// (policy, placement) names.
    pub variants: &'static [(&'static str, &'static str)],
    /// Run when no `--rows` is given.
    pub default: bool,
    /// Run by `--quick`.
    pub quick: bool,
}

const RT3: &[(&str, &str)] = &[("edf", "global"), ("llf", "global"), ("edf", "linux")];
const EDF2: &[(&str, &str)] = &[("edf", "global"), ("edf", "linux")];
const SCALE: &[(&str, &str)] = &[
    ("edf", "global"),
    ("illf", "global"),
    ("edf", "linux"),
    ("illf", "linux"),
];
const FAIR: &[(&str, &str)] = &[("cfs", "linux"), ("eevdf", "linux")];

/// The built-in rows, in the order they run.
pub const ROWS: &[Row] = &[
    Row {
        name: "simso-64x8",
        cpus: 8,
        tasks: 64,
        duration: 10 * S,
        kind: Kind::Periodic { util: 6.0 },
        variants: RT3,
        default: true,
        quick: true,
    },
    Row {
        name: "simso-256x16",
        cpus: 16,
        tasks: 256,
        duration: 10 * S,
        kind: Kind::Periodic { util: 12.0 },
        variants: RT3,
        default: true,
        quick: true,
    },
    Row {
        name: "large-4000x256",
        cpus: 256,
        tasks: 4000,
        duration: S,
        kind: Kind::Periodic { util: 192.0 },
        variants: EDF2,
        default: true,
        quick: false,
    },
    Row {
        name: "scale-1k",
        cpus: 1024,
        tasks: 1_000,
        duration: 10 * S,
        kind: Kind::Periodic { util: 768.0 },
        variants: SCALE,
        default: true,
        quick: true,
    },
    Row {
        name: "scale-10k",
        cpus: 1024,
        tasks: 10_000,
        duration: 10 * S,
        kind: Kind::Periodic { util: 768.0 },
        variants: SCALE,
        default: true,
        quick: false,
    },
    Row {
        name: "scale-100k",
        cpus: 1024,
        tasks: 100_000,
        duration: 10 * S,
        kind: Kind::Periodic { util: 768.0 },
        variants: SCALE,
        default: true,
        quick: false,
    },
    Row {
        name: "fair-10k",
        cpus: 256,
        tasks: 10_000,
        duration: S,
        kind: Kind::Fair,
        variants: FAIR,
        default: true,
        quick: false,
    },
    Row {
        name: "tiny",
        cpus: 2,
        tasks: 8,
        duration: S,
        kind: Kind::Periodic { util: 1.5 },
        variants: RT3,
        default: false,
        quick: false,
    },
    Row {
        name: "tiny-fair",
        cpus: 2,
        tasks: 12,
        duration: 500 * MS,
        kind: Kind::Fair,
        variants: FAIR,
        default: false,
        quick: false,
    },
];

/// The rows' names, comma-separated.
pub fn known_rows() -> String {
    ROWS.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
}

/// The row called `name`.
pub fn find_row(name: &str) -> Result<&'static Row, Error> {
    ROWS.iter().find(|r| r.name == name).ok_or_else(|| {
        Error::input(format!(
            "unknown bench row `{name}` (known: {})",
            known_rows()
        ))
    })
}

/// One selected variant: a row under one policy and placement.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// The row.
    pub row: &'static Row,
    /// Policy name.
    pub policy: &'static str,
    /// Placement name.
    pub placement: &'static str,
}

impl Variant {
    /// `ROW:POLICY:PLACEMENT`.
    pub fn label(&self) -> String {
        format!("{}:{}:{}", self.row.name, self.policy, self.placement)
    }
}

/// The variants selected by `--rows` / `--quick` (each once, in the order given).
pub fn select(rows: &[String], quick: bool) -> Result<Vec<Variant>, Error> {
    let all = |r: &'static Row| {
        r.variants.iter().map(move |&(policy, placement)| Variant {
            row: r,
            policy,
            placement,
        })
    };
    if rows.is_empty() {
        let pick = |r: &&Row| if quick { r.quick } else { r.default };
        return Ok(ROWS.iter().filter(pick).flat_map(all).collect());
    }
    let mut out: Vec<Variant> = Vec::new();
    for spec in rows {
        let spec = spec.trim();
        if spec.is_empty() {
            continue;
        }
        let mut parts = spec.split(':');
        let row = find_row(parts.next().unwrap_or(""))?;
        let policy = parts.next().map(str::to_ascii_lowercase);
        let placement = parts.next().map(str::to_ascii_lowercase);
        if parts.next().is_some() {
            return Err(Error::input(format!(
                "bench row `{spec}`: expected NAME, NAME:POLICY or NAME:POLICY:PLACEMENT"
            )));
        }
        let chosen: Vec<Variant> = all(row)
            .filter(|v| policy.as_deref().is_none_or(|p| p == v.policy))
            .filter(|v| placement.as_deref().is_none_or(|p| p == v.placement))
            .collect();
        if chosen.is_empty() {
            let have: Vec<String> = row
                .variants
                .iter()
                .map(|(p, q)| format!("{}:{p}:{q}", row.name))
                .collect();
            return Err(Error::input(format!(
                "bench row `{spec}` matches no variant (row {} has: {})",
                row.name,
                have.join(", ")
            )));
        }
        for v in chosen {
            if !out.iter().any(|o| o.label() == v.label()) {
                out.push(v);
            }
        }
    }
    if out.is_empty() {
        return Err(Error::input(format!(
            "--rows names no row (known: {})",
            known_rows()
        )));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Task-set generation

/// Draws of UUniFast tried before [`bounded_utilisations`] turns to its sampler.
const DISCARD_TRIES: usize = 1000;

/// Utilisations summing to `total`, none above 1: uniform over that region of the
/// simplex. UUniFast-Discard (Davis & Burns 2009: redraw a set with a task above 1) when
/// that succeeds within [`DISCARD_TRIES`] draws; otherwise (mean utilisation near 1, as
/// 768 over 1000 tasks, where a draw practically never fits) the same distribution by a
/// Gibbs sampler: start from a point of the region and redraw pairs (u_i, u_j) uniformly
/// on their segment u_i + u_j = constant within [0, 1]².
pub fn bounded_utilisations(rng: &mut ChaCha8Rng, n: usize, total: f64) -> Vec<f64> {
    if let Some(u) = uunifast_discard(rng, n, total, 1.0, DISCARD_TRIES - 1) {
        return u;
    }
    // The last draw (the DISCARD_TRIES-th) starts the sampler below when it does not fit.
    let mut u = uunifast(rng, n, total);
    if u.iter().all(|&x| x <= 1.0) {
        return u;
    }
    if n < 2 || total >= n as f64 {
        return vec![(total / n.max(1) as f64).min(1.0); n];
    }
    // A point of the region: clamp the last draw at 1 and give the excess back to the
    // others in proportion to their headroom (which is at least the excess as total < n).
    let excess: f64 = u.iter().map(|&x| (x - 1.0).max(0.0)).sum();
    for x in u.iter_mut() {
        *x = x.min(1.0);
    }
    let headroom: f64 = u.iter().map(|&x| 1.0 - x).sum();
    if headroom > 0.0 {
        for x in u.iter_mut() {
            *x += excess * (1.0 - *x) / headroom;
        }
    }
    // 20 n ln n pair moves: every coordinate is redrawn ~40 ln n times.
    let moves = 20 * n * ((n as f64).ln().ceil() as usize).max(1);
    for _ in 0..moves {
        let i = rng.random_range(0..n);
        let mut j = rng.random_range(0..n - 1);
        if j >= i {
            j += 1;
        }
        let s = u[i] + u[j];
        let lo = (s - 1.0).max(0.0);
        let hi = s.min(1.0);
        u[i] = lo + (hi - lo) * rng.random::<f64>();
        u[j] = s - u[i];
    }
    u
}

/// A duration as the format writes it, in the unit it was generated in.
fn us(x: u64) -> String {
    format!("{x}us")
}

/// The row's workload as a JSON document (`schedlab simulate` reads it), one task a line.
/// The first variant's policy and placement are the file's.
pub fn workload_json(row: &Row) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let (policy, placement) = row.variants[0];
    let mut tasks: Vec<String> = Vec::with_capacity(row.tasks);
    let sched = match row.kind {
        Kind::Periodic { util } => {
            let u = bounded_utilisations(&mut rng, row.tasks, util);
            for (i, x) in u.iter().enumerate() {
                // Log-uniform in 10..1000 ms, whole ms.
                let period_ms = (10f64 * 100f64.powf(rng.random::<f64>())).round() as u64;
                let period_us = period_ms * 1000;
                let runtime_us = ((x * period_us as f64).round() as u64).clamp(1, period_us);
                tasks.push(format!(
                    "{{\"name\": \"t{}\", \"runtime\": \"{}\", \"period\": \"{period_ms}ms\"}}",
                    i + 1,
                    us(runtime_us)
                ));
            }
            format!("{{\"deadline\": \"{policy}\", \"placement\": \"{placement}\"}}")
        }
        Kind::Fair => {
            for i in 0..row.tasks {
                let nice: i64 = rng.random_range(-10..=10);
                let sleeper = rng.random_range(0..5) == 0;
                let mut t = format!("{{\"name\": \"f{}\", \"nice\": {nice}", i + 1);
                if sleeper {
                    let run_ms: u64 = rng.random_range(1..=10);
                    let sleep_ms: u64 = rng.random_range(1..=50);
                    let _ = write!(t, ", \"run\": \"{run_ms}ms\", \"sleep\": \"{sleep_ms}ms\"");
                }
                t.push('}');
                tasks.push(t);
            }
            format!("{{\"fair\": \"{policy}\", \"placement\": \"{placement}\"}}")
        }
    };
    let mut out = String::with_capacity(64 * row.tasks + 256);
    out.push_str("{\n");
    let _ = writeln!(out, "  \"name\": \"{}\",", row.name);
    let _ = writeln!(
        out,
        "  \"platform\": {{\"cpus\": {}, \"hz\": 1000}},",
        row.cpus
    );
    let _ = writeln!(out, "  \"duration\": \"{}\",", format_ns(row.duration));
    let _ = writeln!(out, "  \"seed\": {SEED},");
    let _ = writeln!(out, "  \"scheduler\": {sched},");
    out.push_str("  \"tasks\": [\n");
    for (i, t) in tasks.iter().enumerate() {
        out.push_str("    ");
        out.push_str(t);
        out.push_str(if i + 1 < tasks.len() { ",\n" } else { "\n" });
    }
    out.push_str("  ]\n}\n");
    out
}

/// The variant's validated workload (the row's file with `--policy` and `--placement`).
pub fn variant_workload(v: &Variant, text: &str) -> Result<Workload, String> {
    let ov = Overrides {
        policy: Some(Policy::parse(v.policy)?),
        placement: Some(Placement::parse(v.placement)?),
        ..Overrides::default()
    };
    let name = format!("{}.json", v.row.name);
    Workload::parse_str(text, Path::new(&name), &ov).map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------------------
// The child: one variant, measured

/// What a child reports, one JSON line on stdout.
#[derive(Debug, Serialize, Deserialize)]
pub struct Measure {
    /// Events the engine processed.
    pub events: u64,
    /// Wall seconds of the run alone (`run_until` steps and the final `run`).
    pub wall_s: f64,
    /// Wall seconds to build the engine (`engine_for`).
    pub build_s: f64,
    /// VmRSS (KiB) when the child started, before generating the workload.
    pub rss_base_kb: u64,
    /// VmRSS (KiB) with the engine built and the workload dropped, before running.
    pub rss_rest_kb: u64,
    /// VmHWM (KiB) after the run: the peak from engine construction on (or from the
    /// start of the child where /proc/self/clear_refs cannot reset it).
    pub rss_peak_kb: u64,
    /// Deadline misses (a sanity check beside SimSo's).
    pub deadline_misses: u64,
    /// Jobs released.
    pub jobs: u64,
}

/// A `VmXXX:` field of /proc/self/status, in KiB.
fn proc_status_kb(field: &str) -> Result<u64, String> {
    let text = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| format!("cannot read /proc/self/status: {e}"))?;
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| format!("/proc/self/status has no {field} line"))
}

/// Give freed heap memory back to the kernel, so RSS at rest counts live data only.
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim only walks glibc's own heap; no pointer of ours is involved.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

/// Steps the run is cut into (`Engine::run_until`, the same schedule as one `run`), so
/// that a variant killed at its timeout still tells how far it got.
const STEPS: u64 = 100;

/// The shortest wall time between two progress lines of a child: often enough for a
/// timeout's report and a terminal's percentage, rare enough to cost nothing measurable.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// A line to the parent, at once (it may kill this process at any moment).
fn tell(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Build and run the variant, telling the parent the RSS at rest and the progress.
pub fn measure(v: &Variant) -> Result<Measure, String> {
    let rss_base_kb = proc_status_kb("VmRSS:")?;
    let text = workload_json(v.row);
    let w = variant_workload(v, &text)?;
    drop(text);
    trim_heap();
    // Peak from here on: engine construction and the run (Linux >= 4.0).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let t0 = Instant::now();
    let engine = engine_for(&w, &SimOptions::default()).map_err(|e| e.to_string())?;
    let build_s = t0.elapsed().as_secs_f64();
    drop(w);
    trim_heap();
    let rss_rest_kb = proc_status_kb("VmRSS:")?;
    tell(
        &serde_json::json!({"rest": {
            "rss_base_kb": rss_base_kb, "rss_rest_kb": rss_rest_kb, "build_s": build_s,
        }})
        .to_string(),
    );
    let mut engine = engine;
    let duration = v.row.duration;
    let t0 = Instant::now();
    let mut told = t0;
    for k in 1..STEPS {
        let at = duration / STEPS * k;
        engine.run_until(at);
        // A line is a write to the parent's pipe and wakes its reader, inside the timed
        // run: at most one per PROGRESS_EVERY, so a run of a few milliseconds is timed
        // without any (99 of them were part of SimSo's small rows' wall time).
        let now = Instant::now();
        if now.duration_since(told) >= PROGRESS_EVERY {
            told = now;
            tell(
                &serde_json::json!({
                    "progress_ns": at, "elapsed_s": (now - t0).as_secs_f64(),
                })
                .to_string(),
            );
        }
    }
    let r = engine.run();
    let wall_s = t0.elapsed().as_secs_f64();
    let rss_peak_kb = proc_status_kb("VmHWM:")?;
    Ok(Measure {
        events: r.events,
        wall_s,
        build_s,
        rss_base_kb,
        rss_rest_kb,
        rss_peak_kb,
        deadline_misses: r.deadline_misses,
        jobs: r.jobs_released,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_model::time::US;

    fn rng() -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(7)
    }

    #[test]
    fn uunifast_sums_to_total() {
        let u = uunifast(&mut rng(), 64, 6.0);
        assert_eq!(u.len(), 64);
        assert!((u.iter().sum::<f64>() - 6.0).abs() < 1e-9);
        assert!(u.iter().all(|&x| x >= 0.0));
    }

    #[test]
    fn bounded_utilisations_stay_at_most_one_even_when_dense() {
        // 768 over 1000 tasks: UUniFast-Discard cannot succeed, the sampler takes over.
        let u = bounded_utilisations(&mut rng(), 1000, 768.0);
        assert_eq!(u.len(), 1000);
        assert!((u.iter().sum::<f64>() - 768.0).abs() < 1e-6);
        assert!(u.iter().all(|&x| (0.0..=1.0).contains(&x)), "out of [0, 1]");
        // Uniform on the region: mean 0.768, and not piled up at the bound.
        let at_one = u.iter().filter(|&&x| x > 0.999).count();
        assert!(at_one < 20, "{at_one} tasks at u = 1");
    }

    #[test]
    fn every_row_generates_a_valid_workload_under_every_variant() {
        for row in ROWS.iter().filter(|r| r.tasks <= 4000) {
            let text = workload_json(row);
            for &(policy, placement) in row.variants {
                let v = Variant {
                    row,
                    policy,
                    placement,
                };
                let w =
                    variant_workload(&v, &text).unwrap_or_else(|e| panic!("{}: {e}", v.label()));
                assert_eq!(w.tasks.len(), row.tasks);
                assert_eq!(w.platform.cpus, row.cpus);
                assert_eq!(w.duration, row.duration);
                if let Kind::Periodic { util } = row.kind {
                    // Rounding runtimes to whole µs moves U by at most n × 0.5µs/10ms.
                    let err = row.tasks as f64 * 0.5 * US as f64 / (10 * MS) as f64;
                    assert!((w.utilisation() - util).abs() <= err, "{}", v.label());
                }
            }
        }
    }

    #[test]
    fn fair_rows_mix_nice_values_and_sleepers() {
        let row = find_row("tiny-fair").unwrap();
        let v = Variant {
            row,
            policy: "cfs",
            placement: "linux",
        };
        let w = variant_workload(&v, &workload_json(row)).unwrap();
        assert!(w.tasks.iter().all(|t| t.class.is_fair()));
        let big = find_row("fair-10k").unwrap();
        let text = workload_json(big);
        assert!(text.contains("\"sleep\""));
        assert!(text.contains("\"nice\": -"));
    }
}
