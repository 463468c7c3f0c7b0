//! `agent.wait` waiters: each is answered at once when its pane already is in one of its
//! states, else waits for the pane to transition into one (after a given event, if asked), or for
//! its deadline. Subscribers themselves are plain `Peer`s in the engine; this file holds the
//! bookkeeping that needs more than a list. Lives on the world thread; touches no I/O but the
//! peers' queues.

use crate::components::LifecycleState;
use crate::panes::{Badge, PaneState};
use crate::peer::Peer;
use crate::protocol::params::AgentWait;
use crate::protocol::{RequestId, WireError};
use std::collections::{HashMap, VecDeque};
use std::time::Instant;

#[derive(Debug)]
struct Waiter {
    id: RequestId,
    peer: Peer,
    pane: String,
    until: Vec<LifecycleState>,
    /// Only a transition numbered after this event counts.
    after: Option<u64>,
    deadline: Instant,
}

/// How many of a pane's latest transitions are kept for a wait that comes after them.
const RECENT: usize = 8;

/// Every pending `agent.wait`, and each pane's latest transitions.
#[derive(Debug, Default)]
pub struct Waiters {
    waiting: Vec<Waiter>,
    /// Pane → its latest lifecycle transitions (event number, new lifecycle), oldest first.
    recent: HashMap<String, VecDeque<(u64, LifecycleState)>>,
}

impl Waiters {
    /// Registers a wait, or answers it at once: without `after` when the pane already is in
    /// one of the states (as its badge says: `done` only while unread, `idle` also for a done
    /// turn already seen); with `after` when a transition numbered later already reached one.
    pub fn add(
        &mut self,
        id: RequestId,
        peer: Peer,
        wait: AgentWait,
        state: PaneState,
        deadline: Instant,
    ) {
        let now = match wait.after {
            None => wait.until.contains(&Badge::of(&state).lifecycle()),
            Some(after) => self.recent.get(&wait.pane).is_some_and(|moves| {
                moves
                    .iter()
                    .any(|(seq, to)| *seq > after && wait.until.contains(to))
            }),
        };
        if now {
            peer.reply(&id, Ok(&state));
            return;
        }
        self.waiting.push(Waiter {
            id,
            peer,
            pane: wait.pane,
            until: wait.until,
            after: wait.after,
            deadline,
        });
    }

    /// The earliest deadline, so the world thread wakes for it between ticks.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.waiting.iter().map(|w| w.deadline).min()
    }

    /// `pane` moved to `to` (event `seq`): answer (with `state`) every waiter for it that waited
    /// for `to`.
    pub fn reached(&mut self, pane: &str, to: LifecycleState, seq: u64, state: Option<PaneState>) {
        let moves = self.recent.entry(pane.to_owned()).or_default();
        if moves.len() == RECENT {
            moves.pop_front();
        }
        moves.push_back((seq, to));
        self.waiting.retain(|w| {
            if w.pane != pane || !w.until.contains(&to) || w.after.is_some_and(|a| seq <= a) {
                return true;
            }
            match &state {
                Some(s) => w.peer.reply(&w.id, Ok(s)),
                None => w.peer.fail(&w.id, WireError::unknown_pane(pane)),
            };
            false
        });
    }

    /// The pane was closed: nobody will see it transition.
    pub fn pane_closed(&mut self, pane: &str) {
        self.recent.remove(pane);
        self.waiting.retain(|w| {
            if w.pane != pane {
                return true;
            }
            w.peer.fail(
                &w.id,
                WireError::new(
                    "unknown_pane",
                    format!("pane `{pane}` was closed while waiting"),
                ),
            );
            false
        });
    }

    /// Answers `timeout` to every waiter whose deadline has passed.
    pub fn expire(&mut self, now: Instant) {
        self.waiting.retain(|w| {
            if w.deadline > now {
                return true;
            }
            let until: Vec<&str> = w.until.iter().map(|s| s.name()).collect();
            let message = format!(
                "pane `{}` did not become {} in time",
                w.pane,
                until.join(" or ")
            );
            w.peer.fail(&w.id, WireError::new("timeout", message));
            false
        });
    }
}
