//! `lookout watch --demo`: panes with something to watch and no agent installed.
//!
//! Each demo pane is a real PTY running this binary's hidden `demo-agent` mode, whose output reaches the
//! server through the same [`Link`] as `lookout run`. The agent either replays a bundled recording
//! (`tests/fixtures/<kind>/<version>/*.cast`, with its timing, looping) or, when the checkout has none, plays a
//! scripted fake Claude Code screen that cycles working → (blocked →) working → done, so the board shows
//! every state. Touches PTYs, child processes, the fixtures directory and the server socket.

use crate::asciicast::{self, EventKind};
use crate::manifest::Catalog;
use crate::pty::spawn::{self, ChildProcess, SpawnRequest};
use crate::pty::terminal::{self, WindowSize};
use crate::sources::pty::{Link, Registration};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of the hidden `lookout demo-agent`.
#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    /// Varies the scripted agent's task and timing.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Replay this recording's output instead of the scripted agent.
    #[arg(long, value_name = "FILE")]
    cast: Option<PathBuf>,
}

/// Runs the demo agent until killed.
pub fn agent(args: AgentArgs) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match args.cast {
        Some(path) => loop {
            let file = std::io::BufReader::new(std::fs::File::open(&path)?);
            let cast = asciicast::read(file)?;
            let start = Instant::now();
            for event in cast.events {
                if let EventKind::Output(text) = event.kind {
                    std::thread::sleep(event.time.saturating_sub(start.elapsed()));
                    out.write_all(text.as_bytes())?;
                    out.flush()?;
                }
            }
            std::thread::sleep(Duration::from_secs(6));
            out.write_all(b"\x1b[?1049l\x1b[0m\x1b[H\x1b[2J")?;
        },
        None => scripted(&mut out, args.seed),
    }
}

const TASKS: [&str; 4] = [
    "fix the flaky login test",
    "add pagination to /api/orders",
    "upgrade the parser to the new grammar",
    "write the migration for user settings",
];

/// One scene of the scripted agent: what is on screen and for how long.
#[derive(Clone, Copy)]
enum Scene {
    Working(u64),
    Blocked(u64),
    Idle(u64),
}

fn scripted(out: &mut impl Write, seed: u64) -> anyhow::Result<ExitCode> {
    let task = TASKS[(seed % 4) as usize];
    let mut scenes = vec![Scene::Working(4 + seed % 3)];
    if seed.is_multiple_of(2) {
        scenes.extend([Scene::Blocked(6), Scene::Working(3)]);
    }
    scenes.push(Scene::Idle(9 + 3 * seed));
    let started = Instant::now();
    loop {
        for scene in &scenes {
            let (secs, mut frame) = match *scene {
                Scene::Working(s) | Scene::Blocked(s) | Scene::Idle(s) => (s, 0usize),
            };
            let until = Instant::now() + Duration::from_secs(secs);
            while Instant::now() < until {
                let size = terminal::window_size().unwrap_or(WindowSize::FALLBACK);
                let text = draw(*scene, task, frame, started.elapsed().as_secs(), size);
                out.write_all(text.as_bytes())?;
                out.flush()?;
                frame += 1;
                // Only a working screen moves; a still screen is what lets `quiet_ms` rules settle.
                let pause = if matches!(scene, Scene::Working(_)) {
                    400
                } else {
                    1000
                };
                std::thread::sleep(Duration::from_millis(pause));
                if !matches!(scene, Scene::Working(_)) {
                    std::thread::sleep(until.saturating_duration_since(Instant::now()));
                }
            }
        }
    }
}

/// A screen in the shape `manifests/claude.toml` describes (see the comments there).
fn draw(scene: Scene, task: &str, frame: usize, secs: u64, size: WindowSize) -> String {
    const SPINNER: [&str; 4] = ["✶", "✻", "✽", "✢"];
    let rule = "─".repeat(usize::from(size.cols.clamp(10, 200)) - 2);
    let mut lines = vec![
        "\x1b[1m✻ lookout demo agent\x1b[0m (scripted: no agent is installed)".to_owned(),
        String::new(),
        format!("> {task}"),
        String::new(),
        "● Read(src/lib.rs)".to_owned(),
        "  ⎿  Read 214 lines".to_owned(),
        String::new(),
    ];
    match scene {
        Scene::Working(_) => {
            let glyph = SPINNER[frame % SPINNER.len()];
            lines.push(format!(
                "\x1b[33m{glyph} Thinking… ({secs}s · esc to interrupt)\x1b[0m"
            ));
            lines.extend([String::new(), rule.clone(), "> ".into(), rule]);
        }
        Scene::Blocked(_) => lines.extend([
            "● Bash(cargo test --workspace)".to_owned(),
            String::new(),
            rule,
            " Bash command".to_owned(),
            "   cargo test --workspace".to_owned(),
            String::new(),
            " Do you want to proceed?".to_owned(),
            " ❯ 1. Yes".to_owned(),
            "   2. No, and tell Claude what to do differently (esc)".to_owned(),
        ]),
        Scene::Idle(_) => lines.extend([
            format!("● Done: {task}. All tests pass."),
            String::new(),
            rule.clone(),
            "> ".into(),
            rule,
        ]),
    }
    format!("\x1b[H\x1b[2J{}", lines.join("\r\n"))
}

/// The demo panes started by `watch --demo`; their agents are stopped when this is dropped.
pub struct Demo {
    children: Vec<ChildProcess>,
    /// The PTY writers stay open while the agents run (closing one sends the agent an EOF).
    _writers: Vec<Box<dyn Write + Send>>,
    /// What the demo is made of, for the board's status line.
    pub description: String,
    /// Each pane's pump says here when its link has closed the pane on the server.
    closed: Vec<crossbeam_channel::Receiver<()>>,
}

/// How long the board waits, when it closes, for the demo's panes to be closed on the server.
const CLOSE_WITHIN: Duration = Duration::from_secs(3);

impl Drop for Demo {
    /// Ends the demo agents and waits (briefly) until their panes are closed on the server, so
    /// the demo leaves nothing behind.
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.signal(nix::sys::signal::Signal::SIGTERM);
        }
        let end = Instant::now() + CLOSE_WITHIN;
        for closed in &self.closed {
            let _ = closed.recv_timeout(end.saturating_duration_since(Instant::now()));
        }
    }
}

/// The bundled recordings, as (kind, file), one per kind and four in all, from each kind's newest
/// recorded release: `approve.cast` where there is one (it passes through working, blocked and
/// done), else `slow.cast`; a kind with neither (a sign-in wall only) shows nothing worth a demo.
fn recordings() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let Ok(fixtures) = crate::corpus::walk(&root) else {
        return Vec::new();
    };
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    let mut kinds: Vec<&str> = fixtures.iter().map(|f| f.kind.as_str()).collect();
    kinds.dedup();
    for kind in kinds {
        // walk() sorts versions ascending: the newest release is the last.
        let newest = fixtures
            .iter()
            .filter(|f| f.kind == kind)
            .map(|f| &f.version)
            .next_back();
        let mut casts: Vec<&crate::corpus::Fixture> = fixtures
            .iter()
            .filter(|f| f.kind == kind && Some(&f.version) == newest)
            .filter(|f| f.case == "approve" || f.case == "slow")
            .collect();
        casts.sort_by_key(|f| (f.case != "approve", f.case != "slow", f.case.clone()));
        if let Some(f) = casts.first() {
            found.push((kind.to_owned(), f.path.clone()));
        }
    }
    found.truncate(4);
    found
}

/// One demo pane to start: its id, kind, the agent's argv and its terminal size.
struct Source {
    pane: String,
    kind: String,
    argv: Vec<OsString>,
    size: WindowSize,
}

fn sources(exe: &Path, scripted: bool) -> (Vec<Source>, String) {
    let casts = if scripted { Vec::new() } else { recordings() };
    if casts.is_empty() {
        let sources = (0..3u64)
            .map(|seed| Source {
                pane: format!("demo:agent-{}", seed + 1),
                kind: "claude".to_owned(),
                argv: vec![
                    exe.into(),
                    "demo-agent".into(),
                    "--seed".into(),
                    seed.to_string().into(),
                ],
                size: WindowSize {
                    cols: 100,
                    rows: 24,
                },
            })
            .collect();
        return (sources, "demo: 3 scripted fake agents".to_owned());
    }
    let description = format!("demo: replaying {} bundled recordings", casts.len());
    let sources = casts
        .into_iter()
        .map(|(kind, cast)| {
            // The recording's own size: its output only draws right on a terminal of that size.
            let size = std::fs::File::open(&cast)
                .ok()
                .and_then(|f| asciicast::read(std::io::BufReader::new(f)).ok())
                .map(|c| WindowSize {
                    cols: c.header.width.max(1),
                    rows: c.header.height.max(1),
                })
                .unwrap_or(WindowSize {
                    cols: 100,
                    rows: 24,
                });
            Source {
                pane: format!("demo:{kind}"),
                kind,
                argv: vec![
                    exe.into(),
                    "demo-agent".into(),
                    "--cast".into(),
                    cast.into(),
                ],
                size,
            }
        })
        .collect();
    (sources, description)
}

/// Starts the demo panes on the server at `socket`; `scripted` skips the recordings.
pub fn start(socket: &Path, scripted: bool) -> anyhow::Result<Demo> {
    let exe = std::env::current_exe()?;
    let (sources, description) = sources(&exe, scripted);
    let mut demo = Demo {
        children: Vec::new(),
        _writers: Vec::new(),
        description,
        closed: Vec::new(),
    };
    // The demo names every pane's kind; the catalog only answers the probe.
    let catalog = Arc::new(Catalog::bundled().0);
    for source in sources {
        let text_argv = source
            .argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let spawned = spawn::spawn(&SpawnRequest::new(source.argv, source.size))?;
        let registration = Registration {
            pane: source.pane,
            rows: source.size.rows,
            cols: source.size.cols,
            kind: Some(source.kind),
            pid: spawned.pid,
            argv: text_argv,
            inject: None,
        };
        let server = socket.to_path_buf();
        let connect = Arc::new(move || crate::cli::daemon::reconnect(&server));
        let link = Link::start(connect, registration, catalog.clone());
        demo.closed.push(pump(spawned.reader, link));
        demo.children.push(spawned.child);
        demo._writers.push(spawned.writer);
    }
    Ok(demo)
}

/// Copies a demo agent's output to its link until the agent's terminal closes, then lets the
/// link close the pane on the server; the receiver hears when it has.
fn pump(mut reader: Box<dyn Read + Send>, link: Link) -> crossbeam_channel::Receiver<()> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    let _ = std::thread::Builder::new()
        .name("lookout-demo".into())
        .spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                link.output(buf[..n].to_vec());
            }
            // told as an exit: the link then closes the pane on the server
            link.exited();
            link.finish(CLOSE_WITHIN);
            let _ = tx.send(());
        });
    rx
}
