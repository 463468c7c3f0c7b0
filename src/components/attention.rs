//! `Attention`: the `input_required` and `unread` flags, each remembering who raised it so it can
//! be withdrawn precisely (see docs/behaviour.md, Transitions). Written by `apply_transitions`
//! only, and only when a flag flips.

use super::cause::Cause;
use bevy_ecs::component::Component;

/// The two attention flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flag {
    /// The agent needs an answer.
    InputRequired,
    /// A finished turn nobody has looked at.
    Unread,
}

impl Flag {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Flag::InputRequired => "input_required",
            Flag::Unread => "unread",
        }
    }
}

/// The pane's attention flags; `Some(cause)` means raised by that cause.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct Attention {
    /// Raised by a blocked verdict or report.
    pub input_required: Option<Cause>,
    /// Raised when a turn ends.
    pub unread: Option<Cause>,
    /// The flags before the last change: `(input_required, unread)`.
    pub prev: (bool, bool),
    /// What caused the last change.
    pub cause: Option<Cause>,
}

impl Attention {
    /// The flags now: `(input_required, unread)`.
    pub fn flags(&self) -> (bool, bool) {
        (self.input_required.is_some(), self.unread.is_some())
    }
}
