//! Real-part tests of the everyday setup (see docs/behaviour.md, The server and its sources): the
//! per-user server that clients start
//! detached and leave running, hooks that never block their agent, tmux panes as hook targets, one
//! source per tmux server whatever number of boards, no stale tmux options or reused-id state, and
//! `lookout run` panes that survive a server restart and follow the program a shell starts.
//!
//! Each test has a home of its own (`XDG_RUNTIME_DIR`, `XDG_STATE_HOME`, `XDG_CONFIG_HOME` in a temp
//! dir), so the servers it starts are its own; `Home` stops them when dropped. Every wait has a
//! deadline.

use crate::support::fake_claude::fake_claude;
use crate::support::pty::Outer;
use crate::support::tmux::Tmux;
use crate::support::{LOOKOUT, wait_until};
use lookout::client::panes;
use lookout::panes::{Liveness, PaneState};
use lookout::server::Client;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A user's environment of its own.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().expect("tempdir");
        // The session's runtime directory exists, as logind makes it; lookout makes its own inside.
        std::fs::create_dir(dir.path().join("run")).expect("runtime dir");
        Home { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn socket(&self) -> PathBuf {
        self.path("run/lookout/lookout.sock")
    }

    /// `lookout ARGS` as this user (no tmux of the test runner's leaks in).
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(LOOKOUT);
        cmd.args(args)
            .env("XDG_RUNTIME_DIR", self.path("run"))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("HOME", self.dir.path())
            .env_remove("LOOKOUT_SOCKET")
            .env_remove("LOOKOUT_PANE_ID")
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .stdin(Stdio::null());
        cmd
    }

    /// The variables that make a process this user.
    fn env(&self) -> Vec<(&'static str, String)> {
        let path = |rel: &str| self.path(rel).display().to_string();
        vec![
            ("XDG_RUNTIME_DIR", path("run")),
            ("XDG_STATE_HOME", path("state")),
            ("XDG_CONFIG_HOME", path("config")),
            ("HOME", self.dir.path().display().to_string()),
        ]
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run lookout")
    }

    fn client(&self) -> Option<Client> {
        Client::connect(&self.socket()).ok()
    }

    fn info(&self) -> Option<Value> {
        self.client()?.call_raw("server.info", json!({})).ok()
    }

    fn panes(&self) -> Vec<PaneState> {
        self.client()
            .and_then(|mut c| panes(&mut c).ok())
            .map(|(_, panes)| panes)
            .unwrap_or_default()
    }

    fn pane(&self, id: &str) -> Option<PaneState> {
        self.panes().into_iter().find(|p| p.pane == id)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.path("state/lookout/server.log")).unwrap_or_default()
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = self.run(&["stop"]);
    }
}

/// The pids of `parent`'s children that have exited and were never waited for.
fn zombies_of(parent: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid …`: comm may hold spaces, so read after its closing paren.
        let mut rest = stat.rsplit_once(')')?.1.split_whitespace();
        let (state, ppid) = (rest.next()?, rest.next()?.parse::<u32>().ok()?);
        (state == "Z" && ppid == parent).then_some(pid)
    })
    .collect()
}

/// The last part of a terminal's output, for a failure message.
fn tail(text: &str) -> String {
    let start = text.len().saturating_sub(2000);
    let start = (start..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    text[start..].to_owned()
}

fn text(out: &Output) -> String {
    format!(
        "status {}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Starts tmux server `name` whose first pane runs a bare shell with `bin` first on its `PATH`.
fn start_tmux(name: &str, bin: &Path) -> (Tmux, String) {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Tmux::start(
        name,
        100,
        30,
        &[],
        &format!("env PATH={path} PS1='$ ' bash --norc --noprofile"),
    )
}

/// `$TMUX` as tmux sets it inside a pane of server `name`.
/// The fake claude started in a tmux server of its own that the lookout server watches, and
/// identified: (tmux, its pane, the pane's lookout id).
fn claude_in_tmux(home: &Home, what: &str) -> (Tmux, String, String) {
    let bin = fake_claude(home.dir.path());
    let name = format!("lookout-{what}-{}", std::process::id());
    let (tmux, pane) = start_tmux(&name, &bin);
    let attach = home.run(&["tmux", "--socket-name", &name]);
    assert!(attach.status.success(), "{}", text(&attach));
    let id = format!("tmux:{name}:{pane}");
    tmux.type_line(&pane, "claude");
    wait_until(
        "claude identified",
        || is(home, &id, "claude", "idle"),
        || format!("{:?}\n{}", home.panes(), tmux.screen(&pane)),
    );
    (tmux, pane, id)
}

fn tmux_env(tmux: &Tmux) -> String {
    let path = tmux.run(&["display", "-p", "#{socket_path},#{pid},0"]);
    path.trim().to_owned()
}

fn is(home: &Home, pane: &str, kind: &str, lifecycle: &str) -> bool {
    home.pane(pane)
        .is_some_and(|p| p.kind.as_deref() == Some(kind) && p.lifecycle.name() == lifecycle)
}

/// Makes a sentinel event on a pane of its own, then reads `events` up to it: none may be about
/// `pane`. The way to prove "nothing happened" without waiting a fixed time.
fn no_event_for(home: &Home, events: lookout::client::Events, pane: &str, why: &str) {
    let mut client = home.client().expect("client");
    let open = json!({"pane": "sentinel", "rows": 5, "cols": 20});
    client.call_raw("pane.open", open).expect("open");
    let started = json!({"pane": "sentinel", "event": "started", "argv": ["claude"]});
    client.call_raw("pane.process", started).expect("process");
    let session = json!({"pane": "sentinel", "source": "t:claude", "session": "s"});
    client.call_raw("report.session", session).expect("session");
    let working = json!({"pane": "sentinel", "source": "t:claude", "seq": 1, "state": "working"});
    client.call_raw("report.state", working).expect("report");
    for event in events {
        let event = event.expect("event");
        if event["pane"] == json!("sentinel") {
            return;
        }
        assert_ne!(event["pane"], json!(pane), "{why}: {event}");
    }
    panic!("the event stream ended before the sentinel");
}

#[test]
fn clients_started_at_once_share_one_detached_server_that_outlives_them() {
    let home = Home::new();
    let children: Vec<_> = (0..4)
        .map(|_| {
            home.command(&["status", "--json"])
                .stdout(Stdio::piped())
                .spawn()
                .expect("status")
        })
        .collect();
    let mut pids = Vec::new();
    for child in children {
        let out = child.wait_with_output().expect("status output");
        assert!(out.status.success(), "{}", text(&out));
        let json: Value = serde_json::from_slice(&out.stdout).expect("json");
        pids.push(json["server"]["pid"].as_u64().expect("server pid"));
    }
    pids.dedup();
    assert_eq!(pids.len(), 1, "one server for every client: {pids:?}");
    // Every client has exited; the server is still there, in a session of its own.
    let info = home
        .info()
        .expect("the server outlives the clients that started it");
    let pid = i32::try_from(info["pid"].as_u64().expect("pid")).expect("pid");
    let sid = nix::unistd::getsid(Some(nix::unistd::Pid::from_raw(pid))).expect("sid");
    assert_eq!(sid.as_raw(), pid, "the server leads its own session");
    assert!(
        info["log"]
            .as_str()
            .is_some_and(|l| l.ends_with("state/lookout/server.log")),
        "{info}"
    );
    let status = home.run(&["status"]);
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(shown.contains(&format!("pid {pid}")), "{shown}");
    let stop = home.run(&["stop"]);
    assert!(stop.status.success(), "{}", text(&stop));
    assert!(home.client().is_none(), "stopped");
    assert!(home.log().contains("stopped"), "{}", home.log());
}

#[test]
fn a_hook_never_blocks_its_agent() {
    let home = Home::new();
    // Outside any pane lookout knows: nothing to do, exit 0, and no server started for nothing.
    let out = home.run(&["report", "--agent", "claude", "state", "working"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(home.client().is_none());
    let strict = home.run(&[
        "report", "--strict", "--agent", "claude", "state", "working",
    ]);
    assert_eq!(strict.status.code(), Some(1), "{}", text(&strict));
    // A typo in a hook line is not exit 2 either (2 blocks the prompt in Claude Code).
    let typo = home.run(&["report", "--agnet", "claude", "state", "working"]);
    assert_eq!(typo.status.code(), Some(1), "{}", text(&typo));
    let missing = home.run(&["report", "state", "working"]);
    assert_eq!(missing.status.code(), Some(0), "{}", text(&missing));

    // A hook's report from inside pane `pane` (a `lookout run` pane's environment).
    let report_in = |pane: &str, args: &[&str]| {
        home.command(&[&["report"], args].concat())
            .env("LOOKOUT_PANE_ID", pane)
            .output()
            .expect("report")
    };
    // A `lookout run` pane with the server down: the report waits in the mirror, exit 0, and the
    // server it starts in the background picks it up.
    let out = report_in("run-1", &["--agent", "claude", "state", "blocked"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    wait_until(
        "the server the report started",
        || home.info().is_some(),
        || home.log(),
    );
    // A refusal (no such pane) is logged and shown by status, and still exit 0.
    let refused = report_in("nowhere", &["--agent", "claude", "state", "blocked"]);
    assert_eq!(refused.status.code(), Some(0), "{}", text(&refused));
    let status = String::from_utf8_lossy(&home.run(&["status"]).stdout).into_owned();
    assert!(
        status.contains("undelivered hook report") && status.contains("nowhere"),
        "{status}"
    );
    // A notify payload Codex garbled is said so, and the agent goes on (exit 0).
    let garbled = report_in("run-1", &["--agent", "codex", "codex-notify", "{not json"]);
    assert_eq!(garbled.status.code(), Some(0), "{}", text(&garbled));
    assert!(
        text(&garbled).contains("notify payload is not JSON"),
        "{}",
        text(&garbled)
    );
}

#[test]
fn a_hook_in_a_tmux_pane_reports_for_the_pane_the_tmux_source_watches() {
    let home = Home::new();
    let (tmux, pane, id) = claude_in_tmux(&home, "hook");
    // What Claude Code's hook runs inside the pane: only $TMUX and $TMUX_PANE say where it is.
    let out = home
        .command(&["report", "--agent", "claude", "state", "working"])
        .env("TMUX", tmux_env(&tmux))
        .env("TMUX_PANE", &pane)
        .output()
        .expect("report");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("\"applied\":true"),
        "{}",
        text(&out)
    );
    let state = home.pane(&id).expect("pane");
    assert!(
        state.hooked && state.lifecycle.name() == "working",
        "{state:?}"
    );
}

/// A hook that fired while the server was stopped is kept for its pane however long ago it fired:
/// the next server applies it once its tmux source has opened the pane again (not refused
/// `unknown_pane` on the first tick because the file is older than the wait).
#[test]
fn a_report_left_while_stopped_is_applied_by_the_next_server() {
    let home = Home::new();
    let (tmux, pane, id) = claude_in_tmux(&home, "late");
    let stop = home.run(&["stop"]);
    assert!(stop.status.success(), "{}", text(&stop));
    // The hook inside the pane, with no server: exit 0, the report left in the mirror file.
    let out = home
        .command(&["report", "--agent", "claude", "state", "blocked"])
        .env("TMUX", tmux_env(&tmux))
        .env("TMUX_PANE", &pane)
        .output()
        .expect("report");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let mirror = home.path("state/lookout/agent-status");
    let file = std::fs::read_dir(&mirror)
        .expect("mirror dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("the mirror file");
    // It fired a minute ago: the person starts the next server well after the hook.
    let minute_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .and_then(|f| f.set_modified(minute_ago))
        .expect("age the mirror file");
    let status = home.run(&["status"]);
    assert!(status.status.success(), "{}", text(&status));
    wait_until(
        "the mirrored report applied",
        || is(&home, &id, "claude", "blocked"),
        || format!("{:?}\n{}", home.panes(), home.log()),
    );
    assert!(!home.log().contains("refused"), "{}", home.log());
}

/// The tmux.conf line the README gives, `run-shell 'lookout tmux --set-options'`, leaves the
/// pane in front as it was: a word printed on success would be shown by tmux in view mode over
/// that pane, taking the keys meant for the agent in it.
#[test]
fn run_shell_in_tmux_conf_leaves_the_pane_alone() {
    let home = Home::new();
    let bin = fake_claude(home.dir.path());
    let name = format!("lookout-runshell-{}", std::process::id());
    let (tmux, pane) = start_tmux(&name, &bin);
    let env: Vec<String> = home
        .env()
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let line = format!("env {} {LOOKOUT} tmux --set-options", env.join(" "));
    // Without -b, `run-shell` returns once the command ended and its output was shown.
    tmux.run(&["run-shell", &line]);
    wait_until(
        "the source writing options",
        || !tmux.option("-g", &pane, "@lookout_live").is_empty(),
        || home.log(),
    );
    let mode = tmux.run(&["display", "-p", "-t", &pane, "#{pane_in_mode}"]);
    assert_eq!(mode.trim(), "0", "{}", tmux.screen(&pane));
}

/// `lookout status | head -1`: a reader that closed early ends status quietly (exit 0), not with
/// a panic about a broken pipe.
#[test]
fn output_into_a_closed_pipe_is_quiet() {
    let home = Home::new();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/codex/0.171.0/approve.cast"
    );
    let manifests = concat!(env!("CARGO_MANIFEST_DIR"), "/../../manifests");
    for args in [
        &["status"][..],
        &["status", "--json"][..],
        &["replay", "--step", fixture][..],
        &["check", manifests][..],
    ] {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let out = home
            .command(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("lookout");
        // Never a panic (exit 101) or a message.
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
        assert!(out.stderr.is_empty(), "{args:?}: {}", text(&out));
    }
}

#[test]
fn extra_boards_never_reopen_a_blocked_pane() {
    let home = Home::new();
    let bin = fake_claude(home.dir.path());
    let name = format!("lookout-boards-{}", std::process::id());
    let (tmux, pane) = start_tmux(&name, &bin);
    let tmux_var = tmux_env(&tmux);
    let attach = home.run(&["tmux", "--socket-name", &name, "--set-options"]);
    assert!(attach.status.success(), "{}", text(&attach));
    let id = format!("tmux:{name}:{pane}");
    tmux.type_line(&pane, "claude");
    wait_until(
        "claude",
        || is(&home, &id, "claude", "idle"),
        || format!("{:?}", home.panes()),
    );
    tmux.type_line(&pane, "b");
    wait_until(
        "blocked",
        || is(&home, &id, "claude", "blocked"),
        || tmux.screen(&pane),
    );
    let (_, _, events) = home
        .client()
        .expect("client")
        .subscribe()
        .expect("subscribe");
    for _ in 0..3 {
        let board = home
            .command(&["watch", "--once"])
            .env("TMUX", &tmux_var)
            .output()
            .expect("watch --once");
        assert!(board.status.success(), "{}", text(&board));
        assert!(
            String::from_utf8_lossy(&board.stdout).contains("blocked  !"),
            "{}",
            text(&board)
        );
    }
    // Everything before a sentinel event is what the boards caused.
    no_event_for(&home, events, &id, "a board made the blocked pane flap");
    assert!(is(&home, &id, "claude", "blocked"));
}

#[test]
fn tmux_options_go_with_their_writer_and_a_new_tmux_server_is_new_panes() {
    let home = Home::new();
    let bin = fake_claude(home.dir.path());
    let name = format!("lookout-stale-{}", std::process::id());
    let (tmux, pane) = start_tmux(&name, &bin);
    let attach = home.run(&["tmux", "--socket-name", &name, "--set-options"]);
    assert!(attach.status.success(), "{}", text(&attach));
    let id = format!("tmux:{name}:{pane}");
    tmux.type_line(&pane, "claude");
    wait_until(
        "claude",
        || is(&home, &id, "claude", "idle"),
        || tmux.screen(&pane),
    );
    tmux.type_line(&pane, "w");
    wait_until(
        "working",
        || is(&home, &id, "claude", "working"),
        || tmux.screen(&pane),
    );
    tmux.type_line(&pane, "i");
    wait_until(
        "done, unread, on the pane's options",
        || {
            is(&home, &id, "claude", "done")
                && tmux.option("-p", &pane, "@lookout_state") == "done"
                && !tmux.option("-g", "", "@lookout_live").is_empty()
        },
        || tmux.screen(&pane),
    );
    // The server stops: the options it wrote go with it.
    let stop = home.run(&["stop"]);
    assert!(stop.status.success(), "{}", text(&stop));
    assert_eq!(tmux.option("-p", &pane, "@lookout_state"), "");
    assert_eq!(tmux.option("-g", "", "@lookout_live"), "");
    // A new client brings the server back and it watches the same tmux server again: resumed.
    let status = home.run(&["status"]);
    assert!(status.status.success(), "{}", text(&status));
    wait_until(
        "the pane resumed done + unread, options back",
        || {
            home.pane(&id)
                .is_some_and(|p| p.lifecycle.name() == "done" && p.unread)
                && tmux.option("-p", &pane, "@lookout_state") == "done"
        },
        || format!("{:?}\n{}", home.pane(&id), home.log()),
    );
    // The server is killed outright: it removes nothing, but tmux clears `@lookout_live` as its
    // connection goes, so status lines stop showing the leftover `done`.
    assert_eq!(tmux.option("-g", "", "@lookout_live"), "1");
    let pid = home
        .client()
        .and_then(|mut c| c.call_raw("server.info", json!({})).ok())
        .and_then(|info| info["pid"].as_u64())
        .expect("server pid");
    let killed = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    wait_until(
        "tmux clearing @lookout_live",
        || tmux.option("-g", "", "@lookout_live").is_empty(),
        || tmux.option("-p", &pane, "@lookout_state"),
    );
    assert_eq!(tmux.option("-p", &pane, "@lookout_state"), "done");
    let status = home.run(&["status"]);
    assert!(status.status.success(), "{}", text(&status));
    wait_until(
        "the restarted server vouching again",
        || tmux.option("-g", "", "@lookout_live") == "1",
        || home.log(),
    );
    // A new tmux server under the same name reuses `%0`: a new pane, nothing inherited.
    drop(tmux);
    wait_until(
        "the old tmux server gone",
        || {
            !Command::new("tmux")
                .args(["-L", &name, "list-sessions"])
                .output()
                .is_ok_and(|o| o.status.success())
        },
        String::new,
    );
    let (tmux, again) = start_tmux(&name, &bin);
    assert_eq!(again, pane, "tmux reuses the pane id");
    let attach = home.run(&["tmux", "--socket-name", &name, "--set-options"]);
    assert!(attach.status.success(), "{}", text(&attach));
    wait_until(
        "the new server's pane, fresh",
        || {
            home.pane(&id)
                .is_some_and(|p| p.lifecycle.name() == "idle" && !p.unread)
        },
        || format!("{:?}", home.pane(&id)),
    );
    assert_eq!(tmux.option("-p", &pane, "@lookout_state"), "");
}

#[test]
fn a_tmux_pane_that_execs_its_agent_or_wraps_it_is_identified() {
    let home = Home::new();
    let bin = fake_claude(home.dir.path());
    let name = format!("lookout-exec-{}", std::process::id());
    let claude = bin.join("claude");
    let (tmux, first) = Tmux::start(
        &name,
        100,
        30,
        &[],
        &format!("sleep 0.3; exec {}", claude.display()),
    );
    let wrapped = tmux.run(&[
        "split-window",
        "-P",
        "-F",
        "#{pane_id}",
        "-t",
        &first,
        &format!("sh -c 'cd / && {}; echo done; sleep 60'", claude.display()),
    ]);
    let wrapped = wrapped.trim().to_owned();
    let attach = home.run(&["tmux", "--socket-name", &name]);
    assert!(attach.status.success(), "{}", text(&attach));
    for pane in [&first, &wrapped] {
        let id = format!("tmux:{name}:{pane}");
        wait_until(
            &format!("claude identified in {pane}"),
            || is(&home, &id, "claude", "idle"),
            || format!("{:?}\n{}", home.pane(&id), tmux.screen(pane)),
        );
    }
    let id = format!("tmux:{name}:{wrapped}");
    tmux.type_line(&wrapped, "b");
    wait_until(
        "the wrapped agent blocked",
        || is(&home, &id, "claude", "blocked"),
        || tmux.screen(&wrapped),
    );
    // It exits; its wrapper runs on (`echo done; sleep 60`): the agent's state goes with it.
    tmux.type_line(&wrapped, "q");
    wait_until(
        "the wrapped agent's exit withdraws blocked",
        || {
            home.pane(&id)
                .is_some_and(|p| p.lifecycle.name() != "blocked" && !p.input_required)
        },
        || format!("{:?}", home.pane(&id)),
    );
}

#[test]
fn a_run_pane_follows_its_shell_and_survives_a_server_restart() {
    let home = Home::new();
    let bin = fake_claude(home.dir.path());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = home.env();
    let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.extend([
        ("PATH", path.as_str()),
        ("PS1", "$ "),
        ("TMUX", ""),
        ("TMUX_PANE", ""),
    ]);
    let mut pty = Outer::start(
        &[
            LOOKOUT,
            "run",
            "--pane",
            "shell",
            "--",
            "bash",
            "--norc",
            "--noprofile",
        ],
        100,
        30,
        &env,
    );
    wait_until(
        "the pane",
        || home.pane("shell").is_some(),
        || tail(&pty.text()),
    );
    assert_eq!(
        home.pane("shell").and_then(|p| p.kind),
        None,
        "a shell is no agent"
    );
    let liveness = || home.pane("shell").map(|p| p.liveness);
    wait_until(
        "a shell alone is a dead agent",
        || liveness() == Some(Liveness::Dead),
        || format!("{:?}", home.pane("shell")),
    );
    pty.type_line("claude");
    wait_until(
        "claude started in the shell is identified",
        || is(&home, "shell", "claude", "idle"),
        || format!("{:?}\n{}", home.pane("shell"), tail(&pty.text())),
    );
    assert_eq!(liveness(), Some(Liveness::Alive));
    pty.type_line("b");
    wait_until(
        "blocked",
        || is(&home, "shell", "claude", "blocked"),
        || tail(&pty.text()),
    );

    // `lookout stop` with the pane alive: the pane's link does not bring the server back by itself
    // (it retries every second; three seconds without a server is the proof).
    let stop = home.run(&["stop"]);
    assert!(stop.status.success(), "{}", text(&stop));
    let end = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while std::time::Instant::now() < end {
        assert!(
            home.client().is_none(),
            "a stopped server came back unasked\n{}",
            home.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // The pane's `lookout run` started that server: it has waited for it, no zombie is left.
    let run = pty.child.process_id().expect("run pid");
    wait_until(
        "the stopped server reaped by the pane that started it",
        || zombies_of(run).is_empty(),
        || format!("zombie children of {run}: {:?}", zombies_of(run)),
    );
    // The person runs a command: the server is back, and so is the pane, blocked, with no
    // transition on the way.
    let (_, _, events) = {
        let status = home.run(&["status"]);
        assert!(status.status.success(), "{}", text(&status));
        home.client()
            .expect("client")
            .subscribe()
            .expect("subscribe")
    };
    wait_until(
        "the pane re-registered, still blocked",
        || is(&home, "shell", "claude", "blocked"),
        || format!("{:?}\n{}", home.panes(), home.log()),
    );
    no_event_for(&home, events, "shell", "the restart made a transition");
    // Leaving claude withdraws its state; the shell is in charge again.
    pty.type_line("q");
    wait_until(
        "back to the shell",
        || {
            home.pane("shell").is_some_and(|p| {
                p.kind.is_none() && p.lifecycle.name() != "blocked" && p.liveness == Liveness::Dead
            })
        },
        || format!("{:?}", home.pane("shell")),
    );
    pty.type_line("exit");
    wait_until(
        "the pane closed",
        || home.pane("shell").is_none(),
        || tail(&pty.text()),
    );
}

#[test]
fn skipped_manifests_reach_every_client() {
    let home = Home::new();
    let dir = home.path("config/lookout/manifests");
    std::fs::create_dir_all(&dir).expect("manifest dir");
    std::fs::write(
        dir.join("broken.toml"),
        "kind = \"x\"\n[[screen]]\nid = 1\n",
    )
    .expect("write");
    let status = home.run(&["status"]);
    let shown = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(
        shown.contains("1 manifest(s) skipped") && shown.contains("broken.toml"),
        "{shown}"
    );
    let run = home.run(&["run", "--", "true"]);
    let err = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(err.contains("manifest(s) skipped"), "{err}");
    assert!(home.log().contains("broken.toml"), "{}", home.log());
}

#[test]
fn a_server_whose_socket_is_gone_stops() {
    let home = Home::new();
    let status = home.run(&["status", "--json"]);
    assert!(status.status.success(), "{}", text(&status));
    let pid = home.info().expect("info")["pid"].as_u64().expect("pid");
    // What logging out does to $XDG_RUNTIME_DIR: nobody can reach the server any more.
    std::fs::remove_dir_all(home.path("run")).expect("remove the runtime dir");
    let proc = PathBuf::from(format!("/proc/{pid}"));
    wait_until(
        "the unreachable server to exit",
        || std::fs::read_to_string(proc.join("stat")).map_or(true, |s| s.contains(") Z ")),
        || home.log(),
    );
    assert!(home.log().contains("removed or replaced"), "{}", home.log());
    // A server started late (a hook's, say) does not bring the removed tree back.
    let late = home.run(&["serve", "--detached"]);
    assert!(!late.status.success(), "{}", text(&late));
    assert!(!home.path("run").exists(), "the runtime dir was re-created");
}
