//! `Deadlines`: the earliest instant at which some pane's answer may change with no new input —
//! a `quiet_ms`/`changed_within_ms` condition flipping (`Wake`, written by `evaluate_rules`) or
//! an idle verdict finishing its settle (written by `apply_transitions`). The embedder ticks then
//! (`panes::next_due`), so a settled turn shows `done` when it settles, not at the next periodic
//! tick (issue 12). Each field has one writer; both are recomputed every tick.

use bevy_ecs::resource::Resource;
use std::time::Instant;

/// The earliest time-driven change, by its writer.
#[derive(Resource, Debug, Default, Clone, Copy)]
pub struct Deadlines {
    /// The earliest `Wake` of any pane.
    pub wake: Option<Instant>,
    /// The earliest end of any pane's idle settle.
    pub settle: Option<Instant>,
}

impl Deadlines {
    /// The earlier of the two.
    pub fn next(&self) -> Option<Instant> {
        self.wake.into_iter().chain(self.settle).min()
    }
}

/// `slot` lowered to `at` if `at` is earlier.
pub fn earliest(slot: &mut Option<Instant>, at: Instant) {
    if slot.is_none_or(|s| at < s) {
        *slot = Some(at);
    }
}
