//! Text from the server shown on a terminal (`status`, `watch`): pane ids, kinds, labels and
//! causes come from other programs, so control characters (C0, DEL, C1) and bidi overrides are
//! shown escaped (`\x1b`, `\u{9b}`) instead of reaching the terminal as commands.

use std::borrow::Cow;

/// `text` with every control and bidi-override character escaped; unchanged when it has none.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !unsafe_char(c) {
            out.push(c);
        } else if u32::from(c) < 0x80 {
            out.push_str(&format!("\\x{:02x}", u32::from(c)));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        }
    }
    Cow::Owned(out)
}

fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_unicode_kept() {
        assert_eq!(printable("tmux:%1 ✳ ok"), "tmux:%1 ✳ ok");
        assert_eq!(
            printable("a\x1b]0;x\x07\u{9b}2J\u{202e}"),
            "a\\x1b]0;x\\x07\\u{9b}2J\\u{202e}"
        );
    }
}
