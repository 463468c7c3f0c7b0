//! The recording corpus on disk: `DIR/<kind>/<version>/<case>.cast` (asciicast recordings of the
//! real CLIs, one folder per recorded CLI release). The kind is always the first folder level;
//! the version is the second when there is one. Used by `lookout replay --summary`, the replay
//! test and the board's demo. Reads directories only; it parses no recording.

use std::io;
use std::path::{Path, PathBuf};

/// One recording of the corpus.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Fixture {
    /// The agent kind: the first folder level under the corpus root.
    pub kind: String,
    /// The CLI release: the folder between the kind and the file, when there is one.
    pub version: Option<String>,
    /// The case: the file name without `.cast`.
    pub case: String,
    /// The file.
    pub path: PathBuf,
}

/// Every `.cast` under `root`, sorted by kind, version (numerically) and case. A `.cast` deeper
/// than `<kind>/<version>/` still counts, with the first folder below the kind as its version.
pub fn walk(root: &Path) -> io::Result<Vec<Fixture>> {
    let mut out = Vec::new();
    for kind in sorted_dir(root)? {
        if !kind.is_dir() {
            continue;
        }
        let Some(name) = file_name(&kind) else {
            continue;
        };
        collect(&kind, &name, None, &mut out)?;
    }
    out.sort_by(|a, b| {
        (&a.kind, a.version.as_deref().map(version_key), &a.case).cmp(&(
            &b.kind,
            b.version.as_deref().map(version_key),
            &b.case,
        ))
    });
    Ok(out)
}

fn collect(
    dir: &Path,
    kind: &str,
    version: Option<&str>,
    out: &mut Vec<Fixture>,
) -> io::Result<()> {
    for path in sorted_dir(dir)? {
        if path.is_dir() {
            let sub = file_name(&path);
            collect(&path, kind, version.or(sub.as_deref()), out)?;
        } else if path.extension().is_some_and(|e| e == "cast") {
            let case = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_owned();
            out.push(Fixture {
                kind: kind.to_owned(),
                version: version.map(str::to_owned),
                case,
                path,
            });
        }
    }
    Ok(())
}

fn sorted_dir(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    Ok(paths)
}

fn file_name(path: &Path) -> Option<String> {
    path.file_name()?.to_str().map(str::to_owned)
}

/// A sort key that orders `2.1.99` before `2.1.197`: numeric parts compare as numbers.
pub fn version_key(version: &str) -> Vec<(u64, String)> {
    version
        .split(['.', '-'])
        .map(|p| {
            let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
            (digits.parse().unwrap_or(0), p[digits.len()..].to_owned())
        })
        .collect()
}

/// The kind of a recording at `path` inside a corpus: the folder above its version folder when
/// the parent looks like a version (`claude/2.1.197/x.cast`), else its parent folder.
pub fn kind_of(path: &Path) -> Option<String> {
    let parent = path.parent()?;
    let name = file_name(parent)?;
    if looks_like_version(&name) {
        file_name(parent.parent()?)
    } else {
        Some(name)
    }
}

/// Whether a folder name is a release number (`2.1.197`, `0.86.2`, `v1.0`).
pub fn looks_like_version(name: &str) -> bool {
    let n = name.trim_start_matches('v');
    n.split('.').count() >= 2
        && n.split('.')
            .all(|p| p.chars().next().is_some_and(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_numerically_and_kinds_come_from_the_path() {
        let mut v = vec!["2.1.197", "2.1.99", "2.1.332", "0.9.1"];
        v.sort_by_key(|s| version_key(s));
        assert_eq!(v, ["0.9.1", "2.1.99", "2.1.197", "2.1.332"]);
        assert_eq!(
            kind_of(Path::new("tests/fixtures/claude/2.1.197/approve.cast")).as_deref(),
            Some("claude")
        );
        assert_eq!(
            kind_of(Path::new("fixtures/claude/approve.cast")).as_deref(),
            Some("claude")
        );
        assert!(!looks_like_version("claude"));
    }
}
