//! A tmux server of our own (`tmux -L <unique>`) for the targets that need a real terminal multiplexer
//! (`tests/tmux.rs`, `tests/watch.rs`): started with one pane, driven with `send-keys`, read back with
//! `capture-pane` and `show-options`, and killed when dropped.

use super::home::Home;
use std::process::Command;

/// A running tmux server; `kill-server` when dropped. Its panes run in a lookout home of its own
/// ([`Home`]): a hook or `lookout run` in them never reaches the person's own server.
pub struct Tmux {
    pub name: String,
    pub home: Home,
}

impl Tmux {
    /// Starts server `name` with one `cols`×`rows` session running `command` (with `env` set in it);
    /// returns the server and the id of its first pane.
    pub fn start(
        name: &str,
        cols: u16,
        rows: u16,
        env: &[(&str, String)],
        command: &str,
    ) -> (Tmux, String) {
        let version = Command::new("tmux").arg("-V").output();
        assert!(
            version.is_ok_and(|o| o.status.success()),
            "these tests need tmux on PATH (apt-get install -y tmux; .ci/run installs it)"
        );
        // Made before the session, so a failed start still kills whatever server came up.
        let server = Tmux {
            name: name.to_owned(),
            home: Home::new(),
        };
        let (cols, rows) = (cols.to_string(), rows.to_string());
        let mut args = vec![
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-x",
            &cols,
            "-y",
            &rows,
        ];
        let env: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for pair in &env {
            args.extend(["-e", pair]);
        }
        args.push(command);
        // The first command starts the server: its environment is every pane's.
        let mut start = Command::new("tmux");
        server
            .home
            .apply(start.args(["-L", &server.name]).args(&args));
        let pane = run(&mut start).trim().to_owned();
        (server, pane)
    }

    /// Runs a tmux command on this server; panics if it fails.
    pub fn run(&self, args: &[&str]) -> String {
        run(Command::new("tmux").args(["-L", &self.name]).args(args))
    }

    /// A user option's value, empty when unset (or when the target is gone).
    pub fn option(&self, scope: &str, target: &str, name: &str) -> String {
        let out = Command::new("tmux")
            .args([
                "-L",
                &self.name,
                "show-options",
                "-q",
                "-v",
                scope,
                "-t",
                target,
                name,
            ])
            .output()
            .expect("run tmux");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Types keys into `pane` (tmux key names, as `send-keys` takes them).
    pub fn keys(&self, pane: &str, keys: &str) {
        self.run(&["send-keys", "-t", pane, keys]);
    }

    /// Types `line` and Enter into `pane`.
    pub fn type_line(&self, pane: &str, line: &str) {
        self.run(&["send-keys", "-t", pane, line, "Enter"]);
    }

    /// What `pane` shows now.
    pub fn screen(&self, pane: &str) -> String {
        self.run(&["capture-pane", "-p", "-t", pane])
    }
}

/// Runs `cmd` (a tmux command); its output, or a panic with what tmux said.
fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run tmux");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.name, "kill-server"])
            .output();
    }
}
