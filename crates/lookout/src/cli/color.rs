//! Whether coloured output is wanted: `--color auto|always|never` (every subcommand takes it), and
//! with `auto` the `NO_COLOR` convention (set and not empty: no colour) and whether the output is
//! a terminal. Set once from the command line; read by whatever paints (the board).

use std::sync::OnceLock;

/// `--color`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Choice {
    /// Colour on a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    /// Always colour (even into a pipe, even with `NO_COLOR`).
    Always,
    /// Never colour.
    Never,
}

static CHOICE: OnceLock<Choice> = OnceLock::new();

/// Records the command line's choice (the first call wins).
pub fn set(choice: Choice) {
    let _ = CHOICE.set(choice);
}

/// Whether to colour output going to a terminal (`tty`) or not.
pub fn wanted(tty: bool) -> bool {
    match CHOICE.get().copied().unwrap_or_default() {
        Choice::Always => true,
        Choice::Never => false,
        Choice::Auto => tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}
