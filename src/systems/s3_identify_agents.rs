//! Ingest, step 3: identification (§3.6) — a pane whose kind the embedder did not name takes
//! the kind whose `identify.process` matches its new foreground process. No match, no kind.
//!
//! Reads `HookedProcess` (changed only) and `Manifests`; writes `AgentKind`.

use crate::components::{AgentKind, HookedProcess, Presence};
use crate::resources::Manifests;
use bevy_ecs::prelude::*;
use std::sync::Arc;

/// Re-identifies panes whose process changed.
pub fn identify_agents(
    manifests: Res<Manifests>,
    mut panes: Query<(&HookedProcess, &mut AgentKind), Changed<HookedProcess>>,
) {
    for (process, mut kind) in &mut panes {
        if kind.named || process.presence != Presence::Alive {
            continue;
        }
        let catalog = &manifests.0;
        let name = catalog.identify(&process.argv, process.comm.as_deref());
        kind.set_if_neq(AgentKind {
            name: name.map(Arc::from),
            id: name.and_then(|n| catalog.kind_id(n)),
            named: false,
        });
    }
}
