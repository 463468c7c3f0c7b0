//! The fleet (see docs/fleet.md) with real parts: a real `nats-server -js` on a free loopback
//! port, real
//! `lookout serve --publish` processes with their own sockets, databases and machine ids, and the
//! real `lookout status|events|wait --fleet` boards. Every wait has a deadline; none sleeps.

use crate::support::nats::Nats;
use crate::support::server::{Served, announce, open_with};
use crate::support::{LOOKOUT, wait_until};
use serde_json::{Value, json};
use std::io::{BufRead as _, BufReader};
use std::process::{Child, ChildStderr, ChildStdout, Stdio};
use std::time::Duration;

/// The heartbeat TTL the servers here create the bucket with: short, so "offline" comes soon.
const TTL: &str = "2s";

/// A publishing server: `alpha` by flags, `beta` by the settings file's `[fleet]` table.
pub(crate) fn publishing(dir: &std::path::Path, nats: &Nats, machine: &str) -> Served {
    let dir = dir.join(machine);
    if machine == "beta" {
        let config = dir.join("config").join("lookout");
        std::fs::create_dir_all(&config).expect("config dir");
        std::fs::write(
            config.join("config.toml"),
            format!(
                "[fleet]\npublish = \"{}\"\nmachine = \"beta\"\nheartbeat_ttl = \"{TTL}\"\n",
                nats.url()
            ),
        )
        .expect("settings");
        Served::start_with(&dir, 50, &[])
    } else {
        let url = nats.url();
        Served::start_with(
            &dir,
            50,
            &[
                "--publish",
                &url,
                "--machine",
                machine,
                "--heartbeat-ttl",
                TTL,
            ],
        )
    }
}

/// `lookout status --fleet URL --json`, or `Null` while the fleet cannot answer.
fn fleet(nats: &Nats) -> Value {
    std::process::Command::new(LOOKOUT)
        .args(["status", "--json", "--fleet", &nats.url()])
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| serde_json::from_slice(&o.stdout).ok())
        .unwrap_or(Value::Null)
}

/// The fleet's state of `machine`'s `pane`: its lifecycle, or `"-"` when the bucket has none.
fn fleet_lifecycle(view: &Value, machine: &str, pane: &str) -> String {
    view["panes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["machine"] == machine && p["pane"] == pane)
        .and_then(|p| p["lifecycle"].as_str())
        .unwrap_or("-")
        .to_owned()
}

fn online(view: &Value, machine: &str) -> Option<bool> {
    view["machines"]
        .as_array()?
        .iter()
        .find(|m| m["machine"] == machine)?["online"]
        .as_bool()
}

/// Opens `pane` with a claude process and has its hook report `state`.
pub(crate) fn claude_pane(s: &Served, pane: &str) {
    let mut c = s.client();
    open_with(&mut c, pane, &["/usr/bin/claude"]);
    announce(&mut c, pane, "hook:claude");
}

pub(crate) fn report(s: &Served, pane: &str, seq: u64, state: &str) {
    let r = s.client().call_raw(
        "report.state",
        json!({"pane": pane, "source": "hook:claude", "seq": seq, "state": state}),
    );
    assert!(r.is_ok(), "report.state {state}: {r:?}");
}

/// Waits until the fleet shows every `(machine, pane, lifecycle)`.
fn until_fleet_shows(nats: &Nats, want: &[(&str, &str, &str)]) {
    let last = std::cell::RefCell::new(Value::Null);
    wait_until(
        &format!("the fleet to show {want:?}"),
        || {
            let view = fleet(nats);
            let ok = want
                .iter()
                .all(|(m, p, l)| fleet_lifecycle(&view, m, p) == *l);
            *last.borrow_mut() = view;
            ok
        },
        || last.borrow().to_string(),
    );
}

/// A `lookout … --fleet` child with piped output.
fn spawn(args: &[&str]) -> (Child, BufReader<ChildStdout>, BufReader<ChildStderr>) {
    let mut child = std::process::Command::new(LOOKOUT)
        .args(args)
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn lookout");
    let out = BufReader::new(child.stdout.take().expect("stdout"));
    let err = BufReader::new(child.stderr.take().expect("stderr"));
    (child, out, err)
}

fn json_line(out: &mut BufReader<ChildStdout>) -> Value {
    let mut line = String::new();
    out.read_line(&mut line).expect("read a line");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
}

#[test]
fn two_servers_publish_into_one_fleet_that_sees_both_change_and_close() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nats = Nats::start(dir.path());
    let alpha = publishing(dir.path(), &nats, "alpha");
    let beta = publishing(dir.path(), &nats, "beta");
    claude_pane(&alpha, "tmux:work:%1");
    claude_pane(&beta, "b1");
    claude_pane(&beta, "b2");
    until_fleet_shows(
        &nats,
        &[
            ("alpha", "tmux:work:%1", "idle"),
            ("beta", "b1", "idle"),
            ("beta", "b2", "idle"),
        ],
    );
    let view = fleet(&nats);
    assert_eq!(
        (online(&view, "alpha"), online(&view, "beta")),
        (Some(true), Some(true)),
        "{view}"
    );
    // Each server says which machine it is.
    let status = alpha.command(&["status"]).output().expect("status");
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains("machine: alpha, publishing to nats://127.0.0.1"),
        "{text}"
    );

    // A board subscribed before a change gets it in order, with its seq in the header.
    let (mut events, mut out, _) = spawn(&["events", "--fleet", &nats.url()]);
    let snapshot = json_line(&mut out);
    assert_eq!(
        snapshot["panes"].as_array().map(Vec::len),
        Some(3),
        "{snapshot}"
    );
    report(&alpha, "tmux:work:%1", 1, "working");
    report(&alpha, "tmux:work:%1", 2, "done");
    let first = json_line(&mut out);
    let second = json_line(&mut out);
    let _ = events.kill();
    let _ = events.wait();
    for (line, to) in [(&first, "working"), (&second, "done")] {
        assert_eq!(line["machine"], "alpha", "{line}");
        assert_eq!(line["event"]["pane"], "tmux:work:%1", "{line}");
        assert_eq!(line["event"]["to"], to, "{line}");
        assert_eq!(
            line["seq"], line["event"]["seq"],
            "the header carries the seq: {line}"
        );
    }
    let (a, b) = (first["seq"].as_u64(), second["seq"].as_u64());
    assert!(
        matches!((a, b), (Some(a), Some(b)) if b > a),
        "{first} {second}"
    );
    until_fleet_shows(
        &nats,
        &[("alpha", "tmux:work:%1", "done"), ("beta", "b1", "idle")],
    );
    // Both machines' bucket values are the pane state `agent.get` answers.
    let got = alpha
        .client()
        .call_raw("agent.get", json!({"pane": "tmux:work:%1"}))
        .expect("agent.get");
    let view = fleet(&nats);
    let published = view["panes"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["machine"] == "alpha"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(published["since"], got["since"], "{published} vs {got}");
    assert_eq!(published["cause"], got["cause"], "{published} vs {got}");

    // A closed pane's key goes; the other machine's stay.
    beta.client()
        .call_raw("pane.close", json!({"pane": "b2"}))
        .expect("pane.close");
    until_fleet_shows(&nats, &[("beta", "b2", "-"), ("beta", "b1", "idle")]);
}

#[test]
fn a_vanished_server_reads_offline_and_a_stopped_one_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nats = Nats::start(dir.path());
    let mut alpha = publishing(dir.path(), &nats, "alpha");
    let mut beta = publishing(dir.path(), &nats, "beta");
    claude_pane(&alpha, "a1");
    claude_pane(&beta, "b1");
    until_fleet_shows(&nats, &[("alpha", "a1", "idle"), ("beta", "b1", "idle")]);
    // kill -9: no goodbye; the heartbeat ages out after its TTL.
    beta.kill9();
    let last = std::cell::RefCell::new(Value::Null);
    wait_until(
        "beta to read offline after its heartbeat TTL, alpha still online",
        || {
            let view = fleet(&nats);
            let ok = online(&view, "beta") == Some(false) && online(&view, "alpha") == Some(true);
            *last.borrow_mut() = view;
            ok
        },
        || last.borrow().to_string(),
    );
    // Its panes are still shown (marked offline), not dropped and not frozen as live.
    let view = fleet(&nats);
    let b1 = view["panes"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["pane"] == "b1"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(b1["online"], false, "{view}");
    // A clean stop withdraws the heartbeat.
    assert!(alpha.stop().success());
    wait_until(
        "alpha to read offline after a clean stop",
        || online(&fleet(&nats), "alpha") == Some(false),
        || fleet(&nats).to_string(),
    );
}

#[test]
fn after_a_nats_restart_the_bucket_converges_on_the_servers_states() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut nats = Nats::start(dir.path());
    let alpha = publishing(dir.path(), &nats, "alpha");
    claude_pane(&alpha, "a1");
    claude_pane(&alpha, "a2");
    until_fleet_shows(&nats, &[("alpha", "a1", "idle"), ("alpha", "a2", "idle")]);
    nats.kill();
    // While NATS is down the server keeps working locally.
    report(&alpha, "a1", 1, "working");
    alpha
        .client()
        .call_raw("pane.close", json!({"pane": "a2"}))
        .expect("pane.close");
    claude_pane(&alpha, "a3");
    let got = alpha
        .client()
        .call_raw("agent.get", json!({"pane": "a1"}))
        .expect("agent.get");
    assert_eq!(got["lifecycle"], "working");
    let status = alpha.command(&["status"]).output().expect("status");
    let text = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(text.contains("machine: alpha"), "{text}");
    nats.restart();
    // A board started after the fact gets the whole current picture from the bucket.
    let now = [
        ("alpha", "a1", "working"),
        ("alpha", "a2", "-"),
        ("alpha", "a3", "idle"),
    ];
    until_fleet_shows(&nats, &now);
    // A NATS server that comes back with nothing stored gets everything republished.
    nats.kill();
    nats.wipe();
    nats.restart();
    until_fleet_shows(&nats, &now);
}

#[test]
fn wait_across_the_fleet_returns_on_a_transition() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nats = Nats::start(dir.path());
    let alpha = publishing(dir.path(), &nats, "alpha");
    claude_pane(&alpha, "a1");
    until_fleet_shows(&nats, &[("alpha", "a1", "idle")]);
    let url = nats.url();
    let (mut waiter, mut out, mut err) = spawn(&[
        "wait",
        "--fleet",
        &url,
        "alpha/a1",
        "--until",
        "done",
        "--timeout",
        "60s",
    ]);
    let mut line = String::new();
    err.read_line(&mut line).expect("stderr");
    assert!(line.contains("waiting for alpha/a1"), "{line}");
    report(&alpha, "a1", 1, "working");
    report(&alpha, "a1", 2, "done");
    let state = json_line(&mut out);
    assert_eq!(
        (state["pane"].as_str(), state["lifecycle"].as_str()),
        (Some("a1"), Some("done"))
    );
    assert!(waiter.wait().expect("wait").success());
    // A pane nobody changes times out with exit 1.
    let timed_out = std::process::Command::new(LOOKOUT)
        .args([
            "wait",
            "--fleet",
            &url,
            "alpha/a1",
            "--until",
            "blocked",
            "--timeout",
            "300ms",
        ])
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .output()
        .expect("wait");
    assert_eq!(timed_out.status.code(), Some(1), "{timed_out:?}");
}

/// `lookout watch --fleet URL --notify` on another machine: a remote pane that becomes blocked is
/// notified here through this machine's own settings (an `exec` sink), named `machine/pane`.
#[test]
fn a_fleet_board_notifies_for_remote_panes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nats = Nats::start(dir.path());
    let alpha = publishing(dir.path(), &nats, "alpha");
    claude_pane(&alpha, "a1");
    until_fleet_shows(&nats, &[("alpha", "a1", "idle")]);
    // The board's machine: its own config (and state) directories.
    let here = dir.path().join("board");
    let out = here.join("notified.jsonl");
    std::fs::create_dir_all(here.join("config/lookout")).expect("config dir");
    std::fs::write(
        here.join("config/lookout/config.toml"),
        format!(
            "[[notify]]\nsink = \"exec\"\non = [\"blocked\"]\ncommand = [\"sh\", \"-c\", \"cat >> {}; echo >> {}\"]\n",
            out.display(),
            out.display()
        ),
    )
    .expect("settings");
    let config = here.join("config").to_string_lossy().into_owned();
    let state = here.join("state").to_string_lossy().into_owned();
    let url = nats.url();
    let board = crate::support::pty::Outer::start(
        &[LOOKOUT, "watch", "--fleet", &url, "--notify"],
        120,
        30,
        &[("XDG_CONFIG_HOME", &config), ("XDG_STATE_HOME", &state)],
    );
    board.wait_for_text("alpha");
    report(&alpha, "a1", 1, "blocked");
    let notified = || std::fs::read_to_string(&out).unwrap_or_default();
    wait_until(
        "the board's exec sink to be run for alpha/a1",
        || notified().contains("alpha/a1"),
        || format!("{}\n--- board ---\n{}", notified(), board.text()),
    );
    let line = notified();
    let first: Value = serde_json::from_str(line.lines().next().unwrap_or("")).expect("json");
    assert_eq!(first["state"]["lifecycle"], "blocked", "{line}");
}

/// Someone writes a value no board can read over a live pane's key: the publishing server
/// notices and puts the pane's state back, instead of the pane vanishing from every board
/// until it next changes.
#[test]
fn a_malformed_value_over_a_live_pane_is_put_back() {
    put_back_after_overwrite(false, Duration::ZERO);
}

/// The same after the publisher's watch lost its consumer (deleted on the NATS server, as a
/// restart or a limit can): the watch misses its heartbeats, makes its consumer anew and still
/// puts the pane back — it is not given up until NATS reconnects.
#[test]
fn a_watch_that_lost_its_consumer_still_puts_a_pane_back() {
    // A watch notices a lost consumer after two missed 5 s heartbeats: more than one wait.
    put_back_after_overwrite(true, Duration::from_secs(15));
}

/// One machine publishes an idle pane; its key is overwritten ([`overwrite`]) and the pane does
/// not change again, so only the publisher can bring it back: waits (the test deadline plus
/// `slack`) until every board shows it idle again.
fn put_back_after_overwrite(drop_watchers: bool, slack: Duration) {
    let dir = tempfile::tempdir().expect("tempdir");
    let nats = Nats::start(dir.path());
    let alpha = publishing(dir.path(), &nats, "alpha");
    claude_pane(&alpha, "w");
    until_fleet_shows(&nats, &[("alpha", "w", "idle")]);
    overwrite(&nats, "alpha", "w", drop_watchers);
    let end = std::time::Instant::now() + crate::support::deadline() + slack;
    let mut view = fleet(&nats);
    while fleet_lifecycle(&view, "alpha", "w") != "idle" {
        assert!(
            std::time::Instant::now() < end,
            "the pane never put back: {view}"
        );
        std::thread::sleep(Duration::from_millis(100));
        view = fleet(&nats);
    }
}

/// Writes a value no board can read over `machine`'s `pane` key — first deleting every consumer
/// of the panes bucket's stream (the publisher's watch among them) when `drop_watchers`.
fn overwrite(nats: &Nats, machine: &str, pane: &str, drop_watchers: bool) {
    let url = nats.url();
    let key = lookout::fleet::key::pane_key(machine, pane);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        use futures_util::StreamExt as _;
        let client = async_nats::connect(url).await.expect("connect");
        let js = async_nats::jetstream::new(client);
        if drop_watchers {
            let stream = js
                .get_stream(format!("KV_{}", lookout::fleet::PANES_BUCKET))
                .await
                .expect("the bucket's stream");
            let names: Vec<String> = stream
                .consumer_names()
                .filter_map(|n| async move { n.ok() })
                .collect()
                .await;
            assert!(!names.is_empty(), "no watch on the bucket");
            for name in names {
                stream
                    .delete_consumer(&name)
                    .await
                    .expect("delete consumer");
            }
        }
        let panes = js
            .get_key_value(lookout::fleet::PANES_BUCKET)
            .await
            .expect("bucket");
        panes.put(key, "{not a pane".into()).await.expect("put");
    });
}
