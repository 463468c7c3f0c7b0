//! `lookout service install|uninstall`: for people who want the per-user server supervised (started
//! at login, restarted after a crash) rather than started on demand by the first client. On Linux
//! it writes a systemd user unit, `$XDG_CONFIG_HOME/systemd/user/lookout.service` (or
//! `~/.config/…`), and prints the `systemctl --user` line that enables it — it never runs
//! systemctl itself. On macOS it prints a launchd agent and how to load it. Touches that one file.
//!
//! The unit restarts the server only on failure: `lookout stop` ends it cleanly and it stays
//! stopped; a crash or `kill -9` brings it back.

use anyhow::Context as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `lookout service`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Write the systemd user unit (on macOS: print a launchd agent) and say how to enable it.
    Install,
    /// Remove the unit written by `install`.
    Uninstall,
}

/// The unit's file name.
const UNIT: &str = "lookout.service";

/// Runs `lookout service`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().context("finding the lookout executable")?;
    if cfg!(target_os = "macos") {
        print!("{}", launchd_howto(&exe));
        return Ok(ExitCode::SUCCESS);
    }
    let path = unit_dir()
        .context("no $XDG_CONFIG_HOME or $HOME: nowhere to put the unit")?
        .join(UNIT);
    match args.action {
        Action::Install => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(&path, unit(&exe))
                .with_context(|| format!("writing {}", path.display()))?;
            println!("wrote {}", path.display());
            println!(
                "enable it: systemctl --user daemon-reload && systemctl --user enable --now lookout"
            );
        }
        Action::Uninstall => match std::fs::remove_file(&path) {
            Ok(()) => {
                println!("removed {}", path.display());
                println!(
                    "if it was enabled: systemctl --user disable --now lookout; systemctl --user daemon-reload"
                );
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                println!("no unit at {}: nothing to remove", path.display());
            }
            Err(e) => return Err(e).with_context(|| format!("removing {}", path.display())),
        },
    }
    Ok(ExitCode::SUCCESS)
}

/// `$XDG_CONFIG_HOME/systemd/user` (or `~/.config/systemd/user`).
fn unit_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("systemd").join("user"))
}

/// The unit for `exe`. `lookout serve` finds its socket in `$XDG_RUNTIME_DIR`, which systemd
/// sets for user services, so every client finds this server where it looks.
pub fn unit(exe: &Path) -> String {
    format!(
        "# Written by `lookout service install`; `lookout service uninstall` removes it.\n\
         [Unit]\n\
         Description=lookout: which of your AI coding agents is working, blocked, done or idle\n\
         \n\
         [Service]\n\
         Type=simple\n\
         ExecStart={} serve\n\
         # `lookout stop` exits cleanly and the server stays stopped; a crash brings it back.\n\
         Restart=on-failure\n\
         RestartSec=2\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n",
        systemd_word(&exe.to_string_lossy())
    )
}

/// One word of an `ExecStart=` line: `%` doubled (a specifier otherwise), quoted when it holds
/// whitespace, a quote or a backslash.
fn systemd_word(word: &str) -> String {
    let word = word.replace('%', "%%");
    if word.contains(|c: char| c.is_whitespace() || c == '"' || c == '\\') {
        format!("\"{}\"", word.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        word
    }
}

/// A launchd agent for `exe`, and how to load it.
fn launchd_howto(exe: &Path) -> String {
    let exe = exe
        .to_string_lossy()
        .replace('&', "&amp;")
        .replace('<', "&lt;");
    format!(
        "Save this as ~/Library/LaunchAgents/dev.lookout.serve.plist, then run\n  \
         launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/dev.lookout.serve.plist\n\n\
         <?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <plist version=\"1.0\"><dict>\n  \
         <key>Label</key><string>dev.lookout.serve</string>\n  \
         <key>ProgramArguments</key><array><string>{exe}</string><string>serve</string></array>\n  \
         <key>RunAtLoad</key><true/>\n  \
         <key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>\n\
         </dict></plist>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_start_words_are_escaped() {
        assert_eq!(systemd_word("/usr/bin/lookout"), "/usr/bin/lookout");
        assert_eq!(systemd_word("/a b/lookout"), "\"/a b/lookout\"");
        assert_eq!(systemd_word("/100%/lookout"), "/100%%/lookout");
    }
}
