//! The terminal lookout itself runs in (the "outer" terminal): is it a TTY, how big is it, and a guard
//! that puts it in raw mode and always puts it back.
//!
//! Touches only file descriptor 0 (stdin), through safe termios and ioctl wrappers (nix, rustix).

use nix::sys::termios::{self, SetArg, Termios};
use std::io::{self, IsTerminal};
use std::os::fd::AsFd;

/// A terminal size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowSize {
    /// Width in columns.
    pub cols: u16,
    /// Height in rows.
    pub rows: u16,
}

impl WindowSize {
    /// The size used when there is no outer terminal to copy (a script, a pipe).
    pub const FALLBACK: WindowSize = WindowSize {
        cols: 120,
        rows: 40,
    };
}

/// Whether stdin is a terminal (and so keys, raw mode and SIGWINCH make sense).
pub fn stdin_is_tty() -> bool {
    io::stdin().is_terminal()
}

/// The size of the terminal on stdin, or `None` when stdin is not a terminal or reports a zero size.
pub fn window_size() -> Option<WindowSize> {
    let size = rustix::termios::tcgetwinsize(io::stdin().as_fd()).ok()?;
    // Some emulators report 0×0 before the first paint; a 0-sized PTY breaks most programs.
    (size.ws_col > 0 && size.ws_row > 0).then_some(WindowSize {
        cols: size.ws_col,
        rows: size.ws_row,
    })
}

/// The size to start a child at: each dimension given wins, else the outer terminal's, else 120×40.
pub fn initial_size(cols: Option<u16>, rows: Option<u16>) -> WindowSize {
    let outer = window_size().unwrap_or(WindowSize::FALLBACK);
    WindowSize {
        cols: cols.filter(|&c| c > 0).unwrap_or(outer.cols),
        rows: rows.filter(|&r| r > 0).unwrap_or(outer.rows),
    }
}

/// Keeps stdin's terminal in raw mode while alive and restores the saved modes on drop.
///
/// Raw mode is what lets every key (Ctrl-C, Ctrl-Z, pastes) reach the child untouched: the child's own
/// PTY does the line discipline.
#[derive(Debug)]
pub struct RawModeGuard {
    saved: Option<Termios>,
}

impl RawModeGuard {
    /// Switches stdin's terminal to raw mode, remembering the current modes.
    pub fn enter() -> io::Result<Self> {
        let stdin = io::stdin();
        let saved = termios::tcgetattr(stdin.as_fd()).map_err(io::Error::from)?;
        let mut raw = saved.clone();
        termios::cfmakeraw(&mut raw);
        termios::tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &raw).map_err(io::Error::from)?;
        Ok(RawModeGuard { saved: Some(saved) })
    }

    /// Restores the saved modes now; later calls (and the drop) do nothing.
    ///
    /// `TCSADRAIN` rather than `TCSAFLUSH`: output already written is shown and keys typed ahead are kept.
    pub fn restore(&mut self) -> io::Result<()> {
        match self.saved.take() {
            Some(saved) => termios::tcsetattr(io::stdin().as_fd(), SetArg::TCSADRAIN, &saved)
                .map_err(io::Error::from),
            None => Ok(()),
        }
    }
}

impl Drop for RawModeGuard {
    fn drop(&mut self) {
        // Nothing sensible to do if the terminal is already gone (SIGHUP); the attempt is enough.
        let _ = self.restore();
    }
}

/// The bytes that ask the outer terminal for a desktop notification: OSC 9 (iTerm2, WezTerm,
/// Windows Terminal, Ghostty), OSC 777 (foot, WezTerm, urxvt) or OSC 99 (kitty). Inside tmux the
/// sequence is wrapped for tmux's passthrough (`allow-passthrough on`). Control characters in the
/// text are dropped: they would end the sequence early.
pub fn desktop_notification(osc: u16, title: &str, text: &str, in_tmux: bool) -> Vec<u8> {
    let clean = |s: &str| s.chars().filter(|c| !c.is_control()).collect::<String>();
    let (title, text) = (clean(title).replace(';', ","), clean(text));
    let sequence = match osc {
        777 => format!("\x1b]777;notify;{title};{text}\x07"),
        99 => format!("\x1b]99;;{text}\x1b\\"),
        _ => format!("\x1b]9;{text}\x07"),
    };
    if !in_tmux {
        return sequence.into_bytes();
    }
    let mut wrapped = b"\x1bPtmux;".to_vec();
    for b in sequence.bytes() {
        if b == 0x1b {
            wrapped.push(0x1b);
        }
        wrapped.push(b);
    }
    wrapped.extend_from_slice(b"\x1b\\");
    wrapped
}
