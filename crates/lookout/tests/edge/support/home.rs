//! A lookout home of one harness's own: the XDG directories lookout reads and writes (runtime dir
//! for the socket, state, config) under a temp dir, and the variables that would lead it to
//! the person's own server or tmux removed. Every harness that starts lookout, or starts something
//! that starts it (a `lookout run` in a PTY, a tmux server whose panes run hooks), runs it here, so
//! `cargo test` on a developer's machine never reaches their real lookout: no server started in
//! their socket directory, no log or report left in their state directory. Dropping the home stops
//! any server a client auto-started in it.

use super::LOOKOUT;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Variables a developer's shell may have that point lookout at their own server or pane.
const INHERITED: [&str; 4] = ["LOOKOUT_SOCKET", "LOOKOUT_PANE_ID", "TMUX", "TMUX_PANE"];

/// A temp dir standing in for the user's XDG directories; removed when dropped.
pub struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Home {
        // Short: the socket under it must fit a Unix socket path (108 bytes).
        let dir = tempfile::Builder::new()
            .prefix("lookout-home-")
            .tempdir()
            .expect("a temp dir for the test's lookout home");
        let home = Home { dir };
        // The runtime dir exists and is private, as a login session's is.
        std::fs::create_dir(home.runtime_dir()).expect("runtime dir");
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(home.runtime_dir(), std::fs::Permissions::from_mode(0o700))
            .expect("chmod runtime dir");
        home
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `$XDG_RUNTIME_DIR` here: the default socket is `<it>/lookout/lookout.sock`.
    pub fn runtime_dir(&self) -> PathBuf {
        self.path().join("run")
    }

    /// The variables to set, in the order a child should get them.
    pub fn vars(&self) -> [(&'static str, PathBuf); 3] {
        [
            ("XDG_RUNTIME_DIR", self.runtime_dir()),
            ("XDG_STATE_HOME", self.path().join("state")),
            ("XDG_CONFIG_HOME", self.path().join("config")),
        ]
    }

    /// The variables to remove (see [`INHERITED`]).
    pub fn removed() -> &'static [&'static str] {
        &INHERITED
    }

    /// `cmd` pointed at this home; variables set on it afterwards still win.
    pub fn apply<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        for key in INHERITED {
            cmd.env_remove(key);
        }
        cmd.envs(self.vars())
    }

    /// The binary under test, run in this home.
    pub fn lookout(&self) -> Command {
        let mut cmd = Command::new(LOOKOUT);
        self.apply(&mut cmd);
        cmd
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        // A client in this home may have started the per-user server, detached: stop it, or it
        // outlives the test (and the temp dir under its socket).
        let _ = self
            .lookout()
            .arg("stop")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}
