//! The fuzz targets' smoke check on stable Rust (`.ci/run` runs it with the other tests): each
//! target body (`lookout::fuzzing`, the same code `fuzz/fuzz_targets/*.rs` hand to libFuzzer)
//! runs for about two seconds on random bytes and on inputs shaped like the real thing. It
//! catches a target that panics on easy inputs; the long search stays `cargo fuzz run` (fuzz/).

use proptest::prelude::*;
use proptest::strategy::ValueTree as _;
use proptest::test_runner::{Config, TestRunner};
use std::time::{Duration, Instant};

/// How long each target runs.
const BUDGET: Duration = Duration::from_secs(2);

/// Runs `target` on inputs from `strategy` until the budget is spent (at least 16 inputs).
fn smoke(strategy: impl Strategy<Value = Vec<u8>>, target: fn(&[u8])) {
    let mut runner = TestRunner::new(Config {
        cases: 1,
        failure_persistence: None,
        ..Config::default()
    });
    let end = Instant::now() + BUDGET;
    let mut runs = 0;
    while runs < 16 || Instant::now() < end {
        let input = strategy.new_tree(&mut runner).expect("an input").current();
        target(&input);
        runs += 1;
    }
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..2048)
}

#[test]
fn protocol() {
    let lines = prop_oneof![
        bytes(),
        (any::<i64>(), "[a-z.]{0,16}", "[ -~]{0,64}").prop_map(|(id, method, params)| {
            format!("{{\"id\":{id},\"method\":\"{method}\",\"params\":{params}}}").into_bytes()
        }),
    ];
    smoke(lines, lookout::fuzzing::protocol);
}

#[test]
fn manifest() {
    let texts = prop_oneof![
        bytes(),
        ("[a-z]{1,8}", "[ -~]{0,40}", "[a-z_]{1,10}").prop_map(|(kind, re, region)| {
            format!("kind='{kind}'\n[[screen]]\nid='r'\nstate='working'\nregion='{region}'\nregex=['{re}']\n")
                .into_bytes()
        }),
    ];
    smoke(texts, lookout::fuzzing::manifest);
}

#[test]
fn replay() {
    let event = (
        0.0f64..200.0,
        prop_oneof!["o", "r", "m", "i", "x"],
        "[ -~]{0,30}",
    )
        .prop_map(|(t, code, data)| format!("[{t},\"{code}\",{}]", serde_json::json!(data)));
    let casts = prop_oneof![
        bytes(),
        (
            0u32..1200,
            0u32..600,
            proptest::collection::vec(event, 0..30)
        )
            .prop_map(|(w, h, events)| {
                format!(
                    "{{\"version\":2,\"width\":{w},\"height\":{h}}}\n{}\n",
                    events.join("\n")
                )
                .into_bytes()
            }),
    ];
    smoke(casts, lookout::fuzzing::replay);
}

#[test]
fn world() {
    smoke(bytes(), lookout::fuzzing::world);
}
