//! `Progress`: the latest OSC 9;4 progress payload (`4;1;-1` busy, `4;0;0` cleared). vt100 does
//! not interpret it, so the `Osc` callbacks catch it. Written by `ingest_output` only.

use bevy_ecs::component::Component;

/// The latest progress payload, empty if none.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress(pub String);
