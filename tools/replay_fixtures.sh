#!/usr/bin/env bash
# Replay every fixture against the manifests in the WORK TREE (not the ones compiled into the binary):
# each manifests/<kind>.toml is copied with `override = true`, so it replaces the bundled rules of its
# kind. Use while editing a manifest, before rebuilding.
#   tools/replay_fixtures.sh [KIND…]        # default: every kind under tests/fixtures
#   VERBOSE=1 tools/replay_fixtures.sh codex # full timelines
#   NO_TITLES=1 tools/replay_fixtures.sh     # with every OSC 0/1/2 title removed
set -u
cd "$(dirname "$0")/.."
LOOKOUT=${LOOKOUT:-target/debug/lookout}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
kinds=("$@"); [ ${#kinds[@]} -eq 0 ] && kinds=($(ls tests/fixtures))
total=0; right=0; bad=0
for k in "${kinds[@]}"; do
  [ -f "manifests/$k.toml" ] || { echo "$k: no manifests/$k.toml"; continue; }
  sed '0,/^kind = /s//override = true\nkind = /' "manifests/$k.toml" > "$tmp/$k.toml"
  for f in tests/fixtures/$k/*.cast tests/fixtures/$k/*/*.cast; do  # <kind>/[<version>/]<case>.cast
    [ -f "$f" ] || continue
    out=$("$LOOKOUT" replay "$f" --kind "$k" --manifests "$tmp/$k.toml" ${NO_TITLES:+--no-titles} 2>&1)
    line=$(printf '%s\n' "$out" | tail -1)
    n=$(printf '%s' "$line" | sed -n 's/^\([0-9]*\) marker(s), \([0-9]*\) right.*/\1 \2/p')
    set -- $n; total=$((total + ${1:-0})); right=$((right + ${2:-0}))
    if [ "${1:-0}" != "${2:-0}" ] || [ -z "$n" ]; then bad=$((bad + 1)); printf '%-40s %s\n' "$f" "$line"; printf '%s\n' "$out" | grep -E '^MISS|error' ; 
    elif [ -n "${VERBOSE:-}" ]; then printf '%s\n' "$out"; else printf '%-40s %s\n' "$f" "$line"; fi
  done
done
echo "TOTAL: $total markers, $right right, $bad fixture(s) with misses"
[ "$bad" -eq 0 ]
