//! Change → state latency: every fixture replayed through the server's world at its
//! default settings (500 ms tick, plus a tick `OUTPUT_BATCH` after output), against a reference
//! detector that looks every 5 ms of recording time. For each lifecycle change the reference
//! sees, the latency is how much later the server's timing reaches the same state (the
//! reference's own time already holds whatever a rule waits for — `quiet_ms`, the idle settle —
//! so for `→ done` this is the time past "last frame + settle"). A change the server's timing
//! never reaches within 5 s is counted as missed. The old cadence (the periodic tick only) is
//! printed beside it. Recording time, not wall time: the figures are exact and repeatable.

use lookout_core::asciicast;
use lookout_core::corpus;
use lookout_core::manifest::Catalog;
use lookout_core::replay::{Replay, Timing, replay_with};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const REFERENCE: Timing = Timing {
    tick: Duration::from_millis(5),
    on_output: false,
    stamped: true,
};
const TICK_ONLY: Timing = Timing {
    tick: lookout_core::schedule::TICK_INTERVAL,
    on_output: false,
    stamped: true,
};

/// Latency (ms) of each reference change in `timed`, by "from→to"; `None`: missed.
fn latencies(reference: &Replay, timed: &Replay, out: &mut BTreeMap<String, Vec<Option<f64>>>) {
    for step in &reference.timeline {
        let found = timed
            .timeline
            .iter()
            .find(|d| d.to == step.to && d.at >= step.at - 1e-9 && d.at - step.at <= 5.0);
        out.entry(format!("{}→{}", step.from.name(), step.to.name()))
            .or_default()
            .push(found.map(|d| (d.at - step.at) * 1e3));
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn print(what: &str, table: &BTreeMap<String, Vec<Option<f64>>>) {
    for (transition, all) in table {
        let mut seen: Vec<f64> = all.iter().flatten().copied().collect();
        seen.sort_by(f64::total_cmp);
        println!(
            "FIGURE latency {what} {transition}: n={} p50={:.0} ms p99={:.0} ms max={:.0} ms missed={}",
            all.len(),
            percentile(&seen, 0.5),
            percentile(&seen, 0.99),
            seen.last().copied().unwrap_or(f64::NAN),
            all.len() - seen.len()
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing and wants no run.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let (catalog, errors) = Catalog::bundled();
    assert!(errors.is_empty(), "{errors:?}");
    let catalog = Arc::new(catalog);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let (mut server, mut tick_only) = (BTreeMap::new(), BTreeMap::new());
    for f in corpus::walk(&root).expect("tests/fixtures") {
        let file = std::fs::File::open(&f.path).expect("fixture");
        let cast = asciicast::read(std::io::BufReader::new(file)).expect("cast");
        let reference = replay_with(&cast, catalog.clone(), &f.kind, REFERENCE);
        let timed = replay_with(&cast, catalog.clone(), &f.kind, Timing::SERVER);
        let old = replay_with(&cast, catalog.clone(), &f.kind, TICK_ONLY);
        latencies(&reference, &timed, &mut server);
        latencies(&reference, &old, &mut tick_only);
    }
    print("server(tick+on-output)", &server);
    print("tick-only(old cadence)", &tick_only);
}
