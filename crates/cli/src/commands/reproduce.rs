//! `schedlab reproduce <experiment|all>`: re-run a seed's experiments in the simulator and
//! put the seed's numbers next to ours. One module per experiment.

pub mod bfs;
pub mod bfs_machines;
pub mod cfs_weights;
pub mod cfs_weights_review;
pub mod fidelity;
pub mod illf;
pub mod interactive;
pub mod latency;
pub mod latency_review;
pub mod review;
pub mod scx_guest;
pub mod sensitivity_plot;
pub mod shield;
pub mod shield_review;

use crate::cli::ReproduceArgs;
use crate::commands::emit;
use crate::failure::Failure;
use crate::progress::Progress;
use review::Review;
use schedlab_model::{Overrides, Policy, Workload};
use schedlab_sim::{simulate, SimOptions, SimResult};
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Experiments `reproduce` knows, with a one-line description.
pub const EXPERIMENTS: &[(&str, &str)] = &[
    (
        "illf",
        "seed 000: ILLF vs EDF vs LLF (E1 Dhall, E2, Table 1, Fig. 4 and Fig. 5 sweeps)",
    ),
    (
        "cfs-weights",
        "seed 004: CFS under the linux, grouped-2, grouped-5 and extended-60 weight tables",
    ),
    (
        "bfs",
        "seed 001: BFS vs CFS vs EEVDF on compile-, compression- and video-like workloads",
    ),
    (
        "latency",
        "seed 002: cyclictest latency through the article's tuning steps (CFS knobs, FIFO/RR, IRQ affinity, isolation)",
    ),
    (
        "shield",
        "seed 003: CPU shield with and without moving the RT core's timers (cascade spike)",
    ),
    (
        "fidelity",
        "the calibrated simulator against this kernel: table1-2cpu (EDF margin 0 and 5%, RM), an overloaded and a fair mix; prediction error per metric",
    ),
    (
        "interactive",
        "seeds 001/002/004: an interactive task among 1, 3 and 7 hogs, simulated EEVDF/CFS vs this kernel (share, wake-up latency, slices)",
    ),
];

/// One case of an experiment (DESIGN.md: case, paper, simulated, real).
#[derive(Debug, Clone, Serialize)]
pub struct Case {
    /// What was run.
    pub case: String,
    /// The numbers the seed reports (null when it reports none).
    pub paper: Value,
    /// What the simulator gives.
    pub simulated: Value,
    /// Measured on this machine (null: the real-kernel runner is not part of this command yet).
    pub real: Value,
    /// Values worked out by hand in the seeds digest, when there are some.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub expected: Value,
    /// One line for a person: how ours compares.
    pub note: String,
}

/// A case as reported: with the "sched_ext guest" column where the guest lane has one
/// ([`scx_guest`]).
#[derive(Debug, Clone, Serialize)]
struct Row {
    #[serde(flatten)]
    case: Case,
    #[serde(rename = "sched_ext_guest", skip_serializing_if = "Value::is_null")]
    guest: Value,
}

/// An experiment's outcome: cases, plus files (plots) written.
pub struct Outcome {
    /// Cases in order.
    pub cases: Vec<Case>,
    /// Plot files written.
    pub plots: Vec<PathBuf>,
}

/// Simulate a YAML workload under `policy`, optionally keeping the trace.
pub fn sim(yaml: &str, name: &str, policy: Policy, trace: bool) -> Result<SimResult, Failure> {
    let ov = Overrides {
        policy: Some(policy),
        ..Overrides::default()
    };
    let w = Workload::parse_str(yaml, Path::new(name), &ov).map_err(Failure::input)?;
    simulate(&w, &SimOptions { trace }).map_err(|e| Failure::input(format!("{name}: {e}")))
}

/// Run `schedlab reproduce`.
pub fn run(args: &ReproduceArgs) -> Result<(), Failure> {
    let names: Vec<&str> = match args.experiment.as_str() {
        "all" => EXPERIMENTS.iter().map(|e| e.0).collect(),
        n if EXPERIMENTS.iter().any(|e| e.0 == n) => vec![n],
        n => {
            let known: Vec<&str> = EXPERIMENTS.iter().map(|e| e.0).collect();
            return Err(Failure::input(format!(
                "unknown experiment `{n}` (known: {}, all)",
                known.join(", ")
            )));
        }
    };
    std::fs::create_dir_all(&args.out_dir)
        .map_err(|e| Failure::output(format!("cannot create {}: {e}", args.out_dir.display())))?;
    let progress = Progress::new();
    let mut cases: Vec<Row> = Vec::new();
    let mut plots = Vec::new();
    let mut reviews = Review::default();
    let guest_src = scx_guest::GuestSource {
        results: args.guest_results.clone(),
        run: args.guest,
    };
    let mut guest = None;
    for (i, name) in names.iter().enumerate() {
        if names.len() > 1 {
            progress.set_prefix(&format!("[{}/{}] ", i + 1, names.len()));
        }
        let out = match *name {
            "illf" => illf::run(&args.out_dir, &progress)?,
            "cfs-weights" => cfs_weights::run_all(&args.out_dir, &progress, !args.no_real)?,
            "bfs" => bfs::run(&args.out_dir, &progress)?,
            "latency" => latency::run(&args.out_dir, &progress, !args.no_real)?,
            "shield" => shield::run(&args.out_dir, &progress, !args.no_real)?,
            "interactive" => interactive::run(&args.out_dir, &progress, !args.no_real)?,
            "fidelity" => fidelity::run(&progress, !args.no_real, args.record.as_deref())?,
            _ => unreachable!("listed in EXPERIMENTS"),
        };
        // The sched_ext guest lane's case (seed 004: scx_cfsw, seed 001: scx_bfs).
        let guest_case = match *name {
            "cfs-weights" | "bfs" => {
                if guest.is_none() {
                    guest = Some(scx_guest::load(&guest_src, &progress)?);
                }
                let g = guest.as_ref().expect("loaded above");
                Some(if *name == "bfs" {
                    scx_guest::bfs_case(g)?
                } else {
                    scx_guest::cfs_case(g)?
                })
            }
            _ => None,
        };
        let prefix = if names.len() > 1 {
            format!("{name}: ")
        } else {
            String::new()
        };
        let mut review = review_of(name, &args.out_dir, &progress, &mut plots)?;
        let extra = std::mem::take(&mut review.cases);
        let plain = |case| Row {
            case,
            guest: Value::Null,
        };
        let guest_rows = guest_case.map(|g| Row {
            case: g.case,
            guest: g.guest,
        });
        let rows = out.cases.into_iter().map(plain);
        cases.extend(
            rows.chain(guest_rows)
                .chain(extra.into_iter().map(plain))
                .map(|mut r| {
                    r.case.case = format!("{prefix}{}", r.case.case);
                    r
                }),
        );
        plots.extend(out.plots);
        sensitivity_plot::write_all(name, &review, &args.out_dir, &mut plots)?;
        reviews.extend(review, &prefix);
    }
    progress.done();
    let text = if args.output.json {
        let v = serde_json::json!({
            "experiment": args.experiment,
            "cases": cases,
            "headlines": reviews.headlines,
            "claims": reviews.claims,
            "assumptions": reviews.assumptions,
            "not_modelled": reviews.not_modelled,
            // File names in --out-dir (not full paths: the same run elsewhere prints the
            // same JSON).
            "plots": plots
                .iter()
                .map(|p| p.strip_prefix(&args.out_dir).unwrap_or(p).display().to_string())
                .collect::<Vec<_>>(),
        });
        // Every case's workload fixes its own seeds: the command takes none.
        let prov = crate::output::Provenance {
            seed: None,
            options: serde_json::json!({
                "experiment": args.experiment,
                "no_real": args.no_real,
                "guest": args.guest,
                "guest_results": args.guest_results.as_ref().map(|p| p.display().to_string()),
            }),
        };
        let v = prov.stamp(v).map_err(|e| Failure::output(e.to_string()))?;
        format!(
            "{}\n",
            serde_json::to_string(&v).map_err(|e| Failure::output(e.to_string()))?
        )
    } else {
        render(&args.experiment, &cases, &reviews, &plots)
    };
    emit(&text, args.output.output.as_deref())
}

/// An experiment's review: headlines with their sensitivity, the seed's claims checked,
/// assumptions and steps not modelled (empty for experiments without a seed headline).
fn review_of(
    name: &str,
    dir: &Path,
    progress: &Progress,
    plots: &mut Vec<PathBuf>,
) -> Result<Review, Failure> {
    match name {
        "illf" => illf::review(dir, progress, plots),
        "bfs" => bfs_machines::review(dir, progress, plots),
        "latency" => latency_review::review(progress),
        "shield" => shield_review::review(progress),
        "cfs-weights" => cfs_weights_review::review(progress),
        _ => Ok(Review::default()),
    }
}

fn render(name: &str, rows: &[Row], review: &Review, plots: &[PathBuf]) -> String {
    // fidelity and interactive compare with this kernel, not with a seed's figures.
    let (against, why) = match name {
        "fidelity" => (
            "this kernel's",
            "Why the simulator and this kernel differ: docs/fidelity.md",
        ),
        "interactive" => (
            "this kernel's",
            "Why the simulator and this kernel differ: docs/reproduction.md",
        ),
        _ => (
            "the seed's",
            "Why ours differ from the paper: docs/reproduction.md",
        ),
    };
    let mut s = format!("reproduce {name}: {against} numbers next to the simulator's\n\n");
    for Row { case: c, guest } in rows {
        s.push_str(&wrap_words("", "  ", &c.case));
        if !c.paper.is_null() {
            s.push_str(&labelled("paper", &c.paper));
        }
        if !c.expected.is_null() {
            s.push_str(&labelled("by hand", &c.expected));
        }
        match table(&c.simulated) {
            Some(t) => {
                let _ = writeln!(s, "  simulated");
                s.push_str(&t);
            }
            None => s.push_str(&labelled("simulated", &c.simulated)),
        }
        if !c.real.is_null() {
            s.push_str(&labelled("real", &c.real));
        }
        match table(guest) {
            Some(t) if !guest.is_null() => {
                let _ = writeln!(s, "  sched_ext guest");
                s.push_str(&t);
            }
            _ if !guest.is_null() => s.push_str(&labelled("sched_ext guest", guest)),
            _ => {}
        }
        if !c.note.is_empty() {
            s.push_str(&wrap_words("  → ", "    ", &c.note));
        }
        s.push('\n');
    }
    s.push_str(&review.render());
    if !plots.is_empty() {
        s.push_str("plots:\n");
        for p in plots {
            let _ = writeln!(s, "  {}", p.display());
        }
    }
    let _ = writeln!(s, "\n{why}");
    s
}

/// A map of rows (each a flat map of values) as an aligned table; None for other shapes.
fn table(v: &Value) -> Option<String> {
    let all = v.as_object()?;
    // A row with none of the first row's keys (Table 1's `ratios`: llf/edf, illf/edf) is
    // not a row of this table: as columns it would double the table's width and spill
    // into a second block of empty cells. It is written under the table, `key=value`.
    let first: Vec<&String> = all.values().next()?.as_object()?.keys().collect();
    let apart = |r: &Value| {
        r.as_object()
            .is_some_and(|o| o.keys().all(|k| !first.contains(&k)))
    };
    let rows: serde_json::Map<String, Value> = all
        .iter()
        .filter(|(_, r)| !apart(r))
        .map(|(k, r)| (k.clone(), r.clone()))
        .collect();
    let side: Vec<(&String, &Value)> = all.iter().filter(|(_, r)| apart(r)).collect();
    let rows = &rows;
    let mut cols: Vec<&str> = Vec::new();
    for r in rows.values() {
        for (k, x) in r.as_object()? {
            if x.is_object() || x.is_array() {
                return None;
            }
            if !cols.contains(&k.as_str()) {
                cols.push(k);
            }
        }
    }
    let cell = |r: &Value, c: &str| match r.get(c) {
        Some(Value::Number(n)) => fmt_num(n.as_f64().unwrap_or(0.0)),
        Some(Value::String(t)) => t.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    let w0 = rows.keys().map(|k| k.chars().count()).max().unwrap_or(0);
    let widths: Vec<usize> = cols
        .iter()
        .map(|c| {
            rows.values()
                .map(|r| cell(r, c).chars().count())
                .max()
                .unwrap_or(0)
                .max(c.len())
        })
        .collect();
    // Text columns align left, numbers right.
    let text: Vec<bool> = cols
        .iter()
        .map(|c| {
            rows.values()
                .any(|r| r.get(*c).is_some_and(Value::is_string))
        })
        .collect();
    let pad = |s: &mut String, v: &str, w: usize, left: bool| {
        let _ = if left {
            write!(s, "  {v:<w$}")
        } else {
            write!(s, "  {v:>w$}")
        };
    };
    // Columns in blocks that fit the terminal width, each block with the row names again.
    let mut blocks: Vec<std::ops::Range<usize>> = Vec::new();
    let mut start = 0;
    let mut used = 4 + w0;
    for (i, w) in widths.iter().enumerate() {
        if i > start && used + 2 + w > WIDTH {
            blocks.push(start..i);
            start = i;
            used = 4 + w0;
        }
        used += 2 + w;
    }
    blocks.push(start..cols.len());
    let mut s = String::new();
    for (b, range) in blocks.into_iter().enumerate() {
        if b > 0 {
            s.push('\n');
        }
        let mut line = format!("    {:w0$}", "");
        for i in range.clone() {
            pad(&mut line, cols[i], widths[i], text[i]);
        }
        s.push_str(line.trim_end());
        s.push('\n');
        for (name, r) in rows {
            let mut line = format!("    {name:w0$}");
            for i in range.clone() {
                pad(&mut line, &cell(r, cols[i]), widths[i], text[i]);
            }
            s.push_str(line.trim_end());
            s.push('\n');
        }
    }
    for (name, r) in side {
        let mut line = format!("    {name:w0$}");
        let indent = " ".repeat(line.chars().count());
        for (k, x) in r.as_object()? {
            if x.is_object() || x.is_array() {
                return None;
            }
            let item = format!("  {k}={}", cell(r, k));
            // Wrapped at the report's width, continued under the first item.
            if line.len() > indent.len() && line.chars().count() + item.chars().count() > WIDTH {
                s.push_str(&line);
                s.push('\n');
                line.clone_from(&indent);
            }
            line.push_str(&item);
        }
        s.push_str(&line);
        s.push('\n');
    }
    Some(s)
}

/// Width the terminal report keeps to (tables are split into column blocks, long value
/// lists wrapped), so that it reads in an ordinary terminal.
const WIDTH: usize = 100;

/// `text` word-wrapped at [`WIDTH`]: `first` before the first line, `indent` before the
/// others.
fn wrap_words(first: &str, indent: &str, text: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    // Whether `line` has a word yet (after `first` or `indent`).
    let mut has_word = false;
    for w in text.split(' ') {
        let len = line.chars().count();
        if has_word && len + 1 + w.chars().count() > WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.to_string();
        } else if has_word {
            line.push(' ');
        }
        line.push_str(w);
        has_word = true;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

/// `  paper      a=1  b=2` for one value of a case, wrapped at [`WIDTH`]. An object of
/// objects (the seed's figures per machine) gets one line per entry; a claim quoted from
/// a paper without numbers (`{"claim": ..., "numbers": null}`) prints as its text.
fn labelled(label: &str, v: &Value) -> String {
    let head = format!("  {label:<9}  ");
    let indent = " ".repeat(head.len());
    // Each line: a prefix, then words joined by `sep`, wrapped at WIDTH.
    let mut lines: Vec<(String, Vec<String>, &str)> = Vec::new();
    let fields =
        |x: &Value| -> Vec<String> { compact(x).split("  ").map(str::to_string).collect() };
    match v {
        Value::Object(m)
            if m.get("numbers").is_some_and(Value::is_null)
                && m.get("claim").is_some_and(Value::is_string) =>
        {
            let claim = m["claim"].as_str().unwrap_or_default();
            lines.push((
                String::new(),
                claim.split(' ').map(str::to_string).collect(),
                " ",
            ));
        }
        Value::Object(m) if !m.is_empty() && m.values().all(Value::is_object) => {
            for (k, x) in m {
                lines.push((format!("{k}: "), fields(x), "  "));
            }
        }
        _ => lines.push((String::new(), fields(v), "  ")),
    }
    let mut out = String::new();
    for (i, (prefix, words, sep)) in lines.iter().enumerate() {
        let mut line = if i == 0 { head.clone() } else { indent.clone() };
        line.push_str(prefix);
        let bare = line.chars().count();
        for w in words {
            let at_start = line.chars().count() == bare;
            if !at_start && line.chars().count() + sep.len() + w.chars().count() > WIDTH {
                out.push_str(line.trim_end());
                out.push('\n');
                line = " ".repeat(bare);
            } else if !at_start {
                line.push_str(sep);
            }
            line.push_str(w);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `{"a":1,"b":{"c":2}}` → `a=1 b.c=2`, for the terminal.
fn compact(v: &Value) -> String {
    fn walk(prefix: &str, v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let p = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&p, x, out);
                }
            }
            Value::Number(n) => {
                out.push(format!("{prefix}={}", fmt_num(n.as_f64().unwrap_or(0.0))))
            }
            Value::String(t) => out.push(format!("{prefix}={t}")),
            other => out.push(format!("{prefix}={other}")),
        }
    }
    let mut out = Vec::new();
    walk("", v, &mut out);
    out.join("  ")
}

pub(super) fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// Round to 2 decimals for JSON (results stay deterministic; this is presentation).
pub fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Write `content` to `dir/file` atomically and remember the path.
pub fn write_plot(
    dir: &Path,
    file: &str,
    content: &str,
    plots: &mut Vec<PathBuf>,
) -> Result<(), Failure> {
    let p = dir.join(file);
    crate::atomic::write_atomic(&p, content.as_bytes())
        .map_err(|e| Failure::output(format!("cannot write {}: {e}", p.display())))?;
    plots.push(p);
    Ok(())
}

#[cfg(test)]
mod table_tests {
    use super::table;
    use serde_json::json;

    /// Table 1's block: the ratios row (keys of its own) is one line under the table, not
    /// two more columns spilling into a second block of empty cells.
    #[test]
    fn a_row_with_keys_of_its_own_is_a_line_under_the_table() {
        let rate = |a: f64, b: f64, m: u64, l: u64| {
            json!({ "switches_per_cpu_s": a, "task_switches_per_cpu_s": b,
                    "misses": m, "laxity_evaluations": l })
        };
        let v = json!({
            "edf": rate(60.0, 33.33, 0, 0),
            "llf": rate(385.0, 355.0, 0, 26100),
            "illf": rate(56.67, 30.0, 0, 5320),
            "ratios": { "llf/edf": 6.42, "illf/edf": 0.94 },
        });
        let t = table(&v).unwrap();
        assert_eq!(
            t.matches("switches_per_cpu_s").count(),
            2,
            "one header:\n{t}"
        );
        assert!(!t.contains("\n\n"), "one block:\n{t}");
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 5, "{t}");
        assert_eq!(lines[4], "    ratios  llf/edf=6.42  illf/edf=0.94");
        assert!(
            lines[2].starts_with("    llf ") && lines[2].ends_with("26100"),
            "{t}"
        );
    }

    /// A long side row wraps at the report's width, continued under its first item.
    #[test]
    fn a_long_side_row_wraps_at_the_width() {
        let v = json!({
            "cfs": { "share": 0.5 },
            "difference": { "bfs_faster_than_cfs_pct": 0.04,
                            "bfs-nolocality_faster_than_cfs_pct": -0.05,
                            "eevdf_faster_than_cfs_pct": -0.21 },
        });
        let t = table(&v).unwrap();
        assert!(t.lines().all(|l| l.chars().count() <= 100), "{t}");
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[2],
            "    difference  bfs_faster_than_cfs_pct=0.04  bfs-nolocality_faster_than_cfs_pct=-0.05"
        );
        assert_eq!(lines[3], "                eevdf_faster_than_cfs_pct=-0.21");
    }
}
