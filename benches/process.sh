#!/usr/bin/env bash
# Whole-process comparison (issue 2, "What done means"): `agentx-wire check --level json` on a
# 64 MiB realistic stream against `peer_check` (1 MiB chunks, memchr line split, sonic-rs parse
# per line; examples/peer_check.rs), both release builds without `-C target-cpu=native`.
#
# Usage: benches/process.sh [SIZE] [SEED]   (SIZE like 64M, default 64M; SEED default 1)
# Env:   CARGO_TARGET_DIR (default <repo>/target), RUNS (hyperfine runs, default 10),
#        STREAM (path of the generated stream, default /tmp/agentx-wire-stream-SIZE-SEED.ndjson)
# Uses hyperfine when installed (`apt-get install -y hyperfine`), else a loop with /usr/bin/time.
set -euo pipefail

SIZE="${1:-64M}"
SEED="${2:-1}"
RUNS="${RUNS:-10}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
STREAM="${STREAM:-/tmp/agentx-wire-stream-$SIZE-$SEED.ndjson}"

cd "$ROOT"
echo "== building release binaries (target dir $TARGET)"
cargo build --release --quiet --example gen_stream --example peer_check --bin agentx-wire

GEN="$TARGET/release/examples/gen_stream"
PEER="$TARGET/release/examples/peer_check"
OURS="$TARGET/release/agentx-wire"

echo "== generating $SIZE realistic stream (seed $SEED) -> $STREAM"
"$GEN" "$SIZE" "$SEED" > "$STREAM"
BYTES=$(stat -c %s "$STREAM")
echo "   $BYTES bytes, $(wc -l < "$STREAM") records"

echo "== sanity: both accept every record"
"$PEER" "$STREAM"
HAVE_OURS=1
if ! "$OURS" check --level json "$STREAM"; then
    echo "   agentx-wire check --level json failed or is unavailable; timing the peer only"
    HAVE_OURS=0
fi

# Warm the page cache so both read from memory.
cat "$STREAM" > /dev/null

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
secs() { awk -v t="$1" 'BEGIN { printf "%.3f", t }'; }
mbps() { awk -v t="$1" -v n="$BYTES" 'BEGIN { printf "%.0f", n / t / 1048576 }'; }

if command -v hyperfine > /dev/null; then
    CSV="$(mktemp)"
    CMDS=("$PEER $STREAM")
    NAMES=(-n peer_check)
    if [ "$HAVE_OURS" = 1 ]; then
        CMDS+=("$OURS check --level json $STREAM")
        NAMES+=(-n "agentx-wire check")
    fi
    hyperfine -N --warmup 2 --runs "$RUNS" --export-csv "$CSV" "${NAMES[@]}" "${CMDS[@]}"
    # CSV columns: command,mean,stddev,median,user,system,min,max (seconds).
    PEER_S=$(awk -F, 'NR==2 { print $4 }' "$CSV")
    OURS_S=$(awk -F, 'NR==3 { print $4 }' "$CSV")
    # CPU time (user + system, mean) is steadier than wall time on a busy machine.
    PEER_CPU=$(awk -F, 'NR==2 { print $5 + $6 }' "$CSV")
    OURS_CPU=$(awk -F, 'NR==3 { print $5 + $6 }' "$CSV")
    rm -f "$CSV"
else
    median_of() { # runs "$@" RUNS times, prints the median wall time in seconds
        local times=()
        for _ in $(seq "$RUNS"); do
            times+=("$( { /usr/bin/time -f %e "$@" > /dev/null 2> /dev/null; } 2>&1 )")
        done
        printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
    }
    PEER_S=$(median_of "$PEER" "$STREAM")
    OURS_S=""
    [ "$HAVE_OURS" = 1 ] && OURS_S=$(median_of "$OURS" check --level json "$STREAM")
fi

echo "== result ($BYTES bytes, median of $RUNS runs)"
echo "   peer_check (memchr + sonic-rs):   $(secs "$PEER_S")s  $(mbps "$PEER_S") MiB/s"
if [ -n "${OURS_S:-}" ]; then
    echo "   agentx-wire check --level json:   $(secs "$OURS_S")s  $(mbps "$OURS_S") MiB/s"
    echo "   speed-up (peer time / our time):  $(ratio "$PEER_S" "$OURS_S")x  (target: >= 1.5x)"
    if [ -n "${OURS_CPU:-}" ]; then
        echo "   CPU time (user+sys, mean):        peer $(secs "$PEER_CPU")s, ours $(secs "$OURS_CPU")s, ratio $(ratio "$PEER_CPU" "$OURS_CPU")x"
    fi
fi
