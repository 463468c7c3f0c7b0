//! Evaluation per agent over the recorded fixtures' marker screens: every
//! `tests/fixtures/<kind>/<version>/<case>.cast` is played into lookout's terminal, and the
//! screen (with its title and progress) at each marker is kept. For each agent the bench prints the mean
//! evaluation time over its marker screens and the ratio to an in-bench limit baseline: only the
//! deciding rule's region built lean (its rows rendered in one block) and one regex run over it —
//! the least any evaluation that reaches the same answer must do. Screens where no rule fires
//! have no deciding region and are left out of the ratio (counted in the line).
//!
//! The same screens are measured again as an embedder hands them over (rows): there
//! the evaluation reuses one scratch, as the evaluate system does, and the baseline copies the
//! deciding region's rows once.
//!
//! `LOOKOUT_BENCH_AGENT=claude` limits the run to one agent.

use criterion::{Criterion, criterion_group, criterion_main};
use lookout_core::asciicast::{self, EventKind};
use lookout_core::components::{GridRow, RowGrid, RowsUpdate};
use lookout_core::manifest::{Catalog, KindRules, Region};
use lookout_core::rules::{Grid, Look, Scratch, Strategy};
use lookout_core::terminal::Terminal;
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

/// One marker screen of one fixture.
struct Shot {
    screen: Terminal,
    /// The same screen as an embedder hands it over (the rows path).
    rows: RowGrid,
    title: String,
    progress: String,
}

fn rows_of(screen: &Terminal) -> RowGrid {
    let (rows, cols) = Grid::size(screen);
    let mut text = String::new();
    screen.write_rows(0, rows - 1, &mut text);
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
                (r as u16, row)
            })
            .collect(),
        cursor: screen.cursor(),
        alternate: screen.alternate_screen(),
        ..RowsUpdate::default()
    });
    grid
}

fn shots(kind: &str) -> Vec<Shot> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for f in lookout_core::corpus::walk(&root)
        .expect("tests/fixtures")
        .into_iter()
        .filter(|f| f.kind == kind)
    {
        let file = std::fs::File::open(&f.path).expect("fixture");
        let cast = asciicast::read(std::io::BufReader::new(file)).expect("cast");
        let mut p = Terminal::new(cast.header.height, cast.header.width);
        let (mut title, mut progress) = (String::new(), String::new());
        for e in &cast.events {
            match &e.kind {
                EventKind::Output(data) => {
                    let said = p.process(data.as_bytes());
                    if let Some(t) = said.title {
                        title = t;
                    }
                    if let Some(g) = said.progress {
                        progress = g;
                    }
                }
                EventKind::Resize { cols, rows } => p.resize(*rows, *cols),
                EventKind::Marker(_) => out.push(Shot {
                    screen: p.snapshot(),
                    rows: rows_of(&p),
                    title: title.clone(),
                    progress: progress.clone(),
                }),
                EventKind::Input(_) => {}
            }
        }
    }
    out
}

fn look<'a>(shot: &'a Shot, now: Instant) -> Look<'a> {
    look_at(shot, &shot.screen, now)
}

fn look_at<'a>(shot: &'a Shot, screen: &'a dyn Grid, now: Instant) -> Look<'a> {
    Look {
        screen,
        title: &shot.title,
        progress: &shot.progress,
        changed_at: Some(now - Duration::from_secs(5)),
        now,
    }
}

/// The rows `region` spans on this screen (first, last), found once outside the timed loop.
fn span(screen: &Terminal, region: Region) -> Option<(u16, u16)> {
    let (rows, _) = screen.size();
    let text = |r: u16| {
        let mut t = String::new();
        screen.write_rows(r, r, &mut t);
        t
    };
    let blank = |r: u16| text(r).trim_end().is_empty();
    let nonblank: Vec<u16> = (0..rows).filter(|&r| !blank(r)).collect();
    match region {
        Region::Bottom(n) => {
            let picked = &nonblank[nonblank.len().saturating_sub(usize::from(n))..];
            Some((*picked.first()?, *picked.last()?))
        }
        Region::Top(n) => {
            let picked = &nonblank[..usize::from(n).min(nonblank.len())];
            Some((*picked.first()?, *picked.last()?))
        }
        Region::LastLine => nonblank.last().map(|&r| (r, r)),
        Region::Screen => nonblank.last().map(|&r| (0, r)),
        Region::CursorLine => {
            let r = screen.cursor().0;
            Some((r, r))
        }
        Region::AfterLastRule | Region::PromptBox => {
            let is_rule = |r: u16| lookout_core::rules::regions::is_rule(&text(r));
            let mut rules = (0..rows).rev().filter(|&r| is_rule(r));
            let bottom = rules.next()?;
            if region == Region::AfterLastRule {
                let last = *nonblank.last()?;
                return (last > bottom).then_some((bottom + 1, last));
            }
            let top = rules.next()?;
            (bottom > top + 1).then_some((top + 1, bottom - 1))
        }
        Region::Title | Region::Progress => None,
    }
}

/// The limit baseline of one screen: the deciding region's rows rendered in one block and one
/// regex of the deciding rule run over them.
fn baseline<'a>(
    kind: &'a KindRules,
    shot: &'a Shot,
    winner: usize,
) -> Option<impl Fn(bool, &mut String) -> bool + 'a> {
    let rule = &kind.rules[winner];
    let region = kind.regions[rule.region];
    let span = match region {
        Region::Title | Region::Progress => None,
        r => Some(span(&shot.screen, r)?),
    };
    // the bare regex: the baseline has no literal check
    let re = rule.spec.primary_re.first()?.regex();
    Some(move |rows: bool, buf: &mut String| match (region, span) {
        (Region::Title, _) => re.is_match(&shot.title),
        (Region::Progress, _) => re.is_match(&shot.progress),
        (_, Some((a, b))) => {
            // Both grids keep rows as text: the region is those rows, copied once.
            let grid: &dyn Grid = if rows { &shot.rows } else { &shot.screen };
            buf.clear();
            grid.write_rows(a, b, buf);
            re.is_match(buf)
        }
        _ => false,
    })
}

fn time(n: usize, f: &mut dyn FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        f();
    }
    t.elapsed().as_secs_f64() * 1e6 / n as f64
}

fn bench_agents(c: &mut Criterion) {
    let (catalog, errors) = Catalog::bundled();
    assert!(errors.is_empty(), "{errors:?}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut kinds: Vec<String> = lookout_core::corpus::walk(&root)
        .expect("tests/fixtures")
        .into_iter()
        .map(|f| f.kind)
        .collect();
    kinds.dedup();
    if let Ok(only) = std::env::var("LOOKOUT_BENCH_AGENT") {
        kinds.retain(|k| *k == only);
    }
    let mut group = c.benchmark_group("agents");
    group
        .sample_size(10)
        .measurement_time(Duration::from_millis(500))
        .warm_up_time(Duration::from_millis(100));
    let (mut all_eval, mut all_base, mut all_rows) = (0.0, 0.0, (0.0, 0.0));
    for name in &kinds {
        let Some(kind) = catalog.kind_id(name).and_then(|k| catalog.kind(k)) else {
            continue;
        };
        let shots = shots(name);
        let now = Instant::now();
        group.bench_function(name.as_str(), |b| {
            b.iter(|| {
                for s in &shots {
                    black_box(kind.evaluate(&look(s, now)));
                }
            })
        });
        let n = 300;
        let mut buf = String::new();
        let mut scratch = Scratch::default();
        // (evaluation, baseline) µs summed over decided screens: bytes parsed by lookout's
        // terminal, rows handed over by an embedder. Both reuse one scratch, as the evaluate
        // system does.
        let (mut vt, mut rows, mut decided) = ((0.0, 0.0), (0.0, 0.0), 0);
        for s in &shots {
            let winner = kind.evaluate(&look(s, now)).winner;
            let Some(f) = winner.and_then(|w| baseline(kind, s, w)) else {
                continue;
            };
            decided += 1;
            let parsed = look(s, now);
            vt.0 += time(n, &mut || {
                scratch.begin(&s.screen);
                black_box(kind.evaluate_in(&parsed, &mut scratch, Strategy::DEFAULT));
            });
            vt.1 += time(n, &mut || {
                black_box(f(false, &mut buf));
            });
            let on_rows = look_at(s, &s.rows, now);
            rows.0 += time(n, &mut || {
                scratch.begin(&s.rows);
                black_box(kind.evaluate_in(&on_rows, &mut scratch, Strategy::DEFAULT));
            });
            rows.1 += time(n, &mut || {
                black_box(f(true, &mut buf));
            });
        }
        if decided == 0 {
            continue;
        }
        all_eval += vt.0;
        all_base += vt.1;
        all_rows.0 += rows.0;
        all_rows.1 += rows.1;
        let d = decided as f64;
        println!(
            "FIGURE agents {name}: {decided} of {} marker screens decided; terminal path: evaluation {:.2} µs, limit baseline {:.2} µs, ratio {:.2}×; rows path: evaluation {:.2} µs, limit baseline {:.2} µs, ratio {:.2}×",
            shots.len(),
            vt.0 / d,
            vt.1 / d,
            vt.0 / vt.1,
            rows.0 / d,
            rows.1 / d,
            rows.0 / rows.1
        );
    }
    if all_base > 0.0 {
        println!(
            "FIGURE agents all: evaluation/limit baseline, terminal path {:.2}×, rows path {:.2}× (time-weighted over every decided screen)",
            all_eval / all_base,
            all_rows.0 / all_rows.1
        );
    }
    group.finish();
}

criterion_group!(benches, bench_agents);
criterion_main!(benches);
