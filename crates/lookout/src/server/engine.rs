//! The world thread: owns the `World`, answers requests between ticks, runs the tick, persists
//! it, and fans its events out to subscribers and waiters.
//!
//! Everything that touches the world happens here, on one thread, so a subscriber registered
//! before its snapshot sees exactly the events after it (see docs/protocol.md, `subscribe`).
//! Requests come from `conn`; the
//! tick's I/O is the mirror directory (`mirror`) and the database (`store`, written by
//! `persist`). Request handlers that only read or queue live in `handlers`.

use crate::event::{Change, Event, EventSeq};
use crate::panes;
use crate::protocol::params;
use crate::protocol::results::{Ack, Applied, Opened, ServerInfo, Snapshot, Storage};
use crate::protocol::{Request, RequestId, WireError, event_line};
use crate::report::{Answer, Report, ReportBody};
use crate::resources::Ticket;
use crate::server::conn::{Incoming, Peer};
use crate::server::handlers;
use crate::server::mirror::{self, Ingested};
use crate::server::queues::Queues;
use crate::server::send::Sends;
use crate::server::sources::{Sources, record_instance, same_instance};
use crate::server::store::Store;
use crate::server::subscribe::Waiters;

mod persist;
use bevy_ecs::world::World;
use crossbeam_channel::{Receiver, Sender, select};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

/// Who waits for a report's answer.
#[derive(Debug)]
struct Pending {
    id: RequestId,
    /// `None`: a mirror file's report, answered into the log.
    peer: Option<Peer>,
    /// `report.session` answers `{}`, the others `{"applied","changed"}`.
    session: bool,
}

/// What the server says about itself (`server.info`) and how it is reached and stopped.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The socket the server listens on (its sources connect back to it).
    pub socket: PathBuf,
    /// The static part of `server.info` (pid, version, paths, manifest warnings).
    pub info: ServerInfo,
    /// When it started.
    pub started: Instant,
    /// Stops the server (`server.stop`).
    pub stop: Sender<()>,
}

/// The world and everything the world thread keeps.
pub struct Engine {
    pub(crate) world: World,
    identity: Identity,
    sources: Sources,
    store: Option<Store>,
    mirror_dir: Option<PathBuf>,
    pending: HashMap<Ticket, Pending>,
    pub(crate) subscribers: Vec<Peer>,
    pub(crate) waiters: Waiters,
    /// Where lifecycle events go to be notified.
    notifier: Option<crate::notify::Notifier>,
    /// Where pane states and events go to the fleet.
    fleet: Option<crate::fleet::Publisher>,
    /// A report arrived: tick early, at this instant, instead of waiting for the ticker — a hook
    /// blocks its agent until it is answered. (Output and process events ask for theirs through
    /// `panes::output_due` and `panes::process_due`.)
    report_due: Option<Instant>,
    /// Events numbered by ticks whose transaction did not commit, oldest first: held back from
    /// subscribers and waiters, and written again by every tick until the store commits.
    unstored: Vec<Event>,
    /// Why the store last failed to commit; `None` while it commits.
    storage_error: Option<String>,
    /// What the event log keeps.
    retention: super::Retention,
    /// When the next pruning step is due.
    prune_due: Instant,
    /// Events committed since the last pruning step: a log capped by count is pruned as soon as
    /// it may have grown past its cap, not a minute later.
    logged_since_prune: u64,
    /// The identified agents' releases (`--version`, probed off this thread).
    versions: super::versions::Versions,
    /// `pane.send`s in flight, and the sources that type into panes.
    sends: Sends,
    /// `pane.list`'s answer while the world stays as it was.
    listed: handlers::Listed,
}

/// Output a pane may have queued unread before more for it waits in its connection's queue:
/// the producer is held back (its client's in-flight budget fills) instead of the server's
/// memory growing, and its screen stays within a few ticks of what it was sent.
const FEED_BACKLOG: usize = 4 << 20;

/// Whether `request` is output for a pane that has [`FEED_BACKLOG`] queued already.
fn backlogged(world: &mut bevy_ecs::world::World, request: &Request) -> bool {
    matches!(request, Request::PaneFeed(p) if panes::output_queued(world, &p.pane) >= FEED_BACKLOG)
}

/// How long the requests waiting after a tick are served before another early tick may run.
const REQUESTS_TURN: Duration = Duration::from_millis(5);

/// How long an early tick waits to batch reports that arrive together.
const REPORT_BATCH: Duration = Duration::from_millis(20);

impl Engine {
    /// An engine over `world`, continuing the event numbering from the store's log, and keeping
    /// the events `retention` says.
    pub fn new(
        mut world: World,
        identity: Identity,
        store: Option<Store>,
        mirror_dir: Option<PathBuf>,
        retention: super::Retention,
    ) -> Engine {
        if let Some(last) = store.as_ref().and_then(|s| s.last_seq().ok()) {
            panes::resume_seq(&mut world, EventSeq(last));
        }
        Engine {
            world,
            identity,
            sources: Sources::default(),
            store,
            mirror_dir,
            pending: HashMap::new(),
            subscribers: Vec::new(),
            waiters: Waiters::default(),
            notifier: None,
            fleet: None,
            report_due: None,
            unstored: Vec::new(),
            storage_error: None,
            retention,
            prune_due: Instant::now(),
            logged_since_prune: 0,
            versions: super::versions::Versions::default(),
            sends: Sends::default(),
            listed: handlers::Listed::default(),
        }
    }

    /// Sends every lifecycle event to `notifier` from now on.
    pub fn set_notifier(&mut self, notifier: crate::notify::Notifier) {
        self.notifier = Some(notifier);
    }

    /// Publishes every committed state and event to the fleet from now on.
    pub fn set_fleet(&mut self, fleet: crate::fleet::Publisher) {
        self.fleet = Some(fleet);
    }

    /// Attaches the sources the store remembers (call once the socket accepts).
    pub fn resume_sources(&mut self) {
        let catalog = panes::catalog(&self.world);
        self.sources
            .resume(&self.identity.socket, &catalog, self.store.as_ref());
    }

    /// Runs until `shutdown` fires; ends with a final tick so queued reports are answered and
    /// persisted. Requests are taken from `queues` one at a time (in the fair order it keeps),
    /// and a due tick goes before the next request — except that between two early ticks the
    /// waiting requests get [`REQUESTS_TURN`]: a flood of output, read a slice a tick, never
    /// keeps a cheap request waiting for more than a slice. Returns the running sources for the
    /// caller to stop once no request can reach the world any more.
    pub fn run(
        mut self,
        queues: &Queues,
        bell: &Receiver<()>,
        shutdown: Receiver<()>,
        tick: Duration,
    ) -> Sources {
        let ticker = crossbeam_channel::tick(tick);
        let versions = self.versions.done.clone();
        // When the last tick ended, while the requests waiting since have not had their turn.
        let mut requests_turn: Option<Instant> = None;
        loop {
            let early = self.early_tick();
            let early_due = early.is_some_and(|due| due <= Instant::now());
            if (early_due && requests_turn.is_none()) || ticker.try_recv().is_ok() {
                self.tick();
                requests_turn = Some(Instant::now());
                continue;
            }
            if shutdown.try_recv().is_ok() {
                break;
            }
            if let Ok((path, version)) = versions.try_recv() {
                self.version_found(path, version);
                continue;
            }
            let world = &mut self.world;
            if let Some(incoming) = queues.next(|r| backlogged(world, r)) {
                self.handle(incoming);
                if requests_turn.is_some_and(|since| since.elapsed() >= REQUESTS_TURN) {
                    requests_turn = None;
                }
                continue;
            }
            // Nothing waits: the early tick may run.
            requests_turn = None;
            if early_due {
                continue;
            }
            let wake = self.next_deadline(early);
            select! {
                recv(bell) -> _ => {}
                recv(ticker) -> _ => self.tick(),
                recv(versions) -> found => {
                    if let Ok((path, version)) = found {
                        self.version_found(path, version);
                    }
                }
                recv(shutdown) -> _ => break,
                default(wake.unwrap_or(tick)) => {
                    self.waiters.expire(Instant::now());
                    self.step_sends();
                }
            }
        }
        self.tick();
        self.sources
    }

    /// When an early tick is due: a report waits for its answer, output waits to be read, or a
    /// process event to be applied.
    fn early_tick(&self) -> Option<Instant> {
        self.report_due
            .into_iter()
            .chain(panes::output_due(&self.world))
            .chain(panes::process_due(&self.world))
            .min()
    }

    /// How long the idle world thread may sleep: until the early tick, a waiter's deadline or a
    /// send's next step, whichever is first (`None`: until the ticker).
    fn next_deadline(&self, early: Option<Instant>) -> Option<Duration> {
        self.waiters
            .next_deadline()
            .into_iter()
            .chain(early)
            .chain(self.sends.next_deadline())
            .min()
            .map(|d| d.saturating_duration_since(Instant::now()))
    }

    /// A probe found the release of the executable at `path`: the panes running it learn it.
    fn version_found(&mut self, path: PathBuf, version: Option<String>) {
        self.listed.forget();
        for (pane, event) in self.versions.finished(path, version) {
            let _ = panes::process(&mut self.world, &pane, event);
        }
    }

    /// Answers one request (reports and waits are answered later). One arm per method of the
    /// table (`protocol::methods`), no catch-all: a new method does not compile until routed.
    pub fn handle(&mut self, Incoming { id, request, peer }: Incoming) {
        use Request as R;
        if !handlers::reads_only(&request) {
            self.listed.forget();
        }
        let world = &mut self.world;
        let answer = match request {
            R::Hello(_) => encode(Ok(handlers::hello())),
            R::PaneOpen(p) => encode(self.open(p)),
            R::PaneClose(p) => encode(self.close(&p.pane)),
            R::PaneFeed(p) => encode(handlers::feed(world, p)),
            R::PaneResize(p) => encode(handlers::resize(world, p)),
            R::PaneProcess(p) => encode(handlers::process(world, p)),
            R::PaneSeen(p) => encode(handlers::seen(world, &p.pane, p.via.as_deref())),
            R::PaneInput(p) => {
                if let Some(notifier) = &self.notifier {
                    notifier.typed(&p.pane);
                }
                encode(handlers::seen(world, &p.pane, Some("input")))
            }
            R::PaneList(_) => {
                let mut listed = std::mem::take(&mut self.listed);
                listed.reply(&id, &peer, || self.snapshot());
                self.listed = listed;
                return;
            }
            R::PaneSend(mut p) => {
                let state = panes::state(world, &p.pane).ok();
                if let Some(reason) = handlers::stale(world, &mut p) {
                    peer.reply(&id, Ok(crate::server::send::refused(&reason, state)));
                    return;
                }
                let queues = panes::queues_input(world, &p.pane);
                self.sends.start(id, peer, p, state, queues);
                return;
            }
            R::PaneDrive(p) => encode(self.sends.drive(p.pane, peer.clone()).map(|()| Ack {})),
            R::PaneTyped(t) => {
                let world = &self.world;
                self.sends
                    .typed(t.ticket, t.error, |p| panes::state(world, p).ok());
                self.step_sends();
                encode(Ok(Ack {}))
            }
            R::ReportSession(r) => return self.report(id, Some(peer), r.into()),
            R::ReportState(r) => return self.report(id, Some(peer), r.into()),
            R::ReportTurnEnd(r) => return self.report(id, Some(peer), r.into()),
            R::BadReport { pane, message } => encode(handlers::bad_report(world, pane, message)),
            R::AgentGet(p) => encode(handlers::get(world, &p.pane)),
            R::AgentExplain(p) => encode(handlers::explain(world, &p.pane)),
            R::AgentWait(w) => match panes::state(world, &w.pane) {
                Ok(state) => {
                    let deadline = Instant::now() + Duration::from_millis(w.timeout_ms());
                    self.waiters.add(id, peer, w, state, deadline);
                    return;
                }
                Err(_) => Err(WireError::unknown_pane(&w.pane)),
            },
            R::Subscribe(_) => {
                // Registered first, snapshot second, both on this thread: no gap, no duplicate.
                self.subscribers.push(peer.clone());
                encode(Ok(self.snapshot()))
            }
            R::NotifyListen(p) => {
                peer.reply(&id, Ok(Ack {}));
                if let Some(notifier) = &self.notifier {
                    notifier.listen(p.pane, peer);
                }
                return;
            }
            R::ServerInfo(_) => encode(Ok(self.info())),
            R::ServerReload(_) => {
                if let Some(notifier) = &self.notifier {
                    notifier.reload();
                }
                encode(Ok(Ack {}))
            }
            R::SourceAttach(a) => {
                let catalog = panes::catalog(&self.world);
                encode(Ok(self.sources.attach(
                    a.tmux,
                    a.set_options,
                    &self.identity.socket,
                    catalog,
                    self.store.as_ref(),
                )))
            }
            R::SourceDetach(d) => encode(Ok(self.sources.detach(d.tmux, self.store.as_ref()))),
            R::SourceList(_) => encode(Ok(self.sources.list(self.store.as_ref()))),
            R::ServerStop(_) => {
                crate::server::conn::ServerLock::mark_stopped(&self.identity.socket);
                peer.reply(&id, Ok(Ack {}));
                // Written before the process may end (seen: `lookout stop`'s answer lost to a
                // server that exited first, on a loaded machine).
                peer.wait_sent(Duration::from_secs(1));
                let _ = self.identity.stop.try_send(());
                return;
            }
        };
        peer.reply(&id, answer);
    }

    fn report(&mut self, id: RequestId, peer: Option<Peer>, report: Report) {
        let session = matches!(report.body, ReportBody::Session(_));
        let ticket = panes::report(&mut self.world, report);
        self.report_due
            .get_or_insert_with(|| Instant::now() + REPORT_BATCH);
        self.pending.insert(ticket, Pending { id, peer, session });
    }

    fn snapshot(&self) -> Snapshot {
        // The last event anyone may have seen: numbers held back unstored are not yet given out.
        let seq = panes::last_seq(&self.world).0 - self.unstored.len() as u64;
        let storage = Storage {
            ok: self.storage_error.is_none(),
            error: self.storage_error.clone(),
            unstored_events: self.storage_error.as_ref().map(|_| self.unstored.len()),
        };
        Snapshot {
            seq,
            panes: panes::states(&self.world),
            storage,
        }
    }

    fn info(&self) -> ServerInfo {
        let uptime = self.identity.started.elapsed().as_millis();
        ServerInfo {
            uptime_ms: u64::try_from(uptime).unwrap_or(u64::MAX),
            panes: panes::count(&self.world),
            listeners: self.notifier.as_ref().map_or(0, |n| n.listeners()),
            fleet: self.fleet.as_ref().map(|f| f.info()),
            ..self.identity.info.clone()
        }
    }

    fn open(&mut self, open: params::PaneOpen) -> Result<Opened, WireError> {
        if panes::exists(&self.world, &open.pane) {
            return Err(WireError::new(
                "pane_exists",
                format!(
                    "pane `{}` is already open; close it first or pick another id",
                    open.pane
                ),
            ));
        }
        if let (Some(store), Some(instance)) = (self.store.as_ref(), open.instance.as_deref()) {
            // A pane id reused by a new instance (a new tmux server's `%2`) starts fresh.
            let fresh = match same_instance(store, &open.pane, Some(instance)) {
                Ok(same) => !same,
                Err(e) => {
                    eprintln!("lookout: {e}");
                    true
                }
            };
            let forgotten = if fresh {
                store.forget(&open.pane)
            } else {
                Ok(())
            };
            if let Err(e) = forgotten.and_then(|()| record_instance(store, &open.pane, instance)) {
                eprintln!("lookout: {e}");
            }
        }
        let restore = match self.store.as_ref().map(|s| s.restore(&open.pane)) {
            Some(Ok(r)) => r,
            Some(Err(e)) => {
                eprintln!("lookout: {e}; pane `{}` starts fresh", open.pane);
                None
            }
            None => None,
        };
        let restored = restore.is_some();
        let opened = panes::open_pane(
            &mut self.world,
            &open.pane,
            open.rows,
            open.cols,
            open.kind.as_deref(),
            restore,
        );
        if let (true, Ok(_), Some(notifier)) = (restored, &opened, &self.notifier)
            && let Ok(state) = panes::state(&self.world, &open.pane)
        {
            notifier.restored(state);
        }
        opened
            .map(|_| Opened {
                pane: open.pane.clone(),
            })
            .map_err(|e| match e {
                panes::OpenError::Exists => WireError::new(
                    "pane_exists",
                    format!("pane `{}` is already open", open.pane),
                ),
                panes::OpenError::Size(e) => WireError::size("pane.open", e),
            })
    }

    fn close(&mut self, pane: &str) -> Result<Ack, WireError> {
        panes::close_pane(&mut self.world, pane).map_err(|_| WireError::unknown_pane(pane))?;
        if let Some(Err(e)) = self.store.as_ref().map(|s| s.forget(pane)) {
            eprintln!("lookout: {e}");
        }
        self.waiters.pane_closed(pane);
        self.sends.pane_closed(pane);
        if let Some(notifier) = &self.notifier {
            notifier.closed(pane);
        }
        if let Some(fleet) = &mut self.fleet {
            fleet.closed(pane);
        }
        Ok(Ack {})
    }

    /// One tick: mirror files in, the schedule, one transaction, then answers and events out —
    /// only what committed is acknowledged or published.
    pub fn tick(&mut self) {
        // While the store fails, mirror files wait on disk instead of being taken and lost.
        if self.storage_error.is_none() {
            self.ingest_mirror();
        }
        // Everything queued so far, mirrored reports included, is decided by this tick.
        self.report_due = None;
        self.listed.forget();
        let outbox = panes::tick(&mut self.world, Instant::now(), SystemTime::now());
        for (pane, event) in self.versions.scan(&mut self.world) {
            let _ = panes::process(&mut self.world, &pane, event);
        }
        self.unstored.extend(outbox.events().try_iter());
        let stored = self.persist();
        for (ticket, answer) in outbox.answers().try_iter() {
            self.answer(ticket, answer, stored);
        }
        if !stored {
            self.waiters.expire(Instant::now());
            return;
        }
        let events = std::mem::take(&mut self.unstored);
        self.prune_step();
        if let Some(fleet) = &mut self.fleet {
            fleet.after_tick(&self.world, &events);
        }
        if !events.is_empty() {
            let lines: Vec<String> = events.iter().map(event_line).collect();
            self.subscribers
                .retain(|s| lines.iter().all(|l| s.event(l.clone())));
        }
        let mut notified = Vec::new();
        for event in &events {
            if let Change::Lifecycle { to, .. } = event.change {
                let state = panes::state(&self.world, &event.pane).ok();
                if self.notifier.is_some() {
                    notified.push((event.clone(), state.clone()));
                }
                self.waiters.reached(&event.pane, to, event.seq.0, state);
            }
        }
        if let Some(notifier) = &self.notifier {
            notifier.send(notified);
        }
        self.waiters.expire(Instant::now());
        self.sends.events(&events);
        self.step_sends();
    }

    /// Moves every `pane.send` on (Enter when due, verdicts when proven).
    fn step_sends(&mut self) {
        let seq = panes::last_seq(&self.world).0;
        self.sends.step(Instant::now(), &mut self.world, seq);
    }

    fn answer(&mut self, ticket: Ticket, answer: Answer, stored: bool) {
        let Some(Pending { id, peer, session }) = self.pending.remove(&ticket) else {
            return;
        };
        let result = match answer {
            Answer::Applied { .. } if !stored => Err(WireError::new(
                "storage",
                format!(
                    "the report was applied in memory but not stored: {}; it is not acknowledged, and lookout stores it once the database commits again",
                    self.storage_error
                        .as_deref()
                        .unwrap_or("the database cannot commit")
                ),
            )),
            Answer::Applied { .. } if session => encode(Ok(Ack {})),
            Answer::Applied { changed } => encode(Ok(Applied {
                applied: true,
                changed,
            })),
            Answer::Refused(r) => Err(WireError::new(r.code.code(), r.message)),
        };
        match (peer, result) {
            (Some(peer), result) => {
                peer.reply(&id, result);
            }
            (None, Err(e)) => eprintln!(
                "lookout: mirrored report refused: {}: {}",
                e.code, e.message
            ),
            (None, Ok(_)) => {}
        }
    }

    fn ingest_mirror(&mut self) {
        let Some(dir) = self.mirror_dir.clone() else {
            return;
        };
        // The wall-clock start: a file left while no server ran waits for this one's panes.
        let started = SystemTime::now()
            .checked_sub(self.identity.started.elapsed())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        let world = &self.world;
        let files = mirror::ingest(&dir, started, |pane| panes::exists(world, pane));
        for file in files {
            match file {
                Ingested::Bad {
                    path,
                    moved,
                    reason,
                } => {
                    eprintln!(
                        "lookout: bad mirror file {}: {reason}; moved to {}",
                        path.display(),
                        moved.display()
                    );
                }
                Ingested::Requests(_, requests) => {
                    for request in requests {
                        self.mirrored(request);
                    }
                }
            }
        }
    }

    fn mirrored(&mut self, request: Request) {
        match request.into_report() {
            Ok(report) => self.report(RequestId::null(), None, report),
            Err(other) => eprintln!("lookout: mirror file entry ignored: {other:?}"),
        }
    }
}

/// A typed answer as the line's `result`.
fn encode<T: Serialize>(answer: Result<T, WireError>) -> Result<Value, WireError> {
    answer.and_then(|v| {
        serde_json::to_value(v).map_err(|e| WireError::new("internal", e.to_string()))
    })
}
