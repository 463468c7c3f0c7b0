//! In-band status: the OSC sequences with which a program announces its own state through the
//! byte stream (so they cross SSH and `lookout run` with no socket or hook), read into an
//! [`Announcement`]. Pure: called by `perform`'s `osc_dispatch` with the sequence's parameters,
//! touches nothing else. What each sequence means is written down in docs/agent-authors.md.
//!
//! Accepted: desktop notifications (OSC 9 text, OSC 777 `notify`, OSC 99), OSC 9;4 progress, and
//! the `key=value` status sequence OSC 7501 (`state=working:app=codex`). Queries (`7501;?`,
//! kitty's `p=?`), ConEmu's other OSC 9 commands and anything longer than [`MAX_PAYLOAD`] bytes
//! are ignored: a notification's text is read for a few words and never kept.

/// The longest payload read; a longer one is ignored (a status is a few words).
pub const MAX_PAYLOAD: usize = 512;

/// The state a program announced about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Announced {
    /// Running a turn.
    Working,
    /// Waiting for the person (permission, approval, a question).
    Blocked,
    /// A turn finished (or the program asks for a look).
    Done,
    /// At rest. `settled`: said outright, not inferred from a progress bar being cleared.
    Idle {
        /// Said outright.
        settled: bool,
    },
}

/// Which sequence said it: its name is the cause lookout shows (`inband:osc777`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sequence {
    /// OSC 9 ; text (iTerm2, ConEmu, WezTerm notification).
    Osc9,
    /// OSC 9 ; 4 ; state ; percent (ConEmu progress).
    Progress,
    /// OSC 777 ; notify ; title ; body (urxvt, foot, ghostty).
    Osc777,
    /// OSC 99 ; params ; payload (kitty).
    Osc99,
    /// OSC 7501 ; state=… (a `key=value` status, as Codex sends).
    Status,
}

impl Sequence {
    /// The name shown as the cause.
    pub fn name(self) -> &'static str {
        match self {
            Sequence::Osc9 => "osc9",
            Sequence::Progress => "osc9;4",
            Sequence::Osc777 => "osc777",
            Sequence::Osc99 => "osc99",
            Sequence::Status => "osc7501",
        }
    }
}

/// One announcement: what was said, and by which sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Announcement {
    /// The state.
    pub state: Announced,
    /// The sequence.
    pub sequence: Sequence,
}

/// Reads an OSC's parameters (split on `;` by the parser) as an announcement, if it is one.
pub fn read(params: &[&[u8]]) -> Option<Announcement> {
    let len: usize = params.iter().map(|p| p.len() + 1).sum();
    if len > MAX_PAYLOAD {
        return None;
    }
    let (sequence, state) = match params {
        [b"9", b"4", rest @ ..] => (Sequence::Progress, progress(rest)?),
        [b"9", first, rest @ ..] => (Sequence::Osc9, osc9(first, rest)?),
        [b"777", b"notify", text @ ..] => (Sequence::Osc777, notification(text)?),
        [b"99", meta, text @ ..] => (Sequence::Osc99, kitty(meta, text)?),
        [b"7501", fields] => (Sequence::Status, status(fields)?),
        _ => return None,
    };
    Some(Announcement { state, sequence })
}

/// `9;4;st;pr`: 1 (set) and 3 (indeterminate) are working, 0 clears it; 2 (error) and 4
/// (paused) say nothing about whether the program still works, so they are not read.
fn progress(rest: &[&[u8]]) -> Option<Announced> {
    match rest.first().copied().unwrap_or(b"0") {
        b"0" | b"" => Some(Announced::Idle { settled: false }),
        b"1" | b"3" => Some(Announced::Working),
        _ => None,
    }
}

/// `9;text`: a notification, unless the first part is one of ConEmu's numbered commands
/// (`9;9;cwd`, `9;1;ms`, …), which are not notifications.
fn osc9(first: &[u8], rest: &[&[u8]]) -> Option<Announced> {
    if !first.is_empty() && first.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut parts = Vec::with_capacity(rest.len() + 1);
    parts.push(first);
    parts.extend_from_slice(rest);
    notification(&parts)
}

/// kitty's `99;key=value:…;payload`: a query (`p=?`), a close/alive/icon/buttons chunk or a
/// chunk with more to come (`d=0`) is not a finished notification. A base64 payload (`e=1`) is
/// read as a finished turn: its words are not decoded.
fn kitty(meta: &[u8], text: &[&[u8]]) -> Option<Announced> {
    let mut encoded = false;
    for field in meta.split(|b| *b == b':') {
        match field {
            b"d=0" => return None,
            b"e=1" => encoded = true,
            [b'p', b'=', kind @ ..] if !matches!(kind, b"title" | b"body") => return None,
            _ => {}
        }
    }
    if encoded && text.iter().any(|t| !t.is_empty()) {
        return Some(Announced::Done);
    }
    notification(text)
}

/// `7501;state=<state>[:key=value…]`; `state=clear` (sent on exit) and queries say nothing.
fn status(fields: &[u8]) -> Option<Announced> {
    let state = fields
        .split(|b| *b == b':')
        .find_map(|f| f.strip_prefix(b"state="))?;
    match state {
        b"working" | b"busy" => Some(Announced::Working),
        b"blocked" | b"waiting" => Some(Announced::Blocked),
        b"done" | b"error" => Some(Announced::Done),
        b"idle" => Some(Announced::Idle { settled: true }),
        _ => None,
    }
}

/// A notification's text: asking for permission, approval or an answer is blocked; anything
/// else says a turn finished. A notification with no text is not one.
fn notification(parts: &[&[u8]]) -> Option<Announced> {
    const ASKS: [&str; 6] = [
        "permission",
        "approv",
        "needs your input",
        "needs input",
        "confirm",
        "needs your answer",
    ];
    let text = parts
        .iter()
        .map(|p| String::from_utf8_lossy(p).to_lowercase())
        .collect::<Vec<_>>()
        .join(";");
    if text.chars().all(|c| c == ';' || c.is_whitespace()) {
        return None;
    }
    Some(if ASKS.iter().any(|w| text.contains(w)) {
        Announced::Blocked
    } else {
        Announced::Done
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(osc: &str) -> Option<(Announced, &'static str)> {
        let params: Vec<&[u8]> = osc.split(';').map(str::as_bytes).collect();
        read(&params).map(|a| (a.state, a.sequence.name()))
    }

    #[test]
    fn what_real_programs_send() {
        use Announced::*;
        let cases = [
            // Claude Code's channels (iterm2, ghostty, kitty), as its 2.1 releases write them.
            (
                "9;Claude Code: Claude needs your permission to use Bash",
                Some((Blocked, "osc9")),
            ),
            ("9;Claude is waiting for your input", Some((Done, "osc9"))),
            (
                "777;notify;Claude Code;Claude needs your permission",
                Some((Blocked, "osc777")),
            ),
            ("99;i=7:d=0:p=title;Claude Code", None),
            (
                "99;i=7:p=body;Claude needs your permission",
                Some((Blocked, "osc99")),
            ),
            ("99;i=7:d=1:a=focus;", None),
            ("99;i=opentui-notifications:p=?;", None),
            ("99;;Task finished", Some((Done, "osc99"))),
            ("9;4;3;", Some((Working, "osc9;4"))),
            ("9;4;1;40", Some((Working, "osc9;4"))),
            ("9;4;0;", Some((Idle { settled: false }, "osc9;4"))),
            ("9;4;2;40", None),
            ("9;9;C:\\Users", None),
            // Codex 0.171.
            ("7501;state=working:app=codex", Some((Working, "osc7501"))),
            (
                "7501;state=blocked:app=codex:kind=permission",
                Some((Blocked, "osc7501")),
            ),
            ("7501;state=done:app=codex", Some((Done, "osc7501"))),
            (
                "7501;state=idle:app=codex",
                Some((Idle { settled: true }, "osc7501")),
            ),
            ("7501;state=clear", None),
            ("7501;?", None),
            ("0;a title", None),
        ];
        for (osc, want) in cases {
            assert_eq!(read_str(osc), want, "{osc}");
        }
    }

    #[test]
    fn garbage_and_oversized_payloads_are_ignored() {
        let long = format!("9;{}", "x".repeat(MAX_PAYLOAD));
        assert_eq!(read_str(&long), None);
        assert_eq!(read(&[b"7501", b"state=\xff\xfe"]), None);
        assert_eq!(
            read(&[b"9", b"\xff permission \xfe"]).map(|a| a.state),
            Some(Announced::Blocked)
        );
        assert_eq!(read(&[b"777"]), None);
        assert_eq!(read(&[b"777", b"notify", b"", b" "]), None);
        assert_eq!(read(&[b"9", b""]), None);
        assert_eq!(read(&[]), None);
    }
}
