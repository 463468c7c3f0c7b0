//! Real-part tests of `lookout run` talking to a server: the real binary in a real PTY opened here,
//! a scripted fake `claude` inside it driven by keys typed into that PTY, and the real `lookout serve`
//! (or the server `run` embeds when none answers). Every wait is `wait_until` with a deadline.

use crate::support::fake_claude::fake_claude;
use crate::support::pty::Outer;
use crate::support::server::Served;
use crate::support::{LOOKOUT, wait_until};
use lookout::client::panes;
use lookout::server::Client;
use serde_json::json;
use std::path::Path;

/// `lookout run ARGS…` in a PTY of ours, 100×30, with `env` added.
fn run_in_outer(args: &[&str], env: &[(&str, &str)]) -> Outer {
    let argv: Vec<&str> = [LOOKOUT, "run"].iter().chain(args).copied().collect();
    Outer::start(&argv, 100, 30, env)
}

/// The fake `claude` (tests/support/fake_claude.rs), as a path to run.
fn claude_path(dir: &Path) -> String {
    fake_claude(dir).join("claude").display().to_string()
}

fn lifecycle(socket: &Path, pane: &str) -> Option<String> {
    let mut client = Client::connect(socket).ok()?;
    let (_, panes) = panes(&mut client).ok()?;
    panes
        .into_iter()
        .find(|p| p.pane == pane)
        .map(|p| format!("{}/{}", p.kind.unwrap_or_default(), p.lifecycle.name()))
}

fn drive_to_done(outer: &mut Outer, socket: &Path, pane: &str) {
    let seen = |outer: &Outer| {
        format!(
            "server: {:?}\nscreen:\n{}",
            lifecycle(socket, pane),
            outer.text()
        )
    };
    wait_until(
        "the pane, identified as claude",
        || lifecycle(socket, pane).as_deref() == Some("claude/idle"),
        || seen(outer),
    );
    outer.type_line("w");
    wait_until(
        "working",
        || lifecycle(socket, pane).as_deref() == Some("claude/working"),
        || seen(outer),
    );
    outer.type_line("b");
    wait_until(
        "blocked",
        || lifecycle(socket, pane).as_deref() == Some("claude/blocked"),
        || seen(outer),
    );
    outer.type_line("w");
    wait_until(
        "working again",
        || lifecycle(socket, pane).as_deref() == Some("claude/working"),
        || seen(outer),
    );
    outer.type_line("i");
    wait_until(
        "done",
        || lifecycle(socket, pane).as_deref() == Some("claude/done"),
        || seen(outer),
    );
}

#[test]
fn the_server_sees_a_wrapped_agent_change_state_and_the_exit_code_passes_through() {
    let dir = tempfile::tempdir().expect("tempdir");
    let claude = claude_path(dir.path());
    let served = Served::start_in(dir.path(), 100);
    let socket = served.socket.display().to_string();
    let state = dir.path().join("state");
    let state_env = state.display().to_string();
    let mut outer = run_in_outer(
        &["--pane", "run:test", "--socket", &socket, "--", &claude],
        &[("XDG_STATE_HOME", &state_env), ("EXIT_CODE", "3")],
    );
    drive_to_done(&mut outer, &served.socket, "run:test");
    outer.type_line("q");
    assert_eq!(outer.wait_exit(), 3, "the child's exit code passes through");
    wait_until(
        "the pane to be closed",
        || lifecycle(&served.socket, "run:test").is_none(),
        || format!("{:?}", lifecycle(&served.socket, "run:test")),
    );
}

#[test]
fn without_a_server_run_starts_the_per_user_one_and_leaves_it_running() {
    let dir = tempfile::tempdir().expect("tempdir");
    let claude = claude_path(dir.path());
    let socket = dir.path().join("run").join("lookout.sock");
    let state = dir.path().join("state");
    let state_env = state.display().to_string();
    let mut outer = run_in_outer(
        &[
            "--pane",
            "run:started",
            "--kind",
            "claude",
            "--socket",
            &socket.display().to_string(),
            "--",
            &claude,
        ],
        &[("XDG_STATE_HOME", &state_env)],
    );
    drive_to_done(&mut outer, &socket, "run:started");
    outer.type_line("q");
    assert_eq!(outer.wait_exit(), 0);
    assert!(
        state.join("lookout").join("lookout.db").exists(),
        "the server keeps the default store"
    );
    // `lookout run` is gone; the server it started is not.
    let mut client = Client::connect(&socket).expect("the server outlives run");
    let info = client.call_raw("server.info", json!({})).expect("info");
    assert!(info["pid"].as_u64().is_some(), "{info}");
    let stop = std::process::Command::new(LOOKOUT)
        .args(["stop", "--socket"])
        .arg(&socket)
        .output()
        .expect("stop");
    assert!(stop.status.success());
    assert!(Client::connect(&socket).is_err(), "stopped");
}

#[test]
fn a_server_that_dies_leaves_the_wrapped_program_running() {
    let dir = tempfile::tempdir().expect("tempdir");
    let claude = claude_path(dir.path());
    let mut served = Served::start_in(dir.path(), 100);
    let socket = served.socket.display().to_string();
    let state = dir.path().join("state");
    let state_env = state.display().to_string();
    let mut outer = run_in_outer(
        &["--pane", "run:orphan", "--socket", &socket, "--", &claude],
        &[("XDG_STATE_HOME", &state_env)],
    );
    wait_until(
        "the pane",
        || lifecycle(&served.socket, "run:orphan").is_some(),
        || outer.text(),
    );
    served.kill9();
    outer.type_line("b");
    wait_until(
        "the agent still drawing after the server died",
        || outer.text().contains("Do you want to proceed?"),
        || outer.text(),
    );
    outer.type_line("q");
    assert_eq!(outer.wait_exit(), 0);
}
