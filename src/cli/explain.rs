//! `lookout explain` (not yet built).

use std::process::ExitCode;

/// Arguments of `lookout explain`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `lookout explain`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`lookout explain` is not built yet")
}
