//! The terminal a user would have, for the targets that run `lookout run`/`lookout record` (or a shell
//! around them) the way a person does: a PTY opened here whose far end runs a command, keys typed and
//! the window resized through it, and everything it prints collected for asserts.

use super::home::Home;
use super::wait_until;
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A PTY whose far end runs `argv`, its output collected by a reader thread.
pub struct Outer {
    pub master: Box<dyn MasterPty + Send>,
    pub writer: Box<dyn Write + Send>,
    pub child: Box<dyn Child + Send + Sync>,
    pub output: Arc<Mutex<Vec<u8>>>,
    /// Set when the reader thread has seen the end of the output.
    drained: Arc<AtomicBool>,
    /// Where lookout keeps its socket and state for this terminal (unless `env` moved them).
    pub home: Home,
}

impl Outer {
    /// Starts `argv` in a `cols`×`rows` PTY with `TERM=xterm-256color`, in a lookout home of its
    /// own ([`Home`]) and `env` added, in the temp dir.
    pub fn start(argv: &[&str], cols: u16, rows: u16, env: &[(&str, &str)]) -> Outer {
        let pair = native_pty_system()
            .openpty(size(cols, rows))
            .expect("open the outer PTY");
        let mut command = CommandBuilder::from_argv(argv.iter().map(Into::into).collect());
        command.cwd(std::env::temp_dir());
        command.env("TERM", "xterm-256color");
        let home = Home::new();
        for key in Home::removed() {
            command.env_remove(key);
        }
        for (key, value) in home.vars() {
            command.env(key, value);
        }
        for (key, value) in env {
            command.env(key, value);
        }
        let child = pair
            .slave
            .spawn_command(command)
            .expect("start lookout in the outer PTY");
        // Only the child may hold the slave end, or the reader never sees end-of-file.
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("outer reader");
        let writer = pair.master.take_writer().expect("outer writer");
        let output = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&output);
        let drained = Arc::new(AtomicBool::new(false));
        let seen_end = Arc::clone(&drained);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .expect("output lock")
                    .extend_from_slice(&buf[..n]);
            }
            seen_end.store(true, Ordering::Release);
        });
        Outer {
            master: pair.master,
            writer,
            child,
            output,
            drained,
            home,
        }
    }

    /// Everything printed so far, lossily decoded.
    pub fn text(&self) -> String {
        text_of(&self.output)
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.writer
            .write_all(bytes)
            .expect("type into the outer PTY");
        self.writer.flush().expect("flush the outer PTY");
    }

    /// Types `line` and Enter.
    pub fn type_line(&mut self, line: &str) {
        self.send(format!("{line}\r").as_bytes());
    }

    pub fn wait_for_text(&self, needle: &str) {
        wait_until(
            &format!("output containing {needle:?}"),
            || self.text().contains(needle),
            || self.text(),
        );
    }

    pub fn resize(&self, cols: u16, rows: u16) {
        self.master
            .resize(size(cols, rows))
            .expect("resize the outer PTY");
    }

    /// Waits for the far end to exit and returns its exit code, once its last output is collected
    /// (the exit can be seen before the reader thread has read the final bytes).
    pub fn wait_exit(&mut self) -> u32 {
        let mut code = None;
        let child = &mut self.child;
        let output = &self.output;
        wait_until(
            "the outer process to exit",
            || {
                code = child
                    .try_wait()
                    .expect("try_wait")
                    .map(|status| status.exit_code());
                code.is_some()
            },
            || text_of(output),
        );
        // Not an assert: a grandchild may keep the PTY open; then the output so far is all there is.
        let end = Instant::now() + super::deadline();
        while !self.drained.load(Ordering::Acquire) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        code.unwrap_or(u32::MAX)
    }
}

impl Drop for Outer {
    fn drop(&mut self) {
        // A failed test must not leave lookout running on a PTY nobody reads.
        let _ = self.child.kill();
    }
}

/// The text in `output`; a free function so a wait can read it while the `Outer` is borrowed mutably.
pub fn text_of(output: &Mutex<Vec<u8>>) -> String {
    String::from_utf8_lossy(&output.lock().expect("output lock")).into_owned()
}

fn size(cols: u16, rows: u16) -> PtySize {
    PtySize {
        rows,
        cols,
        pixel_width: 0,
        pixel_height: 0,
    }
}
