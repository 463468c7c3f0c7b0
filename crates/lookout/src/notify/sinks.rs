//! The sinks: where one notification goes. Each sink (a command, a URL, the bus, tmux) delivers on
//! a bounded pool of its own (`pool`: 2 workers, 64 waiting, the oldest dropped past that), and
//! every delivery has a time limit, so a hung command, web server or bus holds up nothing but its
//! own two threads.
//!
//! - `exec`: the command, in a process group of its own, the notification JSON on stdin,
//!   `LOOKOUT_*` in its environment; the whole group is killed after `timeout` (30 s).
//! - `webhook`: an HTTP/1.1 POST of the JSON to an `http://` URL (ntfy, Home Assistant, a local
//!   relay): each connect/read/write 5 s, three tries, all within `timeout` (15 s).
//! - `tmux` / `bell`: `display-message` on, or a BEL to the terminal of, every tmux client showing
//!   the pane's session.
//! - `desktop`: `Notify` on the session bus's `org.freedesktop.Notifications` (zbus), connection,
//!   handshake and call all within `timeout` (5 s).
//!
//! Also what "the person is looking at it" means for a tmux pane: it is the active pane of the
//! window an attached client shows. Touches child processes, loopback TCP, tmux and the session bus.

use super::pool;
use super::settings::{Rule, Sink};
use crate::event::Event;
use crate::panes::PaneState;
use crate::pty::tmux::Socket;
use serde_json::Value;
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long an `exec` command may run (unless its rule says otherwise).
const EXEC_LIMIT: Duration = Duration::from_secs(30);
/// A webhook's connect/read/write timeout, and its tries.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(5);
const WEBHOOK_TRIES: u32 = 3;
/// How long a webhook may take over all its tries (unless its rule says otherwise).
const WEBHOOK_LIMIT: Duration = Duration::from_secs(15);
/// How long a desktop notification's bus calls may take (unless its rule says otherwise).
const DESKTOP_LIMIT: Duration = Duration::from_secs(5);

/// The notification JSON.
pub fn body(event: Option<&Event>, state: &PaneState, trigger: &str) -> Value {
    super::describe(event, state, trigger)
}

/// Sends one notification through `rule`'s sink, in the background (its kind's pool).
pub fn deliver(rule: &Rule, state: &PaneState, body: &Value) {
    let (sink, state, body) = (rule.sink.clone(), state.clone(), body.clone());
    let (limit, template) = (rule.timeout, rule.message.clone());
    let pool = match &sink {
        // Delivered by the notifier itself, to a listening terminal.
        Sink::Terminal(_) => return,
        Sink::Exec(command) => pool::of(&format!("exec {command:?}")),
        Sink::Webhook(url) => pool::of(&format!("webhook {url}")),
        Sink::Desktop => pool::of("desktop"),
        Sink::Tmux | Sink::Bell => pool::of("tmux"),
    };
    pool.submit(move || {
        // Asked of tmux here, on the sink's own thread: the notifier never waits on tmux.
        let named = template.replace("{name}", &friendly_name(&state.pane));
        let message = fill(&named, &state, body["trigger"].as_str().unwrap_or(""));
        let result = match &sink {
            Sink::Exec(command) => exec(command, &state, &body, limit.unwrap_or(EXEC_LIMIT)),
            Sink::Webhook(url) => webhook(url, &body, limit.unwrap_or(WEBHOOK_LIMIT)),
            Sink::Tmux => tmux_clients(&state.pane, |tmux, client, _| {
                tmux_run(tmux, &["display-message", "-c", client, &message])
            }),
            Sink::Terminal(_) => Ok(()),
            Sink::Desktop => desktop(&state, &message, limit.unwrap_or(DESKTOP_LIMIT)),
            Sink::Bell => tmux_clients(&state.pane, |_, _, tty| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(tty)
                    .and_then(|mut t| t.write_all(b"\x07"))
                    .map_err(|e| format!("{tty}: {e}"))
            }),
        };
        if let Err(e) = result {
            eprintln!(
                "lookout: notification for {} not delivered: {e}",
                state.pane
            );
        }
    });
}

/// The name a person knows a pane by: a tmux pane's place and window (`work:2.0 api`, as the
/// board shows it), else its lookout id.
pub fn friendly_name(pane: &str) -> String {
    let Some((socket, id)) = crate::pty::tmux::Socket::of_pane_id(pane) else {
        return pane.to_owned();
    };
    let place = "#{session_name}:#{window_index}.#{pane_index} #{window_name}";
    socket
        .command()
        .args(["display-message", "-p", "-t", id, place])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| pane.to_owned())
}

/// `{pane}`, `{kind}`, `{state}`, `{labels}` filled in, and `{name}` as the pane id (a sink's
/// delivery fills it with the tmux name first: that asks tmux).
pub fn fill(template: &str, state: &PaneState, trigger: &str) -> String {
    template
        .replace("{name}", &state.pane)
        .replace("{pane}", &state.pane)
        .replace("{kind}", state.kind.as_deref().unwrap_or("-"))
        .replace("{state}", trigger)
        .replace("{labels}", &state.labels.join(", "))
}

fn exec(
    command: &[String],
    state: &PaneState,
    body: &Value,
    limit: Duration,
) -> Result<(), String> {
    let Some((program, args)) = command.split_first() else {
        return Err("empty command".into());
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        // The server's own start-up variable is not the command's business.
        .env_remove(crate::private::SPAWNED_AT)
        .env("LOOKOUT_PANE", &state.pane)
        .env("LOOKOUT_KIND", state.kind.as_deref().unwrap_or(""))
        .env("LOOKOUT_STATE", state.lifecycle.name())
        .env("LOOKOUT_TRIGGER", body["trigger"].as_str().unwrap_or(""))
        .env("LOOKOUT_CAUSE", state.cause.as_deref().unwrap_or(""))
        .env("LOOKOUT_LABELS", state.labels.join(", "))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        // A group of its own: at its time limit everything it started is killed with it.
        .process_group(0);
    if let Some((_, pane)) = tmux_pane(&state.pane) {
        cmd.env("LOOKOUT_TMUX_TARGET", pane);
    }
    let mut child = cmd.spawn().map_err(|e| format!("{program}: {e}"))?;
    if let Some(stdin) = child.stdin.take() {
        // Written from a thread of its own: a command that never reads its stdin must not hold
        // this worker past the time limit.
        let body = body.to_string();
        let _ = std::thread::Builder::new()
            .name("lookout-exec-in".into())
            .spawn(move || {
                let mut stdin = stdin;
                let _ = stdin.write_all(body.as_bytes());
            });
    }
    let end = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("{program} exited with {status}")),
            Ok(None) if Instant::now() >= end => {
                if let Ok(pid) = i32::try_from(child.id()) {
                    let group = nix::unistd::Pid::from_raw(pid);
                    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
                }
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{program} ran over {limit:?}; killed with everything it started"
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// `Notify` on the session bus's `org.freedesktop.Notifications`: summary "lookout", the message as
/// the body, critical urgency for a pane that waits for the person. The whole of it — connecting,
/// the bus's authentication handshake (a bus that accepts and never answers hangs there), the
/// call — within `limit`; past it the connection is dropped.
fn desktop(state: &PaneState, message: &str, limit: Duration) -> Result<(), String> {
    use futures_util::future::{Either, select};
    use std::collections::HashMap;
    let urgency: u8 = if state.input_required { 2 } else { 1 };
    let notify = async {
        let bus = zbus::connection::Builder::session()
            .map(|b| b.method_timeout(limit))
            .map_err(|e| format!("no session bus: {e}"))?
            .build()
            .await
            .map_err(|e| format!("no session bus: {e}"))?;
        let mut hints: HashMap<&str, zbus::zvariant::Value<'_>> = HashMap::new();
        hints.insert("urgency", urgency.into());
        hints.insert("category", "im.received".into());
        let actions: Vec<&str> = Vec::new();
        bus.call_method(
            Some("org.freedesktop.Notifications"),
            "/org/freedesktop/Notifications",
            Some("org.freedesktop.Notifications"),
            "Notify",
            &(
                "lookout", 0u32, "", "lookout", message, actions, hints, -1i32,
            ),
        )
        .await
        .map(drop)
        .map_err(|e| format!("org.freedesktop.Notifications: {e}"))
    };
    let late = async_io::Timer::after(limit);
    match async_io::block_on(select(std::pin::pin!(notify), late)) {
        Either::Left((delivered, _)) => delivered,
        Either::Right(_) => Err(format!(
            "the session bus did not answer within {limit:?}; connection dropped"
        )),
    }
}

fn webhook(url: &str, body: &Value, limit: Duration) -> Result<(), String> {
    let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
    let (authority, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_owned()), |(a, p)| (a, format!("/{p}")));
    let payload = body.to_string();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\nUser-Agent: lookout/{}\r\n\r\n{payload}",
        payload.len(),
        env!("CARGO_PKG_VERSION")
    );
    let mut last = String::new();
    let end = Instant::now() + limit;
    for attempt in 0..WEBHOOK_TRIES {
        if attempt > 0 {
            std::thread::sleep(Duration::from_secs(u64::from(attempt)));
        }
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("{url}: no answer within {limit:?} ({last})"));
        }
        match post(authority, &request, left.min(WEBHOOK_TIMEOUT)) {
            Ok(status) if (200..300).contains(&status) => return Ok(()),
            // A client error will not get better by trying again.
            Ok(status) if (400..500).contains(&status) => {
                return Err(format!("{url}: HTTP {status}"));
            }
            Ok(status) => last = format!("{url}: HTTP {status}"),
            Err(e) => last = format!("{url}: {e}"),
        }
    }
    Err(last)
}

/// One POST; the response's status code.
fn post(authority: &str, request: &str, timeout: Duration) -> std::io::Result<u16> {
    use std::net::ToSocketAddrs as _;
    let addr = authority
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::other("no address"))?;
    let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    stream.write_all(request.as_bytes())?;
    let mut head = [0u8; 64];
    let n = stream.read(&mut head)?;
    let line = String::from_utf8_lossy(&head[..n]);
    line.split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP response: {line:?}")))
}

fn tmux_pane(pane: &str) -> Option<(Socket, &str)> {
    Socket::of_pane_id(pane)
}

fn tmux_run(tmux: &Socket, args: &[&str]) -> Result<(), String> {
    let Socket::Path(_) = tmux else {
        return Err("no tmux socket".into());
    };
    let out = tmux
        .command()
        .args(args)
        .output()
        .map_err(|e| format!("tmux: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "tmux {}: {}",
            args[0],
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn tmux_output(tmux: &Socket, args: &[&str]) -> Option<String> {
    let Socket::Path(_) = tmux else {
        return None;
    };
    let out = tmux.command().args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `each(tmux, client, client_tty)` for every client showing the session of `pane`.
fn tmux_clients(
    pane: &str,
    each: impl Fn(&Socket, &str, &str) -> Result<(), String>,
) -> Result<(), String> {
    let (tmux, id) = tmux_pane(pane).ok_or("not a tmux pane")?;
    let session = tmux_output(&tmux, &["display-message", "-p", "-t", id, "#{session_id}"])
        .ok_or("the pane is gone")?;
    let clients = tmux_output(
        &tmux,
        &[
            "list-clients",
            "-F",
            "#{client_name}\t#{client_tty}\t#{session_id}",
        ],
    )
    .unwrap_or_default();
    let mut shown = 0;
    for line in clients.lines() {
        let mut f = line.split('\t');
        let (Some(client), Some(tty), Some(s)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if s == session.trim() {
            each(&tmux, client, tty)?;
            shown += 1;
        }
    }
    if shown == 0 {
        return Err("no tmux client shows that session".into());
    }
    Ok(())
}
