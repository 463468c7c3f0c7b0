//! What an installed agent says about its own release, read from its install instead of running
//! it: the `package.json` of the npm package whose `bin` is the script, or the `*.dist-info/METADATA`
//! of the Python distribution whose console script it is. Running an unknown executable with
//! `--version` is the last resort (`versions::probe`): a program that does not know the flag runs
//! its normal routine. Touches only the files of the install (each read bounded).

use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The most of one metadata file read (a `package.json`, a `METADATA`, an `entry_points.txt`).
const FILE_LIMIT: u64 = 1 << 20;
/// How many directories above the script a `package.json` is looked for.
const NPM_DEPTH: usize = 8;

/// The release the install of `script` records about itself, if it records one.
pub fn release(script: &Path) -> Option<String> {
    let resolved = script.canonicalize().ok()?;
    npm(&resolved)
        .or_else(|| python(script))
        .or_else(|| python(&resolved))
}

fn read_bounded(path: &Path) -> Option<String> {
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(FILE_LIMIT)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// The `version` of the nearest enclosing npm package whose `bin` names `script` (resolved: npm's
/// `.bin/` entries are symlinks into the package).
fn npm(script: &Path) -> Option<String> {
    for dir in script.ancestors().skip(1).take(NPM_DEPTH) {
        if let Some(version) = bin_version(dir, script) {
            return Some(version);
        }
        if dir.parent().and_then(Path::file_name) == Some("node_modules".as_ref()) {
            // A package's own root (or a scope's): no package above it lists this script.
            return None;
        }
    }
    None
}

/// The `version` of `dir/package.json` when its `bin` names `script`.
fn bin_version(dir: &Path, script: &Path) -> Option<String> {
    let package: serde_json::Value =
        serde_json::from_str(&read_bounded(&dir.join("package.json"))?).ok()?;
    let bins: Vec<&str> = match &package["bin"] {
        serde_json::Value::String(one) => vec![one],
        serde_json::Value::Object(named) => named.values().filter_map(|v| v.as_str()).collect(),
        _ => Vec::new(),
    };
    bins.iter()
        .any(|b| dir.join(b).canonicalize().is_ok_and(|b| b == script))
        .then(|| package["version"].as_str().map(str::to_owned))
        .flatten()
}

/// The `Version:` of the Python distribution that lists `script`'s name among its console
/// scripts, found in the `site-packages` (or `dist-packages`) beside the script's `bin/` — the
/// layout of a virtualenv, pipx, `pip --user` (`~/.local`) and `/usr/local`.
fn python(script: &Path) -> Option<String> {
    let name = script.file_name()?.to_str()?;
    let prefix = script.parent()?.parent()?;
    for packages in site_packages(prefix) {
        let Ok(entries) = std::fs::read_dir(&packages) else {
            continue;
        };
        for entry in entries.flatten() {
            let info = entry.path();
            if info.extension() != Some("dist-info".as_ref()) {
                continue;
            }
            let listed = read_bounded(&info.join("entry_points.txt"))
                .is_some_and(|text| console_scripts(&text).any(|s| s == name));
            if listed {
                return read_bounded(&info.join("METADATA")).and_then(|m| metadata_version(&m));
            }
        }
    }
    None
}

/// `<prefix>/lib/python*/{site,dist}-packages`.
fn site_packages(prefix: &Path) -> Vec<PathBuf> {
    let Ok(libs) = std::fs::read_dir(prefix.join("lib")) else {
        return Vec::new();
    };
    libs.flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
        .flat_map(|e| ["site-packages", "dist-packages"].map(|p| e.path().join(p)))
        .filter(|p| p.is_dir())
        .collect()
}

/// The names an `entry_points.txt` declares under `[console_scripts]`.
fn console_scripts(text: &str) -> impl Iterator<Item = &str> {
    let mut inside = false;
    text.lines().filter_map(move |line| {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[console_scripts]";
            return None;
        }
        let (name, _) = line.split_once('=')?;
        inside.then(|| name.trim())
    })
}

/// The `Version:` header of a core-metadata file (the headers end at the first blank line).
fn metadata_version(text: &str) -> Option<String> {
    text.lines()
        .take_while(|l| !l.trim().is_empty())
        .find_map(|l| l.strip_prefix("Version:"))
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn an_npm_bin_reads_its_package_version_through_the_bin_symlink() {
        let dir = tempfile::tempdir().expect("tempdir");
        let modules = dir.path().join("lib/node_modules");
        let package = modules.join("@scope/agent");
        write(
            &package.join("package.json"),
            r#"{"name":"@scope/agent","version":"3.4.5","bin":{"agent":"bin/cli.js"}}"#,
        );
        write(&package.join("bin/cli.js"), "#!/usr/bin/env node\n");
        // a nested package.json without a bin (`{"type":"module"}`) is passed over
        write(&package.join("bin/package.json"), r#"{"type":"module"}"#);
        std::fs::create_dir_all(dir.path().join("bin")).expect("mkdir");
        let link = dir.path().join("bin/agent");
        std::os::unix::fs::symlink(package.join("bin/cli.js"), &link).expect("symlink");
        assert_eq!(release(&link).as_deref(), Some("3.4.5"));
        // a script the package does not list is not its CLI
        write(&package.join("bin/other.js"), "");
        assert_eq!(release(&package.join("bin/other.js")), None);
    }

    #[test]
    fn a_python_console_script_reads_its_dist_info() {
        let dir = tempfile::tempdir().expect("tempdir");
        let site = dir.path().join("lib/python3.12/site-packages");
        write(
            &site.join("other-1.0.dist-info/entry_points.txt"),
            "[console_scripts]\nother = other:main\n",
        );
        write(
            &site.join("aider_chat-0.86.2.dist-info/entry_points.txt"),
            "[gui_scripts]\naider = x:y\n[console_scripts]\naider = aider.main:main\n",
        );
        write(
            &site.join("aider_chat-0.86.2.dist-info/METADATA"),
            "Metadata-Version: 2.1\nName: aider-chat\nVersion: 0.86.2\n\nVersion: 9.9\n",
        );
        let script = dir.path().join("bin/aider");
        write(&script, "#!/usr/bin/python3\n");
        assert_eq!(release(&script).as_deref(), Some("0.86.2"));
        let unknown = dir.path().join("bin/nothing");
        write(&unknown, "");
        assert_eq!(release(&unknown), None);
    }
}
