#!/usr/bin/env bash
# Whole-process comparison: `agentx-wire check --level json` on a
# 64 MiB realistic stream against `peer_check` (1 MiB chunks, memchr line split, sonic-rs parse
# per line; examples/peer_check.rs), the peer built twice: by default and with
# `-C target-cpu=native` (sonic-rs has no run-time CPU detection, so only the native build uses
# AVX2). Ours is always the default build: it picks its SIMD backend at run time.
#
# Usage: benches/process.sh [SIZE] [SEED]   (SIZE like 64M, default 64M; SEED default 1)
# Env:   RUNS (alternating rounds, default 11), NATIVE (0 skips the native peer, default 1),
#        CARGO_TARGET_DIR (ours, default <repo>/target), STREAM (the generated stream, default
#        /tmp/agentx-wire-stream-SIZE-SEED.ndjson).
# The peers are the small crate benches/peers (default build in benches/peers/target, native
# in benches/peers/target-native), so the native build does not rebuild our dev-dependencies.
#
# Each round runs every program once, in turn, from the page cache, stdout to /dev/null, and
# records wall, user and system time (python3's os.wait4: microseconds, where /usr/bin/time
# rounds CPU time to 10 ms). Reported: the median of the rounds for
# wall time and for CPU time (user + system) per program, and the ratios peer / ours.
set -euo pipefail

SIZE="${1:-64M}"
SEED="${2:-1}"
RUNS="${RUNS:-11}"
NATIVE="${NATIVE:-1}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
STREAM="${STREAM:-/tmp/agentx-wire-stream-$SIZE-$SEED.ndjson}"
PEERS="$ROOT/benches/peers"

cd "$ROOT"
echo "== building release binaries"
cargo build --release --quiet --example gen_stream --bin agentx-wire
(cd "$PEERS" && env -u CARGO_TARGET_DIR cargo build --release --quiet --bin peer_check)
if [ "$NATIVE" = 1 ]; then
    (cd "$PEERS" && CARGO_TARGET_DIR="$PEERS/target-native" RUSTFLAGS="-C target-cpu=native" \
        cargo build --release --quiet --bin peer_check)
fi

GEN="$TARGET/release/examples/gen_stream"
OURS="$TARGET/release/agentx-wire"
NAMES=("agentx-wire check --level json" "peer_check default" )
CMDS=("$OURS check --level json $STREAM" "$PEERS/target/release/peer_check $STREAM")
if [ "$NATIVE" = 1 ]; then
    NAMES+=("peer_check native")
    CMDS+=("$PEERS/target-native/release/peer_check $STREAM")
fi

if [ ! -s "$STREAM" ]; then
    echo "== generating $SIZE realistic stream (seed $SEED) -> $STREAM"
    "$GEN" "$SIZE" "$SEED" > "$STREAM"
fi
BYTES=$(stat -c %s "$STREAM")
echo "   $STREAM: $BYTES bytes, $(wc -l < "$STREAM") records"

echo "== sanity: every program accepts every record"
for c in "${CMDS[@]}"; do
    $c > /dev/null || { echo "   failed: $c"; exit 1; }
done
cat "$STREAM" > /dev/null

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# measure OUT CMD...: appends "wall user sys" (seconds) of one run of CMD to OUT.
measure() {
    python3 - "$@" <<'PY'
import os, subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t = time.perf_counter()
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
wall = time.perf_counter() - t
if status != 0:
    sys.exit(f"failed ({status}): {' '.join(cmd)}")
with open(out, "a") as f:
    f.write(f"{wall:.6f} {ru.ru_utime:.6f} {ru.ru_stime:.6f}\n")
PY
}
echo "== $RUNS alternating rounds (load before: $(cut -d' ' -f1-3 /proc/loadavg))"
for _ in $(seq "$RUNS"); do
    for i in "${!CMDS[@]}"; do
        measure "$TMP/$i" ${CMDS[$i]}
    done
done
echo "   load after: $(cut -d' ' -f1-3 /proc/loadavg)"

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
mbps() { awk -v t="$1" -v n="$BYTES" 'BEGIN { printf "%.0f", n / t / 1048576 }'; }

echo "== result ($BYTES bytes, medians of $RUNS rounds)"
printf '   %-32s %9s %9s %9s %11s\n' program "wall s" "MiB/s" "cpu s" "MiB/cpu-s"
WALL=()
CPU=()
for i in "${!CMDS[@]}"; do
    WALL[$i]=$(awk '{ print $1 }' "$TMP/$i" | median)
    CPU[$i]=$(awk '{ print $2 + $3 }' "$TMP/$i" | median)
    printf '   %-32s %9.4f %9s %9.4f %11s\n' "${NAMES[$i]}" "${WALL[$i]}" "$(mbps "${WALL[$i]}")" \
        "${CPU[$i]}" "$(mbps "${CPU[$i]}")"
done
for i in "${!CMDS[@]}"; do
    [ "$i" = 0 ] && continue
    echo "   ours vs ${NAMES[$i]}: $(ratio "${WALL[$i]}" "${WALL[0]}")x wall," \
        "$(ratio "${CPU[$i]}" "${CPU[0]}")x cpu (targets: 1.5x default, 1.25x native)"
done
