//! `agent.wait` waiters (see docs/protocol.md, Methods): each waits for its pane to *transition*
//! into one of its lifecycles,
//! or for its deadline. Subscribers themselves are plain `Peer`s in the engine; this file holds the
//! bookkeeping that needs more than a list. Lives on the world thread; touches no I/O but the
//! peers' queues.

use crate::components::LifecycleState;
use crate::panes::PaneState;
use crate::peer::Peer;
use crate::protocol::{RequestId, WireError};
use std::time::Instant;

#[derive(Debug)]
struct Waiter {
    id: RequestId,
    peer: Peer,
    pane: String,
    until: Vec<LifecycleState>,
    deadline: Instant,
}

/// Every pending `agent.wait`.
#[derive(Debug, Default)]
pub struct Waiters(Vec<Waiter>);

impl Waiters {
    /// Registers a wait.
    pub fn add(
        &mut self,
        id: RequestId,
        peer: Peer,
        pane: String,
        until: Vec<LifecycleState>,
        deadline: Instant,
    ) {
        self.0.push(Waiter {
            id,
            peer,
            pane,
            until,
            deadline,
        });
    }

    /// The earliest deadline, so the world thread wakes for it between ticks.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.0.iter().map(|w| w.deadline).min()
    }

    /// `pane` moved to `to`: answer (with `state`) every waiter for it that waited for `to`.
    pub fn reached(&mut self, pane: &str, to: LifecycleState, state: Option<PaneState>) {
        self.0.retain(|w| {
            if w.pane != pane || !w.until.contains(&to) {
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
        self.0.retain(|w| {
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
        self.0.retain(|w| {
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
