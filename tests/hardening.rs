//! Issue 13, real parts: the real `lookout serve` on a real socket with a real SQLite file, and the
//! real `lookout replay`/`check`/`explain` binaries, fed what a hostile or faulty world sends —
//! oversized screens, hostile recordings and manifests, a failing disk, a second server, other
//! users' files, clients that never read. Each test names the item of the issue it proves.

mod support;

use serde_json::json;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Instant;
use support::server::*;
use support::{LOOKOUT, deadline, wait_until};

fn served(tick_ms: u64) -> (tempfile::TempDir, Served) {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start_in(dir.path(), tick_ms);
    (dir, served)
}

/// Runs `cmd` to completion within the deadline (a hang fails the test instead of stalling it).
fn finish(mut cmd: Command) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let end = Instant::now() + deadline();
    wait_until(
        "the command to finish",
        || child.try_wait().expect("try_wait").is_some() || Instant::now() > end,
        String::new,
    );
    if child.try_wait().expect("try_wait").is_none() {
        let _ = child.kill();
        panic!("the command hung past {:?}", deadline());
    }
    child.wait_with_output().expect("output")
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
}

/// Item 1: a screen size past the bounds is `bad_params` naming the limit, the total screen
/// memory is bounded (`too_large`), and the server lives on.
#[test]
fn oversized_screens_are_refused_and_the_server_lives() {
    let (_dir, s) = served(50);
    let mut c = s.client();
    let huge = c.call(
        "pane.open",
        json!({"pane": "huge", "rows": 65535, "cols": 65535}),
    );
    assert_eq!(code(&huge), "bad_params");
    assert!(format!("{huge:?}").contains("1..=500"), "{huge:?}");
    c.call("pane.open", json!({"pane": "p", "rows": 24, "cols": 80}))
        .expect("open");
    let resize = c.call(
        "pane.resize",
        json!({"pane": "p", "rows": 2000, "cols": 2000}),
    );
    assert_eq!(code(&resize), "bad_params");
    // 16 of the largest screens fit the budget; the 17th does not, until one closes.
    for i in 0..16 {
        c.call(
            "pane.open",
            json!({"pane": format!("big{i}"), "rows": 500, "cols": 1000}),
        )
        .expect("a bounded pane opens");
    }
    let over = c.call(
        "pane.open",
        json!({"pane": "one-too-many", "rows": 500, "cols": 1000}),
    );
    assert_eq!(code(&over), "too_large", "{over:?}");
    assert_eq!(
        code(&c.call(
            "pane.resize",
            json!({"pane": "p", "rows": 500, "cols": 1000})
        )),
        "too_large"
    );
    c.call("pane.close", json!({"pane": "big0"}))
        .expect("close");
    c.call(
        "pane.open",
        json!({"pane": "one-too-many", "rows": 500, "cols": 1000}),
    )
    .expect("fits once another pane closed");
    assert_eq!(lifecycle(&mut c, "p"), "idle");
}

/// Item 1: `lookout replay` refuses a hostile recording with a line-numbered error, at once.
#[test]
fn replay_rejects_hostile_recordings_with_line_numbers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let head = r#"{"version":2,"width":80,"height":24}"#;
    for (name, text, line) in [
        (
            "header",
            r#"{"version":2,"width":65535,"height":65535}"#.to_owned(),
            1,
        ),
        (
            "stamp",
            r#"{"version":2,"width":80,"height":24,"timestamp":18446744073709551615}"#.to_owned(),
            1,
        ),
        (
            "resize",
            format!("{head}\n[0.1,\"o\",\"hi\"]\n[0.2,\"r\",\"65535x65535\"]\n"),
            3,
        ),
        ("late", format!("{head}\n[1e10,\"o\",\"hi\"]\n"), 2),
    ] {
        let path = dir.path().join(format!("{name}.cast"));
        write(&path, &text);
        let mut cmd = Command::new(LOOKOUT);
        cmd.args(["replay", "--kind", "claude"]).arg(&path);
        let out = finish(cmd);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("line {line}:")),
            "{name}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
}
