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

/// The rows an evaluation read and when they last changed. Kept small (it is per pane): the read
/// rows as runs of neighbours (a rule reads a few blocks) and one digest of their hashes.
#[derive(Component, Debug, Default)]
pub struct RowsSeen {
    /// `(first, last)` of each run of rows the last evaluation read, top down; empty before the
    /// first.
    runs: Vec<(u16, u16)>,
    /// The hashes of those rows, folded in row order.
    digest: u64,
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
        if self.runs.is_empty()
            || self.size != grid.size()
            || self.alternate != grid.alternate_screen()
            || self.cursor.is_some_and(|c| c != grid.cursor())
        {
            return false;
        }
        for &(first, last) in &self.runs {
            buf.render(grid, usize::from(first), usize::from(last));
        }
        let rows = self
            .runs
            .iter()
            .flat_map(|&(a, b)| usize::from(a)..=usize::from(b));
        digest(rows.map(|r| buf.hash(r))) == self.digest
    }

    /// Remembers what the evaluation that just ran on `grid` read.
    pub fn record(&mut self, grid: &dyn Grid, buf: &RowBuf) {
        self.runs.clear();
        for (r, _) in buf.reads() {
            let Ok(r) = u16::try_from(r) else { break };
            match self.runs.last_mut() {
                Some((_, last)) if *last + 1 == r => *last = r,
                _ => self.runs.push((r, r)),
            }
        }
        self.digest = digest(buf.reads().map(|(_, h)| h));
        self.cursor = buf.cursor_read().then(|| grid.cursor());
        self.alternate = grid.alternate_screen();
        self.size = grid.size();
    }

    /// Forgets what was read: the next look counts as a change.
    pub fn forget(&mut self) {
        self.runs.clear();
    }
}

/// Row hashes folded into one, in order.
fn digest(hashes: impl Iterator<Item = u64>) -> u64 {
    hashes.fold(0, |h, row| {
        (h.rotate_left(5) ^ row).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
    })
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
