//! Typed manifest errors: which file, which rule, which field, why — printed on one line (see
//! manifests/README.md, Validation).

use std::fmt;

/// Why a manifest was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManifestErrorKind {
    /// Not valid TOML, or a key of the wrong type or unknown.
    Syntax(String),
    /// The file is larger than the 256 KiB bound.
    FileTooLarge(usize),
    /// More than 256 rules.
    TooManyRules(usize),
    /// More than 32 patterns in one rule.
    TooManyPatterns(usize),
    /// A pattern longer than 1024 characters.
    PatternTooLong(usize),
    /// More patterns in the whole file (every key together) than the compiled-size bound allows.
    TooManyFilePatterns(usize),
    /// A `state` other than working/blocked/idle/skip.
    UnknownState(String),
    /// An unknown region name.
    UnknownRegion(String),
    /// A hook policy other than dominate/evidence.
    UnknownPolicy(String),
    /// An `[inband] trust` other than hint/state/off.
    UnknownTrust(String),
    /// `lines` outside 1..=200.
    LinesOutOfRange(i64),
    /// `lines` given with a region that has no line count.
    LinesWithoutRows(String),
    /// A regex that does not compile.
    BadRegex(String),
    /// A rule with nothing to match on.
    NoCondition,
    /// The same rule id twice in one file.
    DuplicateId,
    /// An empty kind, rule id or identify name.
    Empty,
    /// The file could not be read.
    Io(String),
    /// A label that is not 1–32 of `a-z`, `0-9`, `_`.
    BadLabel(String),
    /// `resets_at` has no capture group named `at`.
    NoResetGroup,
    /// `finished_turn` on a rule that is not `idle` or has no `regex`/`contains`.
    TurnNeedsIdleMatch,
    /// A `[composer] shape` other than box/rules/glyph/bar.
    UnknownShape(String),
    /// `[composer] shape = "glyph"` without a `glyph`.
    NeedsGlyph,
    /// A `[composer]` key the shape does not use.
    NotForShape,
    /// `[composer] max_rows` outside 1..=50.
    MaxRowsOutOfRange(i64),
}

/// One rejected manifest (or one of the reasons it was rejected).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestError {
    /// The file name as given (path or bundled name).
    pub file: String,
    /// The rule id, when the error is inside a rule.
    pub rule: Option<String>,
    /// The offending key.
    pub field: Option<String>,
    /// 1-based line and column in the TOML, when known.
    pub position: Option<(usize, usize)>,
    /// What is wrong.
    pub kind: ManifestErrorKind,
}

impl ManifestError {
    /// An error about the whole file.
    pub fn file(file: &str, kind: ManifestErrorKind) -> Self {
        ManifestError {
            file: file.to_owned(),
            rule: None,
            field: None,
            position: None,
            kind,
        }
    }

    /// An error about one field of one rule (or of the file when `rule` is `None`).
    pub fn at(file: &str, rule: Option<&str>, field: &str, kind: ManifestErrorKind) -> Self {
        ManifestError {
            file: file.to_owned(),
            rule: rule.map(str::to_owned),
            field: Some(field.to_owned()),
            position: None,
            kind,
        }
    }
}

impl fmt::Display for ManifestErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ManifestErrorKind::*;
        match self {
            Syntax(m) => write!(f, "{m}"),
            FileTooLarge(n) => write!(f, "file is {n} bytes; the limit is 262144 (256 KiB)"),
            TooManyRules(n) => write!(f, "{n} rules; the limit is 256 per file"),
            TooManyPatterns(n) => write!(f, "{n} patterns; the limit is 32 per rule"),
            PatternTooLong(n) => write!(f, "pattern is {n} characters; the limit is 1024"),
            TooManyFilePatterns(n) => write!(
                f,
                "{n} patterns in the file (regex, contains, all, unless, unless_below together); the limit is {}",
                super::compile::MAX_FILE_PATTERNS
            ),
            UnknownState(s) => {
                write!(
                    f,
                    "unknown state `{s}`; expected working, blocked, idle or skip"
                )
            }
            UnknownRegion(s) => write!(
                f,
                "unknown region `{s}`; expected bottom, top, screen, last_line, cursor_line, \
                 after_last_rule, prompt_box, title or progress"
            ),
            UnknownPolicy(s) => write!(f, "unknown policy `{s}`; expected dominate or evidence"),
            UnknownTrust(s) => write!(f, "unknown trust `{s}`; expected hint, state or off"),
            LinesOutOfRange(n) => write!(f, "lines = {n} is outside 1..=200"),
            LinesWithoutRows(r) => {
                write!(
                    f,
                    "`lines` only applies to regions bottom and top, not `{r}`"
                )
            }
            BadRegex(m) => write!(f, "regex does not compile: {m}"),
            NoCondition => write!(
                f,
                "rule has nothing to match: give regex, contains, all, or a time/screen condition"
            ),
            DuplicateId => write!(f, "duplicate rule id"),
            Empty => write!(f, "must not be empty"),
            Io(m) => write!(f, "cannot read: {m}"),
            BadLabel(l) => write!(f, "label `{l}` must be 1 to 32 of a-z, 0-9 and _"),
            NoResetGroup => write!(f, "needs a capture group named `at` (?P<at>…)"),
            TurnNeedsIdleMatch => write!(
                f,
                "`finished_turn` needs state `idle` and a `regex` or `contains` (its hit is the turn)"
            ),
            UnknownShape(s) => write!(
                f,
                "unknown composer shape `{s}`; expected box, rules, glyph or bar"
            ),
            NeedsGlyph => write!(
                f,
                "shape `glyph` needs at least one glyph pattern (the prompt that leads the input row)"
            ),
            NotForShape => write!(f, "only applies when `shape` includes `bar`"),
            MaxRowsOutOfRange(n) => write!(f, "max_rows = {n} is outside 1..=50"),
        }
    }
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some((line, col)) = self.position {
            write!(f, ":{line}:{col}")?;
        }
        if let Some(rule) = &self.rule {
            write!(f, ": rule `{rule}`")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        // One line, always: regex and TOML messages span several.
        let reason = self.kind.to_string();
        let reason: Vec<&str> = reason
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        write!(f, ": {}", reason.join(" "))
    }
}

impl std::error::Error for ManifestError {}
