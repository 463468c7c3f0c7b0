//! The method table: every method of the wire in one place — its name, its params type, its
//! result type, an example request. [`Request`], [`FEATURES`], the parser and the typed client's
//! [`Method`] impls are all generated from it, so a method cannot be half-added. Pure data.

use super::{WireError, params, results};
use crate::panes::PaneState;
use crate::report::{Report, ReportBody};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A method: its params type names it and knows what it answers.
pub trait Method: Serialize + DeserializeOwned {
    /// The method's name on the wire.
    const NAME: &'static str;
    /// What a successful call returns.
    type Result: Serialize + DeserializeOwned;
}

/// Declares the table. Each row: `Variant = "name": Params => Result, example {json}` and an
/// optional `check` (validation types cannot express).
macro_rules! methods {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal : $params:ty => $result:ty,
        example $example:literal $(, check $check:path)? ; )*) => {
        /// A parsed request: one variant per method, and a report whose params did not parse.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Request {
            $( $(#[$doc])* $variant($params), )*
            /// A `report.*` whose params did not parse: a report refusal (`bad_params`), unless
            /// its pane is unknown (that refusal comes first), so the pane id is kept when it
            /// could be read.
            BadReport {
                /// The pane the report named, when readable.
                pane: Option<String>,
                /// What was wrong.
                message: String,
            },
        }

        $( impl Method for $params {
            const NAME: &'static str = $name;
            type Result = $result;
        } )*

        /// Every method name, in table order.
        pub const METHODS: &[&str] = &[$($name),*];

        /// One example request per method (`(name, params)`), for the docs check and the tests.
        pub const EXAMPLES: &[(&str, &str)] = &[$(($name, $example)),*];

        /// Feature names `hello` returns: every method, and the mirror files. A client
        /// must see a feature before using it.
        pub const FEATURES: &[&str] = &[$($name,)* "mirror"];

        /// Parses `params` for a known `method`; `None` for a method not in the table.
        fn parse_known(method: &str, p: Value) -> Option<Result<Request, WireError>> {
            Some(match method {
                $( $name => decode::<$params>(method, p).and_then(|x| {
                    $( $check(&x)?; )?
                    Ok(Request::$variant(x))
                }), )*
                _ => return None,
            })
        }
    };
}

methods! {
    /// `hello`: protocol version and features.
    Hello = "hello": params::Hello => results::Hello, example "{}";
    /// `pane.open`.
    PaneOpen = "pane.open": params::PaneOpen => results::Opened,
        example r#"{"pane":"p","rows":24,"cols":80,"kind":"claude"}"#, check params::PaneOpen::check;
    /// `pane.close`.
    PaneClose = "pane.close": params::PaneClose => results::Ack, example r#"{"pane":"p"}"#;
    /// `pane.feed`: PTY output.
    PaneFeed = "pane.feed": params::PaneFeed => results::Ack, example r#"{"pane":"p","data":"aGk="}"#;
    /// `pane.resize`.
    PaneResize = "pane.resize": params::PaneResize => results::Ack,
        example r#"{"pane":"p","rows":30,"cols":100}"#, check params::PaneResize::check;
    /// `pane.process`: a process started or exited in the pane.
    PaneProcess = "pane.process": params::PaneProcess => results::Generation,
        example r#"{"pane":"p","event":"started","pid":1,"argv":["claude"]}"#;
    /// `pane.seen`: a person looked at the pane.
    PaneSeen = "pane.seen": params::PaneSeen => results::Ack,
        example r#"{"pane":"p","via":"focus"}"#, check params::PaneSeen::check;
    /// `pane.input`: the person typed into the pane (seen, and in view for a few seconds).
    PaneInput = "pane.input": params::PaneInput => results::Ack, example r#"{"pane":"p"}"#;
    /// `pane.send`: type text into the pane, then Enter until a positive signal.
    PaneSend = "pane.send": params::PaneSend => results::Sent,
        example r#"{"pane":"p","text":"hi","timeout_ms":1}"#, check params::PaneSend::check;
    /// `pane.drive`: this connection types into the pane (its source).
    PaneDrive = "pane.drive": params::PaneDrive => results::Ack, example r#"{"pane":"p"}"#;
    /// `pane.typed`: a driver's answer to a `keys` line.
    PaneTyped = "pane.typed": params::PaneTyped => results::Ack, example r#"{"ticket":1}"#;
    /// `pane.list`: every pane's state.
    PaneList = "pane.list": params::PaneList => results::Snapshot, example "{}";
    /// `report.session`.
    ReportSession = "report.session": params::ReportSession => results::Ack,
        example r#"{"pane":"p","source":"hook:claude","session":"s1"}"#;
    /// `report.state`.
    ReportState = "report.state": params::ReportState => results::Applied,
        example r#"{"pane":"p","source":"hook:claude","seq":1,"state":"working"}"#;
    /// `report.turn_end`.
    ReportTurnEnd = "report.turn_end": params::ReportTurnEnd => results::Applied,
        example r#"{"pane":"p","source":"hook:claude","seq":2,"status":{"v":1,"agent":"claude","blocking":0,"agents":0}}"#;
    /// `agent.get`: one pane's state.
    AgentGet = "agent.get": params::AgentGet => PaneState, example r#"{"pane":"p"}"#;
    /// `agent.explain`: the state and how the screen was read.
    AgentExplain = "agent.explain": params::AgentExplain => results::Explanation, example r#"{"pane":"p"}"#;
    /// `agent.wait`: answer when the pane reaches one of `until`.
    AgentWait = "agent.wait": params::AgentWait => PaneState,
        example r#"{"pane":"p","until":["done"],"timeout_ms":1}"#, check params::AgentWait::check;
    /// `subscribe`: a snapshot, then every event.
    Subscribe = "subscribe": params::Subscribe => results::Snapshot, example "{}";
    /// `notify.listen`: stream this terminal's notifications.
    NotifyListen = "notify.listen": params::NotifyListen => results::Ack, example r#"{"pane":"p"}"#;
    /// `server.info`.
    ServerInfo = "server.info": params::ServerInfo => results::ServerInfo, example "{}";
    /// `server.reload`: re-read the settings file now.
    ServerReload = "server.reload": params::ServerReload => results::Ack, example "{}";
    /// `source.attach`: watch a tmux server.
    SourceAttach = "source.attach": params::SourceAttach => results::Attached,
        example r#"{"tmux":"/nonexistent/lookout-example/default"}"#;
    /// `source.detach`: stop watching a tmux server; its panes are closed.
    SourceDetach = "source.detach": params::SourceDetach => results::Detached,
        example r#"{"tmux":"/nonexistent/lookout-example/default"}"#;
    /// `source.list`.
    SourceList = "source.list": params::SourceList => results::Sources, example "{}";
    /// `server.stop`: a final tick, then the server exits.
    ServerStop = "server.stop": params::ServerStop => results::Ack, example "{}";
}

fn decode<T: DeserializeOwned>(method: &str, p: Value) -> Result<T, WireError> {
    // A missing `params` is an empty object, so `{"method":"hello"}` works.
    let p = if p.is_null() {
        Value::Object(Map::new())
    } else {
        p
    };
    serde_json::from_value(p)
        .map_err(|e| WireError::new("bad_request", format!("{method}: bad params: {e}")))
}

/// Parses a method and its params. An unknown method — `report.*` included — is
/// `unknown_method`; a known `report.*` with bad params is [`Request::BadReport`].
pub fn parse_request(method: &str, p: Value) -> Result<Request, WireError> {
    let pane = p.get("pane").and_then(Value::as_str).map(str::to_owned);
    match parse_known(method, p) {
        Some(Err(e)) if method.starts_with("report.") => Ok(Request::BadReport {
            pane,
            message: e.message,
        }),
        Some(parsed) => parsed,
        None => Err(WireError::new(
            "unknown_method",
            format!("unknown method `{method}`; `hello` lists the features this server knows"),
        )),
    }
}

impl Request {
    /// The `report.*` requests as the `Report` the world takes (the socket and the mirror files
    /// send the same three); any other request is handed back.
    #[allow(
        clippy::result_large_err,
        reason = "the Err is the caller's own request handed straight back, not a new value to box"
    )]
    pub fn into_report(self) -> Result<Report, Request> {
        match self {
            Request::ReportSession(r) => Ok(r.into()),
            Request::ReportState(r) => Ok(r.into()),
            Request::ReportTurnEnd(r) => Ok(r.into()),
            other => Err(other),
        }
    }
}

fn report(pane: String, source: String, body: ReportBody) -> Report {
    Report {
        pane: Arc::from(pane),
        source: Arc::from(source),
        body,
    }
}

impl From<params::ReportSession> for Report {
    fn from(r: params::ReportSession) -> Report {
        report(r.pane, r.source, ReportBody::Session(r.session))
    }
}

impl From<params::ReportState> for Report {
    fn from(r: params::ReportState) -> Report {
        let body = ReportBody::State {
            seq: r.seq,
            state: r.state,
        };
        report(r.pane, r.source, body)
    }
}

impl From<params::ReportTurnEnd> for Report {
    fn from(r: params::ReportTurnEnd) -> Report {
        let body = ReportBody::TurnEnd {
            seq: r.seq,
            status: r.status,
        };
        report(r.pane, r.source, body)
    }
}
