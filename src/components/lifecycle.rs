//! `Lifecycle`: idle / working / blocked / done, since when, and why. Written by
//! `apply_transitions` only, and only when the state really changes, so `Changed<Lifecycle>` means
//! "emit an event". `Settling` (same writer) holds an idle verdict waiting out the idle settle
//! (see docs/behaviour.md, Settling).

use super::cause::Cause;
use bevy_ecs::component::Component;
use std::time::{Instant, SystemTime};

/// The four lifecycle states.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum LifecycleState {
    /// Ready, nothing unread.
    #[default]
    Idle,
    /// Running a turn.
    Working,
    /// Waiting for the user.
    Blocked,
    /// Finished a turn.
    Done,
}

impl LifecycleState {
    /// Every state with its wire name, once.
    const NAMES: [(LifecycleState, &'static str); 4] = [
        (LifecycleState::Idle, "idle"),
        (LifecycleState::Working, "working"),
        (LifecycleState::Blocked, "blocked"),
        (LifecycleState::Done, "done"),
    ];

    /// The wire name.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(s, _)| *s == self)
            .map_or("idle", |(_, n)| n)
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(s, _)| *s)
    }
}

/// The pane's lifecycle.
#[derive(Component, Debug, Clone, PartialEq, Eq)]
pub struct Lifecycle {
    /// The current state.
    pub state: LifecycleState,
    /// The state before the last change (for the event).
    pub prev: LifecycleState,
    /// Wall time of the last change.
    pub since: SystemTime,
    /// What caused the last change (`None` for a new pane).
    pub cause: Option<Cause>,
}

impl Lifecycle {
    /// A new pane: idle since `now`.
    pub fn new(now: SystemTime) -> Self {
        Lifecycle {
            state: LifecycleState::Idle,
            prev: LifecycleState::Idle,
            since: now,
            cause: None,
        }
    }
}

/// An idle verdict that would end `working`, waiting to hold for the kind's `idle_settle_ms`.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct Settling(pub Option<(Instant, Cause)>);
