//! `lookout check [FILES|DIRS]`: validate manifests the way the server loads them (§2.1).
//! With no argument it checks the bundled manifests and the user directory.

use crate::manifest::bundled::BUNDLED;
use crate::manifest::{compile_file, read_sources, user_manifest_dir};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `lookout check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Manifest files or directories (every `*.toml`); default: bundled + user directory.
    pub paths: Vec<PathBuf>,
}

/// Prints every error (one line each) and a summary; exit 1 on any error.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut sources: Vec<(String, String)> = Vec::new();
    let mut errors = Vec::new();
    if args.paths.is_empty() {
        sources.extend(
            BUNDLED
                .iter()
                .map(|(n, t)| ((*n).to_owned(), (*t).to_owned())),
        );
        if let Some(dir) = user_manifest_dir().filter(|d| d.is_dir()) {
            read_sources(&dir, &mut sources, &mut errors);
        }
    }
    for path in &args.paths {
        read_sources(path, &mut sources, &mut errors);
    }
    let mut ok = 0;
    let mut rules = 0;
    for (name, text) in &sources {
        match compile_file(name, text) {
            Ok(file) => {
                ok += 1;
                rules += file.rules.len();
            }
            Err(mut e) => errors.append(&mut e),
        }
    }
    for error in &errors {
        eprintln!("{error}");
    }
    println!(
        "{ok} manifest(s) ok, {rules} rule(s); {} error(s)",
        errors.len()
    );
    Ok(if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
