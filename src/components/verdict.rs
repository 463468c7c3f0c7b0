//! The stage-to-stage results: `ScreenVerdict` (written by `evaluate_rules`), `HookEvidence`
//! (written by `ingest_hooks`) and `Verdict` (written by `resolve_priority`, read by
//! `apply_transitions`). Each is inspectable in a test after its stage.

use super::cause::Cause;
use crate::manifest::RuleState;
use crate::report::Ticket;
use bevy_ecs::component::Component;
use std::sync::Arc;
use std::time::Instant;

/// The screen's answer for the pane: the winning rule's id, state and `settled` flag. Changes
/// only when the answer changes, so `Changed<ScreenVerdict>` means "something new to resolve".
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct ScreenVerdict(pub Option<(Arc<str>, RuleState, bool)>);

/// When a time condition (`quiet_ms`, `changed_within_ms`) may next flip the pane's answer.
#[derive(Component, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wake(pub Option<Instant>);

/// What a hook report said, as the resolve stage needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookClaim {
    /// `working`, or a turn-end with agents still running.
    Working,
    /// `blocked`, or a turn-end with blocking items.
    Blocked,
    /// `done`.
    Done,
    /// A turn-end with nothing left: applied like the screen's idle verdict.
    TurnEnded,
}

/// Labels a turn-end report carries (replace, not merge).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSet {
    /// `gate ×N`, `M agents`.
    pub labels: Vec<String>,
    /// Gate names.
    pub gates: Vec<String>,
    /// Sub-agent names.
    pub agent_names: Vec<String>,
}

/// The latest accepted hook report for the pane (this tick's, when changed).
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct HookEvidence {
    /// What it claims (`None` until a state or turn-end report is accepted).
    pub claim: Option<HookClaim>,
    /// Labels, for a turn-end.
    pub labels: Option<LabelSet>,
    /// The reporting source.
    pub source: Arc<str>,
    /// First accepted report of this generation (withdraws a screen's `input_required`).
    pub first: bool,
    /// Reports accepted this tick, answered by `emit_events` once the outcome is known.
    pub tickets: Vec<Ticket>,
}

/// A decision for `apply_transitions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Working (screen or hook).
    Working,
    /// Blocked (screen or hook).
    Blocked,
    /// Idle evidence; `settled` skips the idle settle.
    Idle {
        /// Skip the settle wait.
        settled: bool,
    },
    /// A hook's `done`.
    Done,
    /// The process exited or was replaced.
    Departed,
    /// A `skip` rule won: keep the state.
    Keep,
}

/// The resolved decision for this tick.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// What to apply, with its cause.
    pub decision: Option<(Decision, Cause)>,
    /// Labels to replace the pane's with.
    pub labels: Option<LabelSet>,
    /// Withdraw an `input_required` a screen rule raised (first hook report).
    pub withdraw_screen_input: bool,
    /// Generations whose end has been turned into a departure.
    pub departures: u64,
    /// Evidence policy: re-apply the screen's verdict on the next tick.
    pub reassess: bool,
    /// Evidence policy: a hook's decision that the screen may not contradict until this instant
    /// (the screen lags its hooks: a dialog is drawn after `PermissionRequest`, the spinner after
    /// `UserPromptSubmit`, the dialog is erased after `PostToolUse`).
    pub hold: Option<(Decision, Instant)>,
    /// An in-band announcement that arrived in the tick a departure took: applied on the next
    /// (a program announces itself before the process probe has seen it start).
    pub deferred: Option<(Decision, Cause)>,
    /// A working screen was seen since the last tick, before this idle decision (a
    /// short turn): the pane passes through working first, with this cause.
    pub passed_working: Option<Cause>,
    /// The idle screen shows a finished turn it did not show at the last look (a
    /// `finished_turn` rule): the pane passes through working first. A dialog's screen records
    /// the turn its transcript shows, so a dialog answered "no" shows no new one and ends idle.
    pub turn_ended: Option<Cause>,
}
