//! Each headline's sensitivity table as a chart: one bar per row ("choice = setting", the
//! default set-up first and shaded) in one panel per number of the rows, blue where the
//! seed's conclusion holds and red where it does not, the headline as title and the
//! verdict under it. Written as `<experiment>-sensitivity-<n>.svg`, n counting the
//! experiment's headlines from 1.

use super::review::{Headline, Review};
use crate::figure::{BarChart, Category, Cell, Figure, Panel};
use serde_json::Value;

/// Bar colour of a row where the seed's conclusion holds.
pub const HOLDS: &str = "#1f77b4";
/// Bar colour of a row where it does not.
pub const FAILS: &str = "#d62728";

/// One chart per headline of `review`, numbered from 1 in the headlines' order.
pub fn figures(experiment: &str, review: &Review) -> Vec<Figure> {
    review
        .headlines
        .iter()
        .enumerate()
        .map(|(n, h)| Figure::new(format!("{experiment}-sensitivity-{}.svg", n + 1), chart(h)))
        .collect()
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
    use crate::review::row;
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
}
