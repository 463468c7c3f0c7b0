//! Real-part tests of `lookout watch`: the board runs in a real terminal (a pane of a tmux server of our
//! own, `tmux -L <unique>`), and what it shows is read back with `capture-pane`. Panes are put on the
//! real server through the wire; every wait is `wait_until` with a deadline.

use crate::support::server::Served;
use crate::support::tmux::Tmux;
use crate::support::{LOOKOUT, wait_until};
use base64::Engine as _;
use lookout::server::Client;
use serde_json::json;
use std::path::Path;
use std::process::Command;

/// A tmux server of our own whose first pane runs `command` (the board), kept after it exits.
struct Terminal {
    tmux: Tmux,
    pane: String,
}

impl Terminal {
    fn start(tag: &str, command: &str, env: &[(&str, &Path)]) -> Terminal {
        let name = format!("lookout-watch-{tag}-{}", std::process::id());
        let env: Vec<(&str, String)> = env
            .iter()
            .map(|(key, value)| (*key, value.display().to_string()))
            .collect();
        let (tmux, pane) = Tmux::start(&name, 120, 30, &env, command);
        tmux.run(&["set-option", "-g", "remain-on-exit", "on"]);
        Terminal { tmux, pane }
    }

    fn run(&self, args: &[&str]) -> String {
        self.tmux.run(args)
    }

    fn screen(&self) -> String {
        self.tmux.screen(&self.pane)
    }

    fn keys(&self, keys: &str) {
        self.tmux.keys(&self.pane, keys);
    }

    fn wait_for(&self, what: &str, predicate: impl Fn(&str) -> bool) {
        wait_until(what, || predicate(&self.screen()), || self.screen());
    }

    /// The board's row for `pane`, if shown.
    fn row(&self, pane: &str) -> Option<String> {
        self.screen()
            .lines()
            .find(|l| l.get(2..).is_some_and(|rest| rest.starts_with(pane)))
            .map(str::to_owned)
    }
}

const PERMISSION: &str =
    "Bash command\r\n  rm -rf build\r\nDo you want to proceed?\r\n❯ 1. Yes\r\n  2. No\r\n";
const WORKING: &str = "\x1b[2J\x1b[H✻ Thinking… (esc to interrupt)\r\n";
const RULE: &str = "────────────────────────────────────────";

fn put(client: &mut Client, pane: &str, screens: &[&str]) {
    client
        .call_raw(
            "pane.open",
            json!({"pane": pane, "rows": 24, "cols": 80, "kind": "claude"}),
        )
        .expect("open");
    let started = json!({"pane": pane, "event": "started", "pid": 1, "argv": ["claude"]});
    client.call_raw("pane.process", started).expect("process");
    for screen in screens {
        let data = base64::engine::general_purpose::STANDARD.encode(screen);
        client
            .call_raw("pane.feed", json!({"pane": pane, "data": data}))
            .expect("feed");
    }
}

fn lifecycle_of(client: &mut Client, pane: &str) -> String {
    let state = client
        .call_raw("agent.get", json!({ "pane": pane }))
        .expect("agent.get");
    state["lifecycle"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn the_board_shows_every_pane_marks_seen_and_restores_the_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start_in(dir.path(), 100);
    let mut client = served.client();
    put(&mut client, "test:blocked", &[PERMISSION]);
    put(&mut client, "test:working", &[WORKING]);
    // A turn that ends: working, then the prompt alone in its box → done, unread.
    put(&mut client, "test:done", &[WORKING]);
    wait_until(
        "test:done working",
        || lifecycle_of(&mut client, "test:done") == "working",
        String::new,
    );
    let idle = format!("\x1b[2J\x1b[H● Done.\r\n{RULE}\r\n> \r\n{RULE}\r\n");
    client
        .call_raw("pane.feed", json!({"pane": "test:done", "data": base64::engine::general_purpose::STANDARD.encode(idle)}))
        .expect("feed");
    wait_until(
        "test:done done",
        || lifecycle_of(&mut client, "test:done") == "done",
        String::new,
    );

    // --all: the board's own pane is a plain shell, hidden otherwise.
    let command = format!("{LOOKOUT} watch --all --socket {}", served.socket.display());
    let state = dir.path().join("state");
    let term = Terminal::start("board", &command, &[("XDG_STATE_HOME", &state)]);
    term.wait_for("the roll-up", |s| {
        s.contains("lookout · 1 blocked · 1 done · 1 working")
    });
    let blocked = term.row("test:blocked").unwrap_or_default();
    assert!(
        blocked.contains("claude") && blocked.contains("blocked") && blocked.contains('!'),
        "{blocked}"
    );
    assert!(blocked.contains("screen:permission-dialog"), "{blocked}");
    let done = term.row("test:done").unwrap_or_default();
    assert!(
        done.contains("done") && done.contains('*') && done.contains("screen:prompt-box"),
        "{done}"
    );
    assert!(
        term.row("test:working")
            .is_some_and(|r| r.contains("screen:status-line"))
    );
    // The board had the server watch the tmux server it runs in: its own pane is a row too, under
    // the id a hook in that pane reports for (`tmux:NAME:%N`, NAME the tmux socket's).
    let own = format!("tmux:{}:{}", term.tmux.name, term.pane);
    wait_until(
        "the board's own tmux pane",
        || {
            lookout::client::panes(&mut client)
                .expect("pane.list")
                .1
                .iter()
                .any(|p| p.pane == own)
                && term
                    .screen()
                    .lines()
                    // Shown as a person names it: `session:window.pane window-name`.
                    .any(|l| l.get(2..).is_some_and(|r| r.starts_with("0:0.0 ")))
        },
        || term.screen(),
    );

    // Rows are in urgency order (blocked, done, working, idle); select test:done (j moves down from
    // the first row) and mark it seen.
    term.wait_for("the first row selected", |s| {
        s.lines().any(|l| l.starts_with("> test:blocked"))
    });
    term.keys("j");
    term.wait_for("test:done selected", |s| {
        s.lines().any(|l| l.starts_with("> test:done"))
    });
    term.keys("s");
    term.wait_for("unread cleared", |s| {
        s.contains("lookout · 1 blocked · 0 done · 1 working")
    });
    // One word for a done turn already seen, in the header, the row and `lookout status`: idle.
    let row = term.row("test:done").unwrap_or_default();
    assert!(row.contains(" idle ") && !row.contains(" done "), "{row}");
    let status = Command::new(LOOKOUT)
        .args(["status", "--socket"])
        .arg(&served.socket)
        .output()
        .expect("lookout status");
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    let line = status.lines().find(|l| l.starts_with("test:done"));
    assert!(
        line.is_some_and(|l| l.contains(" idle ") && !l.contains(" done ")),
        "{status}"
    );

    term.keys("q");
    wait_until(
        "the board to exit and leave the alternate screen",
        || {
            term.run(&[
                "display",
                "-p",
                "-t",
                &term.pane,
                "#{pane_dead} #{alternate_on}",
            ])
            .trim()
                == "1 0"
        },
        || term.screen(),
    );
}

#[test]
fn the_scripted_demo_starts_its_own_server_and_shows_blocked_and_done() {
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("run").join("lookout.sock");
    let state = dir.path().join("state");
    let command = format!(
        "{LOOKOUT} watch --demo --demo-scripted --no-tmux --socket {}",
        socket.display()
    );
    let term = Terminal::start("demo", &command, &[("XDG_STATE_HOME", &state)]);
    term.wait_for("the demo panes", |s| s.contains("demo:"));
    term.wait_for("a demo pane working", |s| {
        s.lines()
            .any(|l| l.contains("demo:") && l.contains("working"))
    });
    term.wait_for("a demo pane blocked", |s| {
        s.lines()
            .any(|l| l.contains("demo:") && l.contains("blocked"))
    });
    term.wait_for("a demo pane done", |s| {
        s.lines()
            .any(|l| l.contains("demo:") && l.contains(" done "))
    });
    assert!(
        Client::connect(&socket).is_ok(),
        "the embedded server serves the socket"
    );
    term.keys("q");
    wait_until(
        "the board to exit",
        || {
            term.run(&["display", "-p", "-t", &term.pane, "#{pane_dead}"])
                .trim()
                == "1"
        },
        || term.screen(),
    );
    // The demo leaves nothing behind: its panes are closed on the server it leaves running.
    let demo_panes = || {
        Client::connect(&socket)
            .and_then(|mut c| {
                c.call_raw("pane.list", json!({}))
                    .map_err(|e| std::io::Error::other(e.to_string()))
            })
            .map(|list| list["panes"].to_string().matches("demo:").count())
            .unwrap_or(usize::MAX)
    };
    assert_eq!(demo_panes(), 0, "the demo's panes are still on the server");
    let _ = Command::new(LOOKOUT)
        .args(["stop", "--socket"])
        .arg(&socket)
        .status();
}

#[test]
fn once_prints_one_plain_frame() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start_in(dir.path(), 100);
    let mut client = served.client();
    put(&mut client, "test:blocked", &[PERMISSION]);
    wait_until(
        "blocked",
        || lifecycle_of(&mut client, "test:blocked") == "blocked",
        String::new,
    );
    let out = Command::new(LOOKOUT)
        .args(["watch", "--once", "--no-tmux", "--socket"])
        .arg(&served.socket)
        .output()
        .expect("run watch --once");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.starts_with("lookout · 1 blocked · 0 done · 0 working · 0 idle"),
        "{text}"
    );
    assert!(!text.contains('\x1b'), "no colours into a pipe: {text:?}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("> test:blocked") && l.contains("blocked")),
        "{text}"
    );
}

#[test]
fn the_demo_replays_the_bundled_recordings_through_ptys() {
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("run").join("lookout.sock");
    let state = dir.path().join("state");
    let command = format!(
        "{LOOKOUT} watch --demo --no-tmux --socket {}",
        socket.display()
    );
    let term = Terminal::start("replay", &command, &[("XDG_STATE_HOME", &state)]);
    term.wait_for("the recordings", |s| {
        s.contains("demo: replaying") && s.contains("demo:claude")
    });
    // Which states a recording reaches is the manifests' business (tests/replay.rs); here it is enough
    // that a replayed screen moves some pane off idle.
    term.wait_for("a replayed pane leaving idle", |s| {
        s.lines().any(|l| {
            l.contains("demo:")
                && (l.contains("working") || l.contains("blocked") || l.contains(" done "))
        })
    });
    term.keys("q");
}

/// A server killed outright (`kill -9`) under an open board is started again by the board, the
/// way every client starts it, and the board says so instead of sitting at "server lost".
#[test]
fn the_board_restarts_a_killed_server_and_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("run").join("lookout.sock");
    let state = dir.path().join("state");
    let command = format!("{LOOKOUT} watch --no-tmux --socket {}", socket.display());
    let term = Terminal::start("restart", &command, &[("XDG_STATE_HOME", &state)]);
    let pid = |socket: &Path| {
        Client::connect(socket)
            .ok()
            .and_then(|mut c| c.call_raw("server.info", json!({})).ok())
            .and_then(|info| info["pid"].as_u64())
    };
    wait_until(
        "the board's server",
        || pid(&socket).is_some(),
        || term.screen(),
    );
    // The board drawn: it has connected (a server killed before that is a failed start, which
    // the board reports and exits on, not a crash it restarts from).
    term.wait_for("the board drawn", |s| s.contains("lookout · "));
    let first = pid(&socket).expect("pid");
    let killed = Command::new("kill")
        .args(["-9", &first.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    term.wait_for("the board saying it restarted the server", |s| {
        s.contains("restarted it at")
    });
    let second = pid(&socket).expect("a server answers again");
    assert_ne!(first, second, "a new server");
    let _ = Command::new(LOOKOUT)
        .args(["stop", "--socket"])
        .arg(&socket)
        .env("XDG_STATE_HOME", &state)
        .status();
    term.keys("q");
}

/// Colour as a person asks for it: `--color always` into a pipe, `--color never` and `NO_COLOR` on a
/// real terminal (a tmux pane, read back with its escape sequences) give none, a terminal without
/// them gives colour.
#[test]
fn colour_follows_color_and_no_color() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start_in(dir.path(), 100);
    put(&mut served.client(), "test:blocked", &[PERMISSION]);
    wait_until(
        "blocked",
        || lifecycle_of(&mut served.client(), "test:blocked") == "blocked",
        String::new,
    );
    let red = "\x1b[1;31m";
    let once = |extra: &[&str], no_color: bool| {
        let mut cmd = Command::new(LOOKOUT);
        cmd.args(["watch", "--once", "--no-tmux", "--socket"])
            .arg(&served.socket)
            .args(extra);
        if no_color {
            cmd.env("NO_COLOR", "1");
        }
        String::from_utf8_lossy(&cmd.output().expect("watch --once").stdout).into_owned()
    };
    assert!(
        once(&["--color", "always"], false).contains(red),
        "always, into a pipe"
    );
    assert!(
        !once(&[], false).contains("\x1b["),
        "auto, into a pipe: plain"
    );
    // On a terminal: the board's one frame, read back with its escape sequences.
    let on_terminal = |tag: &str, flags: &str, env: &str| {
        let command = format!(
            "{env} {LOOKOUT} watch --once --no-tmux {flags} --socket {}; sleep 30",
            served.socket.display()
        );
        let term = Terminal::start(tag, &command, &[]);
        term.wait_for("the frame", |s| s.contains("test:blocked"));
        term.run(&["capture-pane", "-e", "-p", "-t", &term.pane])
    };
    // (tmux gives bold red back as `ESC[1m ESC[31m`)
    let red_back = "\x1b[31m";
    assert!(
        on_terminal("colour", "", "env").contains(red_back),
        "auto on a terminal"
    );
    assert!(
        !on_terminal("nocolor", "", "env NO_COLOR=1").contains(red_back),
        "NO_COLOR"
    );
    assert!(
        !on_terminal("never", "--color never", "env").contains(red_back),
        "--color never"
    );
}

/// `e` on the board shows the selected pane's explanation, its whole cause wrapped on an 80-column
/// terminal where the CAUSE column cuts it; any key goes back to the board.
#[test]
fn e_shows_the_selected_panes_whole_cause() {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start_in(dir.path(), 100);
    put(&mut served.client(), "test:blocked", &[PERMISSION]);
    wait_until(
        "blocked",
        || lifecycle_of(&mut served.client(), "test:blocked") == "blocked",
        String::new,
    );
    let command = format!(
        "{LOOKOUT} watch --no-tmux --socket {}",
        served.socket.display()
    );
    let term = Terminal::start("explain", &command, &[]);
    term.run(&["resize-window", "-t", &term.pane, "-x", "80", "-y", "30"]);
    term.wait_for("the blocked row", |s| s.contains("test:blocked"));
    assert!(
        !term.screen().contains("screen:permission-dialog"),
        "cut at 80 columns"
    );
    term.keys("e");
    term.wait_for("the explanation with the whole cause", |s| {
        s.contains("lookout explain test:blocked") && s.contains("permission-dialog")
    });
    term.wait_for("the cause line", |s| {
        s.replace('\n', "")
            .contains("(cause screen:permission-dialog)")
    });
    term.keys("j");
    term.wait_for("back to the board", |s| s.contains("e explain"));
    term.keys("q");
}
