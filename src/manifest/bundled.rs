//! The bundled manifests, compiled into the binary. A test checks this list equals `manifests/`.

/// `(file name, contents)` of every bundled manifest, in byte order of names.
pub const BUNDLED: &[(&str, &str)] = &[
    ("claude.toml", include_str!("../../manifests/claude.toml")),
    ("codex.toml", include_str!("../../manifests/codex.toml")),
    ("generic.toml", include_str!("../../manifests/generic.toml")),
];
