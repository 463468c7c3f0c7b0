//! What the live benches share: finding the `lookout` binary they measure.

use std::path::PathBuf;

/// `$LOOKOUT_BIN`, else the `lookout` of the profile the bench was built with (next to the bench
/// executable's `deps/` directory).
pub fn lookout_bin() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("LOOKOUT_BIN") {
        return Some(bin.into());
    }
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?.parent()?.join("lookout");
    bin.exists().then_some(bin)
}
