//! `lookout seen PANE…|--all`: tell the server the person has seen these panes (clears `unread`,
//! cause `seen`). A thin client of the socket.

use crate::client::panes;
use crate::protocol::params::PaneSeen;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `lookout seen`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The panes seen: ids, tmux places (`work:2.0`) or titles.
    #[arg(required_unless_present = "all")]
    panes: Vec<String>,
    /// Every pane with an unread turn.
    #[arg(long, conflicts_with = "panes")]
    all: bool,
    /// The server's socket [default: $LOOKOUT_SOCKET, else $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
}

/// Marks the panes seen; exit 1 when one of them is unknown.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut client = super::connect(args.socket)?;
    let panes = if args.all {
        let (_, states) = panes(&mut client)?;
        states
            .into_iter()
            .filter(|s| s.unread)
            .map(|s| s.pane)
            .collect()
    } else {
        let mut ids = Vec::new();
        for name in &args.panes {
            ids.push(super::names::resolve(&mut client, name)?);
        }
        ids
    };
    let mut code = ExitCode::SUCCESS;
    for pane in panes {
        if let Err(e) = client.call(&PaneSeen {
            pane: pane.clone(),
            via: None,
        }) {
            eprintln!("lookout seen: {pane}: {e}");
            code = ExitCode::from(1);
        }
    }
    Ok(code)
}
