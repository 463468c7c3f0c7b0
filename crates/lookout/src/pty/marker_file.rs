//! `--marker-file PATH`: a file whose appended lines become markers, so a script (or a person in another
//! terminal) can mark a recording with `echo blocked >> PATH`.
//!
//! Polled from the pass-through loop: each poll reads only the bytes appended since the last one. Touches
//! only that file, read-only.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;

/// Follows a marker file from its size at creation, returning completed lines as labels.
#[derive(Debug)]
pub struct MarkerFile {
    path: PathBuf,
    offset: u64,
    partial: Vec<u8>,
}

impl MarkerFile {
    /// Starts following `path`; lines already in it are not markers of this run. A missing file is fine:
    /// it is read from its start once it appears.
    pub fn new(path: PathBuf) -> Self {
        let offset = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        MarkerFile {
            path,
            offset,
            partial: Vec::new(),
        }
    }

    /// Returns labels of lines completed since the last poll (trimmed, empty lines dropped).
    pub fn poll(&mut self) -> io::Result<Vec<String>> {
        let mut file = match File::open(&self.path) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(err),
        };
        let len = file.metadata()?.len();
        if len < self.offset {
            // Truncated or replaced: follow the new content from its start.
            self.offset = 0;
            self.partial.clear();
        }
        if len == self.offset {
            return Ok(Vec::new());
        }
        file.seek(SeekFrom::Start(self.offset))?;
        let mut fresh = Vec::new();
        file.take(len - self.offset).read_to_end(&mut fresh)?;
        self.offset += fresh.len() as u64;
        self.partial.extend_from_slice(&fresh);
        let mut labels = Vec::new();
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let label = String::from_utf8_lossy(&line).trim().to_string();
            if !label.is_empty() {
                labels.push(label);
            }
        }
        Ok(labels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn appended_lines_become_labels_and_old_lines_do_not() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("markers");
        std::fs::write(&path, "old\n").expect("write");
        let mut markers = MarkerFile::new(path.clone());
        assert_eq!(markers.poll().expect("poll"), Vec::<String>::new());

        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("open");
        write!(file, "blocked\n\nwork").expect("append");
        assert_eq!(markers.poll().expect("poll"), vec!["blocked".to_string()]);
        writeln!(file, "ing").expect("append");
        assert_eq!(markers.poll().expect("poll"), vec!["working".to_string()]);
    }

    #[test]
    fn a_missing_then_truncated_file_is_followed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("markers");
        let mut markers = MarkerFile::new(path.clone());
        assert!(markers.poll().expect("missing is fine").is_empty());
        std::fs::write(&path, "idle\nidle\n").expect("write");
        assert_eq!(markers.poll().expect("poll").len(), 2);
        std::fs::write(&path, "done\n").expect("truncate");
        assert_eq!(markers.poll().expect("poll"), vec!["done".to_string()]);
    }
}
