//! Realistic agent screens for the benches: a Claude-class TUI at work, asking, and idle.

/// A screen body of `rows` lines: transcript, a status line, the prompt box and a footer.
pub fn claude_screen(rows: usize, cols: usize, frame: usize, state: &str) -> String {
    let spin = ['✻', '✶', '✳', '✢', '·', '✽'][frame % 6];
    let rule = "─".repeat(cols.min(200));
    let mut lines: Vec<String> = Vec::with_capacity(rows);
    let transcript = [
        "● I'll look at the failing test first.",
        "● Read(src/server/store.rs)",
        "  ⎿  Read 214 lines (ctrl+o to expand)",
        "● Bash(cargo test --test persistence -- --nocapture)",
        "  ⎿  running 7 tests",
        "     test kill_nine_resumes_panes ... ok",
        "     test result: ok. 7 passed; 0 failed",
        "● The WAL checkpoint runs once per tick; the fix is to batch the events.",
    ];
    let tail = match state {
        "blocked" => vec![
            rule.clone(),
            " Bash command".to_owned(),
            "   rm -rf target/debug/incremental".to_owned(),
            " Do you want to proceed?".to_owned(),
            " ❯ 1. Yes".to_owned(),
            "   2. Yes, and don't ask again for rm commands in this project".to_owned(),
            "   3. No, and tell Claude what to do differently (esc)".to_owned(),
        ],
        "idle" => vec![
            rule.clone(),
            "> ".to_owned(),
            rule.clone(),
            "  ? for shortcuts".to_owned(),
        ],
        _ => vec![
            format!(
                "{spin} Pondering… ({}s · ↓ {}.{}k tokens · esc to interrupt)",
                frame / 2,
                frame % 9,
                frame % 7
            ),
            String::new(),
            rule.clone(),
            "> ".to_owned(),
            rule.clone(),
            "  ⏵⏵ accept edits on (shift+tab to cycle)".to_owned(),
        ],
    };
    let body = rows.saturating_sub(tail.len());
    for i in 0..body {
        lines.push(transcript[i % transcript.len()].to_owned());
    }
    lines.extend(tail);
    // Like Claude Code, the cursor is parked in the input box after every draw (but a dialog's).
    let park = match state {
        "blocked" => String::new(),
        _ => park(rows),
    };
    format!("\x1b[2J\x1b[H{}{park}", lines.join("\r\n"))
}

/// Where Claude Code parks the cursor after a draw: in its input box, after `> `.
fn park(rows: usize) -> String {
    format!("\x1b[{};3H", rows.saturating_sub(2))
}

/// The bytes a working pane writes for one spinner frame: redraw the status line only.
pub fn spinner_update(rows: usize, frame: usize) -> String {
    let spin = ['✻', '✶', '✳', '✢', '·', '✽'][frame % 6];
    format!(
        "\x1b[{};1H\x1b[2K{spin} Pondering… ({}s · ↓ {}.{}k tokens · esc to interrupt)",
        rows.saturating_sub(5),
        frame / 2,
        frame % 9,
        frame % 7
    ) + &park(rows)
}
