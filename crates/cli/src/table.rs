//! The one renderer of aligned text tables for everything the command line prints
//! (simulate, compare, reproduce, bench): columns as wide as their widest cell, two
//! spaces apart, names left-aligned and numbers right-aligned, trailing spaces trimmed;
//! optionally indented, and split into blocks of columns that fit a width (each block
//! repeating the first column), so that a fix to the layout lands everywhere.

use std::fmt::Write as _;

/// A table: a header row, rows of cells, and each column's alignment.
#[derive(Debug, Clone, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    left: Vec<bool>,
    indent: String,
    width: Option<usize>,
}

impl Table {
    /// A table with this header: the first column left-aligned, the others right-aligned.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        let header: Vec<String> = header.into_iter().map(Into::into).collect();
        let left = (0..header.len()).map(|i| i == 0).collect();
        Table {
            header,
            left,
            ..Table::default()
        }
    }

    /// Align column `i` left (true) or right.
    pub fn align_left(mut self, i: usize, left: bool) -> Table {
        if let Some(l) = self.left.get_mut(i) {
            *l = left;
        }
        self
    }

    /// Put `indent` before every line.
    pub fn indent(mut self, indent: &str) -> Table {
        self.indent = indent.to_string();
        self
    }

    /// Split the columns after the first into blocks whose lines fit in `width`
    /// characters; each block repeats the first column, blocks are a blank line apart.
    pub fn fit(mut self, width: usize) -> Table {
        self.width = Some(width);
        self
    }

    /// Add a row (missing cells are empty, extra cells are ignored).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Append the table to `out`.
    pub fn render(&self, out: &mut String) {
        let cols = self.header.len();
        if cols == 0 {
            return;
        }
        let mut width = vec![0usize; cols];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in r.iter().enumerate().take(cols) {
                width[i] = width[i].max(c.chars().count());
            }
        }
        // Blocks of the columns after the first.
        let mut blocks: Vec<std::ops::Range<usize>> = Vec::new();
        let mut start = 1;
        let mut used = self.indent.chars().count() + width[0];
        for (i, w) in width.iter().enumerate().skip(1) {
            if self
                .width
                .is_some_and(|max| i > start && used + 2 + w > max)
            {
                blocks.push(start..i);
                start = i;
                used = self.indent.chars().count() + width[0];
            }
            used += 2 + w;
        }
        blocks.push(start..cols);
        for (b, range) in blocks.into_iter().enumerate() {
            if b > 0 {
                out.push('\n');
            }
            for r in std::iter::once(&self.header).chain(&self.rows) {
                let cell = |i: usize| r.get(i).map(String::as_str).unwrap_or("");
                let mut line = self.indent.clone();
                let (c, w) = (cell(0), width[0]);
                if self.left[0] {
                    let _ = write!(line, "{c:<w$}");
                } else {
                    let _ = write!(line, "{c:>w$}");
                }
                for i in range.clone() {
                    let (c, w) = (cell(i), width[i]);
                    if self.left[i] {
                        let _ = write!(line, "  {c:<w$}");
                    } else {
                        let _ = write!(line, "  {c:>w$}");
                    }
                }
                out.push_str(line.trim_end());
                out.push('\n');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Table;

    fn cells(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn names_left_numbers_right_trailing_spaces_trimmed() {
        let mut t = Table::new(["task", "jobs", "note"]).align_left(2, true);
        t.row(cells(&["a", "12", ""]));
        t.row(cells(&["long-name", "3", "ok"]));
        let mut s = String::new();
        t.render(&mut s);
        assert_eq!(
            s,
            "task       jobs  note\na            12\nlong-name     3  ok\n"
        );
    }

    #[test]
    fn columns_split_into_blocks_that_fit_each_repeating_the_first() {
        let mut t = Table::new(["", "aaaa", "bbbb", "cccc"])
            .indent("  ")
            .fit(16);
        t.row(cells(&["x", "1", "2", "3"]));
        let mut s = String::new();
        t.render(&mut s);
        // "  x" + 2 columns of 2+4 = 15 ≤ 16; the third would make 21.
        assert_eq!(
            s,
            "     aaaa  bbbb\n  x     1     2\n\n     cccc\n  x     3\n"
        );
    }
}
