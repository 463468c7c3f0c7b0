//! `lookout next [--jump]`: the pane that most needs the person — the longest-blocked one, else
//! the oldest unread finished turn — printed, or with `--jump` brought in front (tmux), so it can
//! be bound to a tmux key: `bind-key N run-shell 'lookout next --jump'`. Exit 1 when none does.

use crate::client::panes;
use crate::panes::{Badge, by_urgency};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `lookout next`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Go there: switch this tmux client to the pane.
    #[arg(long)]
    jump: bool,
    /// The server's socket [default: $LOOKOUT_SOCKET, else $XDG_RUNTIME_DIR/lookout/lookout.sock].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
}

/// Prints (or goes to) the most urgent pane.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut client = super::connect(args.socket)?;
    let (_, mut panes) = panes(&mut client)?;
    by_urgency(&mut panes);
    let Some(pane) = panes
        .into_iter()
        .find(|p| matches!(Badge::of(p), Badge::Blocked | Badge::Done))
    else {
        eprintln!("lookout next: no pane needs you");
        return Ok(ExitCode::from(1));
    };
    if args.jump {
        super::watch::jump(&pane.pane).map_err(anyhow::Error::msg)?;
    }
    let place = super::watch::places(std::slice::from_ref(&pane))
        .remove(&pane.pane)
        .map(|p| format!("\t{p}"))
        .unwrap_or_default();
    println!(
        "{}\t{}{place}",
        crate::printable::printable(&pane.pane),
        Badge::of(&pane).name()
    );
    Ok(ExitCode::SUCCESS)
}
