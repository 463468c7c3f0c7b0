//! Clients never hang on a hung server (real server stopped with SIGSTOP, the real CLI): each
//! command gives up at its deadline with an error that says the server did not answer.

use crate::support::deadline;
use crate::support::server::*;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd`, killing it if it outlives the test deadline (the old behaviour: it never returned).
fn within_deadline(mut cmd: Command) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    while child.try_wait().expect("try_wait").is_none() {
        if started.elapsed() > deadline() {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    (out, started.elapsed())
}

#[test]
fn status_and_send_return_with_a_clear_error_from_a_stopped_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 50);
    let mut c = s.client();
    open_with(&mut c, "w", &["claude"]);
    let pid = Pid::from_raw(i32::try_from(s.child.id()).expect("pid"));
    kill(pid, Signal::SIGSTOP).expect("SIGSTOP");
    let (status, took_status) = within_deadline(s.command(&["status"]));
    let (send, took_send) = within_deadline(s.command(&["send", "w", "hi", "--timeout", "2s"]));
    kill(pid, Signal::SIGCONT).expect("SIGCONT");
    eprintln!(
        "deadlines: status returned after {took_status:?}, send --timeout 2s after {took_send:?}"
    );
    for (name, out) in [("status", &status), ("send", &send)] {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code().is_some(),
            "lookout {name} did not return before the test deadline (killed): {err}"
        );
        assert!(!out.status.success(), "lookout {name} succeeded: {err}");
        assert_eq!(
            err.matches("did not answer").count(),
            1,
            "lookout {name} should say once that the server did not answer: {err}"
        );
    }
}

/// A request longer than the server's line limit is refused by the client before it is sent,
/// saying so: the server discards such a line without its id, so a client that sent it waited
/// for an answer that never comes (forever, with no deadline set).
#[test]
fn a_request_over_the_line_limit_is_refused_at_once_not_left_unanswered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = crate::support::server::Served::start_in(dir.path(), 100);
    let mut client = served.client();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let big = "x".repeat(lookout::protocol::MAX_LINE + 1);
        let _ = tx.send(client.call_raw("agent.get", serde_json::json!({ "pane": big })));
    });
    let answer = rx
        .recv_timeout(crate::support::deadline())
        .expect("the call returned");
    let err = answer.expect_err("refused").to_string();
    assert!(err.contains("line limit"), "{err}");
    // The connection and the server are fine for the next call.
    assert!(
        served
            .client()
            .call_raw("server.info", serde_json::json!({}))
            .is_ok()
    );
}
