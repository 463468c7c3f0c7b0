//! The tmux source: every pane of one tmux server as a lookout pane.
//!
//! The panes are streamed: a control client per session (`watch`, `control`) hands over what each
//! pane prints as it prints it, and the poller feeds those bytes like a PTY's. A pane is captured
//! (a repaint with the mode, cursor and title tmux reports with it) only when it is opened,
//! resized or changes hands; the panes are listed again only when tmux says something changed.
//! So a pane that prints nothing costs nothing, and no tmux command runs while nothing changes.
//! Without any control client (none could attach) every pane is listed and captured each round,
//! in one tmux process.
//! Panes carry the tmux server's instance (pid + start time), so a new tmux server's `%2` never
//! resumes the old one's state. A pane that has been the active pane of a window an attached client
//! shows for two rounds in a row has been seen (see docs/notify.md). With options on, states are
//! written back
//! as `@lookout_*` options (`tmux_options`). Touches the tmux CLI, `/proc` and the server socket.

mod control;
mod hub;
mod options;
mod watch;

use super::drive::Typist;
use super::{Listed, Next, PaneSource};
use crate::client::{Client, ClientError};
use crate::protocol::params;
use crate::protocol::results::Snapshot;
use crate::pty::probe::ProcFs;
use crate::pty::tmux::{self, PaneInfo, Tmux};
use options::{self as tmux_options, Options};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use watch::{Listing, Watch};

/// How often a streamed pane that printed nothing is probed in `/proc` (what prints is probed
/// each round).
const QUIET_PROBE: Duration = Duration::from_secs(5);

/// How long output is gathered after it wakes the source, so a screen drawn in several writes is
/// fed (and read) once.
const GATHER: Duration = Duration::from_millis(15);

/// How the server steers a running source.
#[derive(Debug, Default)]
pub struct Control {
    /// Stop (the server is stopping).
    pub stop: Arc<AtomicBool>,
    /// Close every pane and end (the tmux server is no longer to be watched).
    pub close: Arc<AtomicBool>,
    /// Start writing options.
    pub options_on: Arc<AtomicBool>,
    /// Rounds completed, counted by the source.
    pub rounds: Arc<AtomicU64>,
}

/// One tmux server as a pane source.
pub struct TmuxSource {
    tmux: Tmux,
    proc: ProcFs,
    control: Control,
    options: Option<Options>,
    /// The tmux server instance the panes belong to (`pid@start`).
    instance: Option<String>,
    /// The last listing, by tmux pane id (a capture is repainted with its mode and cursor).
    infos: HashMap<String, PaneInfo>,
    /// Rounds in a row tmux did not answer.
    away: u32,
    /// The tmux panes attached clients showed at the last round.
    focused: Vec<String>,
    /// The control clients and what they report.
    watch: Watch,
    /// The last listing (read again when tmux reports a change).
    listing: Option<Listing>,
}

impl TmuxSource {
    /// A source of `tmux`, steered by `control`; `set_options` also writes `@lookout_*` options.
    pub fn new(tmux: Tmux, set_options: bool, control: Control) -> Self {
        TmuxSource {
            proc: ProcFs::default(),
            control,
            options: set_options.then(Options::default),
            instance: None,
            infos: HashMap::new(),
            away: 0,
            focused: Vec::new(),
            watch: Watch::new(tmux.clone()),
            listing: None,
            tmux,
        }
    }

    /// Removes every option this source wrote and detaches its control clients (it is stopping).
    pub fn clear_options(&mut self) {
        self.watch.stop();
        if let Some(options) = &mut self.options {
            options.clear(&self.tmux);
        }
    }

    fn instance_of(&self, pid: u32) -> String {
        let start = self.proc.stat(pid).map_or(0, |s| s.start_time);
        format!("{pid}@{start}")
    }

    /// Clears the unread turn of a pane an attached client has shown for two rounds.
    fn see_focused(&mut self, server: &mut Client) -> Result<(), ClientError> {
        let focused = self
            .listing
            .as_ref()
            .map(|l| l.focused.clone())
            .unwrap_or_default();
        let before = std::mem::take(&mut self.focused);
        for id in focused.iter().filter(|id| before.contains(id)) {
            let pane = self.tmux.socket().pane_id(id);
            let get = params::AgentGet { pane: pane.clone() };
            if server.call(&get).is_ok_and(|s| s.unread) {
                let seen = params::PaneSeen {
                    pane,
                    via: Some("focus".into()),
                };
                ignore_unknown(server.call(&seen))?;
            }
        }
        self.focused = focused;
        Ok(())
    }
}

impl PaneSource for TmuxSource {
    fn list(&mut self) -> Option<Vec<Listed>> {
        let listed = match self.listing() {
            Ok(listed) => listed,
            Err(e) => {
                if self.away == 0 {
                    eprintln!("lookout: {e}");
                }
                self.away += 1;
                self.listing = None;
                self.watch.stop();
                return None;
            }
        };
        self.away = 0;
        let instance = listed.first().map(|p| self.instance_of(p.server_pid));
        if instance.is_some() && instance != self.instance {
            self.instance = instance;
            if let Some(options) = &mut self.options {
                options.reset(&self.tmux);
            }
        }
        let socket = self.tmux.socket();
        let panes = listed
            .iter()
            .map(|info| Listed {
                pane: socket.pane_id(&info.id),
                native: info.id.clone(),
                rows: info.height.max(1),
                cols: info.width.max(1),
                root: info.pid,
                root_argv: None,
                kind: None,
            })
            .collect();
        self.infos = listed.into_iter().map(|i| (i.id.clone(), i)).collect();
        Some(panes)
    }

    fn instance(&self) -> Option<String> {
        self.instance.clone()
    }

    fn owned(&self, pane: &str) -> bool {
        // `tmux:` also prefixes `tmux:NAME:%3` of other servers; those are not ours.
        pane.strip_prefix(&self.tmux.socket().pane_id(""))
            .is_some_and(|rest| rest.starts_with('%'))
    }

    fn streams(&self) -> bool {
        self.watch.streaming()
    }

    fn output(&mut self, pane: &Listed) -> Vec<u8> {
        self.watch
            .hub()
            .lock()
            .output
            .remove(&pane.native)
            .unwrap_or_default()
    }

    fn pending(&mut self) -> Option<Vec<String>> {
        let hub = self.watch.hub().lock();
        let urgent = hub.output.keys().filter(|p| !hub.deferred.contains(*p));
        Some(urgent.cloned().collect())
    }

    fn defer_output(&mut self, native: &str, defer: bool) {
        let mut hub = self.watch.hub().lock();
        if defer {
            hub.deferred.insert(native.to_owned());
        } else {
            hub.deferred.remove(native);
        }
    }

    fn quiet_probe(&self) -> Option<Duration> {
        self.watch.streaming().then_some(QUIET_PROBE)
    }

    fn wants_round(&mut self) -> bool {
        let hub = self.watch.hub().lock();
        hub.structure || hub.focus
    }

    fn capture(&mut self, pane: &Listed) -> Option<Vec<u8>> {
        self.capture_many(&[pane]).pop().flatten()
    }

    fn capture_many(&mut self, panes: &[&Listed]) -> Vec<Option<Vec<u8>>> {
        let ids: Vec<&str> = panes.iter().map(|p| p.native.as_str()).collect();
        if self.watch.streaming() {
            return self.watch.capture(&ids);
        }
        self.tmux
            .capture_many(&ids)
            .into_iter()
            .map(|c| c.map(|c| tmux::repaint(&c.info, &c.screen)))
            .collect()
    }

    fn after_round(&mut self, server: &mut Client, _listed: &[Listed]) -> Result<(), ClientError> {
        self.see_focused(server)?;
        if let Some(options) = &mut self.options {
            let Snapshot { panes, .. } = server.call(&params::PaneList {})?;
            let mut infos: Vec<PaneInfo> = self.infos.values().cloned().collect();
            infos.sort_by(|a, b| a.id.cmp(&b.id));
            let clients = self.watch.client_pids();
            tmux_options::write_all(options, &self.tmux, &infos, &panes, &clients);
        }
        self.control.rounds.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn typist(&self) -> Option<Box<dyn Typist>> {
        Some(Box::new(TmuxTypist(self.tmux.clone())))
    }

    fn wait(&mut self, due: Instant) -> Next {
        if self.control.options_on.load(Ordering::Relaxed) {
            self.options.get_or_insert_with(Options::default);
        }
        // A tmux server that stopped answering and whose socket is gone will not come back.
        if self.away >= 3 && !self.tmux.is_running() {
            return Next::Ended;
        }
        if !self.watch.streaming() {
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
        } else if self.watch.hub().wait(due) && Instant::now() < due {
            std::thread::sleep(GATHER);
        }
        if self.control.close.load(Ordering::Relaxed) {
            Next::Ended
        } else if self.control.stop.load(Ordering::Relaxed) {
            Next::Stop
        } else {
            Next::Round
        }
    }
}

impl TmuxSource {
    /// The panes: the last listing while the control clients report no change, else a new one.
    fn listing(&mut self) -> Result<Vec<PaneInfo>, tmux::TmuxError> {
        let (structure, focus) = {
            let mut hub = self.watch.hub().lock();
            (
                std::mem::take(&mut hub.structure),
                std::mem::take(&mut hub.focus),
            )
        };
        match &mut self.listing {
            Some(listing) if !structure && self.watch.streaming() => {
                if focus {
                    listing.focused = self.watch.focused()?;
                }
            }
            _ => self.listing = Some(self.watch.list()?),
        }
        self.watch.poll_unowned();
        Ok(self
            .listing
            .as_ref()
            .map(|l| l.panes.clone())
            .unwrap_or_default())
    }
}

/// Types into tmux panes with `send-keys` / `paste-buffer`.
struct TmuxTypist(Tmux);

impl Typist for TmuxTypist {
    fn type_text(&mut self, native: &str, text: &[u8]) -> Result<(), String> {
        let text = std::str::from_utf8(text).map_err(|e| format!("not UTF-8: {e}"))?;
        self.0.type_text(native, text).map_err(|e| e.to_string())
    }

    fn press_enter(&mut self, native: &str) -> Result<(), String> {
        self.0.press_enter(native).map_err(|e| e.to_string())
    }
}

/// A call about a pane the server no longer knows (it restarted, someone closed it) is not worth
/// stopping for; anything else the server says is.
fn ignore_unknown<T>(result: Result<T, ClientError>) -> Result<(), ClientError> {
    match result {
        Err(ClientError::Server(_)) | Ok(_) => Ok(()),
        Err(err) => Err(err),
    }
}
