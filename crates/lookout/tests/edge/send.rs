//! `pane.send` and `lookout send` (see docs/protocol.md, `pane.send`) end to end, as an
//! orchestrator uses them: a real
//! `lookout serve`, agents in real PTYs under `lookout run` and in a real tmux, the real CLI.
//! The reference client subscribes, reconciles, waits for a pane that needs input, sends, and
//! checks the verdict against the events that followed. The agents: a fake with a real composer
//! (`support/fake_agent.py`) and a recording of the real Claude Code replayed through a PTY.

use crate::support::pty::Outer;
use crate::support::server::Served;
use crate::support::tmux::Tmux;
use crate::support::{LOOKOUT, wait_until};
use lookout::components::{ComposerState, LifecycleState};
use lookout::panes::PaneState;
use lookout::protocol::params::{AgentGet, PaneSend};
use lookout::protocol::results::Verdict;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

const FAKE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/edge/support/fake_agent.py"
);
const PLAY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/edge/support/play_cast.py"
);

/// An agent in a `lookout run` pane of its own terminal.
fn run_pane(s: &Served, pane: &str, argv: &[&str], env: &[(&str, &str)]) -> Outer {
    let socket = s.socket.to_string_lossy().into_owned();
    let mut args = vec![
        LOOKOUT, "run", "--socket", &socket, "--pane", pane, "--kind", "claude", "--",
    ];
    args.extend_from_slice(argv);
    Outer::start(&args, 100, 30, env)
}

fn state(s: &Served, pane: &str) -> Option<PaneState> {
    s.client()
        .call(&AgentGet {
            pane: pane.to_owned(),
        })
        .ok()
}

/// Waits until the pane is ready for input: idle (or done) with its composer proven empty.
fn ready(s: &Served, pane: &str) {
    wait_until(
        &format!("{pane} ready for input"),
        || {
            state(s, pane).is_some_and(|p| {
                matches!(p.lifecycle, LifecycleState::Idle | LifecycleState::Done)
                    && p.composer.state == ComposerState::Empty
            })
        },
        || format!("{:?}", state(s, pane)),
    );
}

/// `lookout send` as a person or a script runs it: its exit code and JSON.
fn send_cli(s: &Served, args: &[&str]) -> (i32, Value) {
    let out = std::process::Command::new(LOOKOUT)
        .arg("send")
        .arg("--socket")
        .arg(&s.socket)
        .arg("--json")
        .args(args)
        .output()
        .expect("lookout send");
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), json)
}

/// The reference orchestrator: subscribe, reconcile the snapshot with the events, wait for a pane
/// that needs input, send, and see what the events say happened after.
#[test]
fn the_reference_client_sends_to_a_pane_that_needs_input_and_sees_it_taken() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let _agent = run_pane(&s, "fake", &["python3", FAKE], &[("FAKE_WORK_MS", "1500")]);
    let (seq, panes, mut events) = s.client().subscribe().expect("subscribe");
    let mut known: HashMap<String, LifecycleState> =
        panes.into_iter().map(|p| (p.pane, p.lifecycle)).collect();
    let mut last_seq = seq;
    // Reconcile: apply events in order until the pane is known, then ask for its composer.
    ready(&s, "fake");
    let sent = s
        .client()
        .call(&PaneSend {
            pane: "fake".into(),
            text: "write a haiku".into(),
            submit: true,
            force: false,
            timeout_ms: Some(10_000),
            expect: None,
        })
        .expect("pane.send");
    assert_eq!(sent.verdict, Verdict::Confirmed, "{sent:?}");
    assert!(sent.enters >= 1, "{sent:?}");
    // The events after the send: the turn the text started, and its end.
    let mut saw_working = false;
    for event in events.by_ref() {
        let event = event.expect("event");
        let n = event["seq"].as_u64().expect("seq");
        assert!(n > last_seq, "events come in order: {event}");
        last_seq = n;
        if event["pane"] != "fake" || event["type"] != "lifecycle" {
            continue;
        }
        let to = LifecycleState::parse(event["to"].as_str().unwrap_or("")).expect("to");
        known.insert("fake".into(), to);
        saw_working |= to == LifecycleState::Working;
        if saw_working && to == LifecycleState::Done {
            break;
        }
    }
    assert_eq!(known.get("fake"), Some(&LifecycleState::Done));
    let done = state(&s, "fake").expect("state");
    assert!(done.unread, "a finished turn nobody saw: {done:?}");
}

#[test]
fn verdicts_for_a_draft_a_swallowed_enter_a_dead_pane_and_a_missing_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let _agent = run_pane(&s, "draft", &["python3", FAKE], &[]);
    ready(&s, "draft");
    // Typed, not submitted: the composer shows it, byte for byte (U+2063 survives).
    let text = "note\u{2063}this";
    let (code, v) = send_cli(&s, &["draft", text, "--no-submit"]);
    assert_eq!((code, v["verdict"].as_str()), (0, Some("typed")), "{v}");
    wait_until(
        "the draft in the composer",
        || {
            state(&s, "draft").is_some_and(|p| {
                p.composer.state == ComposerState::Pending
                    && p.composer.text.as_deref() == Some(text)
            })
        },
        || format!("{:?}", state(&s, "draft")),
    );
    // Text already pending: nothing is typed on top of it.
    let (code, v) = send_cli(&s, &["draft", "more"]);
    assert_eq!((code, v["verdict"].as_str()), (6, Some("refused")), "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap_or("")
            .starts_with("composer_pending"),
        "{v}"
    );

    // Enter does nothing: every Enter spent, the idle agent still holds the text.
    let _deaf = run_pane(&s, "deaf", &["python3", FAKE], &[("FAKE_SWALLOW", "1")]);
    ready(&s, "deaf");
    let (code, v) = send_cli(&s, &["deaf", "hello", "--timeout", "8s"]);
    assert_eq!((code, v["verdict"].as_str()), (5, Some("swallowed")), "{v}");
    assert_eq!(v["enters"], 3, "{v}");

    // A shell alone: the agent is gone; never typed into, even forced.
    let _shell = run_pane(&s, "shell", &["bash", "--norc", "--noprofile"], &[]);
    wait_until(
        "the shell pane read dead",
        || state(&s, "shell").is_some_and(|p| p.liveness == lookout::panes::Liveness::Dead),
        || format!("{:?}", state(&s, "shell")),
    );
    let (code, v) = send_cli(&s, &["shell", "echo x", "--force"]);
    assert_eq!((code, v["verdict"].as_str()), (6, Some("refused")), "{v}");
    assert!(
        v["reason"].as_str().unwrap_or("").starts_with("dead"),
        "{v}"
    );

    let (code, v) = send_cli(&s, &["nowhere", "x"]);
    assert_eq!((code, v["verdict"].as_str()), (6, Some("refused")), "{v}");
    assert!(
        v["reason"].as_str().unwrap_or("").starts_with("missing"),
        "{v}"
    );
}

/// Text typed while the agent works, held in its composer by an agent that queues (Claude's
/// manifest says it does): queued, not swallowed and not retried into an interrupt.
#[test]
fn a_follow_up_while_working_is_queued() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let env = [("FAKE_WORK_MS", "8000"), ("FAKE_HOLD", "1")];
    let _agent = run_pane(&s, "busy", &["python3", FAKE], &env);
    ready(&s, "busy");
    let (code, v) = send_cli(&s, &["busy", "first task"]);
    assert_eq!((code, v["verdict"].as_str()), (0, Some("confirmed")), "{v}");
    wait_until(
        "working with an empty composer",
        || {
            state(&s, "busy").is_some_and(|p| {
                p.lifecycle == LifecycleState::Working && p.composer.state == ComposerState::Empty
            })
        },
        || format!("{:?}", state(&s, "busy")),
    );
    let (code, v) = send_cli(&s, &["busy", "then this"]);
    assert_eq!((code, v["verdict"].as_str()), (3, Some("queued")), "{v}");
    assert_eq!(v["enters"], 1, "one Enter, never more: {v}");
}

/// A follow-up sent while the agent works, taken out of the box to send next (as Claude, Gemini,
/// Qwen and opencode show "queued" above it): queued.
#[test]
fn a_follow_up_taken_to_a_queue_is_queued() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let _agent = run_pane(&s, "q", &["python3", FAKE], &[("FAKE_WORK_MS", "8000")]);
    ready(&s, "q");
    let (code, v) = send_cli(&s, &["q", "first task"]);
    assert_eq!((code, v["verdict"].as_str()), (0, Some("confirmed")), "{v}");
    wait_until(
        "working with an empty composer",
        || {
            state(&s, "q").is_some_and(|p| {
                p.lifecycle == LifecycleState::Working && p.composer.state == ComposerState::Empty
            })
        },
        || format!("{:?}", state(&s, "q")),
    );
    let (code, v) = send_cli(&s, &["q", "then this"]);
    assert_eq!((code, v["verdict"].as_str()), (3, Some("queued")), "{v}");
}

/// An Enter that opened a picker is never followed by one that would choose in it.
#[test]
fn enter_is_never_pressed_into_a_menu_the_text_opened() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let agent = run_pane(&s, "m", &["python3", FAKE], &[]);
    ready(&s, "m");
    let (code, v) = send_cli(&s, &["m", "/pick"]);
    assert_eq!(
        (code, v["verdict"].as_str()),
        (4, Some("unconfirmed")),
        "{v}"
    );
    assert_eq!(v["enters"], 1, "{v}");
    agent.wait_for_text("Enter to choose");
    assert!(
        !agent.text().contains("CHOSEN"),
        "a second Enter chose: {}",
        agent.text()
    );
}

/// A recording of the real Claude Code at its permission dialog, replayed through a PTY: the pane
/// needs input, but a dialog's, so a prompt is never typed into it.
#[test]
fn a_real_claude_dialog_is_never_typed_into() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let cast = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/claude/2.1.332/approve.cast")
        .to_string_lossy()
        .into_owned();
    let socket = s.socket.to_string_lossy().into_owned();
    let _claude = Outer::start(
        &[
            LOOKOUT, "run", "--socket", &socket, "--pane", "real", "--kind", "claude", "--",
            "python3", PLAY, &cast, "blocked",
        ],
        120,
        40,
        &[],
    );
    wait_until(
        "the replayed dialog read blocked",
        || state(&s, "real").is_some_and(|p| p.lifecycle == LifecycleState::Blocked),
        || format!("{:?}", state(&s, "real")),
    );
    let (code, v) = send_cli(&s, &["real", "yes please"]);
    assert_eq!((code, v["verdict"].as_str()), (6, Some("refused")), "{v}");
    assert!(
        v["reason"].as_str().unwrap_or("").starts_with("blocked"),
        "{v}"
    );
    assert_eq!(v["enters"], 0, "{v}");
}

/// A fake agent as `claude` in a pane of a tmux server of its own, watched by `s`: the server,
/// and the pane's lookout id.
fn tmux_agent(s: &Served, dir: &Path, env: &str) -> (Tmux, String, String) {
    let name = format!("lookout-send-{}-{}", std::process::id(), env.len());
    // the fake is `claude` on the pane's PATH, as a real install would be
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let claude = bin.join("claude");
    std::fs::copy(FAKE, &claude).expect("copy the fake agent");
    let exec = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&claude, exec).expect("chmod");
    let (tmux, pane) = Tmux::start(
        &name,
        100,
        30,
        &[],
        &format!(
            "env {env} PATH={}:{} claude",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    );
    let out = s
        .command(&["tmux", "--socket-name", &name])
        .arg("--server-socket")
        .arg(&s.socket)
        .output()
        .expect("lookout tmux");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = format!("tmux:{name}:{pane}");
    wait_until(
        "the tmux pane on the server",
        || state(s, &id).is_some(),
        || tmux.screen(&pane),
    );
    ready(s, &id);
    (tmux, pane, id)
}

/// A tmux pane, through the tmux source: typed with `send-keys`, the agent shows exactly the text.
#[test]
fn a_tmux_pane_is_typed_into_through_its_source() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let (tmux, pane, id) = tmux_agent(&s, dir.path(), "FAKE_WORK_MS=1500");
    let text = "tmux \u{2063}says hi";
    let (code, v) = send_cli(&s, &[&id, text]);
    assert_eq!((code, v["verdict"].as_str()), (0, Some("confirmed")), "{v}");
    wait_until(
        "the agent's answer quoting the text",
        || tmux.screen(&pane).contains(&format!("Done: {text}")),
        || tmux.screen(&pane),
    );
}

/// The tmux source sees a pane's screen only every half second: an empty composer on a screen
/// from before the typing proves nothing. Enter that does nothing is swallowed, never confirmed.
#[test]
fn a_screen_behind_the_typing_never_confirms() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let (_tmux, _pane, id) = tmux_agent(&s, dir.path(), "FAKE_SWALLOW=1");
    let (code, v) = send_cli(&s, &[&id, "not taken", "--timeout", "10s"]);
    assert_eq!((code, v["verdict"].as_str()), (5, Some("swallowed")), "{v}");
}

/// A turn shorter than the tmux source's round (an answered dialog, a quick answer: ~0.3 s seen
/// live) is still seen working, then done: a pane whose screen changes after a quiet spell is
/// captured between rounds for a while.
#[test]
fn a_turn_shorter_than_a_round_in_a_tmux_pane_is_seen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let (tmux, pane, id) = tmux_agent(&s, dir.path(), "FAKE_WORK_MS=300");
    let (_, _, events) = s.client().subscribe().expect("subscribe");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for event in events {
            let Ok(event) = event else { return };
            if tx.send(event).is_err() {
                return;
            }
        }
    });
    for turn in 0..3 {
        // The screen has been still for a while, as an agent waiting for its user is.
        let mut still = (tmux.screen(&pane), std::time::Instant::now());
        wait_until(
            "a still screen",
            || {
                let now = tmux.screen(&pane);
                if now != still.0 {
                    still = (now, std::time::Instant::now());
                }
                still.1.elapsed() >= std::time::Duration::from_millis(1500)
            },
            || tmux.screen(&pane),
        );
        // Typed, seen in the box, then submitted: the answer takes 0.3 s, less than a round.
        tmux.run(&["send-keys", "-t", &pane, "-l", &format!("quick {turn}")]);
        wait_until(
            "the draft seen",
            || state(&s, &id).is_some_and(|p| p.composer.state == ComposerState::Pending),
            || format!("{:?}", state(&s, &id)),
        );
        tmux.keys(&pane, "Enter");
        let mut seen = Vec::new();
        let done = loop {
            let Ok(event) = rx.recv_timeout(crate::support::deadline()) else {
                break false;
            };
            if event["pane"] != id.as_str() || event["type"] != "lifecycle" {
                continue;
            }
            let to = event["to"].as_str().unwrap_or("").to_owned();
            seen.push(to.clone());
            if to == "done" {
                break true;
            }
        };
        assert!(
            done && seen.first().map(String::as_str) == Some("working"),
            "turn {turn}: {seen:?}\n{}\n{:?}",
            tmux.screen(&pane),
            state(&s, &id)
        );
        let out = s
            .command(&["seen", &id])
            .arg("--socket")
            .arg(&s.socket)
            .output()
            .expect("lookout seen");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The injection an orchestrator relaying someone else's text could be handed: a bracketed-paste
/// end marker, then CR (Enter) and a command.
const INJECTION: &str = "hi\u{1b}[201~\rrm -rf ~/x\r";

/// Sends the injection with `submit: false`, then a harmless line; returns the injection's
/// error code and waits until the agent has read the harmless line (the channel works), then
/// returns every byte the agent read.
fn inject(s: &Served, pane: &str, log: &Path) -> (String, Vec<u8>) {
    let send = |text: &str| {
        s.client().call(&PaneSend {
            pane: pane.to_owned(),
            text: text.to_owned(),
            submit: false,
            force: false,
            timeout_ms: Some(5_000),
            expect: None,
        })
    };
    let injected = crate::support::server::code(&send(INJECTION));
    send("after").expect("a plain send");
    wait_until(
        "the agent to read the plain text",
        || std::fs::read(log).is_ok_and(|b| b.windows(5).any(|w| w == b"after")),
        || String::from_utf8_lossy(&std::fs::read(log).unwrap_or_default()).into_owned(),
    );
    (injected, std::fs::read(log).expect("the agent's input"))
}

fn assert_not_escaped(injected: &str, read: &[u8]) {
    let shown = String::from_utf8_lossy(read).into_owned();
    assert!(!read.contains(&b'\r'), "the agent read a CR: {shown:?}");
    assert!(
        !shown.contains("rm -rf"),
        "the agent read the command: {shown:?}"
    );
    let unwrapped = shown.replace("\u{1b}[200~", "").replace("\u{1b}[201~", "");
    assert_eq!(
        unwrapped, "after",
        "the agent read more than the plain text: {shown:?}"
    );
    assert_eq!(injected, "bad_params", "the injection was not refused");
}

/// The PTY path (`lookout run`): text that would end the paste and press Enter is refused whole.
#[test]
fn a_paste_end_and_cr_in_the_text_never_reach_a_run_pane() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let log = dir.path().join("read.log");
    let log_env = log.to_string_lossy().into_owned();
    let _agent = run_pane(&s, "fake", &["python3", FAKE], &[("FAKE_LOG", &log_env)]);
    ready(&s, "fake");
    let (injected, read) = inject(&s, "fake", &log);
    assert_not_escaped(&injected, &read);
}

/// The tmux path: the same injection, refused the same way.
#[test]
fn a_paste_end_and_cr_in_the_text_never_reach_a_tmux_pane() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let log = dir.path().join("read.log");
    let env = format!("FAKE_LOG={}", log.display());
    let (_tmux, _pane, id) = tmux_agent(&s, dir.path(), &env);
    let (injected, read) = inject(&s, &id, &log);
    assert_not_escaped(&injected, &read);
}

/// A program that never asked for bracketed paste would take a newline as Enter: a `lookout run`
/// pane refuses such text instead of typing it.
#[test]
fn a_newline_is_not_typed_where_it_would_press_enter() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let log = dir.path().join("read.log");
    let log_env = log.to_string_lossy().into_owned();
    let env = [("FAKE_LOG", log_env.as_str()), ("FAKE_NO_PASTE", "1")];
    let _agent = run_pane(&s, "fake", &["python3", FAKE], &env);
    ready(&s, "fake");
    let (code, v) = send_cli(&s, &["fake", "one\nrm -rf ~/x", "--no-submit"]);
    assert_eq!((code, v["verdict"].as_str()), (6, Some("refused")), "{v}");
    let read = std::fs::read(&log).unwrap_or_default();
    assert!(read.is_empty(), "{:?}", String::from_utf8_lossy(&read));
}

/// The orchestrator's loop, fifty times in a row with an agent that answers in 20 ms (well inside
/// one tick): `lookout send … --wait done` returns when the turn that send started is over —
/// never an earlier turn's end, never a timeout with the answer on screen — and then `lookout
/// wait --until done` on the pane, done and unread, returns at once.
#[test]
fn send_and_wait_fifty_times_in_a_row_never_misses_a_turn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let agent = run_pane(&s, "quick", &["python3", FAKE], &[("FAKE_WORK_MS", "20")]);
    ready(&s, "quick");
    for i in 0..50 {
        let text = format!("quick {i}");
        let out = s
            .command(&["send", "quick", &text, "--json", "--wait", "done"])
            .args(["--wait-timeout", "8s"])
            .output()
            .expect("lookout send");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "turn {i}: exit {:?}\n{stdout}{}\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr),
            agent.text()
        );
        let last = stdout.lines().last().unwrap_or_default();
        let state: PaneState = serde_json::from_str(last).expect("the pane's state");
        assert!(
            state.lifecycle == LifecycleState::Done && state.unread,
            "turn {i}: {state:?}"
        );
        assert!(
            agent.text().contains(&format!("Done: {text}")),
            "turn {i} ended before its answer was on screen:\n{}",
            agent.text()
        );
        let out = s
            .command(&["wait", "quick", "--until", "done", "--timeout", "2s"])
            .output()
            .expect("lookout wait");
        assert!(
            out.status.success(),
            "turn {i}: a done, unread pane is waited for: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        ready(&s, "quick");
    }
}

/// A second client cannot claim a pane another live connection drives (it would receive the
/// text meant for the pane); once the first connection closes, it can.
#[test]
fn a_second_client_cannot_take_over_a_driven_pane() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Served::start_in(dir.path(), 100);
    let drive = r#"{"id":1,"method":"pane.drive","params":{"pane":"p"}}"#;
    let mut first = s.raw();
    assert!(first.ask(drive)["error"].is_null());
    let mut second = s.raw();
    let refused = second.ask(drive);
    assert_eq!(refused["error"]["code"], "pane_driven", "{refused}");
    drop(first);
    wait_until(
        "the pane free to drive once its driver closed",
        || second.ask(drive)["error"].is_null(),
        String::new,
    );
}
