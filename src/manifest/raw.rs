//! The manifest file as written: plain serde structs, no validation beyond types and known keys.
//!
//! `deny_unknown_fields` everywhere so a typo is an error, never a silently ignored rule (see
//! manifests/README.md, Validation).
//! Compilation into matchers happens in [`super::compile`]; nothing here touches regexes.

use serde::Deserialize;

/// One or several strings: `regex = "x"` and `regex = ["x", "y"]` are both accepted.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// A single string.
    One(String),
    /// A list of strings.
    Many(Vec<String>),
}

impl OneOrMany {
    /// How many strings (never 0 for `One`; a `Many` may be empty).
    pub fn count(&self) -> usize {
        match self {
            OneOrMany::One(_) => 1,
            OneOrMany::Many(v) => v.len(),
        }
    }

    /// The strings, in order.
    pub fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

/// A whole manifest file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawManifest {
    /// The agent kind the rules describe.
    pub kind: String,
    /// Drop every manifest of this kind loaded before this file.
    #[serde(default, rename = "override")]
    pub override_earlier: bool,
    /// How a process is recognised as this kind.
    pub identify: Option<RawIdentify>,
    /// Hook policy.
    pub hooks: Option<RawHooks>,
    /// How far the status the agent announces in its byte stream is believed.
    pub inband: Option<RawInband>,
    /// Settling.
    pub timing: Option<RawTiming>,
    /// CLI versions this kind's rules were proven on: each has recordings under
    /// `tests/fixtures/<kind>/<version>/` (a test checks the list against the directory).
    /// Empty: the rules are unverified.
    #[serde(default)]
    pub recorded: Vec<String>,
    /// Screen rules, in declaration order.
    #[serde(default)]
    pub screen: Vec<RawRule>,
    /// Where the agent's input box is and what it looks like.
    pub composer: Option<RawComposer>,
}

/// `[composer]`: the shape of the agent's input box.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawComposer {
    /// `box`, `rules`, `glyph` or `bar`, or a list of them tried in order (releases differ).
    pub shape: OneOrMany,
    /// Prompt glyphs (regexes) that lead the first input row.
    pub glyph: Option<OneOrMany>,
    /// `bar` shape: the bar glyphs.
    pub bar: Option<OneOrMany>,
    /// The most rows the input box may span.
    pub max_rows: Option<i64>,
    /// The input box may be on the alternate screen.
    pub alternate_screen: Option<bool>,
    /// Rows (regexes, over the row's text) inside the shape that are chrome, not input.
    pub ignore: Option<OneOrMany>,
    /// When the program hides its cursor away from the input box, look for the bottom-most one.
    pub cursorless: Option<bool>,
    /// The agent holds input typed while it works, to send next (`pane.send` reads pending text
    /// on a working pane as `queued` only then).
    pub queues: Option<bool>,
}

/// `[identify]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawIdentify {
    /// Executable names (basename of argv[0], of `comm`, or of an interpreter's script).
    #[serde(default)]
    pub process: Vec<String>,
}

/// `[hooks]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHooks {
    /// `dominate` or `evidence`.
    pub policy: Option<String>,
}

/// `[inband]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawInband {
    /// `hint`, `state` or `off`.
    pub trust: Option<String>,
}

/// `[timing]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTiming {
    /// How long an idle verdict must hold before it ends `working` (ms; 0 disables).
    pub idle_settle_ms: Option<u64>,
}

/// One `[[screen]]` rule.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    /// Unique within the file.
    pub id: String,
    /// `working`, `blocked`, `idle` or `skip`.
    pub state: String,
    /// Which slice of the screen the rule reads.
    pub region: Option<String>,
    /// Rows for `bottom`/`top`.
    pub lines: Option<i64>,
    /// Any one matching fires the rule.
    pub regex: Option<OneOrMany>,
    /// Any one occurring (case-insensitively) fires the rule.
    pub contains: Option<OneOrMany>,
    /// Every one must also match.
    pub all: Option<OneOrMany>,
    /// None may match.
    pub unless: Option<OneOrMany>,
    /// None may match below the primary hit.
    pub unless_below: Option<OneOrMany>,
    /// Higher wins.
    pub priority: Option<i64>,
    /// The screen has been still for at least this long.
    pub quiet_ms: Option<u64>,
    /// The screen changed within this long.
    pub changed_within_ms: Option<u64>,
    /// The pane is (not) on the alternate screen.
    pub alternate_screen: Option<bool>,
    /// A spinner glyph is (not) present in the region.
    pub spinner: Option<bool>,
    /// Positive idle evidence: skip settling.
    pub settled: Option<bool>,
    /// An `idle` rule whose last hit is the last finished turn: a hit unlike the last one seen
    /// is a turn that started and ended between two looks.
    pub finished_turn: Option<bool>,
    /// A label the pane carries while this rule decides it (`usage_limit`).
    pub label: Option<String>,
    /// A regex with a group named `at`: the reset time the screen shows, captured only when the
    /// pane's state is read and this rule decided it (never during a tick).
    pub resets_at: Option<String>,
}
