#!/usr/bin/env bash
# Install the real agent CLIs into a scratch prefix OUTSIDE the repo, for tools/capture.py.
# Idempotent: rerunning skips what is already installed (set FORCE=1 to reinstall).
#
#   tools/install_agents.sh [PREFIX]        # default PREFIX=/opt/lookout-agents
#
# Result:
#   $PREFIX/node_modules/.bin/{claude,codex,gemini,qwen,opencode,cline}
#   $PREFIX/aider/bin/aider                  (python venv)
# crush (@charmland/crush) is attempted and expected to fail: its npm package is a thin
# installer whose postinstall downloads the real binary from the vendor's release host,
# which is unreachable here (only package registries are). The failure is logged, not fatal.
set -u
PREFIX="${1:-${LOOKOUT_AGENTS:-/opt/lookout-agents}}"
mkdir -p "$PREFIX"
cd "$PREFIX" || exit 1
[ -f package.json ] || echo '{"name":"lookout-agents","private":true}' > package.json

NPM_PKGS=(@anthropic-ai/claude-code @openai/codex @google/gemini-cli @qwen-code/qwen-code opencode-ai cline)
need=()
for p in "${NPM_PKGS[@]}"; do
  if [ "${FORCE:-0}" = 1 ] || [ ! -f "node_modules/$p/package.json" ]; then need+=("$p"); fi
done
if [ ${#need[@]} -gt 0 ]; then
  echo "npm install ${need[*]}"
  npm install --no-fund --no-audit --prefix "$PREFIX" "${need[@]}" || echo "WARN: npm install failed for some of: ${need[*]}"
fi

if ! command -v tmux >/dev/null; then
  (apt-get update && apt-get install -y tmux) || echo "WARN: tmux install failed"
fi

if [ "${FORCE:-0}" = 1 ] || [ ! -x "$PREFIX/aider/bin/aider" ]; then
  python3 -m venv "$PREFIX/aider" && "$PREFIX/aider/bin/pip" install -q aider-chat \
    || echo "WARN: aider install failed"
fi

# crush: expected to fail (see header). Keep the log for the record.
if [ ! -f "$PREFIX/crush/node_modules/@charmland/crush/package.json" ] || [ "${FORCE:-0}" = 1 ]; then
  mkdir -p "$PREFIX/crush"
  ( cd "$PREFIX/crush" && [ -f package.json ] || echo '{"name":"crush-try","private":true}' > package.json
    timeout 300 npm install --no-fund --no-audit --prefix "$PREFIX/crush" @charmland/crush ) \
    > "$PREFIX/crush/install.log" 2>&1 || echo "crush: install failed as expected (see $PREFIX/crush/install.log)"
fi

echo "--- versions"
B="$PREFIX/node_modules/.bin"
for c in claude codex gemini qwen opencode cline; do
  printf '%-9s ' "$c"; (timeout 60 "$B/$c" --version 2>&1 | tail -1) || echo "?"
done
printf '%-9s ' aider; (timeout 60 "$PREFIX/aider/bin/aider" --version 2>&1 | tail -1) || echo "?"
printf '%-9s ' crush; ( [ -x "$PREFIX/crush/node_modules/.bin/crush" ] && timeout 30 "$PREFIX/crush/node_modules/.bin/crush" --version 2>&1 | tail -1 ) || echo "not installed"
