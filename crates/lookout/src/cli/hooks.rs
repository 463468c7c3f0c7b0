//! `lookout hooks install|uninstall --agent claude|codex|gemini|qwen [--project] [--dry-run]`: put
//! lookout's hooks into an agent's own settings file, or take exactly them out again (see
//! docs/hooks.md).
//!
//! Idempotent and conservative: the file is parsed, lookout's entries are added only where missing
//! and every other key, hook and comment stays as it was (JSON keys keep their order; Codex's TOML
//! is edited with `toml_edit`, format-preserving); a file that does not parse, before or after, is
//! refused; the old file is kept as `<file>.lookout-backup` before a change; the change is printed
//! (`--dry-run` prints it instead). How the file itself is handled — symlinks, mode, owner,
//! read-only, atomic replace — is `settings_file`'s. Touches one settings file and its backup.

use super::settings_file::{self, SettingsFile};
use anyhow::{Context as _, bail};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `lookout hooks`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Add lookout's hooks to the agent's settings (existing hooks are kept).
    Install(Target),
    /// Remove exactly the hooks `install` added.
    Uninstall(Target),
}

/// The agents whose hooks `install` knows.
const AGENTS: [&str; 4] = ["claude", "codex", "gemini", "qwen"];

#[derive(Debug, clap::Args)]
struct Target {
    /// The agent whose settings to edit.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(AGENTS))]
    agent: String,
    /// The project's settings (in the current directory) instead of the user's.
    #[arg(long, conflicts_with = "user")]
    project: bool,
    /// The user's settings (the default).
    #[arg(long)]
    user: bool,
    /// Print what would change; write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// Which hook event says what, per agent (the reports are the same for all of them).
const CLAUDE: &[(&str, &str)] = &[
    ("UserPromptSubmit", "state working"),
    ("PermissionRequest", "state blocked"),
    ("PostToolUse", "state working"),
    ("Stop", "turn-end"),
];
const GEMINI: &[(&str, &str)] = &[
    ("BeforeAgent", "state working"),
    ("AfterTool", "state working"),
    ("AfterAgent", "turn-end"),
];
const QWEN: &[(&str, &str)] = &[
    ("UserPromptSubmit", "state working"),
    ("PostToolUse", "state working"),
    ("Stop", "turn-end"),
];

/// Runs `lookout hooks`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (target, install) = match args.action {
        Action::Install(t) => (t, true),
        Action::Uninstall(t) => (t, false),
    };
    let exe = std::env::current_exe().context("finding the lookout executable")?;
    let file = settings_file::open(&settings_path(&target.agent, target.project)?)?;
    let (path, before) = (file.path.clone(), file.text.clone());
    let after = match target.agent.as_str() {
        "codex" => edit_codex(&before, &exe, install)
            .with_context(|| format!("{}: nothing was changed", path.display()))?,
        agent => {
            let events = match agent {
                "claude" => CLAUDE,
                "gemini" => GEMINI,
                _ => QWEN,
            };
            edit_json(&before, agent, events, &exe, install)
                .with_context(|| format!("{} is not a settings file I can edit", path.display()))?
        }
    };
    if after == before {
        println!("{}: nothing to change", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let (after, restored) = if install {
        (after, false)
    } else {
        original_if_same(&file, after)
    };
    let changes = diff(&before, &after);
    if target.dry_run {
        println!("--- {}\n+++ {} (after)", path.display(), path.display());
        print!("{changes}");
        return Ok(ExitCode::SUCCESS);
    }
    write(&file, install, &after, restored)?;
    let verb = if install {
        "installed in"
    } else {
        "removed from"
    };
    println!("lookout hooks {verb} {}; changed:", path.display());
    print!("{changes}");
    Ok(ExitCode::SUCCESS)
}

fn settings_path(agent: &str, project: bool) -> anyhow::Result<PathBuf> {
    let dir = |name: &str| -> anyhow::Result<PathBuf> {
        if project {
            return Ok(std::env::current_dir()?.join(name));
        }
        let home = std::env::var_os("HOME").context("$HOME is not set")?;
        Ok(PathBuf::from(home).join(name))
    };
    Ok(match agent {
        "claude" if !project => std::env::var_os("CLAUDE_CONFIG_DIR")
            .map_or_else(|| dir(".claude"), |d| Ok(PathBuf::from(d)))?
            .join("settings.json"),
        "claude" => dir(".claude")?.join("settings.json"),
        "codex" if project => bail!("Codex reads `notify` only from the user's config.toml"),
        "codex" => std::env::var_os("CODEX_HOME")
            .map_or_else(|| dir(".codex"), |d| Ok(PathBuf::from(d)))?
            .join("config.toml"),
        "gemini" => dir(".gemini")?.join("settings.json"),
        _ => dir(".qwen")?.join("settings.json"),
    })
}

/// The hook command for `report` (e.g. `state working`).
fn command(exe: &Path, agent: &str, report: &str) -> String {
    format!("{} report --agent {agent} --quiet {report}", quote(exe))
}

fn quote(path: &Path) -> String {
    let text = path.display().to_string();
    if text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+".contains(&b))
    {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Whether `command` is one `install` writes for `agent` (from whichever lookout executable).
fn is_ours(command: &str, agent: &str) -> bool {
    let Some((program, rest)) = command.split_once(" report --agent ") else {
        return false;
    };
    let program = program.trim_matches('\'');
    Path::new(program)
        .file_name()
        .is_some_and(|n| n == "lookout")
        && rest.starts_with(&format!("{agent} --quiet "))
}

/// Claude-style settings: `{"hooks": {EVENT: [{"hooks": [{"type":"command","command":…}]}]}}`.
fn edit_json(
    text: &str,
    agent: &str,
    events: &[(&str, &str)],
    exe: &Path,
    install: bool,
) -> anyhow::Result<String> {
    let mut root: Value = if text.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(text)?
    };
    let Some(settings) = root.as_object_mut() else {
        bail!("the top level is not an object");
    };
    let hooks = settings
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(hooks) = hooks.as_object_mut() else {
        bail!("`hooks` is not an object");
    };
    for (event, report) in events {
        let groups = hooks
            .entry(*event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Some(groups) = groups.as_array_mut() else {
            bail!("`hooks.{event}` is not a list");
        };
        let ours = |h: &Value| h["command"].as_str().is_some_and(|c| is_ours(c, agent));
        let present = groups
            .iter()
            .any(|g| g["hooks"].as_array().is_some_and(|hs| hs.iter().any(ours)));
        if install && !present {
            let hook = json!({"type": "command", "command": command(exe, agent, report)});
            groups.push(json!({ "hooks": [hook] }));
        } else if !install {
            for group in groups.iter_mut() {
                if let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                    list.retain(|h| !ours(h));
                }
            }
            groups.retain(|g| g["hooks"].as_array().is_none_or(|hs| !hs.is_empty()));
        }
    }
    hooks.retain(|_, groups| groups.as_array().is_none_or(|g| !g.is_empty()));
    if hooks.is_empty() {
        settings.remove("hooks");
    }
    if !install && text.trim().is_empty() {
        return Ok(String::new());
    }
    Ok(serde_json::to_string_pretty(&root)? + "\n")
}

/// Codex: one top-level `notify = [...]`, never replacing a `notify` the user has. Edited with
/// `toml_edit`, which keeps every other byte (comments, layout, multi-line strings and arrays),
/// and refused when the file does not parse before or would not after.
fn edit_codex(text: &str, exe: &Path, install: bool) -> anyhow::Result<String> {
    let mut doc: toml_edit::DocumentMut = text.parse().context("config.toml does not parse")?;
    let mut ours = toml_edit::Array::new();
    ours.extend([
        "sh".to_owned(),
        "-c".to_owned(),
        command(exe, "codex", "codex-notify \"$1\""),
        "lookout-notify".to_owned(),
    ]);
    let is_ours = doc
        .get("notify")
        .and_then(toml_edit::Item::as_array)
        .is_some_and(|a| {
            a.len() == 4
                && a.get(0).and_then(toml_edit::Value::as_str) == Some("sh")
                && a.get(2)
                    .and_then(toml_edit::Value::as_str)
                    .is_some_and(|c| is_ours(c, "codex"))
        });
    match (install, is_ours, doc.contains_key("notify")) {
        // (an older install of ours, `state done`, is brought up to date in place)
        (true, true, _) | (true, false, false) => {
            doc["notify"] = toml_edit::value(ours);
        }
        (true, false, true) => bail!(
            "config.toml already has a `notify` program; add `lookout report --agent codex codex-notify \"$1\"` to it by hand"
        ),
        (false, true, _) => {
            doc.remove("notify");
        }
        (false, false, _) => {}
    }
    let out = doc.to_string();
    toml::from_str::<toml::Table>(&out).context("the edited config.toml would not parse")?;
    Ok(out)
}

/// The lines that differ, as `-`/`+` around the unchanged start and end.
fn diff(before: &str, after: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (before.lines().collect(), after.lines().collect());
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = String::new();
    for l in &a[head..a.len() - tail] {
        out.push_str(&format!("-{l}\n"));
    }
    for l in &b[head..b.len() - tail] {
        out.push_str(&format!("+{l}\n"));
    }
    out
}

/// Uninstalling: when what is left means the same as the file before the first install, that
/// file's own bytes (its formatting) come back, and the backup has served its purpose.
fn original_if_same(file: &SettingsFile, after: String) -> (String, bool) {
    let Ok(original) = std::fs::read_to_string(file.backup_path()) else {
        return (after, false);
    };
    let same = match (
        serde_json::from_str::<Value>(&original),
        serde_json::from_str::<Value>(&after),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => original.trim_end() == after.trim_end(),
    };
    if same {
        (original, true)
    } else {
        (after, false)
    }
}

/// Backup (installing: the file as it was before lookout first touched it), then an atomic
/// replace; a file that uninstalling leaves empty of everything, and that install created, is
/// removed.
fn write(file: &SettingsFile, install: bool, after: &str, restored: bool) -> anyhow::Result<()> {
    if install {
        file.back_up()?;
    }
    let backup = file.backup_path();
    let emptied = after.trim().is_empty()
        || serde_json::from_str::<Value>(after).is_ok_and(|v| v == json!({}));
    if emptied && !backup.exists() && !restored {
        // install created the file; nothing of the user's is in it.
        return std::fs::remove_file(&file.path)
            .with_context(|| format!("removing {}", file.path.display()));
    }
    file.replace(after)?;
    if restored {
        let _ = std::fs::remove_file(&backup);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXE: &str = "/opt/bin/lookout";

    #[test]
    fn claude_hooks_are_merged_kept_and_removed_exactly() {
        let mine = r#"{"model": "x", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}"#;
        let exe = Path::new(EXE);
        let once = edit_json(mine, "claude", CLAUDE, exe, true).expect("install");
        let twice = edit_json(&once, "claude", CLAUDE, exe, true).expect("again");
        assert_eq!(once, twice, "idempotent");
        let v: Value = serde_json::from_str(&once).expect("json");
        assert_eq!(v["model"], "x");
        assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["command"], "say done");
        assert_eq!(
            v["hooks"]["Stop"][1]["hooks"][0]["command"],
            "/opt/bin/lookout report --agent claude --quiet turn-end"
        );
        assert!(
            once.find("\"model\"") < once.find("\"hooks\""),
            "key order kept"
        );
        let back = edit_json(&once, "claude", CLAUDE, exe, false).expect("uninstall");
        let v: Value = serde_json::from_str(&back).expect("json");
        assert_eq!(v, serde_json::from_str::<Value>(mine).expect("mine"));
        assert_eq!(
            edit_json("", "claude", CLAUDE, exe, false).expect("empty"),
            ""
        );
        assert!(edit_json("[1]", "claude", CLAUDE, exe, true).is_err());
    }

    #[test]
    fn codex_gets_one_notify_line_and_a_users_notify_is_never_replaced() {
        let exe = Path::new(EXE);
        let config = "model = \"m\"\n# mine\n[profiles.x]\nmodel = \"y\"\n";
        let once = edit_codex(config, exe, true).expect("install");
        assert_eq!(edit_codex(&once, exe, true).expect("again"), once);
        let parsed: toml::Table = toml::from_str(&once).expect("toml");
        assert_eq!(
            parsed["notify"][2].as_str(),
            Some("/opt/bin/lookout report --agent codex --quiet codex-notify \"$1\"")
        );
        assert!(once.contains("# mine"));
        // An install of an older lookout (`state done` on every notice) is brought up to date.
        let old = once.replace("codex-notify \"$1\"", "state done");
        assert_ne!(old, once);
        assert_eq!(edit_codex(&old, exe, true).expect("update"), once);
        assert_eq!(edit_codex(&once, exe, false).expect("uninstall"), config);
        assert!(edit_codex("notify = [\"x\"]\n", exe, true).is_err());
    }

    /// The hooks installed here never report a denial or an interrupt (and Gemini's, Qwen's and
    /// Codex's not a dialog either): a kind they report for must keep reading its screen.
    #[test]
    fn every_kind_with_installed_hooks_keeps_reading_its_screen() {
        let (catalog, errors) = crate::manifest::Catalog::bundled();
        assert!(errors.is_empty(), "{errors:?}");
        for agent in AGENTS {
            let kind = catalog.named(agent).expect("bundled");
            assert_eq!(
                kind.policy,
                crate::manifest::HookPolicy::Evidence,
                "{agent}: under `dominate` its first hook report would stop the screen being read"
            );
        }
    }

    /// Text edits went wrong here: the line landed inside a multi-line string (the user's text
    /// changed) or inside a multi-line array (the file no longer parsed).
    #[test]
    fn codex_edits_keep_multi_line_strings_and_arrays_intact() {
        let exe = Path::new(EXE);
        let config = "instructions = \"\"\"\n[important] be careful\n\"\"\"\nwritable_roots = [\n  \"/a\",\n  # mine\n]\n[profiles.x]\nmodel = \"y\"\n";
        let once = edit_codex(config, exe, true).expect("install");
        let parsed: toml::Table = toml::from_str(&once).expect("still TOML");
        let before: toml::Table = toml::from_str(config).expect("TOML");
        assert_eq!(parsed["instructions"], before["instructions"], "{once}");
        assert_eq!(parsed["writable_roots"], before["writable_roots"], "{once}");
        assert!(parsed["notify"].is_array(), "{once}");
        assert!(parsed["profiles"]["x"].get("notify").is_none(), "{once}");
        assert!(once.starts_with(config.split("[profiles.x]").next().unwrap_or_default()));
        assert_eq!(edit_codex(&once, exe, false).expect("uninstall"), config);
        assert!(
            edit_codex("a = [\n", exe, true).is_err(),
            "a file that does not parse"
        );
    }

    #[test]
    fn a_dry_run_diff_shows_only_what_changes() {
        assert_eq!(diff("a\nb\nc\n", "a\nx\nc\n"), "-b\n+x\n");
    }
}
