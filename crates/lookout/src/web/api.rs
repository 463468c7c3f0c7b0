//! The web board's routes: the page, `GET /api/panes`, `GET /api/events` (Server-Sent Events:
//! a snapshot, then every event after it), `POST /api/panes/{pane}/send`, and with a fleet
//! `GET /api/fleet` and `GET /api/fleet/events` (the other machines' panes, whole, on each change). Every request needs
//! a token: the `Authorization: Bearer` header, or `?token=` on a GET (a page load and an
//! `EventSource` cannot set headers); a send needs the answering token in the header, so no
//! link or form elsewhere can make a browser send. Socket calls run on blocking threads.

use super::fleet::FleetView;
use super::relay::{self, Message, SendBody};
use super::token::{Role, Tokens};
use axum::Json;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// The page: one file, no build step, nothing fetched from elsewhere.
const PAGE: &str = include_str!("page.html");
/// The largest request body (a prompt).
pub const MAX_BODY: usize = 16 * 1024;
/// Event streams open at once.
pub const MAX_STREAMS: usize = 16;

/// What every route shares.
pub struct Shared {
    /// The server's socket.
    pub socket: PathBuf,
    /// The tokens in force.
    pub tokens: Tokens,
    /// One permit per open event stream.
    pub streams: Arc<Semaphore>,
    /// The other machines, when the board shows a fleet.
    pub fleet: Option<Arc<FleetView>>,
}

/// The peer's address, set per connection by the accept loop.
#[derive(Debug, Clone, Copy)]
pub struct Origin(pub SocketAddr);

/// Every route, behind the token check.
pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/api/panes", get(panes))
        .route("/api/events", get(events))
        .route("/api/panes/{pane}/send", post(send))
        .route("/api/fleet", get(fleet))
        .route("/api/fleet/events", get(fleet_events))
        .layer(middleware::from_fn_with_state(shared.clone(), authorize))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(shared)
}

/// The token's role, or 401 with nothing said. A send needs the answering token in the header.
async fn authorize(
    State(shared): State<Arc<Shared>>,
    mut request: Request,
    next: Next,
) -> Response {
    let header = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let query = (request.method() == Method::GET)
        .then(|| query_token(request.uri().query().unwrap_or("")))
        .flatten();
    let from_header = header.is_some();
    let Some(role) = header.or(query).and_then(|t| shared.tokens.role(&t)) else {
        return StatusCode::UNAUTHORIZED.into_response();
    };
    if request.method() != Method::GET && (role != Role::Answer || !from_header) {
        return (StatusCode::FORBIDDEN, "this token may only view").into_response();
    }
    request.extensions_mut().insert(role);
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    // The token rides in the page's address: never send it on as a referrer, never cache.
    headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn query_token(query: &str) -> Option<String> {
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix("token="))
        .map(str::to_owned)
}

async fn page() -> Response {
    let csp = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
               connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; \
               frame-ancestors 'none'";
    let mut response = axum::response::Html(PAGE).into_response();
    let headers = response.headers_mut();
    headers.insert("content-security-policy", HeaderValue::from_static(csp));
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    response
}

async fn panes(State(shared): State<Arc<Shared>>) -> Response {
    let socket = shared.socket.clone();
    match tokio::task::spawn_blocking(move || relay::snapshot(&socket)).await {
        Ok(Ok((seq, panes))) => Json(json!({"seq": seq, "panes": panes})).into_response(),
        Ok(Err(e)) => unavailable(e.to_string()),
        Err(e) => unavailable(e.to_string()),
    }
}

fn unavailable(why: String) -> Response {
    (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"error": why}))).into_response()
}

/// Ends the relay thread's subscription when the page's stream is dropped.
struct Subscription {
    stream: std::os::unix::net::UnixStream,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

async fn events(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let Ok(permit) = shared.streams.clone().try_acquire_owned() else {
        return (StatusCode::SERVICE_UNAVAILABLE, "too many event streams").into_response();
    };
    // A reconnecting page names the last event it applied; it gets a new snapshot (the socket
    // keeps no backlog) and skips every event at or below the snapshot's number.
    let resumed = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let (tx, rx) = tokio::sync::mpsc::channel(256);
    let socket = shared.socket.clone();
    let stream = match tokio::task::spawn_blocking(move || relay::subscribe(&socket, tx)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => return unavailable(e.to_string()),
        Err(e) => return unavailable(e.to_string()),
    };
    let guard = Subscription {
        stream,
        _permit: permit,
    };
    let fleet_machine = shared.fleet.as_ref().map(|f| f.machine().to_owned());
    let items = futures_util::stream::unfold((rx, guard), move |(mut rx, guard)| {
        let fleet_machine = fleet_machine.clone();
        async move {
            let event = match rx.recv().await? {
                Message::Snapshot(seq, mut data) => {
                    data["resumed_from"] = json!(resumed);
                    data["fleet"] = json!(fleet_machine);
                    Event::default()
                        .event("snapshot")
                        .id(seq.to_string())
                        .data(data.to_string())
                }
                Message::Event(seq, data) => Event::default()
                    .event("pane")
                    .id(seq.to_string())
                    .data(data.to_string()),
                Message::End(why) => Event::default()
                    .event("end")
                    .data(json!({"error": why}).to_string()),
            };
            Some((Ok::<_, std::convert::Infallible>(event), (rx, guard)))
        }
    });
    Sse::new(items)
        .keep_alive(KeepAlive::default())
        .into_response()
}

async fn send(
    State(shared): State<Arc<Shared>>,
    Extension(Origin(origin)): Extension<Origin>,
    Path(pane): Path<String>,
    Json(body): Json<SendBody>,
) -> Response {
    let socket = shared.socket.clone();
    let (text, target) = (body.text.clone(), pane.clone());
    let sent = tokio::task::spawn_blocking(move || relay::send(&socket, &target, body)).await;
    let sent = match sent {
        Ok(Ok(sent)) => sent,
        Ok(Err(e)) => return unavailable(e.to_string()),
        Err(e) => return unavailable(e.to_string()),
    };
    eprintln!(
        "lookout: web: send {:?} to {pane} from {origin}: {} ({})",
        text,
        sent.verdict.name(),
        crate::printable::printable(&sent.reason),
    );
    let status = if sent.reason.starts_with("stale") {
        StatusCode::CONFLICT
    } else {
        StatusCode::OK
    };
    (status, Json(sent)).into_response()
}

async fn fleet(State(shared): State<Arc<Shared>>) -> Response {
    match &shared.fleet {
        Some(view) => Json(view.to_json()).into_response(),
        None => (StatusCode::NOT_FOUND, "this board shows no fleet (--fleet)").into_response(),
    }
}

/// The other machines' panes, whole: at once, then after each change (gathered for a moment) and
/// each second while anything differs (a machine goes offline by silence, not by an update).
async fn fleet_events(State(shared): State<Arc<Shared>>) -> Response {
    let Some(view) = shared.fleet.clone() else {
        return (StatusCode::NOT_FOUND, "this board shows no fleet (--fleet)").into_response();
    };
    let Ok(permit) = shared.streams.clone().try_acquire_owned() else {
        return (StatusCode::SERVICE_UNAVAILABLE, "too many event streams").into_response();
    };
    let changes = view.subscribe();
    let state = (view, changes, None::<Value>, permit);
    let items =
        futures_util::stream::unfold(state, |(view, mut changes, last, permit)| async move {
            loop {
                let now = view.to_json();
                if last.as_ref() != Some(&now) {
                    let event = Event::default().event("fleet").data(now.to_string());
                    return Some((
                        Ok::<_, std::convert::Infallible>(event),
                        (view, changes, Some(now), permit),
                    ));
                }
                let woke = tokio::time::timeout(Duration::from_secs(1), changes.changed()).await;
                if matches!(woke, Ok(Err(_))) {
                    return None;
                }
                // A burst of updates (a watch starting over) is sent as one picture.
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
    Sse::new(items)
        .keep_alive(KeepAlive::default())
        .into_response()
}
