//! The tmux source (SPEC §9, §12): every pane of one tmux server as a lookout pane.
//!
//! Each round: `list-panes -a` once, then per pane a `/proc` probe of its foreground program and a
//! `capture-pane`; what changed goes to the server (`pane.open`/`close`/`resize`/`process`/`feed`).
//! A screen is fed only when it differs from the last one fed, so "unchanged" stays unchanged for the
//! core's `quiet_ms` rules. Panes are opened with the tmux server's instance (pid + start time), so a
//! new tmux server's `%2` never resumes the old one's state. With options on, states are written back
//! as `@lookout_*` pane options and `@lookout_window_*` roll-ups (worst pane first), each only when it
//! changes, plus a `@lookout_heartbeat` global option; the source removes them when it stops, and
//! on start removes any that a source that died left behind. Touches the tmux CLI, `/proc` and the
//! server socket.

use crate::panes::{Badge, PaneState};
use crate::pty::probe::{Change, Groups, Identify, Probe, ProcFs};
use crate::pty::tmux::{self, PaneInfo, Scope, Tmux};
use crate::server::client::{Client, ClientError, snapshot};
use base64::Engine as _;
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// How often the heartbeat option is rewritten.
const HEARTBEAT: Duration = Duration::from_secs(5);

/// Runs the source until `control.stop` is set (the server is stopping: its panes stay stored, to be
/// resumed) or its tmux server is gone for good (its panes are closed). Either way the options it
/// wrote are removed. Reconnects to the lookout server at `socket` whenever it is lost.
pub fn run(mut watcher: Watcher, socket: &Path, interval: Duration, control: &Control) {
    let mut client: Option<Client> = None;
    let mut away = 0u32;
    while !control.stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        if control.options_on.load(Ordering::Relaxed) {
            watcher.set_options();
        }
        if client.is_none() {
            client = Client::connect(socket).ok();
            if let Some(c) = &client {
                // A server that stopped answering must not hold this thread past its own stop.
                let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
            }
            watcher.forget_server();
        }
        if let Some(c) = client.as_mut() {
            match watcher.tick(c) {
                Ok(true) => {
                    away = 0;
                    control.rounds.fetch_add(1, Ordering::Relaxed);
                }
                Ok(false) => away += 1,
                Err(_) => client = None,
            }
        }
        // A tmux server that stopped answering and whose socket is gone will not come back.
        if away >= 3 && !watcher.tmux.is_running() {
            if let Some(c) = client.as_mut() {
                let _ = watcher.close_all(c);
            }
            break;
        }
        std::thread::sleep(interval.saturating_sub(started.elapsed()));
    }
    watcher.clear_options();
}

/// How the server steers a running source.
#[derive(Debug, Default)]
pub struct Control {
    /// Stop (the server is stopping).
    pub stop: Arc<AtomicBool>,
    /// Start writing options.
    pub options_on: Arc<AtomicBool>,
    /// Rounds completed, counted by the source.
    pub rounds: Arc<AtomicU64>,
}

/// What was last sent for one tmux pane.
struct Tracked {
    info: PaneInfo,
    capture: Vec<u8>,
    probe: Probe,
    /// Nothing fed yet: the first capture goes through whatever it is.
    fresh: bool,
}

/// Mirrors one tmux server into the lookout server, round by round.
pub struct Watcher {
    tmux: Tmux,
    proc: ProcFs,
    identify: Arc<dyn Identify + Send + Sync>,
    panes: BTreeMap<String, Tracked>,
    options: Option<Options>,
    /// The tmux server instance the panes belong to (`pid@start`).
    instance: Option<String>,
    /// Whether stale panes of an earlier run were closed (once per server connection).
    swept: bool,
    /// The tmux panes attached clients showed at the last round.
    focused: Vec<String>,
}

impl Watcher {
    /// A watcher of `tmux`; `set_options` also writes the `@lookout_*` options. `identify` tells
    /// agents from other programs when a pane's foreground group has several members.
    pub fn new(tmux: Tmux, set_options: bool, identify: Arc<dyn Identify + Send + Sync>) -> Self {
        Watcher {
            tmux,
            proc: ProcFs::default(),
            identify,
            panes: BTreeMap::new(),
            options: set_options.then(Options::default),
            instance: None,
            swept: false,
            focused: Vec::new(),
        }
    }

    /// Turns option writing on (a second `attach` may ask for it).
    pub fn set_options(&mut self) {
        self.options.get_or_insert_with(Options::default);
    }

    /// Forgets what was sent: after a reconnect every pane is opened and fed again.
    pub fn forget_server(&mut self) {
        self.panes.clear();
        self.swept = false;
    }

    /// One look at every pane: true when tmux answered. tmux being away is not an error (its panes
    /// are closed); only the lookout server failing is.
    pub fn tick(&mut self, server: &mut Client) -> Result<bool, ClientError> {
        let Ok(listed) = self.tmux.list_panes() else {
            // tmux restarted or stopped: its pane ids will be reused, so its panes are gone.
            self.close_all(server)?;
            return Ok(false);
        };
        let instance = listed.first().map(|p| self.instance_of(p.server_pid));
        if instance.is_some() && instance != self.instance {
            // A new tmux server (or the first look): none of the old instance's panes carry on.
            self.close_all(server)?;
            self.instance = instance;
            self.swept = false;
            if let Some(options) = &mut self.options {
                options.reset(&self.tmux);
            }
        }
        if !self.swept {
            self.sweep(server, &listed)?;
        }
        let ids: Vec<String> = listed
            .iter()
            .map(|p| self.tmux.socket().pane_id(&p.id))
            .collect();
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
        let mut groups = Groups::default();
        for (id, info) in ids.into_iter().zip(listed.iter()) {
            self.look(server, &mut groups, id, info)?;
        }
        self.see_focused(server)?;
        if self.options.is_some() {
            let (_, states) = snapshot(server.call("pane.list", json!({}))?)?;
            self.write_options(&listed, &states);
        }
        Ok(true)
    }

    /// A pane that has been the active pane of a window an attached client shows for two rounds
    /// in a row has been seen (SPEC §14): its unread turn is cleared.
    fn see_focused(&mut self, server: &mut Client) -> Result<(), ClientError> {
        let focused = self.tmux.focused_panes();
        let before = std::mem::take(&mut self.focused);
        for id in &focused {
            if !before.contains(id) {
                continue;
            }
            let pane = self.tmux.socket().pane_id(id);
            let unread = server
                .call("agent.get", json!({ "pane": pane }))
                .ok()
                .is_some_and(|s| s["unread"] == json!(true));
            if unread {
                let seen = json!({ "pane": pane, "via": "focus" });
                ignore_unknown(server.call("pane.seen", seen))?;
            }
        }
        self.focused = focused;
        Ok(())
    }

    fn instance_of(&self, pid: u32) -> String {
        let start = self.proc.stat(pid).map_or(0, |s| s.start_time);
        format!("{pid}@{start}")
    }

    /// Closes this server's panes that a previous run left on the lookout server and that tmux no
    /// longer has; with a new tmux instance, `pane.open` drops the old one's stored state.
    fn sweep(&mut self, server: &mut Client, listed: &[PaneInfo]) -> Result<(), ClientError> {
        let prefix = self.tmux.socket().pane_id("");
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

    /// Closes every pane this source opened.
    pub fn close_all(&mut self, server: &mut Client) -> Result<(), ClientError> {
        for id in std::mem::take(&mut self.panes).into_keys() {
            ignore_unknown(server.call("pane.close", json!({ "pane": id })))?;
        }
        Ok(())
    }

    /// Removes every option this source wrote (it is stopping).
    pub fn clear_options(&mut self) {
        if let Some(options) = &mut self.options {
            options.clear(&self.tmux);
        }
    }

    fn look(
        &mut self,
        server: &mut Client,
        groups: &mut Groups,
        id: String,
        info: &PaneInfo,
    ) -> Result<(), ClientError> {
        let (rows, cols) = (info.height.max(1), info.width.max(1));
        if !self.panes.contains_key(&id) {
            let open = json!({ "pane": id, "rows": rows, "cols": cols, "instance": self.instance });
            match server.call("pane.open", open) {
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
        match tracked
            .probe
            .look(&self.proc, groups, self.identify.as_ref())
        {
            Some(Change::Started(fg)) => {
                let params = json!({"pane": id, "event": "started", "pid": fg.pid, "argv": fg.argv, "comm": fg.comm});
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
            let state = by_id
                .get(self.tmux.socket().pane_id(&info.id).as_str())
                .copied();
            let values = Values::of(state.into_iter());
            options.write(&self.tmux, Scope::Pane, &info.id, &values);
            windows.entry(&info.window).or_default().extend(state);
        }
        for (window, states) in windows {
            let values = Values::of(states.into_iter());
            options.write(&self.tmux, Scope::Window, window, &values);
        }
        options.beat(&self.tmux);
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
    beat_at: Option<Instant>,
}

impl Options {
    /// A new tmux server instance: forget what was written, and remove what a source that died
    /// left on it (one source per tmux server, so any `@lookout_*` option there is stale).
    fn reset(&mut self, tmux: &Tmux) {
        self.written.clear();
        self.beat_at = None;
        for (scope, target, name) in tmux.lookout_options() {
            let _ = tmux.set_option(scope, &target, &name, "");
        }
        let _ = tmux.set_option(Scope::Global, "", "@lookout_heartbeat", "");
    }

    /// Unsets everything written (the source stops).
    fn clear(&mut self, tmux: &Tmux) {
        for ((scope, target, name), value) in self.written.drain() {
            if !value.is_empty() {
                let _ = tmux.set_option(scope, &target, name, "");
            }
        }
        let _ = tmux.set_option(Scope::Global, "", "@lookout_heartbeat", "");
    }

    /// `@lookout_heartbeat` = the Unix time of the last round, every few seconds: a status line can
    /// tell badges whose writer stopped.
    fn beat(&mut self, tmux: &Tmux) {
        if self.beat_at.is_some_and(|at| at.elapsed() < HEARTBEAT) {
            return;
        }
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        if tmux
            .set_option(Scope::Global, "", "@lookout_heartbeat", &now.to_string())
            .is_ok()
        {
            self.beat_at = Some(Instant::now());
        }
    }

    fn write(&mut self, tmux: &Tmux, scope: Scope, target: &str, values: &Values) {
        // The window's roll-up has its own names: in a format, a pane option shadows a window option
        // of the same name (the active pane's value would win over the roll-up in window-status-format).
        let names = match scope {
            Scope::Pane => ["@lookout_state", "@lookout_attention", "@lookout_label"],
            Scope::Window | Scope::Global => [
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
            unverified: false,
            rules_stale: None,
            version: None,
            liveness: crate::panes::Liveness::default(),
            composer: Default::default(),
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
}
