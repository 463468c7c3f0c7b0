//! The web board's side of the server socket: it is one more client, like `lookout send` and
//! `lookout watch`, so the page sees the same facts and sends go through the same verified path.
//! Blocking calls only, made from the board's blocking threads (never from its async tasks).
//! Touches the server's Unix socket only.

use crate::client::{Client, ClientError};
use crate::components::LifecycleState;
use crate::panes::PaneState;
use crate::protocol::dialog::Dialog;
use crate::protocol::params::{AgentExplain, AgentGet, Expect, PaneSend};
use crate::protocol::results::Sent;
use serde::Serialize;
use serde_json::{Value, json};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// A pane as the page shows it: its state, and what it asks or last said.
#[derive(Debug, Clone, Serialize)]
pub struct View {
    /// The state, as the socket gives it.
    #[serde(flatten)]
    pub state: PaneState,
    /// A blocked pane's dialog, a finished turn's last lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dialog: Option<Dialog>,
    /// What it asks of its person (`blocked`, `done` unread, `working`, `idle`), as the boards say.
    pub badge: &'static str,
    /// That badge's urgency (3 most urgent): the page sorts by it as the boards do.
    pub rank: u8,
}

/// `state` with its dialog read now (a blocked or done pane only: the others ask nothing).
fn view(client: &mut Client, state: PaneState) -> View {
    let dialog = match state.lifecycle {
        LifecycleState::Blocked | LifecycleState::Done => client
            .call(&AgentExplain {
                pane: state.pane.clone(),
            })
            .ok()
            .and_then(|x| x.dialog),
        _ => None,
    };
    let badge = crate::panes::Badge::of(&state);
    View {
        badge: badge.name(),
        rank: badge as u8,
        state,
        dialog,
    }
}

/// Every pane, most urgent first, and the sequence of the last event they include.
pub fn snapshot(socket: &Path) -> Result<(u64, Vec<View>), ClientError> {
    let mut client = Client::connect(socket)?;
    let (seq, mut panes) = crate::client::panes(&mut client)?;
    crate::panes::by_urgency(&mut panes);
    Ok((
        seq,
        panes.into_iter().map(|p| view(&mut client, p)).collect(),
    ))
}

/// What the page asks to send.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendBody {
    /// The text or the option's key.
    pub text: String,
    /// Press Enter after it (a prompt); an option's key is typed alone.
    #[serde(default)]
    pub submit: bool,
    /// What the page showed when the person chose.
    pub expect: Expect,
}

/// Sends through `pane.send`, typed only if the pane is still as the page showed it.
pub fn send(socket: &Path, pane: &str, body: SendBody) -> Result<Sent, ClientError> {
    let mut client = Client::connect(socket)?;
    client.call(&PaneSend {
        pane: pane.to_owned(),
        text: body.text,
        submit: body.submit,
        force: false,
        timeout_ms: None,
        expect: Some(body.expect),
    })
}

/// One message of the event stream.
#[derive(Debug)]
pub enum Message {
    /// Every pane as of `seq` (first on every connection).
    Snapshot(u64, Value),
    /// An event after it, with the pane as it is now (`null`: gone).
    Event(u64, Value),
    /// The subscription ended (the server stopped or dropped it).
    End(String),
}

/// Subscribes on a thread of its own and relays to `tx` until the page goes (the returned
/// stream's shutdown ends the thread) or the server does.
pub fn subscribe(
    socket: &Path,
    tx: tokio::sync::mpsc::Sender<Message>,
) -> Result<UnixStream, ClientError> {
    let client = Client::connect(socket)?;
    let handle = client.stream()?;
    let mut lookup = Client::connect(socket)?;
    let (seq, mut panes, events) = client.subscribe()?;
    crate::panes::by_urgency(&mut panes);
    let views: Vec<View> = panes.into_iter().map(|p| view(&mut lookup, p)).collect();
    let first = Message::Snapshot(seq, json!({"seq": seq, "panes": views}));
    std::thread::Builder::new()
        .name("lookout-web-events".into())
        .spawn(move || {
            if tx.blocking_send(first).is_err() {
                return;
            }
            for event in events {
                let message = match event {
                    Ok(event) => relayed(&mut lookup, event),
                    Err(e) => Message::End(e.to_string()),
                };
                let end = matches!(message, Message::End(_));
                if tx.blocking_send(message).is_err() || end {
                    return;
                }
            }
            let _ = tx.blocking_send(Message::End("the server closed the stream".into()));
        })
        .map_err(ClientError::Io)?;
    Ok(handle)
}

fn relayed(lookup: &mut Client, event: Value) -> Message {
    let seq = event.get("seq").and_then(Value::as_u64).unwrap_or(0);
    let pane = event.get("pane").and_then(Value::as_str).unwrap_or("");
    let view = match lookup.call(&AgentGet {
        pane: pane.to_owned(),
    }) {
        Ok(state) => Some(view(lookup, state)),
        Err(e) if e.code() == Some("unknown_pane") => None,
        Err(e) => return Message::End(e.to_string()),
    };
    // A pane the person is looking at in tmux is not announced again by the page's notification.
    let asks = matches!(event["to"].as_str(), Some("blocked" | "done"));
    let in_view = asks && crate::pty::tmux::in_view(pane);
    Message::Event(
        seq,
        json!({"seq": seq, "event": event, "pane": view, "in_view": in_view}),
    )
}
