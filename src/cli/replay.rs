//! `lookout replay` (not yet built).

use std::process::ExitCode;

/// Arguments of `lookout replay`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `lookout replay`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`lookout replay` is not built yet")
}
