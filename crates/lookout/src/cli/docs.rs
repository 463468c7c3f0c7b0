//! `lookout completions bash|zsh|fish|elvish|powershell` and `lookout man [--dir DIR]`: shell
//! completions and man pages generated from the same clap definitions the parser uses, so they
//! list exactly the real subcommands and flags. Prints to stdout; `man --dir` writes `lookout.1`
//! and one `lookout-SUBCOMMAND.1` per subcommand into DIR.

use anyhow::Context as _;
use clap::CommandFactory as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `lookout completions`.
#[derive(Debug, clap::Args)]
pub struct CompletionArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    shell: clap_complete::Shell,
}

/// Arguments of `lookout man`.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write lookout.1 and lookout-SUBCOMMAND.1 pages into this directory instead of printing
    /// lookout(1).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Prints the completion script for a shell.
pub fn completions(args: CompletionArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = super::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "lookout", &mut out);
    super::print_all(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}

/// Prints lookout(1), or writes every page into `--dir`.
pub fn man(args: ManArgs) -> anyhow::Result<ExitCode> {
    let cmd = super::Cli::command();
    let Some(dir) = args.dir else {
        let mut out = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut out)?;
        super::print_all(&String::from_utf8_lossy(&out))?;
        return Ok(ExitCode::SUCCESS);
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut pages = vec![("lookout.1".to_owned(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("lookout-{}", sub.get_name());
        pages.push((format!("{name}.1"), sub.clone().name(name)));
    }
    let mut written = String::new();
    for (file, page) in pages {
        let mut out = Vec::new();
        clap_mangen::Man::new(page).render(&mut out)?;
        let path = dir.join(&file);
        std::fs::write(&path, out).with_context(|| format!("writing {}", path.display()))?;
        written.push_str(&format!("{}\n", path.display()));
    }
    super::print_all(&written)?;
    Ok(ExitCode::SUCCESS)
}
