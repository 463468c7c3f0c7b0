//! The `-- CMD…` argument of the subcommands that start a command in a PTY (`lookout run`, `lookout
//! record`), declared once so both parse it alike: required, everything after `--` verbatim, hyphens
//! included. Each subcommand flattens it into its own arguments.

use std::ffi::OsString;

/// The command to start in the PTY.
#[derive(Debug, clap::Args)]
pub struct PtyCommand {
    /// The command to run, after `--`.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<OsString>,
}
