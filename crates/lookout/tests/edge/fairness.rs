//! Fair service under a flood (real server, real socket): clients that pipeline costly requests
//! and never read them, then close, must not make the server deaf to another client, and a
//! closed connection's pending requests are not worked off. The figures are printed (the speed
//! target lives in these printed numbers and the closing notes, never in a timed assertion; the
//! assertion is a generous deadline the old single queue missed by several times).

use crate::support::server::*;
use serde_json::json;
use std::io::Write as _;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

const PANES: usize = 1000;
const FLOODERS: usize = 11;
const FLOOD_FOR: Duration = Duration::from_secs(3);

/// One client pipelining `pane.list` for `FLOOD_FOR` without reading a byte, then closing.
fn flood(socket: std::path::PathBuf) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let Ok(mut stream) = UnixStream::connect(&socket) else {
            return 0;
        };
        let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
        let line = b"{\"id\":1,\"method\":\"pane.list\"}\n".repeat(64);
        let end = Instant::now() + FLOOD_FOR;
        let mut sent = 0;
        while Instant::now() < end {
            if stream.write_all(&line).is_ok() {
                sent += 64;
            }
        }
        sent
        // Closed here, with whatever it asked for unanswered.
    })
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}

/// The flood: eleven clients pipeline `pane.list` at 1000 panes for 3 s without reading,
/// then close; meanwhile and after, another client's `agent.get` and a hook report are answered
/// within a generous 2 s each (the single queue left the server deaf for 7 s and more on a quiet
/// machine, 28 s and more on a loaded one) — a fifth of the wait deadline, so a loaded machine
/// that gives every wait more room (`LOOKOUT_TEST_DEADLINE_SECS`) gives this one more too.
#[test]
fn a_flood_of_pipelined_lists_never_makes_the_server_deaf() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let mut c = s.client();
    open_with(&mut c, "hooked", &["claude"]);
    // Opened pipelined: one round trip per pane is slow on a loaded machine.
    let mut raw = s.raw();
    let opens: String = (1..PANES)
        .map(|i| {
            format!(
                "{}\n",
                json!({"id": i, "method": "pane.open", "params": {"pane": format!("pane-{i}"), "rows": 24, "cols": 80}})
            )
        })
        .collect();
    raw.send(opens.as_bytes());
    for _ in 1..PANES {
        assert!(raw.line()["error"].is_null(), "pane.open failed");
    }
    eprintln!("fairness: {PANES} panes open");
    let floods: Vec<_> = (0..FLOODERS).map(|_| flood(s.socket.clone())).collect();
    let start = Instant::now();
    let mut gets = Vec::new();
    let mut reports = Vec::new();
    let mut seq = 0;
    // Through the flood and 3 s past its end: the tail of a backlog shows there.
    while start.elapsed() < FLOOD_FOR + Duration::from_secs(3) {
        let asked = Instant::now();
        c.call_raw("agent.get", json!({"pane": "pane-7"}))
            .expect("agent.get answered");
        gets.push(asked.elapsed());
        seq += 1;
        let asked = Instant::now();
        let mut r = s.client();
        r.call_raw(
            "report.session",
            json!({"pane": "hooked", "source": "cli:claude", "session": "s"}),
        )
        .expect("report.session answered");
        r.call_raw(
            "report.state",
            json!({"pane": "hooked", "source": "cli:claude", "seq": seq, "state": "working"}),
        )
        .expect("report.state answered");
        reports.push(asked.elapsed());
    }
    let sent: usize = floods.into_iter().map(|f| f.join().expect("flood")).sum();
    let figures = |latencies: &mut Vec<Duration>| {
        latencies.sort();
        let max = latencies.last().copied().unwrap_or_default();
        let text = format!(
            "{} answers: p50 {:?}, p99 {:?}, max {max:?}",
            latencies.len(),
            percentile(latencies, 0.5),
            percentile(latencies, 0.99),
        );
        (max, text)
    };
    let (get_max, get_text) = figures(&mut gets);
    let (report_max, report_text) = figures(&mut reports);
    eprintln!(
        "fairness: {FLOODERS} flooders wrote {sent} pane.list lines at {PANES} panes; \
         the quiet client's agent.get: {get_text}; its hook reports (connect, session, state): {report_text}"
    );
    let deaf = crate::support::deadline() / 5;
    assert!(
        get_max < deaf && report_max < deaf,
        "the quiet client waited {deaf:?} or more: agent.get {get_text}; reports {report_text}"
    );
}
