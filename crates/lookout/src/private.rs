//! Files and directories lookout writes outside its database: the home directory
//! (from the password database when `HOME` is unset, never a shared fallback), directories that
//! must be lookout's own (created with `mkdir` 0700, else verified with `lstat`: a directory, not
//! a symlink, owned by this user, 0700), and files opened without following symlinks — temp files
//! with fresh `O_EXCL` names — so a planted link can never redirect a write. Edge only.

use nix::fcntl::OFlag;
use nix::unistd::{Uid, User};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The variable a server spawned by a client finds its spawn time in (and that the commands it
/// runs for notifications must not inherit).
pub const SPAWNED_AT: &str = "LOOKOUT_SPAWNED_AT";

/// `$XDG_CONFIG_HOME/lookout/manifests` (or `~/.config/lookout/manifests`): the user's own manifests.
pub fn user_manifest_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| home_dir().map(|h| h.join(".config")))?;
    Some(base.join("lookout").join("manifests"))
}

/// The bundled manifests, then the user's directory (when it exists), then each of `extra`.
pub fn catalog(
    extra: &[PathBuf],
) -> (
    crate::manifest::Catalog,
    Vec<crate::manifest::ManifestError>,
) {
    let mut paths: Vec<PathBuf> = user_manifest_dir()
        .into_iter()
        .filter(|d| d.is_dir())
        .collect();
    paths.extend(extra.iter().cloned());
    crate::manifest::Catalog::standard(&paths)
}

/// The user's home: `$HOME`, else the password database's entry for this uid. `None` only when
/// both are missing — callers then use a private directory, never a shared one.
pub fn home_dir() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(home));
    }
    User::from_uid(Uid::current())
        .ok()
        .flatten()
        .map(|u| u.dir)
        .filter(|d| !d.as_os_str().is_empty())
}

fn refuse(dir: &Path, why: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("refusing to use {}: {why}", dir.display()),
    )
}

/// Makes `dir` lookout's own: created (with missing parents) 0700 when absent; otherwise it
/// must be a real directory (not a symlink) owned by this user, and is tightened to 0700.
pub fn own_dir(dir: &Path) -> io::Result<()> {
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
        Err(e) => return Err(e),
        Ok(_) => {}
    }
    let meta = fs::symlink_metadata(dir)?;
    if meta.file_type().is_symlink() {
        return Err(refuse(dir, "it is a symlink".into()));
    }
    if !meta.is_dir() {
        return Err(refuse(dir, "it is not a directory".into()));
    }
    let me = Uid::effective().as_raw();
    if meta.uid() != me {
        return Err(refuse(
            dir,
            format!(
                "it is owned by uid {}, not you (uid {me}); remove it",
                meta.uid()
            ),
        ));
    }
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Opens `path` for reading and writing, created 0600 if absent, never through a symlink.
pub fn open_rw(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(OFlag::O_NOFOLLOW.bits())
        .open(path)
}

/// Creates a fresh temp file `<dir>/.<stem>.<unique>.tmp` (0600, `O_EXCL`, no symlink followed):
/// a name planted in advance is skipped, never written through.
pub fn create_temp(dir: &Path, stem: &str) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut last = None;
    for _ in 0..16 {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".{stem}.{}.{nanos}.{n}.tmp", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(OFlag::O_NOFOLLOW.bits())
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temp name")))
}

/// Reads at most `max` bytes of a regular file this user owns, never through a symlink.
pub fn read_own(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(OFlag::O_NOFOLLOW.bits() | OFlag::O_NONBLOCK.bits())
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refuse(path, "it is not a regular file".into()));
    }
    let me = Uid::effective().as_raw();
    if meta.uid() != me {
        return Err(refuse(
            path,
            format!("it is owned by uid {}, not you (uid {me})", meta.uid()),
        ));
    }
    if meta.len() > max {
        return Err(refuse(path, format!("it is larger than {max} bytes")));
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_dirs_are_created_private_and_links_are_refused() {
        let base = tempfile::tempdir().expect("tempdir");
        let dir = base.path().join("a/b");
        own_dir(&dir).expect("create");
        assert_eq!(
            fs::metadata(&dir).expect("meta").permissions().mode() & 0o777,
            0o700
        );
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("chmod");
        own_dir(&dir).expect("tighten");
        assert_eq!(
            fs::metadata(&dir).expect("meta").permissions().mode() & 0o777,
            0o700
        );
        let link = base.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).expect("symlink");
        assert!(own_dir(&link).is_err());
        let victim = base.path().join("victim");
        fs::write(&victim, "keep").expect("victim");
        let planted = dir.join("counter");
        std::os::unix::fs::symlink(&victim, &planted).expect("plant");
        assert!(open_rw(&planted).is_err());
        assert!(read_own(&planted, 10).is_err());
        let (tmp, _) = create_temp(&dir, "x").expect("temp");
        assert!(
            tmp.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(".x."))
        );
        assert_eq!(fs::read_to_string(&victim).expect("victim"), "keep");
    }
}
