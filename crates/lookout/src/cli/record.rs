//! `lookout record [--cols C --rows R] [-o FILE] [--title T] [--marker-file PATH] -- CMD…`: run CMD in a
//! PTY through the pass-through loop and write what passes as an asciicast v2 file (the fixtures format).
//!
//! Markers: `Ctrl-]` then `w`/`b`/`i`/`o` (never seen by CMD), or lines appended to `--marker-file`.
//! Touches the outer terminal, one PTY, the output file and the marker file.

use crate::asciicast::{Header, Writer};
use crate::cli::pty_command::PtyCommand;
use crate::pty::passthrough::{self, Options, PaneSink};
use crate::pty::spawn::{self, ExitStatus, SpawnRequest};
use crate::pty::terminal;
use anyhow::Context;
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Arguments of `lookout record`.
#[derive(Debug, clap::Args)]
#[command(mut_arg("command", |arg| arg.help("The command to record, after `--`")))]
pub struct Args {
    /// Width of the recorded terminal [default: the current terminal's, or 120].
    #[arg(long)]
    cols: Option<u16>,
    /// Height of the recorded terminal [default: the current terminal's, or 40].
    #[arg(long)]
    rows: Option<u16>,
    /// Where to write the recording [default: lookout-<unix time>.cast].
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Title stored in the recording's header.
    #[arg(long)]
    title: Option<String>,
    /// Lines appended to this file while recording become markers (`echo blocked >> PATH`).
    #[arg(long, value_name = "PATH")]
    marker_file: Option<PathBuf>,
    #[command(flatten)]
    child: PtyCommand,
}

/// Runs `lookout record`: the exit code is the recorded command's (128 + signal if it was killed).
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let size = terminal::initial_size(args.cols, args.rows);
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    let path = args
        .output
        .unwrap_or_else(|| PathBuf::from(format!("lookout-{started}.cast")));

    let request = SpawnRequest::new(args.child.command, size);
    let mut header = Header::new(size.cols, size.rows);
    header.timestamp = Some(started);
    header.title = args.title;
    let term = request
        .env
        .iter()
        .find(|(k, _)| k == "TERM")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var_os("TERM"));
    for (key, value) in [("TERM", term), ("SHELL", std::env::var_os("SHELL"))] {
        if let Some(value) = value {
            header
                .env
                .insert(key.into(), value.to_string_lossy().into_owned());
        }
    }

    let file = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
    let writer =
        Writer::new(file, &header).with_context(|| format!("cannot write {}", path.display()))?;
    let spawned = match spawn::spawn(&request) {
        Ok(spawned) => spawned,
        Err(err) => {
            // A header-only file would look like a recording of nothing; leave no file instead.
            let _ = std::fs::remove_file(&path);
            return Err(err.into());
        }
    };
    let options = Options {
        marker_chord: true,
        marker_file: args.marker_file,
        answer_queries: true,
        outer: None,
        inject: None,
    };
    let mut sink = CastSink {
        writer,
        error: None,
    };
    let status =
        passthrough::run(spawned, size, &options, &mut sink).context("pass-through failed")?;

    let CastSink { writer, error } = sink;
    let finished = writer.finish().map(drop);
    error
        .map_or(finished, Err)
        .with_context(|| format!("recording to {} is incomplete", path.display()))?;
    eprintln!("lookout: recorded to {}", path.display());
    Ok(ExitCode::from(status.shell_code()))
}

/// Writes what passes through as cast events, keeping the first write error for the end of the run.
struct CastSink {
    writer: Writer<File>,
    error: Option<io::Error>,
}

impl CastSink {
    fn keep(&mut self, result: io::Result<()>) {
        if let Err(err) = result {
            self.error.get_or_insert(err);
        }
    }
}

impl PaneSink for CastSink {
    fn output(&mut self, at: Duration, bytes: Vec<u8>) {
        let result = self.writer.output(at, &bytes);
        self.keep(result);
    }

    fn input(&mut self, at: Duration, bytes: &[u8]) {
        let result = self.writer.input(at, bytes);
        self.keep(result);
    }

    fn resized(&mut self, at: Duration, cols: u16, rows: u16) {
        let result = self.writer.resize(at, cols, rows);
        self.keep(result);
    }

    fn marker(&mut self, at: Duration, label: &str) {
        let result = self.writer.marker(at, label);
        self.keep(result);
    }

    fn exited(&mut self, _at: Duration, _status: ExitStatus) {
        // asciicast v2 has no exit event; the exit code is lookout's own.
    }
}
