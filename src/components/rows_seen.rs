//! `RowsSeen`: the rows of the pane's screen its last evaluation read, by hash, and when they last
//! changed. "The screen changed" (§2.2 `quiet_ms`/`changed_within_ms`, evaluating a pane again)
//! means one of those rendered rows, the cursor's row when it was read, or the screen's size or
//! alternate-screen flag changed — not that bytes arrived: a redraw of the same screen neither
//! re-evaluates the pane nor delays its quiet time (issue 12). Written by `evaluate_rules` only.
//!
//! Sound because an evaluation is a function of the rows it reads: if none of them changed, the
//! next one reads the same rows and reaches the same rule.

use crate::rules::Grid;
use crate::rules::regions::RowBuf;
use bevy_ecs::component::Component;
use std::time::Instant;

/// The rows an evaluation read and when they last changed.
#[derive(Component, Debug, Default)]
pub struct RowsSeen {
    /// `(row, hash)` of every row the last evaluation read, in row order; empty before the first.
    rows: Vec<(u16, u64)>,
    /// The cursor, if the last evaluation read the cursor's row.
    cursor: Option<(u16, u16)>,
    alternate: bool,
    size: (u16, u16),
    /// When a row the evaluation reads last changed (`None` until the screen has been read).
    pub changed_at: Option<Instant>,
}

impl RowsSeen {
    /// Whether `grid` still shows what the last evaluation read, rendering those rows into `buf`
    /// (started for `grid`; the evaluation that may follow reuses them).
    pub fn same(&self, grid: &dyn Grid, buf: &mut RowBuf) -> bool {
        if self.rows.is_empty()
            || self.size != grid.size()
            || self.alternate != grid.alternate_screen()
            || self.cursor.is_some_and(|c| c != grid.cursor())
        {
            return false;
        }
        // Render the rows in runs of neighbours, then compare.
        let mut i = 0;
        while i < self.rows.len() {
            let first = self.rows[i].0;
            let mut j = i;
            while j + 1 < self.rows.len() && self.rows[j + 1].0 == self.rows[j].0 + 1 {
                j += 1;
            }
            buf.render(grid, usize::from(first), usize::from(self.rows[j].0));
            i = j + 1;
        }
        self.rows
            .iter()
            .all(|&(r, h)| buf.hash(usize::from(r)) == h)
    }

    /// Remembers what the evaluation that just ran on `grid` read.
    pub fn record(&mut self, grid: &dyn Grid, buf: &RowBuf) {
        self.rows.clear();
        self.rows.extend(
            buf.reads()
                .filter_map(|(r, h)| Some((u16::try_from(r).ok()?, h))),
        );
        self.cursor = buf.cursor_read().then(|| grid.cursor());
        self.alternate = grid.alternate_screen();
        self.size = grid.size();
    }

    /// Forgets what was read: the next look counts as a change.
    pub fn forget(&mut self) {
        self.rows.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Rows;

    fn parser(text: &str) -> vt100::Parser {
        let mut p = vt100::Parser::new(
            std::num::NonZeroU16::new(6).expect("rows"),
            std::num::NonZeroU16::new(30).expect("cols"),
            0,
        );
        p.process(text.as_bytes());
        p
    }

    /// Reads the bottom two rows of `p` as an evaluation would, and records them.
    fn read_bottom(p: &vt100::Parser, seen: &mut RowsSeen, buf: &mut RowBuf) {
        buf.begin(6);
        let mut rows = Rows::new(p.screen(), buf);
        rows.get(4);
        rows.get(5);
        seen.record(p.screen(), buf);
    }

    #[test]
    fn only_a_change_to_a_read_row_counts() {
        let mut p = parser("top\r\n\r\n\r\n\r\nstatus 1\r\nprompt");
        let (mut seen, mut buf) = (RowsSeen::default(), RowBuf::default());
        buf.begin(6);
        assert!(!seen.same(p.screen(), &mut buf), "nothing read yet");
        read_bottom(&p, &mut seen, &mut buf);
        // The same status drawn again, and a change to a row no rule read: no change.
        p.process(b"\x1b[5;1H\x1b[2Kstatus 1\x1b[1;1Hother");
        buf.begin(6);
        assert!(seen.same(p.screen(), &mut buf));
        p.process(b"\x1b[5;1H\x1b[2Kstatus 2");
        buf.begin(6);
        assert!(!seen.same(p.screen(), &mut buf));
        read_bottom(&p, &mut seen, &mut buf);
        p.process(b"\x1b[?1049h");
        buf.begin(6);
        assert!(!seen.same(p.screen(), &mut buf), "the alternate screen");
    }
}
