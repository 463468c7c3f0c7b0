#![doc = include_str!("../README.md")]

pub mod cli;
pub mod components;
pub mod corpus;
pub mod event;
pub mod fleet;
pub mod fuzzing;
pub mod manifest;
pub mod notify;
pub mod panes;
pub mod pty;
pub mod replay;
pub mod report;
pub mod resources;
pub mod rules;
pub mod schedule;
pub mod server;
pub mod sources;
pub mod systems;
pub mod terminal;

pub use schedule::{DetectionSystems, Tick, build_schedule};

use bevy_ecs::world::World;
use manifest::Catalog;
use resources::*;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// Builds the detection world: every resource inserted, the `Tick` schedule added. The server,
/// the tools, the tests and the benches all start here. The clock starts at "now"; an embedder
/// sets `Clock` before each tick.
pub fn world(catalog: Arc<Catalog>) -> World {
    let mut world = World::new();
    world.insert_resource(Manifests(catalog));
    world.insert_resource(Clock::at(Instant::now(), SystemTime::now()));
    world.insert_resource(PaneIndex::default());
    world.insert_resource(ScreenCells::default());
    world.insert_resource(OutputInbox::default());
    world.insert_resource(Awake::default());
    world.insert_resource(ProcessInbox::default());
    world.insert_resource(ReportInbox::default());
    world.insert_resource(SeenInbox::default());
    world.insert_resource(HeldReports::default());
    world.insert_resource(EventOutbox::default());
    world.insert_resource(EventCounter::default());
    world.add_schedule(build_schedule());
    world
}
