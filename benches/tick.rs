//! One detection tick over many panes, by changed fraction (see docs/performance.md). Each changed
//! pane receives a
//! spinner redraw (parsed by lookout's terminal, then its rules evaluated); unchanged panes cost
//! nothing. The same fleet is measured again fed as embedder rows (the changed status
//! row handed over as text, no parsing), at 10k panes and 100k.
//!
//! 50×200 screens at 1k and 10k panes; the terminal keeps ~105 KB per 50×200 grid, so 100k
//! parsed panes of that size (~10 GB) would crowd this shared 24 GiB machine: the parsed 100k
//! point uses 24×80 screens (the size the 100k target is stated at), the rows path is
//! measured at both 24×80 and 50×200.

#[path = "support/screens.rs"]
mod screens;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use lookout_core::manifest::Catalog;
use lookout_core::resources::{Clock, EventOutbox};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Fleet {
    world: bevy_ecs::world::World,
    ids: Vec<String>,
    rows: usize,
    frame: usize,
    cursor: usize,
    /// Fed as embedder rows instead of bytes.
    as_rows: bool,
}

/// The rows of `text` drawn on a `rows` × `cols` screen, as an embedder sends them.
fn rows_update(text: &str, rows: usize, cols: usize) -> lookout_core::components::RowsUpdate {
    let mut p = vt100::Parser::new(
        std::num::NonZeroU16::new(rows as u16).expect("rows"),
        std::num::NonZeroU16::new(cols as u16).expect("cols"),
        0,
    );
    p.process(text.as_bytes());
    lookout_core::components::RowsUpdate {
        rows: p
            .screen()
            .rows(0, cols as u16)
            .enumerate()
            .map(|(r, t)| (r as u16, row(&t)))
            .collect(),
        cursor: p.screen().cursor_position(),
        ..Default::default()
    }
}

fn row(text: &str) -> lookout_core::components::GridRow {
    lookout_core::components::GridRow {
        text: text.into(),
        runs: Box::new([]),
    }
}

/// The status row of a spinner frame, as an embedder sends it.
fn spinner_row(rows: usize, frame: usize) -> lookout_core::components::RowsUpdate {
    let text = screens::spinner_update(rows, frame);
    let line = text.rsplit("\x1b[2K").next().unwrap_or("");
    let line = line.split('\x1b').next().unwrap_or("");
    lookout_core::components::RowsUpdate {
        rows: vec![(rows.saturating_sub(6) as u16, row(line))],
        // Parked in the input box, as after the bytes of the same frame.
        cursor: (rows.saturating_sub(3) as u16, 2),
        ..Default::default()
    }
}

fn fleet(panes: usize, rows: usize, cols: usize, as_rows: bool) -> Fleet {
    let (catalog, errors) = Catalog::bundled();
    assert!(errors.is_empty(), "{errors:?}");
    let mut world = lookout_core::world(Arc::new(catalog));
    // The fleet is sized for this machine, not for the default screen budget.
    world.insert_resource(lookout_core::resources::ScreenCells::with_limit(u64::MAX));
    let ids: Vec<String> = (0..panes).map(|i| format!("pane-{i}")).collect();
    for (i, id) in ids.iter().enumerate() {
        let kind = if i % 2 == 0 { "claude" } else { "codex" };
        let screen = screens::claude_screen(rows, cols, i, "working");
        let (r, c) = (rows as u16, cols as u16);
        if as_rows {
            let _ = lookout_core::panes::open_rows_pane(&mut world, id, r, c, Some(kind), None);
            let now = world.resource::<Clock>().now;
            let _ = lookout_core::panes::feed_rows(
                &mut world,
                id,
                rows_update(&screen, rows, cols),
                now,
            );
        } else {
            let _ = lookout_core::panes::open_pane(&mut world, id, r, c, Some(kind), None);
            let _ = lookout_core::panes::feed(&mut world, id, screen.as_bytes());
        }
    }
    let mut f = Fleet {
        world,
        ids,
        rows,
        frame: 0,
        cursor: 0,
        as_rows,
    };
    f.tick(0);
    f.tick(0);
    f
}

impl Fleet {
    /// Feeds `changed` panes (round robin) one spinner frame, then runs one tick.
    fn tick(&mut self, changed: usize) {
        self.frame += 1;
        let update = screens::spinner_update(self.rows, self.frame);
        let now = self.world.resource::<Clock>().now;
        for _ in 0..changed {
            let id = &self.ids[self.cursor % self.ids.len()];
            self.cursor += 1;
            if self.as_rows {
                let rows = spinner_row(self.rows, self.frame);
                let _ = lookout_core::panes::feed_rows(&mut self.world, id, rows, now);
            } else {
                let _ = lookout_core::panes::feed(&mut self.world, id, update.as_bytes());
            }
        }
        self.world
            .resource_mut::<Clock>()
            .advance(Duration::from_millis(500));
        self.world.run_schedule(lookout_core::Tick);
        let outbox = self.world.resource::<EventOutbox>();
        for _ in outbox.events().try_iter() {}
    }
}

/// Median wall time of `n` ticks: printed next to criterion's figures so the note can quote them.
fn median_tick(f: &mut Fleet, changed: usize, n: usize) -> Duration {
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f.tick(changed);
            t.elapsed()
        })
        .collect();
    times.sort();
    times[n / 2]
}

fn bench_tick(c: &mut Criterion) {
    let sizes: &[(usize, usize, usize, bool)] = if std::env::var_os("LOOKOUT_BENCH_100K").is_some()
    {
        &[
            (1_000, 50, 200, false),
            (10_000, 50, 200, false),
            (100_000, 24, 80, false),
            (10_000, 50, 200, true),
            (100_000, 24, 80, true),
            (100_000, 50, 200, true),
        ]
    } else {
        &[
            (1_000, 50, 200, false),
            (10_000, 50, 200, false),
            (10_000, 50, 200, true),
        ]
    };
    let mut group = c.benchmark_group("tick");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    for &(panes, rows, cols, as_rows) in sizes {
        let mut f = fleet(panes, rows, cols, as_rows);
        let path = if as_rows { "rows" } else { "terminal" };
        for percent in [0usize, 1, 10, 100] {
            let changed = panes * percent / 100;
            group.bench_with_input(
                BenchmarkId::new(
                    format!("{path}/{panes}x{rows}x{cols}"),
                    format!("{percent}%"),
                ),
                &changed,
                |b, &changed| {
                    b.iter(|| f.tick(changed));
                },
            );
            let m = median_tick(&mut f, changed, 7);
            let per_changed = if changed > 0 {
                format!("{:.2} µs", m.as_secs_f64() * 1e6 / changed as f64)
            } else {
                "-".into()
            };
            println!(
                "FIGURE tick {path} panes={panes} screen={rows}x{cols} changed={percent}% tick={:.3} ms per_pane={:.1} ns per_changed_pane={per_changed}",
                m.as_secs_f64() * 1e3,
                m.as_secs_f64() * 1e9 / panes as f64
            );
        }
    }
    group.finish();
}

criterion_group!(benches, bench_tick);
criterion_main!(benches);
