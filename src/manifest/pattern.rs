//! One compiled rule pattern: its regex, and the literals every match of it must contain, found
//! once at load from the regex's syntax tree. The matcher checks those literals with a prebuilt
//! `memmem` finder before running the regex: most rules that do not fire are rejected by a
//! vectorised substring scan instead of a regex search (issue 12: a pattern starting `(?m)^\s*`
//! gives the regex crate no prefix to skip ahead with, so it walked every row of the region).
//!
//! The literals are sound by construction: each set of them has a member in every string the
//! regex matches, so "no member present" means "no match" (`tests/prefilter.rs` checks this over
//! every bundled pattern and recorded screen). Case-insensitive letters, large classes and
//! optional parts give no literal; a pattern with none is simply always run.

use super::compile::build_regex;
use memchr::memmem::Finder;
use regex::{Match, Regex};
use regex_syntax::ParserBuilder;
use regex_syntax::hir::{Class, Hir, HirKind, Repetition};

/// Most strings an exact set may hold (larger: the node is not exact).
const EXACT_CAP: usize = 16;
/// Most characters a class may hold to count as a set of literals.
const CLASS_CAP: usize = 8;
/// Longest literal kept (longer products stop growing; a prefix of a required literal is required).
const MAX_LITERAL: usize = 256;
/// Most literals in a set the matcher checks (each is one `memmem` scan when absent).
const MAX_SET: usize = 4;
/// Most sets checked per pattern.
const MAX_SETS: usize = 3;

/// A set of strings: every match contains (or, as an exact set, is) one of them.
type Set = Vec<Vec<u8>>;

/// A rule pattern, compiled: the regex and its required literals.
#[derive(Debug, Clone)]
pub struct Pattern {
    regex: Regex,
    /// Each entry: at least one of its finders' needles occurs in every match.
    needs: Box<[Box<[Finder<'static>]>]>,
}

impl Pattern {
    /// Compiles `source` as every rule pattern is compiled ([`build_regex`]) and finds its
    /// required literals.
    pub fn new(source: &str) -> Result<Pattern, regex::Error> {
        let regex = build_regex(source)?;
        let needs = required(source)
            .into_iter()
            .map(|set| set.iter().map(|l| Finder::new(l).into_owned()).collect())
            .collect();
        Ok(Pattern { regex, needs })
    }

    /// The regex itself (no literal check).
    pub fn regex(&self) -> &Regex {
        &self.regex
    }

    /// The required literals, one `Vec` per set (what `explain` and the tests look at).
    pub fn literals(&self) -> Vec<Vec<&[u8]>> {
        self.needs
            .iter()
            .map(|set| set.iter().map(Finder::needle).collect())
            .collect()
    }

    /// `false` when `text` lacks a required literal, so the regex cannot match it.
    pub fn may_match(&self, text: &str) -> bool {
        let hay = text.as_bytes();
        self.needs
            .iter()
            .all(|set| set.iter().any(|f| f.find(hay).is_some()))
    }

    /// Whether the regex matches `text` (checked against the literals first).
    pub fn is_match(&self, text: &str) -> bool {
        self.may_match(text) && self.regex.is_match(text)
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

/// The literal sets every match of `source` (parsed as [`build_regex`] parses it) must contain,
/// best first: few and long literals before many or short ones. Empty when nothing is required
/// or the pattern does not parse.
fn required(source: &str) -> Vec<Set> {
    let Ok(hir) = ParserBuilder::new().multi_line(true).build().parse(source) else {
        return Vec::new();
    };
    let node = info(&hir);
    let mut sets: Vec<Set> = node
        .required
        .into_iter()
        .chain(node.exact)
        .map(minimal)
        .filter(|s| s.len() <= MAX_SET && useful(s) && worth_it(s))
        .collect();
    sets.sort_by_key(score);
    let mut chosen: Vec<Set> = Vec::with_capacity(MAX_SETS);
    for set in sets {
        // A set one already chosen implies (or that implies one) adds little but a scan.
        if chosen.len() < MAX_SETS && !chosen.iter().any(|c| implies(c, &set) || implies(&set, c)) {
            chosen.push(set);
        }
    }
    chosen
}

/// Whether a text holding one of `a` always holds one of `b` (each of `a` contains one of `b`).
fn implies(a: &Set, b: &Set) -> bool {
    a.iter()
        .all(|x| b.iter().any(|y| memchr::memmem::find(x, y).is_some()))
}

/// The set without the strings that contain another of its strings: a text holding the longer
/// holds the shorter, so "one of them is present" is unchanged.
fn minimal(mut set: Set) -> Set {
    set.sort_by_key(Vec::len);
    set.dedup();
    let mut kept: Set = Vec::with_capacity(set.len());
    for s in set {
        if !kept.iter().any(|k| memchr::memmem::find(&s, k).is_some()) {
            kept.push(s);
        }
    }
    kept.sort();
    kept
}

/// A set says something only if none of its strings is empty (the empty string is in every text).
fn useful(set: &Set) -> bool {
    set.iter().all(|l| !l.is_empty())
}

/// Worth a scan per literal: not the case variants of one word (`(?i)` letters multiply into
/// them; the regex's own prefilter already searches for those).
fn worth_it(set: &Set) -> bool {
    set.iter()
        .enumerate()
        .all(|(i, a)| set[i + 1..].iter().all(|b| !a.eq_ignore_ascii_case(b)))
}

/// Lower is better: a set whose literals are all long enough to be rare (4 bytes and up) first,
/// then fewer literals to scan for, then longer ones.
fn score(set: &Set) -> (std::cmp::Reverse<usize>, usize, std::cmp::Reverse<usize>) {
    let shortest = set.iter().map(Vec::len).min().unwrap_or(0);
    use std::cmp::Reverse;
    (Reverse(shortest.min(4)), set.len(), Reverse(shortest))
}

/// What one syntax node says about the strings it matches.
#[derive(Default)]
struct Info {
    /// Every string the node can match, when there are few of them.
    exact: Option<Set>,
    /// Sets each of which has a member inside every string the node matches.
    required: Vec<Set>,
}

impl Info {
    fn exact(set: Set) -> Info {
        Info {
            exact: Some(set),
            required: Vec::new(),
        }
    }
}

fn info(hir: &Hir) -> Info {
    match hir.kind() {
        // Zero-width: an assertion consumes nothing, so literals on both sides stay adjacent.
        HirKind::Empty | HirKind::Look(_) => Info::exact(vec![Vec::new()]),
        HirKind::Literal(lit) => Info::exact(vec![lit.0.to_vec()]),
        HirKind::Class(class) => Info {
            exact: class_set(class),
            required: Vec::new(),
        },
        HirKind::Capture(capture) => info(&capture.sub),
        HirKind::Repetition(rep) => repetition(rep),
        HirKind::Concat(subs) => concat(subs),
        HirKind::Alternation(subs) => alternation(subs),
    }
}

/// A small class as the set of its characters' encodings.
fn class_set(class: &Class) -> Option<Set> {
    match class {
        Class::Unicode(c) => {
            let count: u32 = c
                .ranges()
                .iter()
                .map(|r| u32::from(r.end()) - u32::from(r.start()) + 1)
                .sum();
            (count as usize <= CLASS_CAP).then(|| {
                c.ranges()
                    .iter()
                    .flat_map(|r| r.start()..=r.end())
                    .map(|ch| ch.to_string().into_bytes())
                    .collect()
            })
        }
        Class::Bytes(c) => {
            let count: usize = c
                .ranges()
                .iter()
                .map(|r| usize::from(r.end() - r.start()) + 1)
                .sum();
            (count <= CLASS_CAP).then(|| {
                c.ranges()
                    .iter()
                    .flat_map(|r| r.start()..=r.end())
                    .map(|b| vec![b])
                    .collect()
            })
        }
    }
}

/// Every `a` followed by every `b`, unless that is too many or too long.
fn product(a: &Set, b: &Set) -> Option<Set> {
    if a.len() * b.len() > EXACT_CAP {
        return None;
    }
    let mut out = Vec::with_capacity(a.len() * b.len());
    for x in a {
        for y in b {
            if x.len() + y.len() > MAX_LITERAL {
                return None;
            }
            out.push([x.as_slice(), y.as_slice()].concat());
        }
    }
    out.sort();
    out.dedup();
    Some(out)
}

/// A concatenation: adjacent exact parts multiply into longer literals (a run); a part that is
/// not exact ends the run, which is then required as a whole.
fn concat(subs: &[Hir]) -> Info {
    let mut required = Vec::new();
    let mut run: Set = vec![Vec::new()];
    let mut exact = true;
    for sub in subs {
        let part = info(sub);
        required.extend(part.required);
        match part.exact {
            Some(e) => match product(&run, &e) {
                // The run so far is required too, and may be all that stays short enough once
                // it branches (`Do you want to (?:proceed|run|…)`).
                Some(longer) if e.len() > 1 && useful(&run) => {
                    required.push(std::mem::replace(&mut run, longer));
                }
                Some(longer) => run = longer,
                None => {
                    exact = false;
                    required.push(std::mem::replace(&mut run, e));
                }
            },
            None => {
                exact = false;
                required.push(std::mem::replace(&mut run, vec![Vec::new()]));
            }
        }
    }
    if exact {
        return Info {
            exact: Some(run),
            required,
        };
    }
    required.push(run);
    Info {
        exact: None,
        required,
    }
}

/// A repetition: exact if the part is and the counts are few (`x?` is `""` or `x`); otherwise,
/// with `min ≥ 1`, every match holds a copy of the part, and its first `min` copies are adjacent.
fn repetition(rep: &Repetition) -> Info {
    let part = info(&rep.sub);
    if let (Some(one), Some(max)) = (&part.exact, rep.max)
        && let Some(exact) = counted(one, rep.min, max)
    {
        return Info::exact(exact);
    }
    if rep.min == 0 {
        return Info::default();
    }
    let mut required = part.required;
    let Some(one) = part.exact else {
        return Info {
            exact: None,
            required,
        };
    };
    let mut first: Set = vec![Vec::new()];
    for _ in 0..rep.min {
        match product(&first, &one) {
            Some(longer) => first = longer,
            None => break,
        }
    }
    required.push(one);
    required.push(first);
    Info {
        exact: None,
        required,
    }
}

/// Every string of `min..=max` copies of `one`, unless that is too many.
fn counted(one: &Set, min: u32, max: u32) -> Option<Set> {
    let mut out: Set = Vec::new();
    let mut copies: Set = vec![Vec::new()];
    for k in 0..=max {
        if k >= min {
            out.extend(copies.iter().cloned());
            if out.len() > EXACT_CAP {
                return None;
            }
        }
        if k < max {
            copies = product(&copies, one)?;
        }
    }
    out.sort();
    out.dedup();
    Some(out)
}

/// An alternation: exact if every branch is and the union is small; otherwise every match holds
/// a member of the union of one required set per branch (if every branch has one).
fn alternation(subs: &[Hir]) -> Info {
    let branches: Vec<Info> = subs.iter().map(info).collect();
    let union = |sets: &mut dyn Iterator<Item = Option<&Set>>| -> Option<Set> {
        let mut out: Set = Vec::new();
        for set in sets {
            out.extend(set?.iter().cloned());
            if out.len() > EXACT_CAP {
                return None;
            }
        }
        out.sort();
        out.dedup();
        Some(out)
    };
    if let Some(exact) = union(&mut branches.iter().map(|b| b.exact.as_ref())) {
        return Info::exact(exact);
    }
    Info {
        exact: None,
        required: union(&mut branches.iter().map(best)).into_iter().collect(),
    }
}

/// A node's best useful set, if it has one.
fn best(node: &Info) -> Option<&Set> {
    node.required
        .iter()
        .chain(node.exact.iter())
        .filter(|s| useful(s))
        .min_by_key(|s| score(s))
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
            [vec!["limit"], vec!["⚠"], vec!["─", "━"]]
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
    }

    #[test]
    fn nothing_required_where_a_match_may_lack_it() {
        for pattern in [
            "(?i)esc to interrupt",
            "a*",
            "(?:x)?",
            r"\w+",
            "foo|.",
            "",
            "^$",
        ] {
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
        ];
        for pattern in [
            "limit",
            "⚠ limit",
            "Yes|No",
            "─{3,}",
            r"\d+ (?:shells?|agents?)",
            "(?m)^a$\n^b",
            "[^\\x00-\\x{10FFFF}]",
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
