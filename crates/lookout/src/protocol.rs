//! The wire (see docs/protocol.md, Framing): framing, errors, responses and event lines. What each
//! method
//! takes and answers is the method table (`methods`, with `params` and `results`), shared by the
//! server and `server/client.rs`.
//!
//! Pure data and parsing: no I/O, no world. The connection threads call [`parse_line`]; the world
//! thread matches on [`Request`]. A method name that is not in the table is refused with
//! `unknown_method`, never dropped.

use crate::components::SizeError;
use crate::event::{Change, Event, rfc3339};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

pub mod dialog;
mod id;
mod methods;
pub mod params;
pub mod results;
pub use id::RequestId;
pub use methods::{EXAMPLES, FEATURES, METHODS, Method, Request, parse_request};

/// The protocol version `hello` returns. Bump it only for an incompatible change; additions are
/// announced as features instead.
pub const PROTOCOL_VERSION: u32 = 1;

/// The longest request line accepted; longer lines are answered `too_large`.
pub const MAX_LINE: usize = 1 << 20;

/// One error on the wire: `{"code","message"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireError {
    /// A stable code (`unknown_method`, `bad_request`, `unknown_pane`, `too_large`, `timeout`,
    /// `pane_exists`, `too_slow`, `storage`, or a report refusal code).
    pub code: String,
    /// What a person can do about it.
    pub message: String,
}

impl WireError {
    /// An error with a code and a message.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        WireError {
            code: code.to_owned(),
            message: message.into(),
        }
    }

    /// A refused screen size: `bad_params` for one out of bounds, `too_large` for one that does
    /// not fit the server's screen memory.
    pub fn size(method: &str, e: SizeError) -> Self {
        let code = match e {
            SizeError::OutOfRange { .. } => "bad_params",
            SizeError::OverBudget { .. } => "too_large",
        };
        WireError::new(code, format!("{method}: {e}"))
    }

    /// `unknown_pane` for `pane`.
    pub fn unknown_pane(pane: &str) -> Self {
        WireError::new(
            "unknown_pane",
            format!("no pane `{pane}`; open it first (pane.open)"),
        )
    }
}

/// A response line: `{"id","result"}` or `{"id","error"}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Response {
    /// The request's id, echoed (null when the request had none or could not be read).
    pub id: Value,
    /// The result on success.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub result: Option<Value>,
    /// The error on failure.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<WireError>,
}

/// A response as the server writes it, with the id echoed verbatim.
#[derive(Serialize)]
struct Outgoing<'a> {
    id: &'a RequestId,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<WireError>,
}

impl Response {
    /// A success line (without the trailing newline).
    pub fn ok(id: &RequestId, result: &impl Serialize) -> String {
        match serde_json::to_value(result) {
            Ok(result) => line(&Outgoing {
                id,
                result: Some(result),
                error: None,
            }),
            Err(e) => Response::err(id, WireError::new("internal", e.to_string())),
        }
    }

    /// A success line for a result already encoded (without the trailing newline).
    pub fn ok_raw(id: &RequestId, result: &serde_json::value::RawValue) -> String {
        #[derive(Serialize)]
        struct Encoded<'a> {
            id: &'a RequestId,
            result: &'a serde_json::value::RawValue,
        }
        line(&Encoded { id, result })
    }

    /// An error line (without the trailing newline).
    pub fn err(id: &RequestId, error: WireError) -> String {
        line(&Outgoing {
            id,
            result: None,
            error: Some(error),
        })
    }
}

fn line(value: &impl Serialize) -> String {
    // Serializing our own plain structs cannot fail; fall back to a fixed error line regardless.
    serde_json::to_string(value).unwrap_or_else(|_| {
        r#"{"id":null,"error":{"code":"internal","message":"could not encode a response"}}"#
            .to_owned()
    })
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Option<Box<RawValue>>,
    method: Value,
    #[serde(default)]
    params: Value,
}

/// Parses one request line (without its newline). On failure returns the id when it could be
/// read (else null) and the error to answer with.
pub fn parse_line(line: &[u8]) -> Result<(RequestId, Request), (RequestId, WireError)> {
    let envelope: Envelope = serde_json::from_slice(line).map_err(|e| {
        (
            RequestId::null(),
            WireError::new("bad_request", format!("not a JSON request object: {e}")),
        )
    })?;
    let id = envelope.id.map_or_else(RequestId::null, RequestId);
    let Value::String(method) = envelope.method else {
        return Err((
            id,
            WireError::new("bad_request", "`method` must be a string"),
        ));
    };
    match parse_request(&method, envelope.params) {
        Ok(request) => Ok((id, request)),
        Err(error) => Err((id, error)),
    }
}

/// An event as it goes on the wire inside `{"event": …}`:
/// `{"seq","time","pane","cause","type", …}` with `type` = `lifecycle` (`from`,`to`,`labels`),
/// `attention` (`flag`,`raised`) or `labels` (`labels`).
pub fn event_json(event: &Event) -> Value {
    let mut v = json!({
        "seq": event.seq.0,
        "time": rfc3339(event.time),
        "pane": &*event.pane,
        "cause": event.cause.as_ref().map(ToString::to_string),
    });
    let extra = match &event.change {
        Change::Lifecycle { from, to, labels } => {
            json!({"type": "lifecycle", "from": from.name(), "to": to.name(), "labels": labels})
        }
        Change::Attention { flag, raised } => {
            json!({"type": "attention", "flag": flag.name(), "raised": raised})
        }
        Change::Labels { labels } => json!({"type": "labels", "labels": labels}),
    };
    if let (Value::Object(map), Value::Object(more)) = (&mut v, extra) {
        map.extend(more);
    }
    v
}

/// The stream line for an event: `{"event": …}`.
pub fn event_line(event: &Event) -> String {
    line(&json!({ "event": event_json(event) }))
}

/// The line a driver gets for keys to type: `{"keys": …}`.
pub fn keys_line(keys: &params::Keys) -> String {
    line(&json!({ "keys": keys }))
}

/// The line a dropped subscriber gets last.
pub fn too_slow_line() -> String {
    line(
        &json!({"error": WireError::new("too_slow", "this connection fell too far behind (1024 events, or 16 MiB of replies and events it did not read) and was dropped; connect again (subscribers: subscribe again and reconcile from the snapshot)")}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(line: &str) -> String {
        match parse_line(line.as_bytes()) {
            Ok(_) => "ok".into(),
            Err((_, e)) => e.code,
        }
    }

    #[test]
    fn every_example_parses_and_every_method_is_a_feature() {
        for (method, params) in EXAMPLES {
            let line = format!(r#"{{"id":1,"method":"{method}","params":{params}}}"#);
            assert_eq!(code(&line), "ok", "{line}");
            assert!(FEATURES.contains(method), "{method}");
        }
        assert_eq!(METHODS.len(), EXAMPLES.len());
    }

    #[test]
    fn every_method_parses() {
        let ok = [
            r#"{"id":1,"method":"hello","params":{}}"#,
            r#"{"id":1,"method":"hello"}"#,
            r#"{"id":1,"method":"pane.open","params":{"pane":"p","rows":24,"cols":80,"kind":"claude"}}"#,
            r#"{"id":1,"method":"pane.close","params":{"pane":"p"}}"#,
            r#"{"id":1,"method":"pane.feed","params":{"pane":"p","data":"aGk="}}"#,
            r#"{"id":1,"method":"pane.resize","params":{"pane":"p","rows":2,"cols":3}}"#,
            r#"{"id":1,"method":"pane.process","params":{"pane":"p","event":"started","pid":3,"argv":["claude"]}}"#,
            r#"{"id":1,"method":"pane.process","params":{"pane":"p","event":"exited"}}"#,
            r#"{"id":1,"method":"pane.seen","params":{"pane":"p"}}"#,
            r#"{"id":1,"method":"pane.list","params":{}}"#,
            r#"{"id":1,"method":"agent.get","params":{"pane":"p"}}"#,
            r#"{"id":1,"method":"agent.explain","params":{"pane":"p"}}"#,
            r#"{"id":1,"method":"agent.wait","params":{"pane":"p","until":["done"],"timeout_ms":5}}"#,
            r#"{"id":1,"method":"subscribe","params":{}}"#,
            r#"{"id":1,"method":"report.session","params":{"pane":"p","source":"h:claude","session":"s"}}"#,
            r#"{"id":1,"method":"report.state","params":{"pane":"p","source":"h:claude","seq":1,"state":"done"}}"#,
        ];
        for line in ok {
            assert_eq!(code(line), "ok", "{line}");
        }
    }

    #[test]
    fn errors_have_codes() {
        assert_eq!(code("{nope"), "bad_request");
        assert_eq!(code(r#"{"id":1,"method":"pane.nope"}"#), "unknown_method");
        assert_eq!(code(r#"{"id":1,"method":7}"#), "bad_request");
        assert_eq!(
            code(r#"{"id":1,"method":"pane.open","params":{"pane":"p","rows":"x","cols":1}}"#),
            "bad_request"
        );
        assert_eq!(
            code(r#"{"id":1,"method":"pane.feed","params":{"pane":"p","data":"!!"}}"#),
            "bad_request"
        );
        assert_eq!(
            code(r#"{"id":1,"method":"agent.wait","params":{"pane":"p","until":[]}}"#),
            "bad_request"
        );
        let bad =
            parse_line(br#"{"id":1,"method":"report.state","params":{"pane":"p","state":"idle"}}"#);
        assert!(matches!(bad, Ok((_, Request::BadReport { pane: Some(p), .. })) if p == "p"));
        // an unknown report method is an unknown method, as the docs promise
        assert_eq!(
            code(r#"{"id":1,"method":"report.nope","params":{"pane":"p"}}"#),
            "unknown_method"
        );
    }

    #[test]
    fn ids_are_echoed_even_on_error() {
        let Err((id, _)) = parse_line(br#"{"id":"x7","method":"nope"}"#) else {
            panic!("parsed")
        };
        assert_eq!(id.as_str(), r#""x7""#);
        let Ok((id, _)) = parse_line(br#"{"id":123456789012345678901234567890,"method":"hello"}"#)
        else {
            panic!("hello")
        };
        assert_eq!(
            Response::ok(&id, &json!({})),
            r#"{"id":123456789012345678901234567890,"result":{}}"#
        );
    }
}
