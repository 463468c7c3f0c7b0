//! Fuzzes the manifest parser and compiler (see manifests/README.md, Validation): any text
//! compiles or gives
//! manifest errors, never a panic.
//! The body is `lookout::fuzzing::manifest`, shared with the stable smoke check (`tests/fuzz_smoke.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| lookout::fuzzing::manifest(data));
