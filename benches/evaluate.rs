//! Rule evaluation of one changed pane (see docs/performance.md): the combined automaton (one
//! RegexSet pass per
//! region, then rules in priority order) against the naive per-rule scan of the same screens,
//! in the same group — and the bare cost of one RegexSet pass over the pane's regions, which
//! the core issue's target is stated against (a changed Claude-class pane ≤ 2× that pass).

#[path = "support/screens.rs"]
mod screens;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use lookout_core::manifest::Catalog;
use lookout_core::rules::regions::{RowBuf, Rows, region_text};
use lookout_core::rules::{Look, Strategy};
use lookout_core::terminal::Terminal;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn parser(text: &str) -> Terminal {
    let mut p = Terminal::new(50, 200);
    let _ = p.process(text.as_bytes());
    p
}

fn bench_evaluate(c: &mut Criterion) {
    let (catalog, errors) = Catalog::bundled();
    assert!(errors.is_empty(), "{errors:?}");
    let Some(kind) = catalog.kind_id("claude").and_then(|k| catalog.kind(k)) else {
        return;
    };
    let mut group = c.benchmark_group("evaluate");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(300));
    for state in ["working", "blocked", "idle"] {
        let mut p = parser(&screens::claude_screen(50, 200, 3, state));
        if state == "working" {
            let _ = p.process(screens::spinner_update(50, 4).as_bytes());
        }
        let now = Instant::now();
        let look = Look {
            screen: &p,
            title: "✳ Claude Code",
            progress: "",
            changed_at: Some(now),
            now,
        };
        group.bench_with_input(BenchmarkId::new("combined", state), &look, |b, look| {
            b.iter(|| black_box(kind.evaluate_with(look, Strategy::Combined)));
        });
        group.bench_with_input(BenchmarkId::new("per-rule", state), &look, |b, look| {
            b.iter(|| black_box(kind.evaluate_with(look, Strategy::PerRule)));
        });
        // Baseline: the region texts already built, one RegexSet pass over each.
        let texts: Vec<String> = {
            let mut buf = RowBuf::default();
            buf.begin(50);
            let mut rows = Rows::new(&p, &mut buf);
            kind.regions
                .iter()
                .map(|r| region_text(&mut rows, *r, look.title, ""))
                .collect()
        };
        group.bench_with_input(
            BenchmarkId::new("regexset-pass", state),
            &texts,
            |b, texts| {
                b.iter(|| {
                    for (set, text) in kind.sets.iter().zip(texts) {
                        black_box(set.as_ref().map(|s| s.matches(text)));
                    }
                });
            },
        );
        group.bench_with_input(
            BenchmarkId::new("extract-regions", state),
            &look,
            |b, look| {
                let mut buf = RowBuf::default();
                b.iter(|| {
                    buf.begin(50);
                    let mut rows = Rows::new(look.screen, &mut buf);
                    for r in &kind.regions {
                        black_box(region_text(&mut rows, *r, look.title, ""));
                    }
                });
            },
        );
        let time = |f: &mut dyn FnMut()| {
            let n = 20_000;
            let t = Instant::now();
            for _ in 0..n {
                f();
            }
            t.elapsed().as_secs_f64() * 1e6 / n as f64
        };
        let combined = time(&mut || {
            black_box(kind.evaluate_with(&look, Strategy::Combined));
        });
        let per_rule = time(&mut || {
            black_box(kind.evaluate_with(&look, Strategy::PerRule));
        });
        let pass = time(&mut || {
            for (set, text) in kind.sets.iter().zip(&texts) {
                black_box(set.as_ref().map(|s| s.matches(text)));
            }
        });
        let mut buf = RowBuf::default();
        let extract = time(&mut || {
            buf.begin(50);
            let mut rows = Rows::new(look.screen, &mut buf);
            for r in &kind.regions {
                black_box(region_text(&mut rows, *r, look.title, ""));
            }
        });
        // The target's baseline: build every region's text once and run one RegexSet pass over
        // each — the least any evaluation of this pane must do.
        let baseline = extract + pass;
        println!(
            "FIGURE evaluate claude/{state}: combined {combined:.2} µs, per-rule {per_rule:.2} µs; \
             baseline (regions {extract:.2} µs + one RegexSet pass {pass:.2} µs) {baseline:.2} µs; \
             default/baseline {:.2}×",
            per_rule.min(combined) / baseline
        );
    }
    group.finish();
}

criterion_group!(benches, bench_evaluate);
criterion_main!(benches);
