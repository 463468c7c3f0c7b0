//! `lookout watch [--demo] [--once]`: the live board, and lookout's one-command start.
//!
//! Makes sure the per-user server runs (starting it detached if none answers), has it watch the
//! tmux server when one runs (the server's own source: a board only views, so any number of boards
//! can be open), optionally adds demo panes, then shows every pane full-screen, repainting on each
//! event (subscribe) and once a second for the "since" column. A server that stops answering (a
//! crash, `kill -9`) is started again the way every client starts it, and the footer says so.
//! Rows are in urgency order (blocked, done-unread, working, idle; longest waiting first), plain
//! shells hidden unless `--all`, tmux panes named `session:window.pane window-name`. Keys: `j`/`k`
//! or arrows select, Enter goes to the pane (tmux), `s` marks it seen, `e` shows its explanation
//! (the whole cause, the rules) until the next key, `q` quits. Touches the outer
//! terminal (alternate screen, raw mode, always restored), the server socket, tmux and PTYs (demo).

pub mod demo;
mod fleet;
mod input;
pub mod render;

use crate::cli::daemon;
use crate::client::{Client, panes};
use crate::panes::PaneState;
use crate::printable::printable;
use crate::protocol::params::{AgentExplain, PaneSeen};
use crate::pty::terminal::{self, RawModeGuard, WindowSize};
use crate::pty::tmux::{Socket, Tmux};
use crossbeam_channel::{Receiver, RecvTimeoutError};
use input::{Wake, events, keys, notes, signals};
use render::View;
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

/// Arguments of `lookout watch`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Add demo panes that replay bundled recordings (or a scripted fake agent) through real PTYs.
    #[arg(long)]
    demo: bool,
    /// With --demo: always the scripted fake agents, even where recordings exist (for tests).
    #[arg(long, hide = true)]
    demo_scripted: bool,
    /// Print one frame and exit.
    #[arg(long)]
    once: bool,
    /// The server's socket [default: $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Do not attach the user's tmux server even when one is running.
    #[arg(long)]
    no_tmux: bool,
    /// Also show plain shells (panes with no agent that ask nothing).
    #[arg(long)]
    all: bool,
    /// The fleet board: every machine's panes from this NATS server.
    #[arg(long, value_name = "URL", conflicts_with_all = ["demo", "socket"])]
    fleet: Option<String>,
    /// With --fleet: notify (the settings file's `[[notify]]` rules) for every machine's panes
    /// from this machine — for panes whose own server does not notify where you are.
    #[arg(long, requires = "fleet")]
    notify: bool,
    #[command(flatten)]
    nats: super::fleet::NatsArgs,
}

/// Runs `lookout watch`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(url) = &args.fleet {
        return fleet::run(url, args.nats, args.once, args.all, args.notify);
    }
    let socket = args
        .socket
        .or_else(crate::server::env_socket)
        .unwrap_or_else(crate::server::default_socket_path);
    let mut client = daemon::connect(&socket)?;
    let mut status = String::new();
    if let Some(line) = super::skipped_manifests(&mut client) {
        status.push_str(&line);
        status.push_str("  ");
    }
    let tmux = Tmux::new(super::tmux::chosen(None));
    let mut watched = None;
    if let (false, Ok((path, _))) = (args.no_tmux, tmux.server()) {
        super::tmux::attach(&mut client, &path, false)?;
        watched = Some(path.clone());
        status.push_str("tmux watched  ");
    }
    let _demo = if args.demo {
        let demo = demo::start(&socket, args.demo_scripted)?;
        status.push_str(&demo.description);
        Some(demo)
    } else {
        None
    };
    let mut board = Board {
        client,
        panes: Vec::new(),
        names: HashMap::new(),
        selected: None,
        status,
        problem: None,
        notice: None,
        all: args.all,
        watched,
        explained: None,
    };
    if args.once {
        // A single frame should already show the tmux panes (of a server just restarted too); a
        // server that does not answer is an error, not an empty board.
        super::tmux::wait_first_rounds(&mut board.client, board.watched.as_deref())?;
        board.refresh(&socket);
        // Into a pipe: no colours, plain newlines.
        let tty = std::io::stdout().is_terminal();
        let size = terminal::window_size().unwrap_or(WindowSize::FALLBACK);
        let frame = board.frame(size, crate::cli::color::wanted(tty));
        let text = if tty {
            frame
        } else {
            frame.replace("\r\n", "\n")
        };
        // A reader that went away (`| head`) is not an error worth a panic.
        let _ = writeln!(std::io::stdout(), "{text}");
        return Ok(ExitCode::SUCCESS);
    }
    interactive(&socket, &mut board)?;
    Ok(ExitCode::SUCCESS)
}

/// What the board shows and the connection it reads through.
struct Board {
    client: Client,
    /// In urgency order (blocked, done-unread, working, idle; longest waiting first).
    panes: Vec<PaneState>,
    /// `work:1.0 api` for tmux panes.
    names: HashMap<String, String>,
    /// The selected pane's id, so the selection follows the pane when rows come and go.
    selected: Option<String>,
    status: String,
    /// Shown in the footer until the server answers again.
    problem: Option<String>,
    /// Shown in the footer until the next key (why Enter could not go there).
    notice: Option<String>,
    /// Show plain shells too.
    all: bool,
    /// The tmux server the board had the server watch (watched again by a restarted server).
    watched: Option<PathBuf>,
    /// The selected pane's explanation (`e`), shown instead of the rows until the next key.
    explained: Option<Vec<String>>,
}

impl Board {
    /// Reads every pane's state (`pane.list`); a lost server is shown, and reconnected next time.
    fn refresh(&mut self, socket: &Path) {
        match panes(&mut self.client) {
            Ok((_, mut panes)) => {
                if !self.all {
                    panes.retain(|p| !crate::panes::is_plain(p));
                }
                crate::panes::by_urgency(&mut panes);
                self.names = places(&panes);
                self.panes = panes;
                self.problem = None;
            }
            _ => match Client::connect(socket) {
                Ok(client) => self.client = client,
                Err(_) => self.restart(socket),
            },
        }
    }

    /// Nothing answers on the socket (the server crashed or was killed): start it again, as every
    /// client does (not after a deliberate `lookout stop`), have it watch what the board had it
    /// watch, and say so.
    fn restart(&mut self, socket: &Path) {
        match daemon::reconnect(socket) {
            Ok(mut client) => {
                if let Some(path) = &self.watched {
                    let _ = super::tmux::attach(&mut client, path, false);
                }
                self.client = client;
                self.problem = None;
                let now = crate::event::rfc3339(SystemTime::now());
                let at = now.get(11..19).unwrap_or(&now);
                self.notice = Some(format!(
                    "the server had stopped answering: restarted it at {at} UTC"
                ));
            }
            Err(err) => self.problem = Some(format!("server lost: {err:#}")),
        }
    }

    /// Enter: brings the selected tmux pane in front of this terminal's tmux client.
    fn jump(&mut self) {
        let Some(pane) = self.panes.get(self.index()) else {
            return;
        };
        self.notice = jump(&pane.pane).err();
    }

    fn index(&self) -> usize {
        self.selected
            .as_ref()
            .and_then(|id| self.panes.iter().position(|p| &p.pane == id))
            .unwrap_or(0)
    }

    fn select(&mut self, delta: isize) {
        let last = self.panes.len().saturating_sub(1);
        let i = self.index().saturating_add_signed(delta).min(last);
        self.selected = self.panes.get(i).map(|p| p.pane.clone());
    }

    /// `e`: the selected pane's explanation (`lookout explain PANE` without the screen text): the
    /// rules, the winner and the whole cause, which the CAUSE column may cut.
    fn explain(&mut self) {
        let Some(pane) = self.panes.get(self.index()).map(|p| p.pane.clone()) else {
            return;
        };
        match self.client.call(&AgentExplain { pane: pane.clone() }) {
            Ok(x) => {
                let mut lines = vec![format!("lookout explain {pane}"), String::new()];
                lines.extend(crate::cli::explain::summary(&pane, &x));
                lines.push(String::new());
                lines.push("any key: back to the board".to_owned());
                self.explained = Some(lines);
            }
            Err(e) => self.notice = Some(format!("explain {pane}: {e}")),
        }
    }

    fn mark_seen(&mut self) {
        if let Some(pane) = self.panes.get(self.index()) {
            let seen = PaneSeen {
                pane: pane.pane.clone(),
                via: None,
            };
            let _ = self.client.call(&seen);
        }
    }

    fn frame(&self, size: WindowSize, color: bool) -> String {
        if let Some(lines) = &self.explained {
            // wrapped, never cut: the point is to read the whole cause
            let width = usize::from(size.cols.max(1));
            let mut rows = Vec::new();
            for line in lines {
                let chars: Vec<char> = printable(line).chars().collect();
                rows.extend(chars.chunks(width).map(|c| c.iter().collect::<String>()));
                if chars.is_empty() {
                    rows.push(String::new());
                }
            }
            rows.truncate(usize::from(size.rows.max(1)));
            return rows.join("\r\n");
        }
        render::frame(&View {
            panes: &self.panes,
            selected: self.index(),
            now: SystemTime::now(),
            cols: size.cols,
            rows: size.rows,
            color,
            status: self
                .problem
                .as_deref()
                .or(self.notice.as_deref())
                .unwrap_or(&self.status),
            names: &self.names,
            machines: None,
        })
    }
}

/// `work:1.0 api` for every tmux pane among `panes`: one `list-panes` per tmux server.
pub fn places(panes: &[PaneState]) -> HashMap<String, String> {
    let mut by_server: HashMap<Socket, HashMap<String, (String, String)>> = HashMap::new();
    let mut names = HashMap::new();
    for pane in panes {
        let Some((socket, id)) = Socket::of_pane_id(&pane.pane) else {
            continue;
        };
        let places = by_server
            .entry(socket.clone())
            .or_insert_with(|| Tmux::new(socket).places());
        if let Some((place, window)) = places.get(id) {
            names.insert(pane.pane.clone(), format!("{place} {window}"));
        }
    }
    names
}

/// Brings a tmux pane in front of the tmux client this process runs in.
pub fn jump(pane: &str) -> Result<(), String> {
    let (socket, id) =
        Socket::of_pane_id(pane).ok_or_else(|| format!("{pane} is not a tmux pane"))?;
    if std::env::var_os("TMUX").is_none() {
        return Err("not inside tmux: nothing to switch".into());
    }
    Tmux::new(socket).jump(id).map_err(|e| e.to_string())
}

/// The alternate screen and raw mode, left on every way out (return, error, panic unwinding).
struct Screen {
    _raw: Option<RawModeGuard>,
}

impl Screen {
    fn enter() -> std::io::Result<Screen> {
        let raw = if terminal::stdin_is_tty() {
            Some(RawModeGuard::enter()?)
        } else {
            None
        };
        let mut out = std::io::stdout();
        out.write_all(b"\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J")?;
        out.flush()?;
        Ok(Screen { _raw: raw })
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let mut out = std::io::stdout();
        let _ = out.write_all(b"\x1b[0m\x1b[?25h\x1b[?1049l");
        let _ = out.flush();
    }
}

fn interactive(socket: &Path, board: &mut Board) -> anyhow::Result<()> {
    let (tx, rx) = crossbeam_channel::unbounded();
    keys(tx.clone());
    events(socket, tx.clone());
    notes(socket, tx.clone());
    signals(tx)?;
    let screen = Screen::enter()?;
    loop {
        board.refresh(socket);
        let size = terminal::window_size().unwrap_or(WindowSize::FALLBACK);
        let color = crate::cli::color::wanted(true);
        let frame = board.frame(size, color).replace("\r\n", "\x1b[K\r\n");
        let mut out = std::io::stdout().lock();
        out.write_all(format!("\x1b[H{frame}\x1b[K\x1b[J").as_bytes())?;
        out.flush()?;
        drop(out);
        if !wait(&rx, board) {
            break;
        }
    }
    drop(screen);
    Ok(())
}

/// Waits up to a second for something to happen; false when the board should close.
fn wait(rx: &Receiver<Wake>, board: &mut Board) -> bool {
    let wake = match rx.recv_timeout(Duration::from_secs(1)) {
        Ok(wake) => wake,
        Err(RecvTimeoutError::Timeout) => return true,
        Err(RecvTimeoutError::Disconnected) => return false,
    };
    match wake {
        Wake::Changed => true,
        Wake::Notify(bytes) => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&bytes).and_then(|()| out.flush());
            true
        }
        Wake::Quit => false,
        Wake::Keys(bytes) => on_keys(&bytes, board),
    }
}

/// Applies typed keys; false on `q`, Ctrl-C or Ctrl-D.
fn on_keys(bytes: &[u8], board: &mut Board) -> bool {
    board.notice = None;
    if board.explained.take().is_some() {
        // any key leaves the explanation (q still quits)
        return !matches!(bytes.first(), Some(b'q' | b'Q' | 3 | 4));
    }
    let mut i = 0;
    while i < bytes.len() {
        match &bytes[i..] {
            [b'\x1b', b'[', b'A', ..] | [b'\x1b', b'O', b'A', ..] => {
                board.select(-1);
                i += 2;
            }
            [b'\x1b', b'[', b'B', ..] | [b'\x1b', b'O', b'B', ..] => {
                board.select(1);
                i += 2;
            }
            [b'k', ..] => board.select(-1),
            [b'j', ..] => board.select(1),
            [b's', ..] => board.mark_seen(),
            [b'e', ..] => board.explain(),
            [b'\r' | b'\n', ..] => board.jump(),
            [b'q' | b'Q' | 3 | 4, ..] => return false,
            _ => {}
        }
        i += 1;
    }
    true
}
