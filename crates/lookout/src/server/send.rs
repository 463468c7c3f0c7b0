//! `pane.send` (see docs/protocol.md, `pane.send`): type an orchestrator's text into a pane once,
//! then press Enter — and only Enter again — until something proves the agent took it, and say
//! honestly how it ended (`results::Verdict`).
//!
//! Before anything is typed the pane must exist, have a driver (its source, `pane.drive`), not be
//! dead, and — unless forced — not be blocked (the cursor is in a menu) and have a composer proven
//! empty. Then: type (one `keys` line to the driver), settle (longer for `/` and `$` input, so a
//! completion popup cannot eat the Enter) until the composer shows the text (a screen behind the
//! typing proves nothing), Enter, watch. The composer empty after it showed the text, or a move to
//! working/blocked after that Enter from an idle/done pane, confirms — or, on a working agent
//! known to queue, is queued; text still pending on an idle agent after the last Enter was
//! swallowed. Enter is pressed again only into our own text still in the box: an Enter that
//! opened a menu (a `/model` picker) is never followed by one that would choose in it. The world thread calls in between ticks; state is read through `panes`;
//! keys go out as lines on the driver's connection; a confirmed submit tells the pane a turn
//! started. No I/O of its own.

use crate::components::{ComposerState, LifecycleState};
use crate::event::{Change, Event};
use crate::panes::{self, Liveness, PaneState};
use crate::peer::Peer;
use crate::protocol::params::{Keys, PaneSend};
use crate::protocol::results::{Sent, Verdict};
use crate::protocol::{RequestId, WireError, keys_line};
use bevy_ecs::world::World;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How many times Enter is pressed at most.
const MAX_ENTERS: u32 = 3;
/// How long one Enter is watched for a sign before the next.
const WATCH: Duration = Duration::from_millis(1200);
/// The pause between typing and Enter (the program reads the text first).
const SETTLE: Duration = Duration::from_millis(150);
/// The pause before Enter for `/command` and `$skill` input, whose completion popup opens first.
const SETTLE_POPUP: Duration = Duration::from_millis(700);
/// How long a send waits for the pane's source to drive it.
const DRIVER_WAIT: Duration = Duration::from_secs(2);
/// How long the first Enter waits for the typed text to show in the composer.
const SHOW_MAX: Duration = Duration::from_secs(2);
/// How long a `submit: false` send waits for the composer to show the text.
const SHOW: Duration = Duration::from_millis(800);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No source drives the pane yet (one that just opened it is still connecting its driver):
    /// refused `no_driver` at this instant.
    Driverless(Instant),
    /// The text's keys line is out; waiting for `pane.typed`.
    Typing(u64),
    /// Typed; Enter is due at this instant.
    Settling(Instant),
    /// An Enter's keys line is out.
    Entering(u64),
    /// Enter was pressed; watching until this instant.
    Watching(Instant),
}

struct Sending {
    id: RequestId,
    peer: Peer,
    request: PaneSend,
    deadline: Instant,
    baseline: LifecycleState,
    phase: Phase,
    enters: u32,
    /// The pane moved to working or blocked after an Enter.
    moved: bool,
    /// The composer showed the typed text (before an Enter): an empty one later is proof.
    seen_pending: bool,
    /// The first Enter waits for the text to show until this instant at most.
    show_by: Instant,
    /// The agent holds input typed while it works (its manifest says so).
    queues: bool,
}

/// Every send in flight, and who types into which pane.
#[derive(Default)]
pub struct Sends {
    /// Pane → the connection of its source (`pane.drive`).
    drivers: HashMap<String, Peer>,
    active: Vec<Sending>,
    next_ticket: u64,
}

impl Sends {
    /// `peer` types into `pane` from now on — unless another live connection already does: a
    /// second client must not receive text meant for a pane it does not own.
    pub fn drive(&mut self, pane: String, peer: Peer) -> Result<(), WireError> {
        if let Some(driver) = self.drivers.get(&pane)
            && !driver.is_gone()
            && !driver.same(&peer)
        {
            return Err(WireError::new(
                "pane_driven",
                format!(
                    "pane `{pane}` is already driven by another live connection (its source); it drives it until that connection closes"
                ),
            ));
        }
        self.drivers.insert(pane.clone(), peer);
        for i in 0..self.active.len() {
            if self.active[i].request.pane == pane {
                self.begin(i);
            }
        }
        Ok(())
    }

    /// Starts a send; `state` is the pane's state now (`None`: no such pane), `queues` whether its
    /// agent queues input typed while it works. A refusal is answered at once.
    pub fn start(
        &mut self,
        id: RequestId,
        peer: Peer,
        request: PaneSend,
        state: Option<PaneState>,
        queues: bool,
    ) {
        let state = match (refusal(&request, state.as_ref()), state) {
            (None, Some(state)) => state,
            (reason, state) => {
                let reason = reason.unwrap_or_default();
                peer.reply(&id, Ok(sent(Verdict::Refused, &reason, 0, state)));
                return;
            }
        };
        let now = Instant::now();
        let deadline = now + Duration::from_millis(request.timeout_ms());
        let sending = Sending {
            id,
            peer,
            deadline,
            baseline: state.lifecycle,
            phase: Phase::Driverless(deadline.min(now + DRIVER_WAIT)),
            enters: 0,
            moved: false,
            seen_pending: false,
            show_by: now,
            queues,
            request,
        };
        self.active.push(sending);
        self.begin(self.active.len() - 1);
    }

    /// Types the text of send `i` (or goes straight to Enter for none) once its pane has a driver.
    fn begin(&mut self, i: usize) {
        self.drivers.retain(|_, p| !p.is_gone());
        let s = &self.active[i];
        if !matches!(s.phase, Phase::Driverless(_)) || !self.drivers.contains_key(&s.request.pane) {
            return;
        }
        let phase = if s.request.text.is_empty() {
            Some(Phase::Settling(Instant::now()))
        } else {
            let keys = Keys {
                pane: s.request.pane.clone(),
                ticket: 0,
                text: s.request.text.as_bytes().to_vec(),
                enter: false,
            };
            self.push(keys).map(Phase::Typing)
        };
        // A driver that went away leaves the send waiting for another, until its time is up.
        if let Some(phase) = phase {
            self.active[i].phase = phase;
        }
    }

    /// Sends a keys line to the pane's driver; its ticket, or `None` when the driver is gone.
    fn push(&mut self, mut keys: Keys) -> Option<u64> {
        self.next_ticket += 1;
        keys.ticket = self.next_ticket;
        let driver = self.drivers.get(&keys.pane)?;
        if driver.event(keys_line(&keys)) {
            Some(keys.ticket)
        } else {
            self.drivers.remove(&keys.pane);
            None
        }
    }

    /// A driver answered `ticket`.
    pub fn typed(
        &mut self,
        ticket: u64,
        error: Option<String>,
        state: impl Fn(&str) -> Option<PaneState>,
    ) {
        let now = Instant::now();
        let Some(i) = self
            .active
            .iter()
            .position(|s| matches!(s.phase, Phase::Typing(t) | Phase::Entering(t) if t == ticket))
        else {
            return;
        };
        if let Some(error) = error {
            let s = self.active.remove(i);
            let reason = format!("the pane's source could not type: {error}");
            let verdict = if s.enters == 0 && matches!(s.phase, Phase::Typing(_)) {
                Verdict::Refused
            } else {
                Verdict::Unconfirmed
            };
            let state = state(&s.request.pane);
            s.peer
                .reply(&s.id, Ok(sent(verdict, &reason, s.enters, state)));
            return;
        }
        let s = &mut self.active[i];
        s.phase = match s.phase {
            // An answer to a dialog: watched until the pane leaves it, or time is up.
            Phase::Typing(_) if !s.request.submit && s.baseline == LifecycleState::Blocked => {
                Phase::Watching(s.deadline)
            }
            Phase::Typing(_) if !s.request.submit => Phase::Watching(now + SHOW),
            Phase::Typing(_) => {
                s.show_by = now + SHOW_MAX;
                Phase::Settling(now + settle(&s.request.text))
            }
            _ => Phase::Watching(now + WATCH),
        };
    }

    /// The tick's events: a pane that moved to working or blocked after an Enter.
    pub fn events(&mut self, events: &[Event]) {
        for event in events {
            let Change::Lifecycle { to, .. } = event.change else {
                continue;
            };
            for s in &mut self.active {
                // From a dialog any move counts (the answer was taken); from rest, a turn began.
                let counts = match s.baseline {
                    LifecycleState::Blocked => to != LifecycleState::Blocked,
                    _ => matches!(to, LifecycleState::Working | LifecycleState::Blocked),
                };
                let after_enter = matches!(s.phase, Phase::Entering(_) | Phase::Watching(_));
                if counts && after_enter && *s.request.pane == *event.pane {
                    s.moved = true;
                }
            }
        }
    }

    /// The earliest instant a send needs looking at.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.active
            .iter()
            .map(|s| match s.phase {
                Phase::Driverless(at) | Phase::Settling(at) | Phase::Watching(at) => {
                    at.min(s.deadline)
                }
                Phase::Typing(_) | Phase::Entering(_) => s.deadline,
            })
            .min()
    }

    /// Moves every send on: Enter when due, a verdict when one is proven or time is up. A
    /// confirmed prompt submitted to a pane at rest started a turn: the pane is told so (`panes::submitted`), so the turn ends
    /// done with an event however short it was. `seq`: the last event number given out, returned
    /// with the verdict (a turn the send started has later events: `agent.wait` `after`).
    pub fn step(&mut self, now: Instant, world: &mut World, seq: u64) {
        let mut i = 0;
        while i < self.active.len() {
            let mut current = panes::state(world, &self.active[i].request.pane).ok();
            match self.next(i, now, current.as_ref()) {
                Some((verdict, reason)) => {
                    let s = self.active.remove(i);
                    // Only a prompt submitted at rest starts a turn: a key that answers a
                    // dialog (a denial leaves the pane idle) or text typed into a working pane
                    // starts none the screen does not show.
                    let at_rest = matches!(s.baseline, LifecycleState::Idle | LifecycleState::Done);
                    if verdict == Verdict::Confirmed
                        && s.request.submit
                        && at_rest
                        && panes::submitted(world, &s.request.pane, "send").is_ok()
                    {
                        current = panes::state(world, &s.request.pane).ok();
                    }
                    let answer = Sent {
                        seq: Some(seq),
                        ..sent(verdict, &reason, s.enters, current)
                    };
                    s.peer.reply(&s.id, Ok(answer));
                }
                None => i += 1,
            }
        }
    }

    /// What send `i` does now: `Some` verdict when it is over.
    fn next(
        &mut self,
        i: usize,
        now: Instant,
        state: Option<&PaneState>,
    ) -> Option<(Verdict, String)> {
        let Some(state) = state else {
            return Some((
                Verdict::Unconfirmed,
                "missing: the pane closed during the send".into(),
            ));
        };
        let s = &self.active[i];
        if let Phase::Driverless(until) = s.phase {
            return (until <= now).then(|| {
                let why =
                    "no_driver: nothing can type into this pane (its source does not drive it)";
                (Verdict::Refused, why.to_owned())
            });
        }
        let composer = state.composer.state;
        // A composer wraps, indents and may scroll a long draft: ours when either holds the other.
        let pending_ours = composer == ComposerState::Pending
            && state.composer.text.as_deref().is_some_and(|shown| {
                let (shown, typed) = (squash(shown), squash(&s.request.text));
                !shown.is_empty()
                    && !typed.is_empty()
                    && (shown.contains(&typed) || typed.contains(&shown))
            });
        if !s.request.submit {
            return match s.phase {
                Phase::Watching(_) if s.moved && s.baseline == LifecycleState::Blocked => Some((
                    Verdict::Confirmed,
                    format!(
                        "the agent went from blocked to {} after the answer",
                        state.lifecycle.name()
                    ),
                )),
                Phase::Watching(until) if until <= now && s.baseline == LifecycleState::Blocked => {
                    Some((
                        Verdict::Unconfirmed,
                        "typed the answer, but the pane is still blocked".into(),
                    ))
                }
                Phase::Watching(_) if pending_ours => Some((
                    Verdict::Typed,
                    "the composer shows the text, not submitted".into(),
                )),
                Phase::Watching(until) if until <= now || s.deadline <= now => Some((
                    Verdict::Unconfirmed,
                    "typed, but the composer does not show the text".into(),
                )),
                _ if s.deadline <= now => Some(timeout(s)),
                _ => None,
            };
        }
        if pending_ours && !matches!(s.phase, Phase::Typing(_)) {
            // The box holds the text (the screen caught up with the typing, perhaps only after an
            // Enter the program was not ready for): once it is empty again, an Enter took it.
            self.active[i].seen_pending = true;
        }
        let s = &self.active[i];
        let working = state.lifecycle == LifecycleState::Working;
        let watching = s.enters > 0 && matches!(s.phase, Phase::Watching(_));
        if watching {
            // Empty after the text was seen in it: the Enter took it (the box empties no other
            // way); an agent at work that queues holds it to send next.
            if composer == ComposerState::Empty && s.seen_pending {
                if s.queues && working && s.baseline == LifecycleState::Working {
                    return Some((
                        Verdict::Queued,
                        "the agent is working and took the text to send next".into(),
                    ));
                }
                return Some((
                    Verdict::Confirmed,
                    "the composer showed the text, and is empty after Enter".into(),
                ));
            }
            let from_rest = matches!(s.baseline, LifecycleState::Idle | LifecycleState::Done);
            if s.moved && from_rest {
                return Some((
                    Verdict::Confirmed,
                    format!(
                        "the agent went from {} to {} after Enter",
                        s.baseline.name(),
                        state.lifecycle.name()
                    ),
                ));
            }
        }
        let out_of_time = s.deadline <= now;
        let enter_due = match s.phase {
            // The first Enter waits for the text to show in the box (a screen behind the typing
            // would otherwise prove nothing), within reason.
            Phase::Settling(at) => at <= now && (s.seen_pending || s.show_by <= now),
            Phase::Watching(at) => at <= now,
            _ => false,
        };
        if out_of_time {
            return Some(end(s, state, pending_ours));
        }
        if !enter_due {
            return None;
        }
        if watching {
            if pending_ours && working && s.queues {
                return Some((
                    Verdict::Queued,
                    "the agent is working and holds the text in its input box to send next".into(),
                ));
            }
            // Enter again only into our own text: after an Enter that opened a menu or a view
            // (a `/model` picker), another would choose in it.
            if !pending_ours || s.enters >= MAX_ENTERS {
                return Some(end(s, state, pending_ours));
            }
        }
        let keys = Keys {
            pane: s.request.pane.clone(),
            ticket: 0,
            text: Vec::new(),
            enter: true,
        };
        let Some(ticket) = self.push(keys) else {
            return Some((
                Verdict::Unconfirmed,
                "the pane's source went away before Enter".into(),
            ));
        };
        let s = &mut self.active[i];
        s.enters += 1;
        s.moved = false;
        s.phase = Phase::Entering(ticket);
        None
    }

    /// The pane closed: its sends end.
    pub fn pane_closed(&mut self, pane: &str) {
        self.active.retain(|s| {
            if s.request.pane != pane {
                return true;
            }
            let reason = "missing: the pane closed during the send";
            s.peer.reply(
                &s.id,
                Ok(sent(Verdict::Unconfirmed, reason, s.enters, None)),
            );
            false
        });
    }
}

/// Why nothing may be typed into the pane, if anything forbids it (`force` overrides only a
/// blocked pane and a composer not proven empty).
fn refusal(request: &PaneSend, state: Option<&PaneState>) -> Option<String> {
    let Some(state) = state else {
        return Some(format!("missing: no pane `{}`", request.pane));
    };
    if state.liveness == Liveness::Dead {
        Some("dead: a shell is alone in the pane; the agent is gone".to_owned())
    } else if !request.force && state.lifecycle == LifecycleState::Blocked {
        Some("blocked: the agent waits for an answer in a dialog (the cursor is in a menu); --force types anyway".to_owned())
    } else if !request.force && state.composer.state != ComposerState::Empty {
        let what = match state.composer.state {
            ComposerState::Pending => "composer_pending: the input box already holds text",
            _ => "composer_unknown: no empty input box is proven on the screen",
        };
        Some(format!("{what}; --force types anyway"))
    } else {
        None
    }
}

/// The verdict once Enter is spent, no longer safe, or time is up.
fn end(s: &Sending, state: &PaneState, pending_ours: bool) -> (Verdict, String) {
    let resting = matches!(state.lifecycle, LifecycleState::Idle | LifecycleState::Done);
    if s.enters == 0 {
        return timeout(s);
    }
    if pending_ours && resting {
        return (
            Verdict::Swallowed,
            format!(
                "the agent is {} and the text is still in its composer after {} Enter(s)",
                state.lifecycle.name(),
                s.enters
            ),
        );
    }
    let why = match state.composer.state {
        ComposerState::Unknown => {
            "the input box is no longer on the screen (a menu or view the text opened?), so Enter was not pressed again"
        }
        ComposerState::Empty if !s.seen_pending => {
            "the composer is empty, but it never showed the text, so that proves nothing"
        }
        ComposerState::Pending if !pending_ours => {
            "the composer holds other text now, so Enter was not pressed again"
        }
        _ => "nothing proved the text taken or left",
    };
    (
        Verdict::Unconfirmed,
        format!(
            "{} Enter(s): {why} (lifecycle {})",
            s.enters,
            state.lifecycle.name()
        ),
    )
}

fn timeout(s: &Sending) -> (Verdict, String) {
    let what = match s.phase {
        Phase::Typing(_) => "the pane's source did not confirm typing",
        _ => "time ran out before Enter",
    };
    (
        Verdict::Unconfirmed,
        format!("{what} within {} ms", s.request.timeout_ms()),
    )
}

/// Text without its whitespace: a composer wraps and indents a draft.
fn squash(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The pause before the first Enter.
fn settle(text: &str) -> Duration {
    if text.starts_with(['/', '$']) {
        SETTLE_POPUP
    } else {
        SETTLE
    }
}

/// A send refused before anything was typed.
pub fn refused(reason: &str, state: Option<PaneState>) -> Sent {
    sent(Verdict::Refused, reason, 0, state)
}

fn sent(verdict: Verdict, reason: &str, enters: u32, state: Option<PaneState>) -> Sent {
    Sent {
        verdict,
        reason: reason.to_owned(),
        enters,
        state,
        seq: None,
    }
}
