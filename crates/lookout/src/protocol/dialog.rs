//! What a pane asks, read from the same regions `agent.explain` shows: for a blocked pane the
//! text of the region its deciding rule read (a one-line region such as the last line is widened
//! to the largest bottom region, so the question above it comes along), for a finished turn the
//! bottom of the screen. The text's fingerprint lets a client prove it answers the dialog it saw
//! (`pane.send`'s `expect`); its numbered options (`❯ 1. Yes`, `2. No, and tell …`) are what a
//! board offers as buttons. Pure: reads an explanation, touches nothing.

use crate::components::LifecycleState;
use crate::rules::Explanation;
use serde::{Deserialize, Serialize};

/// The text a pane shows a person, with its fingerprint and its numbered options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dialog {
    /// The region's text, blank lines at either end dropped.
    pub text: String,
    /// The fingerprint of `text` (16 hex digits): equal texts, equal fingerprints.
    pub hash: String,
    /// The numbered options, in screen order (empty for a finished turn's last lines).
    pub options: Vec<Choice>,
}

/// One numbered option of a dialog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choice {
    /// The key that picks it (its number).
    pub key: String,
    /// Its words.
    pub label: String,
    /// The cursor (`❯` or `>`) is on it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub selected: bool,
}

/// The dialog of a blocked pane, or the last lines of a finished turn; `None` for other states or
/// a pane whose screen no rule reads.
pub fn of(x: &Explanation, lifecycle: LifecycleState) -> Option<Dialog> {
    let region = match lifecycle {
        LifecycleState::Blocked => x
            .winner
            .as_ref()
            .and_then(|w| x.rules.iter().find(|r| &r.id == w))
            .map(|r| r.region.as_str())
            .filter(|name| name.starts_with("bottom") || *name == "screen")
            .and_then(|name| text_of(x, name))
            .or_else(|| largest_bottom(x)),
        LifecycleState::Done => largest_bottom(x),
        _ => None,
    }?;
    let text = trim_blank_lines(region);
    if text.is_empty() {
        return None;
    }
    let options = if lifecycle == LifecycleState::Blocked {
        options(&text)
    } else {
        Vec::new()
    };
    Some(Dialog {
        hash: fingerprint(&text),
        text,
        options,
    })
}

fn text_of<'a>(x: &'a Explanation, name: &str) -> Option<&'a str> {
    x.regions
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, t)| t.as_str())
}

/// The tallest `bottom:N` region the kind's rules read.
fn largest_bottom(x: &Explanation) -> Option<&str> {
    x.regions
        .iter()
        .filter_map(|(n, t)| Some((n.strip_prefix("bottom:")?.parse::<u16>().ok()?, t)))
        .max_by_key(|(rows, _)| *rows)
        .map(|(_, t)| t.as_str())
}

fn trim_blank_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    match (first, last) {
        (Some(a), Some(b)) => lines[a..=b].join("\n"),
        _ => String::new(),
    }
}

/// FNV-1a over the text's bytes, as 16 hex digits: a fingerprint, not a secret.
pub fn fingerprint(text: &str) -> String {
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{h:016x}")
}

/// The last run of numbered options in `text` (`1.`, `2.` … in order), box borders and the
/// cursor glyph stripped.
pub fn options(text: &str) -> Vec<Choice> {
    let mut runs: Vec<Vec<Choice>> = Vec::new();
    for line in text.lines() {
        let Some(choice) = option(line) else {
            continue;
        };
        let next = runs.last().map_or(1, |r| r.len() + 1);
        if choice.key == next.to_string() && next > 1 {
            if let Some(run) = runs.last_mut() {
                run.push(choice);
            }
        } else if choice.key == "1" {
            runs.push(vec![choice]);
        }
    }
    runs.pop().unwrap_or_default()
}

/// One line as an option: `[│ ][❯|>] N. words [│]`.
fn option(line: &str) -> Option<Choice> {
    let line = line.trim().trim_matches(['│', '┃', '|']).trim();
    let (selected, rest) = match line.strip_prefix(['❯', '>', '›']) {
        Some(rest) => (true, rest.trim_start()),
        None => (false, line),
    };
    let digits = rest.find(|c: char| !c.is_ascii_digit())?;
    let (number, tail) = rest.split_at(digits);
    let label = tail.strip_prefix(". ")?.trim();
    if number.is_empty() || number.len() > 2 || label.is_empty() {
        return None;
    }
    Some(Choice {
        key: number.to_owned(),
        label: label.to_owned(),
        selected,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_the_last_numbered_run() {
        let text = "Bash command\n  rm -rf build\n\nDo you want to proceed?\n❯ 1. Yes\n  2. Yes, and don't ask again\n  3. No, and tell Claude what to do differently (esc)\n";
        let o = options(text);
        assert_eq!(o.len(), 3, "{o:?}");
        assert_eq!((o[0].key.as_str(), o[0].label.as_str()), ("1", "Yes"));
        assert!(o[0].selected && !o[1].selected);
        assert!(o[2].label.starts_with("No, and tell"));
        // A boxed dialog of older releases, after an unrelated numbered list.
        let boxed =
            "1. step one\n2. step two\n│ Do you want to proceed? │\n│ > 1. Yes │\n│   2. No  │";
        let o = options(boxed);
        assert_eq!(o.len(), 2, "{o:?}");
        assert_eq!(o[1].label, "No");
        assert!(options("no options here\n3. three").is_empty());
    }

    #[test]
    fn the_fingerprint_tells_texts_apart() {
        assert_eq!(fingerprint("a"), fingerprint("a"));
        assert_ne!(
            fingerprint("proceed with one?"),
            fingerprint("proceed with two?")
        );
        assert_eq!(trim_blank_lines("\n  \nQ?  \n1. Yes\n\n"), "Q?\n1. Yes");
    }
}
