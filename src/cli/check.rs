//! `lookout check [FILES|DIRS]`: validate manifests the way the server loads them (§2.1).
//! With no argument it checks the bundled manifests and the user directory. A kind whose files
//! name no `recorded` CLI version is listed as unverified (its rules are not proven on recordings).

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
    // kind → (its files, whether any of them names a recorded version), in load order
    let mut kinds: Vec<(String, Vec<String>, bool)> = Vec::new();
    for (name, text) in &sources {
        match compile_file(name, text) {
            Ok(file) => {
                ok += 1;
                rules += file.rules.len();
                match kinds.iter_mut().find(|(k, _, _)| *k == file.kind) {
                    Some((_, files, recorded)) => {
                        files.push(name.clone());
                        *recorded |= !file.recorded.is_empty();
                    }
                    None => kinds.push((file.kind, vec![name.clone()], !file.recorded.is_empty())),
                }
            }
            Err(mut e) => errors.append(&mut e),
        }
    }
    for error in &errors {
        eprintln!("{error}");
    }
    let unverified: Vec<_> = kinds.iter().filter(|(_, _, rec)| !rec).collect();
    for (kind, files, _) in &unverified {
        println!(
            "unverified: kind `{kind}` ({}): no recorded CLI version, its rules are not proven on the real CLI",
            files.join(", ")
        );
    }
    println!(
        "{ok} manifest(s) ok, {rules} rule(s), {} kind(s) unverified; {} error(s)",
        unverified.len(),
        errors.len()
    );
    Ok(if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
