//! Real-part tests of `lookout run` talking to a server: the real binary in a real PTY opened here,
//! a scripted fake `claude` inside it driven by keys typed into that PTY, and the real `lookout serve`
//! (or the server `run` embeds when none answers). Every wait is `wait_until` with a deadline.

mod server_support;

use lookout::server::Client;
use lookout::server::client::snapshot;
use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};
use serde_json::json;
use server_support::{LOOKOUT, Served, wait_until};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The fake agent of tests/tmux.rs: w = working, b = permission dialog, i = idle prompt box, q = quit.
const FAKE_CLAUDE: &str = r#"#!/bin/bash
rule='────────────────────────────────────────'
scene() { printf '\033[H\033[2J%s\r\n\r\n' 'fake claude'; printf '%s\r\n' "$@"; }
scene "$rule" '> ' "$rule"
while IFS= read -r -s cmd; do
  case "$cmd" in
    w) scene '✻ Thinking… (esc to interrupt)' '' "$rule" '> ' "$rule" ;;
    b) scene 'Bash command' '  rm -rf build' 'Do you want to proceed?' '❯ 1. Yes' '  2. No' ;;
    i) scene '● Done.' '' "$rule" '> ' "$rule" ;;
    q) exit "${EXIT_CODE:-0}" ;;
  esac
done
"#;

fn fake_claude(dir: &Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("claude");
    std::fs::write(&path, FAKE_CLAUDE).expect("write the fake claude");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.display().to_string()
}

/// `lookout run …` in a PTY of ours: keys go in through `writer`.
struct Outer {
    child: Box<dyn Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    output: Arc<Mutex<Vec<u8>>>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Outer {
    fn start(args: &[&str], env: &[(&str, &str)]) -> Outer {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 30,
                cols: 100,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a PTY");
        let mut command = CommandBuilder::new(LOOKOUT);
        command.args(args);
        command.env("TERM", "xterm-256color");
        for (key, value) in env {
            command.env(key, value);
        }
        let child = pair
            .slave
            .spawn_command(command)
            .expect("start lookout run");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("reader");
        let output = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&output);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().expect("lock").extend_from_slice(&buf[..n]);
            }
        });
        let writer = pair.master.take_writer().expect("writer");
        Outer {
            child,
            writer,
            output,
            _master: pair.master,
        }
    }

    fn type_line(&mut self, line: &str) {
        self.writer
            .write_all(format!("{line}\r").as_bytes())
            .expect("type");
        self.writer.flush().expect("flush");
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().expect("lock")).into_owned()
    }

    fn exit_code(&mut self) -> u32 {
        let mut status = None;
        wait_until(
            "lookout run to exit",
            || {
                status = self.child.try_wait().ok().flatten();
                status.is_some()
            },
            String::new,
        );
        status.map(|s| s.exit_code()).unwrap_or(u32::MAX)
    }
}

fn lifecycle(socket: &Path, pane: &str) -> Option<String> {
    let mut client = Client::connect(socket).ok()?;
    let (_, panes) = snapshot(client.call("pane.list", json!({})).ok()?).ok()?;
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
    let claude = fake_claude(dir.path());
    let served = Served::start_in(dir.path(), 100);
    let socket = served.socket.display().to_string();
    let state = dir.path().join("state");
    let state_env = state.display().to_string();
    let mut outer = Outer::start(
        &[
            "run", "--pane", "run:test", "--socket", &socket, "--", &claude,
        ],
        &[("XDG_STATE_HOME", &state_env), ("EXIT_CODE", "3")],
    );
    drive_to_done(&mut outer, &served.socket, "run:test");
    outer.type_line("q");
    assert_eq!(outer.exit_code(), 3, "the child's exit code passes through");
    wait_until(
        "the pane to be closed",
        || lifecycle(&served.socket, "run:test").is_none(),
        || format!("{:?}", lifecycle(&served.socket, "run:test")),
    );
}

#[test]
fn without_a_server_run_embeds_one_with_the_default_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let claude = fake_claude(dir.path());
    let socket = dir.path().join("run").join("lookout.sock");
    let state = dir.path().join("state");
    let state_env = state.display().to_string();
    let mut outer = Outer::start(
        &[
            "run",
            "--pane",
            "run:embedded",
            "--kind",
            "claude",
            "--socket",
            &socket.display().to_string(),
            "--",
            &claude,
        ],
        &[("XDG_STATE_HOME", &state_env)],
    );
    drive_to_done(&mut outer, &socket, "run:embedded");
    outer.type_line("q");
    assert_eq!(outer.exit_code(), 0);
    assert!(
        state.join("lookout").join("lookout.db").exists(),
        "the embedded server keeps the default store"
    );
}

#[test]
fn a_server_that_dies_leaves_the_wrapped_program_running() {
    let dir = tempfile::tempdir().expect("tempdir");
    let claude = fake_claude(dir.path());
    let mut served = Served::start_in(dir.path(), 100);
    let socket = served.socket.display().to_string();
    let state = dir.path().join("state");
    let state_env = state.display().to_string();
    let mut outer = Outer::start(
        &[
            "run",
            "--pane",
            "run:orphan",
            "--socket",
            &socket,
            "--",
            &claude,
        ],
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
    assert_eq!(outer.exit_code(), 0);
}
