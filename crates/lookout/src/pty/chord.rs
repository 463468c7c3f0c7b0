//! The marker chord of `lookout record`: `Ctrl-]` then a letter inserts a marker instead of reaching the
//! child. A pure byte filter with one byte of state, so chords split across reads work.
//!
//! `Ctrl-]` `w`/`b`/`i`/`o` → marker `working`/`blocked`/`idle`/`other`; `Ctrl-]` `Ctrl-]` → one literal
//! `Ctrl-]`; `Ctrl-]` then anything else → both bytes pass through. Touches nothing outside itself.

/// The chord's lead byte, `Ctrl-]` (0x1d), chosen because agents' TUIs leave it unbound (telnet's escape).
pub const CHORD_KEY: u8 = 0x1d;

/// One piece of filtered input, in the order it was typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Bytes to pass to the child.
    Bytes(Vec<u8>),
    /// A marker label to record instead.
    Marker(&'static str),
}

/// Filters stdin bytes, turning marker chords into [`Piece::Marker`]s.
#[derive(Debug, Default)]
pub struct ChordFilter {
    pending: bool,
}

/// The marker label a chord letter stands for.
pub fn label_for(key: u8) -> Option<&'static str> {
    match key {
        b'w' => Some("working"),
        b'b' => Some("blocked"),
        b'i' => Some("idle"),
        b'o' => Some("other"),
        _ => None,
    }
}

impl ChordFilter {
    /// Filters one read of stdin; a trailing `Ctrl-]` is held until the next call.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Piece> {
        let mut pieces = Vec::new();
        let mut pass = Vec::with_capacity(bytes.len());
        for &byte in bytes {
            if !self.pending {
                if byte == CHORD_KEY {
                    self.pending = true;
                } else {
                    pass.push(byte);
                }
                continue;
            }
            self.pending = false;
            if byte == CHORD_KEY {
                pass.push(CHORD_KEY);
            } else if let Some(label) = label_for(byte) {
                if !pass.is_empty() {
                    pieces.push(Piece::Bytes(std::mem::take(&mut pass)));
                }
                pieces.push(Piece::Marker(label));
            } else {
                pass.extend_from_slice(&[CHORD_KEY, byte]);
            }
        }
        if !pass.is_empty() {
            pieces.push(Piece::Bytes(pass));
        }
        pieces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(b: &[u8]) -> Piece {
        Piece::Bytes(b.to_vec())
    }

    #[test]
    fn chord_in_one_read_becomes_a_marker_between_the_bytes() {
        let mut filter = ChordFilter::default();
        assert_eq!(
            filter.feed(b"ab\x1dwcd"),
            vec![bytes(b"ab"), Piece::Marker("working"), bytes(b"cd")]
        );
        assert_eq!(
            filter.feed(b"\x1db\x1di\x1do"),
            vec![
                Piece::Marker("blocked"),
                Piece::Marker("idle"),
                Piece::Marker("other")
            ]
        );
    }

    #[test]
    fn chord_split_across_reads_still_works() {
        let mut filter = ChordFilter::default();
        assert_eq!(filter.feed(b"a\x1d"), vec![bytes(b"a")]);
        assert_eq!(filter.feed(b"b"), vec![Piece::Marker("blocked")]);
        assert_eq!(filter.feed(b"\x1d"), vec![]);
        assert_eq!(filter.feed(b"\x1d"), vec![bytes(b"\x1d")]);
    }

    #[test]
    fn doubled_lead_is_one_literal_and_other_keys_pass_both_bytes() {
        let mut filter = ChordFilter::default();
        assert_eq!(filter.feed(b"\x1d\x1dx"), vec![bytes(b"\x1dx")]);
        assert_eq!(filter.feed(b"\x1dx\x1dW"), vec![bytes(b"\x1dx\x1dW")]);
        // After a literal, the next lead starts a fresh chord.
        assert_eq!(
            filter.feed(b"\x1d\x1d\x1dw"),
            vec![bytes(b"\x1d"), Piece::Marker("working")]
        );
    }
}
