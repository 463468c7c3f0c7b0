//! The one poller every pane source runs under: round by round it mirrors what the source lists
//! into the server — reconnect (then every pane is opened again), the sweep of panes an earlier run
//! left, open/close, resize, the `/proc` probe of each pane's foreground program, output or
//! captures fed only when they changed (so "unchanged" stays unchanged for `quiet_ms` rules), and
//! a ping when nothing was said for a while. Touches the server socket and `/proc`.

mod feed;
mod look;
mod tracked;

use super::drive::Driver;
use super::{Listed, Next, PaneSource};
use crate::client::{Client, ClientError};
use crate::protocol::params;
use crate::protocol::{Method, results::Snapshot};
use crate::pty::probe::{Groups, Identify, ProcFs};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracked::{HOT_EVERY, Tracked, exited_params};

/// The most bytes one `pane.feed` carries (base64 makes it a third larger; the line limit is 1 MiB).
pub const FEED_CHUNK: usize = 256 * 1024;
/// How long a quiet source goes without asking whether its server is still there.
const PING_EVERY: Duration = Duration::from_secs(2);
/// How often a lost server is looked for again.
const RETRY_EVERY: Duration = Duration::from_secs(1);
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
}
