//! The one poller every pane source runs under: round by round it mirrors what the source lists
//! into the server — reconnect (then every pane is opened again), the sweep of panes an earlier run
//! left, open/close, resize, the `/proc` probe of each pane's foreground program, output or
//! captures fed only when they changed (so "unchanged" stays unchanged for `quiet_ms` rules), and
//! a ping when nothing was said for a while. Touches the server socket and `/proc`.

use super::drive::Driver;
use super::{Listed, Next, PaneSource};
use crate::client::{Client, ClientError};
use crate::components::LifecycleState;
use crate::protocol::params::{self, ProcessKind};
use crate::protocol::{Method, results::Snapshot};
use crate::pty::probe::{Change, Groups, Identify, Probe, ProcFs};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most bytes one `pane.feed` carries (base64 makes it a third larger; the line limit is 1 MiB).
pub const FEED_CHUNK: usize = 256 * 1024;
/// How long a quiet source goes without asking whether its server is still there.
const PING_EVERY: Duration = Duration::from_secs(2);
/// How often a lost server is looked for again.
const RETRY_EVERY: Duration = Duration::from_secs(1);
/// Captured panes the user is about to act on are captured every [`HOT_EVERY`] between rounds:
/// the working phase an answered dialog or a quick answer shows lasts ~0.3 s, less than a round
/// (seen live: Gemini, Codex, no hooks). That is a blocked pane (its answer comes any moment),
/// and a pane whose screen changed after [`QUIET_BEFORE`] unchanged (a prompt being typed): the
/// latter for [`HOT_FOR`] after each change, [`HOT_MAX`] at most, so a pane that keeps drawing (a
/// turn at work) goes back to the round's pace.
const QUIET_BEFORE: Duration = Duration::from_secs(1);
const HOT_EVERY: Duration = Duration::from_millis(100);
const HOT_FOR: Duration = Duration::from_secs(2);
const HOT_MAX: Duration = Duration::from_secs(10);

/// What was last sent for one pane.
struct Tracked {
    listed: Listed,
    capture: Vec<u8>,
    probe: Probe,
    /// The probe has looked once (its first look reports whatever is in charge).
    looked: bool,
    /// When the probe last looked, and whether the pane printed since (a program starting or
    /// ending prints: a quiet pane is probed only every [`Poller::quiet_probe`]).
    probed_at: Option<Instant>,
    printed: bool,
    /// Nothing fed yet on this connection: the first capture goes through whatever it is.
    fresh: bool,
    /// Opened on this connection.
    opened: bool,
    /// The process last reported (told again when the pane is opened on a new connection).
    process: Option<params::PaneProcess>,
    /// When its capture last changed; since when and until when it is captured between rounds
    /// for that; whether the server last said it is blocked.
    changed_at: Option<Instant>,
    hot: Option<(Instant, Instant)>,
    blocked: bool,
}

impl Tracked {
    fn hot(&self, now: Instant) -> bool {
        self.blocked || self.hot.is_some_and(|(_, until)| now < until)
    }

    /// Notes a changed capture at `now`: after a quiet spell the pane turns hot; while hot, each
    /// change keeps it so, up to [`HOT_MAX`].
    fn changed(&mut self, now: Instant) {
        let quiet = self
            .changed_at
            .is_some_and(|at| now.saturating_duration_since(at) >= QUIET_BEFORE);
        self.hot = match self.hot {
            Some((since, until)) if now < until => {
                Some((since, (now + HOT_FOR).min(since + HOT_MAX)))
            }
            _ if quiet => Some((now, now + HOT_FOR)),
            _ => None,
        };
        self.changed_at = Some(now);
    }
}

/// How a poller reaches the server: connecting may start one (`lookout run`) or not (a source
/// inside the server).
pub type Connect = Arc<dyn Fn() -> anyhow::Result<Client> + Send + Sync>;

/// Mirrors one source into the server.
pub struct Poller<S> {
    source: S,
    connect: Connect,
    client: Option<Client>,
    proc: ProcFs,
    identify: Arc<dyn Identify + Send + Sync>,
    panes: BTreeMap<String, Tracked>,
    /// The instance the tracked panes belong to.
    instance: Option<String>,
    /// Left-overs of an earlier run were closed (once per connection).
    swept: bool,
    retry_at: Instant,
    answered_at: Instant,
    /// Types into the panes for `pane.send`, when the source can.
    driver: Option<Driver>,
}

impl<S: PaneSource> Poller<S> {
    /// A poller of `source`; `identify` tells agents from other programs in a pane's foreground.
    pub fn new(source: S, connect: Connect, identify: Arc<dyn Identify + Send + Sync>) -> Self {
        let driver = source
            .typist()
            .map(|typist| Driver::start(connect.clone(), typist));
        Poller {
            source,
            driver,
            connect,
            client: None,
            proc: ProcFs::default(),
            identify,
            panes: BTreeMap::new(),
            instance: None,
            swept: false,
            retry_at: Instant::now(),
            answered_at: Instant::now(),
        }
    }

    /// The source.
    pub fn source(&mut self) -> &mut S {
        &mut self.source
    }

    /// Connects now if no connection is up (the first registration should not wait a round).
    pub fn connect(&mut self) {
        if self.client.is_some() {
            return;
        }
        self.retry_at = Instant::now() + RETRY_EVERY;
        if let Ok(mut client) = (self.connect)() {
            // A server that stopped answering must not hold the source past its own stop.
            if client.answer_within(Some(Duration::from_secs(5))).is_ok() {
                self.client = Some(client);
                self.answered_at = Instant::now();
                // Every pane is opened (and fed) again on this connection, with its process as
                // last reported: the probe carries on where it was.
                for tracked in self.panes.values_mut() {
                    tracked.opened = false;
                    tracked.fresh = true;
                }
                self.swept = false;
            }
        }
    }

    /// Runs rounds until the source says stop or ended, every `interval` at least.
    pub fn run(mut self, interval: Duration) -> S {
        let mut round_at = Instant::now() + interval;
        loop {
            let now = Instant::now();
            let due = if self.panes.values().any(|t| t.hot(now)) {
                round_at.min(now + HOT_EVERY)
            } else {
                round_at
            };
            let next = self.source.wait(due);
            if self.client.is_none() && Instant::now() >= self.retry_at {
                self.connect();
            }
            // A streaming source wakes when output arrives: that output is fed now, or — when the
            // source cannot say which panes it is for — a round is.
            let pending = match Instant::now() >= round_at || self.source.wants_round() {
                true => None,
                false if self.source.streams() => self.source.pending(),
                false => Some(Vec::new()),
            };
            let looked = match pending {
                None => {
                    round_at = Instant::now() + interval;
                    self.round()
                }
                Some(_) if !self.source.streams() => self.recapture_hot(),
                Some(panes) => self.feed_pending(&panes),
            };
            if let Err(ClientError::Io(_) | ClientError::Protocol(_)) = looked {
                self.client = None;
            }
            match next {
                Next::Round => {}
                Next::Stop => return self.source,
                Next::Ended => {
                    let _ = self.close_all(false);
                    return self.source;
                }
                Next::Exited => {
                    let _ = self.close_all(true);
                    return self.source;
                }
            }
        }
    }

    fn call<M: Method>(&mut self, params: &M) -> Result<Option<M::Result>, ClientError> {
        let Some(client) = self.client.as_mut() else {
            return Ok(None);
        };
        match client.call(params) {
            Ok(r) => {
                self.answered_at = Instant::now();
                Ok(Some(r))
            }
            // The server no longer knows the pane (it restarted, someone closed it): not worth
            // stopping for; anything else it says is.
            Err(ClientError::Server(_)) => {
                self.answered_at = Instant::now();
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// One look at every pane.
    pub fn round(&mut self) -> Result<(), ClientError> {
        if self.client.is_none() {
            return Ok(());
        }
        let Some(listed) = self.source.list() else {
            // The multiplexer restarted or stopped: its pane ids will be reused, so its panes are gone.
            return self.close_all(false);
        };
        let instance = self.source.instance();
        if instance.is_some() && instance != self.instance {
            // A new instance (or the first look): none of the old instance's panes carry on.
            self.close_all(false)?;
            self.instance = instance;
            self.swept = false;
        }
        if !self.swept {
            self.sweep(&listed)?;
        }
        let gone: Vec<String> = self
            .panes
            .keys()
            .filter(|id| !listed.iter().any(|l| &l.pane == *id))
            .cloned()
            .collect();
        for pane in gone {
            self.panes.remove(&pane);
            if let Some(driver) = &self.driver {
                driver.forget(&pane);
            }
            self.call(&params::PaneClose { pane })?;
        }
        let mut groups = Groups::default();
        let mut capture = Vec::new();
        for pane in &listed {
            if self.look(&mut groups, pane)? {
                capture.push(pane.clone());
            }
        }
        self.feed_captures(&capture)?;
        if !self.source.streams() && !self.panes.is_empty() {
            self.learn_blocked()?;
        }
        if let Some(client) = self.client.as_mut() {
            self.source.after_round(client, &listed)?;
        }
        if self.answered_at.elapsed() >= PING_EVERY {
            self.call(&params::Hello {})?;
        }
        Ok(())
    }

    /// Closes this source's panes that an earlier run left on the server and that it no longer lists.
    fn sweep(&mut self, listed: &[Listed]) -> Result<(), ClientError> {
        let Some(Snapshot { panes, .. }) = self.call(&params::PaneList {})? else {
            return Ok(());
        };
        for state in panes {
            if self.source.owned(&state.pane) && !listed.iter().any(|l| l.pane == state.pane) {
                self.call(&params::PaneClose { pane: state.pane })?;
            }
        }
        self.swept = true;
        Ok(())
    }

    /// Closes every pane this source opened; `exited` reports their processes gone first.
    fn close_all(&mut self, exited: bool) -> Result<(), ClientError> {
        for pane in std::mem::take(&mut self.panes).into_keys() {
            if let Some(driver) = &self.driver {
                driver.forget(&pane);
            }
            if exited {
                self.call(&exited_params(&pane))?;
            }
            self.call(&params::PaneClose { pane })?;
        }
        Ok(())
    }

    /// Looks at one pane; whether it is to be captured.
    fn look(&mut self, groups: &mut Groups, pane: &Listed) -> Result<bool, ClientError> {
        let mut tracked = self.panes.remove(&pane.pane).unwrap_or_else(|| Tracked {
            listed: pane.clone(),
            capture: Vec::new(),
            probe: Probe::new(pane.root),
            looked: false,
            probed_at: None,
            printed: true,
            fresh: true,
            opened: false,
            process: pane
                .root_argv
                .as_ref()
                .map(|argv| started_params(&pane.pane, pane.root, argv.clone(), None)),
            changed_at: None,
            hot: None,
            blocked: false,
        });
        let opened = if tracked.opened {
            Ok(())
        } else {
            self.open(pane, &mut tracked)
        };
        let result = opened.and_then(|()| self.look_tracked(groups, pane, &mut tracked));
        let result = result.map(|capture| capture && tracked.opened);
        self.panes.insert(pane.pane.clone(), tracked);
        result
    }

    fn open(&mut self, pane: &Listed, tracked: &mut Tracked) -> Result<(), ClientError> {
        let Some(client) = self.client.as_mut() else {
            return Ok(());
        };
        let open = params::PaneOpen {
            pane: pane.pane.clone(),
            rows: pane.rows.max(1),
            cols: pane.cols.max(1),
            kind: pane.kind.clone(),
            instance: self.instance.clone(),
        };
        let fresh = match client.call(&open) {
            Ok(_) => true,
            // Ours from before a reconnect: the server kept it, its process is current.
            Err(ClientError::Server(e)) if e.code == "pane_exists" => false,
            Err(ClientError::Server(_)) => return Ok(()),
            Err(e) => return Err(e),
        };
        self.answered_at = Instant::now();
        tracked.opened = true;
        if let Some(driver) = &self.driver {
            driver.drive(&pane.pane, &pane.native);
        }
        if let (true, Some(process)) = (fresh, tracked.process.clone()) {
            self.call(&process)?;
        }
        Ok(())
    }

    fn look_tracked(
        &mut self,
        groups: &mut Groups,
        pane: &Listed,
        tracked: &mut Tracked,
    ) -> Result<bool, ClientError> {
        let streams = self.source.streams();
        // Output from before a resize is fed before it; a capture is taken after it.
        let output = if streams {
            self.source.output(pane)
        } else {
            Vec::new()
        };
        tracked.printed |= !output.is_empty();
        if streams && !tracked.fresh {
            for chunk in output.chunks(FEED_CHUNK) {
                self.call(&params::PaneFeed {
                    pane: pane.pane.clone(),
                    data: chunk.to_vec(),
                })?;
            }
        }
        let resized = (tracked.listed.rows, tracked.listed.cols) != (pane.rows, pane.cols);
        if tracked.fresh || resized {
            self.call(&params::PaneResize {
                pane: pane.pane.clone(),
                rows: pane.rows.max(1),
                cols: pane.cols.max(1),
            })?;
        }
        if tracked.probe.root() != pane.root {
            tracked.probe = Probe::new(pane.root);
            tracked.probed_at = None;
        }
        let quiet_since = tracked.probed_at.map(|at| at.elapsed());
        let due = match (self.source.quiet_probe(), quiet_since) {
            (Some(every), Some(since)) => tracked.printed || since >= every,
            _ => true,
        };
        if due {
            self.probe(groups, pane, tracked)?;
            tracked.probed_at = Some(Instant::now());
            tracked.printed = false;
        }
        tracked.listed = pane.clone();
        // A stream's screen is read again after a resize: the multiplexer reflowed it.
        Ok(tracked.fresh || !streams || resized)
    }

    /// Captures `panes` all at once and feeds each capture that changed (a stream's always: it
    /// carries what the pane printed since). A pane may vanish between the listing and here; the
    /// next listing closes it.
    fn feed_captures(&mut self, panes: &[Listed]) -> Result<(), ClientError> {
        if panes.is_empty() {
            return Ok(());
        }
        let captures = self.source.capture_many(&panes.iter().collect::<Vec<_>>());
        let streams = self.source.streams();
        for (listed, capture) in panes.iter().zip(captures) {
            let Some(capture) = capture else { continue };
            let Some(mut tracked) = self.panes.remove(&listed.pane) else {
                continue;
            };
            if streams {
                tracked.fresh = true;
            }
            let fed = self.feed_if_changed(listed, &mut tracked, capture);
            self.panes.insert(listed.pane.clone(), tracked);
            fed?;
        }
        Ok(())
    }

    /// Between rounds: feeds what a streaming source's `panes` (native ids) printed. Output of a
    /// pane not open yet is dropped: the capture it is opened with shows it.
    fn feed_pending(&mut self, panes: &[String]) -> Result<(), ClientError> {
        let by_native: BTreeMap<&str, &Tracked> = self
            .panes
            .values()
            .map(|t| (t.listed.native.as_str(), t))
            .collect();
        let listed: Vec<(Listed, bool)> = panes
            .iter()
            .map(|native| match by_native.get(native.as_str()) {
                Some(t) => (t.listed.clone(), t.opened && !t.fresh),
                None => (Listed::unlisted(native), false),
            })
            .collect();
        for (pane, live) in listed {
            let output = self.source.output(&pane);
            if !live {
                continue;
            }
            if let Some(tracked) = self.panes.get_mut(&pane.pane) {
                tracked.printed = true;
            }
            for chunk in output.chunks(FEED_CHUNK) {
                self.call(&params::PaneFeed {
                    pane: pane.pane.clone(),
                    data: chunk.to_vec(),
                })?;
            }
        }
        Ok(())
    }

    fn feed_if_changed(
        &mut self,
        pane: &Listed,
        tracked: &mut Tracked,
        capture: Vec<u8>,
    ) -> Result<(), ClientError> {
        if tracked.fresh || capture != tracked.capture {
            tracked.printed = true;
            for chunk in capture.chunks(FEED_CHUNK) {
                self.call(&params::PaneFeed {
                    pane: pane.pane.clone(),
                    data: chunk.to_vec(),
                })?;
            }
            if tracked.fresh {
                tracked.changed_at.get_or_insert_with(Instant::now);
            } else {
                tracked.changed(Instant::now());
            }
        }
        tracked.capture = capture;
        tracked.fresh = false;
        Ok(())
    }

    /// Between rounds: captures the hot panes again, all at once (nothing else — no listing, no
    /// probe).
    fn recapture_hot(&mut self) -> Result<(), ClientError> {
        if self.client.is_none() || self.source.streams() {
            return Ok(());
        }
        let now = Instant::now();
        let hot: Vec<Listed> = self
            .panes
            .values()
            .filter(|t| t.opened && t.hot(now))
            .map(|t| t.listed.clone())
            .collect();
        let captures = self.source.capture_many(&hot.iter().collect::<Vec<_>>());
        for (listed, capture) in hot.iter().zip(captures) {
            // Not captured (gone since the round): the next round's listing closes it.
            let Some(capture) = capture else { continue };
            let Some(mut tracked) = self.panes.remove(&listed.pane) else {
                continue;
            };
            let fed = self.feed_if_changed(listed, &mut tracked, capture);
            self.panes.insert(listed.pane.clone(), tracked);
            fed?;
        }
        Ok(())
    }

    /// Which of its panes the server reads blocked (captured between rounds while so).
    fn learn_blocked(&mut self) -> Result<(), ClientError> {
        let Some(Snapshot { panes, .. }) = self.call(&params::PaneList {})? else {
            return Ok(());
        };
        for tracked in self.panes.values_mut() {
            tracked.blocked = false;
        }
        for state in panes
            .iter()
            .filter(|p| p.lifecycle == LifecycleState::Blocked)
        {
            if let Some(tracked) = self.panes.get_mut(&state.pane) {
                tracked.blocked = true;
            }
        }
        Ok(())
    }

    fn probe(
        &mut self,
        groups: &mut Groups,
        pane: &Listed,
        tracked: &mut Tracked,
    ) -> Result<(), ClientError> {
        let change = tracked
            .probe
            .look(&self.proc, groups, self.identify.as_ref());
        let first = !std::mem::replace(&mut tracked.looked, true);
        match change {
            // The first look finds the program the pane was opened with: nothing new.
            Some(Change::Started(fg))
                if first && fg.pid == pane.root && pane.root_argv.is_some() => {}
            Some(Change::Started(fg)) => {
                let started = started_params(&pane.pane, fg.pid, fg.argv, Some(fg.comm));
                self.call(&started)?;
                tracked.process = Some(started);
            }
            Some(Change::Exited) => {
                let process = match &pane.root_argv {
                    // Back to the program the pane is for: it is in charge again.
                    Some(argv) => started_params(&pane.pane, pane.root, argv.clone(), None),
                    None => exited_params(&pane.pane),
                };
                self.call(&process)?;
                tracked.process = Some(process);
            }
            None => {}
        }
        Ok(())
    }
}

fn started_params(
    pane: &str,
    pid: u32,
    argv: Vec<String>,
    comm: Option<String>,
) -> params::PaneProcess {
    params::PaneProcess {
        pane: pane.to_owned(),
        event: ProcessKind::Started,
        pid: Some(pid),
        argv,
        comm,
    }
}

fn exited_params(pane: &str) -> params::PaneProcess {
    params::PaneProcess {
        pane: pane.to_owned(),
        event: ProcessKind::Exited,
        pid: None,
        argv: Vec::new(),
        comm: None,
    }
}
