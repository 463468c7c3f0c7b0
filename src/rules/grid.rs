//! The screen as the matcher reads it: the [`Grid`] trait (rows as text, cursor, alternate flag,
//! cell attributes) with its vt100 implementation, and [`RowBuf`], the rows of one screen
//! rendered into one reusable buffer with a hash each. The embedder's rows implement
//! `Grid` in `components::RowGrid`.

/// What a reader of the input box (composer detection) needs of one cell besides its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellAttrs {
    /// Dim/faint (SGR 2): placeholder text.
    pub dim: bool,
    /// Foreground colour (indexed or truecolor).
    pub fg: crate::terminal::Colour,
    /// Reverse video (SGR 7): how many TUIs draw their own cursor.
    pub inverse: bool,
}

/// One cell of a row as [`Grid::row_cells`] gives it.
#[derive(Debug, Clone, Copy)]
pub struct GridCell<'a> {
    /// Its column.
    pub col: u16,
    /// Its text (`""`: blank).
    pub text: &'a str,
    /// Its attributes.
    pub attrs: CellAttrs,
}

/// A screen the matcher can read: its size, rows as text, the cursor, the alternate-screen flag,
/// and each cell's text and attributes.
pub trait Grid {
    /// (rows, columns).
    fn size(&self) -> (u16, u16);
    /// Appends the text of rows `first..=last` to `out`, each row followed by `\n` (the text may
    /// keep trailing blanks; a row never holds a `\n`). Rows past the screen are left out.
    fn write_rows(&self, first: u16, last: u16, out: &mut String);
    /// The cursor (row, column).
    fn cursor(&self) -> (u16, u16);
    /// Whether the alternate screen is in use.
    fn alternate_screen(&self) -> bool;
    /// The cells of row `row`, every column left to right, appended to `out`: a wide glyph is
    /// one cell (its second half is left out); a blank cell's text is empty or whitespace.
    /// Nothing past the screen.
    fn row_cells<'a>(&'a self, row: u16, out: &mut Vec<GridCell<'a>>);
    /// Whether the program hid the cursor (it may have parked it anywhere).
    fn cursor_hidden(&self) -> bool {
        false
    }
    /// Row `row`'s text (trailing whitespace trimmed) and its [`hash`], when the grid keeps its
    /// rows rendered: then reading a row is a borrow and nothing is rendered into a [`RowBuf`].
    /// `None` (the default): render through [`Grid::write_rows`].
    fn ready_row(&self, row: u16) -> Option<(&str, u64)> {
        let _ = row;
        None
    }
    /// A hash of row `row`'s look — its text and every cell attribute [`Grid::row_cells`]
    /// gives — when the grid keeps one (readers of attributes use it to tell a row unchanged).
    fn look_hash(&self, row: u16) -> Option<u64> {
        let _ = row;
        None
    }
}

/// Where a rendered row sits in [`RowBuf::text`]; `start == NONE`: not rendered yet.
#[derive(Debug, Clone, Copy)]
pub(super) struct Span {
    start: u32,
    end: u32,
}

const NONE: u32 = u32::MAX;

/// The rendered rows of one screen, reused from one evaluation to the next.
#[derive(Debug, Default)]
pub struct RowBuf {
    text: String,
    pub(super) spans: Vec<Span>,
    /// Each rendered row's hash (never 0); 0: not rendered.
    hashes: Vec<u64>,
    /// Rows read through `Rows::get` since [`RowBuf::begin`] or [`RowBuf::forget_reads`].
    pub(super) read: Vec<bool>,
    /// Whether the cursor's row was asked for.
    pub(super) cursor_read: bool,
}

impl RowBuf {
    /// Starts over for a screen of `rows` rows: nothing rendered, nothing read.
    pub fn begin(&mut self, rows: u16) {
        let n = usize::from(rows);
        self.text.clear();
        self.spans.clear();
        self.spans.resize(
            n,
            Span {
                start: NONE,
                end: 0,
            },
        );
        self.hashes.clear();
        self.hashes.resize(n, 0);
        self.read.clear();
        self.read.resize(n, false);
        self.cursor_read = false;
    }

    /// Forgets which rows were read (rendered rows stay rendered).
    pub fn forget_reads(&mut self) {
        self.read.iter_mut().for_each(|r| *r = false);
        self.cursor_read = false;
    }

    /// Renders rows `first..=last` that are not rendered yet, in as few runs as possible (none,
    /// for a grid with ready rows).
    pub fn render(&mut self, grid: &dyn Grid, first: usize, last: usize) {
        let last = last.min(self.spans.len().saturating_sub(1));
        if grid.ready_row(0).is_some() {
            // Nothing to render: readers borrow the grid's rows (`Rows::get`, `RowBuf::row_in`).
            return;
        }
        let mut r = first;
        while r <= last && r < self.spans.len() {
            if self.spans[r].start != NONE {
                r += 1;
                continue;
            }
            let mut end = r;
            while end < last && self.spans[end + 1].start == NONE {
                end += 1;
            }
            self.render_run(grid, r, end);
            r = end + 1;
        }
    }

    fn render_run(&mut self, grid: &dyn Grid, first: usize, last: usize) {
        let (Ok(a), Ok(b)) = (u16::try_from(first), u16::try_from(last)) else {
            return;
        };
        let mut at = self.text.len();
        grid.write_rows(a, b, &mut self.text);
        for r in first..=last {
            let rest = &self.text[at..];
            let len = rest.find('\n').unwrap_or(rest.len());
            let trimmed = rest[..len].trim_end().len();
            let (start, end) = (at, at + trimmed);
            self.spans[r] = Span {
                start: u32::try_from(start).unwrap_or(NONE - 1),
                end: u32::try_from(end).unwrap_or(NONE - 1),
            };
            self.hashes[r] = hash(&self.text[start..end]);
            at = (at + len + 1).min(self.text.len());
        }
    }

    /// Row `r` as rendered, trailing whitespace trimmed (`""` if not rendered or out of range).
    pub fn row(&self, r: usize) -> &str {
        match self.spans.get(r) {
            Some(s) if s.start != NONE => self
                .text
                .get(s.start as usize..s.end as usize)
                .unwrap_or(""),
            _ => "",
        }
    }

    /// Row `r` of `grid` as text, trailing whitespace trimmed: the grid's ready row, or the row
    /// as rendered here (`""` if not rendered or out of range).
    pub fn row_in<'a>(&'a self, grid: &'a dyn Grid, r: usize) -> &'a str {
        match u16::try_from(r).ok().and_then(|r| grid.ready_row(r)) {
            Some((text, _)) => text,
            None => self.row(r),
        }
    }

    /// Row `r`'s hash, 0 if it was not rendered.
    pub fn hash(&self, r: usize) -> u64 {
        self.hashes.get(r).copied().unwrap_or(0)
    }

    /// Records that row `r` was read (its hash as rendered, if it was).
    pub fn mark_read(&mut self, r: usize) {
        if let Some(read) = self.read.get_mut(r) {
            *read = true;
        }
    }

    /// Records that rows `first..=last` were read.
    pub(super) fn mark_read_run(&mut self, first: usize, last: usize) {
        if let Some(read) = self.read.get_mut(first..=last) {
            read.fill(true);
        }
    }

    /// The rows of `grid` read since the last reset, with their hashes (a ready row's as the
    /// grid keeps it, another's as rendered here).
    pub fn reads<'a>(
        &'a self,
        grid: &'a dyn Grid,
    ) -> impl Iterator<Item = (usize, u64)> + Clone + 'a {
        self.read
            .iter()
            .enumerate()
            .filter(|(_, read)| **read)
            .map(move |(r, _)| {
                let ready = u16::try_from(r).ok().and_then(|r| grid.ready_row(r));
                (r, ready.map_or_else(|| self.hash(r), |(_, hash)| hash))
            })
    }

    /// Whether the cursor's row was read since the last reset.
    pub fn cursor_read(&self) -> bool {
        self.cursor_read
    }
}

/// Folds `bits` into a look hash (`Grid::look_hash`).
pub(crate) fn look_step(h: u64, bits: u64) -> u64 {
    (h.rotate_left(5) ^ bits).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
}

/// A colour as bits for a look hash (distinct for every colour).
pub(crate) fn colour_bits(c: crate::terminal::Colour) -> u64 {
    match c {
        crate::terminal::Colour::Default => 0,
        crate::terminal::Colour::Idx(i) => 0x100 | u64::from(i),
        crate::terminal::Colour::Rgb(r, g, b) => {
            0x0100_0000 | u64::from(r) << 16 | u64::from(g) << 8 | u64::from(b)
        }
    }
}

/// A row's hash (FxHash-style over 8-byte words, never 0).
pub(crate) fn hash(row: &str) -> u64 {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mut h = row.len() as u64;
    let mut words = row.as_bytes().chunks_exact(8);
    for w in &mut words {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(b)).wrapping_mul(K);
    }
    let mut b = [0u8; 8];
    let tail = words.remainder();
    b[..tail.len()].copy_from_slice(tail);
    h = (h.rotate_left(5) ^ u64::from_le_bytes(b)).wrapping_mul(K);
    h | 1
}
