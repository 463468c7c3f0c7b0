//! Fuzzes the core (see docs/behaviour.md, Bad input): a world fed random PTY bytes, resizes in
//! and out of
//! bounds, process starts and exits, and ticks never panics and keeps its pane readable.
//! The body is `lookout::fuzzing::world`, shared with the stable smoke check (`tests/fuzz_smoke.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| lookout::fuzzing::world(data));
