//! `lookout serve [--socket PATH] [--db PATH] [--tick-ms 500] [--manifests DIR]…`: run the server
//! (SPEC §8) in the foreground until SIGINT/SIGTERM, then flush a final tick and exit 0.
//! Glue only: the server itself is `crate::server`.

use crate::server::{Config, Server, default_db_path, default_mirror_dir, default_socket_path};
use anyhow::Context as _;
use signal_hook::consts::{SIGINT, SIGTERM};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `lookout serve`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The Unix socket [default: $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// The SQLite database [default: $XDG_STATE_HOME/lookout/lookout.db].
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Keep nothing across restarts (no database).
    #[arg(long, conflicts_with = "db")]
    no_db: bool,
    /// Tick period in milliseconds.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    tick_ms: u64,
    /// Extra manifest directories, loaded after the bundled and user ones.
    #[arg(long, value_name = "DIR")]
    manifests: Vec<PathBuf>,
    /// Where `lookout report` leaves reports when the socket is down [default: $XDG_STATE_HOME/lookout/agent-status].
    #[arg(long, value_name = "DIR")]
    mirror_dir: Option<PathBuf>,
}

/// Runs the server until a signal stops it.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let config = Config {
        socket: args.socket.unwrap_or_else(default_socket_path),
        db: if args.no_db {
            None
        } else {
            Some(args.db.unwrap_or_else(default_db_path))
        },
        tick: Duration::from_millis(args.tick_ms),
        manifests: args.manifests,
        mirror_dir: Some(args.mirror_dir.unwrap_or_else(default_mirror_dir)),
    };
    let socket = config.socket.clone();
    // Before anything else: a signal that arrives while manifests compile must still stop us cleanly.
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .context("installing signal handlers")?;
    let (server, warnings) = Server::bind(config)?;
    for warning in &warnings {
        eprintln!("lookout: warning: manifest skipped: {warning}");
    }
    let stopper = server.stopper();
    std::thread::Builder::new()
        .name("lookout-signals".into())
        .spawn(move || {
            if signals.forever().next().is_some() {
                stopper.stop();
            }
        })
        .context("starting the signal thread")?;
    eprintln!("lookout: serving on {}", socket.display());
    server.run()?;
    Ok(ExitCode::SUCCESS)
}
