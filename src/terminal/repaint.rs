//! The bytes that redraw a terminal's screen from scratch: what a pane source hands the server
//! instead of output it could not keep up with (`sources::pty`). Fed to a blank terminal of the
//! same size, they give the same rows, cell attributes, cursor and hidden-cursor flag (checked on
//! every recording in `tests/terminal.rs`); the title and the alternate-screen flag are not
//! repainted (a terminal does not repaint them either).

use super::Grid;
use super::Terminal;
use super::row::{BOLD, DIM, INVERSE, Pen, Row};
use std::fmt::Write as _;

impl Terminal {
    /// The screen as bytes: home, erase, each row's cells with their pens, then the cursor. (A
    /// scroll region or origin mode the receiving terminal is in is not undone: a repaint is
    /// fed to the terminal that was reading the same program.)
    pub fn repaint(&self) -> Vec<u8> {
        // The default pen before erasing: the blank cells take the pen the erase is made with.
        let mut out = String::from("\x1b[m\x1b[H\x1b[2J");
        let (_, cols) = self.size();
        for (r, row) in self.state.shown().rows.iter().enumerate() {
            paint_row(row, r + 1, &mut out);
        }
        let (row, col) = self.cursor();
        let _ = write!(
            out,
            "\x1b[{};{}H\x1b[?25{}",
            row + 1,
            col.min(cols.saturating_sub(1)) + 1,
            if self.cursor_hidden() { 'l' } else { 'h' }
        );
        out.into_bytes()
    }
}

/// Row `row` (1-based): blank cells with the default pen are stepped over, the rest drawn with
/// their pens.
fn paint_row(row: &Row, at: usize, out: &mut String) {
    let mut pen = Pen::default();
    let mut skipped = 0; // blank default cells not yet stepped over
    let mut started = false;
    row.for_each_cell(|text, cell_pen| {
        if text.is_empty() && cell_pen == Pen::default() {
            skipped += 1;
            return;
        }
        if !started {
            let _ = write!(out, "\x1b[{at};1H");
            started = true;
        }
        if skipped > 0 {
            let _ = write!(out, "\x1b[{skipped}C");
            skipped = 0;
        }
        if cell_pen != pen {
            sgr(out, cell_pen);
            pen = cell_pen;
        }
        out.push_str(if text.is_empty() { " " } else { text });
    });
    if pen != Pen::default() {
        out.push_str("\x1b[m");
    }
}

/// The SGR that sets `pen` from the default.
fn sgr(out: &mut String, pen: Pen) {
    out.push_str("\x1b[0");
    if pen.flags & BOLD != 0 {
        out.push_str(";1");
    }
    if pen.flags & DIM != 0 {
        out.push_str(";2");
    }
    if pen.flags & INVERSE != 0 {
        out.push_str(";7");
    }
    let _ = match pen.fg {
        crate::terminal::Colour::Default => Ok(()),
        crate::terminal::Colour::Idx(i) => write!(out, ";38;5;{i}"),
        crate::terminal::Colour::Rgb(r, g, b) => write!(out, ";38;2;{r};{g};{b}"),
    };
    out.push('m');
}
