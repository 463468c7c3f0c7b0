//! `RowGrid`: a screen made of the rows an embedder hands over instead of PTY bytes. A
//! multiplexer that embeds the core already keeps its own grid; parsing every byte a second time
//! (and keeping a second 50×200 vt100 grid, ~317 KB) buys nothing. It sends the rows that changed
//! — their text and the attributes composer detection reads (dim/faint, foreground colour) — with
//! the cursor and the alternate-screen flag, and lookout keeps only that: a row's text and its
//! non-default attribute runs.
//!
//! Pure data; `Screen` holds one and `ingest_output` applies the updates.

use crate::terminal::{CellAttrs, Grid, GridCell, colour_bits, look_step, row_hash};
use unicode_width::UnicodeWidthChar;

/// Attributes over a run of columns (`start..end`); columns outside every run are plain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttrRun {
    /// First column.
    pub start: u16,
    /// One past the last column.
    pub end: u16,
    /// Dim/faint (SGR 2).
    pub dim: bool,
    /// Foreground colour.
    pub fg: crate::terminal::Colour,
}

/// One row as the embedder shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GridRow {
    /// The row's text (wide glyphs take two columns, as on the screen).
    pub text: Box<str>,
    /// Its non-default attribute runs, by column.
    pub runs: Box<[AttrRun]>,
}

/// What changed on an embedder's screen since its last update.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowsUpdate {
    /// The rows that changed, by row number; rows not named keep their text.
    pub rows: Vec<(u16, GridRow)>,
    /// The cursor (row, column).
    pub cursor: (u16, u16),
    /// Whether the alternate screen is in use.
    pub alternate: bool,
    /// The window title, if it changed.
    pub title: Option<String>,
    /// The OSC 9;4 progress payload, if it changed.
    pub progress: Option<String>,
}

/// The rows of an embedder's screen.
#[derive(Debug, Clone)]
pub struct RowGrid {
    rows: Vec<GridRow>,
    cols: u16,
    /// Each row's hashes: of its text (`Grid::ready_row`), and of its text and attribute runs
    /// (`Grid::look_hash`).
    hashes: Vec<(u64, u64)>,
    cursor: (u16, u16),
    alternate: bool,
}

impl RowGrid {
    /// A blank screen of `rows` × `cols`.
    pub fn new(rows: u16, cols: u16) -> Self {
        RowGrid {
            rows: vec![GridRow::default(); usize::from(rows)],
            hashes: vec![hashes(&GridRow::default()); usize::from(rows)],
            cols,
            cursor: (0, 0),
            alternate: false,
        }
    }

    /// Applies an update; rows past the screen are ignored, the cursor is kept inside it.
    pub fn apply(&mut self, update: RowsUpdate) {
        for (r, mut row) in update.rows {
            let r = usize::from(r);
            let (Some(slot), Some(hash)) = (self.rows.get_mut(r), self.hashes.get_mut(r)) else {
                continue;
            };
            // A row never holds a newline: one sent by the embedder would split it. Its trailing
            // blanks are dropped once here, not at every read (the columns past the text are
            // blank cells all the same).
            if row.text.contains('\n') {
                row.text = row.text.replace('\n', " ").into();
            }
            if row.text.len() != row.text.trim_end().len() {
                row.text = row.text.trim_end().into();
            }
            *hash = hashes(&row);
            *slot = row;
        }
        let last = |n: usize| u16::try_from(n.saturating_sub(1)).unwrap_or(u16::MAX);
        self.cursor = (
            update.cursor.0.min(last(self.rows.len())),
            update.cursor.1.min(last(usize::from(self.cols))),
        );
        self.alternate = update.alternate;
    }

    /// Resizes: rows past the new height go, new rows are blank (the embedder sends them next).
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.rows.resize(usize::from(rows), GridRow::default());
        self.hashes
            .resize(usize::from(rows), hashes(&GridRow::default()));
        self.cols = cols;
    }

    /// The visible text, rows joined by newlines, trailing blank rows dropped.
    pub fn text(&self) -> String {
        let last = self
            .rows
            .iter()
            .rposition(|r| !r.text.is_empty())
            .map_or(0, |i| i + 1);
        let rows: Vec<&str> = self.rows[..last].iter().map(|r| &*r.text).collect();
        rows.join("\n")
    }

    /// Heap bytes this grid holds (the memory figure of the benches).
    pub fn heap_bytes(&self) -> usize {
        self.rows.capacity() * std::mem::size_of::<GridRow>()
            + self
                .rows
                .iter()
                .map(|r| r.text.len() + std::mem::size_of_val(&*r.runs))
                .sum::<usize>()
            + self.hashes.capacity() * std::mem::size_of::<(u64, u64)>()
    }
}

/// A row's text hash and look hash (text and attribute runs).
fn hashes(row: &GridRow) -> (u64, u64) {
    let text = row_hash(&row.text);
    let look = row.runs.iter().fold(text, |h, run| {
        let span = u64::from(run.start) << 48 | u64::from(run.end) << 32;
        look_step(h, span | colour_bits(run.fg) << 1 | u64::from(run.dim))
    });
    (text, look)
}

impl Grid for RowGrid {
    fn size(&self) -> (u16, u16) {
        (
            u16::try_from(self.rows.len()).unwrap_or(u16::MAX),
            self.cols,
        )
    }

    fn write_rows(&self, first: u16, last: u16, out: &mut String) {
        for row in self
            .rows
            .iter()
            .skip(usize::from(first))
            .take(usize::from(last.saturating_sub(first)) + 1)
        {
            out.push_str(&row.text);
            out.push('\n');
        }
    }

    fn cursor(&self) -> (u16, u16) {
        self.cursor
    }

    fn ready_row(&self, row: u16) -> Option<(&str, u64)> {
        let r = usize::from(row);
        // (kept without trailing blanks by `apply`)
        Some((&self.rows.get(r)?.text, self.hashes.get(r)?.0))
    }

    fn look_hash(&self, row: u16) -> Option<u64> {
        Some(self.hashes.get(usize::from(row))?.1)
    }

    fn alternate_screen(&self) -> bool {
        self.alternate
    }

    fn row_cells<'a>(&'a self, row: u16, out: &mut Vec<GridCell<'a>>) {
        let Some(r) = self.rows.get(usize::from(row)) else {
            return;
        };
        let text = &*r.text;
        // (column, byte range) of the cell being built: a combining mark joins the cell before it.
        let mut cell: Option<(u16, usize, usize)> = None;
        let mut col = 0u16;
        let attrs = |col: u16| {
            let run = r
                .runs
                .iter()
                .find(|run| (run.start..run.end).contains(&col));
            CellAttrs {
                dim: run.is_some_and(|r| r.dim),
                fg: run.map_or(crate::terminal::Colour::Default, |r| r.fg),
                inverse: false,
            }
        };
        let push = |(c, a, b): (u16, usize, usize), out: &mut Vec<GridCell<'a>>| {
            let t = text.get(a..b).unwrap_or("");
            out.push(GridCell {
                col: c,
                text: t,
                attrs: attrs(c),
            });
        };
        for (at, ch) in text.char_indices() {
            let end = at + ch.len_utf8();
            let width = u16::try_from(ch.width().unwrap_or(0)).unwrap_or(1);
            match (&mut cell, width) {
                (Some((_, _, b)), 0) => *b = end,
                (_, 0) => {}
                _ => {
                    if col >= self.cols {
                        break;
                    }
                    if let Some(done) = cell.replace((col, at, end)) {
                        push(done, out);
                    }
                    col = col.saturating_add(width);
                }
            }
        }
        if let Some(done) = cell {
            push(done, out);
        }
        // The rest of the row is blank, as on a terminal.
        out.extend((col..self.cols).map(|c| GridCell {
            col: c,
            text: "",
            attrs: attrs(c),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(text: &str, runs: &[AttrRun]) -> GridRow {
        GridRow {
            text: text.into(),
            runs: runs.into(),
        }
    }

    #[test]
    fn dirty_rows_replace_rows_and_the_rest_stay() {
        let mut g = RowGrid::new(4, 20);
        g.apply(RowsUpdate {
            rows: vec![(0, row("top", &[])), (3, row("> draft", &[]))],
            cursor: (3, 7),
            ..RowsUpdate::default()
        });
        g.apply(RowsUpdate {
            rows: vec![(3, row(">", &[])), (9, row("past the screen", &[]))],
            cursor: (30, 90),
            alternate: true,
            ..RowsUpdate::default()
        });
        assert_eq!(g.text(), "top\n\n\n>");
        assert_eq!(Grid::cursor(&g), (3, 19), "kept inside the screen");
        assert!(g.alternate_screen());
        let mut out = String::new();
        g.write_rows(2, 3, &mut out);
        assert_eq!(out, "\n>\n");
        // (a run of rows is copied in one call where a region reads it: the rows as kept)
        g.apply(RowsUpdate {
            rows: vec![(1, row("trailing   ", &[]))],
            ..RowsUpdate::default()
        });
        out.clear();
        g.write_rows(0, 3, &mut out);
        let kept: Vec<&str> = (0..4)
            .filter_map(|r| g.ready_row(r))
            .map(|(t, _)| t)
            .collect();
        assert_eq!(out, kept.join("\n") + "\n");
    }

    #[test]
    fn cells_carry_text_dim_and_colour_by_column() {
        let mut g = RowGrid::new(1, 20);
        let grey = crate::terminal::Colour::Rgb(128, 128, 128);
        g.apply(RowsUpdate {
            rows: vec![(
                0,
                row(
                    "> 日本 Try",
                    &[AttrRun {
                        start: 7,
                        end: 10,
                        dim: true,
                        fg: grey,
                    }],
                ),
            )],
            ..RowsUpdate::default()
        });
        let mut cells = Vec::new();
        g.row_cells(0, &mut cells);
        let cell = |col| {
            let c = cells.iter().find(|c| c.col == col);
            (c.map_or("", |c| c.text), c.map(|c| c.attrs))
        };
        assert_eq!(cell(2).0, "日");
        assert_eq!(cell(3).0, "", "the second half of a wide glyph");
        assert_eq!(cell(4).0, "本");
        let (t, attrs) = cell(7);
        assert_eq!(t, "T");
        assert_eq!(
            attrs,
            Some(CellAttrs {
                dim: true,
                fg: grey,
                inverse: false,
            })
        );
        assert_eq!(
            cell(0).1,
            Some(CellAttrs {
                dim: false,
                fg: crate::terminal::Colour::Default,
                inverse: false,
            })
        );
        assert_eq!(cell(25).1, None);
    }
}
