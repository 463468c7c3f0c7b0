//! The web board (`lookout serve --http`) end to end, as a browser uses it: a real server with
//! its board on a loopback port, a fake agent in a real PTY under `lookout run`, and plain
//! HTTP/1.0 over TCP (a few lines of std, so the test reads exactly what goes on the wire).
//! The token guards every request; the event stream shows a pane go working → blocked with its
//! dialog; an option sent from the board reaches the agent as that key; a click on a dialog that
//! has changed since is refused and nothing is typed.

use crate::support::pty::Outer;
use crate::support::server::Served;
use crate::support::{LOOKOUT, deadline, wait_until};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

const FAKE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/edge/support/fake_agent.py"
);

/// A server with its board on a free loopback port, and the board's address and tokens.
struct Board {
    served: Served,
    addr: String,
    token: String,
    view_token: String,
}

fn board(dir: &Path) -> Board {
    board_with(dir, &[])
}

fn board_with(dir: &Path, extra: &[&str]) -> Board {
    let args: Vec<&str> = ["--http", "127.0.0.1:0"]
        .iter()
        .chain(extra)
        .copied()
        .collect();
    let served = Served::start_with(dir, 100, &args);
    let file = served.socket.with_file_name("web.addr");
    wait_until(
        "the board's address file",
        || std::fs::read_to_string(&file).is_ok_and(|t| t.ends_with('\n')),
        || file.display().to_string(),
    );
    let read = |p: &str| {
        std::fs::read_to_string(dir.join("config/lookout").join(p))
            .expect("token")
            .trim()
            .to_owned()
    };
    Board {
        addr: std::fs::read_to_string(&file)
            .expect("addr")
            .trim()
            .trim_start_matches("http://")
            .to_owned(),
        token: read("web-token"),
        view_token: read("web-token-view"),
        served,
    }
}

/// One HTTP/1.1 exchange on a connection of its own: the status and the body (read to its
/// `Content-Length`, else to the end).
fn http(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(deadline())).expect("timeout");
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    (&stream).write_all(request.as_bytes()).expect("write");
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).expect("status line");
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut length = None;
    loop {
        line.clear();
        reader.read_line(&mut line).expect("header");
        if line.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse::<usize>().ok();
        }
    }
    let mut body = Vec::new();
    match length {
        Some(n) => {
            body.resize(n, 0);
            reader.read_exact(&mut body).expect("body");
        }
        None => {
            reader.read_to_end(&mut body).expect("body");
        }
    }
    (status, String::from_utf8_lossy(&body).into_owned())
}

impl Board {
    fn get(&self, path: &str) -> (u16, Value) {
        let bearer = format!("Bearer {}", self.token);
        let (status, body) = http(&self.addr, "GET", path, &[("Authorization", &bearer)], "");
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    fn send(&self, pane: &str, body: &Value) -> (u16, Value) {
        let bearer = format!("Bearer {}", self.token);
        let headers = [
            ("Authorization", bearer.as_str()),
            ("Content-Type", "application/json"),
        ];
        let path = format!("/api/panes/{pane}/send");
        let (status, body) = http(&self.addr, "POST", &path, &headers, &body.to_string());
        (status, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    /// The event stream's messages, `(event, data)`, read on a thread of their own.
    fn events(&self, last_id: Option<u64>) -> mpsc::Receiver<(String, Value)> {
        self.stream("/api/events", last_id)
    }

    /// The messages of the event stream at `path`.
    fn stream(&self, path: &str, last_id: Option<u64>) -> mpsc::Receiver<(String, Value)> {
        let mut stream = TcpStream::connect(&self.addr).expect("connect");
        let resume = last_id
            .map(|n| format!("Last-Event-ID: {n}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "GET {path}?token={} HTTP/1.0\r\nAccept: text/event-stream\r\n{resume}\r\n",
            self.token
        );
        stream.write_all(request.as_bytes()).expect("write");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let (mut event, mut data) = (String::new(), String::new());
            for line in BufReader::new(stream).lines() {
                let Ok(line) = line else { return };
                if let Some(e) = line.strip_prefix("event: ") {
                    event = e.to_owned();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = d.to_owned();
                } else if line.is_empty() && !data.is_empty() {
                    let value = serde_json::from_str(&data).unwrap_or(Value::Null);
                    if tx.send((std::mem::take(&mut event), value)).is_err() {
                        return;
                    }
                    data.clear();
                }
            }
        });
        rx
    }
}

/// The next stream message that satisfies `want`, within the deadline.
fn next_where(
    rx: &mpsc::Receiver<(String, Value)>,
    what: &str,
    want: impl Fn(&str, &Value) -> bool,
) -> Value {
    let end = std::time::Instant::now() + deadline();
    let mut seen = Vec::new();
    loop {
        let left = end.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left.max(Duration::from_millis(1))) {
            Ok((event, data)) if want(&event, &data) => return data,
            Ok(other) => seen.push(other),
            Err(_) => panic!("timed out waiting for {what} on the event stream; saw {seen:#?}"),
        }
    }
}

fn agent(b: &Board, pane: &str) -> Outer {
    let socket = b.served.socket.to_string_lossy().into_owned();
    let argv = [
        LOOKOUT, "run", "--socket", &socket, "--pane", pane, "--kind", "claude", "--", "python3",
        FAKE,
    ];
    Outer::start(
        &argv,
        100,
        30,
        &[("FAKE_ASK", "1"), ("FAKE_WORK_MS", "800")],
    )
}

fn pane_state(b: &Board, pane: &str) -> Value {
    let (_, panes) = b.get("/api/panes");
    panes["panes"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["pane"] == pane).cloned())
        .unwrap_or(Value::Null)
}

fn wait_ready(b: &Board, pane: &str) {
    wait_until(
        &format!("{pane} idle with an empty composer on the board"),
        || {
            let p = pane_state(b, pane);
            p["lifecycle"] == "idle" && p["composer"]["state"] == "empty"
        },
        || pane_state(b, pane).to_string(),
    );
}

#[test]
fn every_request_needs_the_token_and_a_send_needs_it_in_the_header() {
    let dir = tempfile::tempdir().expect("tempdir");
    let b = board(dir.path());
    let _agent = agent(&b, "w1");
    wait_ready(&b, "w1");
    let (status, body) = http(&b.addr, "GET", "/api/panes", &[], "");
    assert_eq!((status, body.as_str()), (401, ""), "no token, no detail");
    let (status, _) = http(&b.addr, "GET", "/api/panes?token=wrong", &[], "");
    assert_eq!(status, 401);
    let (status, _) = http(&b.addr, "GET", "/", &[], "");
    assert_eq!(status, 401, "not even the page");
    // `lookout web` prints the address the page is opened with (and the QR code of it).
    let out = b.served.command(&["web"]).output().expect("lookout web");
    let printed = String::from_utf8_lossy(&out.stdout);
    let url = format!("http://{}/?token={}", b.addr, b.token);
    assert_eq!(printed.lines().next(), Some(url.as_str()), "{printed}");
    assert!(printed.contains('█'), "a QR code: {printed}");
    let out = b
        .served
        .command(&["web", "--view", "--no-qr"])
        .output()
        .expect("lookout web");
    assert!(String::from_utf8_lossy(&out.stdout).contains(&b.view_token));
    let (status, page) = http(&b.addr, "GET", &format!("/?token={}", b.token), &[], "");
    assert_eq!(status, 200);
    assert!(
        page.contains("<title>lookout</title>") && page.contains("EventSource"),
        "{page}"
    );
    let (status, panes) = b.get("/api/panes");
    assert_eq!(status, 200, "{panes}");
    assert_eq!(pane_state(&b, "w1")["kind"], "claude", "{panes}");
    // A send with the token only in the address (what a link or a form elsewhere could forge).
    let body = json!({"text": "hi", "submit": true, "expect": {"lifecycle": "idle"}}).to_string();
    let path = format!("/api/panes/w1/send?token={}", b.token);
    let (status, _) = http(
        &b.addr,
        "POST",
        &path,
        &[("Content-Type", "application/json")],
        &body,
    );
    assert_eq!(status, 401);
    // The viewing token sees, and may not send.
    let view = format!("Bearer {}", b.view_token);
    let (status, _) = http(
        &b.addr,
        "GET",
        "/api/panes",
        &[("Authorization", &view)],
        "",
    );
    assert_eq!(status, 200);
    let headers = [
        ("Authorization", view.as_str()),
        ("Content-Type", "application/json"),
    ];
    let (status, _) = http(&b.addr, "POST", "/api/panes/w1/send", &headers, &body);
    assert_eq!(status, 403);
    // A body past the limit is refused before anything reads it.
    let big = json!({"text": "x".repeat(20_000), "submit": true, "expect": {"lifecycle": "idle"}});
    let (status, _) = b.send("w1", &big);
    assert_eq!(status, 413);
    assert_eq!(
        pane_state(&b, "w1")["lifecycle"],
        "idle",
        "nothing was typed"
    );
    // Event streams are bounded: one past the limit is turned away, the others keep theirs.
    let streams: Vec<_> = (0..16).map(|_| b.events(None)).collect();
    for s in &streams {
        next_where(s, "a stream's snapshot", |e, _| e == "snapshot");
    }
    let path = format!("/api/events?token={}", b.token);
    let (status, _) = http(&b.addr, "GET", &path, &[], "");
    assert_eq!(status, 503, "the seventeenth stream");
}

#[test]
fn a_dialog_is_answered_from_the_board_and_a_stale_click_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let b = board(dir.path());
    let fake = agent(&b, "w1");
    wait_ready(&b, "w1");
    let events = b.events(None);
    let snapshot = next_where(&events, "the snapshot", |e, _| e == "snapshot");
    let seq = snapshot["seq"].as_u64().expect("seq");

    // A prompt from the board's text box: the agent works, then asks.
    let prompt = json!({"text": "one", "submit": true, "expect": {"lifecycle": "idle"}});
    let (status, sent) = b.send("w1", &prompt);
    assert_eq!(
        (status, sent["verdict"].as_str()),
        (200, Some("confirmed")),
        "{sent}"
    );
    let lifecycle_to = |to: &'static str| {
        move |e: &str, d: &Value| {
            e == "pane" && d["event"]["type"] == "lifecycle" && d["event"]["to"] == to
        }
    };
    let working = next_where(&events, "working", lifecycle_to("working"));
    assert!(
        working["seq"].as_u64() > Some(seq),
        "events after the snapshot: {working}"
    );
    let blocked = next_where(&events, "working → blocked", lifecycle_to("blocked"));
    assert_eq!(blocked["event"]["from"], "working", "{blocked}");
    let dialog = &blocked["pane"]["dialog"];
    assert!(
        dialog["text"]
            .as_str()
            .unwrap_or("")
            .contains("proceed with one?"),
        "{blocked}"
    );
    assert_eq!(
        dialog["options"][0],
        json!({"key": "1", "label": "Yes", "selected": true})
    );
    let first = dialog["hash"].as_str().expect("hash").to_owned();

    // Option 1, as the button sends it: the key alone, for the dialog the page showed.
    let answer = |hash: &str, key: &str| json!({"text": key, "expect": {"lifecycle": "blocked", "dialog": hash}});
    let (status, sent) = b.send("w1", &answer(&first, "1"));
    assert_eq!(
        (status, sent["verdict"].as_str()),
        (200, Some("confirmed")),
        "{sent}"
    );
    assert_eq!(sent["state"]["lifecycle"], "working", "{sent}");
    fake.wait_for_text("Done: one (answered 1)");
    next_where(&events, "done", lifecycle_to("done"));

    // Another prompt asks another question; a click on the old one is refused, nothing typed.
    let prompt = json!({"text": "two", "submit": true, "expect": {"lifecycle": "done"}});
    let (status, sent) = b.send("w1", &prompt);
    assert_eq!(
        (status, sent["verdict"].as_str()),
        (200, Some("confirmed")),
        "{sent}"
    );
    let blocked = next_where(&events, "blocked again", lifecycle_to("blocked"));
    let second = blocked["pane"]["dialog"]["hash"]
        .as_str()
        .expect("hash")
        .to_owned();
    assert_ne!(first, second, "another question, another fingerprint");
    let (status, sent) = b.send("w1", &answer(&first, "1"));
    assert_eq!(status, 409, "{sent}");
    assert_eq!(sent["verdict"], "refused", "{sent}");
    assert!(
        sent["reason"].as_str().unwrap_or("").starts_with("stale"),
        "{sent}"
    );
    assert!(
        !fake.text().contains("two (answered 1)"),
        "the stale key never reached the agent"
    );
    assert_eq!(pane_state(&b, "w1")["lifecycle"], "blocked");
    // A click on a pane that is no longer blocked is stale too.
    let (status, _) = b.send(
        "w1",
        &json!({"text": "x", "submit": true, "expect": {"lifecycle": "idle"}}),
    );
    assert_eq!(status, 409);

    // Deny, on the dialog shown now.
    let (status, sent) = b.send("w1", &answer(&second, "2"));
    assert_eq!(
        (status, sent["verdict"].as_str()),
        (200, Some("confirmed")),
        "{sent}"
    );
    // A denial ends no turn: the pane is idle (it was read working, then `done` + unread, as if
    // the answer key had been a new prompt).
    assert_eq!(sent["state"]["lifecycle"], "idle", "{sent}");
    fake.wait_for_text("Declined: two");

    // A page that reconnects gets a fresh snapshot (at or past what it applied), then events.
    let again = b.events(Some(seq));
    let snap = next_where(&again, "the new snapshot", |e, _| e == "snapshot");
    assert!(snap["seq"].as_u64() >= blocked["seq"].as_u64(), "{snap}");
    assert_eq!(snap["resumed_from"], json!(seq));
}

/// A network address needs HTTPS or an explicit `--insecure-lan`; with a certificate the board
/// speaks HTTPS only (checked with curl against that certificate).
#[test]
fn a_network_address_needs_https_or_an_explicit_insecure_flag() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(LOOKOUT)
        .args(["serve", "--no-db", "--http", "0.0.0.0:0", "--socket"])
        .arg(dir.path().join("lan.sock"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .output()
        .expect("lookout serve");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--insecure-lan") && err.contains("--tls-cert"),
        "{err}"
    );
    assert!(
        !dir.path().join("lan.sock").exists(),
        "refused before serving anything"
    );

    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "2", "-subj", "/CN=lookout-test"])
        .args([
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-addext",
            "basicConstraints=critical,CA:FALSE",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let (c, k) = (
        cert.to_string_lossy().into_owned(),
        key.to_string_lossy().into_owned(),
    );
    let served = Served::start_with(
        dir.path(),
        100,
        &["--http", "127.0.0.1:0", "--tls-cert", &c, "--tls-key", &k],
    );
    let file = served.socket.with_file_name("web.addr");
    wait_until(
        "the board's address file",
        || std::fs::read_to_string(&file).is_ok_and(|t| t.ends_with('\n')),
        || file.display().to_string(),
    );
    let origin = std::fs::read_to_string(&file)
        .expect("addr")
        .trim()
        .to_owned();
    assert!(origin.starts_with("https://127.0.0.1:"), "{origin}");
    let token =
        std::fs::read_to_string(dir.path().join("config/lookout/web-token")).expect("token");
    let curl = |extra: &[&str]| {
        std::process::Command::new("curl")
            .args([
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "--max-time",
                "10",
            ])
            .args(extra)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .expect("curl")
    };
    let bearer = format!("Authorization: Bearer {}", token.trim());
    let panes = format!("{origin}/api/panes");
    assert_eq!(curl(&["--cacert", &c, "-H", &bearer, &panes]), "200");
    assert_eq!(curl(&["--cacert", &c, &panes]), "401");
    let plain = panes.replace("https://", "http://");
    assert_ne!(
        curl(&["-H", &bearer, &plain]),
        "200",
        "no plain HTTP beside HTTPS"
    );
}

/// A headless Chromium driven over WebDriver (`chromedriver`, from the distribution's
/// `chromium-driver`): a few JSON calls over the same plain HTTP, so no client crate is needed.
struct Browser {
    driver: std::process::Child,
    addr: String,
    session: String,
}

impl Browser {
    fn start(width: u32, height: u32) -> Browser {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let driver = std::process::Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("chromedriver (apt-get install chromium chromium-driver; .ci/run does)");
        // Held by the guard from here on: a failed wait still ends the driver.
        let mut b = Browser {
            driver,
            addr: format!("127.0.0.1:{port}"),
            session: String::new(),
        };
        wait_until(
            "chromedriver to answer",
            || {
                TcpStream::connect(&b.addr).is_ok()
                    && http(&b.addr, "GET", "/status", &[], "").0 == 200
            },
            || b.addr.clone(),
        );
        let caps = json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "args": ["--headless", "--no-sandbox", "--disable-gpu", format!("--window-size={width},{height}")]
        }}}});
        let v = b.call("POST", "/session", &caps);
        b.session = v["sessionId"]
            .as_str()
            .expect("a WebDriver session")
            .to_owned();
        b
    }

    fn call(&self, method: &str, path: &str, body: &Value) -> Value {
        let headers = [("Content-Type", "application/json")];
        let (status, text) = http(&self.addr, method, path, &headers, &body.to_string());
        let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        assert_eq!(status, 200, "WebDriver {method} {path}: {text}");
        v["value"].clone()
    }

    fn session(&self, method: &str, path: &str, body: &Value) -> Value {
        self.call(method, &format!("/session/{}{path}", self.session), body)
    }

    /// The element `css` matches, once it does.
    fn find(&self, css: &str) -> String {
        let body = json!({"using": "css selector", "value": css});
        let mut found = String::new();
        wait_until(
            &format!("an element matching {css}"),
            || {
                let (status, text) = http(
                    &self.addr,
                    "POST",
                    &format!("/session/{}/element", self.session),
                    &[("Content-Type", "application/json")],
                    &body.to_string(),
                );
                let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                found = v["value"]
                    .as_object()
                    .and_then(|o| o.values().next())
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                status == 200 && !found.is_empty()
            },
            || self.text("body"),
        );
        found
    }

    fn text(&self, css: &str) -> String {
        let body = json!({"script": "const e = document.querySelector(arguments[0]); return e ? e.innerText : '';", "args": [css]});
        let (_, text) = http(
            &self.addr,
            "POST",
            &format!("/session/{}/execute/sync", self.session),
            &[("Content-Type", "application/json")],
            &body.to_string(),
        );
        let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        v["value"].as_str().unwrap_or("").to_owned()
    }

    fn click(&self, css: &str) {
        self.act(css, "click", &json!({}));
    }

    /// Types `text` into the element `css` matches, as keys.
    fn type_into(&self, css: &str, text: &str) {
        self.act(css, "value", &json!({ "text": text }));
    }

    /// WebDriver action `what` on the element `css` matches, found again and retried when the
    /// page redrew it in between (the page re-renders its cards on every event).
    fn act(&self, css: &str, what: &str, body: &Value) {
        let last = std::cell::RefCell::new(String::new());
        wait_until(
            &format!("{what} on {css}"),
            || {
                let e = self.find(css);
                let path = format!("/session/{}/element/{e}/{what}", self.session);
                let headers = [("Content-Type", "application/json")];
                let (status, text) = http(&self.addr, "POST", &path, &headers, &body.to_string());
                *last.borrow_mut() = text;
                status == 200
            },
            || last.borrow().clone(),
        );
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let path = format!("/session/{}", self.session);
            let _ = http(&self.addr, "DELETE", &path, &[], "");
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// The page in a real browser: a prompt typed into the page, the pane going working → blocked
/// live, its "Yes" clicked, the agent receiving exactly that key, the outcome shown.
#[test]
fn in_a_browser_a_dialog_is_seen_live_and_answered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let b = board(dir.path());
    let fake = agent(&b, "w1");
    wait_ready(&b, "w1");
    let browser = Browser::start(390, 844);
    let (status, _) = http(&b.addr, "GET", "/", &[], "");
    assert_eq!(status, 401, "the page itself needs the token");
    let url = format!("http://{}/?token={}", b.addr, b.token);
    browser.session("POST", "/url", &json!({ "url": url }));
    let card = r#"section.pane[data-pane="w1"]"#;
    browser.type_into(&format!("{card} input"), "one");
    browser.click(&format!("{card} form button"));
    browser.find(&format!(r#"{card}[data-state="working"]"#));
    browser.find(&format!(
        r#"{card}[data-state="blocked"] .options button.sel"#
    ));
    assert!(
        browser.text(card).contains("proceed with one?"),
        "{}",
        browser.text(card)
    );
    browser.click(&format!("{card} .options button.sel"));
    fake.wait_for_text("Done: one (answered 1)");
    wait_until(
        "the page to show the outcome",
        || {
            browser
                .text(&format!("{card} .outcome"))
                .starts_with("confirmed")
        },
        || browser.text("body"),
    );
    browser.find(&format!(r#"{card}[data-state="done"]"#));

    // A page that shows a dialog the pane no longer has (here: its fingerprint altered in the
    // page) gets its click refused, says so, and refreshes; the next click is the right one.
    browser.type_into(&format!("{card} input"), "two");
    browser.click(&format!("{card} form button"));
    browser.find(&format!(
        r#"{card}[data-state="blocked"] .options button.sel"#
    ));
    let stale = json!({"script": "panes.get('w1').dialog.hash = '0000000000000000';", "args": []});
    browser.session("POST", "/execute/sync", &stale);
    browser.click(&format!("{card} .options button.sel"));
    wait_until(
        "the page to say the click was stale",
        || browser.text(&format!("{card} .outcome")).contains("stale"),
        || browser.text("body"),
    );
    assert!(!fake.text().contains("two (answered 1)"), "nothing typed");
    assert_eq!(pane_state(&b, "w1")["lifecycle"], "blocked");
    browser.click(&format!("{card} .options button.sel"));
    fake.wait_for_text("Done: two (answered 1)");
}

/// A pane the person is looking at in tmux (the active pane of the window their client shows)
/// turns blocked with `in_view: true` on the event stream, so the page raises no notification for
/// it; the same dialog in a window nobody shows carries `in_view: false` and is notified.
#[test]
fn a_dialog_in_the_tmux_pane_in_view_is_not_announced_by_the_page() {
    use crate::support::fake_claude::fake_claude;
    use crate::support::tmux::Tmux;
    let dir = tempfile::tempdir().expect("tempdir");
    let b = board(dir.path());
    let bin = fake_claude(dir.path());
    let name = format!("lookout-inview-{}", std::process::id());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let shell = format!("env PATH={path} PS1='$ ' bash --norc --noprofile");
    let (tmux, hidden) = Tmux::start(&name, 100, 30, &[], &shell);
    let shown = tmux
        .run(&["new-window", "-P", "-F", "#{pane_id}", &shell])
        .trim()
        .to_owned();
    let socket = tmux.run(&["display", "-p", "#{socket_path}"]);
    // The person's own tmux client, in a terminal: it shows the new window.
    let _person = Outer::start(&["tmux", "-S", socket.trim(), "attach"], 100, 30, &[]);
    wait_until(
        "the person's client attached",
        || {
            tmux.run(&["list-clients", "-F", "#{pane_id}"])
                .contains(&shown)
        },
        || tmux.run(&["list-clients"]),
    );
    let out = b
        .served
        .command(&["tmux", "--socket-name", &name, "--server-socket"])
        .arg(&b.served.socket)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("lookout tmux");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = |pane: &str| format!("tmux:{name}:{pane}");
    for pane in [&hidden, &shown] {
        tmux.type_line(pane, "claude");
        wait_until(
            "claude idle on the board",
            || pane_state(&b, &id(pane))["lifecycle"] == "idle",
            || tmux.screen(pane),
        );
    }
    let events = b.events(None);
    for pane in [&hidden, &shown] {
        tmux.type_line(pane, "b");
        let want = id(pane);
        let event = next_where(&events, "the pane blocked", |e, d| {
            e == "pane" && d["event"]["to"] == "blocked" && d["event"]["pane"] == want.as_str()
        });
        let in_view = event["in_view"].as_bool();
        assert_eq!(in_view, Some(pane == &shown), "{pane}: {event}");
    }
}

/// `--fleet URL`: the board shows every other machine's panes with their machine, live (a remote
/// pane going blocked arrives on the fleet stream), and a machine killed outright is marked
/// offline once its heartbeat ages out; this machine's own panes stay answerable from the socket.
#[test]
fn with_a_fleet_the_board_shows_every_machine_and_marks_one_offline() {
    use crate::fleet::{claude_pane, publishing, report};
    use crate::support::nats::Nats;
    let dir = tempfile::tempdir().expect("tempdir");
    let nats = Nats::start(dir.path());
    let url = nats.url();
    let b = board_with(
        &dir.path().join("here"),
        &["--fleet", &url, "--publish", &url, "--machine", "here"],
    );
    let mut alpha = publishing(dir.path(), &nats, "alpha");
    claude_pane(&alpha, "a1");
    let fleet = b.stream("/api/fleet/events", None);
    let remote = |data: &Value, lifecycle: &str, online: bool| {
        data["panes"].as_array().is_some_and(|ps| {
            ps.iter().any(|p| {
                p["machine"] == "alpha"
                    && p["pane"] == "a1"
                    && p["lifecycle"] == lifecycle
                    && p["online"] == online
            })
        })
    };
    next_where(&fleet, "alpha's pane, idle and online", |e, d| {
        e == "fleet" && remote(d, "idle", true)
    });
    report(&alpha, "a1", 1, "blocked");
    let data = next_where(&fleet, "alpha's pane blocked, live", |e, d| {
        e == "fleet" && remote(d, "blocked", true)
    });
    assert_eq!(data["machine"], "here", "{data}");
    let mine = |d: &Value| {
        d["machines"]
            .as_array()
            .is_some_and(|ms| ms.iter().any(|m| m["machine"] == "here"))
            || d["panes"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p["machine"] == "here"))
    };
    assert!(
        !mine(&data),
        "this machine comes from the socket, not the fleet: {data}"
    );
    let (_, snapshot) = b.get("/api/fleet");
    assert!(remote(&snapshot, "blocked", true), "{snapshot}");
    // The page learns from the socket's snapshot that a fleet is shown, and which machine it is.
    let events = b.events(None);
    let first = next_where(&events, "the snapshot", |e, _| e == "snapshot");
    assert_eq!(first["fleet"], "here", "{first}");
    // The page draws the remote pane with its machine, and no controls (it is answered there).
    let browser = Browser::start(1200, 800);
    let url = format!("http://{}/?token={}", b.addr, b.token);
    browser.session("POST", "/url", &json!({ "url": url }));
    let card = r#"section.pane[data-machine="alpha"][data-state="blocked"]"#;
    browser.find(card);
    assert!(
        browser.text(card).contains("alpha"),
        "{}",
        browser.text(card)
    );
    assert_eq!(browser.text(&format!("{card} form")), "", "no prompt box");
    alpha.kill9();
    next_where(
        &fleet,
        "alpha offline after its heartbeat TTL, its pane still shown",
        |e, d| e == "fleet" && remote(d, "blocked", false),
    );
    let offline = r#"section.pane.offline[data-machine="alpha"]"#;
    browser.find(offline);
    assert!(
        browser.text(offline).contains("alpha (offline)"),
        "{}",
        browser.text(offline)
    );
    wait_until(
        "the header counting the other machine, offline",
        || {
            browser
                .text("#fleet")
                .contains("1 other machine(s), 0 online")
        },
        || browser.text("header"),
    );
}

/// Without `--http`, `--fleet` is refused with a reason rather than ignored.
#[test]
fn a_fleet_without_a_board_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(LOOKOUT)
        .args([
            "serve",
            "--no-db",
            "--fleet",
            "nats://127.0.0.1:4222",
            "--socket",
        ])
        .arg(dir.path().join("s.sock"))
        .env("XDG_CONFIG_HOME", dir.path())
        .output()
        .expect("run serve");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("give --http too"), "{err}");
}
