//! `lookout check [FILES|DIRS]`: validate manifests the way the server loads them (see
//! manifests/README.md, Validation).
//! With no argument it checks the bundled manifests and the user directory. A kind whose files
//! name no `recorded` CLI version is listed as unverified (its rules are not proven on recordings).

use crate::manifest::bundled::BUNDLED;
use crate::manifest::{CompiledFile, compile_file, read_sources};
use crate::private::user_manifest_dir;
use std::fmt::Write as _;
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
    let mut kinds: Vec<KindFiles> = Vec::new();
    for (name, text) in &sources {
        match compile_file(name, text) {
            Ok(file) => {
                ok += 1;
                rules += file.rules.len();
                note_kind(&mut kinds, name, &file);
            }
            Err(mut e) => errors.append(&mut e),
        }
    }
    for error in &errors {
        eprintln!("{error}");
    }
    let unverified = kinds.iter().filter(|k| !k.recorded).count();
    let mut out = String::new();
    for k in kinds.iter().filter(|k| !k.recorded) {
        let _ = writeln!(
            out,
            "unverified: kind `{}` ({}): no recorded CLI version, its rules are not proven on the real CLI",
            k.kind,
            k.files.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "{ok} manifest(s) ok, {rules} rule(s), {unverified} kind(s) unverified; {} error(s)",
        errors.len()
    );
    super::print_all(&out)?;
    Ok(if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The files of one kind as the catalog merges them, and whether any names a recorded version.
struct KindFiles {
    kind: String,
    files: Vec<String>,
    recorded: bool,
}

/// Adds a compiled file to its kind, the way [`crate::manifest::Catalog::new`] merges: an
/// `override` file replaces the kind's earlier files (and so their `recorded` lists).
fn note_kind(kinds: &mut Vec<KindFiles>, name: &str, file: &CompiledFile) {
    let recorded = !file.recorded.is_empty();
    match kinds.iter_mut().find(|k| k.kind == file.kind) {
        Some(k) if file.override_earlier => {
            k.files = vec![name.to_owned()];
            k.recorded = recorded;
        }
        Some(k) => {
            k.files.push(name.to_owned());
            k.recorded |= recorded;
        }
        None => kinds.push(KindFiles {
            kind: file.kind.clone(),
            files: vec![name.to_owned()],
            recorded,
        }),
    }
}
