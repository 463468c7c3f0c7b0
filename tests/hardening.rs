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

/// An ordinary add-on manifest for `claude`: 20 rules in the permission dialog's region whose
/// patterns each compile well under the per-pattern limit but together pass the set limit.
fn big_claude_add_on() -> String {
    let mut text = String::from("kind = \"claude\"\n");
    for i in 0..20 {
        text.push_str(&format!(
            "[[screen]]\nid = \"step-{i}\"\nstate = \"working\"\nregion = \"bottom\"\nlines = 20\nregex = ['(?i)step-{i}-\\w{{20}}']\n"
        ));
    }
    text
}

const PERMISSION_SCREEN: &str = "● Bash(touch approved.txt)\n  ⎿  Waiting…\n──────────────────────────────\n Bash command\n   touch approved.txt\n Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and always allow access\n   3. No\n Esc to cancel · Tab to amend\n";

/// Item 3: with that add-on loaded, `check`, `explain`, `replay` and the server all still see the
/// bundled permission dialog as blocked — none silently loses the rule.
#[test]
fn a_big_add_on_manifest_switches_no_rule_off_in_check_explain_replay_or_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let manifests = dir.path().join("config/lookout/manifests");
    std::fs::create_dir_all(&manifests).expect("mkdir");
    let add_on = manifests.join("claude-extra.toml");
    write(&add_on, &big_claude_add_on());
    let screen = dir.path().join("screen.txt");
    write(&screen, PERMISSION_SCREEN);
    let lookout = |args: &[&str]| {
        let mut cmd = Command::new(LOOKOUT);
        cmd.args(args)
            .env("XDG_CONFIG_HOME", dir.path().join("config"));
        finish(cmd)
    };

    let check = lookout(&["check", add_on.to_str().expect("utf-8")]);
    assert!(check.status.success(), "{check:?}");

    let explain = lookout(&[
        "explain",
        "--kind",
        "claude",
        "--screen",
        screen.to_str().expect("utf-8"),
    ]);
    let out = String::from_utf8_lossy(&explain.stdout);
    assert!(
        out.contains("verdict: blocked (rule permission-dialog)"),
        "{out}"
    );

    let cast = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude/approve.cast");
    let replay = lookout(&["replay", cast.to_str().expect("utf-8")]);
    let out = String::from_utf8_lossy(&replay.stdout);
    assert!(replay.status.success(), "a marker went wrong:\n{out}");

    let s = Served::start_in(dir.path(), 50);
    let mut c = s.client();
    c.call(
        "pane.open",
        json!({"pane": "p", "rows": 24, "cols": 80, "kind": "claude"}),
    )
    .expect("open");
    let data = base64(PERMISSION_SCREEN.replace('\n', "\r\n").as_bytes());
    c.call("pane.feed", json!({"pane": "p", "data": data}))
        .expect("feed");
    wait_until(
        "the server to read the permission dialog as blocked",
        || lifecycle(&mut s.client(), "p") == "blocked",
        || {
            format!(
                "{:?}",
                s.client().call("agent.explain", json!({"pane": "p"}))
            )
        },
    );
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
