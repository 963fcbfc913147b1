"""How quickly a fresh `pad mcp` answers: start → `initialize`, and one full
`add_note` tool call from a fresh process (what Agent Zero does per call).

    python3 benches/mcp_start.py [path/to/pad]    # default: the release build

Starts its own engine (`pad serve --no-semantic`) on a temp socket, then
spawns `pad mcp` 50 times for each figure, speaking MCP's JSON-RPC over
stdio directly (no SDK, so only `pad mcp` is measured).
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(HERE, "..", "..", "scratchpad-target")
PAD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(target, "release", "pad")
RUNS = 50

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
ADD = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
       "params": {"name": "add_note", "arguments": {"content": "benchmark note", "tags": ["bench"]}}}


def send(p, msg):
    p.stdin.write((json.dumps(msg) + "\n").encode())
    p.stdin.flush()


def read(p):
    line = p.stdout.readline()
    if not line:
        raise RuntimeError("pad mcp closed its output")
    return json.loads(line)


def once(env, full):
    t = time.perf_counter()
    p = subprocess.Popen([PAD, "mcp"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    send(p, INIT)
    r = read(p)
    assert "result" in r, r
    if full:
        send(p, INITIALIZED)
        send(p, ADD)
        r = read(p)
        assert not r["result"].get("isError"), r
    took = time.perf_counter() - t
    p.stdin.close()
    p.wait()
    return took * 1000


def main():
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "run", "pad.sock")
        env = dict(os.environ, PAD_HOME=os.path.join(d, "data"), PAD_SOCKET=sock,
                   PAD_LOG="warn", PAD_AUTHOR="bench", PAD_PAD="bench")
        engine = subprocess.Popen([PAD, "serve", "--no-semantic"], env=env)
        try:
            while not os.path.exists(sock):
                time.sleep(0.01)
            for name, full in (("start → initialize answered", False),
                               ("start → add_note answered (full call)", True)):
                ms = sorted(once(env, full) for _ in range(RUNS))
                print(f"pad mcp {name:<40} p50 {statistics.median(ms):6.1f} ms   "
                      f"p99 {ms[int(len(ms) * 0.99) - 1]:6.1f} ms   ({RUNS} fresh processes)")
        finally:
            engine.terminate()
            engine.wait()


if __name__ == "__main__":
    main()
