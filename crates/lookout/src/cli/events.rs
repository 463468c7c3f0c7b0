//! `lookout events`: subscribe (§8.4) and print JSON lines — first the snapshot
//! (`{"seq","panes"}`), then one `{"event":…}` per event, until the server goes away.
//! A thin client of the socket.

use crate::server::ClientError;
use serde_json::json;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `lookout events`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The server's socket [default: $LOOKOUT_SOCKET, else $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// The fleet board: every machine's panes from this NATS server.
    #[arg(long, value_name = "URL")]
    fleet: Option<String>,
    #[command(flatten)]
    nats: super::fleet::NatsArgs,
}

/// Streams events to stdout; exit 1 when dropped as too slow.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(url) = &args.fleet {
        return super::fleet::events(url, args.nats);
    }
    let client = super::connect(args.socket)?;
    let (seq, panes, events) = client.subscribe()?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", json!({"seq": seq, "panes": panes}))?;
    out.flush()?;
    for event in events {
        match event {
            Ok(event) => {
                // A closed stdout (`lookout events | head`) ends the stream quietly.
                if writeln!(out, "{}", json!({ "event": event }))
                    .and_then(|()| out.flush())
                    .is_err()
                {
                    return Ok(ExitCode::SUCCESS);
                }
            }
            Err(ClientError::Server(e)) => {
                eprintln!("lookout: {}: {}", e.code, e.message);
                return Ok(ExitCode::from(1));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(ExitCode::SUCCESS)
}
