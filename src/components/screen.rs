//! `Screen`: the pane's headless terminal (lookout's own `terminal::Terminal`, no scrollback). Written by
//! `ingest_output` only; when its rows last changed is `RowsSeen`'s fact. The terminal collects the title and OSC 9;4 progress it
//! sees so that ingest can move them into `Title`/`Progress`.
//!
//! The size bounds live here too (see docs/behaviour.md, Bad input): the terminal allocates every
//! cell up front (10
//! bytes each, twice once the alternate screen is used), so a hostile `rows × cols` would abort
//! the process. [`check_size`] is the one check the wire, the recordings and the embedder API share.

use super::row_grid::{RowGrid, RowsUpdate};
use crate::terminal::Grid;
use crate::terminal::{Said, Terminal};
use bevy_ecs::component::Component;
use std::num::NonZeroU16;

/// The most rows a pane's screen may have.
pub const MAX_ROWS: u16 = 500;
/// The most columns a pane's screen may have.
pub const MAX_COLS: u16 = 1000;
/// The most cells all screens of one world may hold together (~80 MiB of cells, 160 MiB with
/// every alternate screen in use): past it new panes and growing resizes are refused.
pub const MAX_TOTAL_CELLS: u64 = 8 << 20;

/// Why a screen size was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeError {
    /// Rows or columns outside `1..=MAX_ROWS` / `1..=MAX_COLS`.
    OutOfRange {
        /// Rows asked for.
        rows: u16,
        /// Columns asked for.
        cols: u16,
    },
    /// The screens the world holds would pass [`MAX_TOTAL_CELLS`].
    OverBudget {
        /// Cells asked for.
        asked: u64,
        /// Cells the other screens hold.
        in_use: u64,
    },
}

impl std::fmt::Display for SizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SizeError::OutOfRange { rows, cols } => write!(
                f,
                "a screen of {rows} rows x {cols} cols is out of bounds: rows must be 1..={MAX_ROWS}, cols 1..={MAX_COLS}"
            ),
            SizeError::OverBudget { asked, in_use } => write!(
                f,
                "a screen of {asked} cells does not fit: the open panes hold {in_use} of at most {MAX_TOTAL_CELLS} cells; close a pane or use a smaller screen"
            ),
        }
    }
}

impl std::error::Error for SizeError {}

/// Checks `rows × cols` against the per-screen bounds.
pub fn check_size(rows: u16, cols: u16) -> Result<u64, SizeError> {
    if (1..=MAX_ROWS).contains(&rows) && (1..=MAX_COLS).contains(&cols) {
        Ok(u64::from(rows) * u64::from(cols))
    } else {
        Err(SizeError::OutOfRange { rows, cols })
    }
}

/// The pane's visible screen: a terminal lookout parses itself (its own sources: PTYs, tmux), or
/// the rows an embedder hands over ([`RowGrid`]). Both read through [`Grid`].
#[derive(Component)]
pub struct Screen {
    term: Term,
}

enum Term {
    /// PTY bytes through lookout's terminal (boxed: the grid is large, the enum stays small).
    Vt(Box<Terminal>),
    /// Rows from the embedder.
    Rows(RowGrid),
}

impl Screen {
    /// A blank terminal of `rows` × `cols`, fed with bytes; clamped into the bounds (callers check
    /// first with [`check_size`]; the clamp only keeps a caller that did not from allocating
    /// gigabytes).
    pub fn new(rows: u16, cols: u16) -> Self {
        let (rows, cols) = clamp(rows, cols);
        Screen {
            term: Term::Vt(Box::new(Terminal::new(rows.get(), cols.get()))),
        }
    }

    /// A blank screen of `rows` × `cols` fed with rows by the embedder (clamped like
    /// [`Screen::new`]).
    pub fn rows(rows: u16, cols: u16) -> Self {
        let (rows, cols) = clamp(rows, cols);
        Screen {
            term: Term::Rows(RowGrid::new(rows.get(), cols.get())),
        }
    }

    /// Feeds PTY bytes; returns the title, progress and status announcement they set, if any.
    /// A screen fed with rows ignores bytes.
    pub fn process(&mut self, bytes: &[u8]) -> Said {
        match &mut self.term {
            Term::Vt(t) => t.process(bytes),
            Term::Rows(_) => Said::default(),
        }
    }

    /// Applies the embedder's changed rows; returns the title and progress they set, if any. A
    /// terminal fed with bytes ignores rows.
    pub fn apply_rows(&mut self, mut update: RowsUpdate) -> Said {
        match &mut self.term {
            Term::Rows(g) => {
                let said = Said {
                    title: update.title.take(),
                    progress: update.progress.take(),
                    announced: None,
                };
                g.apply(update);
                said
            }
            Term::Vt(_) => Said::default(),
        }
    }

    /// Resizes the screen, clamped into the bounds like [`Screen::new`].
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let (rows, cols) = clamp(rows, cols);
        match &mut self.term {
            Term::Vt(t) => t.resize(rows.get(), cols.get()),
            Term::Rows(g) => g.resize(rows.get(), cols.get()),
        }
    }

    /// The screen as the matcher (and any reader of cells: text, dim, colour, cursor) reads it.
    pub fn grid(&self) -> &dyn Grid {
        match &self.term {
            Term::Vt(t) => &**t,
            Term::Rows(g) => g,
        }
    }

    /// The visible text, rows joined by newlines (for explain, replay and tests).
    pub fn text(&self) -> String {
        match &self.term {
            Term::Vt(t) => t.text(),
            Term::Rows(g) => g.text(),
        }
    }

    /// Rows × columns.
    pub fn size(&self) -> (u16, u16) {
        self.grid().size()
    }

    /// The cursor's (row, column).
    pub fn cursor(&self) -> (u16, u16) {
        self.grid().cursor()
    }

    /// Whether the program hid the cursor (it may have parked it anywhere).
    pub fn cursor_hidden(&self) -> bool {
        self.grid().cursor_hidden()
    }

    /// Whether the program switched to the alternate screen.
    pub fn alternate(&self) -> bool {
        self.grid().alternate_screen()
    }
}

fn clamp(rows: u16, cols: u16) -> (NonZeroU16, NonZeroU16) {
    let bound = |n: u16, max: u16| NonZeroU16::new(n.min(max)).unwrap_or(NonZeroU16::MIN);
    (bound(rows, MAX_ROWS), bound(cols, MAX_COLS))
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (rows, cols) = self.grid().size();
        f.debug_struct("Screen")
            .field("rows", &rows)
            .field("cols", &cols)
            .field("rows_fed", &matches!(self.term, Term::Rows(_)))
            .finish()
    }
}
