//! `Cause`: why something changed — a screen rule, a hook source, a status the program announced
//! in its own bytes, a process exit, `seen`, or submitted input.
//! A value carried by `Lifecycle`, `Attention`, `Labels`, `Verdict` and every event; not a component.

use std::sync::Arc;

/// Why a state, flag or label changed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Cause {
    /// A screen rule won: its id.
    Screen(Arc<str>),
    /// A hook source reported.
    Hook(Arc<str>),
    /// The program announced it in-band: the sequence (`osc777`, `osc9;4`, `osc7501`).
    Inband(Arc<str>),
    /// The pane's process exited or was replaced.
    ProcessExited,
    /// The embedder said the pane was seen.
    Seen,
    /// The person was seen at the pane, and how (`focus`: a tmux client showed it; `input`: they
    /// typed into it).
    SeenBy(Arc<str>),
    /// Input was submitted to the agent, and how (`send`: `pane.send` pressed Enter and the agent
    /// took the text): a turn started, whatever the screen showed of it.
    Input(Arc<str>),
}

impl Cause {
    /// Parses the wire form (`screen:<id>`, `hook:<source>`, `inband:<sequence>`, `process:exited`, `seen`,
    /// `seen:<how>`, `input:<how>`).
    pub fn parse(text: &str) -> Option<Cause> {
        if text == "process:exited" {
            return Some(Cause::ProcessExited);
        }
        if text == "seen" {
            return Some(Cause::Seen);
        }
        let (kind, rest) = text.split_once(':')?;
        match kind {
            "seen" => Some(Cause::SeenBy(Arc::from(rest))),
            "screen" => Some(Cause::Screen(Arc::from(rest))),
            "hook" => Some(Cause::Hook(Arc::from(rest))),
            "inband" => Some(Cause::Inband(Arc::from(rest))),
            "input" => Some(Cause::Input(Arc::from(rest))),
            _ => None,
        }
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cause::Screen(rule) => write!(f, "screen:{rule}"),
            Cause::Hook(source) => write!(f, "hook:{source}"),
            Cause::Inband(sequence) => write!(f, "inband:{sequence}"),
            Cause::ProcessExited => f.write_str("process:exited"),
            Cause::Seen => f.write_str("seen"),
            Cause::SeenBy(how) => write!(f, "seen:{how}"),
            Cause::Input(how) => write!(f, "input:{how}"),
        }
    }
}
