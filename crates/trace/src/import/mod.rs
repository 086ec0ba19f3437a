//! `schedlab trace import`: turn what a user already has into a workload file.
//!
//! - [`kernel`]: a kernel scheduler trace as text (`trace-cmd report` output or the raw
//!   ftrace `trace` file): each task's run/sleep pattern, period and policy;
//! - [`rtapp`]: an rt-app JSON configuration (tasks, phases, run/sleep/timer/runtime
//!   events, policies including SCHED_DEADLINE).
//!
//! Both produce an [`Imported`]: the workload as YAML (checked by parsing it back with
//! the model, so it is always a valid workload) and notes on what could not be
//! recovered.

pub mod kernel;
pub mod rtapp;

use schedlab_model::limits::{MAX_TASKS, MAX_TASK_CPUS, MAX_TIME_NS};
use schedlab_model::{Ns, Overrides, Workload};
use std::fmt::{self, Write};
use std::path::Path;

/// A failed import: the message names the line when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// 1-based line number in the input, when the problem is on one line.
    pub line: Option<usize>,
    /// What is wrong, for a person.
    pub message: String,
    /// The importer's own fault: it built a workload the model refuses. Never the
    /// input's fault, so fuzzing and tests assert it stays false. A flag rather than a
    /// message prefix because messages echo the user's text (a key may be spelled
    /// "internal error").
    pub internal: bool,
}

impl ImportError {
    /// An error about the whole input.
    pub fn new(message: impl Into<String>) -> ImportError {
        ImportError {
            line: None,
            message: message.into(),
            internal: false,
        }
    }

    /// The importer's own fault (see [`ImportError::internal`]).
    fn importer_bug(message: impl Into<String>) -> ImportError {
        ImportError {
            internal: true,
            ..ImportError::new(message)
        }
    }

    /// An error on line `line` (1-based).
    pub fn at(line: usize, message: impl Into<String>) -> ImportError {
        ImportError {
            line: Some(line),
            message: message.into(),
            internal: false,
        }
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ImportError {}

/// The result of an import.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The workload, as YAML text (comments included).
    pub yaml: String,
    /// What could not be recovered, one sentence each.
    pub notes: Vec<String>,
    /// Number of tasks in the workload.
    pub tasks: usize,
}

/// One task of the generated workload: its YAML fields in order, and a comment line.
#[derive(Debug, Clone, Default)]
pub(crate) struct OutTask {
    pub name: String,
    pub comment: String,
    pub fields: Vec<(&'static str, String)>,
    /// The first duration above the limit for any time, if any (refused in [`finish`]).
    pub too_long: Option<(&'static str, Ns)>,
}

impl OutTask {
    pub fn new(name: &str, comment: String) -> OutTask {
        OutTask {
            name: name.to_string(),
            comment,
            fields: Vec::new(),
            too_long: None,
        }
    }

    pub fn field(&mut self, key: &'static str, value: impl Into<String>) -> &mut Self {
        self.fields.push((key, value.into()));
        self
    }

    pub fn dur(&mut self, key: &'static str, ns: Ns) -> &mut Self {
        if ns > MAX_TIME_NS && self.too_long.is_none() {
            self.too_long = Some((key, ns));
        }
        self.field(key, pretty(ns))
    }

    /// How many tasks this line expands to (its `count`, else 1).
    fn count(&self) -> u64 {
        self.fields
            .iter()
            .find(|(k, _)| *k == "count")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(1)
    }

    /// The task names this line expands to (`name1..nameN` with a count).
    fn expanded_names(&self) -> Vec<String> {
        match self.count() {
            1 if !self.fields.iter().any(|(k, _)| *k == "count") => vec![self.name.clone()],
            n => (1..=n).map(|k| format!("{}{k}", self.name)).collect(),
        }
    }
}

/// A duration for a person and for the workload parser: the largest unit the value
/// reaches, with exact decimals (`2.072759s`, `37.782ms`, `445us`, `7ns`).
pub fn pretty(ns: Ns) -> String {
    for (unit, scale) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= scale {
            let (int, frac) = (ns / scale, ns % scale);
            if frac == 0 {
                return format!("{int}{unit}");
            }
            let digits = scale.ilog10() as usize;
            let f = format!("{frac:0digits$}");
            return format!("{int}.{}{unit}", f.trim_end_matches('0'));
        }
    }
    format!("{ns}ns")
}

/// `s` with every character YAML does not allow in a document, and every line break,
/// replaced by `with`: what is left can stand in a comment or a quoted scalar.
pub(crate) fn yaml_text(s: &str, with: char) -> String {
    s.chars()
        .map(|c| match c {
            // Line and paragraph separators are line breaks to YAML.
            '\u{2028}' | '\u{2029}' => with,
            '\t' | ' '..='~' | '\u{a0}'..='\u{d7ff}' | '\u{10000}'.. => c,
            '\u{e000}'..='\u{fffd}' if c != '\u{feff}' => c,
            _ => with,
        })
        .collect()
}

/// A YAML double-quoted scalar (JSON string syntax is valid YAML).
pub(crate) fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"?\"".into())
}

/// Round a duration to whole microseconds (nearest), at least 1us.
pub(crate) fn round_us(ns: Ns) -> Ns {
    ((ns + 500) / 1000).max(1) * 1000
}

/// Round a duration up to whole microseconds, at least 1us.
pub(crate) fn ceil_us(ns: Ns) -> Ns {
    ns.div_ceil(1000).max(1) * 1000
}

/// Names unique and non-empty: a repeated name gets `-2`, `-3`, ... (or the `alt` the
/// caller prefers, e.g. `comm-pid`).
pub(crate) fn unique_names(names: Vec<(String, String)>) -> Vec<String> {
    let mut count = std::collections::HashMap::new();
    for (n, _) in &names {
        *count.entry(n.clone()).or_insert(0usize) += 1;
    }
    let mut used = std::collections::HashSet::new();
    names
        .into_iter()
        .map(|(n, alt)| {
            let base = if n.trim().is_empty() {
                "task".to_string()
            } else {
                n
            };
            let mut cand = if count.get(&base).copied().unwrap_or(0) > 1 {
                alt
            } else {
                base.clone()
            };
            let mut k = 2;
            while !used.insert(cand.clone()) {
                cand = format!("{base}-{k}");
                k += 1;
            }
            cand
        })
        .collect()
}

/// Rename lines whose expanded names (`count: n` makes `name1..namen`) would clash with
/// an earlier line's: thread `a` × 2 and thread `a1` become `a1, a2` and `a1-2`.
fn distinct_expanded_names(tasks: &[OutTask]) -> Vec<OutTask> {
    let mut used = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(tasks.len());
    for t in tasks {
        let mut t = t.clone();
        let base = t.name.clone();
        let mut k = 2;
        while t.expanded_names().iter().any(|n| used.contains(n)) {
            t.name = format!("{base}-{k}");
            k += 1;
        }
        used.extend(t.expanded_names());
        out.push(t);
    }
    out
}

/// Render the workload, then check it by parsing it back; the YAML is returned only
/// when the model accepts it.
pub(crate) fn finish(
    header: &[String],
    name: &str,
    cpus: usize,
    duration: Ns,
    tasks: &[OutTask],
    notes: Vec<String>,
) -> Result<Imported, ImportError> {
    if tasks.is_empty() {
        return Err(ImportError::new(
            "no task could be imported (nothing ran, or every task was filtered out)",
        ));
    }
    // What the input can make impossible is said here, in its own words; what is left
    // for the model to refuse below is a bug of the importer.
    for t in tasks {
        if let Some((key, ns)) = t.too_long {
            return Err(ImportError::new(format!(
                "{}: its {key} would be {}, above {} (about 31.7 years), schedlab's limit for any time",
                t.name,
                pretty(ns),
                pretty(MAX_TIME_NS)
            )));
        }
    }
    let total: u64 = tasks
        .iter()
        .map(OutTask::count)
        .fold(0, u64::saturating_add);
    if total > MAX_TASKS || total.saturating_mul(cpus as u64) > MAX_TASK_CPUS {
        return Err(ImportError::new(format!(
            "{total} tasks on {cpus} CPUs: more than schedlab's limits of {MAX_TASKS} tasks and {MAX_TASK_CPUS} tasks × CPUs"
        )));
    }
    // Names as YAML can carry them (a comm or an rt-app key may hold any byte).
    let tasks: Vec<OutTask> = tasks
        .iter()
        .map(|t| {
            let mut t = t.clone();
            t.name = yaml_text(&t.name, '?');
            if t.name.trim().is_empty() {
                t.name = "task".into();
            }
            t
        })
        .collect();
    let tasks = &distinct_expanded_names(&tasks);
    let mut y = String::new();
    for h in header {
        let _ = writeln!(y, "# {}", yaml_text(h, ' '));
    }
    if !notes.is_empty() {
        let _ = writeln!(y, "# Not recovered:");
        for n in &notes {
            let _ = writeln!(y, "#   - {}", yaml_text(n, ' '));
        }
    }
    let _ = writeln!(y, "name: {}", quote(&yaml_text(name, '?')));
    let _ = writeln!(y, "platform: {{ cpus: {cpus} }}");
    let _ = writeln!(y, "duration: {}", pretty(duration.max(1_000)));
    let _ = writeln!(y, "tasks:");
    for t in tasks {
        if !t.comment.is_empty() {
            let _ = writeln!(y, "  # {}", yaml_text(&t.comment, ' '));
        }
        let mut fields = vec![format!("name: {}", quote(&t.name))];
        fields.extend(t.fields.iter().map(|(k, v)| format!("{k}: {v}")));
        let _ = writeln!(y, "  - {{ {} }}", fields.join(", "));
    }
    Workload::parse_str(&y, Path::new("imported.yaml"), &Overrides::default()).map_err(|e| {
        ImportError::importer_bug(format!(
            "internal error: the imported workload is not valid ({e}); please report it with the input"
        ))
    })?;
    Ok(Imported {
        yaml: y,
        notes,
        tasks: tasks.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_unique() {
        let got = unique_names(vec![
            ("a".into(), "a-1".into()),
            ("b".into(), "b-2".into()),
            ("a".into(), "a-3".into()),
            ("".into(), "x".into()),
        ]);
        assert_eq!(got, vec!["a-1", "b", "a-3", "task"]);
    }

    #[test]
    fn rounding() {
        assert_eq!(round_us(1_499), 1_000);
        assert_eq!(round_us(1_500), 2_000);
        assert_eq!(round_us(10), 1_000);
        assert_eq!(ceil_us(1_001), 2_000);
        assert_eq!(quote("a\"b"), "\"a\\\"b\"");
        assert_eq!(pretty(2_072_759_000), "2.072759s");
        assert_eq!(pretty(37_782_000), "37.782ms");
        assert_eq!(pretty(445_000), "445us");
        assert_eq!(pretty(5_000_000), "5ms");
        assert_eq!(pretty(7), "7ns");
        for ns in [1, 999, 1_000, 1_001, 12_345_678_901, 5_000_000_100] {
            assert_eq!(schedlab_model::parse_duration(&pretty(ns)), Ok(ns));
        }
    }
}
