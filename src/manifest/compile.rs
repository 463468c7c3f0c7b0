//! Validation and compilation of one manifest file (see manifests/README.md, Validation): raw
//! serde structs → a [`CompiledFile`]
//! whose regexes are built and whose bounds are checked. Nothing here runs during a tick.
//!
//! A file with any error is rejected whole; every error found is reported, each on one line.

use super::error::{ManifestError, ManifestErrorKind as K};
use super::pattern::Pattern;
use super::raw::{OneOrMany, RawManifest, RawRule};
use super::{HookPolicy, InbandTrust, Region, RuleState};
use regex::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use std::sync::Arc;
use std::time::Duration;

const MAX_FILE_BYTES: usize = 256 * 1024;
const MAX_RULES: usize = 256;
pub(crate) const MAX_PATTERNS: usize = 32;
pub(crate) const MAX_PATTERN_CHARS: usize = 1024;
/// Patterns in one file, every key together: with the per-pattern caps below, a file's compiled
/// patterns stay under `MAX_FILE_PATTERNS × (REGEX_SIZE_LIMIT + REGEX_DFA_LIMIT)` = 48 MiB
/// (a file inside the other bounds compiled to ~10 GB in ~30 s).
pub const MAX_FILE_PATTERNS: usize = 256;
/// Compiled-size cap per regex: a hostile pattern fails to compile instead of eating memory.
pub const REGEX_SIZE_LIMIT: usize = 128 << 10;
/// Lazy-DFA cache cap per regex (the engine falls back to a slower one past it, never grows).
pub const REGEX_DFA_LIMIT: usize = 64 << 10;
/// Compiled-size cap of one kind × region's combined set (past it, its rules match one by one).
pub const SET_SIZE_LIMIT: usize = 8 << 20;
/// Lazy-DFA cache cap of one combined set.
pub const SET_DFA_LIMIT: usize = 1 << 20;

/// A validated manifest file, ready to be merged into a catalog.
#[derive(Debug)]
pub struct CompiledFile {
    /// The file name as given.
    pub file: String,
    /// The agent kind.
    pub kind: String,
    /// Drop earlier manifests of this kind.
    pub override_earlier: bool,
    /// `identify.process` names.
    pub identify: Vec<String>,
    /// `[hooks] policy`, when given.
    pub policy: Option<HookPolicy>,
    /// `[timing] idle_settle_ms`, when given.
    pub idle_settle: Option<Duration>,
    /// `[inband] trust`, when given.
    pub inband: Option<InbandTrust>,
    /// Rules in declaration order.
    pub rules: Vec<CompiledRule>,
    /// `recorded`: CLI versions with recordings (empty: unverified).
    pub recorded: Vec<String>,
    /// `[composer]`, when given.
    pub composer: Option<super::ComposerSpec>,
}

/// One validated rule.
#[derive(Debug, Clone)]
pub struct CompiledRule {
    /// Rule id, unique in its file.
    pub id: String,
    /// What the rule says when it wins.
    pub state: RuleState,
    /// What it reads.
    pub region: Region,
    /// `regex` and `contains` patterns as source text (contains already escaped, `(?i)`).
    pub primary: Vec<String>,
    /// The same, compiled (each with its required literals).
    pub primary_re: Vec<Pattern>,
    /// `all`.
    pub all: Vec<Pattern>,
    /// `unless`.
    pub unless: Vec<Pattern>,
    /// `unless_below`.
    pub unless_below: Vec<Pattern>,
    /// Higher wins.
    pub priority: i64,
    /// `quiet_ms`.
    pub quiet: Option<Duration>,
    /// `changed_within_ms`.
    pub changed_within: Option<Duration>,
    /// `alternate_screen`.
    pub alternate_screen: Option<bool>,
    /// `spinner`.
    pub spinner: Option<bool>,
    /// `settled`.
    pub settled: bool,
    /// `finished_turn`: the last hit of `primary_re` is the last finished turn.
    pub finished_turn: bool,
    /// `label`.
    pub label: Option<Arc<str>>,
    /// `resets_at` (its group `at` is the reset time as shown).
    pub resets_at: Option<Regex>,
}

/// Parses and validates one manifest. `file` names it in errors.
pub fn compile_file(file: &str, text: &str) -> Result<CompiledFile, Vec<ManifestError>> {
    if text.len() > MAX_FILE_BYTES {
        return Err(vec![ManifestError::file(file, K::FileTooLarge(text.len()))]);
    }
    let raw: RawManifest = toml::from_str(text).map_err(|e| vec![syntax_error(file, text, &e)])?;
    let mut errors = Vec::new();
    if raw.kind.trim().is_empty() {
        errors.push(ManifestError::at(file, None, "kind", K::Empty));
    }
    if raw.screen.len() > MAX_RULES {
        errors.push(ManifestError::file(file, K::TooManyRules(raw.screen.len())));
        return Err(errors);
    }
    // Counted before anything compiles: the bound is on memory and load time.
    let file_patterns: usize = raw
        .screen
        .iter()
        .flat_map(|r| [&r.regex, &r.contains, &r.all, &r.unless, &r.unless_below])
        .chain(raw.composer.iter().flat_map(|c| [&c.glyph, &c.ignore]))
        .map(|p| p.as_ref().map_or(0, OneOrMany::count))
        .sum();
    if file_patterns > MAX_FILE_PATTERNS {
        errors.push(ManifestError::file(
            file,
            K::TooManyFilePatterns(file_patterns),
        ));
        return Err(errors);
    }
    let policy = match raw.hooks.as_ref().and_then(|h| h.policy.as_deref()) {
        None => None,
        Some("dominate") => Some(HookPolicy::Dominate),
        Some("evidence") => Some(HookPolicy::Evidence),
        Some(other) => {
            errors.push(ManifestError::at(
                file,
                None,
                "policy",
                K::UnknownPolicy(other.into()),
            ));
            None
        }
    };
    let inband = raw.inband.and_then(|i| i.trust).and_then(|t| {
        let trust = InbandTrust::parse(&t);
        if trust.is_none() {
            errors.push(ManifestError::at(file, None, "trust", K::UnknownTrust(t)));
        }
        trust
    });
    let identify = raw.identify.map(|i| i.process).unwrap_or_default();
    if identify.iter().any(|p| p.trim().is_empty()) {
        errors.push(ManifestError::at(file, None, "process", K::Empty));
    }
    if raw.recorded.iter().any(|v| v.trim().is_empty()) {
        errors.push(ManifestError::at(file, None, "recorded", K::Empty));
    }
    let composer = raw
        .composer
        .and_then(|c| super::composer::compile_composer(file, c, &mut errors));
    let mut seen = std::collections::HashSet::new();
    let mut rules = Vec::with_capacity(raw.screen.len());
    for rule in raw.screen {
        if !seen.insert(rule.id.clone()) {
            errors.push(ManifestError::at(
                file,
                Some(&rule.id),
                "id",
                K::DuplicateId,
            ));
            continue;
        }
        match compile_rule(file, rule) {
            Ok(rule) => rules.push(rule),
            Err(mut e) => errors.append(&mut e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(CompiledFile {
        file: file.to_owned(),
        kind: raw.kind,
        override_earlier: raw.override_earlier,
        identify,
        policy,
        inband,
        idle_settle: raw
            .timing
            .and_then(|t| t.idle_settle_ms)
            .map(Duration::from_millis),
        rules,
        recorded: raw.recorded,
        composer,
    })
}

fn compile_rule(file: &str, raw: RawRule) -> Result<CompiledRule, Vec<ManifestError>> {
    let id = raw.id.clone();
    let mut errors = Vec::new();
    let mut err =
        |field: &str, kind: K| errors.push(ManifestError::at(file, Some(&id), field, kind));
    if id.trim().is_empty() {
        err("id", K::Empty);
    }
    let state = RuleState::parse(&raw.state).unwrap_or_else(|| {
        err("state", K::UnknownState(raw.state.clone()));
        RuleState::Skip
    });
    let region = parse_region(
        raw.region.as_deref().unwrap_or("bottom"),
        raw.lines,
        &mut err,
    );

    let mut patterns = |field: &str, list: Option<OneOrMany>, contains: bool| -> Vec<String> {
        let list = list.map(OneOrMany::into_vec).unwrap_or_default();
        if list.len() > MAX_PATTERNS {
            err(field, K::TooManyPatterns(list.len()));
            return Vec::new();
        }
        let mut out = Vec::with_capacity(list.len());
        for p in list {
            let chars = p.chars().count();
            if chars > MAX_PATTERN_CHARS {
                err(field, K::PatternTooLong(chars));
            } else if contains {
                out.push(format!("(?i){}", regex::escape(&p)));
            } else {
                out.push(ascii_word_boundaries(&p));
            }
        }
        out
    };
    let has_patterns = [&raw.regex, &raw.contains, &raw.all]
        .iter()
        .any(|p| p.is_some());
    let mut primary = patterns("regex", raw.regex, false);
    let contains = patterns("contains", raw.contains, true);
    let all_src = patterns("all", raw.all, false);
    let unless_src = patterns("unless", raw.unless, false);
    let below_src = patterns("unless_below", raw.unless_below, false);
    primary.extend(contains);

    let mut build = |field: &str, list: &[String]| -> Vec<Pattern> {
        list.iter()
            .filter_map(|p| match Pattern::new(p) {
                Ok(re) => Some(re),
                Err(e) => {
                    err(field, K::BadRegex(e.to_string()));
                    None
                }
            })
            .collect()
    };
    let primary_re = build("regex", &primary);
    let all = build("all", &all_src);
    let unless = build("unless", &unless_src);
    let unless_below = build("unless_below", &below_src);
    let resets_at = match raw.resets_at.as_deref().map(|p| (p, build_regex(p))) {
        None => None,
        Some((p, _)) if p.chars().count() > MAX_PATTERN_CHARS => {
            err("resets_at", K::PatternTooLong(p.chars().count()));
            None
        }
        Some((_, Ok(re))) if re.capture_names().any(|n| n == Some("at")) => Some(re),
        Some((_, Ok(_))) => {
            err("resets_at", K::NoResetGroup);
            None
        }
        Some((_, Err(e))) => {
            err("resets_at", K::BadRegex(e.to_string()));
            None
        }
    };
    let label_ok = |l: &str| {
        (1..=32).contains(&l.len())
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    };
    let label = match raw.label {
        Some(l) if !label_ok(&l) => {
            err("label", K::BadLabel(l));
            None
        }
        l => l.map(|l| Arc::from(l.as_str())),
    };

    let has_condition = has_patterns
        || raw.quiet_ms.is_some()
        || raw.changed_within_ms.is_some()
        || raw.alternate_screen.is_some()
        || raw.spinner.is_some();
    if !has_condition {
        errors.push(ManifestError::at(file, Some(&id), "regex", K::NoCondition));
    }
    let finished_turn = raw.finished_turn.unwrap_or(false);
    if finished_turn && (state != RuleState::Idle || primary.is_empty()) {
        errors.push(ManifestError::at(
            file,
            Some(&id),
            "finished_turn",
            K::TurnNeedsIdleMatch,
        ));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(CompiledRule {
        id,
        state,
        region,
        primary,
        primary_re,
        all,
        unless,
        unless_below,
        priority: raw.priority.unwrap_or(0),
        quiet: raw.quiet_ms.map(Duration::from_millis),
        changed_within: raw.changed_within_ms.map(Duration::from_millis),
        alternate_screen: raw.alternate_screen,
        spinner: raw.spinner,
        settled: raw.settled.unwrap_or(false),
        finished_turn,
        label,
        resets_at,
    })
}

fn parse_region(name: &str, lines: Option<i64>, err: &mut impl FnMut(&str, K)) -> Region {
    let rows = match lines {
        None => 12,
        Some(n) if (1..=200).contains(&n) => u8::try_from(n).unwrap_or(200),
        Some(n) => {
            err("lines", K::LinesOutOfRange(n));
            12
        }
    };
    let Some(region) = Region::named(name, rows) else {
        err("region", K::UnknownRegion(name.into()));
        return Region::Bottom(rows);
    };
    if lines.is_some() && !matches!(region, Region::Bottom(_) | Region::Top(_)) {
        err("lines", K::LinesWithoutRows(name.into()));
    }
    region
}

/// Compiles one pattern the way every rule pattern is compiled: multi-line, bounded size.
pub fn build_regex(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .multi_line(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_LIMIT)
        .build()
}

/// The combined set of a kind × region, or `None` when it compiles past its size limit (every
/// pattern compiled alone already; the matcher then checks that region's rules one by one).
pub fn build_set(patterns: &[String]) -> Option<RegexSet> {
    RegexSetBuilder::new(patterns)
        .multi_line(true)
        .size_limit(SET_SIZE_LIMIT)
        .dfa_size_limit(SET_DFA_LIMIT)
        .build()
        .ok()
}

/// Rewrites `\b`/`\B` to their ASCII forms: a Unicode word boundary makes a scan over
/// box-drawing screens fall back to a slow engine, and agents' words are ASCII anyway.
pub fn ascii_word_boundaries(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars();
    let mut in_class = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(b @ ('b' | 'B')) if in_class == 0 => {
                    out.push_str("(?-u:\\");
                    out.push(b);
                    out.push(')');
                }
                Some(next) => {
                    out.push('\\');
                    out.push(next);
                }
                None => out.push('\\'),
            },
            '[' => {
                in_class += 1;
                out.push(c);
            }
            ']' if in_class > 0 => {
                in_class -= 1;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Turns a TOML/serde error into one located line naming the rule and field when it can.
fn syntax_error(file: &str, text: &str, e: &toml::de::Error) -> ManifestError {
    let message = e.message().to_owned();
    let mut error = ManifestError::file(file, K::Syntax(message.clone()));
    if let Some(span) = e.span() {
        let start = span.start.min(text.len());
        let before = &text[..start];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        error.position = Some((line, col));
        let line_text = text[start..].lines().next().unwrap_or("");
        let key = line_text.split('=').next().unwrap_or("").trim();
        if !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || c == '_') {
            error.field = Some(key.to_owned());
        }
        error.rule = enclosing_rule_id(before);
    }
    if error.field.is_none()
        && message.starts_with("unknown field")
        && let Some(field) = message.split('`').nth(1)
    {
        error.field = Some(field.to_owned());
    }
    error
}

/// The `id` of the `[[screen]]` block that `before` ends in, if any.
fn enclosing_rule_id(before: &str) -> Option<String> {
    let block = before.rsplit("[[screen]]").next()?;
    if block.len() == before.len() {
        return None;
    }
    block.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == "id").then(|| v.trim().trim_matches(|c| c == '"' || c == '\'').to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errs(text: &str) -> Vec<String> {
        match compile_file("t.toml", text) {
            Ok(_) => vec![],
            Err(e) => e.iter().map(ToString::to_string).collect(),
        }
    }

    fn one(rule: &str) -> String {
        let e = errs(&format!("kind = \"k\"\n[[screen]]\nid = \"r\"\n{rule}\n"));
        assert_eq!(e.len(), 1, "{e:?}");
        e[0].clone()
    }

    #[test]
    fn compiled_size_is_bounded_per_pattern_per_file_and_per_set() {
        // Each of these compiles alone; 120 of them pass the set limit (the matcher falls back).
        let patterns: Vec<String> = (0..120).map(|i| format!("(?i)step-{i}-\\w\\w")).collect();
        assert!(patterns.iter().all(|p| build_regex(p).is_ok()));
        assert!(build_set(&patterns).is_none());
        assert!(build_regex("(?i)\\w{19}").is_err(), "one pattern is capped");
        // A file inside the per-rule bounds but with more patterns than the file may hold is
        // refused before anything compiles.
        let rule = |i: usize| {
            let list = vec!["'(?i)\\w{19}'"; 32].join(",");
            format!("[[screen]]\nid=\"r{i}\"\nstate=\"working\"\nregex=[{list}]\n")
        };
        let text: String = std::iter::once("kind=\"k\"\n".to_owned())
            .chain((0..9).map(rule))
            .collect();
        let e = errs(&text);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("288 patterns in the file"), "{e:?}");
    }

    #[test]
    fn a_good_manifest_compiles() {
        let f = compile_file(
            "t.toml",
            "kind = \"k\"\n[identify]\nprocess=[\"k\"]\n[hooks]\npolicy=\"evidence\"\n\
             [timing]\nidle_settle_ms=0\n[[screen]]\nid=\"a\"\nstate=\"working\"\n\
             contains=\"esc to interrupt\"\n[[screen]]\nid=\"b\"\nstate=\"skip\"\nregion=\"title\"\nregex='x'",
        )
        .expect("compiles");
        assert_eq!(f.rules.len(), 2);
        assert_eq!(f.policy, Some(HookPolicy::Evidence));
        assert_eq!(f.idle_settle, Some(Duration::ZERO));
        assert!(f.rules[0].primary_re[0].is_match("ESC TO INTERRUPT"));
    }

    #[test]
    fn every_rejection_of_2_1() {
        assert!(
            one("state = \"busy\"\nregex=['x']").contains("field `state`: unknown state `busy`")
        );
        assert!(one("state = \"idle\"\nregion=\"middle\"\nregex=['x']").contains("unknown region"));
        assert!(one("state = \"idle\"\nlines = 0\nregex=['x']").contains("outside 1..=200"));
        assert!(one("state = \"idle\"\nlines = 201\nregex=['x']").contains("outside 1..=200"));
        assert!(
            one("state = \"idle\"\nregion=\"title\"\nlines = 3\nregex=['x']")
                .contains("only applies")
        );
        assert!(
            one("state = \"idle\"\nregex=['(']").contains("field `regex`: regex does not compile")
        );
        assert!(one("state = \"idle\"").contains("nothing to match"));
        let dup = errs(
            "kind=\"k\"\n[[screen]]\nid=\"a\"\nstate=\"idle\"\nregex='x'\n[[screen]]\nid=\"a\"\nstate=\"idle\"\nregex='y'",
        );
        assert!(
            dup[0].contains("rule `a`: field `id`: duplicate"),
            "{dup:?}"
        );
        let unknown = errs("kind=\"k\"\n[[screen]]\nid=\"a\"\nstate=\"idle\"\nregx='x'");
        assert!(
            unknown[0].starts_with("t.toml:5:1: rule `a`: field `regx`: unknown field"),
            "{unknown:?}"
        );
        let bad_toml = errs("kind = \"k\"\n[[screen]\n");
        assert!(bad_toml[0].starts_with("t.toml:2:"), "{bad_toml:?}");
        assert!(
            errs("kind=\"k\"\n[hooks]\npolicy=\"latch\"").contains(
                &"t.toml: field `policy`: unknown policy `latch`; expected dominate or evidence"
                    .to_owned()
            )
        );
        assert_eq!(
            errs("kind=\"k\"\n[inband]\ntrust=\"always\""),
            ["t.toml: field `trust`: unknown trust `always`; expected hint, state or off"]
        );
    }

    #[test]
    fn a_label_is_a_short_word_and_resets_at_names_its_group() {
        let ok = compile_file(
            "t.toml",
            "kind=\"k\"\n[[screen]]\nid=\"a\"\nstate=\"blocked\"\nregex='x'\nlabel=\"usage_limit\"\nresets_at='resets (?P<at>\\d+)'",
        )
        .expect("valid");
        assert_eq!(ok.rules[0].label.as_deref(), Some("usage_limit"));
        assert!(ok.rules[0].resets_at.is_some());
        assert!(
            one("state = \"blocked\"\nregex=['x']\nlabel=\"Usage limit\"")
                .contains("field `label`: label `Usage limit` must be 1 to 32")
        );
        assert!(one("state = \"blocked\"\nregex=['x']\nlabel=\"\"").contains("field `label`"));
        assert!(
            one("state = \"blocked\"\nregex=['x']\nresets_at='resets (\\d+)'")
                .contains("field `resets_at`: needs a capture group named `at`")
        );
        assert!(
            one("state = \"blocked\"\nregex=['x']\nresets_at='(?P<at>'")
                .contains("field `resets_at`: regex does not compile")
        );
    }

    #[test]
    fn a_finished_turn_rule_is_idle_and_matches_text() {
        let ok = compile_file(
            "t.toml",
            "kind=\"k\"\n[[screen]]\nid=\"a\"\nstate=\"idle\"\nregex='^> '\nfinished_turn=true",
        )
        .expect("valid");
        assert!(ok.rules[0].finished_turn);
        for bad in [
            "state = \"working\"\nregex=['x']\nfinished_turn=true",
            "state = \"idle\"\nquiet_ms=100\nfinished_turn=true",
        ] {
            assert!(
                one(bad).contains("field `finished_turn`: `finished_turn` needs state `idle`"),
                "{bad}"
            );
        }
    }

    #[test]
    fn bounds_reject_with_their_own_message() {
        let big = format!("kind=\"k\"\n#{}", "x".repeat(MAX_FILE_BYTES));
        assert!(errs(&big)[0].contains("256 KiB"));
        let many: String = (0..257)
            .map(|i| format!("[[screen]]\nid=\"r{i}\"\nstate=\"idle\"\nregex='x'\n"))
            .collect();
        assert!(errs(&format!("kind=\"k\"\n{many}"))[0].contains("limit is 256"));
        let pats = format!("state=\"idle\"\nregex=[{}]", vec!["'x'"; 33].join(","));
        assert!(one(&pats).contains("limit is 32"));
        assert!(
            one(&format!("state=\"idle\"\nregex=['{}']", "x".repeat(1025)))
                .contains("limit is 1024")
        );
    }

    #[test]
    fn errors_are_one_line() {
        let e = one("state = \"idle\"\nregex=['a{99999999}']");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn unicode_word_boundaries_become_ascii() {
        assert_eq!(ascii_word_boundaries(r"\bgo\b"), r"(?-u:\b)go(?-u:\b)");
        assert_eq!(ascii_word_boundaries(r"\\b[\b]"), r"\\b[\b]");
        assert_eq!(ascii_word_boundaries(r"\B"), r"(?-u:\B)");
        assert!(
            build_regex(&ascii_word_boundaries(r"\bgo\b"))
                .expect("ok")
                .is_match("│ go │")
        );
    }
}
