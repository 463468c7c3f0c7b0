//! lookout's own terminal: the headless screen a pane's PTY bytes are parsed into.
//!
//! Why not vt100 (which it replaces; a real tmux is the reference it is checked against, in
//! `tests/detection/tmux_reference.rs`): a
//! detector reads rows as text, over and over, and vt100 keeps no text and no dirty rows — every
//! evaluation rendered every row it read again (~0.3–0.9 µs a row) just to learn whether it
//! changed. Here each row keeps its text rendered with a hash, refreshed after a write only for
//! the rows the write touched, so reading a row is a borrow and "did it change" is a compare.
//! Cells are 10 bytes (text, dim/bold/inverse, foreground), a third of vt100's.
//!
//! Parsing is `vte`'s; `perform` maps the sequences onto the two pages (`page`) of rows (`row`).
//! Written only by `components::Screen`.

mod colour;
mod grid;
mod inband;
mod page;
mod perform;
mod repaint;
mod row;

pub use colour::Colour;
pub use grid::{CellAttrs, Grid, GridCell};
pub(crate) use grid::{colour_bits, look_step, row_hash};
pub use inband::{Announced, Announcement, MAX_PAYLOAD, Sequence};
use page::Page;
use row::Pen;

/// A terminal of `rows` × `cols` fed with bytes.
pub struct Terminal {
    parser: vte::Parser,
    state: State,
}

/// Everything but the parser (what `vte::Perform` drives).
#[derive(Clone)]
struct State {
    main: Page,
    alt: Page,
    alternate: bool,
    pen: Pen,
    saved_pen: Pen,
    hidden: bool,
    /// Autowrap (DECAWM, on unless `CSI ? 7 l`): a glyph past the last column starts the next row.
    autowrap: bool,
    /// The program asked for bracketed paste (DECSET 2004).
    bracketed: bool,
    last_char: Option<char>,
    title: Option<String>,
    progress: Option<String>,
    /// The latest in-band status announcement not yet taken.
    announced: Option<Announcement>,
}

/// What a chunk of bytes said besides the screen: the title, the OSC 9;4 progress payload and
/// the latest in-band status announcement, each when the chunk set one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Said {
    /// OSC 0/2 title.
    pub title: Option<String>,
    /// OSC 9;4 payload (`4;3;0`).
    pub progress: Option<String>,
    /// The last status sequence (`inband`) in the chunk.
    pub announced: Option<Announcement>,
}

impl State {
    fn new(rows: u16, cols: u16) -> Self {
        State {
            main: Page::new(rows, cols, true),
            alt: Page::new(rows, cols, false),
            alternate: false,
            pen: Pen::default(),
            saved_pen: Pen::default(),
            hidden: false,
            autowrap: true,
            bracketed: false,
            last_char: None,
            title: None,
            progress: None,
            announced: None,
        }
    }

    fn page(&mut self) -> &mut Page {
        if self.alternate {
            &mut self.alt
        } else {
            &mut self.main
        }
    }

    fn shown(&self) -> &Page {
        if self.alternate {
            &self.alt
        } else {
            &self.main
        }
    }

    fn save_cursor(&mut self) {
        self.page().save_cursor();
        self.saved_pen = self.pen;
    }

    fn restore_cursor(&mut self) {
        self.page().restore_cursor();
        self.pen = self.saved_pen;
    }

    /// To the alternate page; the cursor stays where it is (a terminal has one cursor).
    fn enter_alternate(&mut self) {
        self.alt.allocate();
        if !self.alternate {
            self.alt.pos = self.main.pos;
            self.alternate = true;
        }
    }

    /// Back to the main page, the cursor staying where it is.
    fn leave_alternate(&mut self) {
        if self.alternate {
            self.main.pos = self.alt.pos;
            self.alternate = false;
        }
    }

    /// RIS: a blank terminal of the same size (a title, progress or announcement not yet taken
    /// stays).
    fn reset(&mut self) {
        let (rows, cols) = (self.main.nrows(), self.main.cols());
        let (title, progress) = (self.title.take(), self.progress.take());
        let announced = self.announced.take();
        *self = State::new(rows, cols);
        (self.title, self.progress, self.announced) = (title, progress, announced);
    }
}

impl Terminal {
    /// A blank terminal (at least 1 × 1).
    pub fn new(rows: u16, cols: u16) -> Self {
        let mut terminal = Terminal {
            parser: vte::Parser::new(),
            state: State::new(rows.max(1), cols.max(1)),
        };
        terminal.refresh();
        terminal
    }

    /// A copy of the screen as it is now, with a fresh parser (a sequence the bytes so far cut
    /// in half is not carried over): for snapshots of a recording at its markers.
    pub fn snapshot(&self) -> Terminal {
        Terminal {
            parser: vte::Parser::new(),
            state: self.state.clone(),
        }
    }

    /// Feeds PTY bytes; returns the title, OSC 9;4 progress and status announcement they set.
    pub fn process(&mut self, bytes: &[u8]) -> Said {
        self.parser.advance(&mut self.state, bytes);
        self.refresh();
        Said {
            title: self.state.title.take(),
            progress: self.state.progress.take(),
            announced: self.state.announced.take(),
        }
    }

    /// A new size for both pages.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.state.main.resize(rows, cols);
        self.state.alt.resize(rows, cols);
        self.refresh();
    }

    fn refresh(&mut self) {
        self.state.page().refresh();
    }

    /// Whether the program asked for bracketed paste (pasted text is then wrapped for it).
    pub fn bracketed_paste(&self) -> bool {
        self.state.bracketed
    }

    /// The visible text: rows joined by newlines, trailing blank rows left out.
    pub fn text(&self) -> String {
        let rows = &self.state.shown().rows;
        let last = rows
            .iter()
            .rposition(|r| !r.text.is_empty())
            .map_or(0, |i| i + 1);
        let mut out = String::new();
        for (i, row) in rows[..last].iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&row.text);
        }
        out
    }
}

impl Grid for Terminal {
    fn size(&self) -> (u16, u16) {
        let page = self.state.shown();
        (self.state.main.nrows(), page.cols())
    }

    fn write_rows(&self, first: u16, last: u16, out: &mut String) {
        let rows = &self.state.shown().rows;
        for r in usize::from(first)..=usize::from(last) {
            let Some(row) = rows.get(r) else { break };
            out.push_str(&row.text);
            out.push('\n');
        }
    }

    fn cursor(&self) -> (u16, u16) {
        let pos = self.state.shown().pos;
        (pos.row, pos.col)
    }

    fn alternate_screen(&self) -> bool {
        self.state.alternate
    }

    fn row_cells<'a>(&'a self, row: u16, out: &mut Vec<GridCell<'a>>) {
        if let Some(row) = self.state.shown().rows.get(usize::from(row)) {
            row.cells(out);
        }
    }

    fn cursor_hidden(&self) -> bool {
        self.state.hidden
    }

    fn ready_row(&self, row: u16) -> Option<(&str, u64)> {
        let row = self.state.shown().rows.get(usize::from(row))?;
        Some((&row.text, row.hash))
    }

    fn look_hash(&self, row: u16) -> Option<u64> {
        Some(self.state.shown().rows.get(usize::from(row))?.look)
    }
}
