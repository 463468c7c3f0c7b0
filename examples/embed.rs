//! How a multiplexer (or any program that already keeps its panes' screens) embeds lookout's
//! detection core: own a `World`, open panes, hand over the rows that changed and any hook
//! reports, set the clock, run the `Tick` schedule on your own tick, and drain the events.
//!
//! Run it with `cargo run --example embed`. It opens one Claude Code pane, shows it working,
//! then a permission dialog, then a hook report of a finished turn, and prints each event.

use lookout_core::components::{GridRow, RowsUpdate};
use lookout_core::manifest::Catalog;
use lookout_core::report::{Report, ReportBody, ReportedState};
use lookout_core::resources::{Clock, EventOutbox, ProcessEvent};
use lookout_core::{Tick, panes};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

const ROWS: u16 = 12;
const COLS: u16 = 60;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The bundled manifests (add your users' own with `Catalog::standard(&[dir])`).
    let (catalog, errors) = Catalog::bundled();
    if let Some(e) = errors.first() {
        return Err(format!("bundled manifests: {e}").into());
    }
    let mut world = lookout_core::world(Arc::new(catalog));
    panes::open_rows_pane(&mut world, "pane-1", ROWS, COLS, Some("claude"), None)?;
    // The process the pane runs (a hook report is believed only while its agent is alive).
    let argv = vec!["claude".to_owned()];
    panes::process(
        &mut world,
        "pane-1",
        ProcessEvent::Started {
            pid: Some(4242),
            argv,
            comm: None,
        },
    )?;

    let start = Instant::now();
    let mut at = start;
    let tick = |world: &mut bevy_ecs::world::World, at: Instant| {
        // The core reads time only from `Clock`: the embedder's tick sets it.
        *world.resource_mut::<Clock>() = Clock::at(at, SystemTime::now());
        world.run_schedule(Tick);
        let outbox = world.resource::<EventOutbox>();
        for event in outbox.events().try_iter() {
            println!(
                "event {:>2}  {}  {:?}",
                event.seq.0, event.pane, event.change
            );
        }
        for (_, answer) in outbox.answers().try_iter() {
            println!("report answered: {answer:?}");
        }
    };

    // Frame 1: the agent is thinking (a spinner line above its input box).
    let rule = "─".repeat(usize::from(COLS) - 2);
    let working = [
        "> fix the tests",
        "",
        "✻ Thinking… (3s · esc to interrupt)",
        "",
        &rule,
        "> ",
        &rule,
    ];
    panes::feed_rows(&mut world, "pane-1", screen(&working), at)?;
    tick(&mut world, at);
    println!("state: {:?}", panes::state(&world, "pane-1")?.lifecycle);

    // Frame 2, half a second later: a permission dialog replaces the bottom of the screen.
    at += Duration::from_millis(500);
    let dialog = [
        "> fix the tests",
        "",
        &rule,
        " Bash command",
        "   cargo test",
        "",
        " Do you want to proceed?",
        " ❯ 1. Yes",
        "   2. No, and tell Claude what to do differently (esc)",
    ];
    panes::feed_rows(&mut world, "pane-1", screen(&dialog), at)?;
    tick(&mut world, at);
    println!("state: {:?}", panes::state(&world, "pane-1")?.lifecycle);

    // A hook report (the agent's own word) outranks the screen: its source announces its
    // session, then numbers its reports.
    at += Duration::from_millis(500);
    let report = |body| Report {
        pane: "pane-1".into(),
        source: "hook:claude".into(),
        body,
    };
    panes::report(&mut world, report(ReportBody::Session("session-1".into())));
    let done = ReportBody::State {
        seq: 1,
        state: ReportedState::Done,
    };
    panes::report(&mut world, report(done));
    tick(&mut world, at);
    let state = panes::state(&world, "pane-1")?;
    println!("state: {:?}, unread: {}", state.lifecycle, state.unread);
    Ok(())
}

/// A whole screen as a rows update: every row named (a real embedder sends only changed rows).
fn screen(lines: &[&str]) -> RowsUpdate {
    let rows = (0..ROWS)
        .map(|r| {
            let text = lines.get(usize::from(r)).copied().unwrap_or("");
            (
                r,
                GridRow {
                    text: text.into(),
                    runs: Box::new([]),
                },
            )
        })
        .collect();
    RowsUpdate {
        rows,
        cursor: (ROWS - 1, 0),
        ..RowsUpdate::default()
    }
}
