//! A small terminal Gantt chart of a schedule window (`simulate --gantt 0ms..200ms`):
//! one row per CPU, one character per time bucket (the task that ran longest in the
//! bucket, `.` when the CPU was mostly idle), a row marking missed deadlines, and a
//! legend of task letters.
//!
//! ```text
//! Gantt 0..200ms: 100 columns of 2ms (edf, 2 CPUs)
//!       0                   40ms                80ms                120ms ...
//!       |                   |                   |                   |
//! cpu0  AAAAAAAAAAAAAAAAAAAAAAAAAAAAAACCC.......AAAAAA...
//! cpu1  BBBBBBBBBBBBBBBBBBBB...........................
//! miss                                   C
//! A big1  B big2  C small1  . idle
//! miss row: the letter of the task whose deadline passed there (* several tasks)
//! ```

use crate::schedule::Schedule;
use schedlab_model::{format_ns, parse_duration, Ns};
use std::fmt::Write;

/// Letters given to tasks, in workload order; tasks past the last letter share `#`.
const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// The letter of task `i`.
pub fn letter(i: usize) -> char {
    LETTERS.chars().nth(i).unwrap_or('#')
}

/// A time window `[from, to)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Start (ns).
    pub from: Ns,
    /// End (ns); `None` = the end of the schedule.
    pub to: Option<Ns>,
}

/// Parse `FROM..TO` (durations with units; either side may be empty: `..200ms` starts at
/// 0, `1s..` runs to the end).
pub fn parse_window(text: &str) -> Result<Window, String> {
    let Some((a, b)) = text.split_once("..") else {
        return Err(format!(
            "`{text}` is not a time window (write FROM..TO, e.g. 0ms..200ms)"
        ));
    };
    let from = if a.trim().is_empty() {
        0
    } else {
        parse_duration(a)?
    };
    let to = if b.trim().is_empty() {
        None
    } else {
        Some(parse_duration(b)?)
    };
    if let Some(to) = to {
        if to <= from {
            return Err(format!(
                "window `{text}` is empty: its end must come after its start"
            ));
        }
    }
    Ok(Window { from, to })
}

impl Window {
    /// The window clipped to a schedule of length `duration`, or an error when it starts
    /// at or after the end.
    pub fn clip(self, duration: Ns) -> Result<(Ns, Ns), String> {
        if self.from >= duration {
            return Err(format!(
                "the window starts at {}, but the schedule ends at {}",
                format_ns(self.from),
                format_ns(duration)
            ));
        }
        Ok((self.from, self.to.unwrap_or(duration).min(duration)))
    }
}

/// Bucket boundaries: `width + 1` instants from `from` to `to`.
fn bounds(from: Ns, to: Ns, width: usize) -> Vec<Ns> {
    (0..=width)
        .map(|k| from + ((to - from) as u128 * k as u128 / width as u128) as Ns)
        .collect()
}

/// Per CPU and bucket: the task that ran longest in the bucket (None = mostly idle).
pub fn occupancy(s: &Schedule, from: Ns, to: Ns, width: usize) -> Vec<Vec<Option<usize>>> {
    let b = bounds(from, to, width);
    // time[cpu][bucket] -> (task, ns) pairs; few tasks per bucket, so a small vec.
    let mut time: Vec<Vec<Vec<(usize, Ns)>>> = vec![vec![Vec::new(); width]; s.cpus];
    for g in &s.segments {
        if g.end <= from || g.start >= to {
            continue;
        }
        let (a, z) = (g.start.max(from), g.end.min(to));
        let mut k = b.partition_point(|&x| x <= a).saturating_sub(1);
        while k < width && b[k] < z {
            let overlap = z.min(b[k + 1]).saturating_sub(a.max(b[k]));
            if overlap > 0 {
                let cell = &mut time[g.cpu][k];
                match cell.iter_mut().find(|(t, _)| *t == g.task) {
                    Some(e) => e.1 += overlap,
                    None => cell.push((g.task, overlap)),
                }
            }
            k += 1;
        }
    }
    time.into_iter()
        .map(|row| {
            row.into_iter()
                .enumerate()
                .map(|(k, cell)| {
                    let len = b[k + 1] - b[k];
                    let busy: Ns = cell.iter().map(|e| e.1).sum();
                    let best = cell
                        .iter()
                        .max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0)))
                        .copied();
                    match best {
                        Some((t, ns)) if ns >= len - busy.min(len) && ns > 0 => Some(t),
                        _ => None,
                    }
                })
                .collect()
        })
        .collect()
}

/// Render the chart of `[from, to)` with `width` columns.
pub fn render(s: &Schedule, from: Ns, to: Ns, width: usize) -> String {
    let width = width.max(10);
    let b = bounds(from, to, width);
    let occ = occupancy(s, from, to, width);
    let mut out = String::new();
    let col = (to - from) as f64 / width as f64;
    let _ = writeln!(
        out,
        "Gantt {}..{}: {width} columns of {} ({}, {} CPU{})",
        format_ns(from),
        format_ns(to),
        human(col),
        s.policy,
        s.cpus,
        if s.cpus == 1 { "" } else { "s" }
    );
    // Axis: a label every 20 columns.
    let label_w = 6;
    let mut labels = String::new();
    let mut marks = String::new();
    let mut k = 0;
    while k < width {
        let text = human(b[k] as f64);
        let room = 20.min(width - k);
        if text.len() < room || k == 0 {
            let _ = write!(labels, "{text:<room$}");
            let _ = write!(marks, "{:<room$}", "|");
        }
        k += 20;
    }
    let _ = writeln!(out, "{:label_w$}{}", "", labels.trim_end());
    let _ = writeln!(out, "{:label_w$}{}", "", marks.trim_end());
    let mut used = vec![false; s.tasks.len()];
    for (cpu, row) in occ.iter().enumerate() {
        let line: String = row
            .iter()
            .map(|c| match c {
                Some(t) => {
                    used[*t] = true;
                    letter(*t)
                }
                None => '.',
            })
            .collect();
        let _ = writeln!(out, "{:<label_w$}{line}", format!("cpu{cpu}"));
    }
    let mut miss = vec![None::<char>; width];
    for j in s.jobs.iter().filter(|j| j.missed) {
        if j.deadline < from || j.deadline >= to {
            continue;
        }
        let k = b.partition_point(|&x| x <= j.deadline).saturating_sub(1);
        if k < width {
            used[j.task] = true;
            miss[k] = Some(match miss[k] {
                None => letter(j.task),
                Some(c) if c == letter(j.task) => c,
                Some(_) => '*',
            });
        }
    }
    if miss.iter().any(Option::is_some) {
        let line: String = miss.iter().map(|c| c.unwrap_or(' ')).collect();
        let _ = writeln!(out, "{:<label_w$}{}", "miss", line.trim_end());
    }
    let mut legend: Vec<String> = (0..s.tasks.len())
        .filter(|&i| used[i])
        .map(|i| format!("{} {}", letter(i), s.tasks[i].name))
        .collect();
    if s.tasks.len() > LETTERS.len() {
        legend.push("# later tasks".into());
    }
    legend.push(". idle".into());
    let mut line = String::new();
    for item in legend {
        if !line.is_empty() && line.len() + 2 + item.len() > label_w + width {
            let _ = writeln!(out, "{line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push_str("  ");
        }
        line.push_str(&item);
    }
    let _ = writeln!(out, "{line}");
    if miss.iter().any(Option::is_some) {
        let _ = writeln!(
            out,
            "miss row: the letter of the task whose deadline passed there (* several tasks)"
        );
    }
    out
}

/// A duration for a person: `2ms`, `1.5ms`, `250us`.
fn human(ns: f64) -> String {
    if ns == 0.0 {
        return "0".into();
    }
    let (v, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "us")
    } else {
        (ns, "ns")
    };
    let t = format!("{v:.2}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    format!("{t}{unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_parse_with_units_and_open_ends() {
        assert_eq!(
            parse_window("0ms..200ms"),
            Ok(Window {
                from: 0,
                to: Some(200_000_000)
            })
        );
        assert_eq!(
            parse_window("..1s").unwrap(),
            Window {
                from: 0,
                to: Some(1_000_000_000)
            }
        );
        assert_eq!(parse_window("1s..").unwrap().to, None);
        assert!(parse_window("200ms").unwrap_err().contains("FROM..TO"));
        assert!(parse_window("2ms..1ms").unwrap_err().contains("empty"));
        assert!(parse_window("0..5parsecs")
            .unwrap_err()
            .contains("unknown unit"));
        assert!(Window { from: 5, to: None }
            .clip(5)
            .unwrap_err()
            .contains("ends at"));
    }

    #[test]
    fn human_durations() {
        assert_eq!(human(2e6), "2ms");
        assert_eq!(human(1.5e6), "1.5ms");
        assert_eq!(human(250e3), "250us");
        assert_eq!(human(0.0), "0");
        assert_eq!(human(7.0), "7ns");
    }
}
