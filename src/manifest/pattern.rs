//! One compiled rule pattern: its regex, and the literals every match of it must contain
//! (`manifest::literals`, found once at load). The matcher checks those literals with prebuilt
//! `memmem` finders before running the regex: most rules that do not fire are rejected by a
//! vectorised substring scan instead of a regex search (a pattern starting `(?m)^\s*`
//! gives the regex crate no prefix to skip ahead with, so it walked every row of the region).
//!
//! Sound by construction: each set has a member in every string the regex matches, so "no member
//! present" means "no match" (`tests/prefilter.rs` checks this over every bundled pattern and
//! recorded screen). A pattern with no required literal is simply always run.
//!
//! On a row region, where the literals are present, the regex runs only on the lines around
//! them that a match can reach (`manifest::span`): the same answer for less search
//! ([`Pattern::is_match_lines`]; the same test compares it with the whole search).

use super::compile::build_regex;
use super::literals::{Need, Set, required, required_folded, syntax};
use super::span::{literal_window, newline_span};
use memchr::memmem::Finder;
use regex::{Match, Regex};

/// Most occurrences of a literal whose neighbours are checked before the check gives up.
const MAX_OCCURRENCES: usize = 16;
/// Shortest top-level literal a window is built around (a shorter one is on too many lines).
const MIN_WINDOW_LITERAL: usize = 3;
/// Shortest text searched in windows around a literal (a shorter one is searched whole).
const WINDOWED_FROM: usize = 512;
/// Most windows searched: a literal on many lines makes windows that cost more to find than
/// the whole search.
const MAX_WINDOW_LINES: usize = 6;

/// A rule pattern, compiled: the regex and its required literals.
#[derive(Debug, Clone)]
pub struct Pattern {
    regex: Regex,
    needs: Box<[Check]>,
    /// Where its matches lie around a literal they hold, in a text with no whitespace-only
    /// line (`manifest::span`); `None`: searched whole.
    window: Option<Window>,
}

/// Literals every match holds, and how many newlines a match takes before and after one.
#[derive(Debug, Clone)]
struct Window {
    finders: Box<[Finder<'static>]>,
    before: usize,
    after: usize,
}

/// One required set, ready to scan for.
#[derive(Debug, Clone)]
struct Check {
    finders: Box<[Finder<'static>]>,
    /// The set is of folded literals (`literals::required_folded`): looked for with this
    /// ASCII case-insensitive search instead of the finders, which only hold the literals.
    folded: Option<regex::bytes::Regex>,
    /// A character of these ranges must come right before the literal.
    before: Option<Box<[(char, char)]>>,
    /// And one of these right after it.
    after: Option<Box<[(char, char)]>>,
}

impl Check {
    fn new(need: Need) -> Check {
        Check {
            finders: need
                .set
                .iter()
                .map(|l| Finder::new(l).into_owned())
                .collect(),
            folded: None,
            before: need.before.map(Vec::into_boxed_slice),
            after: need.after.map(Vec::into_boxed_slice),
        }
    }

    /// A set of folded literals, found whatever the case of their ASCII letters.
    fn folded(set: Set) -> Option<Check> {
        let branches: Vec<String> = set.iter().map(|l| escape_bytes(l)).collect();
        let search = regex::bytes::Regex::new(&format!("(?i-u:{})", branches.join("|"))).ok()?;
        let mut check = Check::new(Need::plain(set));
        check.folded = Some(search);
        Some(check)
    }

    /// Whether one of the literals occurs in `text` (with its context).
    fn met(&self, text: &str) -> bool {
        let hay = text.as_bytes();
        if let Some(search) = &self.folded {
            return search.is_match(hay);
        }
        if self.before.is_none() && self.after.is_none() {
            return self.finders.iter().any(|f| f.find(hay).is_some());
        }
        self.finders.iter().any(|f| {
            // Every occurrence, overlapping ones too (the one in context may overlap another),
            // up to a bound: past it the text may hold a match, and the regex decides.
            let mut from = 0;
            for _ in 0..MAX_OCCURRENCES {
                let Some(at) = hay.get(from..).and_then(|h| f.find(h)) else {
                    return false;
                };
                let start = from + at;
                if self.fits(text, start, start + f.needle().len()) {
                    return true;
                }
                from = start + 1;
            }
            true
        })
    }

    fn fits(&self, text: &str, start: usize, end: usize) -> bool {
        let before = text.get(..start).and_then(|t| t.chars().next_back());
        let after = text.get(end..).and_then(|t| t.chars().next());
        in_class(self.before.as_deref(), before) && in_class(self.after.as_deref(), after)
    }
}

/// `bytes` as a pattern that matches exactly those bytes (letters and digits as themselves,
/// every other byte as `\xHH`: a literal may end inside a character's encoding).
fn escape_bytes(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|&b| match b.is_ascii_alphanumeric() {
            true => char::from(b).to_string(),
            false => format!("\\x{b:02X}"),
        })
        .collect()
}

/// Whether `ch` is in `class` (no class: anything is).
fn in_class(class: Option<&[(char, char)]>, ch: Option<char>) -> bool {
    let Some(ranges) = class else {
        return true;
    };
    ch.is_some_and(|ch| {
        let i = ranges.partition_point(|&(_, hi)| hi < ch);
        ranges.get(i).is_some_and(|&(lo, _)| lo <= ch)
    })
}

impl Pattern {
    /// Compiles `source` as every rule pattern is compiled ([`build_regex`]) and finds its
    /// required literals.
    pub fn new(source: &str) -> Result<Pattern, regex::Error> {
        let regex = build_regex(source)?;
        // (a pattern the regex crate compiles parses: without a tree there is nothing to check)
        let Some(hir) = syntax(source) else {
            return Ok(Pattern {
                regex,
                needs: Box::new([]),
                window: None,
            });
        };
        let mut needs: Box<[Check]> = required(&hir).into_iter().map(Check::new).collect();
        if needs.is_empty() {
            // (a `(?i)` pattern: its letters are case classes)
            needs = required_folded(&hir)
                .into_iter()
                .filter_map(Check::folded)
                .collect();
        }
        let window = match literal_window(&hir, MIN_WINDOW_LITERAL) {
            Some(w) => Some(Window {
                finders: Box::new([Finder::new(&w.literal).into_owned()]),
                before: w.before as usize,
                after: w.after as usize,
            }),
            None => newline_span(&hir)
                .zip(needs.first().filter(|check| check.folded.is_none()))
                .map(|(span, check)| Window {
                    finders: check.finders.clone(),
                    before: span as usize,
                    after: span as usize,
                }),
        };
        Ok(Pattern {
            regex,
            needs,
            window,
        })
    }

    /// The regex itself (no literal check).
    pub fn regex(&self) -> &Regex {
        &self.regex
    }

    /// The required literals, one `Vec` per set (what the tests look at).
    pub fn literals(&self) -> Vec<Vec<&[u8]>> {
        self.needs
            .iter()
            .map(|c| c.finders.iter().map(Finder::needle).collect())
            .collect()
    }

    /// Whether [`Pattern::search`] looks at `text`, a row region's, only in windows around a
    /// literal (it is long enough, and the pattern's matches span few lines around one).
    pub fn windowed(&self, text: &str) -> bool {
        self.window.is_some() && text.len() >= WINDOWED_FROM
    }

    /// Whether its literal check is a case-insensitive search (a `(?i)` pattern), which costs
    /// a regex pass where the others cost `memmem` scans: checked after those.
    pub fn folded(&self) -> bool {
        self.needs.iter().any(|c| c.folded.is_some())
    }

    /// `false` when `text` lacks a required literal, so the regex cannot match it.
    pub fn may_match(&self, text: &str) -> bool {
        self.needs.iter().all(|c| c.met(text))
    }

    /// Whether the regex matches `text` (checked against the literals first).
    pub fn is_match(&self, text: &str) -> bool {
        self.may_match(text) && self.regex.is_match(text)
    }

    /// Whether the regex matches `text`, a text with no whitespace-only line (a row region's,
    /// [`Region::no_blank_lines`]). The same answer as [`Pattern::is_match`]; where a match
    /// spans few lines, only the lines around each occurrence of a literal every match holds
    /// are searched: a match lies within its span of newlines of that literal, and a window cut
    /// at line boundaries gives `^`, `$` and `\b` the same context as the whole text.
    ///
    /// [`Region::no_blank_lines`]: super::Region::no_blank_lines
    pub fn is_match_lines(&self, text: &str) -> bool {
        self.is_match_in(text, true)
    }

    /// [`Pattern::is_match_lines`] with `lines`, else [`Pattern::is_match`].
    pub fn is_match_in(&self, text: &str, lines: bool) -> bool {
        self.may_match(text) && self.search(text, lines)
    }

    /// The regex's answer on a text [`Pattern::may_match`] has passed (the literal check is
    /// not repeated); with `lines`, a text with no whitespace-only line, searched as
    /// [`Pattern::is_match_lines`] does.
    pub fn search(&self, text: &str, lines: bool) -> bool {
        match &self.window {
            Some(window) if lines && self.windowed(text) => self.in_windows(text, window),
            _ => self.regex.is_match(text),
        }
    }

    /// Searches the lines around each occurrence of the window's literals (windows merged in
    /// text order, per literal); the whole text when the literal is on too many lines or the
    /// windows would cover more than half of it (then one search is cheaper than several).
    fn in_windows(&self, text: &str, window: &Window) -> bool {
        let hay = text.as_bytes();
        let mut windows = [(0usize, 0usize); MAX_WINDOW_LINES];
        let mut count = 0;
        for finder in &window.finders {
            let needle = finder.needle();
            // Overlapping occurrences matter only when the literal itself spans lines.
            let step = match memchr::memchr(b'\n', needle) {
                Some(_) => 1,
                None => needle.len().max(1),
            };
            // Where the line of the last occurrence ends: one on the same line has its window.
            let (mut line_end, mut pos, first) = (0, 0, count);
            while let Some(at) = hay.get(pos..).and_then(|h| finder.find(h)).map(|i| pos + i) {
                pos = at + step;
                let end = at + needle.len();
                if count > first && end <= line_end {
                    continue;
                }
                line_end = memchr::memchr(b'\n', &hay[end..]).map_or(hay.len(), |i| end + i);
                let from = memchr::memrchr_iter(b'\n', &hay[..at])
                    .nth(window.before)
                    .map_or(0, |nl| nl + 1);
                let to = memchr::memchr_iter(b'\n', &hay[end..])
                    .nth(window.after)
                    .map_or(hay.len(), |nl| end + nl);
                match windows[first..count].last_mut() {
                    Some(open) if from <= open.1 => open.1 = open.1.max(to),
                    _ if count == MAX_WINDOW_LINES => return self.regex.is_match(text),
                    _ => {
                        windows[count] = (from, to);
                        count += 1;
                    }
                }
            }
        }
        let covered: usize = windows[..count].iter().map(|(a, b)| b - a).sum();
        if covered > hay.len() / 2 {
            return self.regex.is_match(text);
        }
        windows[..count]
            .iter()
            .any(|&(a, b)| self.regex.is_match(&text[a..b]))
    }

    /// The first match in `text`.
    pub fn find<'t>(&self, text: &'t str) -> Option<Match<'t>> {
        self.may_match(text)
            .then(|| self.regex.find(text))
            .flatten()
    }

    /// The last of the successive non-overlapping matches in `text`.
    pub fn find_last<'t>(&self, text: &'t str) -> Option<Match<'t>> {
        self.may_match(text)
            .then(|| self.regex.find_iter(text).last())
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lits(pattern: &str) -> Vec<Vec<String>> {
        let p = Pattern::new(pattern).expect("compiles");
        p.literals()
            .into_iter()
            .map(|set| {
                set.into_iter()
                    .map(|l| String::from_utf8_lossy(l).into_owned())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn required_literals_of_typical_rules() {
        // claude's usage-limit banner: no prefix, but `limit` and `⚠` are in every match
        assert_eq!(
            lits(r"(?m)^\s*[─━]{8,}\n\s*⚠\s[^\n]*(?-u:\b)limit(?-u:\b)[^\n]*(?i:\besc)"),
            [vec!["⚠"], vec!["limit"], vec!["─", "━"]],
            "`⚠` then whitespace first"
        );
        assert_eq!(
            lits("Do you want to (?:proceed|run)"),
            [vec!["Do you want to "]],
            "the literal before a branch, not the branches it implies"
        );
        assert_eq!(lits("Yes|No"), [vec!["No", "Yes"]]);
        assert_eq!(
            lits(r"\d+ (?:shells?|agents?)"),
            [vec![" agent", " shell"]],
            "optional parts make exact sets, longer strings holding a shorter one are dropped"
        );
        assert_eq!(
            lits(r"(?:ab\d+|cd\w)"),
            [vec!["ab", "cd"]],
            "one of each branch's"
        );
        assert_eq!(lits("─{3,}"), [vec!["───"]]);
        let spinner = Pattern::new(r"^\s*[\x{2801}-\x{28FF}]\s+\S").expect("compiles");
        assert_eq!(
            spinner.literals(),
            [vec![
                &b"\xE2\xA0"[..],
                b"\xE2\xA1",
                b"\xE2\xA2",
                b"\xE2\xA3"
            ]],
            "a braille spinner by its encodings' first two bytes"
        );
    }

    #[test]
    fn a_case_insensitive_pattern_needs_its_folded_literals() {
        assert_eq!(
            lits(r"(?im)^\s*ctrl\+p commands"),
            [vec!["ctrl+p command"]],
            "letters lowercased, found whatever their case (the `s` that folds with `ſ` left off)"
        );
        // `s` folds with `ſ` (U+017F): that spelling is a member too, or it would be missed
        assert_eq!(lits(r"(?im)^\s*esc"), [vec!["esc", "eſc"]]);
        let p = Pattern::new(r"(?im)^\s*esc to (?:interrupt|cancel)").expect("compiles");
        for text in [
            "ESC TO CANCEL",
            "  Esc to interrupt",
            "eſc to cancel",
            "a\nesc to stop",
        ] {
            assert_eq!(p.is_match(text), p.regex().is_match(text), "{text:?}");
        }
        assert!(
            !p.may_match("press escape to quit"),
            "the literal is absent"
        );
        assert!(
            lits("(?i)ctrl\\+p commands").is_empty(),
            "a pattern that starts with its literals: the regex's own prefilter looks for them"
        );
        assert_eq!(
            lits("Press (?i:enter)"),
            [vec!["Press "]],
            "exact case first"
        );
    }

    #[test]
    fn a_literal_next_to_a_class_needs_that_class_there() {
        let p = Pattern::new(r"\d+ (?:shells?|agents?)").expect("compiles");
        assert!(!p.may_match("· ← for agents"), "no digit before ` agent`");
        assert!(p.may_match("2 agents") && p.is_match("2 agents"));
        let yes = Pattern::new(r"(?m)^[\s│]*1\.\s+Yes").expect("compiles");
        assert!(!yes.may_match("1. NoYes"), "`Yes` after a letter");
        assert!(yes.is_match("│ 1.  Yes"));
    }

    proptest::proptest! {
        /// Texts made of the pieces the patterns below are made of: the check never says
        /// "absent" where the regex matches.
        #[test]
        fn the_check_is_sound_on_generated_texts(
            pieces in proptest::collection::vec(0usize..15, 0..24)
        ) {
            const PIECES: [&str; 15] = [
                "1", "a", " ", "agent", "shells", "─", "━", "\n", "٣", "11", "⚠", "limit", "Yes", "│", "⠹",
            ];
            let text: String = pieces.iter().map(|&i| PIECES[i]).collect();
            for pattern in [
                r"\d+ (?:shells?|agents?)",
                r"(?m)^\s*[─━]{2,}\n\s*⚠\s[^\n]*(?-u:\b)limit",
                r"(?m)^[\s│]*1\s+Yes",
                r"\d+11",
                r"a\d\s?agent\S",
                r"(?:limit|Yes)+\d",
                r"(?i)limit|yes\s",
                r"(?i)agent[^\n]*LIMIT",
            r"[─-╿\x{2801}-\x{28FF}]\s",
            ] {
                let p = Pattern::new(pattern).expect("compiles");
                proptest::prop_assert_eq!(p.is_match(&text), p.regex().is_match(&text), "{} on {:?}", pattern, text);
            }
        }
    }

    #[test]
    fn nothing_required_where_a_match_may_lack_it() {
        for pattern in ["a*", "(?:x)?", r"\w+", "foo|.", "", "^$"] {
            assert!(lits(pattern).is_empty(), "{pattern}: {:?}", lits(pattern));
        }
    }

    #[test]
    fn the_check_agrees_with_the_regex() {
        let texts = [
            "",
            "limit",
            "⚠ limit",
            "Yes",
            "no",
            "No",
            "───",
            "──",
            "3 agents",
            "3 shell",
            "a\nb",
            "111",
            "x11",
            "٣11",
        ];
        for pattern in [
            "limit",
            "⚠ limit",
            "Yes|No",
            "─{3,}",
            r"\d+ (?:shells?|agents?)",
            "(?m)^a$\n^b",
            "[^\\x00-\\x{10FFFF}]",
            r"\d+11",
            r"(?-u:\d)11",
        ] {
            let p = Pattern::new(pattern).expect("compiles");
            for text in texts {
                let re = p.regex().is_match(text);
                assert_eq!(p.is_match(text), re, "{pattern} on {text:?}");
                assert!(!re || p.may_match(text), "{pattern} on {text:?}");
                assert_eq!(p.find(text), p.regex().find(text));
                assert_eq!(p.find_last(text), p.regex().find_iter(text).last());
            }
        }
    }
}
