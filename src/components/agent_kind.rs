//! `AgentKind`: which manifest rules apply to the pane. Named by the embedder at spawn, or
//! identified from the foreground process by `identify_agents` (its only writer after spawn).

use crate::manifest::KindId;
use bevy_ecs::component::Component;
use std::sync::Arc;

/// The pane's agent kind, if known.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentKind {
    /// The kind's name (`claude`, `generic`, …).
    pub name: Option<Arc<str>>,
    /// Its rules in the catalog (`None`: no manifest describes it).
    pub id: Option<KindId>,
    /// The embedder named it: identification never overrides it.
    pub named: bool,
}
