//! Each headline's sensitivity table as a chart: one bar per row ("choice = setting", the
//! default set-up first and shaded) in one panel per number of the rows, blue where the
//! seed's conclusion holds and red where it does not, the headline as title and the
//! verdict under it. Written as `<experiment>-sensitivity-<n>.svg`, n counting the
//! experiment's headlines from 1.

use super::review::{Headline, Review};
use super::write_plot;
use crate::failure::Failure;
use crate::plot::bars::{BarChart, Category, Cell, Panel};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Bar colour of a row where the seed's conclusion holds.
pub const HOLDS: &str = "#1f77b4";
/// Bar colour of a row where it does not.
pub const FAILS: &str = "#d62728";

/// Write one chart per headline of `review` into `dir`.
pub fn write_all(
    experiment: &str,
    review: &Review,
    dir: &Path,
    plots: &mut Vec<PathBuf>,
) -> Result<(), Failure> {
    for (n, h) in review.headlines.iter().enumerate() {
        let file = format!("{experiment}-sensitivity-{}.svg", n + 1);
        write_plot(dir, &file, &chart(h).to_svg(), plots)?;
    }
    remove_stale(experiment, review.headlines.len(), dir)
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

/// A headline's chart.
pub fn chart(h: &Headline) -> BarChart {
    let values: Vec<Vec<(String, &Value)>> =
        h.sensitivity.iter().map(|r| flat(&r.values)).collect();
    // Every key any row has, in the order the rows first name them.
    let mut keys: Vec<&str> = Vec::new();
    for (k, _) in values.iter().flatten() {
        if !keys.contains(&k.as_str()) {
            keys.push(k);
        }
    }
    let panels = keys
        .iter()
        .map(|&key| Panel {
            name: key.into(),
            cells: values
                .iter()
                .map(|row| {
                    row.iter()
                        .find(|(k, _)| k == key)
                        .map_or(Cell::Missing, |(_, v)| cell(v))
                })
                .collect(),
        })
        .collect();
    BarChart {
        title: h.headline.clone(),
        notes: vec![
            format!("verdict: {}", h.verdict),
            format!("paper: {}", h.paper),
        ],
        rows: h
            .sensitivity
            .iter()
            .map(|r| format!("{} = {}", r.choice, r.setting))
            .collect(),
        category: h
            .sensitivity
            .iter()
            .map(|r| usize::from(!r.holds))
            .collect(),
        categories: vec![
            Category {
                label: "the seed's conclusion holds".into(),
                color: HOLDS,
            },
            Category {
                label: "it does not hold".into(),
                color: FAILS,
            },
        ],
        marked: (!h.sensitivity.is_empty()).then(|| {
            (
                0,
                "default set-up (each other row changes one choice)".into(),
            )
        }),
        panels,
    }
}

/// A row's values as (key, value) pairs: the object's entries, or the whole value under
/// `value` when it is not an object.
fn flat(v: &Value) -> Vec<(String, &Value)> {
    match v {
        Value::Object(m) => m.iter().map(|(k, x)| (k.clone(), x)).collect(),
        Value::Null => Vec::new(),
        other => vec![("value".into(), other)],
    }
}

fn cell(v: &Value) -> Cell {
    match v {
        Value::Number(n) => n.as_f64().map_or(Cell::Missing, Cell::Num),
        Value::Null => Cell::Missing,
        Value::String(s) => Cell::Text(s.clone()),
        other => Cell::Text(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::reproduce::review::row;
    use serde_json::json;

    #[test]
    fn a_panel_per_key_and_a_category_per_row() {
        let mut rv = Review::default();
        rv.headline(
            "LLF ≫ EDF",
            "34 / 207",
            vec![
                row(
                    "default",
                    "as the cases",
                    json!({"edf": 60, "order": "t1 t2"}),
                    true,
                ),
                row(
                    "placement",
                    "global",
                    json!({"edf": -1.5, "onset": null}),
                    false,
                ),
                row("tick", "HZ 100", json!(7), true),
            ],
            "",
        );
        let c = chart(&rv.headlines[0]);
        let names: Vec<&str> = c.panels.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["edf", "order", "onset", "value"]);
        assert_eq!(
            c.panels[0].cells,
            [Cell::Num(60.0), Cell::Num(-1.5), Cell::Missing]
        );
        assert_eq!(c.panels[2].cells[1], Cell::Missing);
        assert_eq!(c.category, [0, 1, 0]);
        assert_eq!(c.rows[1], "placement = global");
        assert!(c.notes[0].starts_with("verdict: DEPENDS ON A CHOICE"));
    }

    #[test]
    fn charts_of_headlines_no_longer_reviewed_are_removed_and_nothing_else() {
        // remove_stale, not write_all: the staged outputs are global to the process.
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
        remove_stale("x", 1, &dir).unwrap();
        let left: Vec<bool> = files.iter().map(|f| dir.join(f).exists()).collect();
        // The kept chart stays; past a gap, and another experiment's, are not ours to judge.
        assert_eq!(left, [true, false, false, true, true]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
