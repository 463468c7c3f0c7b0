//! The bundled manifests, compiled into the binary. A test checks this list equals `manifests/`.

/// `(file name, contents)` of every bundled manifest, in byte order of names.
pub const BUNDLED: &[(&str, &str)] = &[
    ("aider.toml", include_str!("../../manifests/aider.toml")),
    ("amp.toml", include_str!("../../manifests/amp.toml")),
    ("auggie.toml", include_str!("../../manifests/auggie.toml")),
    ("claude.toml", include_str!("../../manifests/claude.toml")),
    ("cline.toml", include_str!("../../manifests/cline.toml")),
    ("codex.toml", include_str!("../../manifests/codex.toml")),
    (
        "continue.toml",
        include_str!("../../manifests/continue.toml"),
    ),
    ("copilot.toml", include_str!("../../manifests/copilot.toml")),
    ("crush.toml", include_str!("../../manifests/crush.toml")),
    (
        "cursor-agent.toml",
        include_str!("../../manifests/cursor-agent.toml"),
    ),
    ("droid.toml", include_str!("../../manifests/droid.toml")),
    ("gemini.toml", include_str!("../../manifests/gemini.toml")),
    ("generic.toml", include_str!("../../manifests/generic.toml")),
    ("goose.toml", include_str!("../../manifests/goose.toml")),
    ("gptme.toml", include_str!("../../manifests/gptme.toml")),
    ("grok.toml", include_str!("../../manifests/grok.toml")),
    ("kilo.toml", include_str!("../../manifests/kilo.toml")),
    ("kimi.toml", include_str!("../../manifests/kimi.toml")),
    ("kiro.toml", include_str!("../../manifests/kiro.toml")),
    (
        "mastracode.toml",
        include_str!("../../manifests/mastracode.toml"),
    ),
    (
        "nanocoder.toml",
        include_str!("../../manifests/nanocoder.toml"),
    ),
    ("omp.toml", include_str!("../../manifests/omp.toml")),
    (
        "opencode.toml",
        include_str!("../../manifests/opencode.toml"),
    ),
    (
        "openhands.toml",
        include_str!("../../manifests/openhands.toml"),
    ),
    ("pi.toml", include_str!("../../manifests/pi.toml")),
    ("qoder.toml", include_str!("../../manifests/qoder.toml")),
    ("qwen.toml", include_str!("../../manifests/qwen.toml")),
    ("vibe.toml", include_str!("../../manifests/vibe.toml")),
];
