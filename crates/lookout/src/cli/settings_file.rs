//! Editing a user's own settings file like a careful person would (for `lookout hooks`): a
//! symlinked file is edited at its target (the link stays), a file that is not a regular file, is
//! over [`MAX_SIZE`] or is read-only is refused with a clear error and left untouched, and the new
//! text is written atomically (a temp file in the same directory, then a rename) with the old
//! file's mode and owner; the backup gets the same mode. Touches the settings file, its temp file
//! and its backup.

use anyhow::{Context as _, bail};
use std::fs::{self, Metadata};
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// The largest settings file read: agents' settings are a few KiB.
pub const MAX_SIZE: u64 = 4 << 20;
/// The mode of a settings file lookout creates (it may come to hold credentials).
const NEW_MODE: u32 = 0o600;

/// A settings file, resolved and read.
#[derive(Debug)]
pub struct SettingsFile {
    /// The file edited: the symlink's target when the settings path is a link.
    pub path: PathBuf,
    /// Its text (empty when it does not exist yet).
    pub text: String,
    /// Its mode and owner, kept by the edit (`None`: a new file).
    keep: Option<(u32, u32, u32)>,
}

/// Resolves `path` (following symlinks) and reads it, refusing what must not be edited.
pub fn open(path: &Path) -> anyhow::Result<SettingsFile> {
    let path = match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path)
            .with_context(|| format!("{} is a symlink whose target is missing", path.display()))?,
        _ => path.to_owned(),
    };
    let meta = match fs::metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(SettingsFile {
                path,
                text: String::new(),
                keep: None,
            });
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    refuse_unsafe(&path, &meta)?;
    let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let keep = Some((meta.permissions().mode() & 0o7777, meta.uid(), meta.gid()));
    Ok(SettingsFile { path, text, keep })
}

fn refuse_unsafe(path: &Path, meta: &Metadata) -> anyhow::Result<()> {
    if !meta.is_file() {
        bail!(
            "{} is not a regular file (a FIFO, a device or a directory); nothing was changed",
            path.display()
        );
    }
    if meta.len() > MAX_SIZE {
        bail!(
            "{} is {} bytes, over the {} MiB a settings file may be; nothing was changed",
            path.display(),
            meta.len(),
            MAX_SIZE >> 20
        );
    }
    let mode = meta.permissions().mode();
    if mode & 0o222 == 0 {
        bail!(
            "{} is read-only (mode {:o}); make it writable if lookout may edit it, or add the hook by hand — nothing was changed",
            path.display(),
            mode & 0o7777
        );
    }
    Ok(())
}

impl SettingsFile {
    /// Where the file as it was before lookout first touched it is kept.
    pub fn backup_path(&self) -> PathBuf {
        let mut backup = self.path.as_os_str().to_owned();
        backup.push(".lookout-backup");
        backup.into()
    }

    /// Writes the backup (once: the first edit's original is the one kept), with the file's mode.
    pub fn back_up(&self) -> anyhow::Result<()> {
        let backup = self.backup_path();
        if self.text.is_empty() || backup.exists() {
            return Ok(());
        }
        self.write_as(&backup, &self.text)
            .with_context(|| format!("writing the backup {}", backup.display()))
    }

    /// Replaces the file with `text` atomically, keeping its mode and owner.
    pub fn replace(&self, text: &str) -> anyhow::Result<()> {
        if let Some(dir) = self.path.parent() {
            fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let mut tmp = self.path.as_os_str().to_owned();
        tmp.push(format!(".lookout-{}.tmp", std::process::id()));
        let tmp = PathBuf::from(tmp);
        let _ = fs::remove_file(&tmp);
        if let Err(e) = self.write_as(&tmp, text) {
            let _ = fs::remove_file(&tmp);
            return Err(e).context("writing the new settings");
        }
        fs::rename(&tmp, &self.path).with_context(|| format!("replacing {}", self.path.display()))
    }

    /// Writes `text` to a new file at `path` with this file's mode and owner (or 0600 and the
    /// caller's for a new settings file), synced before it is used.
    fn write_as(&self, path: &Path, text: &str) -> anyhow::Result<()> {
        let (mode, owner) = match self.keep {
            Some((mode, uid, gid)) => (mode, Some((uid, gid))),
            None => (NEW_MODE, None),
        };
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(path)?;
        // The umask may have taken bits the original had: set them exactly.
        file.set_permissions(fs::Permissions::from_mode(mode))?;
        if let Some((uid, gid)) = owner
            && let Err(e) = std::os::unix::fs::fchown(&file, Some(uid), Some(gid))
        {
            eprintln!(
                "lookout: cannot keep {}'s owner (uid {uid}, gid {gid}): {e}",
                self.path.display()
            );
        }
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        Ok(())
    }
}
