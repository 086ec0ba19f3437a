//! Small multiples of horizontal bars: one row per item (a label and a category colour),
//! one panel per measure with its own scale, the rows aligned across panels so that a
//! row reads left to right. `reproduce` draws each headline's sensitivity table with it.
//!
//! Text widths are estimated from character counts (the viewer lays the text out), so
//! long labels are clipped with an ellipsis and keep their full text in a tooltip.

use super::esc;
use std::fmt::Write;

pub use schedlab_experiments::figure::{BarChart, Cell, Panel};

const PAD: f64 = 14.0;
/// Estimated widths of one character at 12 px, in bold, and at the 15 px bold title.
const CHAR: f64 = 6.6;
const BOLD_CHAR: f64 = 7.1;
const TITLE_CHAR: f64 = 9.2;
const ROW_H: f64 = 20.0;
const BAR_H: f64 = 12.0;
const LINE_H: f64 = 16.0;
const SWATCH: f64 = 10.0;
const NUM_W: f64 = 180.0;
/// Room beside a bar for its value (about 9 characters at 11 px).
const VALUE_ROOM: f64 = 58.0;
const GAP: f64 = 16.0;
const MAX_LABEL_W: f64 = 480.0;
const MAX_TEXT_W: f64 = 300.0;
const MAX_PANELS_PER_BAND: usize = 4;
const MIN_W: f64 = 640.0;
const GREY: &str = "#777";

/// Widths worked out once per chart.
struct Layout {
    label_w: f64,
    /// Where the first panel starts.
    plot_x: f64,
    /// The document's width.
    w: f64,
    panel_w: Vec<f64>,
}

/// A chart being rendered (the chart's fields read through it).
struct Svg<'a>(&'a BarChart);

impl std::ops::Deref for Svg<'_> {
    type Target = BarChart;
    fn deref(&self) -> &BarChart {
        self.0
    }
}

/// `chart` as a standalone SVG document (the same chart gives the same bytes).
pub fn to_svg(chart: &BarChart) -> String {
    Svg(chart).document()
}

impl Svg<'_> {
    fn document(&self) -> String {
        // The marked row is bold: wider per character.
        let label_w = (0..self.rows.len())
            .map(|i| (self.rows[i].chars().count() + 2) as f64 * self.label_char(i) + 8.0)
            .fold(120.0, f64::max)
            .min(MAX_LABEL_W);
        let panel_w: Vec<f64> = self.panels.iter().map(panel_width).collect();
        let bands = bands(self.panels.len());
        let band_w = |b: &std::ops::Range<usize>| -> f64 {
            panel_w[b.clone()].iter().map(|w| w + GAP).sum()
        };
        let plot_x = PAD + label_w + SWATCH + GAP;
        let w = (plot_x + bands.iter().map(band_w).fold(0.0, f64::max) + PAD).max(MIN_W);
        let layout = Layout {
            label_w,
            plot_x,
            w,
            panel_w,
        };

        let mut body = String::new();
        let mut y = PAD;
        for line in wrap(&self.title, ((w - 2.0 * PAD) / TITLE_CHAR) as usize) {
            y += 20.0;
            let _ = writeln!(
                body,
                r#"<text x="{PAD}" y="{y}" font-size="15" font-weight="bold">{}</text>"#,
                esc(&line)
            );
        }
        y += 4.0;
        let note_chars = ((w - 2.0 * PAD) / CHAR) as usize;
        for note in &self.notes {
            for line in wrap(note, note_chars) {
                y += LINE_H;
                let _ = writeln!(body, r#"<text x="{PAD}" y="{y}">{}</text>"#, esc(&line));
            }
        }
        y = self.legend(&mut body, y + 8.0, w);
        if self.rows.is_empty() {
            y += LINE_H;
            let _ = writeln!(
                body,
                r#"<text x="{PAD}" y="{y}" fill="{GREY}">(no rows)</text>"#
            );
        }
        for band in &bands {
            y = self.band(&mut body, band.clone(), &layout, y + 10.0);
        }
        if bands.is_empty() && !self.rows.is_empty() {
            y = self.band(&mut body, 0..0, &layout, y + 10.0);
        }
        let h = y + PAD;
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(s, "<title>{}</title>", esc(&self.title));
        let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
        s.push_str(&body);
        s.push_str("</svg>\n");
        s
    }

    /// The legend on one line (wrapping when it does not fit); returns the y below it.
    fn legend(&self, s: &mut String, y: f64, w: f64) -> f64 {
        let mut items: Vec<(String, String)> = self
            .categories
            .iter()
            .map(|c| (format!(r#"fill="{}""#, c.color), c.label.clone()))
            .collect();
        if let Some((_, what)) = &self.marked {
            items.push((r##"fill="#e8e8e8" stroke="#999""##.into(), what.clone()));
        }
        let (mut x, mut y) = (PAD, y + LINE_H);
        for (fill, label) in items {
            let item_w = SWATCH + 6.0 + label.chars().count() as f64 * CHAR + 18.0;
            if x > PAD && x + item_w > w - PAD {
                x = PAD;
                y += LINE_H;
            }
            let _ = writeln!(
                s,
                r#"<rect class="legend" x="{x}" y="{}" width="{SWATCH}" height="{SWATCH}" {fill}/><text x="{}" y="{y}">{}</text>"#,
                y - SWATCH + 1.0,
                x + SWATCH + 6.0,
                esc(&label)
            );
            x += item_w;
        }
        y
    }

    /// One band: the row labels, then `range`'s panels side by side; returns the y below.
    fn band(&self, s: &mut String, range: std::ops::Range<usize>, l: &Layout, top: f64) -> f64 {
        let (label_w, w) = (l.label_w, l.w);
        let rows_top = top + LINE_H + 6.0;
        let row_y = |i: usize| rows_top + i as f64 * ROW_H;
        let bottom = row_y(self.rows.len());
        for (i, label) in self.rows.iter().enumerate() {
            let y = row_y(i);
            let marked = self.is_marked(i);
            let label_chars = ((label_w - 8.0) / self.label_char(i)) as usize - 2;
            if marked {
                let _ = writeln!(
                    s,
                    r##"<rect x="{}" y="{y}" width="{}" height="{ROW_H}" fill="#e8e8e8"/>"##,
                    PAD / 2.0,
                    w - PAD
                );
            }
            let color = self.row_color(i);
            let _ = writeln!(
                s,
                r#"<text x="{PAD}" y="{}"{}>{}</text><rect class="swatch" data-row="{i}" x="{}" y="{}" width="{SWATCH}" height="{SWATCH}" fill="{color}"/>"#,
                y + 14.0,
                if marked { r#" font-weight="bold""# } else { "" },
                clipped(label, label_chars),
                PAD + label_w,
                y + (ROW_H - SWATCH) / 2.0
            );
        }
        let mut x = l.plot_x;
        for p in range {
            let pw = l.panel_w[p];
            let _ = writeln!(s, r#"<g class="panel">"#);
            let _ = writeln!(
                s,
                r#"<text x="{x}" y="{}" font-weight="bold">{}</text>"#,
                top + LINE_H,
                clipped(&self.panels[p].name, (pw / CHAR) as usize)
            );
            if is_numeric(&self.panels[p]) {
                self.numeric_panel(s, &self.panels[p], x, pw, rows_top, bottom);
            } else {
                self.text_panel(s, &self.panels[p], x, pw, rows_top);
            }
            s.push_str("</g>\n");
            x += pw + GAP;
        }
        bottom + if self.panels.is_empty() { 0.0 } else { LINE_H }
    }

    fn is_marked(&self, row: usize) -> bool {
        self.marked.as_ref().is_some_and(|(m, _)| *m == row)
    }

    /// Estimated width of a character of a row's label.
    fn label_char(&self, row: usize) -> f64 {
        if self.is_marked(row) {
            BOLD_CHAR
        } else {
            CHAR
        }
    }

    fn row_color(&self, row: usize) -> &'static str {
        self.category
            .get(row)
            .and_then(|&c| self.categories.get(c))
            .map_or(GREY, |c| c.color)
    }

    fn numeric_panel(&self, s: &mut String, p: &Panel, x0: f64, pw: f64, top: f64, bottom: f64) {
        let nums = p.cells.iter().filter_map(|c| match c {
            Cell::Num(v) if v.is_finite() => Some(*v),
            _ => None,
        });
        let (lo, hi) = nums.fold((0.0f64, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
        let a = x0 + if lo < 0.0 { VALUE_ROOM } else { 2.0 };
        let b = x0 + pw - if hi > 0.0 { VALUE_ROOM } else { 2.0 };
        // Scaled in two steps so that values near f64::MAX do not overflow `hi - lo`.
        let span = if hi > lo { hi / 2.0 - lo / 2.0 } else { 0.5 };
        let sx = |v: f64| a + (v / 2.0 - lo / 2.0) / span * (b - a);
        let zero = sx(0.0);
        let _ = writeln!(
            s,
            r##"<line x1="{zero:.1}" y1="{top}" x2="{zero:.1}" y2="{bottom}" stroke="#444"/><text x="{zero:.1}" y="{}" text-anchor="middle" fill="{GREY}" font-size="10">0</text>"##,
            bottom + 12.0
        );
        if let Some(Cell::Num(v)) = self.marked.as_ref().and_then(|(m, _)| p.cells.get(*m)) {
            if v.is_finite() {
                let mx = sx(*v);
                let _ = writeln!(
                    s,
                    r##"<line x1="{mx:.1}" y1="{top}" x2="{mx:.1}" y2="{bottom}" stroke="#999" stroke-dasharray="3,3"/>"##
                );
            }
        }
        for i in 0..self.rows.len() {
            let y = top + i as f64 * ROW_H;
            let ty = y + 14.0;
            match p.cells.get(i).unwrap_or(&Cell::Missing) {
                Cell::Num(v) if v.is_finite() => {
                    let end = sx(*v);
                    // A zero still gets a sliver, so that its colour shows.
                    let (bx, bw) = (end.min(zero), (end - zero).abs().max(1.5));
                    let (tx, anchor) = if *v < 0.0 {
                        (bx - 3.0, "end")
                    } else {
                        (bx + bw + 3.0, "start")
                    };
                    let _ = writeln!(
                        s,
                        r#"<rect class="bar" data-row="{i}" x="{bx:.1}" y="{}" width="{bw:.1}" height="{BAR_H}" fill="{}"><title>{}: {}</title></rect><text x="{tx:.1}" y="{ty}" text-anchor="{anchor}" font-size="11">{}</text>"#,
                        y + (ROW_H - BAR_H) / 2.0,
                        self.row_color(i),
                        esc(&self.rows[i]),
                        number(*v),
                        number(*v)
                    );
                }
                other => {
                    let t = match other {
                        Cell::Text(t) => t.clone(),
                        _ => "—".into(),
                    };
                    let _ = writeln!(
                        s,
                        r#"<text class="value" x="{:.1}" y="{ty}" fill="{GREY}" font-style="italic" font-size="11">{}</text>"#,
                        zero + 4.0,
                        clipped(&t, ((x0 + pw - zero) / CHAR) as usize)
                    );
                }
            }
        }
    }

    fn text_panel(&self, s: &mut String, p: &Panel, x0: f64, pw: f64, top: f64) {
        let chars = (pw / CHAR) as usize;
        for i in 0..self.rows.len() {
            let t = match p.cells.get(i).unwrap_or(&Cell::Missing) {
                Cell::Text(t) => t.clone(),
                _ => "—".into(),
            };
            let _ = writeln!(
                s,
                r#"<text class="value" x="{x0}" y="{}">{}</text>"#,
                top + i as f64 * ROW_H + 14.0,
                clipped(&t, chars)
            );
        }
    }
}

/// A panel with at least one finite number gets bars; others are a column of text.
fn is_numeric(p: &Panel) -> bool {
    p.cells
        .iter()
        .any(|c| matches!(c, Cell::Num(v) if v.is_finite()))
}

fn panel_width(p: &Panel) -> f64 {
    if is_numeric(p) {
        return NUM_W;
    }
    let texts = p.cells.iter().map(|c| match c {
        Cell::Text(t) => t.chars().count(),
        _ => 1,
    });
    width_of(texts.chain([p.name.chars().count()]), 100.0).min(MAX_TEXT_W)
}

/// The width `chars` need at 12 px, at least `min`.
fn width_of(chars: impl Iterator<Item = usize>, min: f64) -> f64 {
    (chars.max().unwrap_or(0) as f64 * CHAR + 8.0).max(min)
}

/// Panels split into bands of at most [`MAX_PANELS_PER_BAND`], as even as can be.
fn bands(n: usize) -> Vec<std::ops::Range<usize>> {
    if n == 0 {
        return Vec::new();
    }
    let count = n.div_ceil(MAX_PANELS_PER_BAND);
    let per = n.div_ceil(count);
    (0..n)
        .step_by(per)
        .map(|start| start..(start + per).min(n))
        .collect()
}

/// `text` escaped and cut to `max` characters (with an ellipsis and the full text as a
/// tooltip when cut).
fn clipped(text: &str, max: usize) -> String {
    let max = max.max(2);
    if text.chars().count() <= max {
        return esc(text);
    }
    let cut: String = text.chars().take(max - 1).collect();
    format!("<tspan>{}…<title>{}</title></tspan>", esc(&cut), esc(text))
}

/// `text` in lines of at most `width` characters, at spaces where it can (a longer word
/// is cut).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(10);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        while word.len() > width {
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            lines.push(word.drain(..width).collect());
        }
        let word: String = word.into_iter().collect();
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// A value as printed beside its bar: up to four decimals below 1, two below a million,
/// then in scientific notation (u64-scale counters stay short).
fn number(v: f64) -> String {
    let trim = |t: &str| t.trim_end_matches('0').trim_end_matches('.').to_string();
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if !(1e-4..1e6).contains(&a) {
        let s = format!("{v:.3e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        format!("{}e{exp}", trim(mantissa))
    } else if a < 1.0 {
        trim(&format!("{v:.4}"))
    } else {
        trim(&format!("{v:.2}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::xml_check::well_formed;
    use crate::plot::ToSvg;
    use schedlab_experiments::figure::Category;

    fn chart(rows: usize, panels: Vec<Panel>) -> BarChart {
        BarChart {
            title: "a <headline> & \"quotes\"".into(),
            notes: vec!["verdict: DEPENDS ON A CHOICE".into(), "x".repeat(500)],
            rows: (0..rows)
                .map(|i| format!("choice {i} = setting {i}"))
                .collect(),
            category: (0..rows).map(|i| i % 2).collect(),
            categories: vec![
                Category {
                    label: "holds".into(),
                    color: "#1f77b4",
                },
                Category {
                    label: "fails".into(),
                    color: "#d62728",
                },
            ],
            marked: Some((0, "default".into())),
            panels,
        }
    }

    fn bars(svg: &str) -> usize {
        svg.matches(r#"class="bar""#).count()
    }

    #[test]
    fn odd_values_render_without_panicking_and_the_document_is_well_formed() {
        let cells = vec![
            Cell::Num(0.0),
            Cell::Num(-3.5),
            Cell::Num(u64::MAX as f64),
            Cell::Num(f64::MAX),
            Cell::Num(-f64::MAX),
            Cell::Missing,
            Cell::Text("<none> & \u{1}".into()),
            Cell::Num(f64::NAN),
        ];
        let c = chart(
            9,
            vec![
                Panel {
                    name: "odd".into(),
                    cells,
                },
                Panel {
                    name: "text & more".into(),
                    cells: vec![Cell::Text("identical".into())],
                },
            ],
        );
        let svg = c.to_svg();
        well_formed(&svg).unwrap();
        // Five finite numbers: five bars; the rest are printed as text.
        assert_eq!(bars(&svg), 5);
        assert!(svg.contains("1.845e19"), "{svg}");
        assert!(svg.contains("&lt;none&gt; &amp; "));
        assert!(!svg.contains('\u{1}'));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        assert_eq!(svg, c.to_svg(), "deterministic");
    }

    #[test]
    fn one_row_many_rows_no_rows_and_many_panels() {
        let num = |n: usize| Panel {
            name: "v".into(),
            cells: (0..n).map(|i| Cell::Num(i as f64 - 3.0)).collect(),
        };
        let one = chart(1, vec![num(1)]).to_svg();
        well_formed(&one).unwrap();
        assert_eq!(bars(&one), 1);
        let many = chart(40, (0..9).map(|_| num(40)).collect()).to_svg();
        well_formed(&many).unwrap();
        assert_eq!(bars(&many), 40 * 9);
        // Nine panels in three bands of three: the labels are repeated per band.
        assert_eq!(many.matches(">choice 39 = setting 39<").count(), 3);
        let none = chart(0, vec![]).to_svg();
        well_formed(&none).unwrap();
        assert!(none.contains("(no rows)"));
    }

    #[test]
    fn bars_take_their_rows_colour_and_long_labels_are_clipped() {
        let mut c = chart(
            2,
            vec![Panel {
                name: "v".into(),
                cells: vec![Cell::Num(1.0), Cell::Num(2.0)],
            }],
        );
        c.rows[1] = "y".repeat(200);
        let svg = c.to_svg();
        well_formed(&svg).unwrap();
        assert!(
            svg.contains(r##"data-row="0" x="##) && svg.contains(r##"fill="#1f77b4"><title>"##)
        );
        assert!(svg.contains(r##"fill="#d62728"><title>"##));
        assert!(svg.contains("…<title>"));
    }

    #[test]
    fn numbers_and_wrapping() {
        assert_eq!(number(0.9995), "0.9995");
        assert_eq!(number(1740.55), "1740.55");
        assert_eq!(number(-4.27), "-4.27");
        assert_eq!(number(2.0), "2");
        assert_eq!(number(1e-9), "1e-9");
        assert_eq!(wrap("aaaa bbbb cccc", 10), vec!["aaaa bbbb", "cccc"]);
        assert_eq!(wrap(&"z".repeat(25), 10).len(), 3);
        assert_eq!(wrap("", 10), vec![""]);
    }
}
