//! `Inband`: the latest state the pane's program announced about itself in its byte stream (a
//! desktop notification, OSC 9;4 progress, an OSC 7501 status; see docs/agent-authors.md), with
//! the process generation it arrived in. Written by `ingest_output` only, and rewritten on every
//! announcement, even an equal one: each notification is news (two turns, two `done`s).

use super::hooked_process::Generation;
use crate::terminal::Announcement;
use bevy_ecs::component::Component;

/// The latest announcement, if any.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct Inband(pub Option<(Announcement, Generation)>);
