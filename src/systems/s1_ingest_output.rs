//! Ingest, step 1: PTY output (or an embedder's changed rows) and resizes → `Screen`, `Title`,
//! `Progress`, `Inband` (a status the program announced in its bytes), `Glimpse`.
//!
//! Reads `OutputInbox`, `PaneIndex`, `Clock`, `Manifests` and each pane's kind, process and
//! lifecycle; writes the five components. Bytes are handed to the pane's terminal as they are:
//! garbage renders as garbage, never a panic.
//!
//! Short turns (see docs/behaviour.md, Short turns): output that arrived in bursts apart by
//! [`BURST_GAP`] or more is
//! read burst by burst. When a pane that is not already working gets another burst, the screen
//! the previous burst left is run through its rules once; a working verdict there is kept as the
//! pane's `Glimpse`, so a working screen that was gone again by the tick still counts. This is
//! the one place rules run outside Evaluate: the interim screen exists only here.

use crate::components::{
    AgentKind, Glimpse, HookedProcess, Inband, Lifecycle, LifecycleState, Progress, Screen, Title,
};
use crate::manifest::RuleState;
use crate::resources::{Awake, BURST_GAP, Clock, Manifests, Output, OutputInbox, PaneIndex};
use crate::rules::Look;
use crate::systems::s5_evaluate_rules::screen_rules;
use crate::terminal::Said;
use bevy_ecs::entity::EntityHashMap;
use bevy_ecs::prelude::*;
use std::sync::Arc;
use std::time::Instant;

type Panes<'a> = (
    &'a mut Screen,
    &'a mut Title,
    &'a mut Progress,
    &'a mut Inband,
    &'a mut Glimpse,
    &'a AgentKind,
    &'a HookedProcess,
    &'a Lifecycle,
);

/// What this tick has seen of one pane's output so far.
#[derive(Default)]
pub struct Seen {
    /// When its latest chunk arrived (as stamped by the embedder).
    last: Option<Instant>,
    /// A working rule that fired on an interim screen.
    glimpse: Option<Arc<str>>,
}

/// Feeds queued output to each pane's terminal and records when its screen changed.
pub fn ingest_output(
    mut inbox: ResMut<OutputInbox>,
    index: Res<PaneIndex>,
    clock: Res<Clock>,
    manifests: Res<Manifests>,
    mut awake: ResMut<Awake>,
    mut seen: Local<EntityHashMap<Seen>>,
    mut panes: Query<Panes>,
) {
    if inbox.is_empty() {
        return;
    }
    // Reused from tick to tick (10k changed panes a tick: no regrowth, no SipHash).
    seen.clear();
    for (pane, output) in inbox.drain() {
        let Some(entity) = index.get(&pane) else {
            continue;
        };
        let Ok((mut screen, mut title, mut progress, mut inband, _, kind, process, lifecycle)) =
            panes.get_mut(entity)
        else {
            continue;
        };
        awake.wake(entity);
        let so_far = seen.entry(entity).or_default();
        let screen = &mut *screen;
        let at = match &output {
            Output::Bytes(_, at) | Output::Rows(_, at) => *at,
            Output::Resize { .. } => None,
        };
        if at.is_some() {
            let new_burst = matches!((so_far.last, at), (Some(last), Some(at))
                if at.saturating_duration_since(last) >= BURST_GAP);
            if new_burst && so_far.glimpse.is_none() && lifecycle.state != LifecycleState::Working {
                so_far.glimpse = screen_rules(&manifests.0, kind, process).and_then(|rules| {
                    let look = Look {
                        screen: screen.grid(),
                        title: &title.0,
                        progress: &progress.0,
                        // the interim screen has just changed, by definition
                        changed_at: so_far.last,
                        now: so_far.last.unwrap_or(clock.now),
                    };
                    let rule = &rules.rules[rules.evaluate(&look).winner?];
                    (rule.spec.state == RuleState::Working).then(|| rule.id.clone())
                });
            }
            so_far.last = at;
        }
        let said = match output {
            Output::Bytes(bytes, _) => screen.process(&bytes),
            Output::Rows(update, _) => screen.apply_rows(*update),
            Output::Resize { rows, cols } => {
                screen.resize(rows, cols);
                Said::default()
            }
        };
        if let Some(t) = said.title {
            title.set_if_neq(Title(t));
        }
        if let Some(p) = said.progress {
            progress.set_if_neq(Progress(p));
        }
        if let Some(a) = said.announced {
            // Rewritten even when equal: every announcement is news.
            *inband = Inband(Some((a, process.generation)));
        }
    }
    for (entity, so_far) in seen.drain() {
        if let Ok((_, _, _, _, mut glimpse, ..)) = panes.get_mut(entity) {
            match so_far.glimpse {
                // Rewritten even when equal: "seen this tick" is the fact resolve reads.
                Some(rule) => *glimpse = Glimpse(Some(rule)),
                None => {
                    glimpse.set_if_neq(Glimpse(None));
                }
            }
        }
    }
}
