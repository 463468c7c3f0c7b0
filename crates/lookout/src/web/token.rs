//! The web board's tokens: two random secrets in the config directory (`web-token` answers and
//! views, `web-token-view` only views), created 0600 on first use, refused when another user could
//! read them. Touches those two files and `/dev/urandom` only.

use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

/// What a request's token lets it do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// See the panes and answer them.
    Answer,
    /// See the panes only.
    View,
}

/// The two tokens in force.
#[derive(Debug, Clone)]
pub struct Tokens {
    /// Answers and views.
    pub answer: String,
    /// Views only.
    pub view: String,
}

impl Tokens {
    /// Reads both tokens from `dir`, creating any that is missing.
    pub fn load_or_create(dir: &Path) -> io::Result<Tokens> {
        Ok(Tokens {
            answer: read_or_create(&dir.join("web-token"))?,
            view: read_or_create(&dir.join("web-token-view"))?,
        })
    }

    /// The role `given` grants, if any (compared in constant time).
    pub fn role(&self, given: &str) -> Option<Role> {
        if same(given, &self.answer) {
            Some(Role::Answer)
        } else if same(given, &self.view) {
            Some(Role::View)
        } else {
            None
        }
    }
}

/// The directory the tokens live in: beside `config.toml`.
pub fn default_dir() -> Option<PathBuf> {
    crate::private::user_manifest_dir().and_then(|d| Some(d.parent()?.to_owned()))
}

fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

fn read_or_create(path: &Path) -> io::Result<String> {
    match std::fs::metadata(path) {
        Ok(meta) => {
            if meta.mode() & 0o077 != 0 || meta.uid() != nix::unistd::geteuid().as_raw() {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "{}: others may read it (or it is not yours); `chmod 600` it or delete it for a new one",
                        path.display()
                    ),
                ));
            }
            let token = std::fs::read_to_string(path)?.trim().to_owned();
            if token.len() < 32 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: too short to be a token; delete it for a new one",
                        path.display()
                    ),
                ));
            }
            Ok(token)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => create(path),
        Err(e) => Err(e),
    }
}

fn create(path: &Path) -> io::Result<String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut bytes = [0u8; 24];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(format!("{token}\n").as_bytes())?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_created_private_and_read_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let t = Tokens::load_or_create(dir.path()).expect("create");
        assert_eq!(t.answer.len(), 48);
        assert_ne!(t.answer, t.view);
        let mode = std::fs::metadata(dir.path().join("web-token"))
            .expect("meta")
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = Tokens::load_or_create(dir.path()).expect("read");
        assert_eq!(again.answer, t.answer);
        assert_eq!(t.role(&t.answer), Some(Role::Answer));
        assert_eq!(t.role(&t.view), Some(Role::View));
        assert_eq!(t.role("nope"), None);
        std::fs::set_permissions(
            dir.path().join("web-token"),
            std::os::unix::fs::PermissionsExt::from_mode(0o644),
        )
        .expect("chmod");
        assert!(
            Tokens::load_or_create(dir.path()).is_err(),
            "a readable token is refused"
        );
    }
}
