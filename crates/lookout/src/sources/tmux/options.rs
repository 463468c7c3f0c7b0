//! The `@lookout_*` options the tmux source writes back (see ARCHITECTURE.md, Pane sources): per
//! pane `@lookout_state`,
//! `@lookout_attention`, `@lookout_label`, per window the same of its worst pane as
//! `@lookout_window_*`, and a global `@lookout_heartbeat`; each written only when it changes, all
//! removed when the source stops, and any a source that died left behind removed on start.
//! Touches the tmux CLI only.

use crate::panes::{Badge, PaneState};
use crate::pty::tmux::{PaneInfo, Scope, Tmux};
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant, SystemTime};

/// How often the heartbeat option is rewritten.
const HEARTBEAT: Duration = Duration::from_secs(5);

/// Writes the options of every listed pane and window from the server's `states`.
pub(super) fn write_all(
    options: &mut Options,
    tmux: &Tmux,
    listed: &[PaneInfo],
    states: &[PaneState],
) {
    let by_id: HashMap<&str, &PaneState> = states.iter().map(|s| (s.pane.as_str(), s)).collect();
    let mut windows: BTreeMap<&str, Vec<&PaneState>> = BTreeMap::new();
    for info in listed {
        let state = by_id.get(tmux.socket().pane_id(&info.id).as_str()).copied();
        let values = Values::of(state.into_iter());
        options.write(tmux, Scope::Pane, &info.id, &values);
        windows.entry(&info.window).or_default().extend(state);
    }
    for (window, states) in windows {
        let values = Values::of(states.into_iter());
        options.write(tmux, Scope::Window, window, &values);
    }
    options.beat(tmux);
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
pub(super) struct Options {
    written: HashMap<(Scope, String, &'static str), String>,
    beat_at: Option<Instant>,
}

impl Options {
    /// A new tmux server instance: forget what was written, and remove what a source that died
    /// left on it (one source per tmux server, so any `@lookout_*` option there is stale).
    pub(super) fn reset(&mut self, tmux: &Tmux) {
        self.written.clear();
        self.beat_at = None;
        for (scope, target, name) in tmux.lookout_options() {
            let _ = tmux.set_option(scope, &target, &name, "");
        }
        let _ = tmux.set_option(Scope::Global, "", "@lookout_heartbeat", "");
    }

    /// Unsets everything written (the source stops).
    pub(super) fn clear(&mut self, tmux: &Tmux) {
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
            resets_at: None,
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
