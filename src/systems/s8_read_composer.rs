//! Transition (after `apply_transitions`): the composer verdict (SPEC §15) → `Composer`.
//!
//! Read only when the pane's screen, lifecycle, kind or process changed. It needs this tick's
//! lifecycle, so it runs after the transition: a blocked pane's cursor is in a menu, never in a
//! composer. A pane whose kind has no `[composer]`, whose process exited (the shell left behind
//! is not the agent's input box) or whose screen never received output is `unknown`.

use crate::components::{
    AgentKind, Composer, ComposerView, HookedProcess, Lifecycle, LifecycleState, Presence, Screen,
};
use crate::resources::Manifests;
use bevy_ecs::prelude::*;

type Inputs<'a> = (
    Ref<'a, Screen>,
    Ref<'a, Lifecycle>,
    Ref<'a, AgentKind>,
    Ref<'a, HookedProcess>,
    &'a mut Composer,
);

/// Reads the composer of every pane whose screen or state changed.
pub fn read_composer(manifests: Res<Manifests>, mut panes: Query<Inputs>) {
    for (screen, lifecycle, kind, process, mut composer) in &mut panes {
        let changed = screen.is_changed()
            || lifecycle.is_changed()
            || kind.is_changed()
            || process.is_changed();
        if !changed {
            continue;
        }
        let spec = kind
            .id
            .and_then(|id| manifests.0.kind(id))
            .and_then(|k| k.composer.as_ref());
        let view = match spec {
            Some(_) if lifecycle.state == LifecycleState::Blocked => ComposerView::UNKNOWN,
            Some(_) if process.presence == Presence::Exited => ComposerView::UNKNOWN,
            Some(_) if screen.changed_at.is_none() => ComposerView::UNKNOWN,
            Some(spec) => crate::rules::composer::read(&screen, spec),
            None => ComposerView::UNKNOWN,
        };
        composer.set_if_neq(Composer(view));
    }
}
