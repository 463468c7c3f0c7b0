//! The engine's durable side: one transaction per tick for its events and the rows of the panes
//! they touched (events of a failed commit are held and retried; nothing unstored is published),
//! and event-log retention (by age and by count) in small steps after a committed tick.

use super::Engine;
use crate::server::store::PaneRow;
use std::collections::BTreeSet;
use std::time::{Duration, Instant, SystemTime};

/// Events one pruning step deletes at most: a step costs about one tick's own transaction.
const PRUNE_BATCH: usize = 1000;
/// How often the log is checked for events past retention once it is caught up (or every half
/// retention, when that is shorter).
const PRUNE_EVERY: Duration = Duration::from_secs(60);

impl Engine {
    /// One small step of event-log retention, after a committed tick: at most [`PRUNE_BATCH`]
    /// events, again next tick while there are more, else a minute later — or as soon as a
    /// count-capped log may have passed its cap.
    pub(super) fn prune_step(&mut self) {
        let keep = self.retention;
        let Some(store) = self.store.as_mut().filter(|_| !keep.keeps_all()) else {
            return;
        };
        let now = Instant::now();
        let batch = u64::try_from(PRUNE_BATCH).unwrap_or(u64::MAX);
        let past_cap = keep
            .events
            .is_some_and(|cap| self.logged_since_prune >= cap.clamp(1, batch));
        if now < self.prune_due && !past_cap {
            return;
        }
        self.logged_since_prune = 0;
        let before = keep.age.map(|age| {
            SystemTime::now()
                .checked_sub(age)
                .unwrap_or(SystemTime::UNIX_EPOCH)
        });
        let later = now + PRUNE_EVERY.min(keep.age.map_or(PRUNE_EVERY, |age| age / 2));
        self.prune_due = match store.prune(before, keep.events, PRUNE_BATCH) {
            Ok(n) if n == PRUNE_BATCH => now,
            Ok(_) => later,
            Err(e) => {
                eprintln!("lookout: {e}");
                later
            }
        };
    }

    /// Writes every unstored event and the rows of the panes they touched in one transaction;
    /// true when it committed (or there is no store). Logs when the store starts and stops failing.
    pub(super) fn persist(&mut self) -> bool {
        let Some(store) = self.store.as_mut() else {
            return true;
        };
        let events = &self.unstored;
        let touched: BTreeSet<&str> = events.iter().map(|e| &*e.pane).collect();
        let rows: Vec<PaneRow> = touched
            .into_iter()
            .filter_map(|pane| {
                let kept = crate::panes::kept(&self.world, pane)?;
                Some(PaneRow {
                    pane,
                    kind: kept.kind,
                    lifecycle: kept.lifecycle,
                    attention: kept.attention,
                    labels: kept.labels,
                })
            })
            .collect();
        // One bad write never stops the tick: the state stays in memory, its events are held, and
        // the next tick writes them again.
        match store.write_tick(events, &rows) {
            Ok(()) => {
                self.logged_since_prune += u64::try_from(events.len()).unwrap_or(u64::MAX);
                if self.storage_error.take().is_some() {
                    eprintln!(
                        "lookout: the database commits again; {} held event(s) stored",
                        events.len()
                    );
                }
                true
            }
            Err(e) => {
                let reason = e.to_string();
                if self.storage_error.as_deref() != Some(&reason) {
                    eprintln!(
                        "lookout: {reason}; reports are answered `storage` and events held until it commits"
                    );
                }
                self.storage_error = Some(reason);
                false
            }
        }
    }
}
