//! `lookout learn`'s proposer: from the screens a recording shows at its markers, a manifest
//! whose rules hold for every screen of a state and for no screen of another.
//!
//! For each marked state, most urgent first (blocked, working, idle), it collects the phrases of
//! the screens' bottom rows — whole rows and their parts between separators, without digits
//! (clocks, counters) or spinner glyphs — and keeps, greedily, the phrases that appear near the
//! bottom of the most screens of that state not yet covered and of no screen of any other state.
//! Each kept phrase becomes a `[[screen]]` rule reading a bottom region just tall enough for the
//! screens it came from. Pure: the caller reads the recordings and replays the proposal.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// The states a proposal has rules for, most urgent first, with the priority their rules get.
const STATES: [(&str, u32); 3] = [("blocked", 300), ("working", 200), ("idle", 100)];
/// How many rows from the bottom a phrase may sit.
const MAX_LINES: usize = 40;
/// The most rules one state gets.
const MAX_RULES: usize = 4;

/// The screen at one marker of a recording.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The state the marker expects: `blocked`, `working`, or `idle` (`done`, `other` and
    /// `idle-only` are ready for input too).
    pub state: String,
    /// The screen's rows, top to bottom.
    pub rows: Vec<String>,
}

impl Sample {
    /// A sample from a marker label (`idle composer=…` keeps its first word) and a screen text.
    pub fn new(label: &str, screen: &str) -> Option<Sample> {
        let state = match label.split_whitespace().next()? {
            "blocked" => "blocked",
            "working" => "working",
            "idle" | "idle-only" | "done" | "other" => "idle",
            _ => return None,
        };
        Some(Sample {
            state: state.to_owned(),
            rows: screen.lines().map(str::to_owned).collect(),
        })
    }

    /// Each phrase of the bottom rows with its row's distance from the last non-blank row.
    fn phrases(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        let rows: Vec<&str> = self.rows.iter().map(|r| r.trim_end()).collect();
        let Some(last) = rows.iter().rposition(|r| !r.trim().is_empty()) else {
            return out;
        };
        for (up, row) in rows[..=last].iter().rev().take(MAX_LINES).enumerate() {
            for phrase in phrases_of(row) {
                out.entry(phrase).or_insert(up);
            }
        }
        out
    }
}

/// The phrases of one row: the whole row and its parts between separators, trimmed of glyphs,
/// at least 4 characters with a letter, none with a digit.
fn phrases_of(row: &str) -> Vec<String> {
    let clean = |s: &str| -> Option<String> {
        let s = s.trim_start_matches(|c: char| !c.is_alphanumeric() && c != '?');
        let s = s.trim_end_matches(|c: char| !c.is_alphanumeric() && !matches!(c, '?' | '!' | '.'));
        let chars = s.chars().count();
        let ok = (4..=80).contains(&chars)
            && s.chars().any(char::is_alphabetic)
            && !s.chars().any(|c| c.is_ascii_digit())
            && s.matches('(').count() == s.matches(')').count();
        ok.then(|| s.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    let mut out: Vec<String> = clean(row).into_iter().collect();
    let parts = row.split(['·', '•', '|', '│', '(', ')', '[', ']', '—']);
    for part in parts.flat_map(|p| p.split("  ")) {
        if let Some(p) = clean(part)
            && !out.contains(&p)
        {
            out.push(p);
        }
    }
    out
}

/// One proposed rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposed {
    /// Its state.
    pub state: &'static str,
    /// Its priority.
    pub priority: u32,
    /// The phrase it looks for.
    pub phrase: String,
    /// How many bottom rows it reads.
    pub lines: usize,
    /// How many screens of its state it covers.
    pub covers: usize,
}

/// Proposes rules for the marked states of `samples`.
pub fn propose(samples: &[Sample]) -> Vec<Proposed> {
    let phrases: Vec<BTreeMap<String, usize>> = samples.iter().map(Sample::phrases).collect();
    let mut rules = Vec::new();
    for (state, priority) in STATES {
        let mine: Vec<usize> = (0..samples.len())
            .filter(|&i| samples[i].state == state)
            .collect();
        let others: Vec<usize> = (0..samples.len())
            .filter(|&i| samples[i].state != state)
            .collect();
        let mut uncovered: BTreeSet<usize> = mine.iter().copied().collect();
        while !uncovered.is_empty()
            && rules
                .iter()
                .filter(|r: &&Proposed| r.state == state)
                .count()
                < MAX_RULES
        {
            let Some(best) = best_phrase(&phrases, &uncovered, &others) else {
                break;
            };
            // A phrase of one screen only is that session's text, not the agent's structure.
            if best.2 < 2 && mine.len() > 1 {
                break;
            }
            uncovered.retain(|i| !phrases[*i].contains_key(&best.0));
            rules.push(Proposed {
                state,
                priority,
                phrase: best.0,
                lines: best.1,
                covers: best.2,
            });
        }
    }
    rules
}

/// The phrase in most `uncovered` screens (rows from the bottom it needs, screens it covers)
/// that no screen of `others` shows within that many bottom rows.
fn best_phrase(
    phrases: &[BTreeMap<String, usize>],
    uncovered: &BTreeSet<usize>,
    others: &[usize],
) -> Option<(String, usize, usize)> {
    let mut seen: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for &i in uncovered {
        for (phrase, up) in &phrases[i] {
            let e = seen.entry(phrase).or_insert((0, 0));
            e.0 += 1;
            e.1 = e.1.max(*up);
        }
    }
    seen.into_iter()
        .filter(|(phrase, (_, up))| {
            others
                .iter()
                .all(|&o| phrases[o].get(*phrase).is_none_or(|u| u > up))
        })
        // Most screens covered; then the shorter region; then the shorter phrase (a hint's
        // words outlive the mode line around them).
        .max_by_key(|(phrase, (n, up))| {
            (*n, std::cmp::Reverse(*up), std::cmp::Reverse(phrase.len()))
        })
        .map(|(phrase, (n, up))| (phrase.to_owned(), up + 1, n))
}

/// The proposal as a manifest file for kind `kind`, identified by process name `process`.
pub fn manifest(kind: &str, process: &str, rules: &[Proposed], source: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Proposed by `lookout learn` from {source}: edit, then keep."
    );
    let _ = writeln!(
        out,
        "kind = {}\n\n[identify]\nprocess = [{}]",
        quote(kind),
        quote(process)
    );
    let mut numbers: BTreeMap<&str, usize> = BTreeMap::new();
    for rule in rules {
        let n = numbers.entry(rule.state).or_default();
        *n += 1;
        let _ = writeln!(
            out,
            "\n# in {} marked {} screen(s)\n[[screen]]\nid = \"learned-{}-{}\"\nstate = \"{}\"\nregion = \"bottom\"\nlines = {}\ncontains = [{}]\npriority = {}",
            rule.covers,
            rule.state,
            rule.state,
            n,
            rule.state,
            rule.lines.clamp(1, 200),
            quote(&rule.phrase),
            rule.priority
        );
    }
    out
}

/// A TOML basic string.
fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(state: &str, screen: &str) -> Sample {
        Sample::new(state, screen).expect("a known state")
    }

    #[test]
    fn a_phrase_of_every_screen_of_a_state_and_of_no_other_becomes_its_rule() {
        let samples = [
            sample("working", "task\n\n✻ Thinking… (3s · esc to interrupt)\n> "),
            sample("working", "task\n\n✶ Reading… (12s · esc to interrupt)\n> "),
            sample(
                "blocked",
                "task\n Do you want to proceed?\n ❯ 1. Yes\n   2. No",
            ),
            sample("idle", "task\nanswer\n> \n? for shortcuts"),
        ];
        let rules = propose(&samples);
        let find = |state| {
            rules
                .iter()
                .find(|r| r.state == state)
                .map(|r| r.phrase.as_str())
        };
        assert_eq!(find("working"), Some("esc to interrupt"));
        assert_eq!(find("blocked"), Some("Do you want to proceed?"));
        assert_eq!(find("idle"), Some("? for shortcuts"));
        assert!(rules.iter().all(|r| r.covers >= 1 && r.lines >= 1));
    }

    #[test]
    fn clocks_and_spinners_are_no_phrase() {
        assert_eq!(phrases_of("✻ 12:03"), Vec::<String>::new());
        assert_eq!(phrases_of("⠋ Working (esc)"), vec!["Working"]);
    }

    #[test]
    fn the_manifest_compiles_and_quotes_what_it_must() {
        let rules = [Proposed {
            state: "blocked",
            priority: 300,
            phrase: "Allow \"rm\" \\ now?".into(),
            lines: 3,
            covers: 2,
        }];
        let text = manifest("mine", "mine", &rules, "x.cast");
        let (catalog, errors) = crate::manifest::Catalog::load([("mine.toml", text.as_str())]);
        assert!(errors.is_empty(), "{errors:?}\n{text}");
        assert!(catalog.named("mine").is_some(), "{text}");
    }
}
