//! A tmux of the tests' own to read screens with (`tmux_reference.rs`): one private server
//! (`-L`, no config), a control-mode client per thread (`-C`: commands and their replies over a
//! pipe, no process started per command), a session per screen being played. The session's
//! pane runs `cat` of a FIFO with the TTY's output processing off (`stty raw`), so bytes written
//! to the FIFO reach tmux as a program's terminal gets them. To read the screen, a title (OSC 2)
//! naming the read is written after the bytes; once tmux shows that title it has parsed
//! everything before it.

use lookout_core::rules::Grid;
use lookout_core::terminal::Terminal;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A tmux server of the test's own, killed when dropped.
pub struct Server {
    name: String,
    dir: PathBuf,
    /// The server's socket (tmux leaves it behind when killed).
    socket: Option<PathBuf>,
}

impl Server {
    /// Starts it, with one small session for the control clients to attach to.
    pub fn start(tag: &str) -> Server {
        let version = Command::new("tmux").arg("-V").output();
        assert!(
            version.is_ok_and(|o| o.status.success()),
            "this test needs tmux on PATH (apt-get install -y tmux; .ci/run installs it)"
        );
        let name = format!("lookout-{tag}-{}", std::process::id());
        let dir = std::env::temp_dir().join(&name);
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        let mut server = Server {
            name,
            dir,
            socket: None,
        };
        let start = [
            "new-session",
            "-d",
            "-s",
            "ctl",
            "-x",
            "20",
            "-y",
            "5",
            "cat",
        ];
        let started = server
            .command()
            .args(start)
            .args([";", "display-message", "-p", "#{socket_path}"])
            .output()
            .expect("run tmux");
        assert!(started.status.success(), "tmux did not start");
        let socket = String::from_utf8_lossy(&started.stdout).trim().to_owned();
        server.socket = (!socket.is_empty()).then(|| PathBuf::from(socket));
        server
    }

    /// `tmux` on this server. `-u`: the client reads and writes UTF-8 whatever the locale; the
    /// server parses panes as UTF-8 (`LC_ALL`, read when the first command starts it).
    fn command(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-u", "-L", &self.name, "-f", "/dev/null"])
            .env("LC_ALL", "C.UTF-8");
        c
    }

    /// A control-mode client of this server.
    pub fn control(&self) -> Control {
        let mut child = self
            .command()
            .args(["-C", "attach", "-t", "ctl"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("a tmux control client");
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::new(child.stdout.take().expect("stdout"));
        let mut control = Control {
            child,
            input,
            output,
        };
        // Attached once tmux says which session it shows: a command sent before that can find
        // no current client (`refresh-client` failed so under load).
        while !control.line().starts_with("%session-changed") {}
        // Its own size is no window's, and the panes' output is not copied to it.
        control.run("refresh-client -f no-output,ignore-size");
        control
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").status();
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Some(socket) = &self.socket {
            let _ = std::fs::remove_file(socket);
        }
    }
}

/// A control-mode client: a command per line in, its reply between `%begin` and `%end` out.
pub struct Control {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Control {
    /// Runs `command` (tmux syntax); its output, or a panic with tmux's error.
    pub fn run(&mut self, command: &str) -> String {
        writeln!(self.input, "{command}").expect("write to tmux");
        self.input.flush().expect("write to tmux");
        // Notifications come between replies; a reply to a command of ours has flags 1.
        let begin = loop {
            let line = self.line();
            if line.starts_with("%begin ") && line.ends_with(" 1") {
                break line;
            }
        };
        let (end, error) = (
            begin.replacen("%begin", "%end", 1),
            begin.replacen("%begin", "%error", 1),
        );
        let mut out = String::new();
        loop {
            let line = self.line();
            if line == end {
                return out;
            }
            assert!(line != error, "tmux: {command}: {out}");
            out.push_str(&line);
            out.push('\n');
        }
    }

    fn line(&mut self) -> String {
        let mut buf = Vec::new();
        let n = self
            .output
            .read_until(b'\n', &mut buf)
            .expect("read from tmux");
        assert!(n > 0, "the tmux control client ended");
        buf.pop();
        String::from_utf8_lossy(&buf).into_owned()
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How long tmux may take to show one stretch of bytes.
fn deadline() -> Duration {
    let secs = std::env::var("LOOKOUT_TEST_DEADLINE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    Duration::from_secs(secs)
}

/// What tmux shows: rows' text (trailing blanks trimmed), cursor, alternate and hidden flags.
#[derive(Debug, PartialEq)]
pub struct Seen {
    rows: Vec<String>,
    cursor: (u16, u16),
    alternate: bool,
    hidden: bool,
}

impl Seen {
    pub fn of(t: &Terminal) -> Seen {
        let rows = t.size().0;
        let mut text = String::new();
        t.write_rows(0, rows - 1, &mut text);
        Seen {
            rows: text.lines().map(|l| l.trim_end().to_owned()).collect(),
            // The pending wrap after a glyph in the last column is column `cols` in both.
            cursor: t.cursor(),
            alternate: t.alternate_screen(),
            hidden: t.cursor_hidden(),
        }
    }

    /// The first difference from `other` (lookout's), if any.
    pub fn diff(&self, ours: &Seen) -> Option<String> {
        for (r, (x, y)) in ours.rows.iter().zip(&self.rows).enumerate() {
            if x != y {
                return Some(format!("row {r}:\n  lookout {x:?}\n  tmux    {y:?}"));
            }
        }
        if ours.rows.len() != self.rows.len() {
            return Some(format!("{} rows vs {}", ours.rows.len(), self.rows.len()));
        }
        (ours != self).then(|| {
            format!(
                "cursor {:?} vs {:?}, alternate {} vs {}, hidden {} vs {}",
                ours.cursor, self.cursor, ours.alternate, self.alternate, ours.hidden, self.hidden
            )
        })
    }
}

/// A session of one pane; its FIFO is written by a thread of its own (a write blocks while
/// tmux catches up). Killed when dropped.
pub struct Pane<'a> {
    control: &'a mut Control,
    session: String,
    feed: mpsc::Sender<Vec<u8>>,
    syncs: u32,
}

impl<'a> Pane<'a> {
    /// A `cols` × `rows` pane (`id`: unique on the server).
    pub fn open(
        server: &Server,
        control: &'a mut Control,
        id: usize,
        rows: u16,
        cols: u16,
    ) -> Pane<'a> {
        let session = format!("r{id}");
        let fifo = server.dir.join(&session);
        let made = Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo {fifo:?}");
        // Read and write: opening never waits for the pane's `cat`.
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&fifo)
            .expect("open the FIFO");
        control.run(&format!(
            "new-session -d -s {session} -x {cols} -y {rows} \"stty raw -echo && exec cat {}\"",
            fifo.display()
        ));
        let (feed, bytes) = mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || {
            for chunk in bytes {
                if file.write_all(&chunk).is_err() {
                    return;
                }
            }
        });
        Pane {
            control,
            session,
            feed,
            syncs: 0,
        }
    }

    /// Bytes for the pane's terminal (after those written before).
    pub fn write(&self, bytes: &[u8]) {
        if !bytes.is_empty() {
            let _ = self.feed.send(bytes.to_vec());
        }
    }

    /// Waits until tmux has parsed everything written so far; what it shows then.
    pub fn seen(&mut self) -> Seen {
        self.syncs += 1;
        let mark = format!("lookout-sync-{}", self.syncs);
        self.write(format!("\x1b]2;{mark}\x07").as_bytes());
        let ask = format!(
            "display-message -p -t {} '#{{cursor_y}} #{{cursor_x}} #{{alternate_on}} #{{cursor_flag}} #{{pane_title}}'",
            self.session
        );
        let until = Instant::now() + deadline();
        let flags = loop {
            let out = self.control.run(&ask);
            let fields: Vec<&str> = out.trim_end_matches('\n').splitn(5, ' ').collect();
            if fields.get(4) == Some(&mark.as_str()) {
                let n: Vec<u16> = fields[..4]
                    .iter()
                    .map(|n| n.parse().expect("a number"))
                    .collect();
                break n;
            }
            assert!(
                Instant::now() < until,
                "tmux never showed {mark} in {}",
                self.session
            );
        };
        let screen = self
            .control
            .run(&format!("capture-pane -p -t {}", self.session));
        Seen {
            rows: screen.lines().map(|l| l.trim_end().to_owned()).collect(),
            cursor: (flags[0], flags[1]),
            alternate: flags[2] == 1,
            hidden: flags[3] == 0,
        }
    }

    /// A new size for the pane.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.control.run(&format!(
            "resize-window -t {} -x {cols} -y {rows}",
            self.session
        ));
    }
}

impl Drop for Pane<'_> {
    fn drop(&mut self) {
        self.control
            .run(&format!("kill-session -t {}", self.session));
    }
}
