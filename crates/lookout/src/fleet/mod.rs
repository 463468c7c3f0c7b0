//! The fleet (see docs/fleet.md): one board across machines, on NATS JetStream.
//!
//! A server started with `--publish nats://…` hands every pane state and event to a
//! [`Publisher`], whose thread (the only place with a tokio runtime) writes them to JetStream:
//!
//! - bucket [`PANES_BUCKET`]: key `<machine>.<pane>` (tokens escaped by [`key`]), value the pane's
//!   state exactly as `agent.get` answers it; deleted when the pane closes;
//! - stream [`EVENTS_STREAM`]: subject `lookout.<machine>.events`, one message per event with its
//!   seq in the [`SEQ_HEADER`] header (and a message id, so a resend after an outage is dropped as
//!   a duplicate);
//! - bucket [`MACHINES_BUCKET`]: key `<machine>`, a heartbeat every third of the bucket's
//!   `max_age`. NATS 2.9 has no per-key TTL, so the heartbeat bucket's `max_age` is the TTL: a
//!   vanished machine's heartbeat ages out of the bucket, and a board that heard nothing from a
//!   machine for that long marks it offline ([`board::Picture`]). A server that stops cleanly
//!   deletes its heartbeat, so its machine reads offline at once.
//!
//! Boards ([`board`]) read through the buckets' watch: initial values, then updates. The core and
//! the tick never see tokio or the network; the engine only locks a small outbox (`publisher`).

pub mod board;
pub mod follow;
pub mod key;
mod publisher;
mod pump;
pub mod settings;

pub use publisher::{PublishConfig, Publisher};

use async_nats::jetstream::{self, kv, stream};
use std::time::Duration;

/// The key-value bucket holding every machine's pane states.
pub const PANES_BUCKET: &str = "lookout_panes";
/// The key-value bucket holding one heartbeat per machine; its `max_age` is the heartbeat TTL.
pub const MACHINES_BUCKET: &str = "lookout_machines";
/// The stream holding every machine's events.
pub const EVENTS_STREAM: &str = "LOOKOUT_EVENTS";
/// The header carrying an event's seq.
pub const SEQ_HEADER: &str = "Lookout-Seq";
/// The heartbeat TTL when this server creates the heartbeat bucket and nothing says otherwise.
pub const DEFAULT_HEARTBEAT_TTL: Duration = Duration::from_secs(15);
/// How long the events stream keeps events.
const EVENTS_MAX_AGE: Duration = Duration::from_secs(3 * 24 * 3600);

/// The events subject of `machine`.
pub fn events_subject(machine: &str) -> String {
    format!("lookout.{}.events", key::escape(machine))
}

/// Connects with `auth` to `url` (a board: fails at once when nothing answers).
pub async fn connect(
    url: &str,
    auth: &settings::Auth,
    name: &str,
) -> Result<async_nats::Client, String> {
    auth.options()
        .await?
        .name(name)
        .connection_timeout(Duration::from_secs(5))
        .connect(url)
        .await
        .map_err(|e| format!("cannot reach {}: {e}", settings::redact(url)))
}

/// The fleet's buckets and stream, as a publisher needs them.
#[derive(Clone)]
pub(crate) struct Link {
    pub(crate) js: jetstream::Context,
    pub(crate) panes: kv::Store,
    pub(crate) machines: kv::Store,
    /// The heartbeat bucket's `max_age`: how often to beat (a third of it) and what boards wait.
    pub(crate) ttl: Duration,
}

impl Link {
    /// Opens the buckets and the stream, creating what is missing (`ttl` for a new heartbeat bucket).
    pub(crate) async fn open(js: jetstream::Context, ttl: Duration) -> Result<Link, String> {
        let panes = bucket(
            &js,
            PANES_BUCKET,
            "lookout: every machine's pane states (<machine>.<pane>)",
            Duration::ZERO,
        )
        .await?;
        let machines = bucket(
            &js,
            MACHINES_BUCKET,
            "lookout: one heartbeat per machine; max_age is the TTL",
            ttl,
        )
        .await?;
        let ttl = machines
            .status()
            .await
            .map(|s| s.max_age())
            .ok()
            .filter(|t| !t.is_zero())
            .unwrap_or(ttl);
        js.get_or_create_stream(stream::Config {
            name: EVENTS_STREAM.into(),
            description: Some("lookout: every machine's events (lookout.<machine>.events)".into()),
            subjects: vec!["lookout.*.events".into()],
            max_age: EVENTS_MAX_AGE,
            ..Default::default()
        })
        .await
        .map_err(|e| format!("events stream {EVENTS_STREAM}: {e}"))?;
        Ok(Link {
            js,
            panes,
            machines,
            ttl,
        })
    }
}

/// An existing bucket, else a new one (history 1, entries kept `max_age`; zero: forever).
///
/// The bucket's stream is made here with the key-value conventions, because the client's
/// `create_key_value` first reads account fields a 2.9 server does not send. A peer creating it
/// at the same time makes the same config, which JetStream accepts.
async fn bucket(
    js: &jetstream::Context,
    name: &str,
    description: &str,
    max_age: Duration,
) -> Result<kv::Store, String> {
    if let Ok(store) = js.get_key_value(name).await {
        return Ok(store);
    }
    js.get_or_create_stream(stream::Config {
        name: format!("KV_{name}"),
        description: Some(description.into()),
        subjects: vec![format!("$KV.{name}.>")],
        max_messages_per_subject: 1,
        max_age,
        discard: stream::DiscardPolicy::New,
        allow_rollup: true,
        deny_delete: true,
        allow_direct: true,
        num_replicas: 1,
        ..Default::default()
    })
    .await
    .map_err(|e| format!("bucket {name}: {e}"))?;
    js.get_key_value(name)
        .await
        .map_err(|e| format!("bucket {name}: {e}"))
}
