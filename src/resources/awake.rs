//! `Awake`: the panes with news this tick, so that the stages after Ingest visit those and no
//! other (an unchanged pane costs nothing per tick). A pane is awake when
//! - an ingest system changed it (output, a resize, a process event, an accepted hook report),
//!   or `panes::open` spawned it;
//! - a timer it set is due: a rule's time condition flipping (`Wake`, set by `evaluate_rules`)
//!   or an idle settle ending (set by `apply_transitions`). The earliest timer is also when the
//!   embedder should tick next (`panes::next_due`), so a settled turn shows `done` when it
//!   settles, not at the next periodic tick;
//! - `pane.seen` was asked of it (`apply_transitions`).
//!
//! `evaluate_rules` adds the due timers and sorts the list; `emit_events` empties it. A system an
//! embedder adds to the schedule that changes a pane must wake it too.

use bevy_ecs::entity::Entity;
use bevy_ecs::resource::Resource;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

/// This tick's panes with news, and every pane's timers (earliest first; a timer its pane no
/// longer needs only costs it one visit).
#[derive(Resource, Debug, Default)]
pub struct Awake {
    panes: Vec<Entity>,
    timers: BinaryHeap<Reverse<(Instant, Entity)>>,
}

impl Awake {
    /// `pane` has news this tick.
    pub fn wake(&mut self, pane: Entity) {
        self.panes.push(pane);
    }

    /// `pane` is to be looked at again at `at`, news or not.
    pub fn wake_at(&mut self, at: Instant, pane: Entity) {
        self.timers.push(Reverse((at, pane)));
    }

    /// Adds the panes whose timers are due by `now`; then each pane is listed once, in entity
    /// order.
    pub fn gather(&mut self, now: Instant) {
        while let Some(&Reverse((at, pane))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            self.panes.push(pane);
        }
        self.panes.sort_unstable();
        self.panes.dedup();
    }

    /// Wakes `panes` too, keeping each listed once, in entity order (after [`Awake::gather`]).
    pub fn join(&mut self, panes: &[Entity]) {
        if panes.is_empty() {
            return;
        }
        self.panes.extend_from_slice(panes);
        self.panes.sort_unstable();
        self.panes.dedup();
    }

    /// The panes awake this tick (once [`Awake::gather`] ran: each once).
    pub fn panes(&self) -> &[Entity] {
        &self.panes
    }

    /// Takes the list to walk while timers are set; give it back with [`Awake::put`].
    pub fn take(&mut self) -> Vec<Entity> {
        std::mem::take(&mut self.panes)
    }

    /// Gives back the list [`Awake::take`] took, with any pane woken meanwhile.
    pub fn put(&mut self, mut panes: Vec<Entity>) {
        panes.append(&mut self.panes);
        self.panes = panes;
    }

    /// The earliest timer: when a pane's answer may change with no new input.
    pub fn next_timer(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse((at, _))| *at)
    }

    /// Ends the tick: no pane has news any more.
    pub fn clear(&mut self) {
        self.panes.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn due_timers_join_the_news_once_each() {
        let mut world = bevy_ecs::world::World::new();
        let (a, b, c) = (
            world.spawn_empty().id(),
            world.spawn_empty().id(),
            world.spawn_empty().id(),
        );
        let now = Instant::now();
        let mut awake = Awake::default();
        awake.wake(b);
        awake.wake(a);
        awake.wake_at(now, b);
        awake.wake_at(now + Duration::from_secs(1), c);
        awake.gather(now);
        let mut both = [a, b];
        both.sort_unstable();
        assert_eq!(awake.panes(), &both);
        assert_eq!(awake.next_timer(), Some(now + Duration::from_secs(1)));
        awake.clear();
        awake.gather(now + Duration::from_secs(1));
        assert_eq!(awake.panes(), &[c]);
        assert_eq!(awake.next_timer(), None);
    }
}
