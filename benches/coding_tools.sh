#!/usr/bin/env bash
# Grep and Glob (PROFILE §17) against ripgrep and find on one large real tree: the sources of
# this project's dependencies under $CARGO_HOME/registry/src (or $AGENTX_BENCH_TREE). Ours runs
# as the real `agentx -p '!tool …'` in bypassPermissions mode (process start, session store and
# record writing included); rg and find write to /dev/null. Each case alternates the peers in
# rounds (AGENTX_BENCH_ROUNDS, default 7) and prints the median wall time and the median CPU time (user +
# system) in ms; on a loaded machine the CPU ratio is the steadier one. Glob has two
# peers: `find -name` (no ignore rules, no mtime) and `rg --files -g` (the same walk, no mtime).
# Warm: a first untimed pass of every command fills the page cache. Cold (it drops the whole
# machine's page cache, so it is opt-in): AGENTX_BENCH_COLD=1 with /proc/sys/vm/drop_caches
# writable; otherwise said and skipped. The session store goes under AGENTX_BENCH_HOME_PARENT
# (default /dev/shm when writable).
set -euo pipefail
cd "$(dirname "$0")/.."
TREE="${AGENTX_BENCH_TREE:-${CARGO_HOME:-$HOME/.cargo}/registry/src}"
AGENTX="${AGENTX_BENCH_AGENTX:-target/debug/agentx}"
ROUNDS="${AGENTX_BENCH_ROUNDS:-7}"
command -v rg >/dev/null || { echo "rg is not installed (apt-get install ripgrep)"; exit 1; }
[ -x "$AGENTX" ] || cargo build --bins
# The session store on tmpfs when there is one: its fsyncs wait on the disk, not on the search.
HOME_DIR="$(mktemp -d -p "${AGENTX_BENCH_HOME_PARENT:-$( [ -w /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")}")"
trap 'rm -rf "$HOME_DIR"' EXIT
echo "tree: $TREE ($(find "$TREE" -type f | wc -l) files, $(du -sh "$TREE" | cut -f1))"
echo "rg: $(rg --version | sed -n 1p); agentx: $AGENTX; rounds: $ROUNDS; nproc: $(nproc); store: $HOME_DIR"

ours() { # $1: tool, $2: input JSON
  AGENTX_HOME="$HOME_DIR" "$AGENTX" -p "!tool $1 $2" --permission-mode bypassPermissions \
    --output-format json --cwd "$TREE" >/dev/null 2>&1
}
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
# The CPU time (user + system) of one run, in ms.
cpu_ms() {
  local TIMEFORMAT='%U %S' t
  t=$( { time "$@" >/dev/null 2>&1 || true; } 2>&1 )
  awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%d\n", (a[1] + a[2]) * 1000 }'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# case NAME -- OURS_TOOL OURS_JSON -- PEER COMMAND...
bench_case() {
  local name="$1" tool="$2" input="$3"; shift 3
  local ours_t=() peer_t=() ours_c=() peer_c=()
  ours "$tool" "$input" || true; "$@" >/dev/null 2>&1 || true   # warm-up pass
  for _ in $(seq "$ROUNDS"); do
    ours_t+=("$(ms ours "$tool" "$input")")
    peer_t+=("$(ms "$@")")
    ours_c+=("$(cpu_ms ours "$tool" "$input")")
    peer_c+=("$(cpu_ms "$@")")
  done
  local o p oc pc
  o=$(printf '%s\n' "${ours_t[@]}" | median)
  p=$(printf '%s\n' "${peer_t[@]}" | median)
  oc=$(printf '%s\n' "${ours_c[@]}" | median)
  pc=$(printf '%s\n' "${peer_c[@]}" | median)
  printf '%-36s wall: ours %5s ms peer %5s ms ratio %s   cpu: ours %5s ms peer %5s ms ratio %s\n' \
    "$name" "$o" "$p" "$(ratio "$o" "$p")" "$oc" "$pc" "$(ratio "$oc" "$pc")"
}
ratio() { awk -v o="$1" -v p="$2" 'BEGIN { if (p > 0) printf "%.2f", o / p; else print "n/a" }'; }

echo "== warm =="
bench_case "Grep files_with_matches 'fn new'" Grep '{"pattern":"fn new","head_limit":0}' \
  rg --hidden -g '!.git' -l -e 'fn new' "$TREE"
bench_case "Grep content 'unsafe impl'" Grep \
  '{"pattern":"unsafe impl","output_mode":"content","head_limit":0}' \
  rg --hidden -g '!.git' -n --no-heading -e 'unsafe impl' "$TREE"
bench_case "Glob '**/*.rs' (peer: find)" Glob '{"pattern":"**/*.rs"}' \
  find "$TREE" -name '*.rs' -type f
bench_case "Glob '**/*.rs' (peer: rg --files)" Glob '{"pattern":"**/*.rs"}' \
  rg --files --hidden -g '!.git' -g '*.rs' "$TREE"
if [ "${AGENTX_BENCH_COLD:-0}" = 1 ] && [ -w /proc/sys/vm/drop_caches ]; then
  echo "== cold (page cache dropped before each run) =="
  drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
  for _ in 1; do
    drop; echo "Grep files ours $(ms ours Grep '{"pattern":"fn new","head_limit":0}') ms"
    drop; echo "Grep files rg   $(ms rg --hidden -g '!.git' -l -e 'fn new' "$TREE") ms"
    drop; echo "Glob ours       $(ms ours Glob '{"pattern":"**/*.rs"}') ms"
    drop; echo "Glob find       $(ms find "$TREE" -name '*.rs' -type f) ms"
  done
else
  echo "== cold: skipped (set AGENTX_BENCH_COLD=1 as root with a writable /proc/sys/vm/drop_caches) =="
fi
