//! Resolve: departure, hook evidence, the screen's verdict and what the program announced in-band
//! → one `Verdict` per pane (see docs/behaviour.md, Hooks versus the screen, and
//! docs/agent-authors.md).
//!
//! Rule priority and ties were resolved when the manifests were compiled (rules are stored in
//! winning order, so the first that fires is the winner); this stage decides between sources:
//! a process exit first, then a fresh hook report, then the screen. Under the `evidence` policy
//! the screen's verdict is applied once more on the tick after a report (see docs/behaviour.md,
//! Hooks versus the screen), but a screen that
//! contradicts a report less than [`HOOK_HOLD`] old is not believed yet: the screen draws what a
//! hook announces a moment later (seen live: Claude's `PermissionRequest` ~0.4 s before its
//! dialog, so the old prompt box read idle in between and every dialog was notified twice).
//!
//! An in-band announcement (`Inband`) is weaker than both: it is ignored once a hook spoke for the
//! process, and under the kind's default `[inband] trust = "hint"` it decides only when it is new
//! and no screen rule gives an answer — which is always, for a pane of a program no manifest
//! knows. `trust = "state"` lets it decide over the screen until the next one; `off` ignores it.

use crate::components::{
    AgentKind, Cause, Decision, Glimpse, HookClaim, HookEvidence, HookedProcess, Inband, LastTurn,
    Presence, ScreenVerdict, Verdict,
};
use crate::manifest::{HookPolicy, InbandTrust, RuleState};
use crate::resources::{Awake, Clock, Manifests};
use crate::terminal::Announced;
use bevy_ecs::prelude::*;
use std::sync::Arc;
use std::time::Duration;

/// How long the screen may lag a hook report before it is believed over it.
pub const HOOK_HOLD: Duration = Duration::from_secs(1);

type Evidence<'a> = (
    Ref<'a, ScreenVerdict>,
    Ref<'a, Glimpse>,
    Ref<'a, LastTurn>,
    Ref<'a, HookEvidence>,
    Ref<'a, Inband>,
    &'a HookedProcess,
    &'a AgentKind,
    &'a mut Verdict,
);

/// Decides what each pane with new evidence should do.
pub fn resolve_priority(
    manifests: Res<Manifests>,
    clock: Res<Clock>,
    mut awake: ResMut<Awake>,
    mut visit: Local<Vec<Entity>>,
    mut panes: Query<Evidence>,
) {
    // Last tick's `reassess` panes are still in `visit`: awake this tick too.
    awake.join(&visit);
    visit.clear();
    visit.extend_from_slice(awake.panes());
    let mut again = 0;
    for i in 0..visit.len() {
        let entity = visit[i];
        let Ok((screen, glimpse, turn, hook, inband, process, kind, mut verdict)) =
            panes.get_mut(entity)
        else {
            continue;
        };
        let rules = manifests.0.rules_for(kind.id);
        let trust = rules.map(|k| k.inband).unwrap_or_default();
        let (announced, standing) = believed(&inband, process, trust);
        let announced = announced.or_else(|| verdict.deferred.clone());
        let departed = process.ended > verdict.departures;
        let hook_new = hook.is_changed() && hook.claim.is_some();
        // A working screen came and went within the tick: resolve even if the final answer is
        // the same as before (idle → working → idle is a turn).
        let glimpsed = glimpse.is_changed() && glimpse.0.is_some();
        // A finished turn the screen did not show at the last look: it began and ended between
        // two looks, so the same idle answer as before still ends a turn.
        let turned = turn.is_changed() && turn.new;
        let screen_new = screen.is_changed() || glimpsed || turned;
        if !(departed || hook_new || screen_new || announced.is_some() || verdict.reassess) {
            continue;
        }
        let policy = rules.map(|k| k.policy).unwrap_or_default();
        let mut next = Verdict {
            departures: process.ended,
            ..Verdict::default()
        };
        if departed {
            next.decision = Some((Decision::Departed, Cause::ProcessExited));
            // A replacement process may already show a screen this tick: apply it on the next.
            next.reassess = true;
            next.deferred = announced;
        } else if hook_new {
            let decision = match hook.claim {
                Some(HookClaim::Working) => Decision::Working,
                Some(HookClaim::Blocked) => Decision::Blocked,
                Some(HookClaim::Done) => Decision::Done,
                Some(HookClaim::TurnEnded) | None => Decision::Idle { settled: true },
            };
            next.decision = Some((decision.clone(), Cause::Hook(hook.source.clone())));
            next.labels = hook.labels.clone();
            next.withdraw_screen_input = hook.first && policy == HookPolicy::Dominate;
            next.reassess = policy == HookPolicy::Evidence;
            next.hold = next.reassess.then(|| (decision, clock.now + HOOK_HOLD));
        } else {
            next.decision = screen.0.as_ref().map(|(id, state, settled)| {
                let decision = match state {
                    RuleState::Working => Decision::Working,
                    RuleState::Blocked => Decision::Blocked,
                    RuleState::Idle => Decision::Idle { settled: *settled },
                    RuleState::Skip => Decision::Keep,
                };
                (decision, Cause::Screen(id.clone()))
            });
            if glimpsed && matches!(next.decision, Some((Decision::Idle { .. }, _))) {
                next.passed_working = glimpse.0.clone().map(Cause::Screen);
            }
            if turned && let Some((Decision::Idle { .. }, cause)) = &next.decision {
                next.turn_ended = Some(cause.clone());
            }
            hold_against_the_screen(&mut next, verdict.hold.as_ref(), &clock);
            if standing && trust == InbandTrust::State {
                // The program's own word stands until it says something else.
                next.decision = None;
            }
            if announced.is_some() && (trust == InbandTrust::State || next.decision.is_none()) {
                next.decision = announced;
            }
        }
        if next.reassess {
            visit[again] = entity;
            again += 1;
        }
        *verdict = next;
    }
    visit.truncate(again);
}

/// The pane's in-band announcement as this tick may use it: the decision when it is new and
/// believed, and whether one from the current process stands at all. Nothing is believed once a
/// hook has spoken for the process, after the process exited, or under `trust = "off"`.
fn believed(
    inband: &Ref<Inband>,
    process: &HookedProcess,
    trust: InbandTrust,
) -> (Option<(Decision, Cause)>, bool) {
    let Some((said, generation)) = inband.0.as_ref() else {
        return (None, false);
    };
    if trust == InbandTrust::Off || process.hooked || process.presence == Presence::Exited {
        return (None, false);
    }
    let standing = *generation == process.generation;
    if !inband.is_changed() {
        return (None, standing);
    }
    let decision = match said.state {
        Announced::Working => Decision::Working,
        Announced::Blocked => Decision::Blocked,
        Announced::Done => Decision::Done,
        Announced::Idle { settled } => Decision::Idle { settled },
    };
    let cause = Cause::Inband(Arc::from(said.sequence.name()));
    (Some((decision, cause)), standing)
}

/// A screen verdict that contradicts a hook report still inside its hold keeps the hook's state
/// for now, and is looked at again next tick (so a denial the hooks never report still lands).
fn hold_against_the_screen(
    next: &mut Verdict,
    hold: Option<&(Decision, std::time::Instant)>,
    clock: &Clock,
) {
    let Some((held, until)) = hold.filter(|(_, until)| clock.now < *until) else {
        return;
    };
    let agrees = matches!(&next.decision, Some((d, _)) if d == held || *d == Decision::Keep);
    if !agrees && next.decision.is_some() {
        next.decision = None;
        next.reassess = true;
        next.hold = Some((held.clone(), *until));
    }
}
