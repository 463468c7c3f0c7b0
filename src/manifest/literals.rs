//! The literals every match of a rule pattern must contain, read once at load from the pattern's
//! syntax tree (`regex-syntax`, parsed with the flags [`super::compile::build_regex`] uses). What
//! [`super::Pattern`] checks before running its regex; nothing here runs during a tick.
//!
//! Each syntax node says which strings it matches exactly (when few: a literal, a small class, an
//! exact alternation, `x?`) and which literal sets each of its matches contains. A concatenation
//! multiplies adjacent exact parts into longer literals; a part that is not exact ends the run, and
//! when that part is a class (or a repetition of one, `\d+`) the run's literals are required with
//! a character of that class right before (or after) them. Large classes and optional parts give
//! nothing; case-insensitive letters multiply into case variants, so a pattern that gives nothing
//! is read again folded ([`required_folded`]: letters lowercased, looked for ASCII
//! case-insensitively). Every rule here keeps the result sound: a text lacking every member of a
//! returned set holds no match.

use regex_syntax::ParserBuilder;
use regex_syntax::hir::literal::Extractor;
use regex_syntax::hir::{Class, Hir, HirKind, Repetition};
use std::cmp::Reverse;

/// Most strings an exact set may hold (larger: the node is not exact).
const EXACT_CAP: usize = 16;
/// Most characters a class may hold to count as a set of literals.
const CLASS_CAP: usize = 8;
/// Longest literal kept (longer products stop growing; a prefix of a required literal is required).
const MAX_LITERAL: usize = 256;
/// Most literals in a set the matcher checks (each is one `memmem` scan when absent).
const MAX_SET: usize = 6;
/// Most sets checked per pattern.
const MAX_SETS: usize = 3;
/// Shortest prefix literal with which the regex's own prefilter skips ahead well enough.
const MIN_PREFIX: usize = 3;
/// Shortest literal checked with a context (a character class right before or after it).
const MIN_CONTEXT_LITERAL: usize = 3;

/// A set of strings: every match contains (or, as an exact set, is) one of them.
pub(super) type Set = Vec<Vec<u8>>;

/// A class as sorted, disjoint, inclusive code point ranges.
pub(super) type Ranges = Vec<(char, char)>;

/// One required set: in every match, one of `set` occurs, right after a character of `before`
/// and right before one of `after` (each when given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Need {
    pub(super) set: Set,
    pub(super) before: Option<Ranges>,
    pub(super) after: Option<Ranges>,
}

impl Need {
    fn new(set: Set, before: Option<Ranges>, after: Option<Ranges>) -> Need {
        Need { set, before, after }
    }

    pub(super) fn plain(set: Set) -> Need {
        Need::new(set, None, None)
    }

    fn has_context(&self) -> bool {
        self.before.is_some() || self.after.is_some()
    }
}

/// The syntax tree of a rule pattern, parsed with the flags [`super::compile::build_regex`] uses
/// (what every load-time reading of a pattern starts from: here and in `span`).
pub(super) fn syntax(source: &str) -> Option<Hir> {
    ParserBuilder::new()
        .multi_line(true)
        .build()
        .parse(source)
        .ok()
}

/// The required sets of a pattern, best first. Empty when nothing is required.
pub(super) fn required(hir: &Hir) -> Vec<Need> {
    let node = info(hir, false);
    let mut needs: Vec<Need> = node.required;
    needs.extend(node.exact.map(Need::plain));
    // Each contextual need also without its context: shortened, it may be the cheaper check.
    let plain: Vec<Need> = needs
        .iter()
        .filter(|n| n.has_context())
        .map(|n| Need::plain(n.set.clone()))
        .collect();
    needs.extend(plain);
    choose(needs)
}

/// The strings every match of a pattern starts with (`regex-syntax`'s prefix extraction; a
/// literal it marks inexact is still a prefix of the match), when they are a finite set and none
/// is empty: a text that starts with none of them holds no match at its start.
pub(super) fn leading(hir: &Hir) -> Option<Set> {
    let prefixes = Extractor::new().extract(hir);
    let literals = prefixes.literals()?;
    if literals.is_empty() || literals.iter().any(|l| l.as_bytes().is_empty()) {
        return None;
    }
    Some(literals.iter().map(|l| l.as_bytes().to_vec()).collect())
}

/// The required sets of a pattern with every ASCII letter lowercased, to be looked for ASCII
/// case-insensitively, best first: what a `(?i)` pattern (a `contains` rule) requires, whose
/// letters are classes (`[Ee]`) that multiply into too many case variants to list. Contexts are
/// left out. Sound as [`required`] is: lowercasing maps every string a node matches to one of
/// its folded set, and a text holding a string holds its folded form, case aside. Letters
/// whose case class reaches past ASCII (`k`: `K`, `s`: `ſ`) keep that character as a member.
pub(super) fn required_folded(hir: &Hir) -> Vec<Set> {
    // A pattern that starts with its literals (`(?i)type your message`) is searched by the
    // regex's own prefilter for their case variants: a check first would be that search twice.
    let prefixes = Extractor::new().extract(hir);
    if prefixes.is_finite() && prefixes.min_literal_len().is_some_and(|n| n >= MIN_PREFIX) {
        return Vec::new();
    }
    let node = info(hir, true);
    let needs = node
        .required
        .into_iter()
        .map(|n| Need::plain(n.set))
        .chain(node.exact.map(Need::plain))
        .collect();
    choose(needs).into_iter().map(|n| n.set).collect()
}

/// The best few of `needs` (sets shortened to what matters), none implying another.
fn choose(needs: Vec<Need>) -> Vec<Need> {
    let mut needs: Vec<Need> = needs
        .into_iter()
        .map(|mut n| {
            // A string that holds another is dropped only where the shorter keeps its context:
            // as a prefix when a class comes before it, as a suffix when one comes after.
            n.set = match (&n.before, &n.after) {
                (None, None) => minimal(n.set, |long, short| {
                    memchr::memmem::find(long, short).is_some()
                }),
                (Some(_), None) => minimal(n.set, <[u8]>::starts_with),
                (None, Some(_)) => minimal(n.set, <[u8]>::ends_with),
                (Some(_), Some(_)) => sorted(n.set),
            };
            n
        })
        // A short literal is everywhere: checking each occurrence's neighbours would cost more
        // than the regex.
        .filter(|n| !n.has_context() || n.set.iter().all(|l| l.len() >= MIN_CONTEXT_LITERAL))
        .filter(|n| n.set.len() <= MAX_SET && useful(&n.set) && worth_it(&n.set))
        .collect();
    needs.sort_by_key(score);
    let mut chosen: Vec<Need> = Vec::with_capacity(MAX_SETS);
    for need in needs {
        // A need one already chosen implies (or that implies one) adds little but a scan.
        let related = |c: &Need| *c == need || implies(c, &need) || implies(&need, c);
        if chosen.len() < MAX_SETS && !chosen.iter().any(related) {
            chosen.push(need);
        }
    }
    chosen
}

/// Whether a text meeting `a` always meets `b`: `b` has no context and each of `a`'s strings
/// contains one of `b`'s.
fn implies(a: &Need, b: &Need) -> bool {
    !b.has_context()
        && a.set
            .iter()
            .all(|x| b.set.iter().any(|y| memchr::memmem::find(x, y).is_some()))
}

fn sorted(mut set: Set) -> Set {
    set.sort();
    set.dedup();
    set
}

/// The set without the strings that hold (`holds(long, short)`) another of its strings: a text
/// holding the longer holds the shorter, so "one of them is present" is unchanged.
fn minimal(mut set: Set, holds: impl Fn(&[u8], &[u8]) -> bool) -> Set {
    set.sort_by_key(Vec::len);
    set.dedup();
    let mut kept: Set = Vec::with_capacity(set.len());
    for s in set {
        if !kept.iter().any(|k| holds(&s, k)) {
            kept.push(s);
        }
    }
    sorted(kept)
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

/// Lower is better: rarer first (literals of 4 bytes and up, a context counting as 2 more), then
/// fewer literals to scan for, then longer ones.
fn score(need: &Need) -> (Reverse<usize>, usize, Reverse<usize>) {
    let shortest = need.set.iter().map(Vec::len).min().unwrap_or(0);
    let context = 2 * (usize::from(need.before.is_some()) + usize::from(need.after.is_some()));
    (
        Reverse(shortest.min(4) + context),
        need.set.len(),
        Reverse(shortest),
    )
}

/// What one syntax node says about the strings it matches.
#[derive(Default)]
struct Info {
    /// Every string the node can match, when there are few of them.
    exact: Option<Set>,
    /// Needs each of which every string the node matches meets.
    required: Vec<Need>,
}

impl Info {
    fn exact(set: Set) -> Info {
        Info {
            exact: Some(set),
            required: Vec::new(),
        }
    }
}

/// What `hir` says; with `fold`, of its strings with ASCII letters lowercased.
fn info(hir: &Hir, fold: bool) -> Info {
    match hir.kind() {
        // Zero-width: an assertion consumes nothing, so literals on both sides stay adjacent.
        HirKind::Empty | HirKind::Look(_) => Info::exact(vec![Vec::new()]),
        HirKind::Literal(lit) if fold => Info::exact(vec![lit.0.to_ascii_lowercase()]),
        HirKind::Literal(lit) => Info::exact(vec![lit.0.to_vec()]),
        HirKind::Class(class) => match class_set(class, fold) {
            Some(set) => Info::exact(set),
            None => Info {
                exact: None,
                required: lead_bytes(class).map(Need::plain).into_iter().collect(),
            },
        },
        HirKind::Capture(capture) => info(&capture.sub, fold),
        HirKind::Repetition(rep) => repetition(rep, fold),
        HirKind::Concat(subs) => concat(subs, fold),
        HirKind::Alternation(subs) => alternation(subs, fold),
    }
}

/// A small class as the set of its characters' encodings (ASCII letters lowercased with `fold`:
/// `[Ee]` is one string then).
fn class_set(class: &Class, fold: bool) -> Option<Set> {
    let ranges = ranges(class)?;
    let count: u32 = ranges
        .iter()
        .map(|&(a, b)| u32::from(b) - u32::from(a) + 1)
        .sum();
    (count as usize <= CLASS_CAP)
        .then(|| {
            ranges
                .iter()
                .flat_map(|&(a, b)| a..=b)
                .map(|ch| match fold {
                    true => ch.to_ascii_lowercase().to_string().into_bytes(),
                    false => ch.to_string().into_bytes(),
                })
                .collect::<Set>()
        })
        .map(sorted)
}

/// A large class of non-ASCII characters by the first two bytes of their encodings, when those
/// are few: every match of the class holds one (braille spinners `[\x{2801}-\x{28FF}]` are
/// `E2 A0`…`E2 A3`, which nothing else starts with).
fn lead_bytes(class: &Class) -> Option<Set> {
    let mut out: Set = Vec::new();
    for (a, b) in ranges(class)? {
        let mut ch = a;
        loop {
            if ch.is_ascii() {
                return None;
            }
            let mut buf = [0u8; 4];
            let lead = &ch.encode_utf8(&mut buf).as_bytes()[..2];
            if out.last().is_none_or(|l| l.as_slice() != lead) {
                out.push(lead.to_vec());
                if out.len() > CLASS_CAP {
                    return None;
                }
            }
            if ch == b {
                break;
            }
            // (past the surrogates, which are no characters)
            ch = char::from_u32(u32::from(ch) + 1).unwrap_or('\u{E000}');
        }
    }
    Some(sorted(out))
}

/// A class's characters as ranges (`None` for a byte class reaching past ASCII, which a `&str`
/// regex never has).
fn ranges(class: &Class) -> Option<Ranges> {
    match class {
        Class::Unicode(c) => Some(c.ranges().iter().map(|r| (r.start(), r.end())).collect()),
        Class::Bytes(c) => c
            .ranges()
            .iter()
            .map(|r| (r.end() < 0x80).then(|| (char::from(r.start()), char::from(r.end()))))
            .collect(),
    }
}

/// The class every match of `hir` both starts and ends with a character of: a class, or a
/// repetition of at least one of a node that has one.
fn edge_class(hir: &Hir) -> Option<Ranges> {
    match hir.kind() {
        HirKind::Class(class) => ranges(class),
        HirKind::Capture(capture) => edge_class(&capture.sub),
        HirKind::Repetition(rep) if rep.min >= 1 => edge_class(&rep.sub),
        _ => None,
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
    Some(sorted(out))
}

/// A concatenation: adjacent exact parts multiply into longer literals (a run); a part that is
/// not exact ends the run, which is then required as a whole — right before that part's first
/// character class and right after the previous part's last, where those are known.
fn concat(subs: &[Hir], fold: bool) -> Info {
    let mut required = Vec::new();
    let mut run: Set = vec![Vec::new()];
    let mut before: Option<Ranges> = None;
    let mut exact = true;
    for sub in subs {
        let part = info(sub, fold);
        required.extend(part.required);
        match part.exact {
            Some(e) => match product(&run, &e) {
                // The run so far is required too, and may be all that stays short enough once
                // it branches (`Do you want to (?:proceed|run|…)`).
                Some(longer) if e.len() > 1 && useful(&run) => {
                    let so_far = std::mem::replace(&mut run, longer);
                    required.push(Need::new(so_far, before.clone(), None));
                }
                Some(longer) => run = longer,
                None => {
                    exact = false;
                    let so_far = std::mem::replace(&mut run, e);
                    required.push(Need::new(so_far, before.take(), None));
                }
            },
            None => {
                exact = false;
                let so_far = std::mem::replace(&mut run, vec![Vec::new()]);
                required.push(Need::new(so_far, before.take(), edge_class(sub)));
                before = edge_class(sub);
            }
        }
    }
    if exact {
        return Info {
            exact: Some(run),
            required,
        };
    }
    required.push(Need::new(run, before, None));
    Info {
        exact: None,
        required,
    }
}

/// A repetition: exact if the part is and the counts are few (`x?` is `""` or `x`); otherwise,
/// with `min ≥ 1`, every match holds a copy of the part, and its first `min` copies are adjacent.
fn repetition(rep: &Repetition, fold: bool) -> Info {
    let part = info(&rep.sub, fold);
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
    required.push(Need::plain(one));
    required.push(Need::plain(first));
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
    Some(sorted(out))
}

/// An alternation: exact if every branch is and the union is small; otherwise every match holds
/// a member of the union of one required set per branch (if every branch has one; contexts are
/// dropped, which only weakens a need).
fn alternation(subs: &[Hir], fold: bool) -> Info {
    let branches: Vec<Info> = subs.iter().map(|sub| info(sub, fold)).collect();
    let union = |sets: &mut dyn Iterator<Item = Option<&Set>>| -> Option<Set> {
        let mut out: Set = Vec::new();
        for set in sets {
            out.extend(set?.iter().cloned());
            if out.len() > EXACT_CAP {
                return None;
            }
        }
        Some(sorted(out))
    };
    if let Some(exact) = union(&mut branches.iter().map(|b| b.exact.as_ref())) {
        return Info::exact(exact);
    }
    Info {
        exact: None,
        required: union(&mut branches.iter().map(best))
            .map(Need::plain)
            .into_iter()
            .collect(),
    }
}

/// A node's best useful set, if it has one.
fn best(node: &Info) -> Option<&Set> {
    node.required
        .iter()
        .map(|n| &n.set)
        .chain(node.exact.iter())
        .filter(|s| useful(s))
        .min_by_key(|s| score(&Need::plain((*s).clone())))
}
