//! `schedlab bench`: how fast the engine simulates, and how much memory it takes, on
//! built-in random task sets (docs/performance.md).
//!
//! Every task set is generated from a fixed seed, so a row is the same workload on every
//! machine and every run. Each policy/placement variant of a row runs in a child process
//! (this binary, re-executed with the hidden `--child` flag) so that its peak RSS is its
//! own and a variant that runs too long can be killed without losing the others.

use crate::atomic::write_atomic;
use crate::commands::emit;
use crate::failure::{Failure, EXIT_OUTPUT};
use crate::progress::Progress;
use crate::table::Table;
use clap::Args;
use schedlab_experiments::bench::{find_row, measure, select, workload_json, Measure, Variant};
use schedlab_model::{format_ns, Ns};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `schedlab bench --help` examples.
pub const EXAMPLES: &str = "\
Examples:
  schedlab bench --quick                       # simso-64x8, simso-256x16, scale-1k
  schedlab bench --rows scale-10k --timeout 600
  schedlab bench --rows simso-64x8:llf:global,large-4000x256
  schedlab bench --quick --json | jq '.rows[] | {row, policy, placement, events_per_s}'
  schedlab bench --rows simso-64x8,simso-256x16 --export out/sets   # workloads only
  schedlab bench --rows simso-64x8,simso-256x16 --simso simso.json  # with SimSo's times
  scripts/simso-compare.sh                     # times SimSo 0.8.5 on the same sets

Rows (NAME, or NAME:POLICY, or NAME:POLICY:PLACEMENT for one variant):
  simso-64x8      64 tasks, 8 CPUs, U=6, 10 s: edf, llf global; edf linux
  simso-256x16    256 tasks, 16 CPUs, U=12, 10 s: edf, llf global; edf linux
  large-4000x256  4000 tasks, 256 CPUs, U=192, 1 s: edf global, linux
  scale-1k        1000 tasks, 1024 CPUs, U=768, 10 s: edf, illf; global, linux
  scale-10k       10,000 tasks, 1024 CPUs, U=768, 10 s: edf, illf; global, linux
  scale-100k      100,000 tasks, 1024 CPUs, U=768, 10 s: edf, illf; global, linux
  fair-10k        10,000 fair tasks (nice -10..10, 1 in 5 runs/sleeps), 256 CPUs,
                  1 s: cfs, eevdf; linux
  tiny, tiny-fair 8 periodic / 12 fair tasks on 2 CPUs: smoke rows that take
                  milliseconds (for tests; not in the default set)
Without --rows or --quick every row but the tiny ones runs; the big rows take minutes.

Periodic sets: UUniFast utilisations summing to U = 0.75 x CPUs (no task above 1),
periods log-uniform in 10..1000 ms (whole ms), runtime = u x period (whole us), implicit
deadlines, hz 1000, seed 42. Columns: simulated events, wall time of the run alone,
events/s, RSS after the engine is built (at rest) and at its peak, (RSS at rest - RSS at
start) / tasks, and with --simso, SimSo's wall time and SimSo / schedlab.

Exit status: 0 when every variant ran or timed out, 1 when a variant failed (the table
still shows the others) or the output cannot be written, 2 on a bad command line, row
name or SimSo file.";

/// `schedlab bench`
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Comma-separated rows to run: NAME (every variant of the row), NAME:POLICY or
    /// NAME:POLICY:PLACEMENT. Default: every row except the tiny smoke rows.
    #[arg(
        long,
        value_name = "NAMES",
        value_delimiter = ',',
        conflicts_with = "quick"
    )]
    pub rows: Vec<String>,

    /// Only the three smaller rows: simso-64x8, simso-256x16 and scale-1k.
    #[arg(long)]
    pub quick: bool,

    /// Kill a variant that runs longer than this many seconds (workload generation
    /// included) and report it as `timeout`.
    #[arg(
        long,
        value_name = "SECS",
        default_value = "300",
        value_parser = parse_timeout,
        allow_negative_numbers = true
    )]
    pub timeout: f64,

    /// Print one JSON object (`rows: [...]`, numbers as numbers) instead of the table.
    #[arg(long)]
    pub json: bool,

    /// SimSo timing file written by scripts/simso-compare.sh: adds SimSo's wall time and
    /// the ratio SimSo / schedlab to the global-placement variants it has times for.
    #[arg(long, value_name = "FILE")]
    pub simso: Option<PathBuf>,

    /// Write each selected row's workload to DIR/ROW.json (accepted by `schedlab
    /// simulate`) and run nothing. DIR is created if missing.
    #[arg(long, value_name = "DIR")]
    pub export: Option<PathBuf>,

    /// Internal: measure one variant (ROW:POLICY:PLACEMENT) in this process and print
    /// one JSON line. The parent `schedlab bench` runs one child per variant.
    #[arg(long, value_name = "VARIANT", hide = true)]
    pub child: Option<String>,
}

fn parse_timeout(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!(
            "`{s}` is not a number of seconds (e.g. 300 or 0.5)"
        )),
    }
}

fn run_child(label: &str) -> Result<(), Failure> {
    let mut parts = label.split(':');
    let (Some(row), Some(policy), Some(placement), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Failure::input(format!(
            "--child wants ROW:POLICY:PLACEMENT, got `{label}`"
        )));
    };
    let row = find_row(row)?;
    let v = row
        .variants
        .iter()
        .find(|(p, q)| *p == policy && *q == placement)
        .map(|&(policy, placement)| Variant {
            row,
            policy,
            placement,
        })
        .ok_or_else(|| Failure::input(format!("no bench variant `{label}`")))?;
    let m = measure(&v).map_err(|e| Failure::input(format!("{label}: {e}")))?;
    let line = serde_json::to_string(&m)
        .map_err(|e| Failure::output(format!("cannot encode JSON: {e}")))?;
    emit(&(line + "\n"), None)
}

// ---------------------------------------------------------------------------------------
// The parent: one child per variant

/// What a child told before it ended or was killed.
#[derive(Debug, Default)]
struct Partial {
    /// (RSS at start, RSS at rest in KiB, seconds to build the engine).
    rest: Option<(u64, u64, f64)>,
    /// Simulated time reached.
    progress_ns: Option<Ns>,
}

impl Partial {
    /// Take in one line of the child's stdout; the final report is returned.
    fn take(&mut self, line: &str) -> Option<Measure> {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        if let Some(r) = v.get("rest") {
            let kb = |k: &str| r.get(k).and_then(|x| x.as_u64());
            if let (Some(base), Some(rest)) = (kb("rss_base_kb"), kb("rss_rest_kb")) {
                let build = r.get("build_s").and_then(|x| x.as_f64()).unwrap_or(0.0);
                self.rest = Some((base, rest, build));
            }
            None
        } else if let Some(p) = v.get("progress_ns").and_then(|x| x.as_u64()) {
            self.progress_ns = Some(p);
            None
        } else {
            serde_json::from_value(v).ok()
        }
    }
}

/// How a variant ended.
enum Outcome {
    Done(Measure),
    Timeout(Partial),
    Failed(String, Partial),
}

/// Run `exe bench --child LABEL`, killing it after `timeout` seconds. `duration` (the
/// variant's simulated time) turns the child's progress into a percentage on a terminal.
fn spawn_child(exe: &Path, label: &str, timeout: f64, duration: Ns) -> (Outcome, f64) {
    let start = Instant::now();
    let mut child = match Command::new(exe)
        .args(["bench", "--child", label])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            return (
                Outcome::Failed(
                    format!("cannot start {}: {e}", exe.display()),
                    Partial::default(),
                ),
                0.0,
            )
        }
    };
    // stdout: the child's report lines, read as they come (progress on a terminal).
    let stdout = child.stdout.take();
    let shown = label.to_string();
    let out = std::thread::spawn(move || {
        let mut partial = Partial::default();
        let mut done = None;
        let Some(pipe) = stdout else {
            return (partial, done, String::new());
        };
        let progress = Progress::new();
        let mut last = String::new();
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            if let Some(m) = partial.take(&line) {
                done = Some(m);
            } else if let Some(p) = partial.progress_ns {
                progress.step(&format!(
                    "bench: {shown}: {:.0}% simulated",
                    100.0 * p as f64 / duration.max(1) as f64
                ));
            }
            last = line;
        }
        (partial, done, last)
    });
    let stderr = child.stderr.take();
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut p) = stderr {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let limit = Duration::from_secs_f64(timeout.min(1e9));
    let status = loop {
        match child.try_wait() {
            // Over the limit when seen to end: a timeout too (`--timeout 0` always is).
            Ok(Some(_)) if start.elapsed() >= limit => break Err(None),
            Ok(Some(status)) => break Ok(status),
            Ok(None) if start.elapsed() >= limit => {
                let _ = child.kill();
                let _ = child.wait();
                break Err(None);
            }
            Ok(None) => {
                let pause = if start.elapsed() < Duration::from_millis(100) {
                    5
                } else {
                    50
                };
                std::thread::sleep(Duration::from_millis(pause));
            }
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                break Err(Some(format!("cannot wait for the child: {e}")));
            }
        }
    };
    let elapsed = start.elapsed().as_secs_f64();
    let (partial, done, last) = out
        .join()
        .unwrap_or_else(|_| (Partial::default(), None, String::new()));
    let stderr = err.join().unwrap_or_default();
    let status = match status {
        Ok(s) => s,
        Err(None) => return (Outcome::Timeout(partial), elapsed),
        Err(Some(e)) => return (Outcome::Failed(e, partial), elapsed),
    };
    if !status.success() {
        let msg = stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.strip_prefix("error: ").unwrap_or(l))
            .collect::<Vec<_>>()
            .join(" / ");
        let msg = if msg.is_empty() {
            format!("the child exited with {status}")
        } else {
            msg
        };
        return (Outcome::Failed(msg, partial), elapsed);
    }
    match done {
        Some(m) => (Outcome::Done(m), elapsed),
        None => (
            Outcome::Failed(format!("unreadable child report: {last}"), partial),
            elapsed,
        ),
    }
}

/// One line of the output.
#[derive(Debug, Serialize)]
struct RowResult {
    row: &'static str,
    policy: &'static str,
    placement: &'static str,
    cpus: usize,
    tasks: usize,
    duration_ns: Ns,
    /// `ok`, `timeout` or `failed`.
    status: &'static str,
    /// Simulated time reached: the duration when `ok`, how far it got otherwise.
    sim_reached_ns: Option<Ns>,
    events: Option<u64>,
    wall_s: Option<f64>,
    events_per_s: Option<f64>,
    build_s: Option<f64>,
    rss_base_kb: Option<u64>,
    rss_rest_kb: Option<u64>,
    rss_peak_kb: Option<u64>,
    kb_per_task: Option<f64>,
    deadline_misses: Option<u64>,
    jobs: Option<u64>,
    simso_s: Option<f64>,
    ratio: Option<f64>,
    /// Wall seconds of the whole child (generation, construction, run, report).
    elapsed_s: f64,
    error: Option<String>,
}

impl RowResult {
    fn new(v: &Variant, outcome: Outcome, elapsed_s: f64, simso_s: Option<f64>) -> RowResult {
        let mut r = RowResult {
            row: v.row.name,
            policy: v.policy,
            placement: v.placement,
            cpus: v.row.cpus,
            tasks: v.row.tasks,
            duration_ns: v.row.duration,
            status: "ok",
            sim_reached_ns: None,
            events: None,
            wall_s: None,
            events_per_s: None,
            build_s: None,
            rss_base_kb: None,
            rss_rest_kb: None,
            rss_peak_kb: None,
            kb_per_task: None,
            deadline_misses: None,
            jobs: None,
            simso_s,
            ratio: None,
            elapsed_s,
            error: None,
        };
        let partial = match outcome {
            Outcome::Done(m) => {
                r.events = Some(m.events);
                r.wall_s = Some(m.wall_s);
                r.events_per_s = (m.wall_s > 0.0).then(|| m.events as f64 / m.wall_s);
                r.rss_peak_kb = Some(m.rss_peak_kb);
                r.deadline_misses = Some(m.deadline_misses);
                r.jobs = Some(m.jobs);
                r.ratio = match simso_s {
                    Some(s) if m.wall_s > 0.0 => Some(s / m.wall_s),
                    _ => None,
                };
                Partial {
                    rest: Some((m.rss_base_kb, m.rss_rest_kb, m.build_s)),
                    progress_ns: Some(v.row.duration),
                }
            }
            Outcome::Timeout(p) => {
                r.status = "timeout";
                p
            }
            Outcome::Failed(e, p) => {
                r.status = "failed";
                r.error = Some(e);
                p
            }
        };
        r.sim_reached_ns = partial.progress_ns;
        if let Some((base, rest, build)) = partial.rest {
            r.rss_base_kb = Some(base);
            r.rss_rest_kb = Some(rest);
            r.build_s = Some(build);
            r.kb_per_task = Some(rest.saturating_sub(base) as f64 / v.row.tasks as f64);
        }
        r
    }
}

/// SimSo's wall seconds per set and policy, from scripts/simso-compare.sh's file:
/// `{"sets": {"simso-64x8": {"edf": {"wall_s": 12.3, ...}, "llf": 45.6}}}` (an object
/// with `wall_s`, or the number itself).
#[derive(Debug, Default)]
struct SimsoTimes {
    times: Vec<(String, String, f64)>,
}

impl SimsoTimes {
    fn load(path: &Path) -> Result<SimsoTimes, Failure> {
        let bad = |why: String| Failure::input(format!("{}: {why}", path.display()));
        let text = std::fs::read_to_string(path)
            .map_err(|e| bad(format!("cannot read SimSo timing file: {e}")))?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
        let sets = v.get("sets").and_then(|s| s.as_object()).ok_or_else(|| {
            bad("no `sets` object (expected {\"sets\": {SET: {POLICY: {\"wall_s\": N}}}})".into())
        })?;
        let mut times = Vec::new();
        for (set, policies) in sets {
            let policies = policies
                .as_object()
                .ok_or_else(|| bad(format!("sets.{set} is not an object")))?;
            for (policy, t) in policies {
                let secs = t
                    .as_f64()
                    .or_else(|| t.get("wall_s").and_then(|w| w.as_f64()))
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .ok_or_else(|| {
                        bad(format!(
                            "sets.{set}.{policy}: expected seconds or {{\"wall_s\": seconds}}"
                        ))
                    })?;
                times.push((set.clone(), policy.to_ascii_lowercase(), secs));
            }
        }
        Ok(SimsoTimes { times })
    }

    /// SimSo's time for a variant: SimSo schedules globally, so global placement only.
    fn get(&self, v: &Variant) -> Option<f64> {
        if v.placement != "global" {
            return None;
        }
        self.times
            .iter()
            .find(|(s, p, _)| s == v.row.name && p == v.policy)
            .map(|t| t.2)
    }
}

/// `schedlab bench`
pub fn run(args: &BenchArgs) -> Result<(), Failure> {
    if let Some(label) = &args.child {
        return run_child(label);
    }
    let variants = select(&args.rows, args.quick)?;
    if let Some(dir) = &args.export {
        return export(dir, &variants, args.json);
    }
    let simso = match &args.simso {
        Some(p) => SimsoTimes::load(p)?,
        None => SimsoTimes::default(),
    };
    let exe = crate::self_exe()
        .map_err(|e| Failure::output(format!("cannot find the schedlab binary: {e}")))?;

    let n = variants.len();
    let mut results = Vec::with_capacity(n);
    // One line per variant as it starts and ends, even when redirected (the big rows
    // take minutes); none with -q (usage.md: nothing but errors).
    let log = !crate::progress::quiet();
    for (i, v) in variants.iter().enumerate() {
        if log {
            eprintln!(
                "bench: [{}/{n}] {} {} {}: {} tasks on {} CPUs, {} simulated...",
                i + 1,
                v.row.name,
                v.policy,
                v.placement,
                v.row.tasks,
                v.row.cpus,
                format_ns(v.row.duration)
            );
        }
        let (outcome, elapsed) = spawn_child(&exe, &v.label(), args.timeout, v.row.duration);
        let r = RowResult::new(v, outcome, elapsed, simso.get(v));
        let how = match r.status {
            "ok" => format!(
                "{} events in {:.3} s ({:.0} events/s)",
                r.events.unwrap_or(0),
                r.wall_s.unwrap_or(0.0),
                r.events_per_s.unwrap_or(0.0)
            ),
            "timeout" => format!(
                "timeout after {:.1} s, {} of {} simulated",
                r.elapsed_s,
                r.sim_reached_ns.map_or_else(|| "none".into(), format_ns),
                format_ns(r.duration_ns)
            ),
            _ => format!("failed: {}", r.error.as_deref().unwrap_or("")),
        };
        if log {
            eprintln!("bench: [{}/{n}] {}: {how}", i + 1, v.label());
        }
        results.push(r);
    }

    let text = if args.json {
        let doc = serde_json::json!({
            "timeout_s": args.timeout,
            "simso": args.simso.as_ref().map(|p| p.display().to_string()),
            "rows": results,
        });
        let mut s = serde_json::to_string(&doc)
            .map_err(|e| Failure::output(format!("cannot encode JSON: {e}")))?;
        s.push('\n');
        s
    } else {
        render(&results, args.simso.is_some())
    };
    emit(&text, None)?;
    let failed: Vec<String> = results
        .iter()
        .filter(|r| r.status == "failed")
        .map(|r| format!("{}:{}:{}", r.row, r.policy, r.placement))
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure {
            code: EXIT_OUTPUT,
            message: format!("{} variant(s) failed: {}", failed.len(), failed.join(", ")),
        })
    }
}

/// `--export DIR`: each selected row's workload, once per row.
fn export(dir: &Path, variants: &[Variant], json: bool) -> Result<(), Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::output(format!("cannot create {}: {e}", dir.display())))?;
    let mut written: Vec<String> = Vec::new();
    for v in variants {
        let path = dir.join(format!("{}.json", v.row.name));
        let shown = path.display().to_string();
        if written.contains(&shown) {
            continue;
        }
        write_atomic(&path, workload_json(v.row).as_bytes())
            .map_err(|e| Failure::output(format!("cannot write {shown}: {e}")))?;
        written.push(shown);
    }
    let text = if json {
        serde_json::json!({ "exported": written }).to_string() + "\n"
    } else {
        written.join("\n") + "\n"
    };
    emit(&text, None)
}

// ---------------------------------------------------------------------------------------
// The table

fn opt<T>(x: Option<T>, f: impl Fn(T) -> String) -> String {
    x.map_or_else(|| "-".into(), f)
}

fn mb(kb: u64) -> String {
    format!("{:.1}", kb as f64 / 1024.0)
}

/// An integer with thousands separators (12,345,678).
fn grouped(x: u64) -> String {
    let digits = x.to_string();
    let groups: Vec<&str> = digits
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|g| std::str::from_utf8(g).unwrap_or(""))
        .collect();
    groups.join(",")
}

fn render(results: &[RowResult], with_simso: bool) -> String {
    let mut header = vec![
        "row",
        "policy",
        "placement",
        "cpus",
        "tasks",
        "sim",
        "events",
        "wall s",
        "events/s",
        "rest MB",
        "peak MB",
        "KB/task",
    ];
    if with_simso {
        header.extend(["simso s", "ratio"]);
    }
    header.push("status");
    let mut rows: Vec<Vec<String>> = Vec::new();
    for r in results {
        let mut cells = vec![
            r.row.to_string(),
            r.policy.to_string(),
            r.placement.to_string(),
            r.cpus.to_string(),
            grouped(r.tasks as u64),
            format_ns(r.duration_ns),
            opt(r.events, grouped),
            opt(r.wall_s, |w| format!("{w:.3}")),
            opt(r.events_per_s, |e| grouped(e.round() as u64)),
            opt(r.rss_rest_kb, mb),
            opt(r.rss_peak_kb, mb),
            opt(r.kb_per_task, |k| format!("{k:.2}")),
        ];
        if with_simso {
            cells.push(opt(r.simso_s, |s| format!("{s:.2}")));
            cells.push(opt(r.ratio, |x| format!("{x:.0}x")));
        }
        cells.push(match (r.status, r.sim_reached_ns) {
            // How far a killed variant got, in simulated time.
            ("timeout", Some(at)) => format!(
                "timeout {:.0}%",
                100.0 * at as f64 / r.duration_ns.max(1) as f64
            ),
            (s, _) => s.to_string(),
        });
        rows.push(cells);
    }
    // Names left-aligned, numbers right-aligned.
    let last = header.len() - 1;
    let mut t = Table::new(header)
        .align_left(1, true)
        .align_left(2, true)
        .align_left(last, true);
    for row in rows {
        t.row(row);
    }
    let mut out = String::new();
    t.render(&mut out);
    let errors: Vec<&RowResult> = results.iter().filter(|r| r.error.is_some()).collect();
    if !errors.is_empty() {
        out.push('\n');
        for r in errors {
            let _ = writeln!(
                out,
                "{}:{}:{}: {}",
                r.row,
                r.policy,
                r.placement,
                r.error.as_deref().unwrap_or("")
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(12_345_678), "12,345,678");
    }
}
