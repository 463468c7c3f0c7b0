//! `lookout tmux`: every pane of a tmux server as a lookout pane (SPEC §9).
//!
//! Each interval: `list-panes -a` once, then per pane a `/proc` probe of its foreground process and a
//! `capture-pane`; what changed goes to the server (`pane.open`/`close`/`resize`/`process`/`feed`).
//! A screen is fed only when it differs from the last one fed, so "unchanged" stays unchanged for the
//! core's `quiet_ms` rules. With `--set-options` the states are written back as `@lookout_*` pane
//! options and `@lookout_window_*` window roll-ups (worst pane first), each only when its value changes. Touches the tmux CLI, `/proc` and the server socket.

use crate::cli::watch::render::Badge;
use crate::panes::PaneState;
use crate::pty::probe::{Change, Probe, ProcFs};
use crate::pty::tmux::{self, PaneInfo, Scope, Tmux};
use crate::server::client::{Client, ClientError, snapshot};
use base64::Engine as _;
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Arguments of `lookout tmux`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The tmux server's socket name (`tmux -L NAME`) [default: the user's default tmux server].
    #[arg(long, value_name = "NAME")]
    pub socket_name: Option<String>,
    /// Write `@lookout_state`, `@lookout_attention`, `@lookout_label` pane options and their
    /// `@lookout_window_*` roll-ups on each window.
    #[arg(long)]
    pub set_options: bool,
    /// How often to look at every pane, in milliseconds.
    #[arg(long, default_value_t = 500, value_name = "MS")]
    pub interval_ms: u64,
    /// The lookout server's socket [default: $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    pub server_socket: Option<PathBuf>,
}

/// Runs `lookout tmux` until killed; reconnects to a restarted lookout server and survives a restarted
/// tmux server.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let socket = args
        .server_socket
        .clone()
        .unwrap_or_else(crate::server::default_socket_path);
    let interval = Duration::from_millis(args.interval_ms.max(50));
    // Waiting rather than failing lets `run-shell -b 'lookout tmux'` in tmux.conf start before the server.
    let mut client = match Client::connect(&socket) {
        Ok(client) => client,
        Err(err) => {
            eprintln!(
                "lookout tmux: no lookout server at {} ({err}); waiting for one \
                 (start `lookout serve`, or `lookout watch`, which embeds one)",
                socket.display()
            );
            reconnect(&socket, interval)
        }
    };
    let tmux = Tmux::new(args.socket_name.clone());
    let mut watcher = Watcher::new(tmux, args.set_options);
    loop {
        let started = Instant::now();
        if let Err(err) = watcher.tick(&mut client) {
            eprintln!("lookout tmux: {err}; reconnecting");
            client = reconnect(&socket, interval);
            watcher.forget_server();
        }
        std::thread::sleep(interval.saturating_sub(started.elapsed()));
    }
}

/// Connects again, trying once per interval until the server is back.
fn reconnect(socket: &std::path::Path, interval: Duration) -> Client {
    loop {
        if let Ok(client) = Client::connect(socket) {
            return client;
        }
        std::thread::sleep(interval);
    }
}

/// The lookout pane id of a tmux pane: `tmux:%3`, or `tmux:NAME:%3` for a named tmux server.
pub fn pane_id(tmux: &Tmux, id: &str) -> String {
    match tmux.socket_name() {
        Some(name) => format!("tmux:{name}:{id}"),
        None => format!("tmux:{id}"),
    }
}

/// What was last sent for one tmux pane.
struct Tracked {
    info: PaneInfo,
    capture: Vec<u8>,
    probe: Probe,
    /// Nothing fed yet: the first capture goes through whatever it is.
    fresh: bool,
}

/// Mirrors one tmux server into the lookout server, tick by tick.
pub struct Watcher {
    tmux: Tmux,
    proc: ProcFs,
    panes: BTreeMap<String, Tracked>,
    options: Option<Options>,
    /// Whether stale panes of an earlier run were closed (once per server connection).
    swept: bool,
}

impl Watcher {
    /// A watcher of `tmux`; `set_options` also writes the `@lookout_*` options.
    pub fn new(tmux: Tmux, set_options: bool) -> Self {
        Watcher {
            tmux,
            proc: ProcFs::default(),
            panes: BTreeMap::new(),
            options: set_options.then(Options::default),
            swept: false,
        }
    }

    /// Forgets what was sent: after a reconnect every pane is opened and fed again.
    pub fn forget_server(&mut self) {
        self.panes.clear();
        self.swept = false;
    }

    /// One look at every pane. tmux being away is not an error (its panes are closed and it is asked
    /// again next time); only the lookout server failing is.
    pub fn tick(&mut self, server: &mut Client) -> Result<(), ClientError> {
        let listed = match self.tmux.list_panes() {
            Ok(listed) => listed,
            Err(_) => {
                // tmux restarted or stopped: its pane ids will be reused, so its panes are gone.
                self.close_all(server)?;
                if let Some(options) = &mut self.options {
                    options.written.clear();
                }
                return Ok(());
            }
        };
        if !self.swept {
            self.sweep(server, &listed)?;
        }
        let ids: Vec<String> = listed.iter().map(|p| pane_id(&self.tmux, &p.id)).collect();
        let gone: Vec<String> = self
            .panes
            .keys()
            .filter(|id| !ids.contains(id))
            .cloned()
            .collect();
        for id in gone {
            self.panes.remove(&id);
            ignore_unknown(server.call("pane.close", json!({ "pane": id })))?;
        }
        for (id, info) in ids.into_iter().zip(listed.iter()) {
            self.look(server, id, info)?;
        }
        if self.options.is_some() {
            let (_, states) = snapshot(server.call("pane.list", json!({}))?)?;
            self.write_options(&listed, &states);
        }
        Ok(())
    }

    /// Closes `tmux:` panes a previous run left on the server that tmux no longer has.
    fn sweep(&mut self, server: &mut Client, listed: &[PaneInfo]) -> Result<(), ClientError> {
        let prefix = pane_id(&self.tmux, "");
        let (_, states) = snapshot(server.call("pane.list", json!({}))?)?;
        for state in states {
            let Some(rest) = state.pane.strip_prefix(&prefix) else {
                continue;
            };
            // `tmux:` also prefixes `tmux:NAME:%3` of other servers; those are not ours.
            if rest.starts_with('%') && !listed.iter().any(|p| p.id == rest) {
                ignore_unknown(server.call("pane.close", json!({ "pane": state.pane })))?;
            }
        }
        self.swept = true;
        Ok(())
    }

    fn close_all(&mut self, server: &mut Client) -> Result<(), ClientError> {
        for id in std::mem::take(&mut self.panes).into_keys() {
            ignore_unknown(server.call("pane.close", json!({ "pane": id })))?;
        }
        Ok(())
    }

    fn look(
        &mut self,
        server: &mut Client,
        id: String,
        info: &PaneInfo,
    ) -> Result<(), ClientError> {
        let (rows, cols) = (info.height.max(1), info.width.max(1));
        if !self.panes.contains_key(&id) {
            match server.call(
                "pane.open",
                json!({ "pane": id, "rows": rows, "cols": cols }),
            ) {
                // Ours from before a reconnect: carry on with it.
                Err(err) if err.code() == Some("pane_exists") => {}
                other => {
                    other?;
                }
            }
            let tracked = Tracked {
                info: info.clone(),
                capture: Vec::new(),
                probe: Probe::new(info.pid),
                fresh: true,
            };
            self.panes.insert(id.clone(), tracked);
        }
        let Some(tracked) = self.panes.get_mut(&id) else {
            return Ok(());
        };
        if tracked.fresh || (tracked.info.width, tracked.info.height) != (info.width, info.height) {
            let params = json!({ "pane": id, "rows": rows, "cols": cols });
            ignore_unknown(server.call("pane.resize", params))?;
        }
        if tracked.probe.root() != info.pid {
            tracked.probe = Probe::new(info.pid);
        }
        match tracked.probe.look(&self.proc) {
            Some(Change::Started(fg)) => {
                let params = json!({"pane": id, "event": "started", "pid": fg.pgid, "argv": fg.argv, "comm": fg.comm});
                ignore_unknown(server.call("pane.process", params))?;
            }
            Some(Change::Exited) => {
                let params = json!({ "pane": id, "event": "exited" });
                ignore_unknown(server.call("pane.process", params))?;
            }
            None => {}
        }
        // The pane may vanish between list-panes and here; the next list closes it.
        let Ok(capture) = self.tmux.capture(&info.id) else {
            return Ok(());
        };
        let same_look = (
            tracked.info.alternate,
            tracked.info.cursor_x,
            tracked.info.cursor_y,
        ) == (info.alternate, info.cursor_x, info.cursor_y)
            && tracked.info.title == info.title;
        if tracked.fresh || capture != tracked.capture || !same_look {
            let data =
                base64::engine::general_purpose::STANDARD.encode(tmux::repaint(info, &capture));
            ignore_unknown(server.call("pane.feed", json!({ "pane": id, "data": data })))?;
        }
        tracked.capture = capture;
        tracked.info = info.clone();
        tracked.fresh = false;
        Ok(())
    }

    fn write_options(&mut self, listed: &[PaneInfo], states: &[PaneState]) {
        let Some(options) = &mut self.options else {
            return;
        };
        let by_id: HashMap<&str, &PaneState> =
            states.iter().map(|s| (s.pane.as_str(), s)).collect();
        let mut windows: BTreeMap<&str, Vec<&PaneState>> = BTreeMap::new();
        for info in listed {
            let state = by_id.get(pane_id(&self.tmux, &info.id).as_str()).copied();
            let values = Values::of(state.into_iter());
            options.write(&self.tmux, Scope::Pane, &info.id, &values);
            windows.entry(&info.window).or_default().extend(state);
        }
        for (window, states) in windows {
            let values = Values::of(states.into_iter());
            options.write(&self.tmux, Scope::Window, window, &values);
        }
    }
}

/// `pane.close`, `pane.feed`… on a pane the server no longer knows (it restarted, someone closed it)
/// is not worth stopping for; anything else the server says is.
fn ignore_unknown(result: Result<serde_json::Value, ClientError>) -> Result<(), ClientError> {
    match result {
        Err(ClientError::Server(_)) | Ok(_) => Ok(()),
        Err(err) => Err(err),
    }
}

/// The three option values of a pane, or of a window's worst pane.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Values {
    state: String,
    attention: String,
    label: String,
}

impl Values {
    /// The values for the worst of `states`; all empty (options unset) when none has anything to say:
    /// a pane with no agent kind that is idle shows no badge.
    fn of<'a>(states: impl Iterator<Item = &'a PaneState>) -> Values {
        let worst = states
            .filter(|s| s.kind.is_some() || Badge::of(s) != Badge::Idle)
            .max_by_key(|s| Badge::of(s));
        let Some(state) = worst else {
            return Values {
                state: String::new(),
                attention: String::new(),
                label: String::new(),
            };
        };
        let mut attention = Vec::new();
        if state.input_required {
            attention.push("input_required");
        }
        if state.unread {
            attention.push("unread");
        }
        Values {
            state: Badge::of(state).name().to_owned(),
            attention: attention.join(","),
            label: state.labels.join(", "),
        }
    }
}

/// What was written to tmux, so each option is written only when its value changes.
#[derive(Default)]
struct Options {
    written: HashMap<(Scope, String, &'static str), String>,
}

impl Options {
    fn write(&mut self, tmux: &Tmux, scope: Scope, target: &str, values: &Values) {
        // The window's roll-up has its own names: in a format, a pane option shadows a window option
        // of the same name (the active pane's value would win over the roll-up in window-status-format).
        let names = match scope {
            Scope::Pane => ["@lookout_state", "@lookout_attention", "@lookout_label"],
            Scope::Window => [
                "@lookout_window_state",
                "@lookout_window_attention",
                "@lookout_window_label",
            ],
        };
        let pairs = names
            .into_iter()
            .zip([&values.state, &values.attention, &values.label]);
        for (name, value) in pairs {
            let key = (scope, target.to_owned(), name);
            let before = self.written.get(&key).map_or("", String::as_str);
            if before == value.as_str() {
                continue;
            }
            // A pane that vanished since list-panes cannot take options; the next tick forgets it.
            if tmux.set_option(scope, target, name, value).is_ok() {
                self.written.insert(key, value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::LifecycleState;

    fn state(kind: Option<&str>, lifecycle: LifecycleState, unread: bool) -> PaneState {
        PaneState {
            pane: "tmux:%1".into(),
            kind: kind.map(str::to_owned),
            lifecycle,
            input_required: lifecycle == LifecycleState::Blocked,
            unread,
            labels: vec!["gate ×1".into()],
            cause: None,
            since: String::new(),
            generation: 1,
            hooked: false,
        }
    }

    #[test]
    fn the_window_value_is_its_worst_pane() {
        use LifecycleState::*;
        let panes = [
            state(Some("claude"), Working, false),
            state(Some("codex"), Blocked, false),
            state(Some("claude"), Done, true),
        ];
        let values = Values::of(panes.iter());
        assert_eq!(values.state, "blocked");
        assert_eq!(values.attention, "input_required");
        assert_eq!(values.label, "gate ×1");
        let values = Values::of(panes[..1].iter().chain(&panes[2..]));
        assert_eq!(
            (values.state.as_str(), values.attention.as_str()),
            ("done", "unread")
        );
    }

    #[test]
    fn a_plain_shell_shows_no_badge() {
        let shell = state(None, LifecycleState::Idle, false);
        assert_eq!(Values::of([&shell].into_iter()).state, "");
        let agent = state(Some("claude"), LifecycleState::Idle, false);
        assert_eq!(Values::of([&agent].into_iter()).state, "idle");
    }

    #[test]
    fn pane_ids_name_the_tmux_server_when_it_has_a_name() {
        assert_eq!(pane_id(&Tmux::new(None), "%3"), "tmux:%3");
        assert_eq!(pane_id(&Tmux::new(Some("t1".into())), "%3"), "tmux:t1:%3");
    }
}
