//! # lookout-core: which of your AI coding agents is working, blocked, done or idle
//!
//! The detection core of [lookout](https://crates.io/crates/lookout), for a program that already
//! owns terminal panes — a multiplexer, a terminal, an orchestrator — and wants to know what the
//! coding agent in each one is doing. It does no I/O, starts no thread and never reads the clock:
//! the embedder hands over what it has (PTY bytes or the rows it already rendered, the process
//! in each pane, hook reports from the agents) and runs one schedule on its own tick.
//!
//! ## The pipeline
//!
//! Panes are entities in a [`bevy_ecs`] `World`; each fact about a pane is a component
//! ([`components`]: `Screen`, `Title`, `AgentKind`, `HookedProcess`, `Verdict`, `Lifecycle`,
//! `Attention`, …, each written by exactly one stage). [`world`] builds the world; every
//! `world.run_schedule(Tick)` runs the stages of [`DetectionSystems`] in order:
//!
//! 1. **Ingest** — output or rows into each pane's `Screen`, processes into `HookedProcess`,
//!    the agent identified from its process (`AgentKind`), hook reports judged into evidence;
//! 2. **Evaluate** — the rules of the pane's agent ([`manifest`], one TOML file per agent in
//!    `manifests/`) over the regions of changed screens ([`rules`]);
//! 3. **Resolve** — a departed process, a hook's word and the screen's verdict → one `Verdict`;
//! 4. **Transition** — the lifecycle table (`working`, `blocked`, `done`, `idle`), attention
//!    flags (`unread`, `input_required`, `stuck`), labels; then the input box (`Composer`);
//! 5. **Emit** — numbered [`event::Event`]s and report answers into the `EventOutbox`.
//!
//! A tick where nothing changed does almost nothing: each stage reads only what changed.
//!
//! ## Embedding
//!
//! [`panes`] is the one door to the world: open and close panes, feed bytes or rows, report
//! processes and hook reports, read states and explanations. `examples/embed.rs` is a complete
//! loop (`cargo run --example embed`); in short:
//!
//! ```
//! use lookout_core::{Tick, manifest::Catalog, panes, resources::{Clock, EventOutbox}};
//! use std::{sync::Arc, time::{Instant, SystemTime}};
//!
//! let (catalog, errors) = Catalog::bundled();
//! assert!(errors.is_empty());
//! let mut world = lookout_core::world(Arc::new(catalog));
//! panes::open_pane(&mut world, "left", 24, 80, Some("claude"), None).unwrap();
//! panes::feed(&mut world, "left", b"\x1b[33m\xe2\x9c\xbb Thinking\xe2\x80\xa6 (esc to interrupt)\x1b[0m").unwrap();
//! // your tick, every few hundred milliseconds:
//! *world.resource_mut::<Clock>() = Clock::at(Instant::now(), SystemTime::now());
//! world.run_schedule(Tick);
//! for event in world.resource::<EventOutbox>().events().try_iter() {
//!     println!("{} {:?}", event.pane, event.change);
//! }
//! println!("{:?}", panes::state(&world, "left").unwrap().lifecycle);
//! ```

pub mod asciicast;
pub mod components;
pub mod corpus;
pub mod event;
pub mod manifest;
pub mod panes;
pub mod replay;
pub mod report;
pub mod resources;
pub mod rules;
pub mod schedule;
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
