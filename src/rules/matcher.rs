//! Rule evaluation over one screen: rules are checked in priority order and the first that
//! fires wins (the order was fixed at load, so ties are already resolved); each region's text is
//! built at most once, when a rule first needs it (`rules::texts`). Primary patterns are matched
//! per rule, or by one combined `RegexSet` pass per region (`Strategy::Combined`); both give the
//! same answer and the benches compare them in one run. A region whose set was over its size
//! limit at load is matched per rule under either strategy. Per rule, every pattern's required
//! literals are looked for before any regex runs ([`Pattern::may_match`]): a region lacking one
//! is not searched at all.
//!
//! [`Pattern::may_match`]: crate::manifest::Pattern::may_match

use super::regions::{Grid, has_spinner};
pub use super::texts::Scratch;
use super::texts::Texts;
use crate::manifest::{KindRules, Pattern, RuleState};
use std::time::Instant;

/// What one evaluation looks at.
pub struct Look<'a> {
    /// The pane's visible screen (a vt100 screen, or the rows an embedder handed over).
    pub screen: &'a dyn Grid,
    /// The OSC 0/2 title.
    pub title: &'a str,
    /// The latest OSC 9;4 payload.
    pub progress: &'a str,
    /// When the screen last changed (`None`: unknown, so no time condition holds).
    pub changed_at: Option<Instant>,
    /// The tick's time.
    pub now: Instant,
}

/// The result of one evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outcome {
    /// Index of the winning rule in [`KindRules::rules`].
    pub winner: Option<usize>,
    /// When a time condition may next change its answer.
    pub wake: Option<Instant>,
    /// The winner is a `finished_turn` rule: the fingerprint of its last hit (its text without whitespace).
    pub turn: Option<u64>,
}

/// How primary patterns are matched: the combined automaton per region, or one regex per rule
/// (kept as the in-run baseline for the benches).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// One `RegexSet` pass per region.
    Combined,
    /// Each rule's regexes, in priority order, with early exit.
    PerRule,
}

impl Strategy {
    /// The strategy the evaluate system uses: per-rule regexes with early exit. With regions
    /// built lean, a rule that does not fire usually costs a `memmem` scan for a literal its
    /// pattern needs (found at load, `manifest::pattern`) or the regex's own prefix prefilter,
    /// where a set pass runs an overlapping search over the whole region and allocates its
    /// matches (`benches/evaluate.rs` compares them in one run).
    pub const DEFAULT: Strategy = Strategy::PerRule;
}

/// One rule as `explain` shows it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RuleReport {
    /// Rule id.
    pub id: String,
    /// The file it came from.
    pub file: String,
    /// What it says.
    pub state: String,
    /// Its priority.
    pub priority: i64,
    /// The region it reads.
    pub region: String,
    /// Whether all its conditions held.
    pub fired: bool,
    /// The text its primary pattern matched, if it did.
    pub matched: Option<String>,
}

/// Everything `explain` prints: every region's text, every rule, the winner.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Explanation {
    /// Region name → text.
    pub regions: Vec<(String, String)>,
    /// Rules in evaluation order.
    pub rules: Vec<RuleReport>,
    /// The winning rule's id.
    pub winner: Option<String>,
    /// The winning rule's state.
    pub verdict: Option<String>,
}

/// The fingerprint of a `finished_turn` rule's last primary hit (the turn it points at): a hash
/// of its characters without whitespace, so the same turn re-wrapped by a resize, or scrolled to
/// another row, is the same turn. No allocation.
fn fingerprint(hit: &str) -> u64 {
    // FNV-1a over the bytes that are not whitespace
    hit.bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// The last of the primaries' successive matches in `text` that ends furthest (its span), the
/// hit `unless_below` looks under and a `finished_turn` rule's fingerprint reads.
fn last_hit(primaries: &[Pattern], text: &str) -> Option<(usize, usize)> {
    primaries
        .iter()
        .filter_map(|re| re.find_last(text))
        .max_by_key(|m| m.end())
        .map(|m| (m.start(), m.end()))
}

/// What [`KindRules::fires`] found when a rule fired.
struct Fired {
    /// The text its primary pattern matched (only when asked for).
    matched: Option<String>,
    /// Its primaries' last hit in the region text, when the rule reads it (`unless_below`,
    /// `finished_turn`): found once for both.
    last: Option<(usize, usize)>,
}

impl KindRules {
    /// The winning rule for this screen (a fresh scratch: for cold paths; the evaluate system
    /// keeps one and calls [`KindRules::evaluate_in`]).
    pub fn evaluate(&self, look: &Look<'_>) -> Outcome {
        let mut scratch = Scratch::default();
        scratch.begin(look.screen);
        self.evaluate_in(look, &mut scratch, Strategy::DEFAULT)
    }

    /// The winning rule for this screen, by the given strategy (same answer, different cost).
    pub fn evaluate_with(&self, look: &Look<'_>, strategy: Strategy) -> Outcome {
        let mut scratch = Scratch::default();
        scratch.begin(look.screen);
        self.evaluate_in(look, &mut scratch, strategy)
    }

    /// The winning rule for this screen, reading rows through `scratch` (started for this screen
    /// by [`Scratch::begin`]; rows it already rendered are reused).
    pub fn evaluate_in(
        &self,
        look: &Look<'_>,
        scratch: &mut Scratch,
        strategy: Strategy,
    ) -> Outcome {
        let mut texts = Texts::new(look, self.regions.len(), scratch);
        let mut last = None;
        let winner = (0..self.rules.len()).find(|&i| {
            let fired = self.fires(i, &mut texts, strategy, false);
            last = fired.as_ref().and_then(|f| f.last);
            fired.is_some()
        });
        let pointer = match winner {
            Some(i) if self.rules[i].spec.finished_turn => last.map(|hit| (i, hit)),
            // Under a dialog, the turn the transcript shows is already there: the one that
            // ends when the dialog is answered must differ from it (a denial ends no turn).
            Some(i) if self.rules[i].spec.state == RuleState::Blocked => {
                self.turn_under(i, &mut texts, strategy)
            }
            _ => None,
        };
        let turn = pointer
            .and_then(|(i, (a, b))| texts.text(self, self.rules[i].region).get(a..b))
            .map(fingerprint);
        Outcome {
            winner,
            wake: self.wake(look),
            turn,
        }
    }

    /// The first `finished_turn` rule after rule `won` that fires, and its last hit.
    fn turn_under(
        &self,
        won: usize,
        texts: &mut Texts<'_>,
        strategy: Strategy,
    ) -> Option<(usize, (usize, usize))> {
        (won + 1..self.rules.len())
            .filter(|&i| self.rules[i].spec.finished_turn)
            .find_map(|i| Some((i, self.fires(i, texts, strategy, false)?.last?)))
    }

    /// Every region, every rule, fired or not, and the winner: what `explain` prints.
    pub fn explain(&self, look: &Look<'_>) -> Explanation {
        let mut scratch = Scratch::default();
        scratch.begin(look.screen);
        let mut texts = Texts::new(look, self.regions.len(), &mut scratch);
        let regions = (0..self.regions.len())
            .map(|i| (self.regions[i].name(), texts.text(self, i).to_owned()))
            .collect();
        let mut winner = None;
        let rules = (0..self.rules.len())
            .map(|i| {
                let rule = &self.rules[i];
                let fired = self.fires(i, &mut texts, Strategy::PerRule, true);
                if fired.is_some() && winner.is_none() {
                    winner = Some(i);
                }
                RuleReport {
                    id: rule.id.to_string(),
                    file: rule.file.to_string(),
                    state: rule.spec.state.name().into(),
                    priority: rule.spec.priority,
                    region: self.regions[rule.region].name(),
                    fired: fired.is_some(),
                    matched: fired.and_then(|f| f.matched),
                }
            })
            .collect();
        Explanation {
            regions,
            rules,
            winner: winner.map(|i| self.rules[i].id.to_string()),
            verdict: winner.map(|i| self.rules[i].spec.state.name().to_owned()),
        }
    }

    /// `Some` when rule `i` fires (the matched text only if `want_match`); cheap conditions
    /// first, regions only on demand.
    fn fires(
        &self,
        i: usize,
        texts: &mut Texts<'_>,
        strategy: Strategy,
        want_match: bool,
    ) -> Option<Fired> {
        let rule = &self.rules[i];
        let spec = &rule.spec;
        let look = texts.look;
        // The primaries' last hit, when the rule reads it: then it is the search itself.
        let reads_last = !spec.unless_below.is_empty() || spec.finished_turn;
        let mut last = None;
        // A row region is searched around its patterns' literals (no whitespace-only line in it).
        let lines = self.regions[rule.region].no_blank_lines();
        if spec
            .alternate_screen
            .is_some_and(|alt| look.screen.alternate_screen() != alt)
        {
            return None;
        }
        if spec.quiet.is_some() || spec.changed_within.is_some() {
            // (most rules have no time condition: the clock is not read for them)
            let elapsed = look
                .changed_at
                .map(|t| look.now.saturating_duration_since(t));
            if spec.quiet.is_some_and(|q| elapsed.is_none_or(|e| e < q)) {
                return None;
            }
            if spec
                .changed_within
                .is_some_and(|w| elapsed.is_none_or(|e| e >= w))
            {
                return None;
            }
        }
        if !spec.primary_re.is_empty() || !spec.all.is_empty() {
            // Literals first: a rule lacking one that a pattern it needs holds is out before
            // any regex runs. The `all` patterns first: any one of them lacking its literal
            // rules the rule out, where the primaries must all lack theirs; but a folded
            // check (a case-insensitive search) after the primaries' `memmem` scans.
            let text = texts.text(self, rule.region);
            let all_met = |folded: bool| {
                spec.all
                    .iter()
                    .filter(|re| re.folded() == folded)
                    .all(|re| re.may_match(text))
            };
            if !all_met(false) {
                return None;
            }
            // The first primary whose literals are there (the later ones are checked in turn).
            let first = spec.primary_re.iter().position(|re| re.may_match(text));
            if !spec.primary_re.is_empty() && first.is_none() || !all_met(true) {
                return None;
            }
            let hit = match (strategy, first) {
                (_, None) => true,
                // A rule that reads its last hit: the search is finding it, on a row region too
                // (a search in windows first, then the last hit, cost more over the corpus:
                // gemini 69.5M → 73.1M instructions, codex 43.5M → 44.0M).
                (Strategy::PerRule, Some(first)) if reads_last => {
                    // (the earlier primaries lack a literal: they have no hit)
                    last = last_hit(&spec.primary_re[first..], text);
                    last.is_some()
                }
                (Strategy::Combined, _) => texts.set_hit(self, rule),
                (Strategy::PerRule, Some(first)) => {
                    let rest = spec.primary_re.get(first + 1..).unwrap_or_default();
                    spec.primary_re[first].search(text, lines)
                        || rest.iter().any(|re| re.is_match_in(text, lines))
                }
            };
            // (the `all` patterns' literals are known to be there)
            let text = texts.text(self, rule.region);
            if !hit || !spec.all.iter().all(|re| re.search(text, lines)) {
                return None;
            }
        }
        let text = texts.text(self, rule.region);
        if spec.unless.iter().any(|re| re.is_match_in(text, lines)) {
            return None;
        }
        if reads_last && last.is_none() {
            last = last_hit(&spec.primary_re, text);
        }
        if !spec.unless_below.is_empty()
            && let Some((_, end)) = last
        {
            let below = text[end..].split_once('\n').map_or("", |(_, rest)| rest);
            if spec.unless_below.iter().any(|re| re.is_match(below)) {
                return None;
            }
        }
        if spec.spinner.is_some_and(|want| has_spinner(text) != want) {
            return None;
        }
        let matched = want_match
            .then(|| spec.primary_re.iter().find_map(|re| re.find(text)))
            .flatten()
            .map(|m| m.as_str().to_owned());
        Some(Fired { matched, last })
    }

    /// The next instant at which a `quiet_ms`/`changed_within_ms` condition flips.
    fn wake(&self, look: &Look<'_>) -> Option<Instant> {
        let changed = look.changed_at?;
        self.time_thresholds
            .iter()
            .map(|d| changed + *d)
            .find(|t| *t > look.now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{Catalog, Region};
    use crate::rules::regions::{RowBuf, Rows, region_text};
    use std::time::Duration;

    use crate::terminal::Terminal;

    fn kind(rules: &str) -> Catalog {
        let (c, e) = Catalog::load([("t.toml", format!("kind='k'\n{rules}"))]);
        assert!(e.is_empty(), "{e:?}");
        c
    }

    fn parser(text: &str, alternate: bool) -> Terminal {
        let mut p = Terminal::new(12, 60);
        if alternate {
            p.process(b"\x1b[?1049h");
        }
        p.process(text.replace('\n', "\r\n").as_bytes());
        p
    }

    /// A look at `p` with no title and no time condition.
    fn untimed(p: &Terminal) -> Look<'_> {
        Look {
            screen: p,
            title: "",
            progress: "",
            changed_at: None,
            now: Instant::now(),
        }
    }

    fn winner(
        c: &Catalog,
        text: &str,
        changed_ago: Option<u64>,
        alternate: bool,
    ) -> Option<String> {
        let k = c.kind(c.kind_id("k").expect("k")).expect("rules");
        let p = parser(text, alternate);
        let now = Instant::now() + Duration::from_secs(100);
        let look = Look {
            screen: &p,
            title: "✳ Claude",
            progress: "",
            changed_at: changed_ago.map(|ms| now - Duration::from_millis(ms)),
            now,
        };
        let a = k.evaluate_with(&look, Strategy::Combined).winner;
        let b = k.evaluate_with(&look, Strategy::PerRule).winner;
        assert_eq!(a, b, "strategies disagree");
        assert_eq!(
            k.explain(&look).winner,
            a.map(|i| k.rules[i].id.to_string())
        );
        a.map(|i| k.rules[i].id.to_string())
    }

    #[test]
    fn priority_and_no_match() {
        let c = kind(
            "[[screen]]\nid='w'\nstate='working'\ncontains='esc to interrupt'\n[[screen]]\nid='b'\nstate='blocked'\nregex='^ *1\\. Yes'\npriority=10",
        );
        assert_eq!(
            winner(&c, "Do it?\n 1. Yes\n esc to interrupt", None, false).as_deref(),
            Some("b")
        );
        assert_eq!(
            winner(&c, "(ESC to interrupt)", None, false).as_deref(),
            Some("w")
        );
        assert_eq!(winner(&c, "nothing here", None, false), None);
    }

    #[test]
    fn all_unless_unless_below() {
        let c = kind(
            "[[screen]]\nid='a'\nstate='blocked'\nregex='Allow\\?'\nall=['Yes']\nunless=['Denied']\nunless_below=['^> ']",
        );
        assert_eq!(winner(&c, "Allow?\nYes", None, false).as_deref(), Some("a"));
        assert_eq!(winner(&c, "Allow?", None, false), None);
        assert_eq!(winner(&c, "Allow? Yes\nDenied", None, false), None);
        assert_eq!(
            winner(&c, "Allow? Yes\n> typing", None, false),
            None,
            "a live prompt below"
        );
        assert_eq!(
            winner(&c, "> old\nAllow? Yes", None, false).as_deref(),
            Some("a"),
            "prompt above is fine"
        );
    }

    #[test]
    fn time_screen_and_spinner_conditions() {
        let c = kind(
            "[[screen]]\nid='q'\nstate='idle'\nregex='>'\nquiet_ms=500\n[[screen]]\nid='c'\nstate='working'\nregex='>'\nchanged_within_ms=500\n",
        );
        assert_eq!(
            winner(&c, ">", None, false),
            None,
            "no time condition on the first look"
        );
        assert_eq!(winner(&c, ">", Some(600), false).as_deref(), Some("q"));
        assert_eq!(winner(&c, ">", Some(100), false).as_deref(), Some("c"));
        let alt = kind(
            "[[screen]]\nid='alt'\nstate='skip'\nalternate_screen=true\n[[screen]]\nid='s'\nstate='working'\nspinner=true\n",
        );
        assert_eq!(winner(&alt, "x", None, true).as_deref(), Some("alt"));
        assert_eq!(
            winner(&alt, "⠹ Thinking", None, false).as_deref(),
            Some("s")
        );
        assert_eq!(winner(&alt, "✳ Thinking", None, false), None);
        let title = kind("[[screen]]\nid='t'\nstate='working'\nregion='title'\nregex='^✳'\n");
        assert_eq!(winner(&title, "", None, false).as_deref(), Some("t"));
    }

    /// Screens whose bottom regions are built from each other: blank rows between, more rows
    /// than the largest region, fewer than the smallest, none.
    const BOTTOM_SCREENS: [&str; 5] = [
        "a\n\nb\nc\n\n\nd\ne\nf\n\ng",
        "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11",
        "1\n2\n3\n4\n5\n6\n7",
        "x\n\ny",
        "",
    ];

    #[test]
    fn a_larger_bottom_built_on_a_smaller_is_the_same_text_and_reads() {
        let small_first = kind(
            "[[screen]]\nid='s'\nstate='idle'\nregex='nope'\nlines=2\npriority=9\n\
             [[screen]]\nid='l'\nstate='idle'\nregex='nope'\nlines=5\n",
        );
        let alone = kind("[[screen]]\nid='l'\nstate='idle'\nregex='nope'\nlines=5\n");
        for text in BOTTOM_SCREENS {
            let p = parser(text, false);
            let look = untimed(&p);
            let seen = |c: &Catalog| {
                let k = c.kind(c.kind_id("k").expect("k")).expect("rules");
                let mut scratch = Scratch::default();
                scratch.begin(look.screen);
                k.evaluate_in(&look, &mut scratch, Strategy::PerRule);
                let reads: Vec<(usize, u64)> = scratch.rows.reads(look.screen).collect();
                let regions = k.explain(&look).regions;
                (reads, regions.into_iter().find(|(n, _)| n == "bottom:5"))
            };
            assert_eq!(seen(&small_first), seen(&alone), "{text:?}");
        }
    }

    #[test]
    fn bottoms_built_in_any_order_are_the_bottoms_built_alone() {
        // 5, then 2 (its suffix), 9 (extends it upwards), 1 and 7 (suffixes of the extended one)
        let sizes = [5u8, 2, 9, 1, 7];
        let rules: String = sizes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                format!(
                    "[[screen]]\nid='r{n}'\nstate='idle'\nregex='nope'\nlines={n}\npriority={}\n",
                    100 - i
                )
            })
            .collect();
        let c = kind(&rules);
        let k = c.kind(c.kind_id("k").expect("k")).expect("rules");
        for text in BOTTOM_SCREENS {
            let p = parser(text, false);
            let look = untimed(&p);
            let mut alone = RowBuf::default();
            for (name, got) in k.explain(&look).regions {
                let n: u8 = name["bottom:".len()..].parse().expect("a bottom region");
                alone.begin(12);
                let want = region_text(
                    &mut Rows::new(look.screen, &mut alone),
                    Region::Bottom(n),
                    "",
                    "",
                );
                assert_eq!(got, want, "{name} of {text:?}");
            }
        }
    }

    #[test]
    fn wake_is_the_next_flip() {
        let c = kind("[[screen]]\nid='q'\nstate='idle'\nregex='>'\nquiet_ms=500\n");
        let k = c.kind(c.kind_id("k").expect("k")).expect("rules");
        let p = parser(">", false);
        let now = Instant::now();
        let look = Look {
            screen: &p,
            title: "",
            progress: "",
            changed_at: Some(now),
            now,
        };
        assert_eq!(
            k.evaluate(&look).wake,
            Some(now + Duration::from_millis(500))
        );
    }

    #[test]
    fn a_finished_turn_points_at_its_last_hit_whatever_its_wrapping() {
        let c = kind(
            "[[screen]]\nid='t'\nstate='idle'\nregion='screen'\nregex='(?m)^> \\S[^\\n]*\\n(?:[^\\n]*\\n)*?^\\* \\S'\nfinished_turn=true\nunless_below=['^thinking']",
        );
        let k = c.kind(c.kind_id("k").expect("k")).expect("rules");
        let turn = |text: &str, strategy| {
            let p = parser(text, false);
            let look = untimed(&p);
            k.evaluate_with(&look, strategy).turn
        };
        let one = "> first\n* answer one\n";
        let two = "> first\n* answer one\n> second\n* answer two\n";
        for strategy in [Strategy::PerRule, Strategy::Combined] {
            let (a, b) = (turn(one, strategy), turn(two, strategy));
            assert!(a.is_some() && b.is_some(), "{strategy:?}");
            assert_ne!(a, b, "a new turn is another turn ({strategy:?})");
            assert_eq!(
                turn("> second\n* answer   two\n", strategy),
                b,
                "the last hit alone, whitespace aside ({strategy:?})"
            );
            assert_eq!(turn(&format!("{two}thinking"), strategy), None);
        }
    }
}
