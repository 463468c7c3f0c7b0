//! `Labels`: what the last turn-end report said beyond the state — `gate ×N`, `M agents`, the
//! gates and agent names (see docs/behaviour.md, Hook reports). Replaced wholesale by each
//! turn-end, cleared on process exit.
//! Written by `apply_transitions` only.

use super::cause::Cause;
use bevy_ecs::component::Component;

/// The pane's labels.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels {
    /// Short labels (`gate ×2`, `3 agents`).
    pub labels: Vec<String>,
    /// Gate names from the last turn-end.
    pub gates: Vec<String>,
    /// Sub-agent names from the last turn-end.
    pub agent_names: Vec<String>,
    /// What set them.
    pub cause: Option<Cause>,
}
