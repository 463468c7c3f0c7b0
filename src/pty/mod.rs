//! The edge that touches terminals: PTY spawning and pass-through, asciicast files, process probes, tmux.
