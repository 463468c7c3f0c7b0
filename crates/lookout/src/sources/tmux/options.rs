//! The `@lookout_*` options the tmux source writes back (see ARCHITECTURE.md, Pane sources): per
//! pane `@lookout_state`,
//! `@lookout_attention`, `@lookout_label`, per window the same of its worst pane as
//! `@lookout_window_*`, and a global `@lookout_live`; each written only when it changes, all
//! removed when the source stops, and any a source that died left behind removed on start.
//!
//! `@lookout_live` says the badges have a writer. It is written once, not refreshed on a timer
//! (tmux logs every command in its message log): a `client-detached` hook, installed with it,
//! unsets it as soon as one of the source's control clients leaves the server — so when lookout
//! is killed, tmux itself marks the badges stale. A client that leaves while lookout lives (its
//! session closed) is followed by the next round writing the flag and the hook again.
//! Touches the tmux CLI only.

use crate::panes::{Badge, PaneState};
use crate::pty::tmux::{PaneInfo, Scope, Tmux};
use std::collections::{BTreeMap, HashMap};

/// The global option that says a source writes the badges.
const LIVE: &str = "@lookout_live";
/// The slot of `client-detached` this source's hook takes (a fixed one, so it replaces its own
/// and leaves the user's hooks alone).
const HOOK: &str = "client-detached[7501]";

/// Writes the options of every listed pane and window from the server's `states`.
pub(super) fn write_all(
    options: &mut Options,
    tmux: &Tmux,
    listed: &[PaneInfo],
    states: &[PaneState],
    clients: &[u32],
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
    options.live(tmux, clients);
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
    /// The control clients (pids) the hook watches, once `@lookout_live` is written.
    live_for: Option<Vec<u32>>,
}

impl Options {
    /// A new tmux server instance: forget what was written, and remove what a source that died
    /// left on it (one source per tmux server, so any `@lookout_*` option there is stale).
    pub(super) fn reset(&mut self, tmux: &Tmux) {
        self.written.clear();
        for (scope, target, name) in tmux.lookout_options() {
            let _ = tmux.set_option(scope, &target, &name, "");
        }
        self.unlive(tmux);
    }

    /// Unsets everything written (the source stops).
    pub(super) fn clear(&mut self, tmux: &Tmux) {
        for ((scope, target, name), value) in self.written.drain() {
            if !value.is_empty() {
                let _ = tmux.set_option(scope, &target, name, "");
            }
        }
        self.unlive(tmux);
    }

    /// Writes `@lookout_live` and the hook that unsets it when one of `clients` (the pids of the
    /// source's control clients) leaves; only when that set changed. With no control client (tmux
    /// cannot stream) the flag is written without a hook and outlives a crash.
    fn live(&mut self, tmux: &Tmux, clients: &[u32]) {
        if self.live_for.as_deref() == Some(clients) {
            return;
        }
        let hooked = if clients.is_empty() {
            tmux.run(&["set-hook", "-gu", HOOK]).is_ok()
        } else {
            let names: String = clients.iter().map(|pid| format!("client-{pid}|")).collect();
            let test = format!("#{{m:*|#{{hook_client}}|*,|{names}}}");
            let unset = format!("set-option -gu {LIVE}");
            let hook = format!("if-shell -F '{test}' '{unset}'");
            tmux.run(&["set-hook", "-g", HOOK, &hook]).is_ok()
        };
        if hooked && tmux.set_option(Scope::Global, "", LIVE, "1").is_ok() {
            self.live_for = Some(clients.to_vec());
        }
    }

    /// Removes `@lookout_live` and its hook.
    fn unlive(&mut self, tmux: &Tmux) {
        self.live_for = None;
        let _ = tmux.run(&["set-hook", "-gu", HOOK]);
        let _ = tmux.set_option(Scope::Global, "", LIVE, "");
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
