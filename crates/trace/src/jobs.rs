//! Every job as CSV (`--jobs-csv`): one header line, then one row per job.
//!
//! Columns: `task,job,release_ns,start_ns,finish_ns,deadline_ns,cpu,response_ns,missed,aborted`.
//! Times are integer nanoseconds; `start_ns`, `finish_ns`, `cpu` and `response_ns` are
//! empty for a job that never ran / did not complete, `deadline_ns` for a job without a
//! deadline (a burst of a fair task); `missed` and `aborted` are
//! `true`/`false`. Task names are quoted when they contain a comma, a quote or a newline
//! (RFC 4180), so `pandas.read_csv` reads the file as it is.

use crate::schedule::Schedule;
use std::fmt::Write;

/// The header line's columns.
pub const COLUMNS: [&str; 10] = [
    "task",
    "job",
    "release_ns",
    "start_ns",
    "finish_ns",
    "deadline_ns",
    "cpu",
    "response_ns",
    "missed",
    "aborted",
];

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// Render every job of `s` as CSV.
pub fn render(s: &Schedule) -> String {
    let mut out = String::with_capacity(64 * (s.jobs.len() + 1));
    out.push_str(&COLUMNS.join(","));
    out.push('\n');
    for j in &s.jobs {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{}",
            quote(&s.tasks[j.task].name),
            j.job,
            j.release,
            opt(j.start),
            opt(j.finish),
            opt(j.has_deadline().then_some(j.deadline)),
            opt(j.cpu),
            opt(j.response()),
            j.missed,
            j.aborted
        );
    }
    out
}
