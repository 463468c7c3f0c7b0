//! `ScreenCells`: the cells each pane's screen will hold once its queued resizes apply, and their
//! total — the bound on the screen memory one world holds (see docs/behaviour.md, Bad input).
//! Written only by the
//! embedder API in `panes` (open, resize, close), before anything is queued; no system reads it.

use crate::components::{MAX_TOTAL_CELLS, PaneId, SizeError, check_size};
use bevy_ecs::resource::Resource;
use std::collections::HashMap;

/// Cells promised to each pane's screen, and their sum.
#[derive(Resource, Debug)]
pub struct ScreenCells {
    per_pane: HashMap<PaneId, u64>,
    total: u64,
    limit: u64,
}

impl Default for ScreenCells {
    fn default() -> Self {
        ScreenCells::with_limit(MAX_TOTAL_CELLS)
    }
}

impl ScreenCells {
    /// A budget of `limit` cells instead of [`MAX_TOTAL_CELLS`]: for an embedder that sized its
    /// machine for more (the benches' 10k and 100k panes), set before opening panes.
    pub fn with_limit(limit: u64) -> Self {
        ScreenCells {
            per_pane: HashMap::new(),
            total: 0,
            limit,
        }
    }

    /// Reserves `rows × cols` for `pane` (replacing what it held), or says why not. A pane may
    /// always shrink, even while the total is over the bound.
    pub fn reserve(&mut self, pane: &PaneId, rows: u16, cols: u16) -> Result<(), SizeError> {
        let asked = check_size(rows, cols)?;
        let held = self.per_pane.get(pane).copied().unwrap_or(0);
        let in_use = self.total - held;
        if asked > held && in_use + asked > self.limit {
            return Err(SizeError::OverBudget { asked, in_use });
        }
        self.per_pane.insert(pane.clone(), asked);
        self.total = in_use + asked;
        Ok(())
    }

    /// Frees what `pane` held.
    pub fn release(&mut self, pane: &PaneId) {
        if let Some(held) = self.per_pane.remove(pane) {
            self.total -= held;
        }
    }

    /// Cells held by every pane together.
    pub fn total(&self) -> u64 {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::{MAX_COLS, MAX_ROWS};

    #[test]
    fn the_total_is_bounded_and_shrinking_is_always_allowed() {
        let mut cells = ScreenCells::default();
        let big = u64::from(MAX_ROWS) * u64::from(MAX_COLS);
        let fit = MAX_TOTAL_CELLS / big;
        for i in 0..fit {
            let pane = PaneId::new(&format!("p{i}"));
            cells.reserve(&pane, MAX_ROWS, MAX_COLS).expect("fits");
        }
        let last = PaneId::new("last");
        assert!(matches!(
            cells.reserve(&last, MAX_ROWS, MAX_COLS),
            Err(SizeError::OverBudget { .. })
        ));
        let first = PaneId::new("p0");
        cells.reserve(&first, 24, 80).expect("shrink");
        cells.release(&first);
        assert_eq!(cells.total(), (fit - 1) * big);
        assert!(matches!(
            cells.reserve(&last, MAX_ROWS + 1, 1),
            Err(SizeError::OutOfRange { .. })
        ));
    }
}
