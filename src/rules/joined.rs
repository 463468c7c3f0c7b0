//! [`Joined`]: a screen's rows kept as one text, so that a region (§2.2) is a slice of it rather
//! than a copy of its rows (issue 12). Kept twice over: every row (`full`, a blank row an empty
//! line: what `screen` and `after_last_rule` read), and the non-blank rows alone (`dense`: what
//! `bottom`, `top` and `last_line` read, which skip blank rows). Both are laid out again only
//! from the first row that changed, so a spinner redraw near the bottom rewrites a few rows.
//!
//! Pure data: the grids that keep their rows rendered (`terminal::Terminal`,
//! `components::RowGrid`) hold one and hand it to the matcher through `Grid::joined`.

/// Where one row sits in both texts.
#[derive(Debug, Clone, Copy, Default)]
struct At {
    /// Its start in `full`.
    full: u32,
    /// Its start in `dense` (a blank row: where the next non-blank row starts).
    dense: u32,
    /// Its length (0: blank).
    len: u32,
}

/// A screen's rows (trailing whitespace trimmed, no `\n` in a row) as one text, each row
/// followed by `\n`: every row, and the non-blank ones alone.
#[derive(Debug, Clone, Default)]
pub struct Joined {
    full: String,
    dense: String,
    at: Vec<At>,
    /// The non-blank rows, top down.
    lines: Vec<u16>,
}

impl Joined {
    /// Lays the rows out again from row `from` on: `rows` are the texts of rows `from..`, to the
    /// bottom of the screen (rows before `from` are as they were laid out).
    pub fn relayout<'r>(&mut self, from: usize, rows: impl Iterator<Item = &'r str>) {
        let from = from.min(self.at.len());
        let keep = self.at.get(from).copied().unwrap_or(At {
            full: len32(&self.full),
            dense: len32(&self.dense),
            len: 0,
        });
        self.full.truncate(keep.full as usize);
        self.dense.truncate(keep.dense as usize);
        self.at.truncate(from);
        let before = self.lines.partition_point(|&r| usize::from(r) < from);
        self.lines.truncate(before);
        for (r, text) in (from..).zip(rows) {
            self.at.push(At {
                full: len32(&self.full),
                dense: len32(&self.dense),
                len: len32(text),
            });
            self.full.push_str(text);
            self.full.push('\n');
            if !text.is_empty() {
                self.dense.push_str(text);
                self.dense.push('\n');
                self.lines.push(u16::try_from(r).unwrap_or(u16::MAX));
            }
        }
    }

    /// The number of rows laid out.
    pub fn rows(&self) -> usize {
        self.at.len()
    }

    /// Row `r`'s text (`""` past the screen).
    pub fn row(&self, r: usize) -> &str {
        let at = self.at.get(r).copied().unwrap_or_default();
        self.full
            .get(at.full as usize..(at.full + at.len) as usize)
            .unwrap_or("")
    }

    /// Rows `first..=last` joined by `\n` (blank rows as empty lines).
    pub fn full(&self, first: usize, last: usize) -> &str {
        let (a, b) = self.full_range(first, last);
        self.full_text(a, b)
    }

    /// Where rows `first..=last` are in the text of every row (an empty range if none).
    pub fn full_range(&self, first: usize, last: usize) -> (usize, usize) {
        match (self.at.get(first), self.at.get(last)) {
            (Some(a), Some(b)) if first <= last => (a.full as usize, (b.full + b.len) as usize),
            _ => (0, 0),
        }
    }

    /// Bytes `start..end` of the text of every row.
    pub fn full_text(&self, start: usize, end: usize) -> &str {
        self.full.get(start..end).unwrap_or("")
    }

    /// The non-blank rows, top down.
    pub fn lines(&self) -> &[u16] {
        &self.lines
    }

    /// Non-blank rows `first..=last` (indices into [`Joined::lines`]) joined by `\n`.
    pub fn dense(&self, first: usize, last: usize) -> &str {
        let (a, b) = self.dense_range(first, last);
        self.dense_text(a, b)
    }

    /// Where non-blank rows `first..=last` are in the text of the non-blank rows.
    pub fn dense_range(&self, first: usize, last: usize) -> (usize, usize) {
        let at = |i: usize| {
            let r = usize::from(*self.lines.get(i)?);
            self.at.get(r)
        };
        match (at(first), at(last)) {
            (Some(a), Some(b)) if first <= last => (a.dense as usize, (b.dense + b.len) as usize),
            _ => (0, 0),
        }
    }

    /// Bytes `start..end` of the text of the non-blank rows.
    pub fn dense_text(&self, start: usize, end: usize) -> &str {
        self.dense.get(start..end).unwrap_or("")
    }

    /// Heap bytes held (the memory figure of the benches).
    pub fn heap_bytes(&self) -> usize {
        self.full.capacity()
            + self.dense.capacity()
            + self.at.capacity() * std::mem::size_of::<At>()
            + self.lines.capacity() * std::mem::size_of::<u16>()
    }
}

fn len32(s: &str) -> u32 {
    u32::try_from(s.len()).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn laid(rows: &[&str]) -> Joined {
        let mut j = Joined::default();
        j.relayout(0, rows.iter().copied());
        j
    }

    #[test]
    fn both_texts_and_each_row() {
        let j = laid(&["a", "", "bb", "ccc", ""]);
        assert_eq!(j.rows(), 5);
        assert_eq!(j.full(0, 3), "a\n\nbb\nccc");
        assert_eq!(j.full(1, 1), "");
        assert_eq!(j.full(3, 1), "");
        assert_eq!(j.lines(), &[0, 2, 3]);
        assert_eq!(j.dense(0, 2), "a\nbb\nccc");
        assert_eq!(j.dense(1, 2), "bb\nccc");
        assert_eq!(j.dense(0, 9), "");
        assert_eq!(
            [j.row(0), j.row(1), j.row(3), j.row(9)],
            ["a", "", "ccc", ""]
        );
    }

    #[test]
    fn a_relayout_from_a_row_is_a_layout_from_the_top() {
        let old = ["x", "", "y", "z", "", "w"];
        let new = ["x", "", "Y2", "", "", "w", "v"];
        // (rows 0 and 1 are the same in both: a relayout from any of rows 0..=2)
        for from in 0..=2 {
            let mut j = laid(&old);
            j.relayout(from, new[from..].iter().copied());
            let fresh = laid(&new);
            assert_eq!(j.full(0, 6), fresh.full(0, 6), "from {from}");
            assert_eq!(j.lines(), fresh.lines(), "from {from}");
            assert_eq!(j.dense(0, 3), fresh.dense(0, 3), "from {from}");
            assert_eq!(j.rows(), 7);
        }
        let mut shorter = laid(&old);
        shorter.relayout(2, ["y"].into_iter());
        assert_eq!((shorter.rows(), shorter.full(0, 2)), (3, "x\n\ny"));
    }
}
