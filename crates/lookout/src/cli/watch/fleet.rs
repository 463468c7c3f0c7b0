//! `lookout watch --fleet URL [--once] [--all]`: the board of every machine's panes (see
//! docs/fleet.md),
//! drawn by the same renderer as the local board with a MACHINE column; a machine whose heartbeat
//! is older than its TTL (or withdrawn) shows `(offline)`. Read-only: it starts no server, opens
//! no pane and marks nothing seen. Keys: `j`/`k` or arrows select, `q` quits. Touches the outer
//! terminal (as the local board does) and NATS (through `crate::fleet::board`).

use super::render::{self, View};
use super::{Screen, Wake};
use crate::cli::fleet::NatsArgs;
use crate::fleet::board::{self, Picture};
use crate::panes::PaneState;
use crate::pty::terminal::{self, WindowSize};
use std::collections::HashMap;
use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime};

/// One frame's rows: ids are `machine/pane` (unique across machines), named by their pane id.
struct Rows {
    panes: Vec<PaneState>,
    names: HashMap<String, String>,
    machines: HashMap<String, String>,
}

fn rows(picture: &Picture, all: bool) -> Rows {
    let now = Instant::now();
    let mut rows = Rows {
        panes: Vec::new(),
        names: HashMap::new(),
        machines: HashMap::new(),
    };
    for p in picture.panes(now) {
        if !all && crate::panes::is_plain(p.state) {
            continue;
        }
        let mut state = p.state.clone();
        let id = format!("{}/{}", p.machine, state.pane);
        rows.names
            .insert(id.clone(), std::mem::take(&mut state.pane));
        let machine = if p.online {
            p.machine.to_owned()
        } else {
            format!("{} (offline)", p.machine)
        };
        rows.machines.insert(id.clone(), machine);
        state.pane = id;
        rows.panes.push(state);
    }
    crate::panes::by_urgency(&mut rows.panes);
    rows
}

fn frame(picture: &Picture, rows: &Rows, selected: usize, size: WindowSize, color: bool) -> String {
    let now = Instant::now();
    let machines = picture.machines(now);
    let online = machines.iter().filter(|(_, up)| *up).count();
    let status = match &picture.problem {
        Some(problem) if !picture.synced => format!("fleet: {problem}"),
        _ => format!("fleet: {} machine(s), {online} online", machines.len()),
    };
    render::frame(&View {
        panes: &rows.panes,
        selected,
        now: SystemTime::now(),
        cols: size.cols,
        rows: size.rows,
        color,
        status: &status,
        names: &rows.names,
        machines: Some(&rows.machines),
    })
}

/// Runs the fleet board.
pub fn run(
    url: &str,
    nats: NatsArgs,
    once: bool,
    all: bool,
    notify: bool,
) -> anyhow::Result<ExitCode> {
    crate::fleet::settings::check_url(url).map_err(anyhow::Error::msg)?;
    let auth = nats.auth(&crate::cli::fleet::settings()?);
    if once {
        let picture =
            board::snapshot(url, &auth, Duration::from_secs(10)).map_err(anyhow::Error::msg)?;
        let tty = std::io::stdout().is_terminal();
        let size = terminal::window_size().unwrap_or(WindowSize::FALLBACK);
        let color = crate::cli::color::wanted(tty);
        let text = frame(&picture, &rows(&picture, all), 0, size, color);
        let text = if tty {
            text
        } else {
            text.replace("\r\n", "\n")
        };
        // A reader that went away (`| head`) is not an error worth a panic.
        let _ = writeln!(std::io::stdout(), "{text}");
        return Ok(ExitCode::SUCCESS);
    }
    let updates = board::watch(url, &auth)?;
    let (tx, wakes) = crossbeam_channel::unbounded();
    super::keys(tx.clone());
    super::signals(tx)?;
    let mut picture = Picture::default();
    let mut selected: Option<String> = None;
    let notifier = if notify { Some(Remote::start()?) } else { None };
    let apply = |picture: &mut Picture, update| {
        let moved = picture.apply(update, Instant::now());
        if let (Some(notifier), Some(moved)) = (&notifier, moved) {
            notifier.moved(moved);
        }
    };
    let screen = Screen::enter()?;
    loop {
        while let Ok(update) = updates.try_recv() {
            apply(&mut picture, update);
        }
        let shown = rows(&picture, all);
        let index = selected
            .as_ref()
            .and_then(|id| shown.panes.iter().position(|p| &p.pane == id))
            .unwrap_or(0);
        let size = terminal::window_size().unwrap_or(WindowSize::FALLBACK);
        let color = crate::cli::color::wanted(true);
        let text = frame(&picture, &shown, index, size, color).replace("\r\n", "\x1b[K\r\n");
        let mut out = std::io::stdout().lock();
        out.write_all(format!("\x1b[H{text}\x1b[K\x1b[J").as_bytes())?;
        out.flush()?;
        drop(out);
        crossbeam_channel::select! {
            recv(updates) -> update => match update {
                Ok(update) => apply(&mut picture, update),
                Err(_) => break,
            },
            recv(wakes) -> wake => match wake {
                Ok(Wake::Keys(bytes)) => {
                    let Some(delta) = keys(&bytes) else { break };
                    let last = shown.panes.len().saturating_sub(1);
                    let i = index.saturating_add_signed(delta).min(last);
                    selected = shown.panes.get(i).map(|p| p.pane.clone());
                }
                Ok(Wake::Quit) | Err(_) => break,
                Ok(_) => {}
            },
            // A machine goes offline by silence: redraw each second.
            default(Duration::from_secs(1)) => {}
        }
    }
    drop(screen);
    Ok(ExitCode::SUCCESS)
}

/// The notifier of a fleet board: remote panes' lifecycle changes, as the bucket watch saw them,
/// go through the settings file's rules like the local server's events (pane ids are
/// `machine/pane`; its dedupe mark is a file of its own beside the server's).
struct Remote {
    notifier: crate::notify::Notifier,
}

impl Remote {
    fn start() -> anyhow::Result<Remote> {
        let dir = crate::server::state_dir().join("fleet-board");
        crate::private::own_dir(&dir)?;
        let notifier = crate::notify::start(crate::notify::settings::default_path(), dir)?;
        Ok(Remote { notifier })
    }

    fn moved(&self, moved: board::Moved) {
        let mut state = moved.state;
        state.pane = format!("{}/{}", moved.machine, state.pane);
        // Numbered by the clock: increasing across restarts, so the dedupe mark holds.
        let seq = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
        let event = crate::event::Event {
            seq: crate::event::EventSeq(seq),
            time: SystemTime::now(),
            pane: std::sync::Arc::from(state.pane.as_str()),
            cause: None,
            change: crate::event::Change::Lifecycle {
                from: moved.from,
                to: state.lifecycle,
                labels: state.labels.clone(),
            },
        };
        self.notifier.send(vec![(event, Some(state))]);
    }
}

/// How far typed keys move the selection; `None` on `q`, Ctrl-C or Ctrl-D.
fn keys(bytes: &[u8]) -> Option<isize> {
    let mut delta = 0;
    let mut i = 0;
    while i < bytes.len() {
        match &bytes[i..] {
            [b'\x1b', b'[' | b'O', b'A', ..] => {
                delta -= 1;
                i += 2;
            }
            [b'\x1b', b'[' | b'O', b'B', ..] => {
                delta += 1;
                i += 2;
            }
            [b'k', ..] => delta -= 1,
            [b'j', ..] => delta += 1,
            [b'q' | b'Q' | 3 | 4, ..] => return None,
            _ => {}
        }
        i += 1;
    }
    Some(delta)
}
