#!/usr/bin/env bash
# lookout as a tmux plugin (TPM: `set -g @plugin '<this repo>'`; by hand: `run-shell /path/to/lookout.tmux`).
#
# It has the per-user lookout server watch this tmux server and write the @lookout_* options (the
# server starts if none runs, and outlives this script), and defines two format fragments for
# your own status line — a badge, not a theme:
#   @lookout_badge        the window's worst pane: ●blocked (red), ●done (teal), ●working (yellow)
#   @lookout_pane_badge   the same for the current pane
# Both show nothing while no lookout server writes them (`@lookout_live` unset).
# e.g.  set -g window-status-format         '#I:#W#F#{E:@lookout_badge}'
#       set -g window-status-current-format '#I:#W#F#{E:@lookout_badge}'
# Options: @lookout-bin (the lookout executable; default `lookout` on PATH),
#          @lookout-next-key (a key that jumps to the pane that most needs you; unset: none).

opt() { tmux show-option -gqv "$1"; }
bin="$(opt @lookout-bin)"
bin="${bin:-lookout}"

# A badge only while a server writes it: tmux itself unsets @lookout_live the moment lookout's
# connection to it goes, so a killed server's leftover options show nothing.
fresh() { # $1 = what to show while the options have a writer
  printf '%s' "#{?@lookout_live,$1,}"
}
badge() { # $1 = the option holding the state
  fresh "#{?#{==:#{$1},blocked},#[fg=red#,bold] ●blocked#[default],#{?#{==:#{$1},done},#[fg=colour37#,bold] ●done#[default],#{?#{==:#{$1},working},#[fg=yellow] ●working#[default],}}}"
}
tmux set-option -gq @lookout_badge "$(badge @lookout_window_state)"
tmux set-option -gq @lookout_pane_badge "$(badge @lookout_state)"

key="$(opt @lookout-next-key)"
if [ -n "$key" ]; then
  tmux bind-key "$key" run-shell "$bin next --jump >/dev/null"
fi

# Attaches this tmux server (by its socket) and returns; errors go to tmux's message line.
socket="$(tmux display-message -p '#{socket_path}')"
if ! out="$(TMUX="$socket,0,0" "$bin" tmux --set-options 2>&1)"; then
  tmux display-message "lookout: $out"
fi
