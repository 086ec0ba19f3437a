//! Minimal SVG line charts for `reproduce` (x/y axes with ticks, one polyline and marker
//! set per series, a legend). Hand-written because the plotting crates need font files
//! to lay out text, which a fresh machine does not have; SVG text is laid out by the
//! viewer instead.

pub mod bars;

use std::fmt::Write;

pub use schedlab_experiments::figure::Chart;
use schedlab_experiments::figure::{Figure, Plot};

/// What the command line draws, as a standalone SVG document (the same value gives the
/// same bytes).
pub trait ToSvg {
    /// The SVG document.
    fn to_svg(&self) -> String;
}

impl ToSvg for Chart {
    fn to_svg(&self) -> String {
        lines_svg(self)
    }
}

impl ToSvg for bars::BarChart {
    fn to_svg(&self) -> String {
        bars::to_svg(self)
    }
}

impl ToSvg for Plot {
    fn to_svg(&self) -> String {
        match self {
            Plot::Lines(c) => c.to_svg(),
            Plot::Bars(c) => c.to_svg(),
        }
    }
}

impl ToSvg for Figure {
    fn to_svg(&self) -> String {
        self.plot.to_svg()
    }
}

const COLORS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
];
const W: f64 = 720.0;
const H: f64 = 440.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 160.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 55.0;

/// "Nice" tick step for a range (1, 2 or 5 × 10^k).
fn tick_step(span: f64) -> f64 {
    let raw = span / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let nice = if norm < 1.5 {
        1.0
    } else if norm < 3.5 {
        2.0
    } else if norm < 7.5 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// `s` as XML text or attribute content: markup characters escaped, and the control
/// characters XML does not allow dropped.
fn esc(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
        .collect::<String>()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A line chart as a standalone SVG document.
fn lines_svg(chart: &Chart) -> String {
    {
        let pts = chart.series.iter().flat_map(|s| s.points.iter());
        let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
        for &(x, y) in pts {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
        if x0 > x1 {
            (x0, x1) = (0.0, 1.0);
        }
        if x1 == x0 {
            x1 = x0 + 1.0;
        }
        let ystep = tick_step(if y1 > 0.0 { y1 } else { 1.0 });
        let y1 = (y1 / ystep).ceil().max(1.0) * ystep;
        let xstep = tick_step(x1 - x0);
        let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
        let sx = |x: f64| LEFT + (x - x0) / (x1 - x0) * pw;
        let sy = |y: f64| TOP + ph - y / y1 * ph;
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
            LEFT + pw / 2.0,
            esc(&chart.title)
        );
        // Grid and ticks.
        let mut y = 0.0;
        while y <= y1 + ystep * 1e-9 {
            let py = sy(y);
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                LEFT + pw,
                LEFT - 6.0,
                py + 4.0,
                trim(y)
            );
            y += ystep;
        }
        let mut x = (x0 / xstep).ceil() * xstep;
        while x <= x1 + xstep * 1e-9 {
            let px = sx(x);
            let _ = writeln!(
                s,
                r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{:.1}" stroke="#eee"/><text x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                TOP + ph,
                TOP + ph + 18.0,
                trim(x)
            );
            x += xstep;
        }
        let _ = writeln!(
            s,
            r##"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>"##
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + pw / 2.0,
            H - 12.0,
            esc(&chart.x_label)
        );
        let _ = writeln!(
            s,
            r#"<text x="16" y="{:.1}" text-anchor="middle" transform="rotate(-90 16 {:.1})">{}</text>"#,
            TOP + ph / 2.0,
            TOP + ph / 2.0,
            esc(&chart.y_label)
        );
        for (i, series) in chart.series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let path: Vec<String> = series
                .points
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"/>"#,
                path.join(" ")
            );
            for &(x, y) in &series.points {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"><title>{}: {} → {}</title></circle>"#,
                    sx(x),
                    sy(y),
                    esc(&series.label),
                    trim(x),
                    trim(y)
                );
            }
            let ly = TOP + 10.0 + i as f64 * 20.0;
            let lx = LEFT + pw + 15.0;
            let _ = writeln!(
                s,
                r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
                lx + 22.0,
                lx + 28.0,
                ly + 4.0,
                esc(&series.label)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

fn trim(v: f64) -> String {
    let t = format!("{v:.2}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The tests' XML well-formedness check, shared with the end-to-end tests.
#[cfg(test)]
#[path = "../tests/common/xml.rs"]
mod xml_check;

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_experiments::figure::Series;

    #[test]
    fn svg_has_one_polyline_per_series_and_a_legend() {
        let c = Chart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![
                Series {
                    label: "edf".into(),
                    points: vec![(10.0, 30.0), (20.0, 40.0)],
                },
                Series {
                    label: "llf <x>".into(),
                    points: vec![(10.0, 300.0), (20.0, 120.0)],
                },
            ],
        };
        let svg = c.to_svg();
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains(">edf</text>") && svg.contains("llf &lt;x&gt;"));
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(tick_step(300.0), 50.0);
        assert_eq!(tick_step(70.0), 10.0);
        super::xml_check::well_formed(&svg).unwrap();
    }

    #[test]
    fn the_xml_check_rejects_what_a_parser_would() {
        use super::xml_check::well_formed;
        assert!(well_formed(r#"<svg a="1"><g><text>x &amp; y</text></g><rect/></svg>"#).is_ok());
        for bad in [
            "<svg><g></svg>",
            "<svg>a & b</svg>",
            "<svg><text>a < b</text></svg>",
            r#"<svg a=1/>"#,
            r#"<svg a="1" a="2"/>"#,
            "<svg/><svg/>",
            "<svg>\u{1}</svg>",
            "<svg>",
        ] {
            assert!(well_formed(bad).is_err(), "{bad}");
        }
    }
}
