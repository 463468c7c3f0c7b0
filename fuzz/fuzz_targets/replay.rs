//! Fuzzes recordings: any bytes read as an asciicast or give a
//! line-numbered error, and a short recording that reads replays without a panic or a hang.
//! The body is `lookout::fuzzing::replay`, shared with the stable smoke check (`tests/fuzz_smoke.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| lookout::fuzzing::replay(data));
