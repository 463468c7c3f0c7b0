//! Persistence (see docs/behaviour.md, Persistence): the SQLite database holding every pane's
//! current state and the event log.
//!
//! WAL mode; a `schema_version` table and ordered migrations; one transaction per tick carrying that
//! tick's events and the new state of every pane they touched. Reads happen when a pane is opened
//! (to resume it) and at start (to continue the event numbering). Touches one SQLite file.

use crate::components::{Attention, Cause, Labels, Lifecycle, LifecycleState};
use crate::event::{Event, rfc3339};
use crate::panes::Restore;
use crate::protocol::event_json;
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A database error with what we were doing.
#[derive(Debug)]
pub struct StoreError {
    /// What failed (`open`, `migrate`, `write tick`, …).
    pub doing: &'static str,
    /// Why.
    pub reason: StoreErrorKind,
}

/// Why the database failed.
#[derive(Debug)]
pub enum StoreErrorKind {
    /// SQLite said no.
    Sqlite(rusqlite::Error),
    /// The database path holds another file than the one the server writes (replaced while it
    /// ran); it is never overwritten.
    Replaced(std::path::PathBuf),
    /// The file was written by a newer lookout (its schema version is past ours).
    NewerSchema {
        /// The file's version.
        found: i64,
        /// The newest this build knows.
        known: usize,
    },
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.reason {
            StoreErrorKind::Sqlite(e) => write!(f, "database: {}: {e}", self.doing),
            StoreErrorKind::Replaced(path) => write!(
                f,
                "database: {}: {} is another file than the one this server opened (replaced while it ran); move it away to have this server's database written back there, or restart the server to use it",
                self.doing,
                path.display()
            ),
            StoreErrorKind::NewerSchema { found, known } => write!(
                f,
                "database: {}: its schema version {found} is newer than this lookout knows ({known}); run a newer lookout, or pass another --db",
                self.doing
            ),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.reason {
            StoreErrorKind::Sqlite(e) => Some(e),
            StoreErrorKind::NewerSchema { .. } | StoreErrorKind::Replaced(_) => None,
        }
    }
}

pub(super) fn ctx(doing: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    move |e| StoreError {
        doing,
        reason: StoreErrorKind::Sqlite(e),
    }
}

/// Migrations in order; `MIGRATIONS[i]` takes the schema from version `i` to `i + 1`. Never edit
/// one that has shipped: add the next.
const MIGRATIONS: &[&str] = &[
    "
    CREATE TABLE panes (
        pane TEXT PRIMARY KEY,
        kind TEXT,
        lifecycle TEXT NOT NULL,
        since_ms INTEGER NOT NULL,
        cause TEXT,
        input_required TEXT,
        unread TEXT,
        labels TEXT NOT NULL,
        seq INTEGER NOT NULL
    );
    CREATE TABLE events (
        seq INTEGER PRIMARY KEY,
        time TEXT NOT NULL,
        pane TEXT NOT NULL,
        cause TEXT,
        body TEXT NOT NULL
    );
    CREATE INDEX events_by_pane ON events (pane, seq);
",
    "
    CREATE TABLE pane_instances (pane TEXT PRIMARY KEY, instance TEXT NOT NULL);
    CREATE TABLE sources (tmux TEXT PRIMARY KEY, set_options INTEGER NOT NULL);
",
];

/// One pane's row, as the tick writes it.
#[derive(Debug, Clone)]
pub struct PaneRow<'a> {
    /// The pane id.
    pub pane: &'a str,
    /// Its kind.
    pub kind: Option<&'a str>,
    /// Lifecycle with since and cause.
    pub lifecycle: &'a Lifecycle,
    /// Attention with raisers.
    pub attention: &'a Attention,
    /// Labels.
    pub labels: &'a Labels,
}

/// The open database.
#[derive(Debug)]
pub struct Store {
    /// Also used by `sources` for its own two tables.
    pub(super) conn: Connection,
    /// The file at the database's path, checked before each tick's write (`dbfile`).
    file: Option<super::dbfile::Watched>,
}

impl Store {
    /// Opens (creating if needed) the database at `path` and migrates it to the current schema.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        // Never through a planted symlink: the file must be the one at this path.
        let flags = rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
        // Created 0600 before SQLite opens it: it holds every pane's history, and SQLite gives the
        // WAL and shared-memory files the database file's mode.
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            let created = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
                .open(path);
            // An existing file is kept as it is; any other failure (a planted symlink) is
            // SQLite's to report, on the open below.
            drop(created);
        }
        let conn = Connection::open_with_flags(path, flags).map_err(ctx("open"))?;
        let mut store = Store::init(conn)?;
        store.file = super::dbfile::Watched::new(path).ok();
        Ok(store)
    }

    /// Before a write: a database deleted from its path is written back there from the open
    /// copy and reopened (logged); a path holding another file is an error until it is moved.
    fn guard_file(&mut self) -> Result<(), StoreError> {
        use super::dbfile::Found;
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        match file.check() {
            Found::Ours => Ok(()),
            Found::Replaced => Err(StoreError {
                doing: "check the database file",
                reason: StoreErrorKind::Replaced(file.path().to_owned()),
            }),
            Found::Deleted => {
                let path = file.path().to_owned();
                let written = file.write_back(&self.conn);
                if let Err(e) = written {
                    eprintln!(
                        "lookout: the database {} was deleted while the server ran, and {e}; the server goes on in the deleted file",
                        path.display()
                    );
                    self.file = None;
                    return Ok(());
                }
                // The old connection closes first: closing, SQLite removes its `-wal` by name.
                let memory = Connection::open_in_memory().map_err(ctx("reopen"))?;
                drop(std::mem::replace(&mut self.conn, memory));
                let flags =
                    rusqlite::OpenFlags::default() | rusqlite::OpenFlags::SQLITE_OPEN_NOFOLLOW;
                let conn = Connection::open_with_flags(&path, flags).map_err(ctx("reopen"))?;
                let reopened = Store::init(conn)?;
                self.conn = reopened.conn;
                eprintln!(
                    "lookout: the database {} was deleted while the server ran; written back from the open copy (nothing acknowledged is lost)",
                    path.display()
                );
                Ok(())
            }
        }
    }

    /// An in-memory database (tests, an embedded server that keeps nothing).
    pub fn memory() -> Result<Store, StoreError> {
        Store::init(Connection::open_in_memory().map_err(ctx("open"))?)
    }

    fn init(conn: Connection) -> Result<Store, StoreError> {
        // WAL: readers never block the tick's writer, and a kill -9 leaves a consistent file.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(ctx("set WAL mode"))?;
        // NORMAL is durable across a process crash in WAL mode (only power loss can drop the last commit).
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(ctx("set synchronous"))?;
        conn.busy_timeout(Duration::from_secs(5))
            .map_err(ctx("set busy timeout"))?;
        let mut store = Store { conn, file: None };
        store.migrate()?;
        Ok(store)
    }

    /// The schema version now.
    pub fn version(&self) -> Result<usize, StoreError> {
        self.conn
            .query_row("SELECT version FROM schema_version", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|v| usize::try_from(v).unwrap_or(0))
            .map_err(ctx("read schema version"))
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let tx = self.conn.transaction().map_err(ctx("migrate"))?;
        tx.execute_batch("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            .map_err(ctx("create schema_version"))?;
        let current: Option<i64> = tx
            .query_row("SELECT version FROM schema_version", [], |r| r.get(0))
            .optional()
            .map_err(ctx("migrate"))?;
        if current.is_none() {
            tx.execute("INSERT INTO schema_version (version) VALUES (0)", [])
                .map_err(ctx("migrate"))?;
        }
        // A newer lookout's file: refused, untouched (an older build would misread it).
        if let Some(found) =
            current.filter(|v| usize::try_from(*v).is_ok_and(|v| v > MIGRATIONS.len()))
        {
            return Err(StoreError {
                doing: "open",
                reason: StoreErrorKind::NewerSchema {
                    found,
                    known: MIGRATIONS.len(),
                },
            });
        }
        let current = usize::try_from(current.unwrap_or(0)).unwrap_or(0);
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(current) {
            tx.execute_batch(sql).map_err(ctx("migrate"))?;
            tx.execute(
                "UPDATE schema_version SET version = ?1",
                [i64::try_from(i + 1).unwrap_or(i64::MAX)],
            )
            .map_err(ctx("migrate"))?;
        }
        tx.commit().map_err(ctx("migrate"))
    }

    /// The last event number in the log (0 when empty): the server continues from here.
    pub fn last_seq(&self) -> Result<u64, StoreError> {
        self.conn
            .query_row("SELECT COALESCE(MAX(seq), 0) FROM events", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|v| u64::try_from(v).unwrap_or(0))
            .map_err(ctx("read last event"))
    }

    /// Writes one tick: its events and the rows of the panes they touched, in one transaction.
    pub fn write_tick(&mut self, events: &[Event], rows: &[PaneRow<'_>]) -> Result<(), StoreError> {
        self.guard_file()?;
        if events.is_empty() && rows.is_empty() {
            return Ok(());
        }
        let last = events.last().map_or(0, |e| e.seq.0);
        let tx = self.conn.transaction().map_err(ctx("write tick"))?;
        {
            let mut insert = tx
                .prepare_cached("INSERT OR REPLACE INTO events (seq, time, pane, cause, body) VALUES (?1, ?2, ?3, ?4, ?5)")
                .map_err(ctx("write events"))?;
            for e in events {
                let cause = e.cause.as_ref().map(ToString::to_string);
                let body = event_json(e).to_string();
                insert
                    .execute(params![
                        to_i64(e.seq.0),
                        rfc3339(e.time),
                        &*e.pane,
                        cause,
                        body
                    ])
                    .map_err(ctx("write events"))?;
            }
            let mut upsert = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO panes (pane, kind, lifecycle, since_ms, cause, input_required, unread, labels, seq)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )
                .map_err(ctx("write panes"))?;
            for row in rows {
                let labels =
                    serde_json::to_string(&row.labels.labels).unwrap_or_else(|_| "[]".into());
                upsert
                    .execute(params![
                        row.pane,
                        row.kind,
                        row.lifecycle.state.name(),
                        to_i64(millis(row.lifecycle.since)),
                        row.lifecycle.cause.as_ref().map(ToString::to_string),
                        row.attention
                            .input_required
                            .as_ref()
                            .map(ToString::to_string),
                        row.attention.unread.as_ref().map(ToString::to_string),
                        labels,
                        to_i64(last),
                    ])
                    .map_err(ctx("write panes"))?;
            }
        }
        tx.commit().map_err(ctx("commit tick"))
    }

    /// The stored state of `pane`, to resume it.
    pub fn restore(&self, pane: &str) -> Result<Option<Restore>, StoreError> {
        self.conn
            .query_row(
                "SELECT lifecycle, since_ms, cause, input_required, unread, labels FROM panes WHERE pane = ?1",
                [pane],
                |r| {
                    let lifecycle: String = r.get(0)?;
                    let since: i64 = r.get(1)?;
                    let cause: Option<String> = r.get(2)?;
                    let input: Option<String> = r.get(3)?;
                    let unread: Option<String> = r.get(4)?;
                    let labels: String = r.get(5)?;
                    Ok(Restore {
                        lifecycle: LifecycleState::parse(&lifecycle).unwrap_or_default(),
                        since: Some(SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(since).unwrap_or(0))),
                        cause: cause.as_deref().and_then(Cause::parse),
                        input_required: input.as_deref().and_then(Cause::parse),
                        unread: unread.as_deref().and_then(Cause::parse),
                        labels: serde_json::from_str(&labels).unwrap_or_default(),
                    })
                },
            )
            .optional()
            .map_err(ctx("read pane"))
    }

    /// Forgets `pane` (`pane.close`): its row goes, its events stay.
    pub fn forget(&self, pane: &str) -> Result<(), StoreError> {
        self.conn
            .execute_batch("SAVEPOINT forget")
            .and_then(|()| {
                self.conn
                    .execute("DELETE FROM panes WHERE pane = ?1", [pane])
            })
            .and_then(|_| {
                self.conn
                    .execute("DELETE FROM pane_instances WHERE pane = ?1", [pane])
            })
            .and_then(|_| self.conn.execute_batch("RELEASE forget"))
            .map_err(ctx("forget pane"))
    }

    /// Deletes at most `batch` of the oldest events that are logged before `before` or are
    /// not among the newest `keep` (either limit `None`: none of that kind), never the newest
    /// one (the numbering continues from it); returns how many went. Looks at `batch` rows at
    /// most, so a step is cheap however large the log. The log is a run of consecutive
    /// numbers (only its oldest end is ever deleted), so "among the newest `keep`" is a
    /// comparison with the newest number.
    pub fn prune(
        &mut self,
        before: Option<SystemTime>,
        keep: Option<u64>,
        batch: usize,
    ) -> Result<usize, StoreError> {
        self.conn
            .execute(
                "DELETE FROM events WHERE seq IN (SELECT seq FROM events ORDER BY seq LIMIT ?1)
                 AND seq < (SELECT MAX(seq) FROM events)
                 AND (time < ?2 OR seq <= (SELECT MAX(seq) FROM events) - ?3)",
                params![
                    i64::try_from(batch).unwrap_or(i64::MAX),
                    before.map(rfc3339),
                    keep.map(to_i64)
                ],
            )
            .map_err(ctx("prune events"))
    }

    /// How many events the log holds (tests, diagnostics).
    pub fn event_count(&self) -> Result<u64, StoreError> {
        self.conn
            .query_row("SELECT COUNT(*) FROM events", [], |r| r.get::<_, i64>(0))
            .map(|v| u64::try_from(v).unwrap_or(0))
            .map_err(ctx("count events"))
    }
}

fn millis(t: SystemTime) -> u64 {
    u64::try_from(
        t.duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis(),
    )
    .unwrap_or(u64::MAX)
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::components::Flag;
    use crate::event::{Change, EventSeq};
    use std::sync::Arc;

    #[test]
    fn migrates_writes_restores_and_forgets() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("l.db");
        let mut store = Store::open(&path).expect("open");
        assert_eq!(store.version().expect("version"), MIGRATIONS.len());
        let since = SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        let lifecycle = Lifecycle {
            state: LifecycleState::Done,
            prev: LifecycleState::Working,
            since,
            cause: Some(Cause::Hook(Arc::from("h:claude"))),
        };
        let attention = Attention {
            unread: Some(Cause::Hook(Arc::from("h:claude"))),
            ..Default::default()
        };
        let labels = Labels {
            labels: vec!["gate ×1".into()],
            ..Default::default()
        };
        let event = Event {
            seq: EventSeq(7),
            time: since,
            pane: Arc::from("p"),
            cause: None,
            change: Change::Attention {
                flag: Flag::Unread,
                raised: true,
            },
        };
        let row = PaneRow {
            pane: "p",
            kind: Some("claude"),
            lifecycle: &lifecycle,
            attention: &attention,
            labels: &labels,
        };
        store.write_tick(&[event], &[row]).expect("write");
        drop(store);
        let store = Store::open(&path).expect("reopen");
        assert_eq!(store.last_seq().expect("seq"), 7);
        let back = store.restore("p").expect("read").expect("stored");
        assert_eq!(back.lifecycle, LifecycleState::Done);
        assert_eq!(back.since, Some(since));
        assert_eq!(back.unread, Some(Cause::Hook(Arc::from("h:claude"))));
        assert_eq!(back.labels, ["gate ×1"]);
        store.forget("p").expect("forget");
        assert!(store.restore("p").expect("read").is_none());
        assert_eq!(store.event_count().expect("count"), 1);
    }

    #[test]
    fn pruning_takes_old_events_in_steps_and_keeps_the_newest() {
        let mut store = Store::memory().expect("store");
        store.write_tick(&events(1..=5), &[]).expect("write");
        assert_eq!(store.prune(Some(at(4)), None, 2).expect("prune"), 2);
        assert_eq!(
            store.prune(Some(at(4)), None, 2).expect("prune"),
            1,
            "seq 3; 4 is not older"
        );
        assert_eq!(
            store.prune(Some(at(100)), None, 10).expect("prune"),
            1,
            "the newest stays"
        );
        assert_eq!(store.event_count().expect("count"), 1);
        assert_eq!(store.last_seq().expect("seq"), 5);
    }

    #[test]
    fn a_capped_log_keeps_only_its_newest_events_whatever_their_age() {
        let mut store = Store::memory().expect("store");
        store.write_tick(&events(1..=10), &[]).expect("write");
        assert_eq!(store.prune(None, None, 100).expect("prune"), 0, "no limit");
        assert_eq!(store.prune(None, Some(4), 3).expect("prune"), 3);
        assert_eq!(store.prune(None, Some(4), 100).expect("prune"), 3);
        assert_eq!(store.event_count().expect("count"), 4);
        assert_eq!(
            store.prune(None, Some(0), 100).expect("prune"),
            3,
            "the newest stays"
        );
        assert_eq!(store.last_seq().expect("seq"), 10);
    }

    fn at(s: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(s)
    }

    /// Events numbered `seqs`, each logged at second `seq`.
    fn events(seqs: std::ops::RangeInclusive<u64>) -> Vec<Event> {
        seqs.map(|seq| Event {
            seq: EventSeq(seq),
            time: at(seq),
            pane: Arc::from("p"),
            cause: None,
            change: Change::Labels { labels: vec![] },
        })
        .collect()
    }

    #[test]
    fn a_newer_schema_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("l.db");
        drop(Store::open(&path).expect("open"));
        let conn = Connection::open(&path).expect("raw");
        conn.execute("UPDATE schema_version SET version = 99", [])
            .expect("bump");
        drop(conn);
        let err = Store::open(&path).expect_err("newer");
        assert!(
            err.to_string().contains("schema version 99 is newer"),
            "{err}"
        );
        let conn = Connection::open(&path).expect("raw");
        let v: i64 = conn
            .query_row("SELECT version FROM schema_version", [], |r| r.get(0))
            .expect("version");
        assert_eq!(v, 99, "left as it was");
    }
}
