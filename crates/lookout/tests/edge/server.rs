//! Real-part tests of `lookout serve` (see docs/protocol.md): the real binary on a real socket with a
//! real SQLite file in a temp dir per test. Every wire method, every error code, bad input that
//! leaves the connection usable and the state unchanged, subscribe-then-reconcile under load,
//! slow subscribers, permissions, 100 concurrent clients, hooks from a stand-in agent, the mirror.

use crate::support::server::*;
use crate::support::{LOOKOUT, wait_until};
use lookout::protocol::parse_line;
use lookout::server::Client;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::BufRead as _;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

fn served(tick_ms: u64) -> (tempfile::TempDir, Served) {
    let dir = tempfile::tempdir().expect("tempdir");
    let served = Served::start_in(dir.path(), tick_ms);
    (dir, served)
}

/// A program started in a pane is identified at once, not a periodic tick later (a board's first
/// frame after a server restart named no kinds): with a one-minute tick, the kind shows within
/// the wait.
#[test]
fn a_started_program_is_identified_without_waiting_for_the_tick() {
    let (_dir, s) = served(60_000);
    let mut c = s.client();
    open_with(&mut c, "p", &["claude"]);
    let last = std::cell::RefCell::new(Value::Null);
    wait_until(
        "the pane's kind",
        || {
            let got = c
                .call_raw("agent.get", json!({"pane": "p"}))
                .unwrap_or_default();
            let known = got["kind"] == "claude";
            *last.borrow_mut() = got;
            known
        },
        || last.borrow().to_string(),
    );
}

/// The method table is the protocol: every feature `hello` announces is documented, every method
/// in the table parses its example and a real server answers it as a method it knows (never
/// `unknown_method`, never a routing or encoding failure), and an unknown `report.*` is an
/// unknown method, as the docs say.
#[test]
fn every_feature_of_the_table_is_documented_parsed_and_answered() {
    use lookout::protocol::{EXAMPLES, FEATURES};
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/protocol.md"
    ))
    .expect("docs/protocol.md");
    let (_dir, s) = served(50);
    let hello = s.client().call_raw("hello", json!({})).expect("hello");
    let announced: Vec<&str> = hello["features"]
        .as_array()
        .expect("features")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(announced, FEATURES, "hello announces the table");
    for feature in FEATURES {
        assert!(
            docs.contains(&format!("`{feature}`")),
            "docs/protocol.md does not document `{feature}`"
        );
    }
    let mut setup = s.client();
    setup
        .call_raw("pane.open", json!({"pane": "q", "rows": 24, "cols": 80}))
        .expect("open");
    let mut raw = Raw::connect(&s.socket);
    let unknown = raw.ask(r#"{"id":1,"method":"report.nope","params":{"pane":"q"}}"#);
    assert_eq!(unknown["error"]["code"], "unknown_method", "{unknown}");
    // (`server.stop`, the table's last method, ends the server: its answer must still arrive)
    assert_eq!(EXAMPLES.last().map(|e| e.0), Some("server.stop"));
    for (method, params) in EXAMPLES {
        // each on a connection of its own: `subscribe` and `notify.listen` turn theirs into streams
        let mut raw = Raw::connect(&s.socket);
        let line = format!(r#"{{"id":7,"method":"{method}","params":{params}}}"#);
        raw.send(format!("{line}\n").as_bytes());
        let mut text = String::new();
        if let Err(e) = raw.reader.read_line(&mut text) {
            panic!("{method}: no answer: {e}");
        }
        let answer: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{method}: {e}: {text}"));
        assert_eq!(answer["id"], 7, "{method}: {answer}");
        let code = answer["error"]["code"].as_str().unwrap_or("ok");
        assert!(
            !["unknown_method", "internal", "bad_request"].contains(&code),
            "{method} answered {answer}"
        );
    }
}

#[test]
fn every_method_answers() {
    let (_dir, s) = served(50);
    let mut c = s.client();
    let hello = c.call_raw("hello", json!({})).expect("hello");
    assert_eq!(hello["protocol"], 1);
    for f in [
        "report.state",
        "report.turn_end",
        "subscribe",
        "agent.wait",
        "pane.feed",
    ] {
        assert!(
            hello["features"]
                .as_array()
                .expect("features")
                .contains(&json!(f)),
            "feature {f}"
        );
    }
    assert_eq!(
        c.call_raw("pane.open", json!({"pane": "p", "rows": 24, "cols": 80}))
            .expect("open"),
        json!({"pane": "p"})
    );
    assert_eq!(
        code(&c.call_raw("pane.open", json!({"pane": "p", "rows": 24, "cols": 80}))),
        "pane_exists"
    );
    let data = base64_encode(b"hello \x1b[1mworld\x1b[0m\r\n$ ");
    assert_eq!(
        c.call_raw("pane.feed", json!({"pane": "p", "data": data}))
            .expect("feed"),
        json!({})
    );
    assert_eq!(
        c.call_raw("pane.resize", json!({"pane": "p", "rows": 30, "cols": 100}))
            .expect("resize"),
        json!({})
    );
    let g = c.call_raw(
        "pane.process",
        json!({"pane": "p", "event": "started", "pid": 1, "argv": ["/usr/bin/claude", "--x"]}),
    );
    assert_eq!(g.expect("process")["generation"], 1);
    assert_eq!(
        c.call_raw(
            "report.session",
            json!({"pane": "p", "source": "hook:claude", "session": "s"})
        )
        .expect("session"),
        json!({})
    );
    let r = c.call_raw(
        "report.state",
        json!({"pane": "p", "source": "hook:claude", "seq": 1, "state": "working"}),
    );
    assert_eq!(r.expect("state"), json!({"applied": true, "changed": true}));
    let got = c.call_raw("agent.get", json!({"pane": "p"})).expect("get");
    assert_eq!(
        (
            got["lifecycle"].as_str(),
            got["kind"].as_str(),
            got["hooked"].as_bool()
        ),
        (Some("working"), Some("claude"), Some(true))
    );
    assert_eq!(got["cause"], "hook:hook:claude");
    let status =
        json!({"v": 1, "agent": "claude", "blocking": 2, "agents": 3, "gates": ["Merge #30"]});
    let r = c.call_raw(
        "report.turn_end",
        json!({"pane": "p", "source": "hook:claude", "seq": 2, "status": status}),
    );
    assert_eq!(
        r.expect("turn_end"),
        json!({"applied": true, "changed": true})
    );
    let list = c.call_raw("pane.list", json!({})).expect("list");
    assert_eq!(list["panes"][0]["lifecycle"], "blocked");
    assert_eq!(list["panes"][0]["labels"], json!(["gate ×2", "3 agents"]));
    assert!(list["seq"].as_u64().expect("seq") >= 3);
    let x = c
        .call_raw("agent.explain", json!({"pane": "p"}))
        .expect("explain");
    assert_eq!(
        x["policy"], "evidence",
        "the bundled claude manifest's policy"
    );
    assert!(
        x["regions"].is_object() && x["rules"].as_array().is_some_and(|r| !r.is_empty()),
        "{x}"
    );
    let r = c.call_raw(
        "report.state",
        json!({"pane": "p", "source": "hook:claude", "seq": 3, "state": "done"}),
    );
    assert_eq!(r.expect("done"), json!({"applied": true, "changed": true}));
    assert_eq!(
        c.call_raw("agent.get", json!({"pane": "p"})).expect("get")["unread"],
        true
    );
    assert_eq!(
        c.call_raw("pane.seen", json!({"pane": "p"})).expect("seen"),
        json!({})
    );
    wait_until(
        "unread to clear",
        || c.call_raw("agent.get", json!({"pane": "p"})).expect("get")["unread"] == false,
        String::new,
    );
    let g = c
        .call_raw("pane.process", json!({"pane": "p", "event": "exited"}))
        .expect("exited");
    assert_eq!(g["generation"], 1);
    assert_eq!(
        c.call_raw("pane.close", json!({"pane": "p"}))
            .expect("close"),
        json!({})
    );
    assert_eq!(
        code(&c.call_raw("agent.get", json!({"pane": "p"}))),
        "unknown_pane"
    );
}

#[test]
fn every_error_code_and_the_connection_stays_usable() {
    let (_dir, s) = served(50);
    let mut c = s.client();
    open_with(&mut c, "p", &["claude"]);
    open_with(&mut c, "sh", &["bash"]);
    announce(&mut c, "p", "hook:claude");
    let before = c.call_raw("pane.list", json!({})).expect("list");
    let mut raw = s.raw();
    let bad: &[(&str, &str)] = &[
        ("{not json", "bad_request"),
        ("[1,2,3]", "bad_request"),
        (
            r#"{"id":1,"method":"pane.explode","params":{}}"#,
            "unknown_method",
        ),
        (
            r#"{"id":2,"method":"pane.open","params":{"pane":"q","rows":"many","cols":80}}"#,
            "bad_request",
        ),
        (
            r#"{"id":3,"method":"pane.open","params":{"pane":"q","rows":0,"cols":80}}"#,
            "bad_params",
        ),
        (
            r#"{"id":4,"method":"pane.feed","params":{"pane":"p","data":"***"}}"#,
            "bad_request",
        ),
        (
            r#"{"id":5,"method":"agent.get","params":{"pane":"nope"}}"#,
            "unknown_pane",
        ),
        (
            r#"{"id":6,"method":"pane.open","params":{"pane":"p","rows":2,"cols":2}}"#,
            "pane_exists",
        ),
        (
            r#"{"id":7,"method":"report.state","params":{"pane":"nope","source":"hook:claude","seq":1,"state":"done"}}"#,
            "unknown_pane",
        ),
        (
            r#"{"id":8,"method":"report.state","params":{"pane":"p","source":"hook:claude","seq":1,"state":"idle"}}"#,
            "bad_params",
        ),
        (
            r#"{"id":9,"method":"report.state","params":{"pane":"nope","source":"hook:claude","seq":"x"}}"#,
            "unknown_pane",
        ),
        (
            r#"{"id":10,"method":"report.state","params":{"pane":"p","source":"hook:codex","seq":1,"state":"done"}}"#,
            "no_authority",
        ),
        (
            r#"{"id":11,"method":"report.state","params":{"pane":"p","source":"other:claude","seq":1,"state":"done"}}"#,
            "not_announced",
        ),
        (
            r#"{"id":12,"method":"report.turn_end","params":{"pane":"p","source":"hook:claude","seq":1,"status":{"v":2}}}"#,
            "bad_params",
        ),
        (
            r#"{"id":13,"method":"report.state","params":{"pane":"sh","source":"hook:claude","seq":1,"state":"working"}}"#,
            "no_authority",
        ),
        (
            r#"{"id":14,"method":"agent.wait","params":{"pane":"p","until":["done"],"timeout_ms":50}}"#,
            "timeout",
        ),
    ];
    for (line, want) in bad {
        let answer = raw.ask(line);
        assert_eq!(answer["error"]["code"], *want, "{line} → {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{answer}"
        );
    }
    // A 2 MiB line: too_large, discarded to its newline, and the next request still works.
    let mut big = br#"{"id":99,"method":"pane.feed","params":{"pane":"p","data":""#.to_vec();
    big.extend(std::iter::repeat_n(b'A', 2 << 20));
    big.extend_from_slice(b"\"}}\n");
    raw.send(&big);
    assert_eq!(raw.line()["error"]["code"], "too_large");
    assert_eq!(
        raw.ask(r#"{"id":100,"method":"hello"}"#)["result"]["protocol"],
        1
    );
    // Stale sequence numbers, after one accepted report.
    assert_eq!(raw.ask(r#"{"id":15,"method":"report.state","params":{"pane":"p","source":"hook:claude","seq":5,"state":"working"}}"#)["result"]["applied"], true);
    let stale = raw.ask(r#"{"id":16,"method":"report.state","params":{"pane":"p","source":"hook:claude","seq":5,"state":"blocked"}}"#);
    assert_eq!(stale["error"]["code"], "stale_seq");
    // Refusals changed nothing: only the one accepted report moved `p`.
    let after = c.call_raw("pane.list", json!({})).expect("list");
    assert_eq!(
        after["panes"][1], before["panes"][1],
        "the shell pane is untouched"
    );
    assert_eq!(after["panes"][0]["lifecycle"], "working");
    assert_eq!(
        after["seq"].as_u64(),
        before["seq"].as_u64().map(|s| s + 1),
        "exactly one event: idle → working"
    );
}

/// `agent.wait` takes the pane as it is (a state it is in answers at once; `done` only while
/// unread), and with `after` only a transition numbered after that event counts.
#[test]
fn wait_takes_the_state_as_it_is_or_a_transition_after_an_event() {
    let (_dir, s) = served(50);
    let mut c = s.client();
    open_with(&mut c, "p", &["claude"]);
    announce(&mut c, "p", "hook:claude");
    let report = |c: &mut Client, seq: u64, state: &str| {
        c.call_raw(
            "report.state",
            json!({"pane": "p", "source": "hook:claude", "seq": seq, "state": state}),
        )
        .expect(state)
    };
    report(&mut c, 1, "working");
    let wait = |c: &mut Client, until: &[&str], after: Option<u64>, ms: u64| {
        c.call_raw(
            "agent.wait",
            json!({"pane": "p", "until": until, "after": after, "timeout_ms": ms}),
        )
    };
    let now = wait(&mut c, &["working", "done"], None, 10_000).expect("at once");
    assert_eq!(
        now["lifecycle"], "working",
        "the state it is in answers at once"
    );
    let seq = c.call_raw("pane.list", json!({})).expect("list")["seq"]
        .as_u64()
        .expect("seq");
    let err = wait(&mut c, &["working"], Some(seq), 200).expect_err("no transition after seq");
    assert!(err.to_string().contains("did not become"), "{err}");
    let out = s
        .command(&["wait", "p", "--until", "blocked", "--timeout", "10s"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("lookout wait");
    report(&mut c, 2, "blocked");
    let waited = out.wait_with_output().expect("wait output");
    assert!(
        waited.status.success(),
        "lookout wait exit {:?}",
        waited.status
    );
    assert!(String::from_utf8_lossy(&waited.stdout).contains("\"blocked\""));
    report(&mut c, 3, "done");
    let after = s
        .command(&["wait", "p", "--until", "done", "--after", &seq.to_string()])
        .args(["--timeout", "10s"])
        .output()
        .expect("run");
    assert!(after.status.success(), "a done after SEQ already happened");
    let done = s
        .command(&["wait", "p", "--until", "done", "--timeout", "10s"])
        .output()
        .expect("run");
    assert!(done.status.success(), "done and unread answers at once");
    assert!(String::from_utf8_lossy(&done.stdout).contains("\"done\""));
    c.call_raw("pane.seen", json!({"pane": "p"})).expect("seen");
    wait_until(
        "unread cleared",
        || {
            c.call_raw("agent.get", json!({"pane": "p"}))
                .is_ok_and(|p| p["unread"] == false)
        },
        || "still unread".into(),
    );
    let seen = s
        .command(&["wait", "p", "--until", "done", "--timeout", "100ms"])
        .output()
        .expect("run");
    assert_eq!(
        seen.status.code(),
        Some(1),
        "a done turn already seen is no done"
    );
}

/// Applies events to a snapshot, as a subscriber reconciles.
fn apply(panes: &mut BTreeMap<String, Value>, event: &Value) {
    let pane = event["pane"].as_str().expect("pane").to_owned();
    let Some(state) = panes.get_mut(&pane) else {
        return;
    };
    match event["type"].as_str() {
        Some("lifecycle") => {
            state["lifecycle"] = event["to"].clone();
            state["labels"] = event["labels"].clone();
        }
        Some("attention") => state[event["flag"].as_str().expect("flag")] = event["raised"].clone(),
        Some("labels") => state["labels"] = event["labels"].clone(),
        other => panic!("unknown event type {other:?}"),
    }
}

fn essence(panes: &BTreeMap<String, Value>) -> Vec<(String, Value, Value, Value, Value)> {
    panes
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v["lifecycle"].clone(),
                v["input_required"].clone(),
                v["unread"].clone(),
                v["labels"].clone(),
            )
        })
        .collect()
}

#[test]
fn subscribe_then_reconcile_under_load() {
    let (_dir, s) = served(20);
    let mut c = s.client();
    let panes: Vec<String> = (0..8).map(|i| format!("p{i}")).collect();
    for p in &panes {
        open_with(&mut c, p, &["claude"]);
        announce(&mut c, p, "hook:claude");
    }
    let socket = s.socket.clone();
    let writer_panes = panes.clone();
    let writer = std::thread::spawn(move || {
        let mut w = Client::connect(&socket).expect("connect");
        let states = ["working", "blocked", "done", "working"];
        for round in 0..30u64 {
            for (i, p) in writer_panes.iter().enumerate() {
                let state = states[(round as usize + i) % states.len()];
                let gate = json!({"v": 1, "blocking": round % 3, "agents": i % 2});
                let (method, params) = if round % 5 == 4 {
                    (
                        "report.turn_end",
                        json!({"pane": p, "source": "hook:claude", "seq": round + 1, "status": gate}),
                    )
                } else {
                    (
                        "report.state",
                        json!({"pane": p, "source": "hook:claude", "seq": round + 1, "state": state}),
                    )
                };
                w.call_raw(method, params).expect("report");
            }
        }
    });
    let mut subscribers = Vec::new();
    let mut rng = 0x2545_f491_u64;
    for _ in 0..6 {
        rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        std::thread::sleep(Duration::from_millis(20 + (rng >> 33) % 80)); // join at random moments
        let (seq, snapshot, events) = s.client().subscribe().expect("subscribe");
        let handle = std::thread::spawn(move || {
            let mut view: BTreeMap<String, Value> = snapshot
                .iter()
                .map(|p| (p.pane.clone(), serde_json::to_value(p).expect("state")))
                .collect();
            let mut seen = Vec::new();
            for (next, event) in (seq + 1..).zip(events) {
                let event = event.expect("event");
                let got = event["seq"].as_u64().expect("seq");
                assert_eq!(got, next, "gap or duplicate after snapshot seq {seq}");
                apply(&mut view, &event);
                seen.push(got);
                if event["pane"] == "stop" {
                    break;
                }
            }
            (view, seen.len())
        });
        subscribers.push(handle);
    }
    writer.join().expect("writer");
    // A marker event everybody will see last: open a pane and move it.
    open_with(&mut c, "stop", &["claude"]);
    announce(&mut c, "stop", "hook:claude");
    c.call_raw(
        "report.state",
        json!({"pane": "stop", "source": "hook:claude", "seq": 1, "state": "working"}),
    )
    .expect("marker");
    let truth: BTreeMap<String, Value> = c.call_raw("pane.list", json!({})).expect("list")["panes"]
        .as_array()
        .expect("panes")
        .iter()
        .filter(|p| p["pane"] != "stop")
        .map(|p| (p["pane"].as_str().expect("pane").to_owned(), p.clone()))
        .collect();
    for (i, sub) in subscribers.into_iter().enumerate() {
        let (mut view, n) = sub.join().expect("subscriber");
        view.remove("stop");
        assert_eq!(
            essence(&view),
            essence(&truth),
            "subscriber {i} ({n} events) disagrees with pane.list"
        );
    }
}

#[test]
fn a_slow_subscriber_is_dropped_with_a_reason_and_the_tick_goes_on() {
    let (_dir, s) = served(20);
    let mut c = s.client();
    let mut slow = s.raw();
    let snapshot = slow.ask(r#"{"id":1,"method":"subscribe","params":{}}"#);
    assert!(snapshot["result"]["seq"].is_u64());
    let panes: Vec<String> = (0..50).map(|i| format!("p{i}")).collect();
    for p in &panes {
        open_with(&mut c, p, &["claude"]);
        announce(&mut c, p, "hook:claude");
    }
    // Many events, never read by `slow`; pipelined so the writer is not bound by the tick.
    let mut w = s.raw();
    let mut sent = 0;
    for round in 0..60u64 {
        for p in &panes {
            let state = if round % 2 == 0 { "working" } else { "blocked" };
            let line = json!({"id": sent, "method": "report.state", "params": {"pane": p, "source": "hook:claude", "seq": round + 1, "state": state}});
            w.send(format!("{line}\n").as_bytes());
            sent += 1;
        }
        for _ in 0..panes.len() {
            assert!(w.line()["result"]["applied"] == true);
        }
    }
    // The tick never waited: a fresh report is still answered promptly.
    let t = Instant::now();
    c.call_raw(
        "report.state",
        json!({"pane": "p0", "source": "hook:claude", "seq": 1000, "state": "done"}),
    )
    .expect("after load");
    println!(
        "report answered {:?} after the slow subscriber overflowed",
        t.elapsed()
    );
    // Now read: the stream ends with too_slow.
    let mut last = Value::Null;
    let mut lines = 0;
    loop {
        let mut line = String::new();
        match std::io::BufRead::read_line(&mut slow.reader, &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                lines += 1;
                last = serde_json::from_str(&line).expect("json");
            }
        }
    }
    assert_eq!(
        last["error"]["code"], "too_slow",
        "after {lines} lines the last was {last}"
    );
}

#[test]
fn socket_is_private_and_a_live_socket_is_not_stolen() {
    let (dir, mut s) = served(50);
    let mode =
        |p: &std::path::Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode(&s.socket), 0o600, "socket mode");
    assert_eq!(
        mode(s.socket.parent().expect("dir")),
        0o700,
        "socket dir mode"
    );
    // A second server on the same socket is refused with a clear message.
    let second = std::process::Command::new(LOOKOUT)
        .args(["serve", "--no-db", "--socket"])
        .arg(&s.socket)
        .output()
        .expect("second serve");
    assert!(!second.status.success());
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("already running"),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    if nix::unistd::getuid().is_root() {
        // Another uid cannot connect: the dir (0700) and socket (0600) keep it out.
        use std::os::unix::process::CommandExt;
        let other = std::process::Command::new(LOOKOUT)
            .args(["status", "--socket"])
            .arg(&s.socket)
            .uid(65534)
            .gid(65534)
            .output()
            .expect("run as nobody");
        assert!(!other.status.success(), "uid 65534 reached the socket");
        let err = String::from_utf8_lossy(&other.stderr);
        assert!(err.contains("ermission denied"), "{err}");
    } else {
        println!("skipped the other-uid check: not root, cannot switch uid");
    }
    // SIGTERM: exit 0 and the socket is gone; a stale socket file is then replaced on start.
    let status = s.stop();
    assert!(status.success(), "SIGTERM exits 0, got {status:?}");
    assert!(!s.socket.exists(), "socket removed on shutdown");
    let stale = std::os::unix::net::UnixListener::bind(&s.socket).expect("stale socket");
    drop(stale); // file stays, nobody listens
    assert!(s.socket.exists());
    let again = Served::start_in(dir.path(), 50);
    assert_eq!(
        again.client().call_raw("hello", json!({})).expect("hello")["protocol"],
        1
    );
}

#[test]
fn hundred_clients_ten_thousand_reports() {
    let (_dir, s) = served(20);
    let clients = 100;
    let per = 100u64;
    let mut c = s.client();
    for i in 0..clients {
        open_with(&mut c, &format!("p{i}"), &["claude"]);
        announce(&mut c, &format!("p{i}"), "hook:claude");
    }
    let start = Instant::now();
    let handles: Vec<_> = (0..clients)
        .map(|i| {
            let socket = s.socket.clone();
            std::thread::spawn(move || {
                let mut raw = Raw::connect(&socket);
                let pane = format!("p{i}");
                // Pipelined, as a busy pane source would; every one must be answered.
                for seq in 1..=per {
                    let state = ["working", "blocked", "working", "done"][(seq % 3) as usize];
                    let line = json!({"id": seq, "method": "report.state", "params": {"pane": pane, "source": "hook:claude", "seq": seq, "state": state}});
                    raw.send(format!("{line}\n").as_bytes());
                }
                let mut answered = 0;
                for _ in 1..=per {
                    let r = raw.line();
                    assert_eq!(r["result"]["applied"], true, "{r}");
                    answered += 1;
                }
                answered
            })
        })
        .collect();
    let total: u64 = handles.into_iter().map(|h| h.join().expect("client")).sum();
    let elapsed = start.elapsed();
    assert_eq!(total, 10_000);
    println!(
        "10000 reports from 100 clients answered in {elapsed:?}: {:.0} reports/s (tick 20 ms)",
        10_000.0 / elapsed.as_secs_f64()
    );
    // The tick is still on time: a fresh wait for a transition resolves within a few ticks.
    let t = Instant::now();
    c.call_raw(
        "report.state",
        json!({"pane": "p0", "source": "hook:claude", "seq": 10_000, "state": "blocked"}),
    )
    .expect("after load");
    println!("a report after the load was answered in {:?}", t.elapsed());
}

/// A stand-in agent named `claude` whose hooks call `lookout report`, as the real one's would.
#[test]
fn hooks_from_a_stand_in_agent_land_and_a_shell_is_refused() {
    let (dir, s) = served(50);
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let script = bin.join("claude");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\n# waits until lookout knows it, then runs its hooks: prompt, permission, answered, stop\n\
             while [ ! -e \"$GO\" ]; do sleep 0.01; done\n\
             {l} report --agent claude state working || exit 11\n\
             {l} report --agent claude state blocked || exit 12\n\
             {l} report --agent claude state working || exit 13\n\
             {l} report --agent claude turn-end || exit 14\n",
            l = LOOKOUT
        ),
    )
    .expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mut c = s.client();
    let (seq0, _, events) = s.client().subscribe().expect("subscribe");
    c.call_raw(
        "pane.open",
        json!({"pane": "agent", "rows": 24, "cols": 80}),
    )
    .expect("open");
    let go = dir.path().join("go");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Found on PATH by its name, as a user's shell would find the real one.
    let mut agent = std::process::Command::new("claude");
    agent
        .env("PATH", &path)
        .env("GO", &go)
        .env("LOOKOUT_PANE_ID", "agent")
        .env("LOOKOUT_SOCKET", &s.socket)
        .env("XDG_STATE_HOME", dir.path().join("state"));
    let mut child = agent.spawn().expect("start the stand-in agent");
    let argv = ["claude"];
    c.call_raw(
        "pane.process",
        json!({"pane": "agent", "event": "started", "pid": child.id(), "argv": argv}),
    )
    .expect("process");
    std::fs::write(&go, b"").expect("go");
    let status = child.wait().expect("agent");
    assert!(status.success(), "a hook failed: {status:?}");
    let mut path_taken = Vec::new();
    for event in events {
        let event = event.expect("event");
        assert!(event["seq"].as_u64().expect("seq") > seq0);
        if event["type"] == "lifecycle" && event["pane"] == "agent" {
            path_taken.push(event["to"].as_str().expect("to").to_owned());
            assert_eq!(event["cause"], "hook:cli:claude");
        }
        if path_taken.len() == 4 {
            break;
        }
    }
    assert_eq!(path_taken, ["working", "blocked", "working", "done"]);
    // The same hook from a plain shell pane is refused, with a reason: exit 0 (a hook never holds
    // up its agent), or 1 with --strict.
    c.call_raw(
        "pane.open",
        json!({"pane": "shell", "rows": 24, "cols": 80}),
    )
    .expect("open");
    c.call_raw(
        "pane.process",
        json!({"pane": "shell", "event": "started", "pid": 1, "argv": ["bash"]}),
    )
    .expect("process");
    let report = |strict: bool| {
        let mut args = vec!["report", "--pane", "shell", "--agent", "claude"];
        if strict {
            args.push("--strict");
        }
        args.extend(["state", "working"]);
        s.command(&args).output().expect("report")
    };
    assert_eq!(report(false).status.code(), Some(0));
    let out = report(true);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no_authority"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(lifecycle(&mut c, "shell"), "idle");
}

#[test]
fn mirror_file_is_ingested_when_the_socket_was_down() {
    let (dir, s) = served(50);
    let mut c = s.client();
    open_with(&mut c, "p", &["claude"]);
    // As after `lookout stop`: the report must not start a server of its own on that socket.
    std::fs::write(dir.path().join("nobody-here.sock.stopped"), "").expect("stop marker");
    let out = std::process::Command::new(LOOKOUT)
        .args(["report", "--pane", "p", "--agent", "claude", "--socket"])
        .arg(dir.path().join("nobody-here.sock"))
        .arg("--mirror-dir")
        .arg(&s.mirror)
        .args(["turn-end", "--blocking", "1", "--gate", "Merge #30"])
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .output()
        .expect("report");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_until(
        "the mirrored turn-end to land",
        || lifecycle(&mut c, "p") == "blocked",
        || lifecycle(&mut s.client(), "p"),
    );
    assert_eq!(
        c.call_raw("agent.get", json!({"pane": "p"})).expect("get")["labels"],
        json!(["gate ×1"])
    );
    wait_until(
        "the mirror file to be removed",
        || {
            std::fs::read_dir(&s.mirror)
                .map(|d| d.count() == 0)
                .unwrap_or(true)
        },
        String::new,
    );
    // A bad file is moved aside, and the server keeps serving.
    std::fs::write(s.mirror.join("junk.json"), b"\xff not json").expect("junk");
    wait_until(
        "the bad file to be moved aside",
        || s.mirror.join("junk.json.bad").exists(),
        String::new,
    );
    assert_eq!(
        c.call_raw("hello", json!({})).expect("hello")["protocol"],
        1
    );
}

#[test]
fn status_and_events_clis() {
    let (_dir, s) = served(50);
    let mut c = s.client();
    open_with(&mut c, "alpha", &["claude"]);
    let table = s.command(&["status"]).output().expect("status");
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.status.success() && text.contains("alpha") && text.contains("idle"),
        "{text}"
    );
    let json_out = s
        .command(&["status", "--json"])
        .output()
        .expect("status --json");
    let v: Value = serde_json::from_slice(&json_out.stdout).expect("json");
    assert_eq!(v["panes"][0]["pane"], "alpha");
    let mut events = s
        .command(&["events"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("events");
    let stdout = events.stdout.take().expect("stdout");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stdout));
    let first: Value =
        serde_json::from_str(&lines.next().expect("line").expect("read")).expect("json");
    assert_eq!(first["panes"][0]["pane"], "alpha");
    announce(&mut c, "alpha", "hook:claude");
    c.call_raw(
        "report.state",
        json!({"pane": "alpha", "source": "hook:claude", "seq": 1, "state": "working"}),
    )
    .expect("working");
    let second: Value =
        serde_json::from_str(&lines.next().expect("line").expect("read")).expect("json");
    assert_eq!(second["event"]["to"], "working");
    assert_eq!(
        second["event"]["seq"],
        first["seq"].as_u64().expect("seq") + 1
    );
    let _ = events.kill();
    let _ = events.wait();
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The wire parser never panics, whatever the bytes.
    #[test]
    fn parser_takes_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse_line(&bytes);
    }

    /// Near-valid requests (right shape, arbitrary values) never panic either.
    #[test]
    fn parser_takes_any_params(method in "(hello|pane\\.[a-z]{2,7}|report\\.[a-z_]{4,9}|agent\\.[a-z]{3,7}|subscribe)",
                               pane in ".{0,8}", n in any::<i64>(), s in ".{0,8}") {
        let line = json!({"id": n, "method": method, "params": {"pane": pane, "rows": n, "cols": n, "seq": n,
            "state": s, "source": s, "data": s, "until": [s], "event": s, "status": {"v": n}}});
        let _ = parse_line(line.to_string().as_bytes());
    }
}

/// Arbitrary lines to a live server: each answered, none changes anything, the connection lives.
#[test]
fn arbitrary_lines_to_a_live_server_change_nothing() {
    let (_dir, s) = served(20);
    let mut c = s.client();
    open_with(&mut c, "p", &["claude"]);
    wait_until(
        "the process start to apply",
        || c.call_raw("agent.get", json!({"pane": "p"})).expect("get")["generation"] == 1,
        String::new,
    );
    let before = c.call_raw("pane.list", json!({})).expect("list");
    let raw = std::cell::RefCell::new(s.raw());
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 200,
        ..ProptestConfig::default()
    });
    let strategy = proptest::collection::vec(
        any::<u8>().prop_filter("no newline", |b| *b != b'\n'),
        1..300,
    )
    .prop_filter("not blank", |v| !v.iter().all(u8::is_ascii_whitespace));
    runner
        .run(&strategy, |mut line| {
            line.push(b'\n');
            let mut raw = raw.borrow_mut();
            raw.send(&line);
            let answer = raw.line();
            prop_assert!(answer["error"]["code"].is_string(), "{}", answer);
            Ok(())
        })
        .expect("every garbage line answered with an error");
    let after = c.call_raw("pane.list", json!({})).expect("list");
    assert_eq!(before, after);
}

#[test]
fn an_agent_newer_than_its_recordings_is_flagged_stale_with_its_probed_version() {
    let dir = tempfile::tempdir().expect("tempdir");
    let manifests = dir.path().join("config/lookout/manifests");
    std::fs::create_dir_all(&manifests).expect("mkdir");
    std::fs::write(
        manifests.join("fakeagent.toml"),
        "kind = \"fakeagent\"\nrecorded = [\"1.0.0\"]\n[identify]\nprocess = [\"fakeagent\"]\n\
         [[screen]]\nid = \"prompt\"\nstate = \"idle\"\nregex = ['^> $']\n",
    )
    .expect("manifest");
    // the agent's own --version answers a release newer than the recorded one
    let agent = dir.path().join("fakeagent");
    std::fs::write(&agent, "#!/bin/sh\necho \"fakeagent version 1.2.0\"\n").expect("agent");
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let s = Served::start_in(dir.path(), 50);
    let mut c = s.client();
    c.call_raw("pane.open", json!({"pane": "p", "rows": 24, "cols": 80}))
        .expect("open");
    let argv = [agent.display().to_string()];
    c.call_raw(
        "pane.process",
        json!({"pane": "p", "event": "started", "argv": argv}),
    )
    .expect("process");
    let last = std::cell::RefCell::new(Value::Null);
    wait_until(
        "the probed version and rules_stale on the pane",
        || {
            let got = c.call_raw("agent.get", json!({"pane": "p"})).expect("get");
            let stale = got["rules_stale"].as_str().is_some();
            *last.borrow_mut() = got;
            stale
        },
        || last.borrow().to_string(),
    );
    let last = last.into_inner();
    assert_eq!(last["version"], "1.2.0");
    assert_eq!(last["lifecycle"], "idle", "drift never makes a state");
    let stale = last["rules_stale"].as_str().unwrap_or_default();
    assert!(stale.contains("fakeagent@1.2.0"), "{stale}");
}
