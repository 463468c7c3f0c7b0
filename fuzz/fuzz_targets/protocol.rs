//! Fuzzes the wire parser (SPEC §8.1, §11): any bytes as a request line must give a request or a
//! structured error, never a panic; a parsed request's error line must serialize.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lookout::server::protocol::{Response, parse_line};

fuzz_target!(|data: &[u8]| {
    match parse_line(data) {
        Ok((id, _request)) => {
            let _ = Response::ok(&id, serde_json::Value::Null);
        }
        Err((id, error)) => {
            let line = Response::err(&id, error);
            assert!(line.starts_with('{'));
        }
    }
});
