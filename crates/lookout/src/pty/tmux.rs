//! The tmux CLI as a pane source: list every pane of a tmux server, capture a pane's visible screen,
//! and write `@lookout_*` user options back (see ARCHITECTURE.md, Pane sources).
//!
//! Also turns one capture into the bytes that repaint a headless terminal with it, so the core sees a
//! tmux pane exactly as it would see a PTY. Touches only the `tmux` binary (one short-lived process
//! per call, as tmux's own tools do); it keeps no state.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The `list-panes` format: one tab-separated line per pane, the title last because it may hold tabs
/// (no single quote: the control client sends it quoted).
pub const FORMAT: &str = "#{pid}\t#{pane_id}\t#{window_id}\t#{pane_pid}\t#{pane_tty}\t#{pane_current_command}\t\
                      #{alternate_on}\t#{cursor_x}\t#{cursor_y}\t#{pane_width}\t#{pane_height}\t#{pane_title}";

/// What `list-panes` says about one pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneInfo {
    /// The tmux server's pid (with its start time, the server instance: a new server reuses `%3`).
    pub server_pid: u32,
    /// tmux's pane id, `%3`.
    pub id: String,
    /// The window it is in, `@1`.
    pub window: String,
    /// The pid of the pane's root process (usually its shell).
    pub pid: u32,
    /// The pane's terminal device, `/dev/pts/4`.
    pub tty: String,
    /// tmux's idea of the foreground command (a fallback name; the probe reads `/proc`).
    pub current_command: String,
    /// The pane shows its alternate screen.
    pub alternate: bool,
    /// Cursor column, from 0.
    pub cursor_x: u16,
    /// Cursor row, from 0.
    pub cursor_y: u16,
    /// Width in columns.
    pub width: u16,
    /// Height in rows.
    pub height: u16,
    /// The pane title (OSC 0/2).
    pub title: String,
}

/// A `list-panes` line that is not in [`FORMAT`]'s shape (a tmux too old for a format, say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine(pub String);

impl PaneInfo {
    /// Parses one line of `list-panes -F FORMAT`.
    pub fn parse(line: &str) -> Result<PaneInfo, BadLine> {
        let bad = || BadLine(line.to_owned());
        let f: Vec<&str> = line.splitn(12, '\t').collect();
        let [
            server_pid,
            id,
            window,
            pid,
            tty,
            command,
            alternate,
            x,
            y,
            w,
            h,
            title,
        ] = f[..]
        else {
            return Err(bad());
        };
        let number = |s: &str| s.parse::<u16>().map_err(|_| bad());
        Ok(PaneInfo {
            server_pid: server_pid.parse().map_err(|_| bad())?,
            id: id.to_owned(),
            window: window.to_owned(),
            pid: pid.parse().map_err(|_| bad())?,
            tty: tty.to_owned(),
            current_command: command.to_owned(),
            alternate: alternate == "1",
            cursor_x: number(x)?,
            cursor_y: number(y)?,
            width: number(w)?,
            height: number(h)?,
            title: title.to_owned(),
        })
    }
}

/// Why a tmux call failed.
#[derive(Debug)]
pub enum TmuxError {
    /// `tmux` could not be started at all (not installed?).
    Spawn(io::Error),
    /// tmux ran and said no (no server running, no such pane, …).
    Failed {
        /// The subcommand, for the message.
        command: String,
        /// What tmux wrote to stderr.
        stderr: String,
    },
}

impl fmt::Display for TmuxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TmuxError::Spawn(err) => write!(f, "cannot run tmux: {err}"),
            TmuxError::Failed { command, stderr } => {
                write!(f, "tmux {command} failed: {}", stderr.trim())
            }
        }
    }
}

impl std::error::Error for TmuxError {}

/// How a tmux server is addressed: the user's default server, `tmux -L NAME`, or `tmux -S PATH`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum Socket {
    /// The default server of this user (`default` in tmux's socket directory).
    #[default]
    Default,
    /// `tmux -L NAME`.
    Name(String),
    /// `tmux -S PATH`.
    Path(PathBuf),
}

impl Socket {
    /// The socket of the tmux server a pane runs under, from its `$TMUX` (`PATH,SERVER_PID,SESSION`).
    pub fn from_env(tmux: &str) -> Option<Socket> {
        let path = tmux.rsplitn(3, ',').nth(2)?;
        (!path.is_empty()).then(|| Socket::Path(PathBuf::from(path)))
    }

    /// The name lookout pane ids carry for this server: none for the default server, else the
    /// socket's file name (so `-L work` and `-S /tmp/tmux-1000/work` name the same server alike);
    /// a socket outside tmux's own directory (`/tmp/tmux-UID`: another `TMUX_TMPDIR`, `-S`
    /// elsewhere) adds `@` and a short hash of its directory, so two servers of the same name in
    /// different directories never share pane ids. Computed from the path alone: the hook in a
    /// pane (from `$TMUX`) and the source name a pane alike.
    pub fn label(&self) -> Option<String> {
        let (name, dir) = match self {
            Socket::Default => return None,
            Socket::Name(name) => (name.clone(), None),
            Socket::Path(path) => (
                path.file_name()?.to_string_lossy().into_owned(),
                path.parent(),
            ),
        };
        match dir.filter(|d| *d != default_dir()) {
            Some(dir) => Some(format!("{name}@{}", dir_hash(dir))),
            None => (name != "default").then_some(name),
        }
    }

    /// The reverse of [`Socket::pane_id`]: the tmux server and the tmux pane of a lookout pane id.
    /// A label with a directory hash is looked for in the directories tmux uses
    /// (`$TMUX_TMPDIR`, `$XDG_RUNTIME_DIR`, `/tmp`); one without is in `/tmp/tmux-UID`.
    pub fn of_pane_id(pane: &str) -> Option<(Socket, &str)> {
        let rest = pane.strip_prefix("tmux:")?;
        let (label, id) = match rest.rsplit_once(':') {
            Some((label, id)) => (label, id),
            None => ("default", rest),
        };
        if !id.starts_with('%') {
            return None;
        }
        let Some((name, hash)) = label.split_once('@') else {
            return Some((Socket::Path(default_dir().join(label)), id));
        };
        let uid = nix::unistd::getuid();
        let dir = ["TMUX_TMPDIR", "XDG_RUNTIME_DIR"]
            .iter()
            .filter_map(|v| std::env::var_os(v).filter(|d| !d.is_empty()))
            .map(|d| PathBuf::from(d).join(format!("tmux-{uid}")))
            .find(|d| dir_hash(d) == hash)?;
        Some((Socket::Path(dir.join(name)), id))
    }

    /// A `tmux` command for this server. Always `-u`: without a UTF-8 locale (a server started by
    /// systemd, cron or `env -i`) tmux prints every tab and non-ASCII character of a format as
    /// `_`, which garbles each `list-panes` line and every agent's title.
    pub fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command.arg("-u");
        match self {
            Socket::Default => {}
            Socket::Name(name) => {
                command.arg("-L").arg(name);
            }
            Socket::Path(path) => {
                command.arg("-S").arg(path);
            }
        }
        command.stdin(Stdio::null());
        command
    }

    /// The lookout pane id of tmux pane `id` (`%3`) on this server: `tmux:%3`, or `tmux:NAME:%3`.
    /// The tmux source opens panes under this id and `lookout report` finds its pane by it.
    pub fn pane_id(&self, id: &str) -> String {
        match self.label() {
            Some(name) => format!("tmux:{name}:{id}"),
            None => format!("tmux:{id}"),
        }
    }
}

/// The directory tmux puts its sockets in when `TMUX_TMPDIR` is not set: `/tmp/tmux-UID`.
fn default_dir() -> PathBuf {
    PathBuf::from(format!("/tmp/tmux-{}", nix::unistd::getuid()))
}

/// Six hex digits naming a socket directory (FNV-1a of its path): short, and the same wherever
/// it is computed.
fn dir_hash(dir: &std::path::Path) -> String {
    use std::os::unix::ffi::OsStrExt as _;
    let hash = dir
        .as_os_str()
        .as_bytes()
        .iter()
        .fold(0x811c_9dc5_u32, |h, b| {
            (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
        });
    format!("{:06x}", hash & 0xff_ffff)
}

/// One tmux server.
#[derive(Debug, Clone, Default)]
pub struct Tmux {
    socket: Socket,
}

impl Tmux {
    /// The tmux server at `socket`.
    pub fn new(socket: Socket) -> Self {
        Tmux { socket }
    }

    /// How this server is addressed.
    pub fn socket(&self) -> &Socket {
        &self.socket
    }

    /// Runs one tmux command in a process of its own.
    pub fn run(&self, args: &[&str]) -> Result<Output, TmuxError> {
        let output = self
            .socket
            .command()
            .args(args)
            .output()
            .map_err(TmuxError::Spawn)?;
        if output.status.success() {
            Ok(output)
        } else {
            Err(TmuxError::Failed {
                command: args.first().copied().unwrap_or_default().to_owned(),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            })
        }
    }

    /// Whether a server answers at all.
    pub fn is_running(&self) -> bool {
        self.run(&["list-sessions"]).is_ok()
    }

    /// The server's socket path and pid, as tmux itself reports them.
    pub fn server(&self) -> Result<(PathBuf, u32), TmuxError> {
        let output = self.run(&["display-message", "-p", "#{socket_path}\t#{pid}"])?;
        let text = String::from_utf8_lossy(&output.stdout);
        let bad = || TmuxError::Failed {
            command: "display-message".into(),
            stderr: format!("unexpected answer {text:?}"),
        };
        let (path, pid) = text.trim_end().rsplit_once('\t').ok_or_else(bad)?;
        Ok((PathBuf::from(path), pid.parse().map_err(|_| bad())?))
    }

    /// Every pane of every session; lines tmux writes in another shape are skipped.
    pub fn list_panes(&self) -> Result<Vec<PaneInfo>, TmuxError> {
        let output = self.run(&["list-panes", "-a", "-F", FORMAT])?;
        let text = String::from_utf8_lossy(&output.stdout);
        let mut panes = Vec::new();
        let mut bad = None;
        for line in text.lines() {
            match PaneInfo::parse(line) {
                Ok(info) => panes.push(info),
                Err(BadLine(line)) => {
                    bad.get_or_insert(line);
                }
            }
        }
        match bad {
            // Nothing usable: say what tmux printed rather than report no panes.
            Some(line) if panes.is_empty() => Err(TmuxError::Failed {
                command: "list-panes".into(),
                stderr: format!("unexpected answer {line:?}"),
            }),
            _ => Ok(panes),
        }
    }

    /// Where each pane is, as a person names it: `%3` → (`work:1.0`, the window's name).
    pub fn places(&self) -> HashMap<String, (String, String)> {
        let format = "#{pane_id}\t#{session_name}:#{window_index}.#{pane_index}\t#{window_name}";
        let Ok(out) = self.run(&["list-panes", "-a", "-F", format]) else {
            return HashMap::new();
        };
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let mut f = l.splitn(3, '\t');
                Some((
                    f.next()?.to_owned(),
                    (f.next()?.to_owned(), f.next()?.to_owned()),
                ))
            })
            .collect()
    }

    /// Brings pane `id` in front of the client this process runs in (`$TMUX`): its session, its
    /// window, the pane itself.
    pub fn jump(&self, id: &str) -> Result<(), TmuxError> {
        self.run(&["switch-client", "-t", id])?;
        self.run(&["select-window", "-t", id])?;
        self.run(&["select-pane", "-t", id])?;
        Ok(())
    }

    /// Types `text` into pane `id`: as literal keys (`send-keys -l`), or — when it holds a line
    /// break, which as a key would submit — as a paste (`paste-buffer -p`: bracketed when the
    /// program in the pane asked for bracketed paste).
    pub fn type_text(&self, id: &str, text: &str) -> Result<(), TmuxError> {
        if !text.contains(['\n', '\r']) {
            self.run(&["send-keys", "-l", "-t", id, "--", text])?;
            return Ok(());
        }
        let buffer = format!("lookout-send-{id}");
        self.run(&["set-buffer", "-b", &buffer, "--", text])?;
        self.run(&["paste-buffer", "-p", "-d", "-b", &buffer, "-t", id])?;
        Ok(())
    }

    /// Presses Enter in pane `id`.
    pub fn press_enter(&self, id: &str) -> Result<(), TmuxError> {
        self.run(&["send-keys", "-t", id, "Enter"])?;
        Ok(())
    }

    /// The visible screen of pane `id`, with colours (`capture-pane -p -e`), one line per row, and
    /// the pane's state at that moment.
    pub fn capture(&self, id: &str) -> Result<Capture, TmuxError> {
        self.capture_many(&[id])
            .pop()
            .flatten()
            .ok_or_else(|| TmuxError::Failed {
                command: "capture-pane".into(),
                stderr: format!("pane {id} was not captured"),
            })
    }

    /// Captures several panes with one tmux command (one process, not one per pane), in order;
    /// `None` for a pane tmux did not capture (gone since it was listed: tmux stops there). Each
    /// comes with the pane's cursor, mode and title as tmux reports them right after the capture:
    /// a title set since the last listing (a dialog answered: "Action Required" gone) is not
    /// read stale with the new screen.
    pub fn capture_many(&self, ids: &[&str]) -> Vec<Option<Capture>> {
        // Each capture is followed by a line no screen holds: a marker made for this call, then
        // the pane's state in `list-panes`' shape.
        let marker = format!(
            "\u{1e}lookout-capture-{}-{}\u{1e}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        );
        let state = format!("{marker}{FORMAT}");
        let mut args: Vec<&str> = Vec::new();
        for id in ids {
            if !args.is_empty() {
                args.push(";");
            }
            args.extend(["capture-pane", "-p", "-e", "-t", id]);
            args.extend([";", "display-message", "-p", "-t", id, &state]);
        }
        let stdout = match self.socket.command().args(&args).output() {
            Ok(out) => out.stdout,
            Err(_) => Vec::new(),
        };
        let mut rest = stdout.as_slice();
        let mut gone = false;
        ids.iter()
            .map(|_| {
                if gone {
                    return None;
                }
                let capture = take_capture(&mut rest, marker.as_bytes());
                gone = capture.is_none();
                capture.flatten()
            })
            .collect()
    }

    /// Sets (or, for an empty `value`, unsets) a user option of a pane (`-p`), window (`-w`) or the
    /// server's global options (`-g`, `target` ignored).
    pub fn set_option(
        &self,
        scope: Scope,
        target: &str,
        name: &str,
        value: &str,
    ) -> Result<(), TmuxError> {
        let flag = scope.flag();
        let mut args = vec!["set-option", flag];
        if value.is_empty() {
            args.push("-u");
        }
        if scope != Scope::Global {
            args.extend(["-t", target]);
        }
        args.push(name);
        if !value.is_empty() {
            args.push(value);
        }
        self.run(&args)?;
        Ok(())
    }

    /// Every `@lookout_*` user option set on any pane or window, as (scope, target, name): what a
    /// source that died without cleaning up left behind.
    pub fn lookout_options(&self) -> Vec<(Scope, String, String)> {
        let mut found = Vec::new();
        for (scope, list, target) in [
            (Scope::Pane, "list-panes", "#{pane_id}"),
            (Scope::Window, "list-windows", "#{window_id}"),
        ] {
            let Ok(targets) = self.run(&[list, "-a", "-F", target]) else {
                continue;
            };
            for target in String::from_utf8_lossy(&targets.stdout).lines() {
                let Ok(shown) = self.run(&["show-options", scope.flag(), "-t", target]) else {
                    continue;
                };
                for line in String::from_utf8_lossy(&shown.stdout).lines() {
                    if let Some(name) = line
                        .split_whitespace()
                        .next()
                        .filter(|n| n.starts_with("@lookout_"))
                    {
                        found.push((scope, target.to_owned(), name.to_owned()));
                    }
                }
            }
        }
        found
    }
}

/// Where a tmux option lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// A pane option (`set-option -p`).
    Pane,
    /// A window option (`set-option -w`).
    Window,
    /// A global server option (`set-option -g`).
    Global,
}

impl Scope {
    fn flag(self) -> &'static str {
        match self {
            Scope::Pane => "-p",
            Scope::Window => "-w",
            Scope::Global => "-g",
        }
    }
}

/// The bytes that repaint a blank headless terminal with `capture` as `info` describes it: the screen
/// mode, a clear, the rows joined by CR LF (no newline after the last, which would scroll), the cursor
/// position, and the title.
pub fn repaint(info: &PaneInfo, capture: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(capture.len() + 64);
    out.extend_from_slice(if info.alternate {
        b"\x1b[?1049h"
    } else {
        b"\x1b[?1049l"
    });
    out.extend_from_slice(b"\x1b[0m\x1b[H\x1b[2J");
    let body = capture.strip_suffix(b"\n").unwrap_or(capture);
    let rows = body
        .split(|&b| b == b'\n')
        .take(usize::from(info.height.max(1)));
    for (i, row) in rows.enumerate() {
        if i > 0 {
            // A row's colours must not bleed into the next one's blank cells.
            out.extend_from_slice(b"\x1b[0m\r\n");
        }
        out.extend_from_slice(row);
    }
    out.extend_from_slice(b"\x1b[0m");
    out.extend_from_slice(format!("\x1b[{};{}H", info.cursor_y + 1, info.cursor_x + 1).as_bytes());
    // BEL and ESC would end the OSC early; a title cannot hold them anyway.
    let title: String = info
        .title
        .chars()
        .filter(|c| *c != '\x07' && *c != '\x1b')
        .collect();
    out.extend_from_slice(format!("\x1b]2;{title}\x07").as_bytes());
    out
}

/// One pane's screen (`capture-pane -p -e`) and its state when it was captured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The rows, one line each, with their colours.
    pub screen: Vec<u8>,
    /// Its cursor, mode, size and title at that moment.
    pub info: PaneInfo,
}

/// The next capture of a `capture_many` answer: the screen up to `marker`, then the state line
/// after it; `None` when the answer ends first, `Some(None)` when the state line is not in shape.
fn take_capture(rest: &mut &[u8], marker: &[u8]) -> Option<Option<Capture>> {
    let at = find(rest, marker)?;
    let screen = rest[..at].to_vec();
    let line = &rest[at + marker.len()..];
    let end = line.iter().position(|&b| b == b'\n').unwrap_or(line.len());
    let info = PaneInfo::parse(&String::from_utf8_lossy(&line[..end])).ok();
    *rest = line.get(end + 1..).unwrap_or_default();
    Some(info.map(|info| Capture { screen, info }))
}

/// Where `needle` first occurs in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Whether the person is looking at `pane` (a lookout pane id, `tmux:…%N`) now: it is the active
/// pane of the window an attached client shows. False for any other pane.
pub fn in_view(pane: &str) -> bool {
    let Some((socket, id)) = Socket::of_pane_id(pane) else {
        return false;
    };
    socket
        .command()
        .args(["list-clients", "-F", "#{pane_id}"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .is_some_and(|out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .any(|l| l.trim() == id)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> PaneInfo {
        PaneInfo::parse("77\t%3\t@1\t4242\t/dev/pts/4\tbash\t0\t2\t1\t20\t3\tmy\ttitle")
            .expect("parses")
    }

    fn parser(rows: u16, cols: u16) -> vt100::Parser {
        let nz = |n: u16| std::num::NonZeroU16::new(n).expect("non-zero");
        vt100::Parser::new(nz(rows), nz(cols), 0)
    }

    #[test]
    fn a_list_panes_line_parses_with_tabs_in_the_title() {
        let info = info();
        assert_eq!(info.id, "%3");
        assert_eq!(info.window, "@1");
        assert_eq!(info.pid, 4242);
        assert_eq!(
            (info.cursor_x, info.cursor_y, info.width, info.height),
            (2, 1, 20, 3)
        );
        assert!(!info.alternate);
        assert_eq!(info.title, "my\ttitle");
        assert_eq!(info.server_pid, 77);
        assert!(PaneInfo::parse("77\t%3\t@1\tnot-a-pid").is_err());
        assert!(PaneInfo::parse("").is_err());
    }

    #[test]
    fn a_repaint_reproduces_the_capture_on_a_headless_terminal() {
        let mut info = info();
        info.title = "agent".into();
        let bytes = repaint(&info, b"\x1b[31mred\x1b[39m row\nsecond\nthird\n");
        let mut parser = parser(3, 20);
        parser.process(b"old junk everywhere\r\nmore junk");
        parser.process(&bytes);
        let screen = parser.screen();
        assert_eq!(screen.contents(), "red row\nsecond\nthird");
        assert_eq!(screen.cursor_position(), (1, 2));
        assert!(!screen.alternate_screen());
        assert!(
            screen
                .cell(0, 0)
                .is_some_and(|c| c.fgcolor() == vt100::Color::Idx(1))
        );

        info.alternate = true;
        parser.process(&repaint(&info, b"full\nscreen\napp\n"));
        assert!(parser.screen().alternate_screen());
        assert_eq!(parser.screen().contents(), "full\nscreen\napp");
    }

    #[test]
    fn pane_ids_name_the_server_unless_it_is_the_default_one() {
        assert_eq!(Socket::Default.pane_id("%3"), "tmux:%3");
        assert_eq!(Socket::Name("t1".into()).pane_id("%3"), "tmux:t1:%3");
        let uid = nix::unistd::getuid();
        let from_env =
            Socket::from_env(&format!("/tmp/tmux-{uid}/default,4242,0")).expect("parses");
        assert_eq!(
            from_env,
            Socket::Path(format!("/tmp/tmux-{uid}/default").into())
        );
        assert_eq!(from_env.pane_id("%3"), "tmux:%3");
        let uid = nix::unistd::getuid();
        let named = Socket::from_env(&format!("/tmp/tmux-{uid}/work,1,2")).expect("parses");
        assert_eq!(named.pane_id("%0"), "tmux:work:%0");
        // The same name in another directory is another server.
        let elsewhere = Socket::Path(format!("/run/user/{uid}/tmux-{uid}/default").into());
        let id = elsewhere.pane_id("%0");
        assert!(
            id.starts_with("tmux:default@") && id.ends_with(":%0"),
            "{id}"
        );
        assert_ne!(
            id,
            Socket::Path(default_dir().join("default")).pane_id("%0")
        );
        assert_eq!(Socket::from_env("garbage"), None);
    }

    #[test]
    fn extra_capture_lines_never_scroll_the_screen() {
        let bytes = repaint(&info(), b"a\nb\nc\nd\n");
        let mut parser = parser(3, 20);
        parser.process(&bytes);
        assert_eq!(parser.screen().contents(), "a\nb\nc");
    }
}
