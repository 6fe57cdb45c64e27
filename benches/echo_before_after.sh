#!/usr/bin/env bash
# Echo-turn latency of two `agentx` builds with one bench binary, under the same load: `benches/agentx.rs`'s latency part (1,000 echo turns in one
# session after 20 warm-up turns, home on disk under TMPDIR, default /tmp) run ROUNDS times
# per binary, alternating A, B, A, B, ... (AGENTX_BENCH_BIN picks the binary).
#
# Usage: benches/echo_before_after.sh BEFORE_AGENTX AFTER_AGENTX   (release builds)
# Env:   ROUNDS (default 5), AGENTX_BENCH_TURNS (default 1000).
# Prints each round's p50 / p99 / agentx CPU per turn, then the median of the rounds' p50 and
# p99 per binary, and the load before and after.
set -euo pipefail

BEFORE="$1"
AFTER="$2"
ROUNDS="${ROUNDS:-5}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BENCH="$(cargo bench -p agentx --no-run --bench agentx --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*deps\/agentx-[^"]*\)".*/\1/p' | tail -1)"
[ -x "$BENCH" ] || { echo "bench build failed"; exit 2; }
echo "bench: $BENCH; before: $BEFORE; after: $AFTER; rounds: $ROUNDS; TMPDIR=${TMPDIR:-/tmp}"
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(date -u +%TZ))"
OUT="$(mktemp)"
for r in $(seq 1 "$ROUNDS"); do
    for which in before after; do
        bin="$BEFORE"; [ "$which" = after ] && bin="$AFTER"
        line="$(AGENTX_BENCH_BIN="$bin" "$BENCH" --bench latency | grep -E '^  p50|CPU' | tr '\n' ' ')"
        p50="$(sed -n 's/.*p50 \([0-9.]*\) *µs  p99.*/\1/p' <<<"$line")"
        p99="$(sed -n 's/.*p99 \([0-9.]*\) *µs.*/\1/p' <<<"$line")"
        echo "round $r $which: $line"
        echo "$which $p50 $p99" >>"$OUT"
    done
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg) ($(date -u +%TZ))"
for which in before after; do
    python3 - "$OUT" "$which" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1]) if l.startswith(sys.argv[2] + " ")]
p50 = [float(r[1]) for r in rows if len(r) > 2 and r[1]]
p99 = [float(r[2]) for r in rows if len(r) > 2 and r[2]]
print(f"{sys.argv[2]}: median p50 {statistics.median(p50):.0f} µs (range {min(p50):.0f}-{max(p50):.0f}), "
      f"median p99 {statistics.median(p99):.0f} µs (range {min(p99):.0f}-{max(p99):.0f}) over {len(p50)} rounds")
PY
done
rm -f "$OUT"
