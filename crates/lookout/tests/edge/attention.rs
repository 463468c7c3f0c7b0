//! Real-part tests of what leads a person to the pane (see docs/notify.md): the board's order and
//! names,
//! `lookout next`, and the tmux plugin loaded into a real tmux server with an attached client.

use crate::support::LOOKOUT;
use crate::support::fake_claude::fake_claude;
use crate::support::pty::Outer;
use crate::support::server::{Served, announce, open_with};
use crate::support::tmux::Tmux;
use crate::support::wait_until;
use serde_json::json;
use std::process::Command;

fn report(served: &Served, pane: &str, seq: u64, state: &str) {
    let params = json!({"pane": pane, "source": "t:claude", "seq": seq, "state": state});
    served
        .client()
        .call_raw("report.state", params)
        .expect("report");
}

#[test]
fn the_board_puts_the_pane_that_waits_longest_first_and_hides_plain_shells() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start_in(dir.path(), 50);
    let mut client = served.client();
    for pane in ["a-working", "b-blocked-first", "c-done", "d-blocked-later"] {
        open_with(&mut client, pane, &["claude"]);
        announce(&mut client, pane, "t:claude");
    }
    open_with(&mut client, "e-shell", &["bash"]);
    report(&served, "a-working", 1, "working");
    report(&served, "b-blocked-first", 1, "blocked");
    report(&served, "c-done", 1, "working");
    report(&served, "c-done", 2, "done");
    // Later by a whole second: `since` has millisecond resolution.
    let first = served
        .client()
        .call_raw("agent.get", json!({"pane": "b-blocked-first"}))
        .expect("get");
    wait_until(
        "a later second",
        || {
            lookout::event::rfc3339(std::time::SystemTime::now()).as_str()
                > first["since"].as_str().unwrap_or("")
        },
        String::new,
    );
    report(&served, "d-blocked-later", 1, "blocked");
    let board = served
        .command(&["watch", "--once", "--no-tmux", "--socket"])
        .arg(&served.socket)
        .output()
        .expect("watch --once");
    let text = String::from_utf8_lossy(&board.stdout).into_owned();
    assert!(
        !text.contains('\x1b') && !text.contains('\r'),
        "plain text into a pipe: {text:?}"
    );
    let rows: Vec<&str> = text
        .lines()
        .filter_map(|l| l.get(2..))
        .filter(|l| {
            l.starts_with(|c: char| c.is_ascii_lowercase()) && l.contains("claude")
                || l.starts_with("e-shell")
        })
        .collect();
    let order: Vec<&str> = rows
        .iter()
        .map(|r| r.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(
        order,
        ["b-blocked-first", "d-blocked-later", "c-done", "a-working"],
        "{text}"
    );
    let all = served
        .command(&["watch", "--once", "--no-tmux", "--all", "--socket"])
        .arg(&served.socket)
        .output()
        .expect("watch --once --all");
    assert!(String::from_utf8_lossy(&all.stdout).contains("e-shell"));

    let next = served.command(&["next"]).output().expect("next");
    assert!(String::from_utf8_lossy(&next.stdout).starts_with("b-blocked-first\tblocked"));
    for pane in ["b-blocked-first", "d-blocked-later", "c-done"] {
        report(&served, pane, 9, "working");
    }
    let none = served.command(&["next"]).output().expect("next");
    assert_eq!(none.status.code(), Some(1), "no pane needs you");
}

#[test]
fn the_plugin_badges_windows_and_next_jumps_to_the_pane() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = fake_claude(dir.path());
    let served = Served::start_in(dir.path(), 50);
    let name = format!("lookout-plugin-{}", std::process::id());
    let claude = bin.join("claude").display().to_string();
    let (tmux, shown) = Tmux::start(&name, 100, 30, &[], "bash --norc --noprofile");
    let far = tmux
        .run(&["new-window", "-d", "-P", "-F", "#{pane_id}", &claude])
        .trim()
        .to_owned();
    let _client = Outer::start(&["tmux", "-L", &name, "attach"], 100, 30, &[]);
    wait_until(
        "the client",
        || !tmux.run(&["list-clients"]).trim().is_empty(),
        String::new,
    );
    // The plugin runs with tmux's environment: point it at this test's server.
    for (key, value) in [
        ("LOOKOUT_SOCKET", served.socket.display().to_string()),
        (
            "XDG_STATE_HOME",
            dir.path().join("state").display().to_string(),
        ),
        (
            "XDG_CONFIG_HOME",
            dir.path().join("config").display().to_string(),
        ),
    ] {
        tmux.run(&["set-environment", "-g", key, &value]);
    }
    tmux.run(&["set-option", "-g", "@lookout-bin", LOOKOUT]);
    tmux.run(&["set-option", "-g", "@lookout-next-key", "N"]);
    let plugin = concat!(env!("CARGO_MANIFEST_DIR"), "/../../lookout.tmux");
    tmux.run(&["run-shell", plugin]);
    assert!(
        tmux.run(&["list-keys"]).contains("next --jump"),
        "the key is bound"
    );
    let id = format!("tmux:{name}:{far}");
    wait_until(
        "the far pane identified",
        || {
            served
                .client()
                .call_raw("agent.get", json!({"pane": id}))
                .is_ok_and(|s| s["kind"] == "claude")
        },
        || tmux.screen(&far),
    );
    tmux.type_line(&far, "b");
    wait_until(
        "the far window's badge",
        || {
            tmux.run(&["display-message", "-p", "-t", &far, "#{E:@lookout_badge}"])
                .contains("●blocked")
        },
        || tmux.run(&["display-message", "-p", "-t", &far, "#{E:@lookout_badge}"]),
    );
    let window = |pane: &str| tmux.run(&["display-message", "-p", "-t", pane, "#{window_id}"]);
    let client_window = || tmux.run(&["display-message", "-p", "#{window_id}"]);
    assert_eq!(client_window(), window(&shown));
    // What the bound key runs: `lookout next --jump` inside tmux takes the client there.
    let jumped = Command::new(LOOKOUT)
        .args(["next", "--jump"])
        .env("LOOKOUT_SOCKET", &served.socket)
        .env(
            "TMUX",
            tmux.run(&["display-message", "-p", "#{socket_path},#{pid},0"])
                .trim(),
        )
        .output()
        .expect("next --jump");
    assert!(
        jumped.status.success(),
        "{}",
        String::from_utf8_lossy(&jumped.stderr)
    );
    assert_eq!(
        client_window(),
        window(&far),
        "the client shows the blocked pane's window"
    );
}
