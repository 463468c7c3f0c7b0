//! `RowsSeen`: the rows of the pane's screen its last evaluation read, by hash, and when they last
//! changed. "The screen changed" (`quiet_ms`/`changed_within_ms`, evaluating a pane again)
//! means one of those rendered rows, the cursor's row when it was read, or the screen's size or
//! alternate-screen flag changed — not that bytes arrived: a redraw of the same screen neither
//! re-evaluates the pane nor delays its quiet time. Written by `evaluate_rules` only.
//!
//! Sound because an evaluation is a function of the rows it reads: if none of them changed, the
//! next one reads the same rows and reaches the same rule.

use crate::rules::regions::RowBuf;
use crate::terminal::Grid;
use bevy_ecs::component::Component;
use std::time::Instant;

/// What a reader of a screen read, folded small (it is per pane): the rows as runs of
/// neighbours (a reader reads a few blocks) with one digest of their hashes, and the screen
/// facts it depends on. If none of these changed, the reader would read the same again.
#[derive(Debug, Default)]
pub struct Reads {
    /// `(first, last)` of each run of rows read, top down; empty before the first read.
    runs: Vec<(u16, u16)>,
    /// The hashes of those rows, folded in row order.
    digest: u64,
    /// The cursor, if the reader read it.
    cursor: Option<(u16, u16)>,
    hidden: bool,
    alternate: bool,
    size: (u16, u16),
}

impl Reads {
    /// Whether `grid` still shows what was read, each row's hash taken by `hash` (which may
    /// render the row).
    fn same(&self, grid: &dyn Grid, mut hash: impl FnMut(usize) -> u64) -> bool {
        if self.runs.is_empty()
            || self.size != grid.size()
            || self.alternate != grid.alternate_screen()
            || self.hidden != grid.cursor_hidden()
            || self.cursor.is_some_and(|c| c != grid.cursor())
        {
            return false;
        }
        let rows = self
            .runs
            .iter()
            .flat_map(|&(a, b)| usize::from(a)..=usize::from(b));
        digest(rows.map(&mut hash)) == self.digest
    }

    /// Remembers a read of `grid`: the rows read with their hashes, top down, and whether the
    /// cursor was read.
    fn record(
        &mut self,
        grid: &dyn Grid,
        rows: impl Iterator<Item = (usize, u64)> + Clone,
        cursor: bool,
    ) {
        self.runs.clear();
        for (r, _) in rows.clone() {
            let Ok(r) = u16::try_from(r) else { break };
            match self.runs.last_mut() {
                Some((_, last)) if *last + 1 == r => *last = r,
                _ => self.runs.push((r, r)),
            }
        }
        self.digest = digest(rows.map(|(_, h)| h));
        self.cursor = cursor.then(|| grid.cursor());
        self.hidden = grid.cursor_hidden();
        self.alternate = grid.alternate_screen();
        self.size = grid.size();
    }
}

/// The rows an evaluation read and when they last changed.
#[derive(Component, Debug, Default)]
pub struct RowsSeen {
    reads: Reads,
    /// When a row the evaluation reads last changed (`None` until the screen has been read).
    pub changed_at: Option<Instant>,
}

impl RowsSeen {
    /// Whether `grid` still shows what the last evaluation read, rendering those rows into `buf`
    /// (started for `grid`; the evaluation that may follow reuses them).
    pub fn same(&self, grid: &dyn Grid, buf: &mut RowBuf) -> bool {
        self.reads.same(grid, |r| {
            match u16::try_from(r).ok().and_then(|r| grid.ready_row(r)) {
                Some((_, hash)) => hash,
                None => {
                    buf.render(grid, r, r);
                    buf.hash(r)
                }
            }
        })
    }

    /// Remembers what the evaluation that just ran on `grid` read.
    pub fn record(&mut self, grid: &dyn Grid, buf: &RowBuf) {
        self.reads.record(grid, buf.reads(grid), buf.cursor_read());
    }

    /// Forgets what was read: the next look counts as a change.
    pub fn forget(&mut self) {
        self.reads.runs.clear();
    }
}

/// The rows the last composer read looked at, by their look (text and attributes: a ghost
/// suggestion accepted turns dim text into typed text without changing a letter). Written and
/// read by `read_composer` only: a screen change that left those rows, the cursor and the modes
/// alone does not read the composer again (a spinner redraw above the input box).
#[derive(Component, Debug, Default)]
pub struct ComposerSeen(Reads);

impl ComposerSeen {
    /// Whether `grid` still looks as the last read saw it (never, on a grid without look hashes).
    pub fn same(&self, grid: &dyn Grid) -> bool {
        let mut ready = true;
        let same = self.0.same(grid, |r| {
            let hash = u16::try_from(r).ok().and_then(|r| grid.look_hash(r));
            ready &= hash.is_some();
            hash.unwrap_or(0)
        });
        same && ready
    }

    /// Remembers the rows a read of `grid` looked at (marked read in `buf`).
    pub fn record(&mut self, grid: &dyn Grid, buf: &RowBuf) {
        let looks = buf.reads(grid).map(|(r, _)| {
            let hash = u16::try_from(r).ok().and_then(|r| grid.look_hash(r));
            (r, hash.unwrap_or(0))
        });
        self.0.record(grid, looks, true);
    }

    /// Forgets what was read: the next change reads the composer.
    pub fn forget(&mut self) {
        self.0.runs.clear();
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
    use crate::terminal::Terminal;

    fn parser(text: &str) -> Terminal {
        let mut p = Terminal::new(6, 30);
        p.process(text.as_bytes());
        p
    }

    /// Reads the bottom two rows of `p` as an evaluation would, and records them.
    fn read_bottom(p: &Terminal, seen: &mut RowsSeen, buf: &mut RowBuf) {
        buf.begin(6);
        let mut rows = Rows::new(p, buf);
        rows.get(4);
        rows.get(5);
        seen.record(p, buf);
    }

    #[test]
    fn only_a_change_to_a_read_row_counts() {
        let mut p = parser("top\r\n\r\n\r\n\r\nstatus 1\r\nprompt");
        let (mut seen, mut buf) = (RowsSeen::default(), RowBuf::default());
        buf.begin(6);
        assert!(!seen.same(&p, &mut buf), "nothing read yet");
        read_bottom(&p, &mut seen, &mut buf);
        // The same status drawn again, and a change to a row no rule read: no change.
        p.process(b"\x1b[5;1H\x1b[2Kstatus 1\x1b[1;1Hother");
        buf.begin(6);
        assert!(seen.same(&p, &mut buf));
        p.process(b"\x1b[5;1H\x1b[2Kstatus 2");
        buf.begin(6);
        assert!(!seen.same(&p, &mut buf));
        read_bottom(&p, &mut seen, &mut buf);
        p.process(b"\x1b[?1049h");
        buf.begin(6);
        assert!(!seen.same(&p, &mut buf), "the alternate screen");
    }
}
