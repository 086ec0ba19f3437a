//! `schedlab doctor`: what this machine offers for real runs (`run`, `latency`,
//! `compare --real`, trace recording, sched_ext) and how to get the rest. One line per
//! check, each `ok` or what is missing with the command that fixes it; `--json` for
//! scripts. The checks are in `checks.rs` (one function each, listed in `CHECKS`); they
//! read the machine through `host::Host`, which the tests replace by a fake machine.

pub mod checks;
pub mod host;

use crate::commands::emit;
use crate::failure::Failure;
use clap::Args;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Examples shown by `schedlab doctor --help`.
pub const EXAMPLES: &str = "\
Examples:
  schedlab doctor
  sudo schedlab doctor                 # as the real commands will run
  schedlab doctor --json | jq '.checks[] | select(.status != \"ok\") | {name, fix}'

Statuses: ok; warning (works, with a caveat); missing (a real command that needs it
fails); info. Exit status 0 whatever the machine lacks (the report is the result).";

/// `schedlab doctor`
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the checks as one JSON object.
    #[arg(long)]
    pub json: bool,

    /// Write the report to OUT instead of stdout (atomically).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Available.
    Ok,
    /// Available with a caveat that affects measurements.
    #[serde(rename = "warning")]
    Warn,
    /// Not available: the real commands that need it fail.
    Missing,
    /// Neither good nor bad, worth knowing.
    Info,
}

impl Status {
    fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warning",
            Status::Missing => "missing",
            Status::Info => "info",
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Short, stable name (JSON key material: `cap_sys_nice`, `tracefs`...).
    pub name: &'static str,
    /// Outcome.
    pub status: Status,
    /// What was found.
    pub detail: String,
    /// The command or step that fixes it (None when nothing to fix).
    pub fix: Option<String>,
}

impl Check {
    /// A check with every field.
    pub fn new(name: &'static str, status: Status, detail: String, fix: Option<String>) -> Check {
        Check {
            name,
            status,
            detail,
            fix,
        }
    }

    /// An `ok` check.
    pub fn ok(name: &'static str, detail: String) -> Check {
        Check::new(name, Status::Ok, detail, None)
    }
}

/// Run every check against `host`.
pub fn diagnose(host: &dyn host::Host) -> Vec<Check> {
    checks::CHECKS.iter().map(|c| c(host)).collect()
}

/// The terminal report: `name  status  detail`, the fix on the next line.
pub fn render(checks: &[Check]) -> String {
    let mut s = String::from("schedlab doctor: what this machine offers for real runs\n\n");
    let w = checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
    let indent = " ".repeat(w + 11);
    for c in checks {
        let head = format!("{:w$}  {:7}  ", c.name, c.status.word());
        s.push_str(&wrap(&head, &indent, &c.detail));
        if let Some(fix) = &c.fix {
            s.push_str(&wrap(
                &format!("{indent}fix: "),
                &format!("{indent}     "),
                fix,
            ));
        }
    }
    let count = |st: Status| checks.iter().filter(|c| c.status == st).count();
    let _ = writeln!(
        s,
        "\n{} ok, {} warnings, {} missing",
        count(Status::Ok),
        count(Status::Warn),
        count(Status::Missing)
    );
    s
}

/// `text` word-wrapped at 100 columns, `first` before its first line, `indent` before
/// the others.
fn wrap(first: &str, indent: &str, text: &str) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut empty = true;
    // Any run of white space is one break: a literal's line continuation never shows.
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > 100 {
            out.push_str(&line);
            out.push('\n');
            line = indent.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// Check this machine and print the report.
pub fn run(args: &DoctorArgs) -> Result<(), Failure> {
    let checks = diagnose(&host::LiveHost);
    let text = if args.json {
        let count = |st: Status| checks.iter().filter(|c| c.status == st).count();
        let v = serde_json::json!({
            "checks": checks,
            "ok": count(Status::Ok),
            "warnings": count(Status::Warn),
            "missing": count(Status::Missing),
        });
        format!(
            "{}\n",
            serde_json::to_string(&v).map_err(|e| Failure::output(e.to_string()))?
        )
    } else {
        render(&checks)
    };
    emit(&text, args.output.as_deref())
}

#[cfg(test)]
mod tests;
