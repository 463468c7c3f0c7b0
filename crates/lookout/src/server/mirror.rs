//! The JSON mirror fallback (see docs/protocol.md, The JSON mirror): when `lookout report` cannot
//! reach the socket it leaves its
//! requests in `<mirror dir>/<pane>.json`, written atomically (temp file + rename); the server
//! ingests and removes such files on its tick. A file whose pane is not open is kept for it up to
//! [`UNCLAIMED_KEEP`] past the later of its writing and the server's start (a restarted server's
//! panes come back over a few seconds, not one tick; a hook that fired long before the server
//! started still waits for them).
//!
//! A file holds `{"v":1,"pane":…,"requests":[{"method":"report.…","params":{…}}…]}` so a session
//! announcement and the report after it survive together. A bad file is moved aside as
//! `<name>.bad` and reported, never a panic. Touches the mirror directory only.

use crate::private;
use crate::protocol::{MAX_LINE, Method, Request, parse_request};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How many requests one pane's file keeps (the oldest go first): a hook firing while the server
/// is down for a long time must not grow a file without bound.
pub const MAX_REQUESTS: usize = 64;

/// How long a mirror file whose pane is not open waits for the pane before it is taken anyway
/// (and its reports refused `unknown_pane` into the log), counted from its writing or from the
/// server's start, whichever is later.
pub const UNCLAIMED_KEEP: Duration = Duration::from_secs(10);

/// One queued request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Queued {
    /// A `report.*` method.
    pub method: String,
    /// Its params.
    pub params: Value,
}

impl Queued {
    /// The request for typed `params`.
    pub fn of<M: Method>(params: &M) -> serde_json::Result<Queued> {
        Ok(Queued {
            method: M::NAME.to_owned(),
            params: serde_json::to_value(params)?,
        })
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct MirrorFile {
    v: u32,
    pane: String,
    requests: Vec<Queued>,
}

/// The file name for a pane: its id with everything but `[A-Za-z0-9._-]` percent-encoded, so any
/// id maps to one plain file inside the directory.
pub fn file_name(pane: &str) -> String {
    let mut name = String::new();
    for b in pane.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' => name.push(char::from(b)),
            b'.' if !name.is_empty() => name.push('.'),
            _ => name.push_str(&format!("%{b:02X}")),
        }
    }
    name + ".json"
}

/// Appends `requests` to the pane's mirror file, atomically.
pub fn write(dir: &Path, pane: &str, requests: &[Queued]) -> io::Result<PathBuf> {
    // lookout's own directory, and no symlink followed in it.
    private::own_dir(dir)?;
    let path = dir.join(file_name(pane));
    let mut queued = private::read_own(&path, MAX_LINE as u64)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<MirrorFile>(&bytes).ok())
        .map(|f| f.requests)
        .unwrap_or_default();
    queued.extend_from_slice(requests);
    let excess = queued.len().saturating_sub(MAX_REQUESTS);
    queued.drain(..excess);
    let body = serde_json::to_vec(&MirrorFile {
        v: 1,
        pane: pane.to_owned(),
        requests: queued,
    })
    .map_err(io::Error::other)?;
    // The temp name starts with a dot so the server never ingests a half-written file; it is
    // fresh (O_EXCL), so a planted name or link is skipped, never written through.
    let (tmp, mut file) = private::create_temp(dir, &file_name(pane))?;
    file.write_all(&body)?;
    file.sync_all()?;
    fs::rename(&tmp, &path)?;
    Ok(path)
}

/// What one mirror file held.
#[derive(Debug)]
pub enum Ingested {
    /// Requests parsed from a file (each either a request or why it is not one).
    Requests(PathBuf, Vec<Request>),
    /// A file that could not be read as a mirror file; it was moved to `moved`.
    Bad {
        /// The file.
        path: PathBuf,
        /// Where it went.
        moved: PathBuf,
        /// Why.
        reason: String,
    },
}

/// Takes the mirror files in `dir` whose pane is `open` (or that waited [`UNCLAIMED_KEEP`] since
/// they were written and since `started`, the server's start, or are bad): parses each, removes
/// it, and returns its requests. A missing directory is an empty one.
pub fn ingest(dir: &Path, started: SystemTime, open: impl Fn(&str) -> bool) -> Vec<Ingested> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| is_mirror_file(p))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| take(p, started, &open))
        .collect()
}

/// How many mirror files in `dir` wait for the server (`lookout status` says it beside the last
/// undelivered report). A missing directory holds none.
pub fn waiting(dir: &Path) -> usize {
    fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| is_mirror_file(&e.path()))
            .count()
    })
}

/// A pane's mirror file, not a temp file still being written (those start with a dot).
fn is_mirror_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or(".");
    !name.starts_with('.') && name.ends_with(".json")
}

fn take(path: PathBuf, started: SystemTime, open: &impl Fn(&str) -> bool) -> Option<Ingested> {
    let parsed = read(&path);
    if let Ok((pane, _)) = &parsed
        && !open(pane)
        && !waited(&path, started)
    {
        return None;
    }
    Some(match parsed {
        Ok((_, requests)) => {
            let _ = fs::remove_file(&path);
            Ingested::Requests(path, requests)
        }
        Err(reason) => {
            let moved = path.with_extension("json.bad");
            let _ = fs::rename(&path, &moved);
            Ingested::Bad {
                path,
                moved,
                reason,
            }
        }
    })
}

/// Whether the file has waited its [`UNCLAIMED_KEEP`]: since its modification time and since
/// `started`. A file written before the server started has waited for this server only since then.
fn waited(path: &Path, started: SystemTime) -> bool {
    fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .map(|t| {
            let since = t.max(started);
            SystemTime::now().duration_since(since).unwrap_or_default() >= UNCLAIMED_KEEP
        })
        .unwrap_or(true)
}

fn read(path: &Path) -> Result<(String, Vec<Request>), String> {
    // Only this user's regular files: another user's report must never move a pane.
    let bytes = private::read_own(path, MAX_LINE as u64).map_err(|e| e.to_string())?;
    let file: MirrorFile =
        serde_json::from_slice(&bytes).map_err(|e| format!("not a mirror file: {e}"))?;
    if file.v != 1 {
        return Err(format!("mirror file version {} is not supported", file.v));
    }
    let mut out = Vec::new();
    for q in file.requests {
        if !q.method.starts_with("report.") {
            return Err(format!(
                "`{}` is not a report; a mirror file carries reports only",
                q.method
            ));
        }
        out.push(parse_request(&q.method, q.params).map_err(|e| e.message)?);
    }
    Ok((file.pane, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_plain_files() {
        assert_eq!(file_name("run-12"), "run-12.json");
        assert_eq!(file_name("../x"), "%2E.%2Fx.json");
        assert_eq!(file_name("a/b c"), "a%2Fb%20c.json");
    }

    #[test]
    fn write_appends_and_ingest_takes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let q = |seq: u64| Queued {
            method: "report.state".into(),
            params: json!({"pane":"p","source":"h:claude","seq":seq,"state":"working"}),
        };
        assert_eq!(waiting(&dir.path().join("missing")), 0);
        write(dir.path(), "p", &[q(1)]).expect("write");
        write(dir.path(), "p", &[q(2)]).expect("write");
        fs::write(dir.path().join("junk.json"), b"{not json").expect("junk");
        fs::write(dir.path().join(".p.json.tmp"), b"").expect("a temp file");
        assert_eq!(
            waiting(dir.path()),
            2,
            "p.json and junk.json wait, the temp file does not"
        );
        assert!(
            ingest(dir.path(), SystemTime::UNIX_EPOCH, |_| false).len() == 1,
            "only the bad file is taken while its pane is not open"
        );
        fs::write(dir.path().join("junk.json"), b"{not json").expect("junk");
        let got = ingest(dir.path(), SystemTime::UNIX_EPOCH, |p| p == "p");
        assert_eq!(got.len(), 2);
        assert!(matches!(&got[0], Ingested::Bad { .. }));
        let Ingested::Requests(_, requests) = &got[1] else {
            panic!("requests")
        };
        assert_eq!(requests.len(), 2);
        assert!(
            ingest(dir.path(), SystemTime::UNIX_EPOCH, |_| true).is_empty(),
            "files are removed or moved aside"
        );
        assert!(dir.path().join("junk.json.bad").exists());
        assert_eq!(waiting(dir.path()), 0);
    }
}
