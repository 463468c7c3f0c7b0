//! The wire (SPEC §8.1, §8.2): every request and response shape, the protocol version and the
//! feature names, and the parser that turns one JSON line into a typed [`Request`].
//!
//! Pure data and parsing: no I/O, no world. The connection threads call [`parse_line`]; the world
//! thread matches on [`Request`]; the CLI clients build params with `serde_json::json!` against the
//! names documented here and in `docs/protocol.md`. A method name that is not in [`Request`] is
//! refused with `unknown_method`, never dropped.

use crate::components::{LifecycleState, SizeError, check_size};
use crate::event::{Change, Event, rfc3339};
use crate::report::{ReportedState, TurnEndStatus};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

mod id;
pub use id::RequestId;

/// The protocol version `hello` returns. Bump it only for an incompatible change; additions are
/// announced as features instead.
pub const PROTOCOL_VERSION: u32 = 1;

/// Feature names `hello` returns: a client must see a feature before using it.
pub const FEATURES: &[&str] = &[
    "pane.open",
    "pane.close",
    "pane.feed",
    "pane.resize",
    "pane.process",
    "pane.seen",
    "pane.list",
    "report.session",
    "report.state",
    "report.turn_end",
    "agent.get",
    "agent.explain",
    "agent.wait",
    "subscribe",
    "mirror",
    "pane.input",
    "notify.listen",
    "server.info",
    "server.stop",
    "server.reload",
    "source.attach",
    "source.list",
];

/// The longest request line accepted (§8.1); longer lines are answered `too_large`.
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
    /// not fit the server's screen memory (§11).
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
    pub fn ok(id: &RequestId, result: Value) -> String {
        line(&Outgoing {
            id,
            result: Some(result),
            error: None,
        })
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

/// `pane.process` event kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProcessKind {
    /// A process took over the pane.
    Started,
    /// The pane's process exited.
    Exited,
}

/// `pane.open` params.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PaneOpen {
    /// The pane id.
    pub pane: String,
    /// Rows (≥ 1).
    pub rows: u16,
    /// Columns (≥ 1).
    pub cols: u16,
    /// The agent kind, when the embedder knows it.
    #[serde(default)]
    pub kind: Option<String>,
    /// The instance of the thing the pane lives in (a tmux server's pid and start time): a stored
    /// state is resumed only under the same instance, so a reused id is a new pane.
    #[serde(default)]
    pub instance: Option<String>,
}

/// `source.attach` params: watch the tmux server at `tmux` (its socket path).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceAttach {
    /// The tmux server's socket path (`#{socket_path}`).
    pub tmux: std::path::PathBuf,
    /// Also write `@lookout_*` options on it.
    #[serde(default)]
    pub set_options: bool,
}

/// `pane.process` params.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PaneProcess {
    /// The pane id.
    pub pane: String,
    /// started / exited.
    pub event: ProcessKind,
    /// The process id.
    #[serde(default)]
    pub pid: Option<u32>,
    /// Its argv (identification reads it).
    #[serde(default)]
    pub argv: Vec<String>,
    /// Its kernel `comm`.
    #[serde(default)]
    pub comm: Option<String>,
}

/// A parsed request.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `hello`.
    Hello,
    /// `pane.open`.
    PaneOpen(PaneOpen),
    /// `pane.close`.
    PaneClose(String),
    /// `pane.feed`: the pane and the decoded bytes.
    PaneFeed(String, Vec<u8>),
    /// `pane.resize`: pane, rows, cols.
    PaneResize(String, u16, u16),
    /// `pane.process`.
    PaneProcess(PaneProcess),
    /// `pane.seen`: the pane, and how it was seen (`focus`…) when the sender knows.
    PaneSeen(String, Option<String>),
    /// `pane.input`: the person typed into the pane (seen, and in view for a few seconds).
    PaneInput(String),
    /// `notify.listen`: stream the `terminal` sink's notifications for this pane's own terminal
    /// (`lookout run`), or for a board (no pane).
    NotifyListen(Option<String>),
    /// `pane.list`.
    PaneList,
    /// `report.session`: pane, source, session.
    ReportSession(String, String, String),
    /// `report.state`: pane, source, seq, state.
    ReportState(String, String, u64, ReportedState),
    /// `report.turn_end`: pane, source, seq, status.
    ReportTurnEnd(String, String, u64, TurnEndStatus),
    /// A `report.*` whose params did not parse: answered `unknown_pane` or `bad_params` (§4 order).
    BadReport(Option<String>, String),
    /// `agent.get`.
    AgentGet(String),
    /// `agent.explain`.
    AgentExplain(String),
    /// `agent.wait`: pane, until, timeout in ms.
    AgentWait(String, Vec<LifecycleState>, u64),
    /// `subscribe`.
    Subscribe,
    /// `server.info`: pid, version, uptime, paths, manifest warnings.
    ServerInfo,
    /// `server.stop`: a final tick, then the server exits.
    ServerStop,
    /// `server.reload`: re-read the settings file now.
    ServerReload,
    /// `source.attach`.
    SourceAttach(SourceAttach),
    /// `source.list`.
    SourceList,
}

/// Default `agent.wait` timeout when the client gives none.
pub const DEFAULT_WAIT_MS: u64 = 30_000;

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Option<Box<RawValue>>,
    method: Value,
    #[serde(default)]
    params: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

#[derive(Deserialize)]
struct PaneOnly {
    pane: String,
}

#[derive(Deserialize)]
struct Seen {
    pane: String,
    #[serde(default)]
    via: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MaybePane {
    #[serde(default)]
    pane: Option<String>,
}

#[derive(Deserialize)]
struct Feed {
    pane: String,
    data: String,
}

#[derive(Deserialize)]
struct Resize {
    pane: String,
    rows: u16,
    cols: u16,
}

#[derive(Deserialize)]
struct Session {
    pane: String,
    source: String,
    session: String,
}

#[derive(Deserialize)]
struct State {
    pane: String,
    source: String,
    seq: u64,
    state: ReportedState,
}

#[derive(Deserialize)]
struct TurnEnd {
    pane: String,
    source: String,
    seq: u64,
    status: TurnEndStatus,
}

#[derive(Deserialize)]
struct Wait {
    pane: String,
    until: Vec<LifecycleState>,
    #[serde(default)]
    timeout_ms: Option<u64>,
}

fn params<T: serde::de::DeserializeOwned>(method: &str, params: Value) -> Result<T, WireError> {
    // A missing `params` is an empty object, so `{"method":"hello"}` works.
    let params = if params.is_null() {
        Value::Object(Map::new())
    } else {
        params
    };
    serde_json::from_value(params)
        .map_err(|e| WireError::new("bad_request", format!("{method}: bad params: {e}")))
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

/// Parses a method and its params.
pub fn parse_request(method: &str, p: Value) -> Result<Request, WireError> {
    if method.starts_with("report.") {
        return Ok(parse_report(method, p));
    }
    Ok(match method {
        "hello" => {
            let _: Map<String, Value> = params(method, p)?;
            Request::Hello
        }
        "pane.open" => {
            let open: PaneOpen = params(method, p)?;
            check_size(open.rows, open.cols).map_err(|e| WireError::size(method, e))?;
            Request::PaneOpen(open)
        }
        "pane.close" => Request::PaneClose(params::<PaneOnly>(method, p)?.pane),
        "pane.feed" => {
            let feed: Feed = params(method, p)?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(feed.data.as_bytes())
                .map_err(|e| {
                    WireError::new(
                        "bad_request",
                        format!("pane.feed: `data` is not base64: {e}"),
                    )
                })?;
            Request::PaneFeed(feed.pane, bytes)
        }
        "pane.resize" => {
            let r: Resize = params(method, p)?;
            check_size(r.rows, r.cols).map_err(|e| WireError::size(method, e))?;
            Request::PaneResize(r.pane, r.rows, r.cols)
        }
        "pane.process" => Request::PaneProcess(params(method, p)?),
        "pane.seen" => {
            let seen: Seen = params(method, p)?;
            if seen
                .via
                .as_deref()
                .is_some_and(|v| v.is_empty() || !v.bytes().all(|b| b.is_ascii_lowercase()))
            {
                return Err(WireError::new(
                    "bad_request",
                    "pane.seen: `via` is a lowercase word (focus, input)",
                ));
            }
            Request::PaneSeen(seen.pane, seen.via)
        }
        "pane.input" => Request::PaneInput(params::<PaneOnly>(method, p)?.pane),
        "notify.listen" => Request::NotifyListen(params::<MaybePane>(method, p)?.pane),
        "pane.list" => {
            let _: Map<String, Value> = params(method, p)?;
            Request::PaneList
        }
        "agent.get" => Request::AgentGet(params::<PaneOnly>(method, p)?.pane),
        "agent.explain" => Request::AgentExplain(params::<PaneOnly>(method, p)?.pane),
        "agent.wait" => {
            let w: Wait = params(method, p)?;
            if w.until.is_empty() {
                return Err(WireError::new(
                    "bad_request",
                    "agent.wait: `until` must name at least one lifecycle",
                ));
            }
            Request::AgentWait(w.pane, w.until, w.timeout_ms.unwrap_or(DEFAULT_WAIT_MS))
        }
        "server.info" => {
            let _: Map<String, Value> = params(method, p)?;
            Request::ServerInfo
        }
        "server.stop" => {
            let _: Map<String, Value> = params(method, p)?;
            Request::ServerStop
        }
        "server.reload" => {
            let _: Map<String, Value> = params(method, p)?;
            Request::ServerReload
        }
        "source.attach" => Request::SourceAttach(params(method, p)?),
        "source.list" => {
            let _: Map<String, Value> = params(method, p)?;
            Request::SourceList
        }
        "subscribe" => {
            let _: Empty = params(method, p)
                .map_err(|_| WireError::new("bad_request", "subscribe takes `{}`"))?;
            Request::Subscribe
        }
        other => {
            return Err(WireError::new(
                "unknown_method",
                format!("unknown method `{other}`; `hello` lists the features this server knows"),
            ));
        }
    })
}

/// `report.*` param errors are report refusals (`bad_params`), but an unknown pane outranks them
/// (§4), so the pane id is kept when it can be read.
fn parse_report(method: &str, p: Value) -> Request {
    let pane = p.get("pane").and_then(Value::as_str).map(str::to_owned);
    let bad = |e: serde_json::Error| {
        Request::BadReport(pane.clone(), format!("{method}: bad params: {e}"))
    };
    match method {
        "report.session" => match serde_json::from_value::<Session>(p.clone()) {
            Ok(s) => Request::ReportSession(s.pane, s.source, s.session),
            Err(e) => bad(e),
        },
        "report.state" => match serde_json::from_value::<State>(p.clone()) {
            Ok(s) => Request::ReportState(s.pane, s.source, s.seq, s.state),
            Err(e) => bad(e),
        },
        "report.turn_end" => match serde_json::from_value::<TurnEnd>(p.clone()) {
            Ok(t) => Request::ReportTurnEnd(t.pane, t.source, t.seq, t.status),
            Err(e) => bad(e),
        },
        other => Request::BadReport(None, format!("unknown method `{other}`")),
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
        assert!(matches!(bad, Ok((_, Request::BadReport(Some(p), _))) if p == "p"));
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
            Response::ok(&id, json!({})),
            r#"{"id":123456789012345678901234567890,"result":{}}"#
        );
    }
}
