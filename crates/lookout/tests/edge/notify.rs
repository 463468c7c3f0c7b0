//! Real-part tests of notifications (see docs/notify.md): a real `lookout serve` reading a real
//! settings
//! file, panes driven by hook reports over the socket, and each sink against the real thing it
//! talks to — a script (`exec`), an HTTP listener on 127.0.0.1 (`webhook`), a tmux server with an
//! attached client in a PTY (`tmux`, focus). Every wait has a deadline.

use crate::support::server::{Served, announce, open_with};
use crate::support::wait_until;
use lookout::server::Client;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

fn settings(dir: &Path, text: &str) {
    let file = dir.join("config/lookout/config.toml");
    std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
    std::fs::write(file, text).expect("write settings");
}

/// A pane whose (stand-in) claude reports `state`.
fn report(client: &mut Client, pane: &str, seq: u64, state: &str) {
    let params = json!({"pane": pane, "source": "t:claude", "seq": seq, "state": state});
    client.call_raw("report.state", params).expect("report");
}

fn agent(client: &mut Client, pane: &str) {
    open_with(client, pane, &["claude"]);
    announce(client, pane, "t:claude");
}

/// The notifications an `exec` sink appended to `file`, one JSON per line.
fn lines(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn exec_to(file: &Path, on: &str, extra: &str) -> String {
    format!(
        "[[notify]]\nsink = \"exec\"\non = {on}\ncommand = [\"sh\", \"-c\", \"cat >> {}; echo >> {}\"]\n{extra}\n",
        file.display(),
        file.display()
    )
}

#[test]
fn exec_notifies_once_per_transition_even_across_a_kill_9() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("notified.jsonl");
    settings(
        dir.path(),
        &exec_to(&out, "[\"blocked\"]", "kinds = [\"claude\"]"),
    );
    let mut served = Served::start_in(dir.path(), 50);
    let mut client = served.client();
    agent(&mut client, "a");
    report(&mut client, "a", 1, "working");
    report(&mut client, "a", 2, "blocked");
    wait_until(
        "one notification",
        || lines(&out).len() == 1,
        || format!("{:?}", lines(&out)),
    );
    let first = &lines(&out)[0];
    assert_eq!(first["trigger"], "blocked");
    assert_eq!(first["pane"], "a");
    assert_eq!(first["state"]["kind"], "claude");
    assert_eq!(first["event"]["to"], "blocked");

    // The server dies and comes back; pane `a` resumes blocked. A second pane blocks: the only
    // new notification is that one.
    served.kill9();
    let served = Served::start_in(dir.path(), 50);
    let mut client = served.client();
    agent(&mut client, "a");
    agent(&mut client, "b");
    report(&mut client, "b", 1, "blocked");
    wait_until(
        "b's notification",
        || lines(&out).len() >= 2,
        || format!("{:?}", lines(&out)),
    );
    let all = lines(&out);
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(all[1]["pane"], "b");
}

#[test]
fn a_webhook_gets_the_event_as_json() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("addr").port();
    let dir = tempfile::tempdir().expect("tempdir");
    settings(
        dir.path(),
        &format!(
            "[[notify]]\nsink = \"webhook\"\non = [\"done\"]\nurl = \"http://127.0.0.1:{port}/hook\"\n"
        ),
    );
    let served = Served::start_in(dir.path(), 50);
    let mut client = served.client();
    agent(&mut client, "w");
    report(&mut client, "w", 1, "working");
    report(&mut client, "w", 2, "done");
    listener.set_nonblocking(false).expect("blocking");
    let (mut stream, _) = listener.accept().expect("the webhook's POST");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut request_line = String::new();
    reader.read_line(&mut request_line).expect("request line");
    assert!(
        request_line.starts_with("POST /hook HTTP/1.1"),
        "{request_line}"
    );
    let mut length = 0;
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).expect("header");
        if header.trim().is_empty() {
            break;
        }
        if let Some(v) = header.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().expect("length");
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("body");
    let body: Value = serde_json::from_slice(&body).expect("json body");
    assert_eq!(body["trigger"], "done");
    assert_eq!(body["state"]["unread"], true);
    stream
        .write_all(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
        .expect("answer");
}

#[test]
fn a_pane_left_blocked_is_reminded_twice_and_no_more() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("stuck.jsonl");
    settings(
        dir.path(),
        &exec_to(&out, "[\"stuck\"]", "stuck_after = \"1s\""),
    );
    let served = Served::start_in(dir.path(), 50);
    let mut client = served.client();
    agent(&mut client, "s");
    report(&mut client, "s", 1, "blocked");
    let blocked_at = Instant::now();
    wait_until(
        "the first reminder",
        || lines(&out).len() == 1,
        || format!("{:?}", lines(&out)),
    );
    assert!(blocked_at.elapsed() >= Duration::from_secs(1));
    assert_eq!(lines(&out)[0]["trigger"], "stuck");
    wait_until(
        "the second reminder",
        || lines(&out).len() == 2,
        || format!("{:?}", lines(&out)),
    );
    assert!(
        blocked_at.elapsed() >= Duration::from_secs(3),
        "the second comes at 3× stuck_after"
    );
    // Never a third: watch for two more stuck_after periods.
    let end = Instant::now() + Duration::from_secs(2);
    while Instant::now() < end {
        assert_eq!(lines(&out).len(), 2, "{:?}", lines(&out));
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_bad_settings_file_is_refused_with_its_line_and_the_last_good_one_stays() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("n.jsonl");
    settings(dir.path(), &exec_to(&out, "[\"blocked\"]", ""));
    let served = Served::start_in(dir.path(), 50);
    let mut client = served.client();
    agent(&mut client, "p");
    report(&mut client, "p", 1, "blocked");
    wait_until("notified", || lines(&out).len() == 1, String::new);
    // A typo: refused (the log names line and key), the rule in force stays.
    settings(
        dir.path(),
        "[[notify]]\nsink = \"exec\"\non = [\"blocked\"]\ncomand = [\"x\"]\n",
    );
    report(&mut client, "p", 2, "working");
    report(&mut client, "p", 3, "blocked");
    wait_until(
        "still notified",
        || lines(&out).len() == 2,
        || format!("{:?}", lines(&out)),
    );
}

#[test]
fn tmux_sinks_skip_the_pane_in_view_and_looking_at_a_pane_clears_unread() {
    use crate::support::fake_claude::fake_claude;
    use crate::support::pty::Outer;
    use crate::support::tmux::Tmux;
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = fake_claude(dir.path());
    let out = dir.path().join("n.jsonl");
    settings(
        dir.path(),
        &format!(
            "{}\n[[notify]]\nsink = \"tmux\"\non = [\"blocked\"]\nmessage = \"lookout: {{name}} ({{pane}}) is {{state}}\"\n\n[[notify]]\nsink = \"bell\"\non = [\"blocked\"]\n",
            exec_to(&out, "[\"blocked\"]", "")
        ),
    );
    let name = format!("lookout-notify-{}", std::process::id());
    let claude = bin.join("claude").display().to_string();
    let (tmux, shown) = Tmux::start(&name, 100, 30, &[], &claude);
    let hidden = tmux
        .run(&["new-window", "-d", "-P", "-F", "#{pane_id}", &claude])
        .trim()
        .to_owned();
    // Named now, not when tmux's automatic rename gets to it.
    tmux.run(&["rename-window", "-t", &hidden, "agent"]);
    let session = tmux.run(&["display-message", "-p", "-t", &hidden, "#{session_name}"]);
    // A person's terminal, attached to the session: it shows the first window.
    let client_terminal = Outer::start(&["tmux", "-L", &name, "attach"], 100, 30, &[]);
    wait_until(
        "the client attached",
        || !tmux.run(&["list-clients"]).trim().is_empty(),
        String::new,
    );
    let served = Served::start_in(dir.path(), 50);
    let attach = served
        .command(&["tmux", "--socket-name", &name, "--server-socket"])
        .arg(&served.socket)
        .output()
        .expect("lookout tmux");
    assert!(
        attach.status.success(),
        "{}",
        String::from_utf8_lossy(&attach.stderr)
    );
    let id = |pane: &str| format!("tmux:{name}:{pane}");
    let mut client = served.client();
    for pane in [&shown, &hidden] {
        wait_until(
            "the agent identified",
            || {
                client
                    .call_raw("agent.get", json!({"pane": id(pane)}))
                    .is_ok_and(|s| s["kind"] == "claude")
            },
            || tmux.screen(pane),
        );
        announce(&mut client, &id(pane), "t:claude");
    }
    let bells = || client_terminal.text().matches('\x07').count();
    let before = bells();
    report(&mut client, &id(&shown), 1, "blocked");
    report(&mut client, &id(&hidden), 1, "blocked");
    wait_until(
        "the hidden pane notified",
        || lines(&out).iter().any(|n| n["pane"] == json!(id(&hidden))),
        || format!("{:?}", lines(&out)),
    );
    assert!(
        lines(&out).iter().all(|n| n["pane"] != json!(id(&shown))),
        "the pane in view was notified: {:?}",
        lines(&out)
    );
    wait_until(
        "a BEL on the client's terminal",
        || bells() > before,
        || format!("{:?}", client_terminal.text()),
    );
    wait_until(
        "the tmux message on the client",
        || {
            tmux.run(&["show-messages"]).contains(&format!(
                "lookout: {}:1.0 agent ({}) is blocked",
                session.trim(),
                id(&hidden)
            ))
        },
        || tmux.run(&["show-messages"]),
    );
    // The hidden pane finishes its turn unread; the person switches to it: seen.
    report(&mut client, &id(&hidden), 2, "working");
    report(&mut client, &id(&hidden), 3, "done");
    let unread = |client: &mut Client| {
        client
            .call_raw("agent.get", json!({"pane": id(&hidden)}))
            .is_ok_and(|s| s["unread"] == true)
    };
    wait_until("done, unread", || unread(&mut client), String::new);
    let (_, _, mut events) = served.client().subscribe().expect("subscribe");
    tmux.run(&["select-window", "-t", &hidden]);
    wait_until(
        "looking at it clears unread",
        || !unread(&mut client),
        String::new,
    );
    let cleared = events
        .find(|e| {
            e.as_ref().is_ok_and(|e| {
                e["flag"] == "unread" && e["raised"] == false && e["pane"] == json!(id(&hidden))
            })
        })
        .and_then(Result::ok)
        .expect("the unread event");
    assert_eq!(cleared["cause"], "seen:focus", "{cleared}");
}

#[test]
fn typing_into_a_run_pane_sees_it_and_keeps_its_notifications_quiet() {
    use crate::support::fake_claude::fake_claude;
    use crate::support::pty::Outer;
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = fake_claude(dir.path());
    let out = dir.path().join("n.jsonl");
    settings(dir.path(), &exec_to(&out, "[\"blocked\"]", ""));
    let served = Served::start_in(dir.path(), 50);
    let socket = served.socket.display().to_string();
    let state_dir = dir.path().join("state").display().to_string();
    let claude = bin.join("claude").display().to_string();
    let mut pty = Outer::start(
        &[
            crate::support::LOOKOUT,
            "run",
            "--pane",
            "typed",
            "--",
            &claude,
        ],
        100,
        30,
        &[("LOOKOUT_SOCKET", &socket), ("XDG_STATE_HOME", &state_dir)],
    );
    let mut client = served.client();
    let get = |client: &mut Client| client.call_raw("agent.get", json!({"pane": "typed"})).ok();
    wait_until(
        "the pane",
        || get(&mut client).is_some_and(|s| s["kind"] == "claude"),
        || pty.text(),
    );
    // A turn ends unread (told by a hook: nothing typed yet); the person types the next prompt.
    announce(&mut client, "typed", "t:claude");
    report(&mut client, "typed", 1, "working");
    report(&mut client, "typed", 2, "done");
    wait_until(
        "done, unread",
        || get(&mut client).is_some_and(|s| s["lifecycle"] == "done" && s["unread"] == true),
        || pty.text(),
    );
    pty.send(b"\r");
    wait_until(
        "typing clears unread",
        || get(&mut client).is_some_and(|s| s["unread"] == false),
        || format!("{:?}", get(&mut served.client())),
    );
    // The person types the key that makes it ask: they are looking at it, no notification.
    pty.type_line("b");
    wait_until(
        "blocked",
        || get(&mut client).is_some_and(|s| s["lifecycle"] == "blocked"),
        || pty.text(),
    );
    agent(&mut client, "elsewhere");
    report(&mut client, "elsewhere", 1, "blocked");
    wait_until(
        "the sentinel's notification",
        || !lines(&out).is_empty(),
        String::new,
    );
    assert!(
        lines(&out).iter().all(|n| n["pane"] != "typed"),
        "notified for the pane being typed into: {:?}",
        lines(&out)
    );
    pty.type_line("q");
}

#[test]
fn the_terminal_sink_asks_the_panes_own_terminal_else_a_board() {
    use crate::support::fake_claude::fake_claude;
    use crate::support::pty::Outer;
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = fake_claude(dir.path());
    settings(
        dir.path(),
        "[[notify]]\nsink = \"terminal\"\non = [\"blocked\"]\nosc = 777\nfocused = true\n\
         message = \"{pane} is {state}\"\n",
    );
    let served = Served::start_in(dir.path(), 50);
    let socket = served.socket.display().to_string();
    let state_dir = dir.path().join("state").display().to_string();
    let env = [
        ("LOOKOUT_SOCKET", socket.as_str()),
        ("XDG_STATE_HOME", state_dir.as_str()),
        ("TMUX", ""),
    ];
    let claude = bin.join("claude").display().to_string();
    let mut own = Outer::start(
        &[
            crate::support::LOOKOUT,
            "run",
            "--pane",
            "own",
            "--",
            &claude,
        ],
        100,
        30,
        &env,
    );
    let board = Outer::start(
        &[crate::support::LOOKOUT, "watch", "--no-tmux"],
        100,
        30,
        &env,
    );
    let mut client = served.client();
    wait_until(
        "the run pane",
        || {
            client
                .call_raw("agent.get", json!({"pane": "own"}))
                .is_ok_and(|s| s["kind"] == "claude")
        },
        || own.text(),
    );
    // Both terminals listen (the run pane for itself, the board for the rest).
    wait_until(
        "two listeners",
        || {
            client
                .call_raw("server.info", json!({}))
                .is_ok_and(|i| i["listeners"] == 2)
        },
        || format!("{:?}", served.client().call_raw("server.info", json!({}))),
    );
    own.type_line("b");
    wait_until(
        "the run pane's own terminal shows the notification",
        || {
            own.text()
                .contains("\x1b]777;notify;lookout;own is blocked\x07")
        },
        || format!("{:?}", own.text()),
    );
    assert!(
        !board.text().contains("own is blocked"),
        "the board does not repeat it"
    );
    // A pane with no terminal of its own (a tmux pane, a wire client): the board shows it.
    agent(&mut client, "far");
    report(&mut client, "far", 1, "blocked");
    wait_until(
        "the board's terminal shows it",
        || {
            board
                .text()
                .contains("\x1b]777;notify;lookout;far is blocked\x07")
        },
        || format!("{:?}", board.text()),
    );
    own.type_line("q");
}

/// A notification daemon of our own: it owns `org.freedesktop.Notifications` on a private session
/// bus and hands each `Notify` (summary, body, urgency) to the test.
struct Daemon(crossbeam_channel::Sender<(String, String, u8)>);

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Daemon {
    #[allow(
        clippy::too_many_arguments,
        reason = "the method's signature is the spec's"
    )]
    fn notify(
        &self,
        _app_name: &str,
        _replaces_id: u32,
        _app_icon: &str,
        summary: &str,
        body: &str,
        _actions: Vec<String>,
        hints: std::collections::HashMap<String, zbus::zvariant::OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let urgency = hints
            .get("urgency")
            .and_then(|v| u8::try_from(v).ok())
            .unwrap_or(0);
        let _ = self.0.send((summary.to_owned(), body.to_owned(), urgency));
        1
    }
}

#[test]
fn the_desktop_sink_notifies_over_a_real_session_bus() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A bus of the test's own, configured here: no system session.conf needed.
    let config = dir.path().join("bus.conf");
    std::fs::write(
        &config,
        format!(
            "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\" \
             \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n\
             <busconfig><type>session</type><listen>unix:path={}</listen><auth>EXTERNAL</auth>\
             <policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/>\
             <allow eavesdrop=\"true\"/><allow receive_sender=\"*\"/><allow own=\"*\"/>\
             </policy></busconfig>\n",
            dir.path().join("bus").display()
        ),
    )
    .expect("bus config");
    let mut bus = std::process::Command::new("dbus-daemon")
        .arg(format!("--config-file={}", config.display()))
        .args(["--nofork", "--print-address=1"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("these tests need dbus-daemon (apt-get install dbus; .ci/run installs it)");
    let mut address = String::new();
    BufReader::new(bus.stdout.take().expect("stdout"))
        .read_line(&mut address)
        .expect("the bus address");
    let address = address.trim().to_owned();
    let (tx, rx) = crossbeam_channel::unbounded();
    let _daemon = zbus::blocking::connection::Builder::address(address.as_str())
        .and_then(|b| b.name("org.freedesktop.Notifications"))
        .and_then(|b| b.serve_at("/org/freedesktop/Notifications", Daemon(tx)))
        .and_then(zbus::blocking::connection::Builder::build)
        .expect("the notification daemon");
    settings(
        dir.path(),
        "[[notify]]\nsink = \"desktop\"\non = [\"blocked\"]\nmessage = \"{pane} needs you\"\n",
    );
    let socket = dir.path().join("run/lookout.sock");
    let mut server = std::process::Command::new(crate::support::LOOKOUT)
        .args(["serve", "--tick-ms", "50", "--socket"])
        .arg(&socket)
        .arg("--db")
        .arg(dir.path().join("lookout.db"))
        .env("DBUS_SESSION_BUS_ADDRESS", &address)
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .spawn()
        .expect("lookout serve");
    wait_until(
        "the server",
        || Client::connect(&socket).is_ok(),
        String::new,
    );
    let mut client = Client::connect(&socket).expect("client");
    agent(&mut client, "d");
    report(&mut client, "d", 1, "blocked");
    let got = rx.recv_timeout(crate::support::deadline());
    let _ = server.kill();
    let _ = server.wait();
    let _ = bus.kill();
    let _ = bus.wait();
    let (summary, body, urgency) = got.expect("a Notify call on the bus");
    assert_eq!(
        (summary.as_str(), body.as_str()),
        ("lookout", "d needs you")
    );
    assert_eq!(urgency, 2, "a pane waiting for its person is critical");
}

#[test]
fn serve_reload_rereads_the_settings_now() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("n.jsonl");
    let file = dir.path().join("config/lookout/config.toml");
    settings(dir.path(), "# nothing yet\n");
    let served = Served::start_in(dir.path(), 50);
    let mut client = served.client();
    agent(&mut client, "r");
    // A rule written so that its file looks unchanged (same modification time): only an
    // explicit reload picks it up.
    let before = std::fs::metadata(&file)
        .and_then(|m| m.modified())
        .expect("mtime");
    settings(dir.path(), &exec_to(&out, "[\"blocked\"]", ""));
    std::fs::File::options()
        .write(true)
        .open(&file)
        .and_then(|f| f.set_modified(before))
        .expect("keep the mtime");
    let reload = served
        .command(&["serve", "--reload", "--socket"])
        .arg(&served.socket)
        .output()
        .expect("serve --reload");
    assert!(
        reload.status.success(),
        "{}",
        String::from_utf8_lossy(&reload.stderr)
    );
    report(&mut client, "r", 1, "blocked");
    wait_until(
        "the reloaded rule's notification",
        || lines(&out).len() == 1,
        String::new,
    );
}

/// The server's threads now.
fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count)
}

/// `panes` panes block at once with `sink` (a TOML `[[notify]]` body) configured, next to an exec
/// rule that proves each notification was dispatched; returns how many threads the server grew by
/// once all were.
fn thread_growth(sink: &str, env: &[(&str, &str)]) -> usize {
    const PANES: usize = 30;
    let dir = tempfile::tempdir().expect("tempdir");
    // One file per notification: concurrent appends to one file could interleave.
    let out = dir.path().join("notified");
    std::fs::create_dir(&out).expect("mkdir");
    let script = format!("cat > \"$(mktemp -p {})\"", out.display());
    settings(
        dir.path(),
        &format!(
            "{sink}\n[[notify]]\nsink = \"exec\"\non = [\"blocked\"]\ncommand = [\"sh\", \"-c\", {script:?}]\n"
        ),
    );
    let notified = || std::fs::read_dir(&out).map_or(0, Iterator::count);
    let served = Served::start_env(dir.path(), 50, &[], env);
    let mut client = served.client();
    for i in 0..PANES {
        agent(&mut client, &format!("p{i}"));
    }
    let before = threads(served.child.id());
    let mut raw = served.raw();
    let reports: String = (0..PANES)
        .map(|i| {
            let params = json!({"pane": format!("p{i}"), "source": "t:claude", "seq": 1, "state": "blocked"});
            format!("{}\n", json!({"id": i, "method": "report.state", "params": params}))
        })
        .collect();
    raw.send(reports.as_bytes());
    for _ in 0..PANES {
        raw.line();
    }
    wait_until(
        "every notification dispatched (the exec rule wrote them all)",
        || notified() == PANES,
        || format!("{} of {PANES}", notified()),
    );
    threads(served.child.id()).saturating_sub(before)
}

/// A webhook that accepts the connection and never answers: the server's threads stay bounded
/// (the old code held one thread per notification for ~18 s).
#[test]
fn a_webhook_that_never_answers_holds_a_bounded_number_of_threads() {
    // Bound, never accepted: the kernel completes the connection, nobody ever answers.
    let silent = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/hook", silent.local_addr().expect("addr"));
    let sink = format!("[[notify]]\nsink = \"webhook\"\non = [\"blocked\"]\nurl = \"{url}\"\n");
    let grown = thread_growth(&sink, &[]);
    eprintln!("notify: a silent webhook, 30 notifications: the server grew by {grown} threads");
    assert!(grown <= 16, "the server grew by {grown} threads");
}

/// A session bus that accepts and never answers: bounded the same way (the old code grew to
/// thousands of threads), and each call has a time limit.
#[test]
fn a_desktop_bus_that_never_answers_holds_a_bounded_number_of_threads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bus");
    let _silent = std::os::unix::net::UnixListener::bind(&path).expect("bind");
    let address = format!("unix:path={}", path.display());
    let sink = "[[notify]]\nsink = \"desktop\"\non = [\"blocked\"]\n";
    let grown = thread_growth(sink, &[("DBUS_SESSION_BUS_ADDRESS", &address)]);
    eprintln!("notify: a silent bus, 30 notifications: the server grew by {grown} threads");
    assert!(grown <= 16, "the server grew by {grown} threads");
}

/// A bus that accepts the connection and stays silent (never answers the authentication
/// handshake): each delivery gives up at its rule's timeout and drops the connection, so later
/// notifications still get their try — the sink's workers are never held for good, and the
/// server keeps answering.
#[test]
fn a_desktop_bus_that_accepts_and_stays_silent_is_dropped_at_the_timeout() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    const PANES: usize = 4;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bus");
    let listener = std::os::unix::net::UnixListener::bind(&path).expect("bind");
    let (accepted, closed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (a, c) = (accepted.clone(), closed.clone());
    // (left blocked in accept when the test ends; it holds nothing else)
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            a.fetch_add(1, Ordering::SeqCst);
            let c = c.clone();
            std::thread::spawn(move || {
                let mut sink = Vec::new();
                // read what the client says, answer nothing, until it hangs up
                let _ = stream.read_to_end(&mut sink);
                c.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    settings(
        dir.path(),
        "[[notify]]\nsink = \"desktop\"\non = [\"blocked\"]\ntimeout = \"1s\"\n",
    );
    let address = format!("unix:path={}", path.display());
    let served = Served::start_env(
        dir.path(),
        50,
        &[],
        &[("DBUS_SESSION_BUS_ADDRESS", &address)],
    );
    let mut client = served.client();
    for i in 0..PANES {
        agent(&mut client, &format!("p{i}"));
        report(&mut client, &format!("p{i}"), 1, "blocked");
    }
    wait_until(
        "every notification's connection to the silent bus dropped",
        || closed.load(Ordering::SeqCst) >= PANES,
        || {
            format!(
                "accepted {}, dropped {}",
                accepted.load(Ordering::SeqCst),
                closed.load(Ordering::SeqCst)
            )
        },
    );
    client
        .call_raw("pane.list", json!({}))
        .expect("the server answers");
}

/// An exec command that starts children and outlives its time limit: the whole process group is
/// killed, no child left behind.
#[test]
fn an_exec_past_its_timeout_is_killed_with_its_children() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pids = dir.path().join("pids");
    let script = format!(
        "sleep 100 & echo $! >> {p}; sleep 100 & echo $! >> {p}; wait",
        p = pids.display()
    );
    settings(
        dir.path(),
        &format!(
            "[[notify]]\nsink = \"exec\"\non = [\"blocked\"]\ntimeout = \"1s\"\ncommand = [\"sh\", \"-c\", {script:?}]\n"
        ),
    );
    let served = Served::start_in(dir.path(), 50);
    let mut client = served.client();
    agent(&mut client, "a");
    report(&mut client, "a", 1, "blocked");
    let started = || -> Vec<i32> {
        std::fs::read_to_string(&pids)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    };
    wait_until(
        "the command's two children",
        || started().len() == 2,
        || format!("{:?}", started()),
    );
    // Alive: the process exists and is not a zombie waiting to be reaped.
    let alive = |pid: &i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| !r.trim_start().starts_with('Z'))
        })
    };
    wait_until(
        "the command's children killed with it at its time limit",
        || !started().iter().any(alive),
        || {
            format!(
                "still running: {:?}",
                started().iter().filter(|p| alive(p)).collect::<Vec<_>>()
            )
        },
    );
}

/// A follow-up the agent had queued, taken up the moment a turn ends (its hooks: done, then
/// working again at once, then done): one `done` notification, for the end of the follow-up.
#[test]
fn a_queued_follow_up_gives_one_done_notification() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("done.jsonl");
    settings(dir.path(), &exec_to(&out, "[\"done\"]", ""));
    let served = Served::start_in(dir.path(), 50);
    let mut client = served.client();
    agent(&mut client, "q");
    report(&mut client, "q", 1, "working");
    let pane_is = |client: &mut Client, want: &str| {
        client
            .call_raw("agent.get", json!({"pane": "q"}))
            .is_ok_and(|p| p["lifecycle"] == want)
    };
    wait_until("working", || pane_is(&mut client, "working"), String::new);
    report(&mut client, "q", 2, "done");
    wait_until("done", || pane_is(&mut client, "done"), String::new);
    report(&mut client, "q", 3, "working");
    wait_until(
        "working again",
        || pane_is(&mut client, "working"),
        String::new,
    );
    report(&mut client, "q", 4, "done");
    wait_until(
        "the follow-up's done",
        || !lines(&out).is_empty(),
        || format!("{:?}", lines(&out)),
    );
    // Never a second: watch past the grace a `done` waits.
    let end = Instant::now() + Duration::from_secs(3);
    while Instant::now() < end {
        assert_eq!(lines(&out).len(), 1, "{:?}", lines(&out));
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(lines(&out)[0]["trigger"], "done");
}

/// A FIFO where the settings file should be: the server starts and serves (it hung before it
/// could bind, without a log line) and the settings are refused as not a regular file.
#[test]
fn a_fifo_settings_file_never_hangs_the_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("config/lookout/config.toml");
    std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
    nix::unistd::mkfifo(&file, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    let served = Served::start_in(dir.path(), 50);
    let info = served.client().call_raw("server.info", json!({}));
    assert!(info.is_ok(), "{info:?}");
}

/// A pane blocked before the server was killed (`kill -9`) and restored blocked after it still
/// gets its `stuck` reminders — each once, counted from when it became blocked.
#[test]
fn stuck_reminders_resume_after_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("stuck.jsonl");
    settings(
        dir.path(),
        &exec_to(&out, "[\"stuck\"]", "stuck_after = \"2s\""),
    );
    let mut served = Served::start_in(dir.path(), 50);
    let mut client = served.client();
    agent(&mut client, "s");
    report(&mut client, "s", 1, "blocked");
    let blocked_at = Instant::now();
    wait_until(
        "blocked",
        || {
            client
                .call_raw("agent.get", json!({"pane": "s"}))
                .is_ok_and(|p| p["lifecycle"] == "blocked")
        },
        String::new,
    );
    served.kill9();
    assert!(lines(&out).is_empty(), "no reminder before the restart");
    let served = Served::start_in(dir.path(), 50);
    let mut client = served.client();
    // The pane's source opens it again: it resumes blocked from the database.
    agent(&mut client, "s");
    wait_until(
        "the first reminder after the restart",
        || lines(&out).len() == 1,
        || format!("{:?}", lines(&out)),
    );
    assert!(blocked_at.elapsed() >= Duration::from_secs(2));
    wait_until(
        "the second reminder",
        || lines(&out).len() == 2,
        || format!("{:?}", lines(&out)),
    );
    assert!(
        lines(&out)
            .iter()
            .all(|l| l["trigger"] == "stuck" && l["pane"] == "s")
    );
}
