//! Fuzzes the wire parser (see docs/protocol.md, Framing): any bytes as a request line give a
//! request or a
//! structured error, never a panic; the answer line serializes.
//! The body is `lookout::fuzzing::protocol`, shared with the stable smoke check (`tests/fuzz_smoke.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| lookout::fuzzing::protocol(data));
