//! Pane names as people type them, resolved in one place for every command that takes a pane
//! (`send`, `wait`, `seen`, `explain`): a lookout pane id is itself; a bare tmux id (`%3`) is that
//! pane of the tmux server this shell runs in; a tmux pane's place (`work:2.0`, as the board shows
//! it, with or without the window name after it) or its title (`select-pane -T`) names that pane —
//! an error when several panes answer to it. Touches the socket (`pane.list`) and tmux
//! (`list-panes`, once per tmux server).

use crate::client::panes;
use crate::panes::PaneState;
use crate::pty::tmux::Socket;
use crate::server::Client;
use anyhow::bail;
use std::collections::HashMap;

/// The lookout pane id `name` means (unchanged when nothing answers to it: the server then says
/// the pane is unknown).
pub fn resolve(client: &mut Client, name: &str) -> anyhow::Result<String> {
    let id = in_this_tmux(name);
    let (_, states) = panes(client)?;
    if states.iter().any(|s| s.pane == id) {
        return Ok(id);
    }
    let found: Vec<String> = friendly(&states)
        .into_iter()
        .filter(|(_, names)| names.iter().any(|n| n == name))
        .map(|(id, _)| id)
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Ok(id),
        many => bail!(
            "`{name}` names {} panes ({}): give the pane id",
            many.len(),
            many.join(", ")
        ),
    }
}

/// A bare tmux id like `%3` means that pane of the tmux server this shell runs in.
pub fn in_this_tmux(name: &str) -> String {
    match std::env::var("TMUX")
        .ok()
        .and_then(|t| Socket::from_env(&t))
    {
        Some(socket) if name.starts_with('%') => socket.pane_id(name),
        _ => name.to_owned(),
    }
}

/// Every tmux pane's friendly names among `states`: pane id → its place (`work:2.0`), its place
/// with the window name (`work:2.0 api`, as the board shows it) and its title.
pub fn friendly(states: &[PaneState]) -> HashMap<String, Vec<String>> {
    let mut by_server: HashMap<Socket, Vec<(String, String)>> = HashMap::new();
    for state in states {
        if let Some((socket, id)) = Socket::of_pane_id(&state.pane) {
            let panes = by_server.entry(socket).or_default();
            panes.push((id.to_owned(), state.pane.clone()));
        }
    }
    let mut names = HashMap::new();
    for (socket, panes) in by_server {
        let format = "#{pane_id}\t#{session_name}:#{window_index}.#{pane_index}\t#{window_name}\t#{pane_title}";
        let Ok(out) = socket
            .command()
            .args(["list-panes", "-a", "-F", format])
            .output()
        else {
            continue;
        };
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let f: Vec<&str> = line.splitn(4, '\t').collect();
            let [tmux_id, place, window, title] = f[..] else {
                continue;
            };
            if let Some((_, id)) = panes.iter().find(|(t, _)| t == tmux_id) {
                let mut these = vec![place.to_owned(), format!("{place} {window}")];
                if !title.is_empty() {
                    these.push(title.to_owned());
                }
                names.insert(id.clone(), these);
            }
        }
    }
    names
}
