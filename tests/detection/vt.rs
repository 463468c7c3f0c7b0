//! vt100, the terminal lookout used before its own, as the reference the grid tests compare
//! against: `Vt` reads a `vt100::Screen` through the core's `Grid`, and `Osc` catches the title
//! and OSC 9;4 progress vt100 leaves to its callbacks.

use lookout_core::rules::Grid;
use lookout_core::rules::regions::{CellAttrs, GridCell};
use lookout_core::terminal::Colour;

/// A vt100 screen read as a `Grid`.
pub struct Vt<'a>(pub &'a vt100::Screen);

/// The title (OSC 0/2) and progress (OSC 9;4) vt100 saw since the last drain.
#[derive(Debug, Default)]
pub struct Osc {
    /// A title set since the last drain.
    pub title: Option<String>,
    /// A progress payload (`4;1;-1`, …) set since the last drain.
    pub progress: Option<String>,
}

impl vt100::Callbacks for Osc {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = Some(String::from_utf8_lossy(title).into_owned());
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        if let [b"9", b"4", rest @ ..] = params {
            let parts: Vec<String> = rest
                .iter()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect();
            self.progress = Some(format!("4;{}", parts.join(";")));
        }
    }
}

fn colour(c: vt100::Color) -> Colour {
    match c {
        vt100::Color::Default => Colour::Default,
        vt100::Color::Idx(i) => Colour::Idx(i),
        vt100::Color::Rgb(r, g, b) => Colour::Rgb(r, g, b),
    }
}

impl Grid for Vt<'_> {
    fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.0.size();
        (rows.get(), cols.get())
    }

    fn write_rows(&self, first: u16, last: u16, out: &mut String) {
        let (rows, cols) = Grid::size(self);
        let last = last.min(rows.saturating_sub(1));
        let mut r = first;
        while r <= last {
            // vt100 renders a run of rows in one call, rows split by `\n` except after a wrapped
            // row: take the longest run whose rows (but its last) are not wrapped.
            let mut end = r;
            while end < last && !self.0.row_wrapped(end) {
                end += 1;
            }
            // `contents_between(a, 0, b + 1, 0)` is rows a..=b, each with its `\n`; the last row
            // of the screen has no next row to end on, so it ends at its last column instead
            // (and a run of that row alone starts at the end of the row above it).
            let text = if end + 1 < rows {
                self.0.contents_between(r, 0, end + 1, 0)
            } else if r < end {
                self.0.contents_between(r, 0, end, cols)
            } else if r > 0 {
                let t = self.0.contents_between(r - 1, cols, r, cols);
                match t.strip_prefix('\n') {
                    Some(rest) => rest.to_owned(),
                    None => t,
                }
            } else {
                self.0.rows(0, cols).next().unwrap_or_default()
            };
            out.push_str(&text);
            if !text.ends_with('\n') || end + 1 == rows {
                out.push('\n');
            }
            r = end + 1;
        }
    }

    fn cursor(&self) -> (u16, u16) {
        self.0.cursor_position()
    }

    fn alternate_screen(&self) -> bool {
        self.0.alternate_screen()
    }

    fn row_cells<'a>(&'a self, row: u16, out: &mut Vec<GridCell<'a>>) {
        let cols = Grid::size(self).1;
        for col in 0..cols {
            let Some(cell) = self.0.cell(row, col) else {
                return;
            };
            if cell.is_wide_continuation() {
                continue;
            }
            out.push(GridCell {
                col,
                text: cell.contents(),
                attrs: CellAttrs {
                    dim: cell.dim(),
                    fg: colour(cell.fgcolor()),
                    inverse: cell.inverse(),
                },
            });
        }
    }

    fn cursor_hidden(&self) -> bool {
        self.0.hide_cursor()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lookout_core::rules::regions::RowBuf;

    fn screen(rows: u16, cols: u16, bytes: &str) -> vt100::Parser {
        let nz = |n: u16| std::num::NonZeroU16::new(n).expect("non-zero");
        let mut p = vt100::Parser::new(nz(rows), nz(cols), 0);
        p.process(bytes.replace('\n', "\r\n").as_bytes());
        p
    }

    #[test]
    fn rows_render_in_runs_as_vt100_renders_them_one_by_one() {
        // Wrapped rows, wide glyphs, the last row and a one-row screen: every row the run
        // renderer produces is the row vt100 renders on its own.
        let long = "w".repeat(30);
        for (rows, body) in [
            (6u16, format!("a\n{long}\n日本語 wide\n\nlast")),
            (1, "only".to_owned()),
            (4, format!("x\ny\nz\n{long}")),
        ] {
            let p = screen(rows, 20, &body);
            let s = &Vt(p.screen());
            let mut buf = RowBuf::default();
            buf.begin(rows);
            buf.render(s, 0, usize::from(rows) - 1);
            for (r, one) in p.screen().rows(0, 20).enumerate() {
                assert_eq!(buf.row(r), one.trim_end(), "row {r} of {body:?}");
                assert_ne!(buf.hash(r), 0);
            }
        }
    }
}
