//! Answers to the terminal queries programs send at start-up, for headless runs where no real terminal
//! is there to answer (many CLIs wait, or misdetect colours, until one does).
//!
//! Keeps its own terminal (`terminal::Terminal`) of the child's output so the cursor-position report is the true position
//! at the moment of the query. A pure function of the output bytes: no I/O, no clock.

use crate::pty::terminal::WindowSize;
use crate::rules::Grid;
use crate::terminal::Terminal;

/// Queries longer than this are not ones we answer; stop collecting so garbage cannot grow memory.
const MAX_SEQUENCE: usize = 64;

/// Scanner state between reads, so a query split across two reads is still seen.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Scan {
    Ground,
    Escape,
    Csi(Vec<u8>),
    Osc(Vec<u8>),
    /// Inside an OSC, just after an ESC (the first half of the ST terminator).
    OscEscape(Vec<u8>),
}

/// Watches a child's output and produces the replies a terminal would send back.
pub struct QueryResponder {
    screen: Terminal,
    scan: Scan,
}

impl QueryResponder {
    /// A responder for a terminal of `size`.
    pub fn new(size: WindowSize) -> Self {
        // No scrollback: only the cursor position is ever read.
        QueryResponder {
            screen: Terminal::new(size.rows, size.cols),
            scan: Scan::Ground,
        }
    }

    /// Follows a resize of the child's terminal.
    pub fn resize(&mut self, size: WindowSize) {
        self.screen.resize(size.rows, size.cols);
    }

    /// Reads one chunk of the child's output; returns the bytes to type back, in query order.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut replies = Vec::new();
        let mut processed = 0;
        for (i, &byte) in bytes.iter().enumerate() {
            if let Some(query) = self.step(byte) {
                // Bring the screen up to the query so a cursor report sees everything before it.
                let _ = self.screen.process(&bytes[processed..=i]);
                processed = i + 1;
                replies.extend(self.answer(&query));
            }
        }
        let _ = self.screen.process(&bytes[processed..]);
        replies
    }

    /// Advances the scanner by one byte; returns a finished query sequence.
    fn step(&mut self, byte: u8) -> Option<Query> {
        const ESC: u8 = 0x1b;
        const BEL: u8 = 0x07;
        let state = std::mem::replace(&mut self.scan, Scan::Ground);
        let (next, done) = match (state, byte) {
            (Scan::Osc(body), ESC) => (Scan::OscEscape(body), None),
            (_, ESC) => (Scan::Escape, None),
            (Scan::Ground, _) => (Scan::Ground, None),
            (Scan::Escape, b'[') => (Scan::Csi(Vec::new()), None),
            (Scan::Escape, b']') => (Scan::Osc(Vec::new()), None),
            (Scan::Escape, _) => (Scan::Ground, None),
            (Scan::Csi(params), 0x40..=0x7e) => (Scan::Ground, Some(Query::Csi(params, byte))),
            (Scan::Csi(mut params), 0x20..=0x3f) if params.len() < MAX_SEQUENCE => {
                params.push(byte);
                (Scan::Csi(params), None)
            }
            (Scan::Csi(_), _) => (Scan::Ground, None),
            (Scan::Osc(body), BEL) => (Scan::Ground, Some(Query::Osc(body, Terminator::Bel))),
            (Scan::Osc(mut body), _) => {
                if body.len() < MAX_SEQUENCE {
                    body.push(byte);
                }
                (Scan::Osc(body), None)
            }
            (Scan::OscEscape(body), b'\\') => {
                (Scan::Ground, Some(Query::Osc(body, Terminator::St)))
            }
            (Scan::OscEscape(_), _) => {
                // An ESC that did not end the OSC starts a new sequence, as in a real terminal.
                self.scan = Scan::Escape;
                return self.step(byte);
            }
        };
        self.scan = next;
        done
    }

    fn answer(&self, query: &Query) -> Vec<u8> {
        match query {
            Query::Csi(params, final_byte) => match (params.as_slice(), final_byte) {
                // DA1: a VT220-class terminal with ANSI colour, as xterm says.
                (b"" | b"0", b'c') => b"\x1b[?62;22c".to_vec(),
                (b"5", b'n') => b"\x1b[0n".to_vec(),
                (b"6", b'n') => {
                    let (row, col) = self.screen.cursor();
                    format!("\x1b[{};{}R", row + 1, col + 1).into_bytes()
                }
                (b">" | b">0", b'q') => {
                    format!("\x1bP>|lookout {}\x1b\\", env!("CARGO_PKG_VERSION")).into_bytes()
                }
                _ => Vec::new(),
            },
            Query::Osc(body, terminator) => {
                let colour = match body.as_slice() {
                    b"10;?" => "10;rgb:ffff/ffff/ffff",
                    b"11;?" => "11;rgb:0000/0000/0000",
                    _ => return Vec::new(),
                };
                // Answer with the terminator the program used; some parse only the one they sent.
                let end: &str = match terminator {
                    Terminator::Bel => "\x07",
                    Terminator::St => "\x1b\\",
                };
                format!("\x1b]{colour}{end}").into_bytes()
            }
        }
    }
}

#[derive(Debug)]
enum Terminator {
    Bel,
    St,
}

#[derive(Debug)]
enum Query {
    /// Parameter and intermediate bytes, then the final byte.
    Csi(Vec<u8>, u8),
    Osc(Vec<u8>, Terminator),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn responder() -> QueryResponder {
        QueryResponder::new(WindowSize { cols: 80, rows: 24 })
    }

    #[test]
    fn answers_each_start_up_query() {
        let mut r = responder();
        assert_eq!(r.feed(b"\x1b[c"), b"\x1b[?62;22c");
        assert_eq!(r.feed(b"\x1b[0c"), b"\x1b[?62;22c");
        assert_eq!(r.feed(b"\x1b[5n"), b"\x1b[0n");
        assert_eq!(r.feed(b"\x1b]10;?\x07"), b"\x1b]10;rgb:ffff/ffff/ffff\x07");
        assert_eq!(
            r.feed(b"\x1b]11;?\x1b\\"),
            b"\x1b]11;rgb:0000/0000/0000\x1b\\"
        );
        let version = r.feed(b"\x1b[>q");
        assert!(version.starts_with(b"\x1bP>|lookout "), "{version:?}");
        assert!(version.ends_with(b"\x1b\\"));
    }

    #[test]
    fn cursor_report_is_the_position_at_the_query() {
        let mut r = responder();
        assert_eq!(r.feed(b"\r\nabc\x1b[6nXYZ\x1b[6n"), b"\x1b[2;4R\x1b[2;7R");
    }

    #[test]
    fn split_queries_are_answered_and_other_sequences_are_not() {
        let mut r = responder();
        assert_eq!(r.feed(b"hi \x1b["), b"");
        assert_eq!(r.feed(b"6"), b"");
        assert_eq!(r.feed(b"n"), b"\x1b[1;4R");
        assert_eq!(
            r.feed(b"\x1b[1m\x1b[2J\x1b]0;title\x07\x1b[?25h\x1b]10;rgb:1/2/3\x07"),
            b""
        );
        assert_eq!(r.feed(b"\x1b]11;"), b"");
        assert_eq!(r.feed(b"?\x1b"), b"");
        assert_eq!(r.feed(b"\\"), b"\x1b]11;rgb:0000/0000/0000\x1b\\");
    }

    #[test]
    fn garbage_never_panics_or_grows() {
        let mut r = responder();
        let mut junk: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        junk.extend_from_slice(b"\x1b]");
        junk.extend(std::iter::repeat_n(b'x', 10_000));
        let _ = r.feed(&junk);
        assert!(matches!(&r.scan, Scan::Osc(body) if body.len() <= MAX_SEQUENCE));
    }
}
