//! The server (see docs/protocol.md): owns the world on one thread, ticks it, and serves the Unix
//! socket.
//!
//! - `protocol`: the wire types, version and features (pure).
//! - `client`: the blocking client every CLI and pane source uses.
//! - `conn`: the listener and the per-connection reader/writer threads; `queues`: their requests,
//!   one queue per connection served in turn, hook reports first.
//! - `engine`: the world thread — requests between ticks, the tick, persistence, fan-out;
//!   `handlers` and `subscribe` hold its simpler parts.
//! - `store`: SQLite (see docs/behaviour.md, Persistence), its file watched by `dbfile`;
//!   `mirror`: the JSON mirror fallback
//!   (see docs/protocol.md, The JSON mirror).
//! - `versions`: the release of identified agents, for drift (`rules_stale`) — read from their
//!   install (`installs`), `--version` only as the last resort.
//!
//! Everything here is edge: sockets, threads, SQLite and files live in this module and in `cli/`,
//! never in the core.

pub mod accept;
pub mod conn;
pub mod dbfile;
pub mod dblock;
pub mod engine;
mod handlers;
mod installs;
pub mod mirror;
pub mod queues;
mod send;
pub mod sources;
pub mod store;
pub mod subscribe;
pub mod versions;

pub use crate::client::{Client, ClientError};
use crate::{private, protocol};

use crate::manifest::ManifestError;
use crossbeam_channel::{Sender, bounded};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// The socket path when none is given: `$XDG_RUNTIME_DIR/lookout/lookout.sock`, or
/// `/tmp/lookout-<uid>/lookout.sock` where there is no runtime directory (a bare ssh session, a container).
pub fn default_socket_path() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("lookout").join("lookout.sock"),
        None => fallback_dir().join("lookout.sock"),
    }
}

/// `$LOOKOUT_SOCKET`, when set: the socket the pane's own lookout told it about.
pub fn env_socket() -> Option<PathBuf> {
    std::env::var_os("LOOKOUT_SOCKET")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
}

/// lookout's state directory: `$XDG_STATE_HOME/lookout`, else `~/.local/state/lookout` (the home
/// from the password database when `HOME` is unset), else `/tmp/lookout-<uid>/state` — never one
/// directory shared by every user.
pub fn state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("lookout");
    }
    match private::home_dir() {
        Some(home) => home.join(".local").join("state").join("lookout"),
        None => fallback_dir().join("state"),
    }
}

/// `/tmp/lookout-<uid>`: the private directory (see `private::own_dir`) used where the user has
/// no runtime or home directory.
fn fallback_dir() -> PathBuf {
    PathBuf::from(format!("/tmp/lookout-{}", nix::unistd::getuid()))
}

/// The database path when none is given: `<state dir>/lookout.db`.
pub fn default_db_path() -> PathBuf {
    state_dir().join("lookout.db")
}

/// Where `lookout report` leaves reports when the socket is unreachable: `<state dir>/agent-status`.
pub fn default_mirror_dir() -> PathBuf {
    state_dir().join("agent-status")
}

/// How often a server checks that its socket is still the one it bound.
const SOCKET_CHECK: Duration = Duration::from_secs(2);

/// Stops the server when its socket file is removed or replaced (the user logged out and the
/// runtime directory went, a test's temp dir was deleted): nobody can reach it any more, and a
/// server nobody can reach must not run on.
fn watch_socket(socket: &std::path::Path, stopper: Stopper) {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(bound) = std::fs::metadata(socket).map(|m| (m.dev(), m.ino())) else {
        return;
    };
    let socket = socket.to_path_buf();
    let _ = std::thread::Builder::new()
        .name("lookout-socket-watch".into())
        .spawn(move || {
            loop {
                std::thread::sleep(SOCKET_CHECK);
                let now = std::fs::metadata(&socket).map(|m| (m.dev(), m.ino()));
                if now.ok() != Some(bound) {
                    eprintln!(
                        "lookout: {} was removed or replaced; stopping",
                        socket.display()
                    );
                    stopper.stop();
                    return;
                }
            }
        });
}

/// How to run a server.
#[derive(Debug, Clone)]
pub struct Config {
    /// The socket to listen on.
    pub socket: PathBuf,
    /// The database; `None` keeps nothing across restarts.
    pub db: Option<PathBuf>,
    /// The tick period (500 ms unless configured).
    pub tick: Duration,
    /// Extra manifest directories (after bundled and the user's).
    pub manifests: Vec<PathBuf>,
    /// The mirror directory to ingest; `None` ingests nothing.
    pub mirror_dir: Option<PathBuf>,
    /// Where this server's output goes, when it runs detached (shown by `server.info`).
    pub log: Option<PathBuf>,
    /// The settings file with the notification rules; `None` notifies nothing.
    pub settings: Option<PathBuf>,
    /// What the event log keeps.
    pub retention: Retention,
    /// Where to publish to the fleet; `None` publishes nothing.
    pub fleet: Option<crate::fleet::PublishConfig>,
}

/// What the event log keeps: the events younger than `age` and, of those, at most the newest
/// `events` (either `None`: no such limit). The newest event is always kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// How long an event is kept.
    pub age: Option<Duration>,
    /// How many events are kept at most, however young: the log's size stays bounded when
    /// hundreds of busy panes log faster than `age` lets go.
    pub events: Option<u64>,
}

impl Retention {
    /// Three days and a million events (about 350 MB of database at most, measured by
    /// `tools/eventlog.py`; a user with a dozen agents logs far fewer in three days).
    /// `lookout serve --help` says so too.
    pub const DEFAULT: Retention = Retention {
        age: Some(Duration::from_secs(3 * 24 * 60 * 60)),
        events: Some(1_000_000),
    };

    /// True when nothing is ever pruned.
    pub fn keeps_all(&self) -> bool {
        self.age.is_none() && self.events.is_none()
    }
}

impl Config {
    /// The defaults: default socket, database and mirror directory, 500 ms ticks.
    pub fn standard() -> Config {
        Config {
            socket: default_socket_path(),
            db: Some(default_db_path()),
            tick: crate::schedule::TICK_INTERVAL,
            manifests: Vec::new(),
            mirror_dir: Some(default_mirror_dir()),
            log: None,
            settings: crate::notify::settings::default_path(),
            retention: Retention::DEFAULT,
            fleet: None,
        }
    }
}

/// Why the server could not start.
#[derive(Debug)]
pub enum ServeError {
    /// A server already answers on the socket.
    AlreadyRunning(PathBuf),
    /// The socket could not be created.
    Socket(PathBuf, std::io::Error),
    /// lookout's state directory is not its own (or cannot be made).
    StateDir(PathBuf, std::io::Error),
    /// The database could not be opened.
    Store(store::StoreError),
    /// Another server holds the database.
    Locked(dblock::LockError),
    /// A thread could not be started.
    Thread(std::io::Error),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::AlreadyRunning(p) => {
                write!(
                    f,
                    "a lookout server is already running on {} (stop it, or pass another --socket)",
                    p.display()
                )
            }
            ServeError::Socket(p, e) => write!(f, "cannot listen on {}: {e}", p.display()),
            ServeError::StateDir(p, e) => {
                write!(f, "cannot use the state directory {}: {e}", p.display())
            }
            ServeError::Store(e) => write!(f, "{e}"),
            ServeError::Locked(e) => write!(f, "{e}"),
            ServeError::Thread(e) => write!(f, "cannot start a thread: {e}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// A locked database whose holder is (about to be) serving our own socket is the start-up race
/// two clients run (one wins): that is `AlreadyRunning`, not an error. The winner may need
/// seconds to compile manifests and open the store on a busy machine: it is given as long as a
/// client waits for the server it started.
fn held_by_a_peer(socket: &std::path::Path, e: dblock::LockError) -> ServeError {
    if matches!(e, dblock::LockError::Held { .. }) {
        // As long as a client waits for a server it started: a debug build on a loaded machine
        // took 3.8 s from start to accepting, and a loser that gave up after 2 s exited 2.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if UnixStream::connect(socket).is_ok() {
                return ServeError::AlreadyRunning(socket.to_owned());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    ServeError::Locked(e)
}

/// A bound, ready server: the socket listens, the database is open, the world is built.
pub struct Server {
    config: Config,
    listener: UnixListener,
    _lock: conn::ServerLock,
    notifier: crate::notify::Notifier,
    engine: engine::Engine,
    /// Held for the server's life: no second server writes this database.
    db_lock: Option<dblock::DbLock>,
    stop_tx: Sender<()>,
    stop_rx: crossbeam_channel::Receiver<()>,
}

/// Stops a running server (a final tick, then the socket is removed).
#[derive(Debug, Clone)]
pub struct Stopper(Sender<()>);

impl Stopper {
    /// Asks the server to stop; returns at once.
    pub fn stop(&self) {
        let _ = self.0.try_send(());
    }
}

impl Server {
    /// Binds the socket, opens the database and builds the world. Manifest errors are returned
    /// for the caller to print as warnings; the manifests that loaded are used.
    pub fn bind(config: Config) -> Result<(Server, Vec<ManifestError>), ServeError> {
        let (store, db_lock) = match &config.db {
            Some(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    if *path == default_db_path() {
                        // lookout's own state directory: ours, 0700, not a symlink.
                        private::own_dir(dir)
                            .map_err(|e| ServeError::StateDir(dir.to_owned(), e))?;
                    } else {
                        let _ = std::fs::create_dir_all(dir);
                    }
                }
                // The lock before the first read: a second server must not even migrate it.
                let lock = dblock::lock_db(path).map_err(|e| held_by_a_peer(&config.socket, e))?;
                (
                    Some(store::Store::open(path).map_err(ServeError::Store)?),
                    Some(lock),
                )
            }
            None => (None, None),
        };
        let (catalog, errors) = crate::private::catalog(&config.manifests);
        // Bound last, so a client that can connect finds a server ready to answer.
        let own_dir = config.socket.parent() == default_socket_path().parent();
        let (listener, lock) = conn::bind(&config.socket, own_dir).map_err(|e| match e {
            conn::BindError::Live => ServeError::AlreadyRunning(config.socket.clone()),
            conn::BindError::Io(e) => ServeError::Socket(config.socket.clone(), e),
        })?;
        let world = crate::world(Arc::new(catalog));
        let (stop_tx, stop_rx) = bounded(1);
        let warnings: Vec<String> = errors.iter().map(ToString::to_string).collect();
        let identity = engine::Identity {
            socket: config.socket.clone(),
            info: protocol::results::ServerInfo {
                pid: std::process::id(),
                version: env!("CARGO_PKG_VERSION").into(),
                protocol: protocol::PROTOCOL_VERSION,
                started: crate::event::rfc3339(std::time::SystemTime::now()),
                socket: config.socket.clone(),
                db: config.db.clone(),
                log: config.log.clone(),
                manifest_warnings: warnings,
                uptime_ms: 0,
                panes: 0,
                listeners: 0,
                machine: config.fleet.as_ref().map_or_else(
                    || crate::fleet::settings::machine_id(None, None),
                    |f| f.machine.clone(),
                ),
                fleet: None,
            },
            started: std::time::Instant::now(),
            stop: stop_tx.clone(),
        };
        let mut engine = engine::Engine::new(
            world,
            identity,
            store,
            config.mirror_dir.clone(),
            config.retention,
        );
        let notifier = crate::notify::start(config.settings.clone(), state_dir())
            .map_err(ServeError::Thread)?;
        engine.set_notifier(notifier.clone());
        if let Some(fleet) = config.fleet.clone() {
            engine.set_fleet(crate::fleet::Publisher::start(fleet).map_err(ServeError::Thread)?);
        }
        Ok((
            Server {
                config,
                listener,
                _lock: lock,
                notifier,
                engine,
                db_lock,
                stop_tx,
                stop_rx,
            },
            errors,
        ))
    }

    /// The notifier, to ask it to re-read the settings (SIGHUP).
    pub fn notifier(&self) -> crate::notify::Notifier {
        self.notifier.clone()
    }

    /// A handle that stops this server from another thread (a signal handler, an embedder).
    pub fn stopper(&self) -> Stopper {
        Stopper(self.stop_tx.clone())
    }

    /// Serves until stopped: the world on this thread, connections on their own.
    pub fn run(self) -> Result<(), ServeError> {
        let Server {
            config,
            listener,
            mut engine,
            db_lock,
            stop_rx,
            stop_tx,
            _lock,
            ..
        } = self;
        let (queues, bell) = queues::Queues::new();
        let stop_accepting = Arc::new(AtomicBool::new(false));
        let flag = stop_accepting.clone();
        let readers = queues.clone();
        std::thread::Builder::new()
            .name("lookout-accept".into())
            .spawn(move || accept::accept_loop(listener, readers, flag))
            .map_err(ServeError::Thread)?;
        watch_socket(&config.socket, Stopper(stop_tx.clone()));
        engine.resume_sources();
        let sources = engine.run(&queues, &bell, stop_rx, config.tick);
        // No request reaches the world any more: a source's last call fails fast.
        queues.shut();
        // Wake the acceptor so it sees the flag, then take the socket away.
        stop_accepting.store(true, Ordering::Relaxed);
        let _ = UnixStream::connect(&config.socket);
        let _ = std::fs::remove_file(&config.socket);
        // No request reaches the world any more, so a source's last call fails fast and it cleans up.
        sources.stop_all(Duration::from_secs(3));
        drop(db_lock);
        Ok(())
    }

    /// Runs the server on a background thread (an embedded server for `lookout watch`).
    pub fn spawn(self) -> Result<(Stopper, JoinHandle<Result<(), ServeError>>), ServeError> {
        let stopper = self.stopper();
        let handle = std::thread::Builder::new()
            .name("lookout-server".into())
            .spawn(move || self.run())
            .map_err(ServeError::Thread)?;
        Ok((stopper, handle))
    }
}
