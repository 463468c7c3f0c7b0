//! Memory per pane on both input paths, counted by an instrumented global allocator:
//! the bytes a world holds per open pane once its screen is drawn and evaluated, and how much of
//! that is the terminal's grid (a bare `terminal::Terminal` of the same size with the same screen;
//! a bare vt100 grid, the terminal lookout used before, is printed next to it). Printed, never
//! asserted; no timing here, so criterion is not used.

#[allow(dead_code, reason = "the tick bench uses the rest")]
#[path = "support/screens.rs"]
mod screens;

use lookout_core::components::{GridRow, RowsUpdate};
use lookout_core::manifest::Catalog;
use lookout_core::resources::{Clock, EventOutbox};
use lookout_core::terminal::Terminal;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;
use std::sync::Arc;
use std::time::Duration;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const PANES: usize = 1_000;
const ROWS: usize = 50;
const COLS: usize = 200;

fn held(region: &Region<'_, System>) -> f64 {
    let c = region.change();
    (c.bytes_allocated as f64 - c.bytes_deallocated as f64) / PANES as f64
}

fn rows_of(text: &str) -> RowsUpdate {
    let mut p = vt100::Parser::new(
        std::num::NonZeroU16::new(ROWS as u16).expect("rows"),
        std::num::NonZeroU16::new(COLS as u16).expect("cols"),
        0,
    );
    p.process(text.as_bytes());
    RowsUpdate {
        rows: p
            .screen()
            .rows(0, COLS as u16)
            .enumerate()
            .map(|(r, t)| {
                let row = GridRow {
                    text: t.into(),
                    runs: Box::new([]),
                };
                (r as u16, row)
            })
            .collect(),
        cursor: p.screen().cursor_position(),
        ..RowsUpdate::default()
    }
}

/// Bytes held per pane by a world of `PANES` panes, each drawn and evaluated twice.
fn per_pane(as_rows: bool) -> f64 {
    let (catalog, errors) = Catalog::bundled();
    assert!(errors.is_empty(), "{errors:?}");
    let mut world = lookout_core::world(Arc::new(catalog));
    // The fleet is sized for this machine, not for the default screen budget.
    world.insert_resource(lookout_core::resources::ScreenCells::with_limit(u64::MAX));
    let screen = screens::claude_screen(ROWS, COLS, 3, "working");
    let update = rows_of(&screen);
    world.run_schedule(lookout_core::Tick);
    let region = Region::new(GLOBAL);
    for i in 0..PANES {
        let id = format!("pane-{i}");
        let (r, c) = (ROWS as u16, COLS as u16);
        if as_rows {
            let _ =
                lookout_core::panes::open_rows_pane(&mut world, &id, r, c, Some("claude"), None);
            let now = world.resource::<Clock>().now;
            let _ = lookout_core::panes::feed_rows(&mut world, &id, update.clone(), now);
        } else {
            let _ = lookout_core::panes::open_pane(&mut world, &id, r, c, Some("claude"), None);
            let _ = lookout_core::panes::feed(&mut world, &id, screen.as_bytes());
        }
    }
    for _ in 0..2 {
        world
            .resource_mut::<Clock>()
            .advance(Duration::from_millis(500));
        world.run_schedule(lookout_core::Tick);
        let outbox = world.resource::<EventOutbox>();
        for _ in outbox.events().try_iter() {}
    }
    let bytes = held(&region);
    drop(world);
    bytes
}

/// Bytes one bare terminal of the same size holds with the same screen.
fn grid_alone() -> f64 {
    let screen = screens::claude_screen(ROWS, COLS, 3, "working");
    let region = Region::new(GLOBAL);
    let terminals: Vec<Terminal> = (0..PANES)
        .map(|_| {
            let mut t = Terminal::new(ROWS as u16, COLS as u16);
            let _ = t.process(screen.as_bytes());
            t
        })
        .collect();
    let bytes = held(&region);
    drop(terminals);
    bytes
}

/// Bytes one bare vt100 grid of the same size holds with the same screen.
fn vt100_alone() -> f64 {
    let screen = screens::claude_screen(ROWS, COLS, 3, "working");
    let region = Region::new(GLOBAL);
    let parsers: Vec<vt100::Parser> = (0..PANES)
        .map(|_| {
            let mut p = vt100::Parser::new(
                std::num::NonZeroU16::new(ROWS as u16).expect("rows"),
                std::num::NonZeroU16::new(COLS as u16).expect("cols"),
                0,
            );
            p.process(screen.as_bytes());
            p
        })
        .collect();
    let bytes = held(&region);
    drop(parsers);
    bytes
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing and wants no run.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let grid = grid_alone();
    let vt100 = vt100_alone();
    let vt = per_pane(false);
    let rows = per_pane(true);
    println!(
        "FIGURE memory terminal path: {:.1} KB/pane ({ROWS}x{COLS}; terminal grid {:.1} KB, lookout beyond the grid {:.2} KB; a vt100 grid was {:.1} KB)",
        vt / 1024.0,
        grid / 1024.0,
        (vt - grid) / 1024.0,
        vt100 / 1024.0
    );
    println!(
        "FIGURE memory rows path: {:.2} KB/pane in total ({ROWS}x{COLS}, the claude working screen)",
        rows / 1024.0
    );
}
