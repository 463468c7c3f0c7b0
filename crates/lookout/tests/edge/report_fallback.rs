//! A hook report is never lost silently (real server, real socket, the real `lookout report`):
//! when the server does not answer in time (stopped with SIGSTOP), is at its connection limit or
//! is not running, the report goes to the mirror, `lookout report` still exits 0, the report is
//! applied once the server can take it, and `lookout status` names the problem.

use crate::support::server::*;
use crate::support::{LOOKOUT, wait_until};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::process::{Command, Output, Stdio};

/// `lookout report state working` for `pane` as a Claude hook, into `s`'s mirror directory.
fn report(s: &Served, pane: &str) -> Output {
    s.command(&["report", "--agent", "claude", "--pane", pane])
        .arg("--mirror-dir")
        .arg(&s.mirror)
        .args(["state", "working"])
        .stdin(Stdio::null())
        .output()
        .expect("run lookout report")
}

fn mirrored(s: &Served) -> Vec<String> {
    std::fs::read_dir(&s.mirror)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn pid(s: &Served) -> Pid {
    Pid::from_raw(i32::try_from(s.child.id()).expect("pid"))
}

/// A stopped server accepts the connection (the kernel does) but never answers: the report waits
/// its 3 s, goes to the mirror, and is applied when the server runs again.
#[test]
fn a_report_to_a_stopped_server_is_mirrored_and_applied_on_its_return() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 50);
    let mut c = s.client();
    open_with(&mut c, "p", &["claude"]);
    kill(pid(&s), Signal::SIGSTOP).expect("SIGSTOP");
    let out = report(&s, "p");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    kill(pid(&s), Signal::SIGCONT).expect("SIGCONT");
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("did not answer"), "{stderr}");
    assert!(
        stderr.contains("left in"),
        "the report was not mirrored: {stderr}; mirror dir {:?}",
        mirrored(&s)
    );
    wait_until(
        "the mirrored report to be applied once the server runs again",
        || lifecycle(&mut c, "p") == "working",
        || format!("mirror dir {:?}", mirrored(&s)),
    );
    let status = s.command(&["status"]).output().expect("lookout status");
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains("last undelivered hook report") && text.contains("did not answer"),
        "{text}"
    );
    // … and that it is owed no more: the server took it from the mirror.
    assert!(text.contains("none waits in the mirror now"), "{text}");
}

/// A server at its connection limit answers a new connection with one `too_many_connections`
/// line and closes it: the report goes to the mirror, which the server takes on its next tick.
#[test]
fn a_report_to_a_full_server_is_mirrored_and_applied() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = Served::start_in(dir.path(), 50);
    s.kill9();
    // The same server, under an open-file limit that leaves room for a handful of connections.
    let child = Command::new("sh")
        .args(["-c", "ulimit -n 72 && exec \"$0\" \"$@\""])
        .arg(LOOKOUT)
        .args(["serve", "--tick-ms", "50", "--socket"])
        .arg(&s.socket)
        .arg("--db")
        .arg(&s.db)
        .arg("--mirror-dir")
        .arg(&s.mirror)
        .env("XDG_STATE_HOME", s.dir.join("state"))
        .env("XDG_CONFIG_HOME", s.dir.join("config"))
        .stdin(Stdio::null())
        .spawn()
        .expect("serve");
    s.child = child;
    wait_until(
        "the server to accept",
        || lookout::server::Client::connect(&s.socket).is_ok(),
        String::new,
    );
    let mut c = s.client();
    open_with(&mut c, "p", &["claude"]);
    // Fill every other slot (the limit leaves (72 - 64) / 2 = 4).
    let mut held = Vec::new();
    loop {
        let mut raw = s.raw();
        // Refused: the refusal read, or the connection already closed when the line went out.
        let answer = raw.try_ask(r#"{"id":1,"method":"hello","params":{"protocol":1}}"#);
        if answer.is_none_or(|a| a["error"]["code"] == "too_many_connections") {
            break;
        }
        held.push(raw);
        assert!(held.len() < 64, "the server never filled up");
    }
    let out = report(&s, "p");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("left in"), "not mirrored: {stderr}");
    wait_until(
        "the mirrored report to be applied",
        || lifecycle(&mut c, "p") == "working",
        || format!("mirror dir {:?}", mirrored(&s)),
    );
}

/// No server at all: mirrored (this already held; kept so the three cases stay together).
#[test]
fn a_report_with_no_server_is_mirrored_and_applied_when_one_starts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = Served::start_in(dir.path(), 50);
    let mut c = s.client();
    open_with(&mut c, "p", &["claude"]);
    // Stopped on purpose: the hook then starts no server of its own in the background.
    let _ = c.call_raw("server.stop", serde_json::json!({}));
    s.child.wait().expect("the server stops");
    let out = report(&s, "p");
    assert!(out.status.success());
    assert_eq!(mirrored(&s).len(), 1, "{:?}", mirrored(&s));
}
