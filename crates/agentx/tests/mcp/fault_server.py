"""A tiny stdio MCP server that misbehaves on demand (agentx's PROFILE §18 fault tests),
for what a real server cannot do when asked: hang in initialize, flood stdout with garbage,
die mid-call, ignore SIGTERM. Standard library only.

usage: fault_server.py MODE LOG
MODE: hang-init | garbage | garbage-line | die-on-call | slow | stubborn | changing
Every message received is appended to LOG, one line each; the first line is "pid <pid>".
With AGENTX_STDOUT and EXPECT in its environment, the second says whether that file held
EXPECT when the server started. With GATE (a FIFO), its startup then waits until the test
opens that FIFO.
"""

import json
import os
import signal
import sys
import time

mode, log_path = sys.argv[1], sys.argv[2]
log = open(log_path, "a", buffering=1)
log.write("pid %d\n" % os.getpid())
# Scenario 8: whether agentx's stdout (a file the test gave it) already holds EXPECT when this
# process starts.
if os.environ.get("AGENTX_STDOUT"):
    with open(os.environ["AGENTX_STDOUT"]) as out:
        seen = os.environ["EXPECT"] in out.read()
    log.write("expected output before start: %s\n" % ("yes" if seen else "no"))
if os.environ.get("GATE"):
    # Startup blocks until the test opens this FIFO for writing.
    with open(os.environ["GATE"]) as gate:
        gate.read()
    log.write("gate opened\n")


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


if mode == "stubborn":
    signal.signal(signal.SIGTERM, lambda *_: log.write("sigterm\n"))

if mode == "garbage":
    line = "x" * 1023 + "\n"
    try:
        for _ in range(100 * 1024):  # 100 MiB of lines that are not JSON
            sys.stdout.write(line)
    except BrokenPipeError:
        pass
    sys.exit(0)

if mode == "garbage-line":
    chunk = "y" * (1 << 20)
    try:
        for _ in range(100):  # one 100 MiB line that is not JSON
            sys.stdout.write(chunk)
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    sys.exit(0)

TOOL = {"name": "slow", "description": "Never answers", "inputSchema": {"type": "object"}}

changed = False
for raw in sys.stdin:
    log.write(raw if raw.endswith("\n") else raw + "\n")
    msg = json.loads(raw)
    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        if mode == "hang-init":
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "fault", "version": "1"}}})
    elif method == "tools/list":
        tools = [TOOL]
        if mode == "changing" and changed:
            tools.append({"name": "added", "description": "After list_changed",
                          "inputSchema": {"type": "object"}})
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
    elif method == "tools/call":
        if mode == "changing":
            changed = True
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "content": [{"type": "text", "text": "changed"}]}})
            continue
        if mode == "die-on-call":
            sys.stderr.write("fault: dying mid-call\n")
            sys.stderr.flush()
            os._exit(3)
        # slow, stubborn: never answer
    elif rid is not None:
        send({"jsonrpc": "2.0", "id": rid, "result": {}})

if mode == "stubborn":
    # stdin closed: keep running until killed.
    while True:
        time.sleep(1)
