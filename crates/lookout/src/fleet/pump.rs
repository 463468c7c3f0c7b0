//! The fleet publisher's thread (see docs/fleet.md): connects to NATS, then publishes what the engine
//! leaves in the outbox (`publisher`): pane states into the bucket, events into the stream, a
//! heartbeat every third of the TTL. When NATS is unreachable it logs once, retries with backoff,
//! and on every (re)connection republishes every current state and deletes this machine's keys
//! for panes that closed meanwhile, so the bucket converges on the store's picture. It watches
//! this machine's keys: a live pane's value overwritten with one no board can read (or deleted)
//! is put back at once. Whatever fails goes back into the outbox. Touches: the network (NATS) and stderr, nothing else.

use super::publisher::{BACKOFF, BATCH, PublishConfig, Shared, lock};
use super::settings::redact;
use super::{Link, SEQ_HEADER, events_subject, key};
use futures_util::StreamExt as _;
use serde_json::json;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The publisher thread's loop: connect, republish, then publish what the engine hands over.
pub(super) async fn run(config: PublishConfig, shared: Arc<Shared>) {
    let (conn_tx, mut conn_rx) = tokio::sync::mpsc::unbounded_channel();
    let options = match config.auth.options().await {
        Ok(options) => options,
        Err(e) => {
            down(&shared, &config, e);
            return;
        }
    };
    let connected = options
        .name(format!("lookout serve ({})", config.machine))
        .retry_on_initial_connect()
        .max_reconnects(None)
        .event_callback(move |event| {
            let tx = conn_tx.clone();
            async move {
                let _ = tx.send(event);
            }
        })
        .connect(config.url.as_str())
        .await;
    let client = match connected {
        Ok(client) => client,
        Err(e) => {
            down(&shared, &config, format!("{e}"));
            return;
        }
    };
    let js = async_nats::jetstream::new(client);
    let mut link: Option<Link> = None;
    // This machine's keys as the bucket has them, to put back what someone else overwrote.
    let mut own: Option<async_nats::jetstream::kv::Watch> = None;
    let mut backoff = BACKOFF.0;
    let mut beat_due = tokio::time::Instant::now();
    let mine = format!("{}.>", key::escape(&config.machine));
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            if let Some(link) = &link {
                let last = async {
                    let _ = flush(link, &config.machine, &shared).await;
                    let _ = link.machines.delete(key::escape(&config.machine)).await;
                };
                let _ = tokio::time::timeout(Duration::from_secs(2), last).await;
            }
            return;
        }
        let Some(up) = &link else {
            match connect_link(&js, &config, &shared).await {
                Ok(new) => {
                    beat_due = tokio::time::Instant::now() + new.ttl / 3;
                    own = None;
                    link = Some(new);
                    backoff = BACKOFF.0;
                    up_again(&shared, &config, link.as_ref().map(|l| l.ttl));
                }
                Err(e) => {
                    down(&shared, &config, e);
                    tokio::select! {
                        () = tokio::time::sleep(backoff) => {}
                        () = shared.wake.notified() => {}
                    }
                    backoff = (backoff * 2).min(BACKOFF.1);
                }
            }
            continue;
        };
        if own.is_none() {
            // From each key's last value on: what was overwritten while no watch ran shows too.
            own = up.panes.watch_with_history(&mine).await.ok();
        }
        tokio::select! {
            () = shared.wake.notified() => {}
            () = tokio::time::sleep_until(beat_due) => {}
            entry = next_own(&mut own) => {
                match entry {
                    Some(entry) => overwritten(&shared, &config.machine, &entry),
                    // (watched again at the top of the loop)
                    None => own = None,
                }
            }
            Some(event) = conn_rx.recv() => {
                match event {
                    // The server may have restarted (and lost its storage): republish it all.
                    async_nats::Event::Connected => link = None,
                    async_nats::Event::Disconnected => {
                        down(&shared, &config, "disconnected; the client reconnects".into());
                    }
                    _ => {}
                }
                continue;
            }
        }
        let mut result = flush(up, &config.machine, &shared).await;
        if result.is_ok() && tokio::time::Instant::now() >= beat_due {
            beat_due = tokio::time::Instant::now() + up.ttl / 3;
            result = beat(up, &config, &shared).await;
        }
        if let Err(e) = result {
            down(&shared, &config, e);
            link = None;
        }
    }
}

/// The next change to this machine's keys; never, without a watch; `None` when the watch ended.
/// A watcher's error (a heartbeat missed on a loaded machine: its consumer is made anew) is
/// passed over, not taken for the end — that left a busy server with no watch until NATS
/// reconnected, and an overwritten pane hidden from every board.
async fn next_own(
    own: &mut Option<async_nats::jetstream::kv::Watch>,
) -> Option<async_nats::jetstream::kv::Entry> {
    let Some(watch) = own else {
        return std::future::pending().await;
    };
    loop {
        match watch.next().await? {
            Ok(entry) => return Some(entry),
            // (a pause, so a consumer that cannot be made again is not asked in a busy loop)
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// A change to one of this machine's keys: a live pane's value that is not a pane state (or was
/// deleted) is not this server's doing — it would hide the pane from every board until the pane
/// changed again — so its state is queued to be put back, and that is logged.
fn overwritten(shared: &Shared, machine: &str, entry: &async_nats::jetstream::kv::Entry) {
    use async_nats::jetstream::kv::Operation;
    let Some((_, pane)) = key::split_key(&entry.key) else {
        return;
    };
    let readable = entry.operation == Operation::Put
        && serde_json::from_slice::<crate::panes::PaneState>(&entry.value).is_ok();
    let mut outbox = lock(&shared.outbox);
    if readable || !outbox.states.contains_key(&pane) {
        return;
    }
    eprintln!(
        "lookout: fleet: the bucket's value for {machine}.{pane} was overwritten with one no board can read; put back"
    );
    outbox.dirty.insert(pane);
    drop(outbox);
    shared.wake.notify_one();
}

/// Opens the buckets and stream and republishes everything: every current state, a delete for
/// every key of this machine whose pane is gone, and a heartbeat.
async fn connect_link(
    js: &async_nats::jetstream::Context,
    config: &PublishConfig,
    shared: &Shared,
) -> Result<Link, String> {
    let link = Link::open(js.clone(), config.heartbeat_ttl).await?;
    let prefix = format!("{}.", key::escape(&config.machine));
    let mut stale = Vec::new();
    let mut keys = link.panes.keys().await.map_err(|e| e.to_string())?;
    while let Some(found) = keys.next().await {
        let found = found.map_err(|e| e.to_string())?;
        if found.starts_with(&prefix)
            && let Some((_, pane)) = key::split_key(&found)
        {
            stale.push(pane);
        }
    }
    {
        let mut outbox = lock(&shared.outbox);
        let current: Vec<String> = outbox.states.keys().cloned().collect();
        outbox.dirty.extend(current);
        for pane in stale {
            if !outbox.states.contains_key(&pane) {
                outbox.dirty.insert(pane);
            }
        }
    }
    flush(&link, &config.machine, shared).await?;
    beat(&link, config, shared).await?;
    Ok(link)
}

/// Publishes what the outbox holds; whatever fails goes back into it.
async fn flush(link: &Link, machine: &str, shared: &Shared) -> Result<(), String> {
    let (changes, events) = {
        let mut outbox = lock(&shared.outbox);
        let dirty = std::mem::take(&mut outbox.dirty);
        let changes: Vec<(String, Option<String>)> = dirty
            .into_iter()
            .map(|pane| {
                let state = outbox.states.get(&pane).cloned();
                (pane, state)
            })
            .collect();
        (changes, std::mem::take(&mut outbox.events))
    };
    let mut failed = Vec::new();
    let mut error = None;
    for chunk in changes.chunks(BATCH) {
        let results = futures_util::future::join_all(chunk.iter().map(|(pane, state)| {
            let key = key::pane_key(machine, pane);
            async move {
                match state {
                    Some(value) => link
                        .panes
                        .put(key, value.clone().into())
                        .await
                        .map(drop)
                        .map_err(|e| e.to_string()),
                    None => link.panes.delete(key).await.map_err(|e| e.to_string()),
                }
            }
        }))
        .await;
        for ((pane, _), result) in chunk.iter().zip(results) {
            if let Err(e) = result {
                failed.push(pane.clone());
                error.get_or_insert(e);
            }
        }
    }
    let unsent = publish_events(link, machine, events).await;
    if failed.is_empty() && unsent.is_none() {
        return Ok(());
    }
    let mut outbox = lock(&shared.outbox);
    outbox.dirty.extend(failed);
    if let Some((e, mut unsent)) = unsent {
        error.get_or_insert(e);
        unsent.extend(std::mem::take(&mut outbox.events));
        outbox.events = unsent;
    }
    Err(error.unwrap_or_default())
}

/// Publishes `events` in order, awaiting the acks together; on failure, the error and every
/// event from the first unacknowledged one on.
async fn publish_events(
    link: &Link,
    machine: &str,
    mut events: VecDeque<(u64, String)>,
) -> Option<(String, VecDeque<(u64, String)>)> {
    let subject = events_subject(machine);
    let mut acks = Vec::with_capacity(events.len());
    let mut error = None;
    for (seq, line) in &events {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(SEQ_HEADER, seq.to_string().as_str());
        // A resend after an outage is dropped by the stream's duplicate window.
        headers.insert(
            "Nats-Msg-Id",
            format!("{}:{seq}", key::escape(machine)).as_str(),
        );
        match link
            .js
            .publish_with_headers(subject.clone(), headers, line.clone().into())
            .await
        {
            Ok(ack) => acks.push(ack),
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        }
    }
    let results = futures_util::future::join_all(acks.into_iter().map(|a| a.into_future())).await;
    let acked = results.iter().take_while(|r| r.is_ok()).count();
    if let Some(Err(e)) = results.get(acked) {
        error = Some(e.to_string());
    }
    let e = error?;
    events.drain(..acked);
    Some((e, events))
}

/// This machine's heartbeat.
async fn beat(link: &Link, config: &PublishConfig, shared: &Shared) -> Result<(), String> {
    let panes = lock(&shared.outbox).states.len();
    let value = json!({
        "machine": config.machine,
        "at": crate::event::rfc3339(std::time::SystemTime::now()),
        "ttl_ms": u64::try_from(link.ttl.as_millis()).unwrap_or(u64::MAX),
        "version": env!("CARGO_PKG_VERSION"),
        "panes": panes,
    });
    link.machines
        .put(key::escape(&config.machine), value.to_string().into())
        .await
        .map(drop)
        .map_err(|e| format!("heartbeat: {e}"))
}

/// Records an outage; logs it once (until the link is up again).
fn down(shared: &Shared, config: &PublishConfig, why: String) {
    let mut health = lock(&shared.health);
    if health.connected || health.error.is_none() {
        eprintln!(
            "lookout: fleet: cannot publish to {}: {why}; lookout keeps working locally and retries",
            redact(&config.url)
        );
    }
    health.connected = false;
    health.error = Some(why);
}

/// Records that the link is up (logged once per connection).
fn up_again(shared: &Shared, config: &PublishConfig, ttl: Option<Duration>) {
    let mut health = lock(&shared.health);
    if !health.connected {
        eprintln!(
            "lookout: fleet: publishing to {} as machine `{}`",
            redact(&config.url),
            config.machine
        );
    }
    health.connected = true;
    health.error = None;
    health.ttl = ttl;
}
