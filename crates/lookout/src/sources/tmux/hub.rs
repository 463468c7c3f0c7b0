//! What the control clients of one tmux server report to the source, shared between their reader
//! threads and the source's thread: the bytes each pane printed, which client streams which pane,
//! and whether panes, windows or focus changed; the source waits on it. No I/O.

use std::collections::{HashMap, HashSet};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// What every control client of one tmux server reports, shared with the source.
#[derive(Default)]
pub struct Hub {
    state: Mutex<HubState>,
    wake: Condvar,
}

/// The reports waiting for the source.
#[derive(Default)]
pub struct HubState {
    /// Bytes each pane (`%3`) printed since they were last taken; a capture replaces what came
    /// before it.
    pub output: HashMap<String, Vec<u8>>,
    /// The client that streams each pane (a window in several sessions is streamed once).
    pub owner: HashMap<String, u64>,
    /// Panes, windows or sessions changed (or a client ended): list again.
    pub structure: bool,
    /// A client looks at another pane, window or session: read the focus again.
    pub focus: bool,
    /// Panes whose output waits for the next round (no agent is in charge of them): their output
    /// wakes no one.
    pub deferred: HashSet<String>,
}

impl HubState {
    /// Whether something is to be handled before the next round.
    fn urgent(&self) -> bool {
        self.structure || self.focus || self.output.keys().any(|pane| !self.deferred.contains(pane))
    }
}

impl Hub {
    /// The reports, locked.
    pub fn lock(&self) -> MutexGuard<'_, HubState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until something is reported or `until`; whether something is waiting.
    pub fn wait(&self, until: Instant) -> bool {
        let mut state = self.lock();
        loop {
            if state.urgent() {
                return true;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            state = match self.wake.wait_timeout(state, left) {
                Ok((s, _)) => s,
                Err(e) => e.into_inner().0,
            };
        }
    }

    pub(super) fn report(&self, f: impl FnOnce(&mut HubState)) {
        f(&mut self.lock());
        self.wake.notify_all();
    }

    /// Adds what `pane` printed, if client `id` streams it; wakes the source unless it is deferred.
    pub(super) fn printed(&self, pane: &str, id: u64, bytes: Vec<u8>) {
        let mut state = self.lock();
        if state.owner.get(pane) != Some(&id) {
            return;
        }
        state
            .output
            .entry(pane.to_owned())
            .or_default()
            .extend(bytes);
        let wake = !state.deferred.contains(pane);
        drop(state);
        if wake {
            self.wake.notify_all();
        }
    }
}
