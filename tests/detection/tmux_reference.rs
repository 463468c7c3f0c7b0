//! lookout's terminal against a real one: every bundled recording is played into a tmux pane of
//! its size and into lookout's grid, and at every marker (and at the end) each row's text, the
//! cursor, the alternate-screen flag and the hidden cursor must be what tmux shows.
//!
//! Unlike the side-by-side test against vt100 (`terminal.rs`), this one sees a gap both
//! emulators share. One private tmux server (`-L`, no config) holds a session per recording;
//! its pane runs `cat` of a FIFO with the TTY's output processing off (`stty raw`), so the
//! recorded bytes reach tmux as the recording's terminal got them. After each stretch of bytes
//! a title (OSC 2) naming the marker is written; once tmux shows that title it has parsed
//! everything before it, and the screen is read in the same command (`capture-pane`).
//! Recordings run on two threads: most of the time is tmux's.

use lookout_core::asciicast::{self, Cast, EventKind};
use lookout_core::corpus;
use lookout_core::rules::Grid;
use lookout_core::terminal::Terminal;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A tmux server of the test's own, killed when dropped.
struct Server {
    name: String,
    dir: PathBuf,
}

impl Server {
    fn start() -> Server {
        let version = Command::new("tmux").arg("-V").output();
        assert!(
            version.is_ok_and(|o| o.status.success()),
            "this test needs tmux on PATH (apt-get install -y tmux; .ci/run installs it)"
        );
        let name = format!("lookout-grid-{}", std::process::id());
        let dir = std::env::temp_dir().join(&name);
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        Server { name, dir }
    }

    /// Runs a tmux command; its output, or `None` if tmux failed.
    fn try_run(&self, args: &[&str]) -> Option<String> {
        // `-u`: the client reads and writes UTF-8 whatever the locale; the server parses the
        // pane as UTF-8 (`LC_ALL` below, read when the first command starts it).
        let out = Command::new("tmux")
            .args(["-u", "-L", &self.name, "-f", "/dev/null"])
            .args(args)
            .env("LC_ALL", "C.UTF-8")
            .output()
            .expect("run tmux");
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn run(&self, args: &[&str]) -> String {
        self.try_run(args)
            .unwrap_or_else(|| panic!("tmux {args:?} failed"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.try_run(&["kill-server"]);
        let _ = std::fs::remove_dir_all(&self.dir);
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
struct Seen {
    rows: Vec<String>,
    cursor: (u16, u16),
    alternate: bool,
    hidden: bool,
}

impl Seen {
    fn of(t: &Terminal) -> Seen {
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
    fn diff(&self, ours: &Seen) -> Option<String> {
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

/// One recording's session: the pane's FIFO, written by a thread of its own (a write blocks
/// while tmux catches up).
struct Pane<'a> {
    server: &'a Server,
    session: String,
    feed: mpsc::Sender<Vec<u8>>,
    syncs: u32,
}

impl<'a> Pane<'a> {
    fn open(server: &'a Server, id: usize, rows: u16, cols: u16) -> Pane<'a> {
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
        let command = format!("stty raw -echo && exec cat '{}'", fifo.display());
        let (cols, rows) = (cols.to_string(), rows.to_string());
        server.run(&[
            "new-session",
            "-d",
            "-s",
            &session,
            "-x",
            &cols,
            "-y",
            &rows,
            &command,
        ]);
        let (feed, bytes) = mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || {
            for chunk in bytes {
                if file.write_all(&chunk).is_err() {
                    return;
                }
            }
        });
        Pane {
            server,
            session,
            feed,
            syncs: 0,
        }
    }

    fn write(&self, bytes: &[u8]) {
        if !bytes.is_empty() {
            let _ = self.feed.send(bytes.to_vec());
        }
    }

    /// Waits until tmux has parsed everything written so far; what it shows then.
    fn seen(&mut self) -> Seen {
        self.syncs += 1;
        let mark = format!("lookout-sync-{}", self.syncs);
        self.write(format!("\x1b]2;{mark}\x07").as_bytes());
        let format = "#{pane_title}\n#{cursor_y} #{cursor_x} #{alternate_on} #{cursor_flag}";
        let until = Instant::now() + deadline();
        loop {
            let out = self.server.run(&[
                "display-message",
                "-p",
                "-t",
                &self.session,
                format,
                ";",
                "capture-pane",
                "-p",
                "-t",
                &self.session,
            ]);
            let mut lines = out.split('\n');
            if lines.next() == Some(mark.as_str()) {
                let flags: Vec<u16> = lines
                    .next()
                    .unwrap_or("")
                    .split(' ')
                    .map(|n| n.parse().expect("a number"))
                    .collect();
                let mut rows: Vec<String> = lines.map(|l| l.trim_end().to_owned()).collect();
                rows.pop(); // after the last newline
                return Seen {
                    rows,
                    cursor: (flags[0], flags[1]),
                    alternate: flags[2] == 1,
                    hidden: flags[3] == 0,
                };
            }
            assert!(
                Instant::now() < until,
                "tmux never showed {mark} in {}",
                self.session
            );
            std::thread::yield_now();
        }
    }

    fn resize(&mut self, rows: u16, cols: u16) {
        let (cols, rows) = (cols.to_string(), rows.to_string());
        self.server.run(&[
            "resize-window",
            "-t",
            &self.session,
            "-x",
            &cols,
            "-y",
            &rows,
        ]);
    }
}

impl Drop for Pane<'_> {
    fn drop(&mut self) {
        let _ = self.server.try_run(&["kill-session", "-t", &self.session]);
    }
}

/// Plays `cast` into a pane and lookout's grid; the differences at its markers and its end.
fn compare(server: &Server, id: usize, cast: &Cast) -> (usize, Vec<String>) {
    let (h, w) = (cast.header.height.max(1), cast.header.width.max(1));
    let mut pane = Pane::open(server, id, h, w);
    let mut ours = Terminal::new(h, w);
    let every: usize = std::env::var("LOOKOUT_GRID_EVERY")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let (mut checks, mut diffs) = (0, Vec::new());
    let mut written = Vec::new();
    let mut check = |pane: &mut Pane, ours: &Terminal, at: &str, written: &[u8]| {
        if !whole(written) {
            // The bytes so far end inside an escape sequence: the sync title would cut it in
            // tmux (and not in lookout, whose parser carries it over).
            return;
        }
        checks += 1;
        if let Some(d) = pane.seen().diff(&Seen::of(ours)) {
            diffs.push(format!("{at}: {d}"));
        }
    };
    for (i, e) in cast.events.iter().enumerate() {
        match &e.kind {
            EventKind::Output(data) => {
                let _ = ours.process(data.as_bytes());
                pane.write(data.as_bytes());
                written.extend_from_slice(data.as_bytes());
                if written.len() > 1 << 16 {
                    written.drain(..written.len() - (1 << 12));
                }
                if every > 0 && i % every == 0 {
                    check(&mut pane, &ours, &format!("event {i}"), &written);
                }
            }
            EventKind::Resize { cols, rows } => {
                pane.seen();
                pane.resize(*rows, *cols);
                ours.resize(*rows, *cols);
            }
            EventKind::Marker(label) => {
                check(&mut pane, &ours, &format!("event {i} ({label})"), &written);
            }
            EventKind::Input(_) => {}
        }
    }
    check(&mut pane, &ours, "the end", &written);
    (checks, diffs)
}

/// Whether `bytes` (the tail of the output so far) end outside any escape sequence.
fn whole(bytes: &[u8]) -> bool {
    let Some(esc) = bytes.iter().rposition(|&b| b == 0x1b) else {
        return true;
    };
    let rest = &bytes[esc + 1..];
    match rest.first() {
        None => false,
        // CSI: parameters and intermediates, then a final byte.
        Some(b'[') => rest[1..].iter().any(|b| (0x40..=0x7e).contains(b)),
        // OSC, DCS, APC, PM, SOS: a string ended by BEL (OSC) or ST (ESC \, whose ESC would be
        // the last one).
        Some(b']') => rest.contains(&0x07),
        Some(b'P' | b'_' | b'^' | b'X') => false,
        // ESC, intermediates, a final byte.
        Some(_) => rest.iter().any(|b| (0x30..=0x7e).contains(b)),
    }
}

#[test]
fn every_recording_reads_as_in_tmux() {
    let started = Instant::now();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let files = corpus::walk(&root).expect("tests/fixtures");
    assert!(files.len() > 100, "the corpus is there");
    let server = Server::start();
    server.run(&["start-server", ";", "set", "-g", "exit-empty", "off"]);
    let next = Mutex::new(files.iter().enumerate());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while let Some((id, f)) = next.lock().expect("lock").next() {
                    let file = std::fs::File::open(&f.path).expect("fixture");
                    let cast = asciicast::read(std::io::BufReader::new(file)).expect("cast");
                    let (checks, diffs) = compare(&server, id, &cast);
                    results
                        .lock()
                        .expect("lock")
                        .push((f.path.clone(), checks, diffs));
                }
            });
        }
    });
    let results = results.into_inner().expect("lock");
    let checks: usize = results.iter().map(|r| r.1).sum();
    let wrong: Vec<_> = results.iter().filter(|r| !r.2.is_empty()).collect();
    let screens: usize = wrong.iter().map(|r| r.2.len()).sum();
    let mut report = String::new();
    for (path, _, diffs) in &wrong {
        let rel = path.strip_prefix(&root).unwrap_or(path);
        report.push_str(&format!(
            "{} ({} screens) {}\n",
            rel.display(),
            diffs.len(),
            diffs[0]
        ));
    }
    eprintln!(
        "{} recordings, {checks} screens compared with tmux in {:.1} s; {screens} differ",
        results.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        wrong.is_empty(),
        "{} recordings differ from tmux:\n{report}",
        wrong.len()
    );
}
