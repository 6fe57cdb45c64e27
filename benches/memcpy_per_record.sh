#!/usr/bin/env bash
# Bytes copied per output record, counted by an LD_PRELOAD shim
# (benches/memcpy/count.c: the bytes a process copies with memcpy/memmove).
#
# 1. In-process, exact per record: `crates/agentx/benches/output_copies.rs` (a session's model events in,
#    agentx's StdoutSink and write(2) out) for this tree and, with BEFORE=<commit>, for that
#    commit's source (extracted under target/, the same bench file added) built in its own
#    target directory (target/before-target).
# 2. Whole process, for each AGENTX binary given: two sessions on `agentx-echo` whose prompts
#    differ only in their word count (W1, W2); one `stream_event` delta per word, so
#      (copied(W2) - copied(W1)) / (stream_events(W2) - stream_events(W1))
#    is one delta's cost including the input side (the prompt's words), which is the same
#    code in both builds; without partial messages the difference is per byte of the answer.
#
# Usage: [BEFORE=9bb22c2] benches/memcpy_per_record.sh [AGENTX...]   (release agentx builds)
# Env:   W1 (default 1000), W2 (default 3000), OUTPUT_COPIES_N (default 2000), PROFILE (the
#        cargo profile of output_copies, default bench; `dev` builds faster).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SHIM="$ROOT/target/memcount.so"
gcc -O2 -fno-builtin -fno-tree-loop-distribute-patterns -fPIC -shared \
    -o "$SHIM" "$ROOT/benches/memcpy/count.c"
for tree in ${BEFORE:+before} ${SKIP_INPROCESS:-after}; do
    [ "$tree" = skip ] && continue
    dir="$ROOT"
    if [ "$tree" = before ]; then
        dir="$ROOT/target/before-src"
        rm -rf "$dir" && mkdir -p "$dir"
        git -C "$ROOT" archive "$BEFORE" | tar -x -C "$dir"
        # BEFORE must be a workspace revision (crates/agentx); the bench is copied in unchanged.
        cp "$ROOT/crates/agentx/benches/output_copies.rs" "$dir/crates/agentx/benches/"
        grep -q 'name = "output_copies"' "$dir/crates/agentx/Cargo.toml" ||
            printf '\n[[bench]]\nname = "output_copies"\nharness = false\n' >>"$dir/crates/agentx/Cargo.toml"
    fi
    # The BEFORE tree gets its own target directory: in the shared one cargo gave both trees'
    # artifacts the same names, so one overwrote the other's library and bench.
    target="$ROOT/target"
    [ "$tree" = before ] && target="$ROOT/target/before-target"
    bench="$(cd "$dir" && CARGO_TARGET_DIR="$target" nice cargo bench -p agentx --no-run --profile "${PROFILE:-bench}" \
        --bench output_copies --message-format=json 2>/dev/null |
        sed -n 's/.*"executable":"\([^"]*output_copies-[^"]*\)".*/\1/p' | tail -1)"
    [ "$tree" = before ] && echo "before ($BEFORE):" || echo "after (this tree, $(git -C "$ROOT" rev-parse --short HEAD)):"
    LD_PRELOAD="$SHIM" "$bench" --bench >/dev/null
done
W1="${W1:-1000}"
W2="${W2:-3000}"
for bin in "$@"; do
    python3 - "$bin" "$SHIM" "$W1" "$W2" <<'PY'
import json, os, subprocess, sys, tempfile
bin, shim, w1, w2 = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])

def run(words, partial):
    home = tempfile.mkdtemp(prefix="agentx-memcpy-")
    out = os.path.join(home, "count")
    env = dict(os.environ, AGENTX_HOME=home, LD_PRELOAD=shim, MEMCPY_COUNT_OUT=out)
    env.pop("HOME", None)
    args = [bin, "--input-format", "stream-json", "--output-format", "stream-json", "--cwd", home]
    if partial:
        args.append("--include-partial-messages")
    prompt = " ".join(f"w{i:05d}" for i in range(words))
    line = json.dumps({"type": "user", "message": {"role": "user", "content": prompt}, "parent_tool_use_id": None})
    p = subprocess.run(args, input=(line + "\n").encode(), capture_output=True, env=env, check=True)
    recs = p.stdout.split(b"\n")
    events = sum(1 for r in recs if r.startswith(b'{"type":"stream_event"'))
    assistant = [r for r in recs if r.startswith(b'{"type":"assistant"')]
    with open(out) as f:
        f = f.read().split()
    subprocess.run(["rm", "-rf", home])
    return int(f[2]) + int(f[5]), events, sum(len(a) for a in assistant), len(p.stdout)

(c1, e1, a1, o1), (c2, e2, a2, o2) = run(w1, True), run(w2, True)
print(f"{bin}: --include-partial-messages: {c2 - c1} bytes copied for {e2 - e1} more stream_event "
      f"records ({o2 - o1} more output bytes): {(c2 - c1) / (e2 - e1):.0f} bytes copied per "
      f"stream_event record of {(o2 - o1) / (e2 - e1):.0f} output bytes")
(c1, _, a1, _), (c2, _, a2, _) = run(w1, False), run(w2, False)
print(f"{bin}: no partial messages: {c2 - c1} bytes copied for {a2 - a1} more bytes of the one "
      f"assistant record: {(c2 - c1) / (a2 - a1):.2f} bytes copied per assistant-record byte "
      f"(input side included)")
PY
done
