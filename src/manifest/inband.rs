//! `[inband] trust`: how far a kind believes the status its program announces in its own output
//! (see docs/agent-authors.md). Parsed by `compile`, read by `resolve_priority`.

/// How far a kind's in-band status announcements (desktop notifications, OSC 9;4 progress, OSC
/// 7501 status) are believed against its screen rules (see docs/agent-authors.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InbandTrust {
    /// An announcement decides only where no screen rule gives an answer.
    #[default]
    Hint,
    /// An announcement decides over the screen until the next one.
    State,
    /// Announcements are ignored.
    Off,
}

impl InbandTrust {
    /// Every value with its manifest name, once.
    const NAMES: [(InbandTrust, &'static str); 3] = [
        (InbandTrust::Hint, "hint"),
        (InbandTrust::State, "state"),
        (InbandTrust::Off, "off"),
    ];

    /// The manifest name.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(t, _)| *t == self)
            .map_or("hint", |(_, n)| n)
    }

    /// Parses a manifest name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(t, _)| *t)
    }
}
