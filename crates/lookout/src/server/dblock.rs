//! The owner lock of a file lookout serves from: one server per database — and, through
//! `conn::ServerLock`, one per socket — for the server's whole life.
//! Two servers on one file overwrote each other's event log silently; now the second is refused
//! with the holder's pid. The lock is an exclusive `flock` on `<db>.lock` (which holds the
//! holder's pid); the kernel drops it when the process dies, so `kill -9` leaves no stale lock.
//! Touches only that one file.

use nix::fcntl::OFlag;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The held lock; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct DbLock {
    _file: File,
    /// The database file itself, locked too (see [`lock_db`]).
    _inode: Option<File>,
}

/// Why the database could not be locked.
#[derive(Debug)]
pub enum LockError {
    /// Another process holds it (its pid, when it wrote one).
    Held {
        /// The database.
        db: PathBuf,
        /// The holder's pid.
        pid: Option<u32>,
    },
    /// The lock file could not be opened or locked.
    Io(PathBuf, io::Error),
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::Held { db, pid: Some(pid) } => write!(
                f,
                "the database {} is in use by another lookout server (pid {pid}); stop it, or pass another --db",
                db.display()
            ),
            LockError::Held { db, pid: None } => write!(
                f,
                "the database {} is in use by another lookout server; stop it, or pass another --db",
                db.display()
            ),
            LockError::Io(path, e) => write!(f, "cannot lock {}: {e}", path.display()),
        }
    }
}

impl std::error::Error for LockError {}

/// The lock file of `db`: `<db>.lock`.
pub fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Takes the exclusive lock on `db` for this process and writes its pid into the lock file.
pub fn lock(db: &Path) -> Result<DbLock, LockError> {
    let path = lock_path(db);
    let io = |e| LockError::Io(path.clone(), e);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        // Never follow a planted symlink out of lookout's directory.
        .custom_flags(OFlag::O_NOFOLLOW.bits())
        .open(&path)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            return Err(LockError::Held {
                db: db.to_owned(),
                pid: text.trim().parse().ok(),
            });
        }
        Err(TryLockError::Error(e)) => return Err(io(e)),
    }
    file.set_len(0).map_err(io)?;
    file.rewind().map_err(io)?;
    writeln!(file, "{}", std::process::id()).map_err(io)?;
    Ok(DbLock {
        _file: file,
        _inode: None,
    })
}

/// The owner lock of a database: [`lock`] on `<db>.lock` (which names the holder), and an
/// exclusive `flock` on the database file itself. A lock file is found by name, and a hard link
/// is another name for the same file: the lock on the file's inode, which every name shares,
/// refuses a second server that opens the database through a link. (SQLite's own locks are
/// `fcntl` locks, which `flock` on Linux neither sees nor disturbs; the file is created 0600 if
/// missing, as the store would.)
pub fn lock_db(db: &Path) -> Result<DbLock, LockError> {
    let io = |e| LockError::Io(db.to_owned(), e);
    let inode = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(OFlag::O_NOFOLLOW.bits())
        .open(db)
        .map_err(io)?;
    match inode.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            // The holder's pid, when it holds the database under this name.
            let pid = std::fs::read_to_string(lock_path(db))
                .ok()
                .and_then(|text| text.trim().parse().ok());
            return Err(LockError::Held {
                db: db.to_owned(),
                pid,
            });
        }
        Err(TryLockError::Error(e)) => return Err(io(e)),
    }
    let mut held = lock(db)?;
    held._inode = Some(inode);
    Ok(held)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_and_freed_on_drop() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("l.db");
        let held = lock(&db).expect("first");
        let again = lock(&db).expect_err("second");
        assert!(
            again
                .to_string()
                .contains(&format!("pid {}", std::process::id())),
            "{again}"
        );
        drop(held);
        lock(&db).expect("free again");
    }

    #[test]
    fn a_hard_link_to_a_locked_database_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("l.db");
        let held = lock_db(&db).expect("first");
        let link = dir.path().join("link.db");
        std::fs::hard_link(&db, &link).expect("link");
        let again = lock_db(&link).expect_err("through the link");
        assert!(matches!(again, LockError::Held { .. }), "{again}");
        drop(held);
        lock_db(&link).expect("free again");
    }
}
