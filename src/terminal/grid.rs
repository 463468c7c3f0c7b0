//! What a screen is to everything that reads one: the [`Grid`] trait (size, rows as text, cursor,
//! alternate flag, each cell's text and attributes), implemented by lookout's own [`Terminal`]
//! and by an embedder's rows (`components::RowGrid`), and the row and look hashes readers use to
//! tell a row unchanged.
//!
//! [`Terminal`]: super::Terminal

use super::Colour;

/// What a reader of the input box (composer detection) needs of one cell besides its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellAttrs {
    /// Dim/faint (SGR 2): placeholder text.
    pub dim: bool,
    /// Foreground colour (indexed or truecolor).
    pub fg: Colour,
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

/// Folds `bits` into a look hash (`Grid::look_hash`).
pub(crate) fn look_step(h: u64, bits: u64) -> u64 {
    (h.rotate_left(5) ^ bits).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
}

/// A colour as bits for a look hash (distinct for every colour).
pub(crate) fn colour_bits(c: Colour) -> u64 {
    match c {
        Colour::Default => 0,
        Colour::Idx(i) => 0x100 | u64::from(i),
        Colour::Rgb(r, g, b) => 0x0100_0000 | u64::from(r) << 16 | u64::from(g) << 8 | u64::from(b),
    }
}

/// A row's hash (FxHash-style over 8-byte words, never 0).
pub(crate) fn row_hash(row: &str) -> u64 {
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
