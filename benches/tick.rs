//! One detection tick over many panes, by changed fraction (§10). Each changed pane receives a
//! spinner redraw (parsed by vt100, then its rules evaluated); unchanged panes only cost the
//! change checks. The in-run baseline is the same world forced to re-evaluate every pane.
//!
//! 50×200 screens at 1k and 10k panes; vt100 keeps ~322 KB per 50×200 grid, so 100k panes of
//! that size (~32 GB) do not fit this 24 GiB machine: the 100k point uses 24×80 screens.

#[path = "support/screens.rs"]
mod screens;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use lookout::manifest::Catalog;
use lookout::resources::{Clock, EventOutbox};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Fleet {
    world: bevy_ecs::world::World,
    ids: Vec<String>,
    rows: usize,
    frame: usize,
    cursor: usize,
}

fn fleet(panes: usize, rows: usize, cols: usize) -> Fleet {
    let (catalog, errors) = Catalog::bundled();
    assert!(errors.is_empty(), "{errors:?}");
    let mut world = lookout::world(Arc::new(catalog));
    let ids: Vec<String> = (0..panes).map(|i| format!("pane-{i}")).collect();
    for (i, id) in ids.iter().enumerate() {
        let kind = if i % 2 == 0 { "claude" } else { "codex" };
        let _ =
            lookout::panes::open_pane(&mut world, id, rows as u16, cols as u16, Some(kind), None);
        let _ = lookout::panes::feed(
            &mut world,
            id,
            screens::claude_screen(rows, cols, i, "working").as_bytes(),
        );
    }
    let mut f = Fleet {
        world,
        ids,
        rows,
        frame: 0,
        cursor: 0,
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
        for _ in 0..changed {
            let id = &self.ids[self.cursor % self.ids.len()];
            self.cursor += 1;
            let _ = lookout::panes::feed(&mut self.world, id, update.as_bytes());
        }
        self.world
            .resource_mut::<Clock>()
            .advance(Duration::from_millis(500));
        self.world.run_schedule(lookout::Tick);
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
    let sizes: &[(usize, usize, usize)] = if std::env::var_os("LOOKOUT_BENCH_100K").is_some() {
        &[(1_000, 50, 200), (10_000, 50, 200), (100_000, 24, 80)]
    } else {
        &[(1_000, 50, 200), (10_000, 50, 200)]
    };
    let mut group = c.benchmark_group("tick");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    for &(panes, rows, cols) in sizes {
        let mut f = fleet(panes, rows, cols);
        for percent in [0usize, 1, 10, 100] {
            let changed = panes * percent / 100;
            group.bench_with_input(
                BenchmarkId::new(format!("{panes}x{rows}x{cols}"), format!("{percent}%")),
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
                "FIGURE tick panes={panes} screen={rows}x{cols} changed={percent}% tick={:.3} ms per_pane={:.1} ns per_changed_pane={per_changed}",
                m.as_secs_f64() * 1e3,
                m.as_secs_f64() * 1e9 / panes as f64
            );
        }
    }
    group.finish();
}

criterion_group!(benches, bench_tick);
criterion_main!(benches);
