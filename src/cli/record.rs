//! `lookout record` (not yet built).

use std::process::ExitCode;

/// Arguments of `lookout record`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `lookout record`.
pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`lookout record` is not built yet")
}
