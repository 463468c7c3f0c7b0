//! The `stuck` reminders' timers: which panes are blocked since when, and how many reminders went
//! out — kept in the state directory (`stuck.json`), so a restarted server resumes them for the
//! panes it restores blocked instead of forgetting them. A pane's timer runs from its own `since`
//! (the wall time it became blocked), which the database restores with it. Touches that one file.

use crate::panes::PaneState;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// One blocked pane's timer.
struct Blocked {
    since: SystemTime,
    state: PaneState,
    reminders: u32,
}

/// What is kept on disk per pane: the `since` it was blocked from, and the reminders sent.
#[derive(serde::Serialize, serde::Deserialize, Clone)]
struct Saved {
    since: String,
    reminders: u32,
}

/// Every blocked pane's timer, and the file they are kept in.
pub struct Timers {
    path: PathBuf,
    blocked: HashMap<String, Blocked>,
    /// What the file held at start, for panes not restored yet.
    saved: HashMap<String, Saved>,
}

impl Timers {
    /// The timers kept in `path` (none when it is missing or unreadable).
    pub fn load(path: PathBuf) -> Timers {
        let saved = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        Timers {
            path,
            blocked: HashMap::new(),
            saved,
        }
    }

    /// The pane became blocked (an event): its timer starts.
    pub fn blocked(&mut self, state: PaneState) {
        self.start(state, 0);
    }

    /// The pane was restored blocked after a restart: its timer goes on from its `since`, with
    /// the reminders already sent for that same blocking.
    pub fn resumed(&mut self, state: PaneState) {
        if self.blocked.contains_key(&state.pane) {
            return;
        }
        let sent = self
            .saved
            .remove(&state.pane)
            .filter(|s| s.since == state.since)
            .map_or(0, |s| s.reminders);
        self.start(state, sent);
    }

    /// The pane is no longer blocked, or is gone.
    pub fn ended(&mut self, pane: &str) {
        if self.blocked.remove(pane).is_some() {
            self.save();
        }
    }

    /// The panes due a reminder now (at `first`, and once more at three times it), counted sent.
    pub fn due(&mut self, first: Duration) -> Vec<PaneState> {
        let now = SystemTime::now();
        let due: Vec<PaneState> = self
            .blocked
            .values_mut()
            .filter_map(|b| {
                let next = first * if b.reminders == 0 { 1 } else { 3 };
                let elapsed = now.duration_since(b.since).unwrap_or_default();
                (b.reminders < 2 && elapsed >= next).then(|| {
                    b.reminders += 1;
                    b.state.clone()
                })
            })
            .collect();
        if !due.is_empty() {
            self.save();
        }
        due
    }

    fn start(&mut self, state: PaneState, reminders: u32) {
        let since = crate::event::parse_rfc3339(&state.since).unwrap_or_else(SystemTime::now);
        let pane = state.pane.clone();
        self.blocked.insert(
            pane,
            Blocked {
                since,
                state,
                reminders,
            },
        );
        self.save();
    }

    /// Writes the running timers and those not restored yet (a failure costs at most a repeat).
    fn save(&self) {
        let mut all = self.saved.clone();
        for (pane, b) in &self.blocked {
            let saved = Saved {
                since: b.state.since.clone(),
                reminders: b.reminders,
            };
            all.insert(pane.clone(), saved);
        }
        if let Ok(text) = serde_json::to_string(&all) {
            let _ = std::fs::write(&self.path, text);
        }
    }
}
