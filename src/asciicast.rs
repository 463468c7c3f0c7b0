//! asciicast v2 recordings: the file format `lookout record` writes and `lookout replay` reads.
//!
//! A cast is one JSON header line followed by one JSON array per event, `[seconds, code, data]`, with code
//! `"o"` (output), `"i"` (input), `"r"` (resize, data `"COLSxROWS"`) or `"m"` (marker, data a label).
//! This file only converts between bytes and [`Cast`] values; it touches no terminal and no clock, and
//! does I/O only through the reader or writer it is handed.

use crate::components::check_size;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, BufRead, Write};
use std::time::Duration;

/// The latest event time a recording may have (24 h): replay ticks through recording time, so a
/// hostile `1e10` would never finish.
pub const MAX_TIME: Duration = Duration::from_secs(24 * 60 * 60);
/// The latest header `timestamp` accepted (9999-12-31T23:59:59Z): later ones overflow the clock.
pub const MAX_TIMESTAMP: u64 = 253_402_300_799;

/// The header line of an asciicast v2 file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Format version; always 2 for files this module accepts.
    pub version: u32,
    /// Terminal width in columns at the start of the recording.
    pub width: u16,
    /// Terminal height in rows at the start of the recording.
    pub height: u16,
    /// Unix time (seconds) when the recording started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<u64>,
    /// A human title for the recording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Selected environment of the recorded program (asciinema records `TERM` and `SHELL`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

impl Header {
    /// A version-2 header for a terminal of `width` × `height` with no optional fields.
    pub fn new(width: u16, height: u16) -> Self {
        Header {
            version: 2,
            width,
            height,
            timestamp: None,
            title: None,
            env: BTreeMap::new(),
        }
    }
}

/// What happened at one point of a recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    /// Bytes the program wrote to its terminal (`"o"`).
    Output(String),
    /// Bytes typed into the program's terminal (`"i"`).
    Input(String),
    /// The terminal was resized (`"r"`).
    Resize {
        /// New width in columns.
        cols: u16,
        /// New height in rows.
        rows: u16,
    },
    /// A labelled point in time (`"m"`); lookout uses the label for the expected state.
    Marker(String),
}

/// One event of a recording, timed from the start of the recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CastEvent {
    /// Time since the recording started.
    pub time: Duration,
    /// What happened.
    pub kind: EventKind,
}

/// A whole recording held in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Cast {
    /// The header line.
    pub header: Header,
    /// The events in file order.
    pub events: Vec<CastEvent>,
}

/// Why a cast could not be read, and on which line (1-based; the header is line 1).
#[derive(Debug)]
pub struct CastError {
    /// The 1-based line number the problem is on.
    pub line: usize,
    /// What is wrong with it.
    pub kind: CastErrorKind,
}

/// The reasons [`read`] gives up.
#[derive(Debug)]
pub enum CastErrorKind {
    /// The underlying reader failed.
    Io(io::Error),
    /// The input has no header line at all.
    Empty,
    /// The header line is not a JSON object with integer `version`, `width` and `height`.
    BadHeader(String),
    /// The header names a version other than 2.
    UnsupportedVersion(u32),
    /// An event line is not `[non-negative seconds, "code", "data"]`, or its data does not fit its code.
    BadEvent(String),
}

impl fmt::Display for CastError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: ", self.line)?;
        match &self.kind {
            CastErrorKind::Io(err) => write!(f, "cannot read: {err}"),
            CastErrorKind::Empty => {
                write!(f, "empty file: an asciicast starts with a JSON header line")
            }
            CastErrorKind::BadHeader(why) => write!(f, "bad header: {why}"),
            CastErrorKind::UnsupportedVersion(v) => {
                write!(f, "asciicast version {v} is not supported (only version 2)")
            }
            CastErrorKind::BadEvent(why) => write!(f, "bad event: {why}"),
        }
    }
}

impl std::error::Error for CastError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            CastErrorKind::Io(err) => Some(err),
            _ => None,
        }
    }
}

/// Reads a whole asciicast v2 recording.
///
/// Blank lines are ignored and events with codes other than `o`, `i`, `r`, `m` are skipped, since
/// asciinema allows extensions; anything else malformed is an error naming its line.
pub fn read(reader: impl BufRead) -> Result<Cast, CastError> {
    let mut lines = reader.lines().enumerate().map(|(i, line)| (i + 1, line));
    let header = loop {
        match lines.next() {
            None => {
                return Err(CastError {
                    line: 1,
                    kind: CastErrorKind::Empty,
                });
            }
            Some((line, Err(err))) => {
                return Err(CastError {
                    line,
                    kind: CastErrorKind::Io(err),
                });
            }
            Some((_, Ok(text))) if text.trim().is_empty() => continue,
            Some((line, Ok(text))) => {
                break parse_header(&text).map_err(|kind| CastError { line, kind })?;
            }
        }
    };
    let mut events = Vec::new();
    for (line, text) in lines {
        let text = text.map_err(|err| CastError {
            line,
            kind: CastErrorKind::Io(err),
        })?;
        if text.trim().is_empty() {
            continue;
        }
        if let Some(event) = parse_event(&text).map_err(|kind| CastError { line, kind })? {
            events.push(event);
        }
    }
    Ok(Cast { header, events })
}

fn parse_header(text: &str) -> Result<Header, CastErrorKind> {
    // Check the version before the full shape so a v1 file gets the clearer message.
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|err| CastErrorKind::BadHeader(err.to_string()))?;
    let version = value.get("version").and_then(serde_json::Value::as_u64);
    match version {
        None => {
            return Err(CastErrorKind::BadHeader(
                "no integer \"version\" field".into(),
            ));
        }
        Some(2) => {}
        Some(v) => {
            return Err(CastErrorKind::UnsupportedVersion(
                u32::try_from(v).unwrap_or(u32::MAX),
            ));
        }
    }
    let header: Header =
        serde_json::from_value(value).map_err(|err| CastErrorKind::BadHeader(err.to_string()))?;
    check_size(header.height, header.width).map_err(|e| CastErrorKind::BadHeader(e.to_string()))?;
    if header.timestamp.is_some_and(|t| t > MAX_TIMESTAMP) {
        return Err(CastErrorKind::BadHeader(format!(
            "timestamp must be at most {MAX_TIMESTAMP} (the year 9999)"
        )));
    }
    Ok(header)
}

/// Parses one event line; `Ok(None)` for a well-formed event with a code this module does not know.
fn parse_event(text: &str) -> Result<Option<CastEvent>, CastErrorKind> {
    let bad = |why: &str| CastErrorKind::BadEvent(why.to_string());
    let (secs, code, data): (f64, String, String) = serde_json::from_str(text).map_err(|err| {
        CastErrorKind::BadEvent(format!("expected [seconds, \"code\", \"data\"]: {err}"))
    })?;
    let time = Duration::try_from_secs_f64(secs)
        .map_err(|_| bad("time must be a finite, non-negative number"))?;
    if time > MAX_TIME {
        return Err(CastErrorKind::BadEvent(format!(
            "time {secs} s is past the longest recording replay accepts ({} s)",
            MAX_TIME.as_secs()
        )));
    }
    let kind = match code.as_str() {
        "o" => EventKind::Output(data),
        "i" => EventKind::Input(data),
        "m" => EventKind::Marker(data),
        "r" => {
            let (cols, rows) =
                parse_size(&data).ok_or_else(|| bad("resize data must be \"COLSxROWS\""))?;
            check_size(rows, cols).map_err(|e| CastErrorKind::BadEvent(e.to_string()))?;
            EventKind::Resize { cols, rows }
        }
        _ => return Ok(None),
    };
    Ok(Some(CastEvent { time, kind }))
}

fn parse_size(data: &str) -> Option<(u16, u16)> {
    let (cols, rows) = data.split_once('x')?;
    Some((cols.trim().parse().ok()?, rows.trim().parse().ok()?))
}

/// Writes a recording one event at a time, flushing each line so a crash loses at most the last event.
///
/// Output and input arrive as raw bytes that may split a UTF-8 character across two events; the
/// incomplete tail is held back and prepended to the next event of the same stream, and only bytes that
/// can never become valid UTF-8 are replaced with U+FFFD.
pub struct Writer<W: Write> {
    out: W,
    output_tail: Vec<u8>,
    input_tail: Vec<u8>,
    last_time: Duration,
}

impl<W: Write> Writer<W> {
    /// Writes `header` and returns a writer for the events.
    pub fn new(mut out: W, header: &Header) -> io::Result<Self> {
        let mut line = serde_json::to_string(header).map_err(io::Error::other)?;
        line.push('\n');
        out.write_all(line.as_bytes())?;
        out.flush()?;
        Ok(Writer {
            out,
            output_tail: Vec::new(),
            input_tail: Vec::new(),
            last_time: Duration::ZERO,
        })
    }

    /// Records bytes the program wrote (`"o"`).
    pub fn output(&mut self, at: Duration, bytes: &[u8]) -> io::Result<()> {
        let text = take_utf8(&mut self.output_tail, bytes);
        self.text_event(at, "o", &text)
    }

    /// Records bytes typed into the program (`"i"`).
    pub fn input(&mut self, at: Duration, bytes: &[u8]) -> io::Result<()> {
        let text = take_utf8(&mut self.input_tail, bytes);
        self.text_event(at, "i", &text)
    }

    /// Records a resize (`"r"`).
    pub fn resize(&mut self, at: Duration, cols: u16, rows: u16) -> io::Result<()> {
        self.event(at, "r", &format!("{cols}x{rows}"))
    }

    /// Records a marker (`"m"`).
    pub fn marker(&mut self, at: Duration, label: &str) -> io::Result<()> {
        self.event(at, "m", label)
    }

    /// Writes out any held-back partial characters (lossily, since no more bytes will come) and
    /// returns the underlying writer.
    pub fn finish(mut self) -> io::Result<W> {
        let at = self.last_time;
        let output = String::from_utf8_lossy(&std::mem::take(&mut self.output_tail)).into_owned();
        self.text_event(at, "o", &output)?;
        let input = String::from_utf8_lossy(&std::mem::take(&mut self.input_tail)).into_owned();
        self.text_event(at, "i", &input)?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn text_event(&mut self, at: Duration, code: &str, text: &str) -> io::Result<()> {
        // A chunk that was only the start of a character produces no event until it completes.
        if text.is_empty() {
            Ok(())
        } else {
            self.event(at, code, text)
        }
    }

    fn event(&mut self, at: Duration, code: &str, data: &str) -> io::Result<()> {
        // Times only move forward in a cast, even if the caller's clock readings race.
        let at = at.max(self.last_time);
        self.last_time = at;
        let mut line =
            serde_json::to_string(&(at.as_secs_f64(), code, data)).map_err(io::Error::other)?;
        line.push('\n');
        self.out.write_all(line.as_bytes())?;
        self.out.flush()
    }
}

/// Appends `bytes` to `tail` and returns the longest decodable prefix, leaving an incomplete trailing
/// character in `tail`. Invalid sequences (not merely incomplete ones) become U+FFFD.
fn take_utf8(tail: &mut Vec<u8>, bytes: &[u8]) -> String {
    tail.extend_from_slice(bytes);
    let mut text = String::new();
    let mut rest: &[u8] = tail;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                text.push_str(valid);
                rest = &[];
                break;
            }
            Err(err) => {
                let (valid, after) = rest.split_at(err.valid_up_to());
                // The prefix was just checked valid, so this never replaces anything.
                text.push_str(&String::from_utf8_lossy(valid));
                match err.error_len() {
                    Some(len) => {
                        text.push(char::REPLACEMENT_CHARACTER);
                        rest = &after[len..];
                    }
                    None => {
                        rest = after;
                        break;
                    }
                }
            }
        }
    }
    let keep = rest.to_vec();
    *tail = keep;
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn write_cast(f: impl FnOnce(&mut Writer<Vec<u8>>) -> io::Result<()>) -> String {
        let mut header = Header::new(80, 24);
        header.title = Some("t".into());
        header.timestamp = Some(1_700_000_000);
        header.env.insert("TERM".into(), "xterm-256color".into());
        let mut writer = Writer::new(Vec::new(), &header).expect("header");
        f(&mut writer).expect("events");
        String::from_utf8(writer.finish().expect("finish")).expect("utf8 file")
    }

    #[test]
    fn round_trip_keeps_every_event_kind() {
        let file = write_cast(|w| {
            w.output(ms(10), b"hello \x1b[1mworld\r\n")?;
            w.input(ms(20), b"\x1d")?;
            w.resize(ms(30), 100, 30)?;
            w.marker(ms(40), "blocked")
        });
        let cast = read(file.as_bytes()).expect("reads back");
        assert_eq!(cast.header.width, 80);
        assert_eq!(cast.header.title.as_deref(), Some("t"));
        assert_eq!(
            cast.header.env.get("TERM").map(String::as_str),
            Some("xterm-256color")
        );
        let kinds: Vec<_> = cast.events.iter().map(|e| e.kind.clone()).collect();
        assert_eq!(
            kinds,
            vec![
                EventKind::Output("hello \x1b[1mworld\r\n".into()),
                EventKind::Input("\x1d".into()),
                EventKind::Resize {
                    cols: 100,
                    rows: 30
                },
                EventKind::Marker("blocked".into()),
            ]
        );
        assert_eq!(cast.events[3].time, ms(40));
    }

    #[test]
    fn split_utf8_is_joined_not_replaced() {
        let snowman = "☃".as_bytes(); // three bytes
        let file = write_cast(|w| {
            w.output(ms(1), &[b'a', snowman[0]])?;
            w.output(ms(2), &snowman[1..2])?;
            w.output(ms(3), &[snowman[2], b'b'])
        });
        let cast = read(file.as_bytes()).expect("reads back");
        let text: String = cast
            .events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Output(s) => Some(s.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "a☃b");
        assert!(!file.contains('\u{fffd}'));
    }

    #[test]
    fn invalid_bytes_are_replaced_and_a_dangling_tail_is_flushed_at_finish() {
        let file = write_cast(|w| w.output(ms(1), b"x\xffy\xe2\x98"));
        let cast = read(file.as_bytes()).expect("reads back");
        let outputs: Vec<_> = cast.events.iter().map(|e| e.kind.clone()).collect();
        assert_eq!(
            outputs,
            vec![
                EventKind::Output("x\u{fffd}y".into()),
                EventKind::Output("\u{fffd}".into())
            ]
        );
    }

    #[test]
    fn unknown_codes_and_blank_lines_are_skipped() {
        let file = "{\"version\":2,\"width\":10,\"height\":5,\"idle_time_limit\":2}\n\n[0.5,\"x\",\"future\"]\n[1.0,\"o\",\"hi\"]\n";
        let cast = read(file.as_bytes()).expect("extensions are not fatal");
        assert_eq!(
            cast.events,
            vec![CastEvent {
                time: ms(1000),
                kind: EventKind::Output("hi".into())
            }]
        );
    }

    fn error_of(file: &str) -> CastError {
        read(file.as_bytes()).expect_err("must be refused")
    }

    #[test]
    fn bad_lines_name_their_line_and_reason() {
        assert!(matches!(error_of("").kind, CastErrorKind::Empty));
        let err = error_of("not json\n");
        assert_eq!(err.line, 1);
        assert!(matches!(err.kind, CastErrorKind::BadHeader(_)));
        assert!(matches!(
            error_of("{\"version\":1,\"width\":1,\"height\":1}").kind,
            CastErrorKind::UnsupportedVersion(1)
        ));
        assert!(matches!(
            error_of("{\"version\":2,\"width\":1}").kind,
            CastErrorKind::BadHeader(_)
        ));
        for header in [
            "{\"version\":2,\"width\":65535,\"height\":65535}",
            "{\"version\":2,\"width\":0,\"height\":5}",
            "{\"version\":2,\"width\":80,\"height\":24,\"timestamp\":18446744073709551615}",
        ] {
            let err = error_of(header);
            assert_eq!(err.line, 1, "{header}");
            assert!(matches!(err.kind, CastErrorKind::BadHeader(_)), "{header}");
        }

        let head = "{\"version\":2,\"width\":10,\"height\":5}\n";
        for (event, why) in [
            ("[1.0,\"o\"]", "expected"),
            ("{\"t\":1}", "expected"),
            ("[-1.0,\"o\",\"x\"]", "non-negative"),
            ("[1.0,\"r\",\"80by24\"]", "COLSxROWS"),
            ("[1.0,\"r\",\"65535x65535\"]", "out of bounds"),
            ("[1e10,\"o\",\"x\"]", "longest recording"),
        ] {
            let err = error_of(&format!("{head}[0.1,\"o\",\"ok\"]\n{event}\n"));
            assert_eq!(err.line, 3, "{event}");
            assert!(err.to_string().contains(why), "{event}: {err}");
            assert!(err.to_string().starts_with("line 3: bad event"), "{err}");
        }
    }
}
