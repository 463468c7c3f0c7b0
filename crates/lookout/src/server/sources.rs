//! The pane sources a server runs itself (see docs/behaviour.md, The server and its sources): one
//! tmux source per tmux server, started by
//! `source.attach` from whichever client asks first (`lookout tmux`, `lookout watch`), remembered in
//! the store so a restarted server attaches them again, and stopped with the server.
//!
//! Because the server holds the only source of each tmux server, any number of boards can be open
//! without a pane being opened twice (no `process:exited` flap when a viewer starts). Also the
//! store's side of pane identity: the instance a pane was opened under (a new tmux server's `%2` is
//! a new pane). Touches threads, the store and, through the sources, tmux and `/proc`.

use crate::manifest::Catalog;
use crate::protocol::results::{self, Attached, SourceEntry};
use crate::pty::tmux::{Socket, Tmux};
use crate::server::Client;
use crate::server::store::{Store, StoreError, ctx};
use crate::sources::poller::{Connect, Poller};
use crate::sources::tmux::{self as tmux_source, TmuxSource};
use crossbeam_channel::{Receiver, bounded};
use rusqlite::OptionalExtension as _;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often a tmux source looks at its panes.
pub const TMUX_INTERVAL: Duration = Duration::from_millis(500);

/// One running source.
struct Running {
    set_options: bool,
    stop: Arc<AtomicBool>,
    /// Asks the source to close its panes and end (no longer watched).
    close: Arc<AtomicBool>,
    done: Receiver<()>,
    /// Asks the running watcher to start writing options.
    options_on: Arc<AtomicBool>,
    /// Rounds the source has completed (a viewer waits for the first).
    rounds: Arc<AtomicU64>,
}

/// The sources this server runs, by tmux socket path.
#[derive(Default)]
pub struct Sources {
    running: BTreeMap<PathBuf, Running>,
}

impl Sources {
    /// Makes sure a source watches the tmux server at `tmux` (options on if asked now or before);
    /// `{"attached": true}` when it was started by this call.
    pub fn attach(
        &mut self,
        tmux: PathBuf,
        set_options: bool,
        socket: &Path,
        catalog: Arc<Catalog>,
        store: Option<&Store>,
    ) -> Attached {
        self.prune(store);
        if let Some(running) = self.running.get_mut(&tmux) {
            if set_options && !running.set_options {
                running.set_options = true;
                running.options_on.store(true, Ordering::Relaxed);
                remember(store, &tmux, true);
            }
            return Attached {
                attached: false,
                tmux,
                set_options: Some(running.set_options),
                error: None,
            };
        }
        let stop = Arc::new(AtomicBool::new(false));
        let close = Arc::new(AtomicBool::new(false));
        let options_on = Arc::new(AtomicBool::new(false));
        let (done_tx, done) = bounded(1);
        let rounds = Arc::new(AtomicU64::new(0));
        let control = tmux_source::Control {
            stop: stop.clone(),
            close: close.clone(),
            options_on: options_on.clone(),
            rounds: rounds.clone(),
        };
        let source = TmuxSource::new(Tmux::new(Socket::Path(tmux.clone())), set_options, control);
        let server = socket.to_path_buf();
        let connect: Connect = Arc::new(move || Ok(Client::connect(&server)?));
        let poller = Poller::new(source, connect, catalog);
        let spawned = std::thread::Builder::new()
            .name("lookout-tmux".into())
            .spawn(move || {
                poller.run(TMUX_INTERVAL).clear_options();
                let _ = done_tx.send(());
            });
        if let Err(e) = spawned {
            eprintln!(
                "lookout: cannot start the tmux source for {}: {e}",
                tmux.display()
            );
            return Attached {
                attached: false,
                tmux,
                set_options: None,
                error: Some(e.to_string()),
            };
        }
        remember(store, &tmux, set_options);
        eprintln!("lookout: watching the tmux server at {}", tmux.display());
        self.running.insert(
            tmux.clone(),
            Running {
                set_options,
                stop,
                close,
                done,
                options_on,
                rounds,
            },
        );
        Attached {
            attached: true,
            tmux,
            set_options: Some(set_options),
            error: None,
        }
    }

    /// Stops watching the tmux server at `tmux`: its source closes its panes, removes its options
    /// and ends on its own thread, and a restarted server does not attach it again. Not waited
    /// for: the source closes its panes through this server, which must stay free to answer.
    pub fn detach(&mut self, tmux: PathBuf, store: Option<&Store>) -> results::Detached {
        self.prune(store);
        let Some(running) = self.running.remove(&tmux) else {
            return results::Detached {
                detached: false,
                tmux,
            };
        };
        running.close.store(true, Ordering::Relaxed);
        forget(store, &tmux);
        eprintln!(
            "lookout: no longer watching the tmux server at {}",
            tmux.display()
        );
        results::Detached {
            detached: true,
            tmux,
        }
    }

    /// The sources now running.
    pub fn list(&mut self, store: Option<&Store>) -> results::Sources {
        self.prune(store);
        let sources = self
            .running
            .iter()
            .map(|(tmux, r)| SourceEntry {
                kind: "tmux".into(),
                tmux: tmux.clone(),
                set_options: r.set_options,
                rounds: r.rounds.load(Ordering::Relaxed),
            })
            .collect();
        results::Sources { sources }
    }

    /// Attaches the sources a previous run of this server had, whose tmux servers still run.
    pub fn resume(&mut self, socket: &Path, catalog: &Arc<Catalog>, store: Option<&Store>) {
        let Some(store) = store else { return };
        let remembered = match saved(store) {
            Ok(rows) => rows,
            Err(e) => {
                eprintln!("lookout: {e}");
                return;
            }
        };
        for (tmux, set_options) in remembered {
            if Tmux::new(Socket::Path(tmux.clone())).is_running() {
                self.attach(tmux, set_options, socket, catalog.clone(), Some(store));
            } else {
                forget(Some(store), &tmux);
            }
        }
    }

    /// Forgets sources whose tmux server went away (they closed their panes and ended).
    fn prune(&mut self, store: Option<&Store>) {
        let ended: Vec<PathBuf> = self
            .running
            .iter()
            .filter(|(_, r)| !r.done.is_empty())
            .map(|(tmux, _)| tmux.clone())
            .collect();
        for tmux in ended {
            self.running.remove(&tmux);
            forget(store, &tmux);
        }
    }

    /// Stops every source (the server is stopping): each removes its tmux options; panes stay in
    /// the store to be resumed. Waits at most `within` in all.
    pub fn stop_all(self, within: Duration) {
        let end = Instant::now() + within;
        for running in self.running.values() {
            running.stop.store(true, Ordering::Relaxed);
        }
        for running in self.running.into_values() {
            let _ = running
                .done
                .recv_timeout(end.saturating_duration_since(Instant::now()));
        }
    }
}

fn remember(store: Option<&Store>, tmux: &Path, set_options: bool) {
    let Some(store) = store else { return };
    let result = store.conn.execute(
        "INSERT OR REPLACE INTO sources (tmux, set_options) VALUES (?1, ?2)",
        rusqlite::params![tmux.to_string_lossy(), set_options],
    );
    if let Err(e) = result.map_err(ctx("remember a source")) {
        eprintln!("lookout: {e}");
    }
}

fn forget(store: Option<&Store>, tmux: &Path) {
    let Some(store) = store else { return };
    let result = store.conn.execute(
        "DELETE FROM sources WHERE tmux = ?1",
        [tmux.to_string_lossy()],
    );
    if let Err(e) = result.map_err(ctx("forget a source")) {
        eprintln!("lookout: {e}");
    }
}

fn saved(store: &Store) -> Result<Vec<(PathBuf, bool)>, StoreError> {
    let mut query = store
        .conn
        .prepare("SELECT tmux, set_options FROM sources")
        .map_err(ctx("read sources"))?;
    let rows = query
        .query_map([], |r| {
            Ok((PathBuf::from(r.get::<_, String>(0)?), r.get(1)?))
        })
        .map_err(ctx("read sources"))?;
    rows.collect::<Result<_, _>>().map_err(ctx("read sources"))
}

/// Whether `pane` may resume its stored state when opened under `instance`: yes without an
/// instance, or when it was stored under the same one.
pub fn same_instance(
    store: &Store,
    pane: &str,
    instance: Option<&str>,
) -> Result<bool, StoreError> {
    let Some(instance) = instance else {
        return Ok(true);
    };
    let stored: Option<String> = store
        .conn
        .query_row(
            "SELECT instance FROM pane_instances WHERE pane = ?1",
            [pane],
            |r| r.get(0),
        )
        .optional()
        .map_err(ctx("read pane instance"))?;
    Ok(stored.as_deref() == Some(instance))
}

/// Records the instance `pane` is open under, for the next [`same_instance`].
pub fn record_instance(store: &Store, pane: &str, instance: &str) -> Result<(), StoreError> {
    store
        .conn
        .execute(
            "INSERT OR REPLACE INTO pane_instances (pane, instance) VALUES (?1, ?2)",
            [pane, instance],
        )
        .map(drop)
        .map_err(ctx("write pane instance"))
}
