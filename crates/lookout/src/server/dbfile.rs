//! The database file under a running server. A server keeps writing to the file it opened; if
//! that file is deleted from its path meanwhile, every report is still answered `applied` — into a
//! file that vanishes when the server stops. So before each tick's write the path is checked
//! against the open file (device and inode): a deleted database is written back at its path
//! from the open copy (`VACUUM INTO`: everything acknowledged so far) and the server goes on there;
//! a path now holding another file is never overwritten — the store reports it as its error
//! (reports answered `storage`, `status` and the log say why) until it is moved away.
//! Touches the database path and its directory.

use rusqlite::Connection;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

/// The path and the identity of the file opened there.
#[derive(Debug)]
pub struct Watched {
    path: PathBuf,
    id: (u64, u64),
    /// The owner lock on a file written back (the first one is held by `dblock`).
    relocked: Option<File>,
}

/// What the path holds now.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// The file the server has open.
    Ours,
    /// Nothing: the file was deleted.
    Deleted,
    /// Another file.
    Replaced,
}

impl Watched {
    /// The file now at `path` (just opened by the store).
    pub fn new(path: &Path) -> std::io::Result<Watched> {
        let meta = std::fs::metadata(path)?;
        Ok(Watched {
            path: path.to_owned(),
            id: (meta.dev(), meta.ino()),
            relocked: None,
        })
    }

    /// The database's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the path holds now.
    pub fn check(&self) -> Found {
        match std::fs::symlink_metadata(&self.path) {
            Ok(meta) if (meta.dev(), meta.ino()) == self.id => Found::Ours,
            Ok(_) => Found::Replaced,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Found::Deleted,
            // Unreadable for now (a directory made unreachable): nothing to act on.
            Err(_) => Found::Ours,
        }
    }

    /// Writes the database `conn` has open back at the path (0600, locked like the first),
    /// complete. The caller opens it there next.
    pub fn write_back(&mut self, conn: &Connection) -> Result<(), String> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
            .open(&self.path)
            .map_err(|e| format!("cannot create {}: {e}", self.path.display()))?;
        file.try_lock()
            .map_err(|e| format!("cannot lock {}: {e}", self.path.display()))?;
        let target = self.path.to_string_lossy().into_owned();
        if let Err(e) = conn.execute("VACUUM INTO ?1", [&target]) {
            let _ = std::fs::remove_file(&self.path);
            return Err(format!("cannot write {}: {e}", self.path.display()));
        }
        let meta = file
            .metadata()
            .map_err(|e| format!("{}: {e}", self.path.display()))?;
        self.id = (meta.dev(), meta.ino());
        self.relocked = Some(file);
        Ok(())
    }
}
