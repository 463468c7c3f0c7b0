//! One page of lookout's terminal (the main screen or the alternate one): its rows, the cursor
//! with its saved copy, the scroll region and origin mode, and the cursor motions, scrolls and
//! erases the escape sequences ask for. No scrollback: rows scrolled off the top are gone.
//!
//! The cursor's column may equal the width: the pending wrap after a glyph in the last column
//! (the next glyph wraps; a motion other than a line feed clamps it back).
//!
//! Pure data; `perform` drives it. Rows move by rotation, so a scroll re-renders only the rows
//! it blanks.

use super::row::{Pen, Row};

/// A cursor position.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Pos {
    pub row: u16,
    pub col: u16,
}

/// A page of rows with a cursor.
#[derive(Debug, Clone)]
pub(super) struct Page {
    pub rows: Vec<Row>,
    nrows: u16,
    cols: u16,
    pub pos: Pos,
    saved: Pos,
    origin: bool,
    saved_origin: bool,
    top: u16,
    bottom: u16,
    /// Rows scrolled off the top so far, on the main page (`None` on the alternate one): a page
    /// that grows taller gets that many blank rows back above, the cursor moving down with
    /// them, as a terminal pulls its history back in.
    scrolled_off: Option<usize>,
}

impl Page {
    /// A blank page; the main one (`main`) has its rows, the alternate one gets them from
    /// [`Page::allocate`].
    pub fn new(rows: u16, cols: u16, main: bool) -> Self {
        let mut page = Page {
            rows: Vec::new(),
            nrows: rows,
            cols,
            pos: Pos::default(),
            saved: Pos::default(),
            origin: false,
            saved_origin: false,
            top: 0,
            bottom: rows.saturating_sub(1),
            scrolled_off: main.then_some(0),
        };
        if main {
            page.rows = (0..rows).map(|_| Row::new(cols)).collect();
        }
        page
    }

    /// Gives an unallocated page its rows (blank).
    pub fn allocate(&mut self) {
        if self.rows.is_empty() {
            self.rows = (0..self.nrows).map(|_| Row::new(self.cols)).collect();
        }
    }

    fn last_row(&self) -> u16 {
        self.nrows.saturating_sub(1)
    }

    pub fn cols(&self) -> u16 {
        self.cols
    }

    pub fn nrows(&self) -> u16 {
        self.nrows
    }

    /// The row the cursor is on.
    pub fn row(&mut self) -> Option<&mut Row> {
        self.rows.get_mut(usize::from(self.pos.row))
    }

    /// Back to a blank page with the cursor home and no scroll region.
    pub fn clear(&mut self) {
        self.pos = Pos::default();
        self.saved = Pos::default();
        self.origin = false;
        self.saved_origin = false;
        self.top = 0;
        self.bottom = self.last_row();
        self.rows.iter_mut().for_each(Row::reset);
    }

    pub fn save_cursor(&mut self) {
        self.saved = self.pos;
        self.saved_origin = self.origin;
    }

    /// Back to the saved cursor (a wrap that was pending when it was saved is not).
    pub fn restore_cursor(&mut self) {
        self.pos = self.saved;
        self.origin = self.saved_origin;
        self.clamp_col();
    }

    // --- cursor motion -------------------------------------------------------------------------

    fn in_region(&self) -> bool {
        (self.top..=self.bottom).contains(&self.pos.row)
    }

    /// Clamps the row to the top of the region (when `limit`); returns by how many rows.
    fn clamp_top(&mut self, limit: bool) -> u16 {
        if limit && self.pos.row < self.top {
            let over = self.top - self.pos.row;
            self.pos.row = self.top;
            over
        } else {
            0
        }
    }

    /// Clamps the row to the bottom of the region (when `limit`) or of the page; returns by how
    /// many rows.
    fn clamp_bottom(&mut self, limit: bool) -> u16 {
        let bottom = if limit { self.bottom } else { self.last_row() };
        if self.pos.row > bottom {
            let over = self.pos.row - bottom;
            self.pos.row = bottom;
            over
        } else {
            0
        }
    }

    fn clamp_col(&mut self) {
        self.pos.col = self.pos.col.min(self.cols.saturating_sub(1));
    }

    /// CUP: 0-based, inside the region in origin mode.
    pub fn set_pos(&mut self, row: u16, col: u16) {
        let row = if self.origin {
            row.saturating_add(self.top)
        } else {
            row
        };
        self.pos = Pos { row, col };
        self.clamp_top(self.origin);
        self.clamp_bottom(self.origin);
        self.clamp_col();
    }

    pub fn set_origin(&mut self, on: bool) {
        self.origin = on;
        self.set_pos(0, 0);
    }

    /// CUD: a pending wrap is dropped, as by every motion but a line feed.
    pub fn down(&mut self, n: u16) {
        let limit = self.in_region();
        self.pos.row = self.pos.row.saturating_add(n);
        self.clamp_bottom(limit);
        self.clamp_col();
    }

    /// Line feed: down `n`, scrolling the region at its bottom; returns the rows scrolled.
    pub fn down_scroll(&mut self, n: u16) -> u16 {
        let limit = self.in_region();
        self.pos.row = self.pos.row.saturating_add(n);
        let over = self.clamp_bottom(limit);
        if limit {
            self.scroll_up(over);
            over
        } else {
            0
        }
    }

    pub fn up(&mut self, n: u16) {
        let limit = self.in_region();
        self.pos.row = self.pos.row.saturating_sub(n);
        self.clamp_top(limit);
        self.clamp_col();
    }

    /// Reverse index: up `n`, scrolling the region down at its top.
    pub fn up_scroll(&mut self, n: u16) {
        let limit = self.in_region();
        let past_top = n.saturating_sub(self.pos.row);
        self.pos.row = self.pos.row.saturating_sub(n);
        let over = self.clamp_top(limit);
        self.scroll_down(over + past_top);
    }

    pub fn set_row(&mut self, row: u16) {
        self.pos.row = row.min(self.last_row());
    }

    pub fn set_col(&mut self, col: u16) {
        self.pos.col = col;
        self.clamp_col();
    }

    /// Past a glyph: may reach the pending-wrap column (or, on a one-column screen, pass it:
    /// every cell access is bounds-checked, and the next glyph wraps).
    pub fn advance(&mut self, n: u16) {
        self.pos.col = self.pos.col.saturating_add(n);
    }

    pub fn right(&mut self, n: u16) {
        self.pos.col = self.pos.col.saturating_add(n);
        self.clamp_col();
    }

    pub fn left(&mut self, n: u16) {
        self.pos.col = self.pos.col.saturating_sub(n);
    }

    /// HT: to the next multiple of 8, or the last column; none past it (a pending wrap stays).
    pub fn tab(&mut self) {
        if self.pos.col >= self.cols.saturating_sub(1) {
            return;
        }
        self.pos.col -= self.pos.col % 8;
        self.right(8);
    }

    /// Before a glyph `width` wide: wraps to the next line if it does not fit. (Rows carry no
    /// soft-wrap flag: nothing lookout reads depends on it.)
    pub fn wrap_for(&mut self, width: u16) {
        if self.pos.col <= self.cols.saturating_sub(width) {
            return;
        }
        self.pos.col = 0;
        self.down_scroll(1);
    }

    // --- scrolling -----------------------------------------------------------------------------

    fn region(&mut self) -> &mut [Row] {
        let (a, b) = (usize::from(self.top), usize::from(self.bottom));
        let b = b.min(self.rows.len().saturating_sub(1));
        self.rows.get_mut(a..=b).unwrap_or(&mut [])
    }

    /// The region's rows move up `n`; blank rows come in at its bottom.
    pub fn scroll_up(&mut self, n: u16) {
        let from_top = self.top == 0;
        let region = self.region();
        let n = usize::from(n).min(region.len());
        region[..n].iter_mut().for_each(Row::reset);
        region.rotate_left(n);
        if let (true, Some(off)) = (from_top, &mut self.scrolled_off) {
            *off = off.saturating_add(n);
        }
    }

    /// The region's rows move down `n`; blank rows come in at its top.
    pub fn scroll_down(&mut self, n: u16) {
        let region = self.region();
        let n = usize::from(n).min(region.len());
        region.rotate_right(n);
        region[..n].iter_mut().for_each(Row::reset);
    }

    /// The cursor's row to the region's bottom, when the cursor is in the region.
    fn below_cursor(&mut self) -> Option<&mut [Row]> {
        if !self.in_region() {
            return None;
        }
        let (a, b) = (usize::from(self.pos.row), usize::from(self.bottom));
        self.rows.get_mut(a..=b)
    }

    /// IL: `n` blank rows at the cursor, the region below moving down.
    pub fn insert_lines(&mut self, n: u16) {
        if let Some(rows) = self.below_cursor() {
            let n = usize::from(n).min(rows.len());
            rows.rotate_right(n);
            rows[..n].iter_mut().for_each(Row::reset);
        }
    }

    /// DL: `n` rows at the cursor removed, the region below moving up.
    pub fn delete_lines(&mut self, n: u16) {
        if let Some(rows) = self.below_cursor() {
            let n = usize::from(n).min(rows.len());
            rows[..n].iter_mut().for_each(Row::reset);
            rows.rotate_left(n);
        }
    }

    /// DECSTBM (0-based, inclusive): homes the cursor. A region of less than two rows is
    /// ignored, cursor and all.
    pub fn set_region(&mut self, top: u16, bottom: u16) {
        let (top, bottom) = (top.min(self.last_row()), bottom.min(self.last_row()));
        if top < bottom {
            (self.top, self.bottom) = (top, bottom);
            self.set_pos(0, 0);
        }
    }

    // --- erasing -------------------------------------------------------------------------------

    /// EL 0/1/2 on the cursor's row.
    pub fn erase_in_row(&mut self, mode: u16, pen: Pen) {
        let (col, cols) = (self.pos.col, self.cols);
        let Some(row) = self.row() else { return };
        let range = match mode {
            0 => col..cols,
            1 => 0..col.min(cols.saturating_sub(1)) + 1,
            2 => 0..cols,
            _ => return,
        };
        row.erase_range(range.start, range.end, pen);
    }

    /// ED 0/1/2/3.
    pub fn erase_in_page(&mut self, mode: u16, pen: Pen) {
        let at = usize::from(self.pos.row);
        match mode {
            0 => {
                self.rows
                    .iter_mut()
                    .skip(at + 1)
                    .for_each(|r| r.clear_all(pen));
                self.erase_in_row(0, pen);
            }
            1 => {
                self.rows.iter_mut().take(at).for_each(|r| r.clear_all(pen));
                self.erase_in_row(1, pen);
            }
            2 => self.rows.iter_mut().for_each(|r| r.clear_all(pen)),
            // The history is forgotten: growing taller brings nothing back.
            3 => {
                if let Some(off) = &mut self.scrolled_off {
                    *off = 0;
                }
            }
            _ => {}
        }
    }

    /// ECH: `n` cells from the cursor.
    pub fn erase_cells(&mut self, n: u16, pen: Pen) {
        let (col, cols) = (self.pos.col, self.cols);
        if let Some(row) = self.row() {
            row.erase_range(col, col.saturating_add(n).min(cols), pen);
        }
    }

    /// DCH: `n` cells at the cursor removed.
    pub fn delete_cells(&mut self, n: u16) {
        let (col, cols) = (self.pos.col, self.cols);
        if let Some(row) = self.row() {
            row.remove(col, col.saturating_add(n).min(cols));
        }
    }

    /// ICH: `n` blank cells at the cursor.
    pub fn insert_cells(&mut self, n: u16) {
        let col = self.pos.col;
        if let Some(row) = self.row() {
            row.insert(col, n);
        }
    }

    // --- size ----------------------------------------------------------------------------------

    /// A new size: the scroll region resets; a shorter page drops rows from the bottom below the
    /// cursor first, then scrolls the rest off the top; the cursor keeps its place relative to
    /// the bottom.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let (rows, cols) = (rows.max(1), cols.max(1));
        if (rows, cols) == (self.nrows, self.cols) {
            return;
        }
        let old_rows = self.nrows;
        self.top = 0;
        self.bottom = old_rows.saturating_sub(1);
        let (mut pushed, mut pulled) = (0, 0);
        if !self.rows.is_empty() {
            if rows < old_rows {
                let below = old_rows.saturating_sub(self.pos.row + 1);
                pushed = (old_rows - rows).saturating_sub(below);
                self.scroll_up(pushed);
                self.rows.truncate(usize::from(rows));
            } else {
                if let Some(off) = &mut self.scrolled_off {
                    pulled = u16::try_from(*off).unwrap_or(u16::MAX).min(rows - old_rows);
                    *off -= usize::from(pulled);
                }
                let old_cols = self.cols;
                let blank = (0..pulled).map(|_| Row::new(old_cols));
                self.rows.splice(0..0, blank);
                self.rows.resize_with(usize::from(rows), || Row::new(cols));
            }
            self.rows.iter_mut().for_each(|r| r.resize(cols));
        }
        if rows < old_rows {
            self.pos.row = self.pos.row.saturating_sub(pushed);
            self.saved.row = self.saved.row.saturating_sub(pushed).min(rows - 1);
        } else {
            self.pos.row += pulled;
            self.saved.row += pulled;
        }
        (self.nrows, self.cols) = (rows, cols);
        self.pos.col = self.pos.col.min(cols - 1);
        self.saved.col = self.saved.col.min(cols - 1);
        self.bottom = rows - 1;
    }

    /// Re-renders the rows that changed.
    pub fn refresh(&mut self) {
        self.rows.iter_mut().for_each(Row::refresh);
    }
}
