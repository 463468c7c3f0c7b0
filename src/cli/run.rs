//! `lookout run` (not yet built).

use std::process::ExitCode;

/// Arguments of `lookout run`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `lookout run`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`lookout run` is not built yet")
}
