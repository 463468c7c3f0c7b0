//! The fleet at scale (see docs/fleet.md; a benchmark, never a test): 100 machines × 100 panes
//! publishing
//! through a real local `nats-server -js` (a free loopback port, a temp store) to one fleet board.
//!
//! Each machine is a real `lookout::fleet::Publisher` (its own thread, runtime and NATS
//! connection) fed pane states directly, as the engine's tick would; the board is the real
//! `fleet::board::watch`. It prints:
//! - publish throughput: every machine hands over all its panes at once; states per second until
//!   the board has seen every one;
//! - state change → board latency (p50/p99): one pane per machine changes every 100 ms, timed from
//!   the hand-over to the board receiving that state.
//!
//! `cargo bench --bench fleet` (needs `nats-server` on the PATH); `cargo build --benches` only
//! compiles it. Sizes: `LOOKOUT_FLEET_MACHINES`, `LOOKOUT_FLEET_PANES`, `LOOKOUT_FLEET_ROUNDS`.

use lookout::fleet::board::{self, Update};
use lookout::fleet::settings::Auth;
use lookout::fleet::{PublishConfig, Publisher};
use lookout::panes::PaneState;
use std::collections::HashMap;
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn state(pane: &str, generation: u64) -> PaneState {
    let working = generation % 2 == 1;
    serde_json::from_value(serde_json::json!({
        "pane": pane, "kind": "claude",
        "lifecycle": if working { "working" } else { "idle" },
        "input_required": false, "unread": false, "labels": [],
        "cause": "hook:claude", "since": "2026-12-01T00:00:00.000Z",
        "generation": generation, "hooked": true
    }))
    .expect("a pane state")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` would pass nothing: do no work then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let machines = env("LOOKOUT_FLEET_MACHINES", 100);
    let panes = env("LOOKOUT_FLEET_PANES", 100);
    let rounds = env("LOOKOUT_FLEET_ROUNDS", 50);
    let dir = tempfile::tempdir().expect("tempdir");
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut nats = Command::new("nats-server")
        .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nats-server on the PATH (apt-get install nats-server)");
    let up = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < up, "nats-server did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let url = format!("nats://127.0.0.1:{port}");
    let mut publishers: Vec<Publisher> = (0..machines)
        .map(|m| {
            Publisher::start(PublishConfig {
                url: url.clone(),
                machine: format!("m{m:03}"),
                heartbeat_ttl: Duration::from_secs(15),
                auth: Auth::default(),
            })
            .expect("a publisher")
        })
        .collect();
    let ids: Vec<String> = (0..panes).map(|p| format!("tmux:bench:%{p}")).collect();
    // The board first: it retries until the first publisher has made the buckets.
    let updates = board::watch(&url, &Auth::default()).expect("the board");
    let total = machines * panes;
    let start = Instant::now();
    for p in &mut publishers {
        p.hand_over(ids.iter().map(|id| state(id, 0)).collect(), &[]);
    }
    let mut seen: HashMap<(String, String), u64> = HashMap::new();
    let end = Instant::now() + Duration::from_secs(300);
    while seen.len() < total {
        match updates.recv_timeout(end.saturating_duration_since(Instant::now())) {
            Ok(Update::Pane {
                machine,
                pane,
                state: Some(s),
            }) => {
                seen.insert((machine, pane), s.generation);
            }
            Ok(Update::Reset) => seen.clear(),
            Ok(_) => {}
            Err(_) => panic!("the board saw {} of {total} panes", seen.len()),
        }
    }
    let elapsed = start.elapsed();
    println!(
        "FIGURE fleet publish: {total} pane states from {machines} machines × {panes} panes reached the board in {:.0} ms ({:.0} states/s)",
        elapsed.as_secs_f64() * 1e3,
        total as f64 / elapsed.as_secs_f64()
    );
    let mut latencies = Vec::new();
    for round in 1..=rounds as u64 {
        let round_start = Instant::now();
        let pane = &ids[(round as usize) % panes];
        let mut sent = HashMap::new();
        for (m, p) in publishers.iter_mut().enumerate() {
            sent.insert(format!("m{m:03}"), Instant::now());
            p.hand_over(vec![state(pane, round)], &[]);
        }
        while !sent.is_empty() {
            match updates.recv_timeout(Duration::from_secs(30)) {
                Ok(Update::Pane {
                    machine,
                    state: Some(s),
                    ..
                }) if s.generation == round => {
                    if let Some(at) = sent.remove(&machine) {
                        latencies.push(at.elapsed());
                    }
                }
                Ok(_) => {}
                Err(_) => panic!(
                    "round {round}: {} changes never reached the board",
                    sent.len()
                ),
            }
        }
        std::thread::sleep(Duration::from_millis(100).saturating_sub(round_start.elapsed()));
    }
    latencies.sort();
    println!(
        "FIGURE fleet latency: state change → board p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} changes: {machines} per round, {rounds} rounds)",
        percentile(&latencies, 0.50).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        latencies.len()
    );
    drop(publishers);
    let _ = nats.kill();
    let _ = nats.wait();
}
