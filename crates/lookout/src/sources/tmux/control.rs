//! One tmux control-mode client (`tmux -C attach -t SESSION -f ignore-size`): the stream of what the
//! panes of one tmux session print (`%output`), the notices that panes, windows, sessions or focus
//! changed, and a channel for commands whose answers arrive in order with that stream.
//!
//! Why a client and not polling: tmux logs every command any client runs in its message log, and a
//! round of `capture-pane` per pane costs a process each; the stream costs what the panes print and
//! runs no command at all while nothing changes. A capture asked through the client that streams
//! the pane lands between the bytes printed before it and those printed after, so the bytes waiting
//! for a pane are simply replaced by the capture's repaint. Touches the `tmux` binary (one child
//! process per session) and nothing else.

use super::hub::Hub;
use crate::pty::tmux::{self, PaneInfo, Socket};
use crossbeam_channel::{Receiver, Sender, bounded};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a command's answer is waited for.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// What the answer to a command sent is for.
enum Pending {
    /// Handed to whoever waits for it.
    Answer(Sender<Answer>),
    /// A pane's screen (`capture-pane -p -e`), kept until its state follows.
    Screen(String),
    /// The state of the pane just captured: with the screen, its repaint replaces the pane's
    /// waiting bytes; `true` is sent when that happened.
    State(String, Sender<bool>),
}

/// A command's answer: its lines, and whether tmux said it failed.
#[derive(Debug, Default)]
pub struct Answer {
    pub lines: Vec<Vec<u8>>,
    pub failed: bool,
}

/// One control client, attached to one session.
pub struct ControlClient {
    id: u64,
    session: String,
    child: Child,
    stdin: Option<ChildStdin>,
    pending: Arc<Mutex<VecDeque<Pending>>>,
    alive: Arc<AtomicBool>,
}

impl ControlClient {
    /// Attaches client `id` to `session` (`$3`) of the server at `socket`, reporting to `hub`.
    pub fn attach(socket: &Socket, session: &str, id: u64, hub: Arc<Hub>) -> Option<Self> {
        let mut tmux = socket.command();
        tmux.args(["-C", "attach-session", "-f", "ignore-size", "-t", session]);
        let mut child = crate::keeper::kept(&tmux, false)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let stdout = child.stdout.take()?;
        let pending = Arc::new(Mutex::new(VecDeque::new()));
        let alive = Arc::new(AtomicBool::new(true));
        let reader = Reader {
            id,
            session: session.to_owned(),
            hub,
            pending: pending.clone(),
            alive: alive.clone(),
            screens: HashMap::new(),
        };
        let started = std::thread::Builder::new()
            .name("lookout-tmux-control".into())
            .spawn(move || reader.run(BufReader::new(stdout)));
        let client = ControlClient {
            id,
            session: session.to_owned(),
            stdin: child.stdin.take(),
            child,
            pending,
            alive,
        };
        started.is_ok().then_some(client)
    }

    /// This client's number.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The pid of its `tmux` process (as `#{client_pid}` names it), or of the keeper that runs it.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The session it is attached to.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// Whether it still streams.
    pub fn alive(&self) -> bool {
        self.alive.load(Ordering::Relaxed)
    }

    /// Sends one command line whose commands' answers are `answers`, in order.
    fn send(&mut self, line: &str, answers: Vec<Pending>) -> bool {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let Some(stdin) = self.stdin.as_mut() else {
            return false;
        };
        let n = answers.len();
        pending.extend(answers);
        let sent = stdin
            .write_all(format!("{line}\n").as_bytes())
            .and_then(|()| stdin.flush());
        if sent.is_err() {
            let keep = pending.len() - n;
            pending.truncate(keep);
            self.alive.store(false, Ordering::Relaxed);
        }
        sent.is_ok()
    }

    /// Runs `command` (one tmux command) and waits for its answer.
    pub fn call(&mut self, command: &str) -> Option<Answer> {
        let (tx, rx) = bounded(1);
        if !self.send(command, vec![Pending::Answer(tx)]) {
            return None;
        }
        rx.recv_timeout(ANSWER_WITHIN).ok()
    }

    /// Asks for a capture of `pane`: its repaint replaces the bytes waiting for it in the hub.
    /// The receiver says when (and whether) that happened.
    pub fn capture(&mut self, pane: &str) -> Option<Receiver<bool>> {
        let (tx, rx) = bounded(1);
        let line = format!(
            "capture-pane -p -e -t {pane} ; display-message -p -t {pane} '{}'",
            tmux::FORMAT
        );
        let answers = vec![
            Pending::Screen(pane.to_owned()),
            Pending::State(pane.to_owned(), tx),
        ];
        self.send(&line, answers).then_some(rx)
    }
}

impl Drop for ControlClient {
    fn drop(&mut self) {
        // Closing its input detaches a control client; a client stuck on a dead server is killed.
        self.stdin = None;
        let deadline = Instant::now() + Duration::from_millis(200);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads one client's stream until it ends.
struct Reader {
    id: u64,
    session: String,
    hub: Arc<Hub>,
    pending: Arc<Mutex<VecDeque<Pending>>>,
    alive: Arc<AtomicBool>,
    /// Captured screens waiting for their state.
    screens: HashMap<String, Vec<u8>>,
}

impl Reader {
    fn run(mut self, mut input: impl BufRead) {
        let mut line = Vec::new();
        let mut block: Option<(Vec<u8>, bool, Answer)> = None;
        loop {
            line.clear();
            match input.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            if let Some((guard, ours, answer)) = block.as_mut() {
                match end_of(text, guard) {
                    Some(failed) => {
                        answer.failed = failed;
                        let ours = *ours;
                        if let Some((_, _, answer)) = block.take().filter(|_| ours) {
                            self.answered(answer);
                        }
                    }
                    None => answer.lines.push(text.to_vec()),
                }
                continue;
            }
            if let Some(rest) = text.strip_prefix(b"%begin ") {
                // `TIME NUMBER FLAGS`: flags 1 for a command this client sent.
                let guard = rest
                    .rsplitn(2, |&b| b == b' ')
                    .nth(1)
                    .unwrap_or(rest)
                    .to_vec();
                block = Some((guard, rest.ends_with(b" 1"), Answer::default()));
            } else if self.notice(text) {
                break;
            }
        }
        self.alive.store(false, Ordering::Relaxed);
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.hub.report(|s| s.structure = true);
    }

    /// Handles a notice; `true` when the client is done (`%exit`, or moved to another session).
    fn notice(&mut self, text: &[u8]) -> bool {
        let word = text.split(|&b| b == b' ').next().unwrap_or_default();
        match word {
            b"%output" => self.output(text),
            b"%exit" => return true,
            b"%session-changed" => {
                // Its session ended and tmux moved it on: that session has (or gets) its own client.
                let session = text.split(|&b| b == b' ').nth(1).unwrap_or_default();
                return session != self.session.as_bytes();
            }
            b"%layout-change"
            | b"%window-add"
            | b"%window-close"
            | b"%unlinked-window-add"
            | b"%unlinked-window-close"
            | b"%sessions-changed"
            | b"%window-renamed"
            | b"%session-renamed" => self.hub.report(|s| s.structure = true),
            b"%window-pane-changed"
            | b"%session-window-changed"
            | b"%client-session-changed"
            | b"%client-detached" => self.hub.report(|s| s.focus = true),
            _ => {}
        }
        false
    }

    fn output(&self, text: &[u8]) {
        let mut parts = text.splitn(3, |&b| b == b' ');
        let (Some(_), Some(pane), data) = (parts.next(), parts.next(), parts.next()) else {
            return;
        };
        let Ok(pane) = std::str::from_utf8(pane) else {
            return;
        };
        self.hub
            .printed(pane, self.id, unescape(data.unwrap_or_default()));
    }

    fn answered(&mut self, answer: Answer) {
        let next = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front();
        match next {
            Some(Pending::Answer(tx)) => {
                let _ = tx.send(answer);
            }
            Some(Pending::Screen(pane)) if !answer.failed => {
                let mut screen = Vec::new();
                for line in answer.lines {
                    screen.extend(line);
                    screen.push(b'\n');
                }
                self.screens.insert(pane, screen);
            }
            Some(Pending::Screen(_)) => {
                // A failed command ends its line (the pane is gone): its state is not answered.
                let state = self
                    .pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .pop_front();
                if let Some(Pending::State(_, tx)) = state {
                    let _ = tx.send(false);
                }
            }
            None => {}
            Some(Pending::State(pane, tx)) => {
                let screen = self.screens.remove(&pane);
                let info = answer
                    .lines
                    .first()
                    .and_then(|l| PaneInfo::parse(&String::from_utf8_lossy(l)).ok());
                let (Some(screen), Some(info), false) = (screen, info, answer.failed) else {
                    let _ = tx.send(false);
                    return;
                };
                let repaint = tmux::repaint(&info, &screen);
                self.hub.report(|s| {
                    s.output.insert(pane, repaint);
                });
                let _ = tx.send(true);
            }
        }
    }
}

/// Whether `text` ends the block begun with `guard` (`TIME NUMBER`): `Some(failed)`.
fn end_of(text: &[u8], guard: &[u8]) -> Option<bool> {
    let (failed, rest) = if let Some(rest) = text.strip_prefix(b"%end ") {
        (false, rest)
    } else {
        (true, text.strip_prefix(b"%error ")?)
    };
    (rest.starts_with(guard) && rest.get(guard.len()) == Some(&b' ')).then_some(failed)
}

/// `%output` data as the pane printed it: tmux writes bytes below space and `\` as `\ooo`.
pub fn unescape(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    while i < data.len() {
        let octal = data
            .get(i + 1..i + 4)
            .filter(|d| data[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                let value = d.iter().fold(0u32, |v, b| v * 8 + u32::from(b - b'0'));
                out.push(u8::try_from(value).unwrap_or(u8::MAX));
                i += 4;
            }
            None => {
                out.push(data[i]);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_unescaped_as_tmux_escapes_it() {
        assert_eq!(unescape(b"a\\015\\012\\033[1mb\\134c"), b"a\r\n\x1b[1mb\\c");
        assert_eq!(unescape(b"trailing\\01"), b"trailing\\01");
        assert_eq!(unescape("é".as_bytes()), "é".as_bytes());
    }

    #[test]
    fn a_block_ends_only_with_its_own_guard() {
        assert_eq!(end_of(b"%end 17 42 1", b"17 42"), Some(false));
        assert_eq!(end_of(b"%error 17 42 1", b"17 42"), Some(true));
        assert_eq!(end_of(b"%end 17 420 1", b"17 42"), None);
        assert_eq!(end_of(b"%end of my screen", b"17 42"), None);
    }
}
