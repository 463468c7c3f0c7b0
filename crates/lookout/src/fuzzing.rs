//! The bodies of the fuzz targets (`fuzz/fuzz_targets/*.rs`, run with cargo-fuzz) and of their
//! smoke check on stable Rust (`tests/fuzz_smoke.rs`, run by `.ci/run`): one function per target,
//! each taking arbitrary bytes and either returning or panicking — a panic is the bug. Written
//! once here so the fuzzer and CI exercise exactly the same code.

use crate::asciicast;
use crate::manifest::Catalog;
use crate::resources::{Clock, ProcessEvent};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The longest recording the replay target plays: replay ticks through recording time (bounded
/// at 24 h by `asciicast::MAX_TIME`), and a fuzzer wants many short runs, not one long one.
pub const REPLAY_SECS: u64 = 120;

fn catalog() -> Arc<Catalog> {
    static CATALOG: OnceLock<Arc<Catalog>> = OnceLock::new();
    CATALOG
        .get_or_init(|| Arc::new(Catalog::bundled().0))
        .clone()
}

/// The wire parser: any line gives a request or a structured error, and its answer serializes.
pub fn protocol(data: &[u8]) {
    use crate::protocol::{Response, parse_line};
    let line = match parse_line(data) {
        Ok((id, _)) => Response::ok(&id, &serde_json::Value::Null),
        Err((id, error)) => Response::err(&id, error),
    };
    assert!(line.starts_with('{'), "{line}");
}

/// The manifest parser and compiler: any text compiles or gives manifest errors.
pub fn manifest(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = crate::manifest::compile_file("fuzz.toml", text);
    }
}

/// Recordings: any bytes read as an asciicast or give a line-numbered error; a short one that
/// reads replays through the bundled manifests.
pub fn replay(data: &[u8]) {
    match asciicast::read(data) {
        Err(e) => assert!(e.line >= 1, "{e}"),
        Ok(cast) => {
            if cast
                .events
                .iter()
                .all(|e| e.time <= Duration::from_secs(REPLAY_SECS))
            {
                let _ = crate::replay::replay(&cast, catalog(), "claude");
            }
        }
    }
}

/// A world fed random bytes, resizes (in and out of bounds), process starts and exits, and
/// ticks: the pane always stays readable.
pub fn world(data: &[u8]) {
    let mut world = crate::world(catalog());
    let opened = crate::panes::open_pane(&mut world, "p", 24, 80, None, None);
    assert!(opened.is_ok(), "{opened:?}");
    let mut bytes = data.iter().copied();
    while let Some(op) = bytes.next() {
        match op % 5 {
            0 | 1 => {
                let n = usize::from(bytes.next().unwrap_or(0));
                let chunk: Vec<u8> = bytes.by_ref().take(n).collect();
                let _ = crate::panes::feed(&mut world, "p", &chunk);
            }
            2 => {
                let rows = u16::from(bytes.next().unwrap_or(0)) * 4;
                let cols =
                    u16::from_le_bytes([bytes.next().unwrap_or(0), bytes.next().unwrap_or(0)]);
                let _ = crate::panes::resize(&mut world, "p", rows, cols);
            }
            3 => {
                let event = if bytes.next().unwrap_or(0) % 2 == 0 {
                    ProcessEvent::Started {
                        pid: Some(1),
                        argv: vec!["claude".into()],
                        comm: None,
                    }
                } else {
                    ProcessEvent::Exited
                };
                let _ = crate::panes::process(&mut world, "p", event);
            }
            _ => {
                let ms = u64::from(bytes.next().unwrap_or(0)) * 10;
                world
                    .resource_mut::<Clock>()
                    .advance(Duration::from_millis(ms));
                world.run_schedule(crate::Tick);
            }
        }
    }
    world.run_schedule(crate::Tick);
    assert!(crate::panes::state(&world, "p").is_ok());
}
