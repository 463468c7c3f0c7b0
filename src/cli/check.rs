//! `lookout check` (not yet built).

use std::process::ExitCode;

/// Arguments of `lookout check`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `lookout check`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`lookout check` is not built yet")
}
