//! Transition: `Verdict` → `Lifecycle`, `Attention`, `Labels`, `Settling` by the transition table
//! (see docs/behaviour.md, Transitions), with settling and departure; then `pane.seen` clears `unread`.
//!
//! [`step`] is the table as a pure function; the system only reads and writes components, and
//! writes each one only when it really changes (so `Changed<_>` means "emit an event").

use crate::components::{
    AgentKind, Attention, Cause, Decision, Labels, Lifecycle, LifecycleState, Settling, Verdict,
};
use crate::resources::{Awake, Clock, Manifests, PaneIndex, SeenInbox};
use bevy_ecs::prelude::*;
use std::time::Duration;

/// What to do with one attention flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagOp {
    /// Leave it.
    Keep,
    /// Raise it (keeps the original raiser if already raised).
    Raise,
    /// Withdraw it.
    Withdraw,
}

/// What to do with a pending idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettleOp {
    /// Leave it.
    Keep,
    /// Start waiting (keeps an earlier start).
    Start,
    /// Forget it.
    Cancel,
}

/// One row of the transition table, applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The new lifecycle, if it changes.
    pub lifecycle: Option<LifecycleState>,
    /// `input_required`.
    pub input_required: FlagOp,
    /// `unread`.
    pub unread: FlagOp,
    /// Settling.
    pub settle: SettleOp,
    /// Clear hook labels (departure).
    pub clear_labels: bool,
}

const NOTHING: Step = Step {
    lifecycle: None,
    input_required: FlagOp::Keep,
    unread: FlagOp::Keep,
    settle: SettleOp::Keep,
    clear_labels: false,
};

/// The transition table (plus hook `done` and departure). `wait`: an idle verdict must settle first.
pub fn step(state: LifecycleState, decision: &Decision, wait: bool) -> Step {
    use LifecycleState as L;
    let set = |to: LifecycleState| (to != state).then_some(to);
    match decision {
        Decision::Working => Step {
            lifecycle: set(L::Working),
            input_required: if state == L::Blocked {
                FlagOp::Withdraw
            } else {
                FlagOp::Keep
            },
            settle: SettleOp::Cancel,
            ..NOTHING
        },
        Decision::Blocked => Step {
            lifecycle: set(L::Blocked),
            input_required: FlagOp::Raise,
            settle: SettleOp::Cancel,
            ..NOTHING
        },
        Decision::Idle { settled } => match state {
            L::Working if wait && !settled => Step {
                settle: SettleOp::Start,
                ..NOTHING
            },
            L::Working => Step {
                lifecycle: Some(L::Done),
                unread: FlagOp::Raise,
                settle: SettleOp::Cancel,
                ..NOTHING
            },
            L::Blocked => Step {
                lifecycle: Some(L::Idle),
                input_required: FlagOp::Withdraw,
                ..NOTHING
            },
            L::Idle | L::Done => NOTHING,
        },
        Decision::Done => Step {
            lifecycle: set(L::Done),
            input_required: FlagOp::Withdraw,
            unread: FlagOp::Raise,
            settle: SettleOp::Cancel,
            ..NOTHING
        },
        Decision::Departed => Step {
            lifecycle: matches!(state, L::Working | L::Blocked).then_some(L::Idle),
            input_required: FlagOp::Withdraw,
            settle: SettleOp::Cancel,
            clear_labels: true,
            ..NOTHING
        },
        Decision::Keep => NOTHING,
    }
}

type Panes<'a> = (
    Ref<'a, Verdict>,
    &'a AgentKind,
    &'a mut Lifecycle,
    &'a mut Attention,
    &'a mut Labels,
    &'a mut Settling,
);

/// Applies verdicts and finished settles, then `pane.seen`.
pub fn apply_transitions(
    manifests: Res<Manifests>,
    clock: Res<Clock>,
    index: Res<PaneIndex>,
    mut seen: ResMut<SeenInbox>,
    mut awake: ResMut<Awake>,
    mut panes: Query<Panes>,
) {
    let visit = awake.take();
    for &entity in &visit {
        let Ok((verdict, kind, mut lifecycle, mut attention, mut labels, mut settling)) =
            panes.get_mut(entity)
        else {
            continue;
        };
        // Most panes have nothing to do this tick: leave before any lookup.
        if !verdict.is_changed() && settling.0.is_none() {
            continue;
        }
        let settle_for = manifests
            .0
            .rules_for(kind.id)
            .map_or(Duration::from_millis(1000), |k| k.idle_settle);
        // Noted before any early exit; a settle cancelled below costs one idle tick at most.
        if let Some((since, _)) = &settling.0
            && *since + settle_for > clock.now
        {
            awake.wake_at(*since + settle_for, entity);
        }
        let (decision, cause) = match (&verdict.decision, &settling.0) {
            (Some((d, c)), _) if verdict.is_changed() => (d.clone(), c.clone()),
            (_, Some((since, c))) if clock.now.saturating_duration_since(*since) >= settle_for => {
                (Decision::Idle { settled: true }, c.clone())
            }
            _ => continue,
        };
        let mut input = attention.input_required.clone();
        if verdict.is_changed()
            && verdict.withdraw_screen_input
            && matches!(input, Some(Cause::Screen(_)))
        {
            input = None;
        }
        let before = lifecycle.state;
        // A working screen seen since the last tick: through working first, so an approved
        // prompt whose work ended within the tick still ends done with unread. So does a
        // finished turn that appeared between two looks, on an idle pane or after a dialog (the
        // tool ran and the answer came: a dialog answered "no" shows no new finished turn).
        // A hook's `done` on a pane at rest: the turn began and ended between two ticks.
        let hook_turn = (decision == Decision::Done
            && matches!(lifecycle.state, LifecycleState::Idle | LifecycleState::Done))
        .then_some(&cause);
        if let Some(passed) = verdict
            .passed_working
            .as_ref()
            .or(verdict.turn_ended.as_ref())
            .or(hook_turn)
            .filter(|_| verdict.is_changed() && lifecycle.state != LifecycleState::Working)
        {
            let w = step(lifecycle.state, &Decision::Working, false);
            input = apply_flag(&input, w.input_required, passed);
            *lifecycle = Lifecycle {
                state: LifecycleState::Working,
                prev: lifecycle.state,
                since: clock.wall,
                cause: Some(passed.clone()),
            };
        }
        let s = step(lifecycle.state, &decision, !settle_for.is_zero());
        match s.settle {
            SettleOp::Start if settling.0.is_none() => {
                settling.0 = Some((clock.now, cause.clone()));
                awake.wake_at(clock.now + settle_for, entity);
            }
            SettleOp::Cancel if settling.0.is_some() => settling.0 = None,
            _ => {}
        }
        if let Some(to) = s.lifecycle {
            *lifecycle = Lifecycle {
                state: to,
                // the state before this tick: one event for the tick's net change — and when the
                // pane passed through working back to where it was (done → working → done), the
                // last step, so the turn still has its event
                prev: if before == to {
                    lifecycle.state
                } else {
                    before
                },
                since: clock.wall,
                cause: Some(cause.clone()),
            };
        }
        let input = apply_flag(&input, s.input_required, &cause);
        let unread = apply_flag(&attention.unread, s.unread, &cause);
        set_flags(&mut attention, input, unread, cause.clone());
        if s.clear_labels
            && (!labels.labels.is_empty()
                || !labels.gates.is_empty()
                || !labels.agent_names.is_empty())
        {
            *labels = Labels {
                cause: Some(cause.clone()),
                ..Labels::default()
            };
        }
        if let Some(set) = verdict.labels.as_ref().filter(|_| verdict.is_changed()) {
            let next = Labels {
                labels: set.labels.clone(),
                gates: set.gates.clone(),
                agent_names: set.agent_names.clone(),
                cause: Some(cause),
            };
            if (&next.labels, &next.gates, &next.agent_names)
                != (&labels.labels, &labels.gates, &labels.agent_names)
            {
                *labels = next;
            }
        }
    }
    awake.put(visit);
    // Seen panes are awake from here on: the composer and emit look at them.
    let mut seen_panes = Vec::new();
    for (pane, cause) in seen.0.drain(..) {
        let Some(entity) = index.get(&pane) else {
            continue;
        };
        if let Ok((_, _, _, mut attention, _, _)) = panes.get_mut(entity) {
            let input = attention.input_required.clone();
            set_flags(&mut attention, input, None, cause);
            seen_panes.push(entity);
        }
    }
    awake.join(&seen_panes);
}

fn apply_flag(current: &Option<Cause>, op: FlagOp, cause: &Cause) -> Option<Cause> {
    match op {
        FlagOp::Keep => current.clone(),
        FlagOp::Raise => current.clone().or_else(|| Some(cause.clone())),
        FlagOp::Withdraw => None,
    }
}

/// Writes the flags only if one of them flips, remembering the flags before this tick (a second
/// write in the same tick keeps the first `prev`, so emit sees the net change).
fn set_flags(
    attention: &mut Mut<Attention>,
    input: Option<Cause>,
    unread: Option<Cause>,
    cause: Cause,
) {
    let now = (input.is_some(), unread.is_some());
    if now != attention.flags() {
        let prev = if attention.is_changed() && !attention.is_added() {
            attention.prev
        } else {
            attention.flags()
        };
        **attention = Attention {
            input_required: input,
            unread,
            prev,
            cause: Some(cause),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use LifecycleState::*;

    fn row(state: LifecycleState, d: Decision) -> (Option<LifecycleState>, FlagOp, FlagOp) {
        let s = step(state, &d, false);
        (s.lifecycle, s.input_required, s.unread)
    }

    #[test]
    fn the_3_3_table_row_by_row() {
        use FlagOp::*;
        // working | any → working | if it was blocked: withdraw input_required
        assert_eq!(row(Idle, Decision::Working), (Some(Working), Keep, Keep));
        assert_eq!(row(Done, Decision::Working), (Some(Working), Keep, Keep));
        assert_eq!(
            row(Blocked, Decision::Working),
            (Some(Working), Withdraw, Keep)
        );
        assert_eq!(row(Working, Decision::Working), (None, Keep, Keep));
        // blocked | any → blocked | raise input_required
        for s in [Idle, Working, Done, Blocked] {
            assert_eq!(
                row(s, Decision::Blocked),
                ((s != Blocked).then_some(Blocked), Raise, Keep)
            );
        }
        // idle | working → done | raise unread
        assert_eq!(
            row(Working, Decision::Idle { settled: false }),
            (Some(Done), Keep, Raise)
        );
        // idle | blocked → idle | withdraw input_required
        assert_eq!(
            row(Blocked, Decision::Idle { settled: false }),
            (Some(Idle), Withdraw, Keep)
        );
        // idle | idle or done → unchanged
        assert_eq!(
            row(Idle, Decision::Idle { settled: false }),
            (None, Keep, Keep)
        );
        assert_eq!(
            row(Done, Decision::Idle { settled: false }),
            (None, Keep, Keep)
        );
        // none | any → unchanged (a skip rule keeps the state)
        for s in [Idle, Working, Done, Blocked] {
            assert_eq!(row(s, Decision::Keep), (None, Keep, Keep));
        }
    }

    #[test]
    fn hook_done_departure_and_settling() {
        use FlagOp::*;
        assert_eq!(row(Blocked, Decision::Done), (Some(Done), Withdraw, Raise));
        assert_eq!(
            row(Working, Decision::Departed),
            (Some(Idle), Withdraw, Keep)
        );
        assert_eq!(
            row(Blocked, Decision::Departed),
            (Some(Idle), Withdraw, Keep)
        );
        assert_eq!(
            row(Done, Decision::Departed),
            (None, Withdraw, Keep),
            "unread is kept"
        );
        let wait = step(Working, &Decision::Idle { settled: false }, true);
        assert_eq!((wait.lifecycle, wait.settle), (None, SettleOp::Start));
        let settled = step(Working, &Decision::Idle { settled: true }, true);
        assert_eq!(settled.lifecycle, Some(Done));
        assert_eq!(
            step(Working, &Decision::Working, true).settle,
            SettleOp::Cancel
        );
    }
}
