//! One row of lookout's terminal: its cells, the combining marks some cells carry, and its text
//! kept rendered (trailing blanks trimmed) with a hash, refreshed only when the row changed.
//!
//! Pure data: `Page` moves rows and calls the cell edits here; nothing else writes a row.

use super::{CellAttrs, GridCell, colour_bits, look_step};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The pen: what a printed or erased cell takes on besides its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Pen {
    pub fg: crate::terminal::Colour,
    /// `BOLD`, `DIM`, `INVERSE` (bold and dim exclude each other, as SGR 1/2/22 set them).
    pub flags: u8,
}

pub(super) const BOLD: u8 = 1;
pub(super) const DIM: u8 = 2;
pub(super) const INVERSE: u8 = 4;
const PEN: u8 = BOLD | DIM | INVERSE;
/// The first half of a two-column glyph.
const WIDE: u8 = 8;
/// The second half of a two-column glyph (no text of its own).
const CONT: u8 = 16;
/// The cell's text is in `Row::marks` (a glyph with combining marks).
const MARKED: u8 = 32;

/// The most bytes of text one cell holds (a glyph and its combining marks).
const CELL_BYTES: usize = 18;

/// One cell: up to one glyph as UTF-8 (`len == 0`: blank), its pen and its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Cell {
    utf8: [u8; 4],
    len: u8,
    flags: u8,
    fg: crate::terminal::Colour,
}

impl Cell {
    fn pen(&self) -> Pen {
        Pen {
            fg: self.fg,
            flags: self.flags & PEN,
        }
    }

    fn text(&self) -> &str {
        std::str::from_utf8(&self.utf8[..usize::from(self.len)]).unwrap_or("")
    }

    pub fn has_text(&self) -> bool {
        self.len > 0
    }

    pub fn wide(&self) -> bool {
        self.flags & WIDE != 0
    }

    pub fn cont(&self) -> bool {
        self.flags & CONT != 0
    }
}

/// A row of cells and its rendered text.
#[derive(Debug, Clone, Default)]
pub(super) struct Row {
    cells: Vec<Cell>,
    /// The full text of the cells flagged `MARKED`, by column.
    marks: Vec<(u16, String)>,
    /// The row as text, trailing whitespace trimmed (valid when not `dirty`).
    pub text: String,
    /// `text`'s hash (never 0).
    pub hash: u64,
    /// A hash of `text` and every cell's attributes and shape (`Grid::look_hash`).
    pub look: u64,
    /// Whether a cell changed since `text` was rendered.
    pub dirty: bool,
    /// Every cell from this column on is a blank with the default pen (an upper bound: what
    /// is past it is never rendered or erased again). A `usize`: loaded and stored at one width
    /// on every glyph (a narrower field read wider stalls store forwarding).
    used: usize,
}

impl Row {
    pub fn new(cols: u16) -> Self {
        Row {
            cells: vec![Cell::default(); usize::from(cols)],
            marks: Vec::new(),
            text: String::new(),
            hash: super::row_hash(""),
            look: 0,
            dirty: true,
            used: 0,
        }
    }

    pub fn cell(&self, col: u16) -> Option<&Cell> {
        self.cells.get(usize::from(col))
    }

    fn at(&mut self, col: u16) -> Option<&mut Cell> {
        self.dirty = true;
        let cell = self.cells.get_mut(usize::from(col))?;
        self.used = self.used.max(usize::from(col) + 1);
        Some(cell)
    }

    fn cols(&self) -> u16 {
        u16::try_from(self.cells.len()).unwrap_or(u16::MAX)
    }

    fn unmark(&mut self, col: u16) {
        if !self.marks.is_empty() {
            self.marks.retain(|(c, _)| *c != col);
        }
    }

    /// Puts glyph `c` in `col` with `pen` (a fresh cell: no marks, not a continuation); `wide`:
    /// it takes two columns.
    pub fn set(&mut self, col: u16, c: char, wide: bool, pen: Pen) {
        self.unmark(col);
        let Some(cell) = self.at(col) else { return };
        let mut utf8 = [0u8; 4];
        let len = c.encode_utf8(&mut utf8).len();
        *cell = Cell {
            utf8,
            len: len as u8, // 1..=4
            flags: pen.flags | if wide { WIDE } else { 0 },
            fg: pen.fg,
        };
    }

    /// Puts printable ASCII `b` in `col` with `pen`, as [`Row::set`] does; `None` past the row's
    /// end, else whether a wide glyph is next to it (`Some(was_wide)`: the glyph it replaced
    /// was wide, or the one before it is; the caller tidies them).
    pub fn set_ascii(&mut self, col: u16, b: u8, pen: Pen) -> Option<Option<bool>> {
        let i = usize::from(col);
        let left_wide = i > 0 && self.cells.get(i - 1).is_some_and(Cell::wide);
        if self.cells.get(i)?.flags & MARKED != 0 {
            self.unmark(col);
        }
        let cell = self.at(col)?;
        let was_wide = cell.wide();
        *cell = Cell {
            utf8: [b, 0, 0, 0],
            len: 1,
            flags: pen.flags,
            fg: pen.fg,
        };
        Some((was_wide || left_wide).then_some(was_wide))
    }

    /// Appends combining mark `c` to the glyph in `col` (a blank cell gets a space first); the
    /// cell widens when the marks ask for emoji presentation.
    pub fn append(&mut self, col: u16, c: char) {
        let Some(cell) = self.cells.get(usize::from(col)).copied() else {
            return;
        };
        let mut text = match self.marks.iter().find(|(m, _)| *m == col) {
            Some((_, t)) => t.clone(),
            None if cell.has_text() => cell.text().to_owned(),
            None => " ".to_owned(),
        };
        if text.len() >= CELL_BYTES {
            return;
        }
        text.push(c);
        // Emoji presentation decides the width anew (either way).
        let width = (c == '\u{FE0F}').then(|| text.width() > 1);
        self.unmark(col);
        self.marks.push((col, text));
        if let Some(cell) = self.at(col) {
            if !cell.has_text() {
                cell.utf8 = [b' ', 0, 0, 0];
                cell.len = 1;
            }
            cell.flags |= MARKED;
            match width {
                Some(true) => cell.flags |= WIDE,
                Some(false) => cell.flags &= !WIDE,
                None => {}
            }
        }
    }

    /// The text of the cell at `col` (with its marks).
    pub fn cell_text(&self, col: u16) -> String {
        match self.marks.iter().find(|(c, _)| *c == col) {
            Some((_, t)) => t.clone(),
            None => self.cell(col).map_or("", Cell::text).to_owned(),
        }
    }

    /// Puts `text` (a glyph and its marks) in `col` with `pen`.
    pub fn set_text(&mut self, col: u16, text: &str, pen: Pen) {
        let mut chars = text.chars();
        if let Some(c) = chars.next() {
            self.set(col, c, c.width().unwrap_or(1) > 1, pen);
            chars.for_each(|m| self.append(col, m));
        }
    }

    /// Blanks `col`, giving it `pen`.
    pub fn clear(&mut self, col: u16, pen: Pen) {
        self.unmark(col);
        if let Some(cell) = self.at(col) {
            *cell = Cell {
                flags: pen.flags,
                fg: pen.fg,
                ..Cell::default()
            };
        }
    }

    /// Blanks `col` keeping its own pen.
    pub fn clear_keep(&mut self, col: u16) {
        if let Some(pen) = self.cell(col).map(Cell::pen) {
            self.clear(col, pen);
        }
    }

    /// Marks `col` as the second half of the glyph before it (blank, default pen).
    pub fn set_cont(&mut self, col: u16) {
        self.clear(col, Pen::default());
        if let Some(cell) = self.at(col) {
            cell.flags |= CONT;
        }
    }

    /// Every cell blank with `pen`.
    pub fn clear_all(&mut self, pen: Pen) {
        self.marks.clear();
        self.dirty = true;
        let blank = Cell {
            flags: pen.flags,
            fg: pen.fg,
            ..Cell::default()
        };
        if pen == Pen::default() {
            self.cells[..self.used].fill(blank);
            self.used = 0;
        } else {
            self.cells.fill(blank);
            self.used = self.cells.len();
        }
    }

    /// Every cell blank with the default pen.
    pub fn reset(&mut self) {
        self.clear_all(Pen::default());
    }

    /// The other half of a wide glyph at `col` is blanked (keeping its pen).
    pub fn clear_wide(&mut self, col: u16) {
        let Some(cell) = self.cell(col).copied() else {
            return;
        };
        if cell.wide() {
            if usize::from(col) + 1 >= self.cells.len() {
                self.clear_keep(col);
            } else {
                self.clear_keep(col + 1);
            }
        } else if cell.cont() && col > 0 {
            self.clear_keep(col - 1);
        }
    }

    /// Erases `start..end` with `pen`, as erasing each column in turn would (only the ends can
    /// cut a wide glyph that reaches outside the range).
    pub fn erase_range(&mut self, start: u16, end: u16, pen: Pen) {
        let end = end.min(self.cols());
        if start >= end {
            return;
        }
        self.clear_wide(start);
        self.clear_wide(end - 1);
        self.dirty = true;
        let blank = Cell {
            flags: pen.flags,
            fg: pen.fg,
            ..Cell::default()
        };
        let (start, end) = (usize::from(start), usize::from(end));
        if pen == Pen::default() {
            // Past `used` the cells are default blanks already.
            let used = self.used;
            if start < used {
                self.cells[start..end.min(used)].fill(blank);
            }
            if end >= used {
                self.used = self.used.min(start);
            }
        } else {
            self.cells[start..end].fill(blank);
            self.used = self.used.max(end);
        }
        if !self.marks.is_empty() {
            self.marks
                .retain(|(c, _)| !(start..end).contains(&usize::from(*c)));
        }
    }

    /// Inserts `count` blank cells at `col`, pushing the rest right (off the end).
    pub fn insert(&mut self, col: u16, count: u16) {
        let at = usize::from(col);
        let count = usize::from(count).min(self.cells.len().saturating_sub(at));
        if count == 0 {
            return;
        }
        self.dirty = true;
        let was_cont = self.cells[at].cont();
        if was_cont {
            self.cells[at].flags &= !CONT;
        }
        let slice = &mut self.cells[at..];
        slice.rotate_right(count);
        slice[..count].fill(Cell::default());
        if was_cont {
            self.cells[at].flags |= CONT;
        }
        self.used = (self.used.max(at + 1) + count).min(self.cells.len());
        let cols = self.cells.len();
        self.marks.retain_mut(|(c, _)| {
            if usize::from(*c) >= at {
                *c = c.saturating_add(u16::try_from(count).unwrap_or(u16::MAX));
            }
            usize::from(*c) < cols
        });
        self.clear_last_wide();
    }

    /// Removes cells `start..end`, pulling the rest left (blanks come in at the end).
    pub fn remove(&mut self, start: u16, end: u16) {
        if start >= end || usize::from(end) > self.cells.len() {
            return;
        }
        self.clear_wide(start);
        if end - 1 != start {
            self.clear_wide(end - 1);
        }
        self.dirty = true;
        let (a, n) = (usize::from(start), usize::from(end - start));
        let slice = &mut self.cells[a..];
        slice[..n].fill(Cell::default());
        slice.rotate_left(n);
        self.marks.retain_mut(|(c, _)| {
            if *c < start {
                true
            } else if *c < end {
                false
            } else {
                *c -= end - start;
                true
            }
        });
    }

    /// Grows or cuts the row to `cols` cells.
    pub fn resize(&mut self, cols: u16) {
        let cols = usize::from(cols);
        if cols == self.cells.len() {
            return;
        }
        self.dirty = true;
        if cols < self.cells.len() {
            self.cells.truncate(cols);
            self.used = self.used.min(cols);
            self.marks.retain(|(c, _)| usize::from(*c) < cols);
            self.clear_last_wide();
        } else {
            self.cells.resize(cols, Cell::default());
        }
    }

    /// A wide glyph cut off at the end of the row is blanked.
    fn clear_last_wide(&mut self) {
        if let Some(last) = self.cells.len().checked_sub(1)
            && self.cells[last].wide()
        {
            self.clear_keep(u16::try_from(last).unwrap_or(u16::MAX));
        }
    }

    /// Re-renders `text` and `hash` if a cell changed.
    pub fn refresh(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        self.text.clear();
        let mut at = 0; // the column the text has reached
        let mut skip = false;
        // The look: the text's hash, then each run of cells with the same attributes and shape,
        // folded where a run starts.
        let (mut look, mut run) = (0, (crate::terminal::Colour::Default, 0));
        for (col, cell) in self.cells[..self.used].iter().enumerate() {
            if (cell.fg, cell.flags) != run {
                run = (cell.fg, cell.flags);
                let bits = (col as u64) << 40 | colour_bits(cell.fg) << 8 | u64::from(cell.flags);
                look = look_step(look, bits);
            }
            // A wide glyph's second column is never drawn, whatever it holds.
            if std::mem::take(&mut skip) {
                continue;
            }
            skip = cell.wide();
            if !cell.has_text() {
                continue;
            }
            for _ in at..col {
                self.text.push(' ');
            }
            if cell.flags & MARKED != 0
                && let Some((_, t)) = self.marks.iter().find(|(c, _)| usize::from(*c) == col)
            {
                self.text.push_str(t);
            } else if cell.len == 1 {
                // ASCII, most of every screen: no UTF-8 check.
                self.text.push(char::from(cell.utf8[0]));
            } else {
                self.text.push_str(cell.text());
            }
            at = col + if cell.wide() { 2 } else { 1 };
        }
        let trimmed = self.text.trim_end().len();
        self.text.truncate(trimmed);
        self.hash = super::row_hash(&self.text);
        self.look = look_step(look, self.hash);
    }

    /// Each cell but the second halves of wide glyphs, left to right: its text (`""`: blank) and
    /// pen.
    pub fn for_each_cell(&self, mut f: impl FnMut(&str, Pen)) {
        for (col, cell) in self.cells.iter().enumerate() {
            if cell.cont() {
                continue;
            }
            let text = if cell.flags & MARKED != 0 {
                self.marks
                    .iter()
                    .find(|(c, _)| usize::from(*c) == col)
                    .map_or("", |(_, t)| t.as_str())
            } else {
                cell.text()
            };
            f(text, cell.pen());
        }
    }

    /// The cells as `Grid::row_cells` gives them.
    pub fn cells<'a>(&'a self, out: &mut Vec<GridCell<'a>>) {
        for (col, cell) in self.cells.iter().enumerate() {
            if cell.cont() {
                continue;
            }
            let col = u16::try_from(col).unwrap_or(u16::MAX);
            let text = if cell.flags & MARKED != 0 {
                self.marks
                    .iter()
                    .find(|(c, _)| *c == col)
                    .map_or("", |(_, t)| t.as_str())
            } else {
                cell.text()
            };
            out.push(GridCell {
                col,
                text,
                attrs: CellAttrs {
                    dim: cell.flags & DIM != 0,
                    fg: cell.fg,
                    inverse: cell.flags & INVERSE != 0,
                },
            });
        }
    }
}
