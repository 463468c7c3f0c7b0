//! Real-part tests of the tmux source: a real tmux server on a unique socket, the real `lookout serve`,
//! and `lookout tmux --set-options`, which has the server watch it; panes run a scripted fake `claude`
//! that draws the screens `manifests/claude.toml` describes, one scene per line typed into it with
//! `send-keys`. Every wait is `wait_until` with a deadline; nothing sleeps a fixed time.

use crate::support::fake_claude::fake_claude;
use crate::support::server::Served;
use crate::support::tmux::Tmux;
use crate::support::wait_until;
use lookout::client::panes;
use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};

/// Starts tmux server `name` whose first pane runs a bare shell with `bin` first on its `PATH`.
fn start_tmux(name: &str, bin: &Path) -> (Tmux, String) {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let shell = format!("env PATH={path} PS1='$ ' bash --norc --noprofile");
    Tmux::start(name, 100, 30, &[], &shell)
}

/// `lookout tmux [--set-options]` for tmux server `name`: it returns once the server watches it.
fn attach(served: &Served, name: &str, set_options: bool) {
    let mut cmd = served.command(&["tmux", "--socket-name", name]);
    if set_options {
        cmd.arg("--set-options");
    }
    let out = cmd
        .arg("--server-socket")
        .arg(&served.socket)
        .stdin(Stdio::null())
        .output()
        .expect("run lookout tmux");
    assert!(
        out.status.success(),
        "lookout tmux: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn state(served: &Served, pane: &str) -> Option<lookout::panes::PaneState> {
    let (_, panes) = panes(&mut served.client()).ok()?;
    panes.into_iter().find(|p| p.pane == pane)
}

fn describe(served: &Served, tmux: &Tmux, pane: &str) -> String {
    format!(
        "state: {:?}\nscreen:\n{}",
        state(served, pane),
        tmux.screen(pane)
    )
}

#[test]
fn tmux_panes_reach_blocked_and_done_and_publish_options() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = fake_claude(dir.path());
    let name = format!("lookout-test-{}", std::process::id());
    let (tmux, first) = start_tmux(&name, &bin);
    let served = Served::start_in(dir.path(), 100);
    attach(&served, &name, true);
    let id = |pane: &str| format!("tmux:{name}:{pane}");
    let window = tmux
        .run(&["display", "-p", "-t", &first, "#{window_id}"])
        .trim()
        .to_owned();

    // The agent is started from the pane's shell: the probe sees the foreground group change.
    tmux.type_line(&first, "claude");
    let is = |pane: &str, kind: &str, lifecycle: &str| {
        state(&served, &id(pane))
            .is_some_and(|s| s.kind.as_deref() == Some(kind) && s.lifecycle.name() == lifecycle)
    };
    wait_until(
        "the agent to be identified",
        || is(&first, "claude", "idle"),
        || describe(&served, &tmux, &first),
    );
    tmux.type_line(&first, "w");
    wait_until(
        "working",
        || is(&first, "claude", "working"),
        || describe(&served, &tmux, &first),
    );
    wait_until(
        "@lookout_state working",
        || tmux.option("-p", &first, "@lookout_state") == "working",
        || describe(&served, &tmux, &first),
    );
    tmux.type_line(&first, "b");
    wait_until(
        "blocked",
        || is(&first, "claude", "blocked"),
        || describe(&served, &tmux, &first),
    );
    wait_until(
        "pane and window options blocked",
        || {
            tmux.option("-p", &first, "@lookout_state") == "blocked"
                && tmux.option("-p", &first, "@lookout_attention") == "input_required"
                && tmux.option("-w", &window, "@lookout_window_state") == "blocked"
        },
        || describe(&served, &tmux, &first),
    );
    tmux.type_line(&first, "w");
    wait_until(
        "working again",
        || is(&first, "claude", "working"),
        || describe(&served, &tmux, &first),
    );
    tmux.type_line(&first, "i");
    wait_until(
        "done",
        || is(&first, "claude", "done"),
        || describe(&served, &tmux, &first),
    );
    wait_until(
        "options done + unread",
        || {
            tmux.option("-p", &first, "@lookout_state") == "done"
                && tmux.option("-p", &first, "@lookout_attention") == "unread"
        },
        || describe(&served, &tmux, &first),
    );

    // Working by the title alone: the server runs without a locale (as under systemd), where
    // tmux would print the spinner (and the tabs `list-panes` is split by) as `_`.
    tmux.type_line(&first, "t");
    wait_until(
        "working by the title's spinner",
        || {
            state(&served, &id(&first)).is_some_and(|s| {
                s.lifecycle.name() == "working"
                    && s.cause.as_deref() == Some("screen:title-spinner")
            })
        },
        || describe(&served, &tmux, &first),
    );
    tmux.type_line(&first, "i");
    wait_until(
        "done again",
        || is(&first, "claude", "done"),
        || describe(&served, &tmux, &first),
    );

    // A second pane runs the agent directly (no shell); it blocks, so the window rolls up to blocked.
    let second = tmux.run(&[
        "split-window",
        "-P",
        "-F",
        "#{pane_id}",
        "-t",
        &first,
        &format!("{}/claude", bin.display()),
    ]);
    let second = second.trim().to_owned();
    wait_until(
        "the second agent",
        || is(&second, "claude", "idle"),
        || describe(&served, &tmux, &second),
    );
    tmux.type_line(&second, "b");
    wait_until(
        "the window rolls up to the worst pane",
        || {
            is(&second, "claude", "blocked")
                && tmux.option("-w", &window, "@lookout_window_state") == "blocked"
        },
        || describe(&served, &tmux, &second),
    );
    // Killed mid-run: the pane is forgotten and leaves no badge on its window.
    tmux.run(&["kill-pane", "-t", &second]);
    wait_until(
        "the killed pane to be closed and the window back to done",
        || {
            state(&served, &id(&second)).is_none()
                && tmux.option("-w", &window, "@lookout_window_state") == "done"
        },
        || {
            format!(
                "window state {:?}",
                tmux.option("-w", &window, "@lookout_window_state")
            )
        },
    );

    // The agent in the first pane is killed while working: its working state goes with it.
    tmux.type_line(&first, "w");
    wait_until(
        "working before the kill",
        || is(&first, "claude", "working"),
        || describe(&served, &tmux, &first),
    );
    let agent = foreground_pid(&tmux, &first);
    let killed = Command::new("kill")
        .args(["-9", &agent.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    wait_until(
        "no working badge after the agent died",
        || {
            state(&served, &id(&first))
                .is_some_and(|s| s.lifecycle.name() != "working" && !s.input_required)
                && !["working", "blocked"]
                    .contains(&tmux.option("-p", &first, "@lookout_state").as_str())
        },
        || describe(&served, &tmux, &first),
    );
}

/// The pid leading the pane's foreground process group (the agent), read like the probe does.
fn foreground_pid(tmux: &Tmux, pane: &str) -> u32 {
    let root: u32 = tmux
        .run(&["display", "-p", "-t", pane, "#{pane_pid}"])
        .trim()
        .parse()
        .expect("pane pid");
    let stat = std::fs::read_to_string(format!("/proc/{root}/stat")).expect("stat");
    let stat = lookout::pty::probe::parse_stat(&stat).expect("parse stat");
    u32::try_from(stat.tpgid).expect("a foreground group")
}

#[test]
fn a_tmux_server_that_goes_away_takes_its_panes_and_its_source_with_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = fake_claude(dir.path());
    let name = format!("lookout-gone-{}", std::process::id());
    let served = Served::start_in(dir.path(), 100);
    let (tmux, pane) = start_tmux(&name, &bin);
    attach(&served, &name, false);
    // A second attach (another board, another tmux.conf line) starts no second source.
    attach(&served, &name, false);
    let sources = || {
        served
            .client()
            .call_raw("source.list", json!({}))
            .expect("source.list")["sources"]
            .as_array()
            .map_or(0, Vec::len)
    };
    assert_eq!(sources(), 1, "one source per tmux server");
    let id = format!("tmux:{name}:{pane}");
    wait_until(
        "the pane",
        || state(&served, &id).is_some(),
        || describe(&served, &tmux, &pane),
    );
    drop(tmux);
    wait_until(
        "the pane to be closed with its server, and the source to end",
        || state(&served, &id).is_none() && sources() == 0,
        || format!("{:?}, {} sources", state(&served, &id), sources()),
    );
}

/// Hot panes are captured together, with one tmux process: each capture is its pane's, in
/// order; a pane gone since the listing ends the batch there (never another pane's screen).
#[test]
fn several_panes_are_captured_with_one_command() {
    let name = format!("lookout-many-{}", std::process::id());
    let (tmux, first) = Tmux::start(&name, 60, 10, &[], "printf 'left pane\\n'; exec cat");
    let second = tmux
        .run(&[
            "split-window",
            "-P",
            "-F",
            "#{pane_id}",
            "printf 'right pane\\n'; exec cat",
        ])
        .trim()
        .to_owned();
    let ours = lookout::pty::tmux::Tmux::new(lookout::pty::tmux::Socket::Name(name.clone()));
    wait_until(
        "both panes drawn",
        || {
            let c = ours.capture_many(&[&first, &second]);
            let text = |i: usize| {
                c[i].as_ref()
                    .map(|c| String::from_utf8_lossy(&c.screen))
                    .unwrap_or_default()
                    .into_owned()
            };
            text(0).starts_with("left pane") && text(1).starts_with("right pane")
        },
        || format!("{:?}", ours.capture_many(&[&first, &second])),
    );
    let batch = ours.capture_many(&[&first, "%999", &second]);
    assert!(batch[0].is_some(), "{batch:?}");
    assert_eq!(
        (batch[1].as_ref(), batch[2].as_ref()),
        (None, None),
        "{batch:?}"
    );
}

/// A capture carries the title the pane has when it is captured, not the one it had at the
/// last listing: Gemini's "Action Required" title goes with the dialog it names, and a hot
/// pane's recapture between rounds with the old title made the working screen after an
/// answered dialog read blocked (seen live, Gemini 0.61.0 in tmux).
#[test]
fn a_capture_carries_the_title_of_its_moment() {
    let name = format!("lookout-title-{}", std::process::id());
    // (each line read becomes the title, then a row saying so)
    let script = r#"while read t; do printf '\033]2;%s\007%s shown\n' "$t" "$t"; done"#;
    let (tmux, pane) = Tmux::start(
        &name,
        60,
        10,
        &[],
        &format!("sh -c '{}'", script.replace('\'', "'\\''")),
    );
    let ours = lookout::pty::tmux::Tmux::new(lookout::pty::tmux::Socket::Name(name.clone()));
    for title in ["Action Required", "Working"] {
        tmux.run(&["send-keys", "-t", &pane, "-l", title]);
        tmux.run(&["send-keys", "-t", &pane, "Enter"]);
        wait_until(
            "the capture has the new title",
            || {
                ours.capture_many(&[&pane])[0].as_ref().is_some_and(|c| {
                    c.info.title == title
                        && String::from_utf8_lossy(&c.screen).contains(&format!("{title} shown"))
                })
            },
            || format!("{:?}", ours.capture_many(&[&pane])),
        );
    }
    // The source, between rounds: its repaint of a recapture carries the title of then, not the
    // one its last listing saw.
    use lookout::sources::PaneSource;
    let mut source = lookout::sources::tmux::TmuxSource::new(
        lookout::pty::tmux::Tmux::new(lookout::pty::tmux::Socket::Name(name.clone())),
        false,
        Default::default(),
    );
    let listed = source.list().expect("listed");
    let source = std::cell::RefCell::new(source);
    let listed = listed
        .iter()
        .find(|l| l.native == pane)
        .expect("the pane listed");
    tmux.run(&["send-keys", "-t", &pane, "-l", "Ready"]);
    tmux.run(&["send-keys", "-t", &pane, "Enter"]);
    wait_until(
        "the recapture repaints with the title of its moment",
        || {
            source.borrow_mut().capture_many(&[listed])[0]
                .as_ref()
                .is_some_and(|bytes| String::from_utf8_lossy(bytes).contains("\x1b]2;Ready\x07"))
        },
        || format!("{:?}", source.borrow_mut().capture_many(&[listed])),
    );
    let one = ours.capture(&pane).expect("captured");
    assert_eq!(
        (one.info.id.as_str(), one.info.title.as_str()),
        (pane.as_str(), "Ready")
    );
    assert!(ours.capture("%999").is_err(), "a pane that is not there");
}

/// The lines tmux's message log holds for the commands the tmux source runs each round: tmux
/// records every command any client runs there, read back with a control client of the test's
/// own. (`list-clients` is left out: that client's coming and going is a change of what people
/// look at, which the source reads once per change.)
fn source_commands_logged(tmux: &Tmux) -> Vec<String> {
    let mut child = Command::new("tmux")
        .args([
            "-L",
            &tmux.name,
            "-C",
            "attach-session",
            "-f",
            "ignore-size",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run tmux -C");
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write as _;
        stdin
            .write_all(b"show-messages\n")
            .expect("write to tmux -C");
    }
    let out = child.wait_with_output().expect("tmux -C");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            [
                "list-panes",
                "capture-pane",
                "display-message",
                "set-option",
                "set-hook",
            ]
            .iter()
            .any(|c| l.contains(&format!("command: {c}")))
        })
        .map(str::to_owned)
        .collect()
}

/// Watching a tmux server whose pane keeps printing writes nothing to tmux's message log once
/// the pane is open: the source streams what panes print rather than running commands each round
/// (a round of `list-panes` and a `capture-pane` per pane filled the log, pushing the user's
/// messages out) — with options written too (a heartbeat option rewritten every 5 s did).
#[test]
fn watching_keeps_tmux_message_log_free_of_polling() {
    let dir = tempfile::tempdir().expect("tempdir");
    let name = format!("lookout-quiet-{}", std::process::id());
    let (tmux, pane) = Tmux::start(
        &name,
        80,
        10,
        &[],
        "i=0; while :; do printf '\\rtick %s ' $i; i=$((i+1)); sleep 0.05; done",
    );
    let served = Served::start_in(dir.path(), 100);
    attach(&served, &name, true);
    let id = format!("tmux:{name}:{pane}");
    wait_until(
        "the pane",
        || state(&served, &id).is_some(),
        || describe(&served, &tmux, &pane),
    );
    let rounds = || {
        served
            .client()
            .call_raw("source.list", json!({}))
            .expect("source.list")["sources"][0]["rounds"]
            .as_u64()
            .unwrap_or(0)
    };
    wait_until(
        "the options flag written",
        || tmux.option("-g", "", "@lookout_live") == "1",
        || describe(&served, &tmux, &pane),
    );
    let before = source_commands_logged(&tmux);
    let start = rounds();
    wait_until(
        "seven seconds of rounds",
        || rounds() >= start + 14,
        || format!("{} rounds", rounds()),
    );
    let after = source_commands_logged(&tmux);
    assert_eq!(
        after.len(),
        before.len(),
        "the source's commands reached tmux's message log while it watched a printing pane: {:?}",
        (&before, &after)
    );
}

/// A session made after the source started is watched too (tmux streams a session's panes only
/// to clients attached to it): its agent's dialog reads blocked.
#[test]
fn a_session_made_later_is_streamed_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = fake_claude(dir.path());
    let name = format!("lookout-later-{}", std::process::id());
    let (tmux, _first) = start_tmux(&name, &bin);
    let served = Served::start_in(dir.path(), 100);
    attach(&served, &name, false);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let shell = format!("env PATH={path} PS1='$ ' bash --norc --noprofile");
    let pane = tmux
        .run(&[
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-x",
            "100",
            "-y",
            "30",
            &shell,
        ])
        .trim()
        .to_owned();
    let id = format!("tmux:{name}:{pane}");
    tmux.type_line(&pane, "claude");
    let is = |lifecycle: &str| {
        state(&served, &id)
            .is_some_and(|s| s.kind.as_deref() == Some("claude") && s.lifecycle.name() == lifecycle)
    };
    wait_until("idle", || is("idle"), || describe(&served, &tmux, &pane));
    tmux.type_line(&pane, "b");
    wait_until(
        "blocked",
        || is("blocked"),
        || describe(&served, &tmux, &pane),
    );
    tmux.type_line(&pane, "w");
    wait_until(
        "working",
        || is("working"),
        || describe(&served, &tmux, &pane),
    );
}

/// A tmux server of the same socket name as `tmux`'s in directory `tmpdir` (its `TMUX_TMPDIR`);
/// killed when dropped.
struct Twin {
    name: String,
    tmpdir: std::path::PathBuf,
}

impl Twin {
    fn command(&self) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.env("TMUX_TMPDIR", &self.tmpdir)
            .args(["-L", &self.name]);
        cmd
    }
}

impl Drop for Twin {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
    }
}

/// Two tmux servers of one socket name in different directories (`TMUX_TMPDIR`) keep their own
/// panes (both were `tmux:NAME:%0`, so one server's pane showed the other's), and `lookout tmux
/// --stop` stops watching one of them: its panes leave, the other's stay.
#[test]
fn two_tmux_servers_of_one_name_keep_their_panes_apart_and_one_can_be_left() {
    let dir = tempfile::tempdir().expect("tempdir");
    let name = format!("lookout-twin-{}", std::process::id());
    let (_tmux, _pane) = Tmux::start(&name, 80, 10, &[], "sh");
    let tmpdir = tempfile::Builder::new()
        .prefix("lk-twin-")
        .tempdir_in("/tmp")
        .expect("tmpdir");
    let twin = Twin {
        name: name.clone(),
        tmpdir: tmpdir.path().to_path_buf(),
    };
    let started = twin
        .command()
        .args([
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            "80",
            "-y",
            "10",
            "sh",
        ])
        .status()
        .expect("start the twin");
    assert!(started.success());
    let served = Served::start_in(dir.path(), 100);
    attach(&served, &name, false);
    let lookout_tmux = |extra: &[&str]| {
        let out = served
            .command(&["tmux", "--socket-name", &name])
            .args(extra)
            .arg("--server-socket")
            .arg(&served.socket)
            .env("TMUX_TMPDIR", tmpdir.path())
            .stdin(Stdio::null())
            .output()
            .expect("run lookout tmux");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    lookout_tmux(&[]);
    let ours = || -> Vec<String> {
        let (_, panes) = panes(&mut served.client()).expect("pane.list");
        let mut ids: Vec<String> = panes
            .into_iter()
            .map(|p| p.pane)
            .filter(|p| p.starts_with(&format!("tmux:{name}")))
            .collect();
        ids.sort();
        ids
    };
    wait_until(
        "a pane of each server, under two ids",
        || ours().len() == 2,
        || format!("{:?}", ours()),
    );
    let plain = format!("tmux:{name}:%0");
    assert!(ours().contains(&plain), "{:?}", ours());
    lookout_tmux(&["--stop"]);
    wait_until(
        "only the first server's pane",
        || ours() == [plain.clone()],
        || format!("{:?}", ours()),
    );
    let sources = served
        .client()
        .call_raw("source.list", json!({}))
        .expect("source.list");
    assert_eq!(
        sources["sources"].as_array().map_or(0, Vec::len),
        1,
        "{sources}"
    );
}

/// Panes captured through the source's control client: a pane gone since the listing is not
/// captured, and each pane after it still gets its own screen (a failed command ends its line,
/// so its answers must not be taken for the next pane's).
#[test]
fn a_gone_pane_in_a_capture_batch_leaves_the_others_their_screens() {
    use lookout::sources::PaneSource;
    let name = format!("lookout-gone-batch-{}", std::process::id());
    let (tmux, first) = Tmux::start(&name, 60, 10, &[], "printf 'left pane\\n'; exec cat");
    let split = [
        "split-window",
        "-P",
        "-F",
        "#{pane_id}",
        "printf 'right pane\\n'; exec cat",
    ];
    let second = tmux.run(&split).trim().to_owned();
    let source = std::cell::RefCell::new(lookout::sources::tmux::TmuxSource::new(
        lookout::pty::tmux::Tmux::new(lookout::pty::tmux::Socket::Name(name.clone())),
        false,
        Default::default(),
    ));
    let listed = source.borrow_mut().list().expect("listed");
    let find = |id: &str| listed.iter().find(|l| l.native == id).cloned();
    let (Some(left), Some(right)) = (find(&first), find(&second)) else {
        panic!("both panes listed: {listed:?}");
    };
    let mut gone = left.clone();
    gone.native = "%999".into();
    let text = |c: &Option<Vec<u8>>| c.as_ref().map(|c| String::from_utf8_lossy(c).into_owned());
    wait_until(
        "the left and right screens, and none for the gone pane",
        || {
            let c = source.borrow_mut().capture_many(&[&left, &gone, &right]);
            text(&c[0]).is_some_and(|t| t.contains("left pane") && !t.contains("right pane"))
                && c[1].is_none()
                && text(&c[2]).is_some_and(|t| t.contains("right pane") && !t.contains("left"))
        },
        || {
            format!(
                "{:?}",
                source.borrow_mut().capture_many(&[&left, &gone, &right])
            )
        },
    );
}

/// A stopped lookout (SIGSTOP) never holds tmux: its control client is dropped, so tmux reads
/// the panes of the session nobody else is attached to again; killed afterwards, it leaves
/// nothing behind, and `kill-server` ends the tmux server. (tmux stops reading a pane whose only
/// clients are control clients with full pipes, and waits for a control client to take everything
/// queued for it before it lets it go: the pane froze, and the server never exited.)
#[test]
fn a_stopped_or_killed_lookout_never_holds_tmux() {
    let dir = tempfile::tempdir().expect("tempdir");
    let name = format!("lookout-stalled-{}", std::process::id());
    let count = dir.path().join("count");
    let (tmux, pane) = Tmux::start(
        &name,
        80,
        10,
        &[],
        &format!(
            "i=0; while :; do i=$((i+1)); echo $i > {}.new; mv {0}.new {0}; seq 1 200; done",
            count.display()
        ),
    );
    let mut served = Served::start_in(dir.path(), 100);
    attach(&served, &name, false);
    let id = format!("tmux:{name}:{pane}");
    wait_until(
        "the pane",
        || state(&served, &id).is_some(),
        || describe(&served, &tmux, &pane),
    );
    let clients = || tmux.run(&["list-clients", "-F", "#{client_pid}"]);
    assert_eq!(clients().lines().count(), 1, "lookout's control client");
    let lookout = nix::unistd::Pid::from_raw(i32::try_from(served.child.id()).expect("pid"));
    nix::sys::signal::kill(lookout, nix::sys::signal::Signal::SIGSTOP).expect("SIGSTOP");
    wait_until(
        "tmux to drop the client nobody reads",
        || clients().trim().is_empty(),
        || format!("clients: {:?}", clients()),
    );
    let printed = || {
        std::fs::read_to_string(&count)
            .ok()
            .and_then(|c| c.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    let now = printed();
    wait_until(
        "the pane to go on printing",
        || printed() > now + 10,
        || format!("{} lines, screen:\n{}", printed(), tmux.screen(&pane)),
    );
    served.kill9();
    let server: i32 = tmux
        .run(&["display-message", "-p", "#{pid}"])
        .trim()
        .parse()
        .expect("tmux server pid");
    let _ = Command::new("tmux")
        .args(["-L", &name, "kill-server"])
        .output();
    let server = nix::unistd::Pid::from_raw(server);
    wait_until(
        "the tmux server to exit",
        || nix::sys::signal::kill(server, None).is_err(),
        || format!("tmux server {server} still runs; clients: {:?}", clients()),
    );
}
