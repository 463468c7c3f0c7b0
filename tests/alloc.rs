//! No allocation on the evaluation hot path, counted by an instrumented global
//! allocator: once the evaluate system's scratch has grown to the screen, evaluating a changed
//! screen allocates nothing, whether it was fed as rows or parsed from bytes by lookout's terminal
//! (whose rows are kept rendered). And a program that opens an OSC and never ends it cannot grow
//! the terminal's memory: the parser keeps at most 1 KiB of it.
//! One test in this binary: the counter is process-wide.

#[allow(dead_code, reason = "the benches use the rest")]
#[path = "../benches/support/screens.rs"]
mod screens;

use lookout_core::components::{GridRow, RowGrid, RowsUpdate, Screen};
use lookout_core::manifest::Catalog;
use lookout_core::rules::{Grid, Look, Scratch, Strategy};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;
use std::time::Instant;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The rows of a parsed screen as an embedder would send them.
fn rows_of(screen: &Screen) -> RowGrid {
    let (rows, cols) = screen.grid().size();
    let mut text = String::new();
    screen.grid().write_rows(0, rows - 1, &mut text);
    let mut grid = RowGrid::new(rows, cols);
    grid.apply(RowsUpdate {
        rows: text
            .lines()
            .enumerate()
            .map(|(r, text)| {
                let row = GridRow {
                    text: text.into(),
                    runs: Box::new([]),
                };
                (u16::try_from(r).expect("row"), row)
            })
            .collect(),
        cursor: screen.grid().cursor(),
        ..RowsUpdate::default()
    });
    grid
}

/// Allocations made by `n` evaluations of `grid`, after warming the scratch up.
fn allocations(
    kind: &lookout_core::manifest::KindRules,
    grid: &dyn Grid,
    n: usize,
) -> (usize, bool) {
    let now = Instant::now();
    let look = Look {
        screen: grid,
        title: "✳ Claude Code",
        progress: "",
        changed_at: Some(now),
        now,
    };
    let mut scratch = Scratch::default();
    for _ in 0..3 {
        scratch.begin(grid);
        kind.evaluate_in(&look, &mut scratch, Strategy::DEFAULT);
    }
    let region = Region::new(GLOBAL);
    let mut fired = false;
    for _ in 0..n {
        scratch.begin(grid);
        fired |= kind
            .evaluate_in(&look, &mut scratch, Strategy::DEFAULT)
            .winner
            .is_some();
    }
    (region.change().allocations, fired)
}

#[test]
fn evaluating_a_changed_screen_allocates_nothing_once_warm() {
    let (catalog, errors) = Catalog::bundled();
    assert!(errors.is_empty(), "{errors:?}");
    let kind = catalog
        .kind_id("claude")
        .and_then(|k| catalog.kind(k))
        .expect("claude rules");
    for state in ["working", "blocked", "idle"] {
        let mut vt = Screen::new(50, 200);
        let _ = vt.process(screens::claude_screen(50, 200, 3, state).as_bytes());
        let rows = rows_of(&vt);
        let n = 50;
        let (on_rows, fired) = allocations(kind, &rows, n);
        assert!(fired, "{state}: a rule fires on the rows");
        assert_eq!(on_rows, 0, "{state}: evaluations of embedder rows allocate");
        let (on_vt, fired) = allocations(kind, vt.grid(), n);
        assert!(fired, "{state}: a rule fires on the parsed screen");
        assert_eq!(on_vt, 0, "{state}: evaluations of a parsed screen allocate");
    }
    // A finished Codex turn (the prompt echoed, the answer under it, the composer): its
    // `finished_turn` rule wins and fingerprints its hit, and that allocates nothing either.
    let codex = catalog
        .kind_id("codex")
        .and_then(|k| catalog.kind(k))
        .expect("codex rules");
    let mut vt = Screen::new(40, 120);
    let _ = vt.process(
        "\x1b[2;3H>_ OpenAI Codex (v0.171.0)\x1b[6;1H› hello, a short one\x1b[9;1H• Mock answer.\
         \x1b[11;3HWorked for <1s • 18:08\x1b[37;1H› Ask Codex to do anything\x1b[39;3Hmock-model"
            .as_bytes(),
    );
    let rows = rows_of(&vt);
    let now = Instant::now();
    let look = Look {
        screen: &rows,
        title: "project",
        progress: "",
        changed_at: Some(now),
        now,
    };
    let outcome = codex.evaluate(&look);
    let winner = outcome.winner.map(|i| codex.rules[i].id.to_string());
    assert_eq!(winner.as_deref(), Some("finished-turn"));
    assert!(outcome.turn.is_some(), "the turn is fingerprinted");
    let (on_rows, _) = allocations(codex, &rows, 50);
    assert_eq!(on_rows, 0, "a finished turn's fingerprint allocates");
    unterminated_osc_is_bounded();
}

/// 8 MiB of an OSC title that never ends, fed in PTY-sized reads: the terminal holds none of it
/// beyond the parser's fixed buffer (a growing one held all 8 MiB).
fn unterminated_osc_is_bounded() {
    let mut vt = Screen::new(24, 80);
    let _ = vt.process(b"]0;");
    let chunk = vec![b'x'; 16 * 1024];
    let region = Region::new(GLOBAL);
    for _ in 0..512 {
        let _ = vt.process(&chunk);
    }
    let held =
        region.change().bytes_allocated as isize - region.change().bytes_deallocated as isize;
    assert!(held < 64 * 1024, "an unterminated OSC holds {held} bytes");
}
