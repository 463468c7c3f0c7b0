//! Notifications (see docs/notify.md): the server's events in, one notification per transition into a
//! notified state out, through the sinks of the settings file — never for a pane the person is
//! looking at, with reminders for a pane left blocked (resumed after a restart), and never twice for one event (the last
//! event handled is kept in the state directory, so a restart does not repeat it). A `done` waits
//! a moment: an agent that takes up a queued follow-up goes on, and only that turn's end counts.
//!
//! Runs on a thread of its own fed by a bounded channel the tick only `try_send`s into, so a slow
//! sink can never hold up detection; each delivery runs on its own short-lived thread. Touches the
//! settings file, one state file, tmux (focus, `display-message`, bells), child processes and
//! loopback HTTP.

mod pool;
pub mod settings;
mod sinks;
mod timers;

use crate::components::LifecycleState;
use crate::event::{Change, Event};
use crate::panes::PaneState;
use crate::peer::Peer;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError};
use serde_json::{Value, json};
use settings::{Rule, Settings, Sink, Trigger, glob};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// One tick's lifecycle events, each with the pane's state after the tick.
pub type Batch = Vec<(Event, Option<PaneState>)>;

/// Batches the notifier may fall behind by before the tick drops them (with a log line).
const QUEUE: usize = 64;
/// How often settings are re-read and reminders are due.
const LOOK_EVERY: Duration = Duration::from_millis(250);

/// How long a `done` notification waits: an agent that takes up a queued follow-up at once goes
/// working again within it, and only the end of that follow-up is notified (one `done` per turn
/// the person is waiting for, however the agent queues).
const DONE_GRACE: Duration = Duration::from_secs(2);

/// How long typing into a pane counts as looking at it.
const TYPED_IN_VIEW: Duration = Duration::from_secs(5);

/// When the person last typed into each pane (`pane.input`).
type Typed = Arc<Mutex<HashMap<String, Instant>>>;

/// The terminals listening for `terminal` notifications: for a pane's own terminal (`lookout
/// run`) or a board's (no pane), most recent last.
type Listeners = Arc<Mutex<Vec<(Option<String>, Peer)>>>;

/// Panes restored blocked after a restart (their reminders resume), and panes closed (theirs end).
type Restored = Arc<Mutex<Vec<Restore>>>;

#[derive(Debug)]
enum Restore {
    Blocked(Box<PaneState>),
    Closed(String),
}

/// The tick's end of the notifier.
#[derive(Debug, Clone)]
pub struct Notifier {
    tx: Sender<Batch>,
    reload: Arc<AtomicBool>,
    typed: Typed,
    listeners: Listeners,
    restored: Restored,
}

impl Notifier {
    /// Hands a tick's events over; never blocks.
    pub fn send(&self, batch: Batch) {
        if batch.is_empty() {
            return;
        }
        if let Err(TrySendError::Full(_)) = self.tx.try_send(batch) {
            eprintln!("lookout: notifications fell behind; a tick's events were not notified");
        }
    }

    /// Re-read the settings file now (SIGHUP).
    pub fn reload(&self) {
        self.reload.store(true, Ordering::Relaxed);
    }

    /// A terminal listens for `terminal` notifications (`notify.listen`).
    pub fn listen(&self, pane: Option<String>, peer: Peer) {
        if let Ok(mut listeners) = self.listeners.lock() {
            listeners.push((pane, peer));
        }
    }

    /// How many terminals listen (`server.info`).
    pub fn listeners(&self) -> usize {
        self.listeners.lock().map_or(0, |l| l.len())
    }

    /// A pane was opened with its stored state (a restart): a blocked one's reminders resume.
    pub fn restored(&self, state: PaneState) {
        if let Ok(mut r) = self.restored.lock() {
            r.push(Restore::Blocked(Box::new(state)));
        }
    }

    /// A pane was closed: no more reminders for it.
    pub fn closed(&self, pane: &str) {
        if let Ok(mut r) = self.restored.lock() {
            r.push(Restore::Closed(pane.to_owned()));
        }
    }

    /// The person typed into `pane`: it is in view for a few seconds.
    pub fn typed(&self, pane: &str) {
        if let Ok(mut typed) = self.typed.lock() {
            typed.retain(|_, at| at.elapsed() < TYPED_IN_VIEW);
            typed.insert(pane.to_owned(), Instant::now());
        }
    }
}

/// Starts the notifier: settings from `config` (re-read when it changes), the dedupe mark in
/// `state_dir`.
pub fn start(config: Option<PathBuf>, state_dir: PathBuf) -> std::io::Result<Notifier> {
    let (tx, rx) = crossbeam_channel::bounded(QUEUE);
    let reload = Arc::new(AtomicBool::new(true));
    let typed = Typed::default();
    let listeners = Listeners::default();
    let restored = Restored::default();
    let mut worker = Worker {
        restored: restored.clone(),
        timers: timers::Timers::load(state_dir.join("stuck.json")),
        typed: typed.clone(),
        listeners: listeners.clone(),
        config,
        mark: state_dir.join("notified-seq"),
        settings: Settings::default(),
        loaded: None,
        done: HashMap::new(),
        reload: reload.clone(),
    };
    std::thread::Builder::new()
        .name("lookout-notify".into())
        .spawn(move || worker.run(&rx))?;
    Ok(Notifier {
        tx,
        reload,
        typed,
        listeners,
        restored,
    })
}

struct Worker {
    config: Option<PathBuf>,
    mark: PathBuf,
    settings: Settings,
    /// The settings file's modification time when last read.
    loaded: Option<Option<SystemTime>>,
    /// The `stuck` reminders' timers (kept on disk across restarts).
    timers: timers::Timers,
    restored: Restored,
    /// `done` notifications waiting out [`DONE_GRACE`]: pane → (due, event, state).
    done: HashMap<String, (Instant, Event, PaneState)>,
    reload: Arc<AtomicBool>,
    typed: Typed,
    listeners: Listeners,
}

impl Worker {
    fn run(&mut self, rx: &Receiver<Batch>) {
        let mut done_up_to = std::fs::read_to_string(&self.mark)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .unwrap_or(0);
        loop {
            self.refresh();
            match rx.recv_timeout(LOOK_EVERY) {
                Ok(batch) => {
                    // The rules as they are now, not as they were when the wait began.
                    self.refresh();
                    let last = batch.iter().map(|(e, _)| e.seq.0).max().unwrap_or(0);
                    for (event, state) in batch {
                        if event.seq.0 > done_up_to {
                            self.on_event(&event, state);
                        }
                    }
                    if last > done_up_to {
                        done_up_to = last;
                        let _ = std::fs::write(&self.mark, last.to_string());
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            self.remind();
            self.done_due();
        }
    }

    /// The `done` notifications whose grace is over.
    fn done_due(&mut self) {
        let now = Instant::now();
        let due: Vec<String> = (self.done.iter())
            .filter(|(_, (at, ..))| *at <= now)
            .map(|(pane, _)| pane.clone())
            .collect();
        for pane in due {
            if let Some((_, event, state)) = self.done.remove(&pane) {
                let body = sinks::body(Some(&event), &state, LifecycleState::Done.name());
                self.notify(Trigger::Entered(LifecycleState::Done), &state, &body);
            }
        }
    }

    /// Re-reads the settings when the file changed (or was asked to); a bad file keeps the last
    /// good settings and says so once.
    fn refresh(&mut self) {
        let Some(path) = &self.config else { return };
        let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        let asked = self.reload.swap(false, Ordering::Relaxed);
        if !asked && self.loaded == Some(modified) {
            return;
        }
        self.loaded = Some(modified);
        let text = match settings::read(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => {
                eprintln!(
                    "lookout: cannot read {}: {e}; keeping the settings in force",
                    path.display()
                );
                return;
            }
        };
        match Settings::parse(&path.display().to_string(), &text) {
            Ok(settings) => {
                if settings != self.settings && !text.is_empty() {
                    eprintln!(
                        "lookout: settings loaded from {} ({} notify rule(s))",
                        path.display(),
                        settings.notify.len()
                    );
                }
                self.settings = settings;
            }
            Err(e) => eprintln!("lookout: settings refused: {e}; keeping the last good settings"),
        }
    }

    fn on_event(&mut self, event: &Event, state: Option<PaneState>) {
        let Change::Lifecycle { to, .. } = event.change else {
            return;
        };
        let Some(state) = state else { return };
        if to == LifecycleState::Blocked {
            self.timers.blocked(state.clone());
        } else {
            self.timers.ended(&state.pane);
        }
        match to {
            LifecycleState::Done => {
                let due = Instant::now() + DONE_GRACE;
                self.done
                    .insert(state.pane.clone(), (due, event.clone(), state));
                return;
            }
            // The agent went on (a queued follow-up, a dialog): that turn was not over for the
            // person; its end is notified instead.
            LifecycleState::Working | LifecycleState::Blocked => {
                self.done.remove(&state.pane);
            }
            LifecycleState::Idle => {}
        }
        let body = sinks::body(Some(event), &state, to.name());
        self.notify(Trigger::Entered(to), &state, &body);
    }

    /// Reminders for panes left blocked: at `stuck_after`, and once more at three times it.
    fn remind(&mut self) {
        let restored = self.restored.lock().map(|mut r| std::mem::take(&mut *r));
        for restore in restored.unwrap_or_default() {
            match restore {
                Restore::Blocked(state) if state.lifecycle == LifecycleState::Blocked => {
                    self.timers.resumed(*state);
                }
                Restore::Blocked(_) => {}
                Restore::Closed(pane) => self.timers.ended(&pane),
            }
        }
        let rules: Vec<Rule> = self
            .settings
            .notify
            .iter()
            .filter(|r| r.on.contains(&Trigger::Stuck))
            .cloned()
            .collect();
        let Some(first) = rules.iter().map(|r| r.stuck_after).min() else {
            return;
        };
        for state in self.timers.due(first) {
            let body = sinks::body(None, &state, "stuck");
            self.notify(Trigger::Stuck, &state, &body);
        }
    }

    fn notify(&self, trigger: Trigger, state: &PaneState, body: &Value) {
        let mut focused: Option<bool> = None;
        for rule in &self.settings.notify {
            if !rule.on.contains(&trigger) || !applies(rule, state) {
                continue;
            }
            if !rule.focused && *focused.get_or_insert_with(|| self.in_view(&state.pane)) {
                continue;
            }
            match rule.sink {
                Sink::Terminal(osc) => self.to_terminal(osc, rule, state, body),
                _ => sinks::deliver(rule, state, body),
            }
        }
    }

    /// The pane's own terminal when it listens (a `lookout run` pane), else the most recent board.
    fn to_terminal(&self, osc: u16, rule: &Rule, state: &PaneState, body: &Value) {
        let Ok(mut listeners) = self.listeners.lock() else {
            return;
        };
        let line = json!({"notify": {
            "osc": osc,
            "title": "lookout",
            "text": sinks::fill(&rule.message, state, body["trigger"].as_str().unwrap_or("")),
            "body": body,
        }})
        .to_string();
        loop {
            let own = listeners
                .iter()
                .rposition(|(p, _)| p.as_deref() == Some(state.pane.as_str()));
            let Some(i) = own.or_else(|| listeners.iter().rposition(|(p, _)| p.is_none())) else {
                return;
            };
            if listeners[i].1.event(line.clone()) {
                return;
            }
            // That terminal is gone: the next one in line.
            listeners.remove(i);
        }
    }
}

impl Worker {
    /// Whether the person is looking at `pane`: typed into it just now, or a tmux client shows it.
    fn in_view(&self, pane: &str) -> bool {
        let typed = self
            .typed
            .lock()
            .ok()
            .and_then(|t| t.get(pane).copied())
            .is_some_and(|at| at.elapsed() < TYPED_IN_VIEW);
        typed || crate::pty::tmux::in_view(pane)
    }
}

/// Whether `rule`'s kind and pane filters take `state`.
fn applies(rule: &Rule, state: &PaneState) -> bool {
    let kind_ok = rule.kinds.is_empty()
        || state
            .kind
            .as_ref()
            .is_some_and(|k| rule.kinds.iter().any(|want| want == k));
    let pane_ok = rule.panes.is_empty() || rule.panes.iter().any(|g| glob(g, &state.pane));
    kind_ok && pane_ok
}

/// The JSON a sink receives: `{"trigger", "pane", "state": {…}, "event": {…}?}`.
pub fn describe(event: Option<&Event>, state: &PaneState, trigger: &str) -> Value {
    let mut v = json!({"trigger": trigger, "pane": state.pane, "state": state});
    if let Some(event) = event {
        v["event"] = crate::protocol::event_json(event);
    }
    v
}
