//! Ingest, step 3: identification (see docs/behaviour.md, Identification) — a pane whose kind the
//! embedder did not name takes
//! the kind whose `identify.process` matches its new foreground process. No match, no kind.
//!
//! Reads `HookedProcess` (changed only, on awake panes: only `ingest_processes` changes it) and
//! `Manifests`; writes `AgentKind`.

use crate::components::{AgentKind, HookedProcess, Presence};
use crate::resources::{Awake, Manifests};
use bevy_ecs::prelude::*;
use std::sync::Arc;

/// Re-identifies panes whose process changed.
pub fn identify_agents(
    manifests: Res<Manifests>,
    awake: Res<Awake>,
    mut panes: Query<(Ref<HookedProcess>, &mut AgentKind)>,
) {
    for &entity in awake.panes() {
        let Ok((process, mut kind)) = panes.get_mut(entity) else {
            continue;
        };
        if !process.is_changed() || kind.named || process.presence != Presence::Alive {
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
