"""How quickly a fresh `pad mcp` answers: start → `initialize`, and one full
`add_note` tool call from a fresh process (what Agent Zero does per call);
one tool call over HTTP (`pad serve --mcp-http`) on a kept-alive connection
and on a fresh one; and how big tools/list is for the full and core sets
(Agent Zero pastes it into every system prompt).

    python3 benches/mcp_start.py [path/to/pad]    # default: the release build

Starts its own engine (`pad serve --no-semantic`) on a temp socket, then
spawns `pad mcp` 50 times for each figure, speaking MCP's JSON-RPC over
stdio directly (no SDK, so only `pad mcp` is measured).
"""

import http.client
import json
import os
import socket
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


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tools_list_bytes(env, *args):
    p = subprocess.Popen([PAD, "mcp", *args], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    send(p, INIT)
    read(p)
    send(p, INITIALIZED)
    send(p, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    tools = read(p)["result"]["tools"]
    p.stdin.close()
    p.wait()
    return len(tools), len(json.dumps(tools, separators=(",", ":")))


def http_calls(port, token, keep_alive):
    """Per-call milliseconds of a tools/call over HTTP, 200 calls."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "Authorization": f"Bearer {token}"}
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("POST", "/mcp", json.dumps(INIT), headers)
    r = conn.getresponse()
    r.read()
    headers["Mcp-Session-Id"] = r.headers["Mcp-Session-Id"]
    headers["MCP-Protocol-Version"] = "2025-03-26"
    conn.request("POST", "/mcp", json.dumps(INITIALIZED), headers)
    conn.getresponse().read()
    call = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                       "params": {"name": "list_tags", "arguments": {"pad": "bench"}}})
    out = []
    for _ in range(200):
        if not keep_alive:
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port)
        t = time.perf_counter()
        conn.request("POST", "/mcp", call, headers)
        body = conn.getresponse().read()
        out.append((time.perf_counter() - t) * 1000)
        assert b'"result"' in body, body
    conn.close()
    return sorted(out)


def main():
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "run", "pad.sock")
        env = dict(os.environ, PAD_HOME=os.path.join(d, "data"), PAD_SOCKET=sock,
                   PAD_LOG="warn", PAD_AUTHOR="bench", PAD_PAD="bench")
        port = free_port()
        engine = subprocess.Popen([PAD, "serve", "--no-semantic", "--mcp-http", f"127.0.0.1:{port}"], env=env)
        try:
            while not os.path.exists(sock):
                time.sleep(0.01)
            for name, full in (("start → initialize answered", False),
                               ("start → add_note answered (full call)", True)):
                ms = sorted(once(env, full) for _ in range(RUNS))
                print(f"pad mcp {name:<40} p50 {statistics.median(ms):6.1f} ms   "
                      f"p99 {ms[int(len(ms) * 0.99) - 1]:6.1f} ms   ({RUNS} fresh processes)")
            token = open(os.path.join(env["PAD_HOME"], "mcp-http.token")).read().strip()
            for name, keep in (("kept-alive connection", True), ("fresh connection per call", False)):
                ms = http_calls(port, token, keep)
                print(f"HTTP tools/call, {name:<32} p50 {statistics.median(ms):6.2f} ms   "
                      f"p99 {ms[int(len(ms) * 0.99) - 1]:6.2f} ms   (200 calls)")
            for label, args in (("all", []), ("core", ["--tools", "core"])):
                n, size = tools_list_bytes(env, *args)
                print(f"tools/list, {label:<5} {n:2d} tools, {size:6,d} bytes of JSON")
        finally:
            engine.terminate()
            engine.wait()


if __name__ == "__main__":
    main()
