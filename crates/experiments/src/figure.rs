//! Figures as data: what an experiment wants drawn (a line chart, or bars in small
//! multiples for a headline's sensitivity), with the file name it is written under. The
//! command line renders them as SVG; the values here fix every byte of that rendering.

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// Points (x, y).
    pub points: Vec<(f64, f64)>,
}

/// A line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Title above the plot.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
}

/// One value of a row in a panel of a [`BarChart`].
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A number: drawn as a bar from zero.
    Num(f64),
    /// Anything else: printed as text.
    Text(String),
    /// No value: printed as a dash.
    Missing,
}

/// One measure of a [`BarChart`]: a value per row.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Shown above the panel.
    pub name: String,
    /// One per row, in row order (short: the rest are missing).
    pub cells: Vec<Cell>,
}

/// A row category of a [`BarChart`]: its colour and its legend text.
#[derive(Debug, Clone, PartialEq)]
pub struct Category {
    /// Legend text.
    pub label: String,
    /// Fill colour (`#rrggbb`).
    pub color: &'static str,
}

/// Horizontal bars in small multiples: one row per item (a label and a category colour),
/// one panel per measure with its own scale, the rows aligned across panels.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// Title (wrapped); also the document's `<title>`.
    pub title: String,
    /// Lines under the title (each wrapped).
    pub notes: Vec<String>,
    /// Row labels, top to bottom.
    pub rows: Vec<String>,
    /// Each row's index into `categories`.
    pub category: Vec<usize>,
    /// Legend entries, by index.
    pub categories: Vec<Category>,
    /// A row shaded as the reference (with a dashed line at its values), and what the
    /// legend calls it.
    pub marked: Option<(usize, String)>,
    /// The measures.
    pub panels: Vec<Panel>,
}

/// What a figure draws.
#[derive(Debug, Clone, PartialEq)]
pub enum Plot {
    /// A line chart.
    Lines(Chart),
    /// Bars in small multiples.
    Bars(BarChart),
}

impl From<Chart> for Plot {
    fn from(c: Chart) -> Plot {
        Plot::Lines(c)
    }
}

impl From<BarChart> for Plot {
    fn from(c: BarChart) -> Plot {
        Plot::Bars(c)
    }
}

/// A figure and the file name (no directory) it is written under.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// File name, e.g. `illf-fig4.svg`.
    pub file: String,
    /// What it draws.
    pub plot: Plot,
}

impl Figure {
    /// A figure written as `file`.
    pub fn new(file: impl Into<String>, plot: impl Into<Plot>) -> Figure {
        Figure {
            file: file.into(),
            plot: plot.into(),
        }
    }
}
