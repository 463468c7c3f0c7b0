//! Fuzzes the manifest parser and compiler (SPEC §2.1, §11): any text must compile or give
//! manifest errors, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = lookout::manifest::compile_file("fuzz.toml", text);
    }
});
