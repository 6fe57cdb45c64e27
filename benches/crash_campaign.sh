#!/usr/bin/env bash
# The long crash campaign of the session store (PROFILE §11):
# crates/agentx/tests/store/store_crash.rs (the agentx crate's `store` test binary) with AGENTX_CRASH_KILLS SIGKILLs (default
# here 1,000) at random points of one session (after idle, mid-stream, mid-tool, during the
# store's append and fsync, mid-upload, after an upload's commit, after a prompt), each followed
# by a resume that must rebuild exactly what the host saw (the test's assertions; the first
# failing kill fails the run). The test is built in the dev profile, like `cargo test`.
#
# Usage: benches/crash_campaign.sh [KILLS] [SEED]   (defaults 1000 and 19)
# Run it at low priority on a shared machine: nice -n 19 benches/crash_campaign.sh
# Prints the test's own figures line (kills, wall time, kills by point, unseen turns stored
# whole, torn/cut bytes left for the next start, turns stored, failures), the exact command,
# the wall time, the load before and after, and the exit status.
set -uo pipefail

KILLS="${1:-1000}"
SEED="${2:-19}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# The test binary is run directly, so the campaign does not hold cargo's build-directory lock.
BIN="$(cargo test -p agentx --no-run --test store --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*deps.store-[0-9a-f]*\)".*/\1/p' | tail -1)"
[ -x "$BIN" ] || { echo "build failed"; exit 2; }
# The test finds the agentx binary through CARGO_BIN_EXE_agentx at build time: no env needed.
CMD=("$BIN" store_crash::profile_11_sigkill_anywhere_then_resume --exact --nocapture)
echo "command: AGENTX_CRASH_KILLS=$KILLS AGENTX_CRASH_SEED=$SEED ${CMD[*]}"
echo "         (built by: cargo test -p agentx --no-run --test store)"
echo "start:   $(date -u +%FT%TZ); load: $(cut -d' ' -f1-3 /proc/loadavg)"
T0=$(date +%s)
LOG="$(mktemp)"
AGENTX_CRASH_KILLS="$KILLS" AGENTX_CRASH_SEED="$SEED" "${CMD[@]}" >"$LOG" 2>&1
STATUS=$?
T1=$(date +%s)
grep -E "^crash campaign:|panicked|assertion" "$LOG" || true
echo "end:     $(date -u +%FT%TZ); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "wall:    $((T1 - T0)) s; exit status $STATUS ($( [ "$STATUS" = 0 ] && echo "0 failures" || echo "FAILED"))"
rm -f "$LOG"
exit "$STATUS"
