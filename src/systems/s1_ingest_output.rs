//! Ingest, step 1: PTY output and resizes → `Screen`, `Title`, `Progress`.
//!
//! Reads `OutputInbox`, `PaneIndex`, `Clock`; writes the three components. Bytes are handed to
//! vt100 as they are: garbage renders as garbage, never a panic (§11).

use crate::components::{Progress, Screen, Title};
use crate::resources::{Clock, Output, OutputInbox, PaneIndex};
use bevy_ecs::prelude::*;

/// Feeds queued output to each pane's terminal and records when its screen changed.
pub fn ingest_output(
    mut inbox: ResMut<OutputInbox>,
    index: Res<PaneIndex>,
    clock: Res<Clock>,
    mut panes: Query<(&mut Screen, &mut Title, &mut Progress)>,
) {
    if inbox.is_empty() {
        return;
    }
    for (pane, output) in inbox.drain() {
        let Some(entity) = index.get(&pane) else {
            continue;
        };
        let Ok((mut screen, mut title, mut progress)) = panes.get_mut(entity) else {
            continue;
        };
        let screen = &mut *screen;
        match output {
            Output::Bytes(bytes) => screen.parser.process(&bytes),
            Output::Resize { rows, cols } => screen.resize(rows, cols),
        }
        screen.changed_at = Some(clock.now);
        let osc = screen.parser.callbacks_mut();
        if let Some(t) = osc.title.take() {
            title.set_if_neq(Title(t));
        }
        if let Some(p) = osc.progress.take() {
            progress.set_if_neq(Progress(p));
        }
    }
}
