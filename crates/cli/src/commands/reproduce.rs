//! `schedlab reproduce <experiment|all>`: run a seed's experiments (the
//! `schedlab-experiments` crate computes them) and render the report: on the terminal,
//! as JSON, and the figures as SVG files in `--out-dir`.

use crate::cli::ReproduceArgs;
use crate::commands::emit;
use crate::failure::Failure;
use crate::plot::ToSvg;
use crate::progress::Progress;
use crate::table::Table;
use schedlab_experiments::fmt_num;
use schedlab_experiments::review::Review;
use schedlab_experiments::scx_guest::GuestSource;
use schedlab_experiments::{Options, Report, Row};
use serde_json::{Map, Value};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Run `schedlab reproduce`.
pub fn run(args: &ReproduceArgs) -> Result<(), Failure> {
    // An unknown name is refused before anything is created.
    if args.experiment != "all" {
        schedlab_experiments::experiment(&args.experiment)?;
    }
    std::fs::create_dir_all(&args.out_dir)
        .map_err(|e| Failure::output(format!("cannot create {}: {e}", args.out_dir.display())))?;
    let progress = Progress::new();
    let opts = Options {
        real: !args.no_real,
        record: args.record.clone(),
        guest: GuestSource {
            results: args.guest_results.clone(),
            run: args.guest,
        },
    };
    let report = schedlab_experiments::reproduce(&args.experiment, &opts, &progress)?;
    if let (Some(path), Some(data)) = (&args.record, &report.record) {
        let mut text =
            serde_json::to_string_pretty(data).map_err(|e| Failure::output(e.to_string()))?;
        text.push('\n');
        crate::atomic::write_atomic(path, text.as_bytes())
            .map_err(|e| Failure::output(format!("{}: {e}", path.display())))?;
    }
    let plots = write_figures(&report, &args.out_dir)?;
    progress.done();
    let text = if args.output.json {
        report_json(
            &report,
            args.no_real,
            args.guest,
            args.guest_results.as_deref(),
        )?
    } else {
        render(&args.experiment, &report.cases, &report.review, &plots)
    };
    emit(&text, args.output.output.as_deref())
}

/// `report` as `reproduce --json` prints it: the report's JSON with the provenance keys
/// (the options as given; no seed: every case's workload fixes its own). The Python
/// module returns the same text.
pub fn report_json(
    report: &Report,
    no_real: bool,
    guest: bool,
    guest_results: Option<&Path>,
) -> Result<String, Failure> {
    let prov = crate::output::Provenance {
        seed: None,
        options: serde_json::json!({
            "experiment": report.experiment,
            "no_real": no_real,
            "guest": guest,
            "guest_results": guest_results.map(|p| p.display().to_string()),
        }),
    };
    let v = prov
        .stamp(report.to_json())
        .map_err(|e| Failure::output(e.to_string()))?;
    Ok(format!(
        "{}\n",
        serde_json::to_string(&v).map_err(|e| Failure::output(e.to_string()))?
    ))
}

/// Write every figure of `report` into `dir` as SVG (atomically), and remove the
/// sensitivity charts of headlines a review no longer has; the paths written, in order.
fn write_figures(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let mut plots = Vec::new();
    for f in &report.figures {
        let p = dir.join(&f.file);
        crate::atomic::write_atomic(&p, f.plot.to_svg().as_bytes())
            .map_err(|e| Failure::output(format!("cannot write {}: {e}", p.display())))?;
        plots.push(p);
    }
    for (experiment, kept) in &report.sensitivity_charts {
        remove_stale(experiment, *kept, dir)?;
    }
    Ok(plots)
}

/// Charts an earlier version wrote for headlines the review no longer has would be read
/// as current: remove `experiment`'s numbered charts after the first `kept`, in sequence
/// (up to the first number missing).
fn remove_stale(experiment: &str, kept: usize, dir: &Path) -> Result<(), Failure> {
    for n in kept + 1.. {
        let stale = dir.join(format!("{experiment}-sensitivity-{n}.svg"));
        if !stale.is_file() {
            break;
        }
        std::fs::remove_file(&stale).map_err(|e| {
            Failure::output(format!(
                "cannot remove the stale chart {}: {e}",
                stale.display()
            ))
        })?;
    }
    Ok(())
}

/// A review for the terminal.
fn render_review(review: &Review) -> String {
    let mut s = String::new();
    if !review.headlines.is_empty() {
        s.push_str("Headlines: the result across the choices that can change it\n\n");
    }
    for h in &review.headlines {
        s.push_str(&wrap_words("", "  ", &h.headline));
        s.push_str(&wrap_words("  paper: ", "    ", &h.paper));
        let mut rows = Map::new();
        for r in &h.sensitivity {
            let mut v = r.values.as_object().cloned().unwrap_or_default();
            v.insert("holds".into(), Value::String(yes_no(r.holds).into()));
            rows.insert(format!("{}: {}", r.choice, r.setting), Value::Object(v));
        }
        if let Some(t) = table(&Value::Object(rows)) {
            s.push_str(&t);
        }
        s.push_str(&wrap_words("  verdict: ", "    ", &h.verdict));
        s.push('\n');
    }
    if !review.claims.is_empty() {
        s.push_str("Claims of the seed, checked\n");
        for c in &review.claims {
            s.push_str(&wrap_words(
                &format!("  [{}] ", c.verdict.label()),
                "      ",
                &format!("{} — {}", c.claim, c.why),
            ));
        }
        s.push('\n');
    }
    if !review.assumptions.is_empty() {
        s.push_str("Assumptions (not stated by the seed)\n");
        for a in &review.assumptions {
            s.push_str(&wrap_words("  - ", "    ", a));
        }
        s.push('\n');
    }
    if !review.not_modelled.is_empty() {
        s.push_str("Not modelled\n");
        for n in &review.not_modelled {
            s.push_str(&wrap_words(
                "  - ",
                "    ",
                &format!("{}: {}", n.step, n.why),
            ));
        }
        s.push('\n');
    }
    s
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
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
    s.push_str(&render_review(review));
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
    // Text columns align left, numbers right.
    let mut t = Table::new(std::iter::once("").chain(cols.iter().copied()))
        .indent("    ")
        .fit(WIDTH);
    for (i, c) in cols.iter().enumerate() {
        let text = rows
            .values()
            .any(|r| r.get(*c).is_some_and(Value::is_string));
        t = t.align_left(i + 1, text);
    }
    for (name, r) in rows {
        t.row(
            std::iter::once(name.clone())
                .chain(cols.iter().map(|c| cell(r, c)))
                .collect(),
        );
    }
    let mut s = String::new();
    t.render(&mut s);
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

    /// Charts of headlines no longer reviewed are removed, and nothing else.
    #[test]
    fn charts_of_headlines_no_longer_reviewed_are_removed_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("schedlab-stale-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let files = [
            "x-sensitivity-1.svg",
            "x-sensitivity-2.svg",
            "x-sensitivity-3.svg",
            "x-sensitivity-5.svg",
            "y-sensitivity-2.svg",
        ];
        for f in files {
            std::fs::write(dir.join(f), "old").unwrap();
        }
        super::remove_stale("x", 1, &dir).unwrap();
        let left: Vec<bool> = files.iter().map(|f| dir.join(f).exists()).collect();
        // The kept chart stays; past a gap, and another experiment's, are not ours to judge.
        assert_eq!(left, [true, false, false, true, true]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
