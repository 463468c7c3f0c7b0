//! `Drift`: a sign that the pane's rules may no longer fit its CLI — the screen
//! keeps changing with no rule of its kind firing, or the identified CLI is newer than every
//! release the rules were recorded on. Written by `evaluate_rules` only; shown by status and
//! explain. It never decides a state: it only says what to record.

use bevy_ecs::component::Component;
use std::cmp::Ordering;
use std::time::{Duration, Instant};

/// How long a pane must keep changing with no rule firing before it is flagged.
pub const UNMATCHED_FOR: Duration = Duration::from_secs(60);
/// A pause longer than this between two unmatched changes starts the count again (the pane
/// did not *keep* changing).
pub const UNMATCHED_GAP: Duration = Duration::from_secs(15);

/// Why the rules may be stale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stale {
    /// The screen kept changing this long with no rule of the kind firing.
    Unmatched {
        /// Since when.
        since: Instant,
        /// The CLI's release, when known (`--version`): the one to record.
        version: Option<String>,
    },
    /// The identified CLI is newer than any recorded release.
    Newer {
        /// What the CLI said (`--version`).
        version: String,
        /// The newest recorded release.
        recorded: String,
    },
}

/// The pane's drift bookkeeping.
#[derive(Component, Debug, Clone, Default, PartialEq, Eq)]
pub struct Drift {
    /// First and latest change of the current run of changes no rule fired on.
    pub unmatched: Option<(Instant, Instant)>,
    /// The flag, when raised.
    pub stale: Option<Stale>,
}

impl Drift {
    /// The bookkeeping after one evaluation at `now`: whether a rule `fired` (`None`: the
    /// screen did not change, so the run of unmatched output neither grows nor ends), the CLI's
    /// identified `version` and the kind's `recorded` releases.
    pub fn observe(
        &self,
        fired: Option<bool>,
        now: Instant,
        version: Option<&str>,
        recorded: &[String],
    ) -> Drift {
        let unmatched = match self.unmatched {
            _ if fired.is_none() => self.unmatched,
            _ if fired == Some(true) => None,
            Some((since, last)) if now.saturating_duration_since(last) <= UNMATCHED_GAP => {
                Some((since, now))
            }
            _ => Some((now, now)),
        };
        let newer = version.and_then(|v| {
            let newest = recorded.iter().max_by(|a, b| compare_versions(a, b))?;
            (compare_versions(v, newest) == Ordering::Greater).then(|| Stale::Newer {
                version: v.to_owned(),
                recorded: newest.clone(),
            })
        });
        let quiet = unmatched
            .filter(|(since, last)| last.saturating_duration_since(*since) >= UNMATCHED_FOR)
            .map(|(since, _)| Stale::Unmatched {
                since,
                version: version.map(str::to_owned),
            });
        Drift {
            unmatched,
            stale: newer.or(quiet),
        }
    }

    /// One line for a person: what is wrong and what to record. `kind` names the agent.
    pub fn describe(&self, kind: &str, now: Instant) -> Option<String> {
        Some(match self.stale.as_ref()? {
            Stale::Newer { version, recorded } => format!(
                "{kind} {version} is newer than every recorded release (newest {recorded}): record it \
                 (tools/install_agents.sh {kind}@{version}; tools/capture.py record {kind} --version {version})"
            ),
            Stale::Unmatched {
                since,
                version: Some(v),
            } => format!(
                "the screen kept changing for {}s with no {kind} rule firing ({kind} {v}): record \
                 this release's screens (tools/capture.py record {kind} --version {v}) and add the \
                 rule they need",
                now.saturating_duration_since(*since).as_secs()
            ),
            Stale::Unmatched {
                since,
                version: None,
            } => format!(
                "the screen kept changing for {}s with no {kind} rule firing ({kind}, release \
                 unknown: `{kind} --version`): record this release's screens (tools/capture.py \
                 record {kind}) and add the rule they need",
                now.saturating_duration_since(*since).as_secs()
            ),
        })
    }
}

/// Orders release numbers part by part, numerically (`2.1.99` < `2.1.197`); a part's non-digit
/// tail (`-beta`) orders after the bare number only by text.
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    let key = |v: &str| -> Vec<(u64, String)> {
        v.trim_start_matches('v')
            .split(['.', '-'])
            .map(|p| {
                let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
                (digits.parse().unwrap_or(0), p[digits.len()..].to_owned())
            })
            .collect()
    };
    key(a).cmp(&key(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_changing_with_no_rule_for_a_minute() {
        let t0 = Instant::now();
        let mut d = Drift::default();
        for s in (0..=60).step_by(5) {
            d = d.observe(Some(false), t0 + Duration::from_secs(s), None, &[]);
        }
        assert!(matches!(d.stale, Some(Stale::Unmatched { since, .. }) if since == t0));
        assert!(
            d.describe("claude", t0 + Duration::from_secs(61))
                .is_some_and(|s| s.contains("61s"))
        );
        let fired = d.observe(Some(true), t0 + Duration::from_secs(62), None, &[]);
        assert_eq!(fired, Drift::default(), "a rule firing clears it");
    }

    #[test]
    fn a_pause_is_not_keeping_on_changing() {
        let t0 = Instant::now();
        let d = Drift::default()
            .observe(Some(false), t0, None, &[])
            .observe(Some(false), t0 + Duration::from_secs(70), None, &[]);
        assert_eq!(d.stale, None);
    }

    #[test]
    fn a_newer_cli_than_any_recording() {
        let now = Instant::now();
        let rec = ["2.1.197".to_owned(), "2.1.332".to_owned()];
        let d = Drift::default().observe(Some(true), now, Some("2.1.340"), &rec);
        assert_eq!(
            d.stale,
            Some(Stale::Newer {
                version: "2.1.340".into(),
                recorded: "2.1.332".into()
            })
        );
        assert!(
            d.describe("claude", now)
                .is_some_and(|s| s.contains("claude@2.1.340"))
        );
        assert_eq!(
            Drift::default()
                .observe(Some(true), now, Some("2.1.252"), &rec)
                .stale,
            None
        );
        assert_eq!(
            Drift::default()
                .observe(Some(true), now, Some("2.1.340"), &[])
                .stale,
            None,
            "nothing recorded: unverified, not drift"
        );
        assert_eq!(compare_versions("2.1.99", "2.1.197"), Ordering::Less);
    }
}
