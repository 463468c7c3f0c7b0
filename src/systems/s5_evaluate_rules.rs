//! Evaluate: the screen rules of the pane's kind (see docs/behaviour.md, When a pane is looked at)
//! → `ScreenVerdict` and `Wake`, and
//! `Drift` (rules that no longer fire while the screen keeps changing, or a CLI newer than every
//! recording: shown, never turned into a state).
//!
//! Only awake panes (`Awake`: news from ingest, or a due timer) are visited; of those, only
//! panes whose screen, title, progress, kind or process changed — or whose time condition may
//! have flipped — are evaluated. A screen counts as
//! changed when a row the last evaluation read changed (`RowsSeen`), not when bytes arrived: a
//! redraw of the same screen is not evaluated again and does not delay `quiet_ms`. A pane that is
//! hook-dominated, whose process exited, or whose kind has no rules gets no verdict.
//! A `finished_turn` rule's win also updates `LastTurn`: a finished turn unlike the last one seen
//! is a turn that began and ended between two looks (see docs/behaviour.md, Short turns).

use crate::components::{
    AgentKind, Drift, HookedProcess, LastTurn, Presence, Progress, RowsSeen, Screen, ScreenVerdict,
    Title, Wake,
};
use crate::manifest::{Catalog, HookPolicy, KindRules};
use crate::resources::{Awake, Clock, Manifests};
use crate::rules::{Look, Scratch, Strategy};
use bevy_ecs::prelude::*;

type Inputs<'a> = (
    Ref<'a, Screen>,
    Ref<'a, Title>,
    Ref<'a, Progress>,
    Ref<'a, AgentKind>,
    Ref<'a, HookedProcess>,
    &'a mut ScreenVerdict,
    &'a mut Wake,
    &'a mut Drift,
    &'a mut RowsSeen,
    &'a mut LastTurn,
);

/// Evaluates the panes that need it. `scratch` holds the rendered rows and region texts, reused
/// from pane to pane: nothing is allocated per evaluation once it has grown.
pub fn evaluate_rules(
    manifests: Res<Manifests>,
    clock: Res<Clock>,
    mut scratch: Local<Scratch>,
    mut awake: ResMut<Awake>,
    mut panes: Query<Inputs>,
) {
    let catalog = &manifests.0;
    awake.gather(clock.now);
    let visit = awake.take();
    for &entity in &visit {
        let Ok((
            screen,
            title,
            progress,
            kind,
            process,
            mut verdict,
            mut wake,
            mut drift,
            mut seen,
            mut turn,
        )) = panes.get_mut(entity)
        else {
            continue;
        };
        let others = title.is_changed()
            || progress.is_changed()
            || kind.is_changed()
            || process.is_changed();
        let woke = wake.0.is_some_and(|w| w <= clock.now);
        if !screen.is_changed() && !others && !woke {
            continue;
        }
        let Some(rules) = screen_rules(catalog, &kind, &process) else {
            if screen.is_changed() {
                // Nothing reads this screen now: any output counts as a change for when it does.
                seen.forget();
                seen.changed_at = Some(clock.now);
            }
            verdict.set_if_neq(ScreenVerdict(None));
            wake.set_if_neq(Wake(None));
            drift.set_if_neq(Drift::default());
            continue;
        };
        let grid = screen.grid();
        scratch.begin(grid);
        // Output arrived: did any row the last evaluation read change? (Renders those rows; the
        // evaluation below reuses them.)
        let rows_changed = screen.is_changed() && !seen.same(grid, &mut scratch.rows);
        scratch.rows.forget_reads();
        if !rows_changed && !others && !woke {
            continue;
        }
        if rows_changed {
            seen.changed_at = Some(clock.now);
        }
        let look = Look {
            screen: grid,
            title: &title.0,
            progress: &progress.0,
            changed_at: seen.changed_at,
            now: clock.now,
        };
        let outcome = rules.evaluate_in(&look, &mut scratch, Strategy::DEFAULT);
        seen.record(grid, &scratch.rows);
        let winner = outcome.winner.map(|i| {
            let rule = &rules.rules[i];
            (rule.id.clone(), rule.spec.state, rule.spec.settled)
        });
        // Only changed rows count as "keeps changing"; a wake or a process change re-reads the same screen.
        let fired = rows_changed.then_some(winner.is_some());
        let next = drift.observe(
            fired,
            clock.now,
            process.version.as_deref(),
            &rules.recorded,
        );
        drift.set_if_neq(next);
        verdict.set_if_neq(ScreenVerdict(winner));
        turn.set_if_neq(turn.after(process.generation, outcome.turn));
        wake.set_if_neq(Wake(outcome.wake));
        if let Some(w) = outcome.wake {
            awake.wake_at(w, entity);
        }
    }
    awake.put(visit);
}

/// The rules that read this pane's screen: those of its kind, unless the kind has none, the
/// process exited or a hook dominates it.
pub(crate) fn screen_rules<'c>(
    catalog: &'c Catalog,
    kind: &AgentKind,
    process: &HookedProcess,
) -> Option<&'c KindRules> {
    catalog
        .rules_for(kind.id)
        .filter(|k| !k.rules.is_empty())
        .filter(|k| {
            process.presence != Presence::Exited
                && !(process.hooked && k.policy == HookPolicy::Dominate)
        })
}
