//! `Progress`: the latest OSC 9;4 progress payload (`4;1;-1` busy, `4;0;0` cleared), as the
//! pane's terminal caught it. Written by `ingest_output` only.

use bevy_ecs::component::Component;

/// The latest progress payload, empty if none.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress(pub String);
