"""How soon a waiting `ask` hears the answer: from the moment the person
sends the reply to the moment the asker's call returns. That span includes
the reply's own commit, so it bounds "committed -> returned" from above (the
asker is woken at the commit, usually before the replier reads its ack).

    python3 benches/ask_latency.py [path/to/pad]    # default: the release build

Starts its own engine (`pad serve --no-semantic`) on a temp socket. The
person is a Python client subscribed to `needs_eyes`, replying as soon as a
question appears. The asker is, in turn:
- a socket client calling `ask` (stdlib client, `clients/python`);
- a fresh `pad mcp` process per question, as Agent Zero runs it, calling the
  `ask_person` tool over MCP's JSON-RPC on stdio (no SDK, so only `pad mcp`
  and the engine are measured).
Prints p50 and p99 in milliseconds for each.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "clients", "python"))
import scratchpad  # noqa: E402

target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(HERE, "..", "..", "scratchpad-target")
PAD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(target, "release", "pad")
SOCKET_RUNS = 200
MCP_RUNS = 50


def percentiles(ms):
    ms = sorted(ms)
    return statistics.median(ms), ms[min(len(ms) - 1, int(len(ms) * 0.99))]


class Person(threading.Thread):
    """Answers every question the moment its needs_eyes event arrives, and
    notes when each answer was sent."""

    def __init__(self, sock):
        super().__init__(daemon=True)
        self.client = scratchpad.Client(sock, author="user", timeout=None)
        self.sub = self.client.subscribe(tags=["needs_eyes"], kinds=["question"])
        self.answered_at = {}
        self.done = threading.Event()

    def run(self):
        replier = scratchpad.Client(self.client.socket_path, author="user", timeout=None)
        try:
            self.answer(replier)
        except scratchpad.EngineUnavailable:
            pass  # the engine stopped: the run is over

    def answer(self, replier):
        for event in self.sub:
            if event.get("type") != "needs_eyes":
                continue
            q = event["entry"]
            self.answered_at[q["id"]] = time.perf_counter()
            replier.add("approve", pad=q["pad"], reply_to=q["id"])


def over_socket(sock, person):
    lags = []
    with scratchpad.Client(sock, author="agent-bench", timeout=None) as asker:
        for i in range(SOCKET_RUNS):
            r = asker.ask(f"may I? ({i})", pad="bench", choices=["approve", "deny"], wait_seconds=30)
            returned = time.perf_counter()
            assert r["answer"] is not None, r
            lags.append((returned - person.answered_at[r["question"]["id"]]) * 1000)
    return lags


def over_mcp(env, person):
    lags = []
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "0"}}}
    for i in range(MCP_RUNS):
        p = subprocess.Popen([PAD, "mcp"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        send = lambda m: (p.stdin.write((json.dumps(m) + "\n").encode()), p.stdin.flush())  # noqa: E731
        send(init)
        assert "result" in json.loads(p.stdout.readline())
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "ask_person",
                         "arguments": {"question": f"may I? (mcp {i})", "choices": ["approve", "deny"],
                                       "wait_seconds": 30}}})
        reply = json.loads(p.stdout.readline())
        returned = time.perf_counter()
        text = reply["result"]["content"][0]["text"]
        assert text.startswith("Answer from user: approve"), text
        qid = text.split("(question ")[1].split(",")[0]
        lags.append((returned - person.answered_at[qid]) * 1000)
        p.stdin.close()
        p.wait()
    return lags


def main():
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "run", "pad.sock")
        env = dict(os.environ, PAD_HOME=os.path.join(tmp, "data"), PAD_SOCKET=sock,
                   PAD_LOG="warn", PAD_AUTHOR="agent-mcp", PAD_PAD="bench-mcp",
                   PAD_NO_AUTOSTART="1")
        engine = subprocess.Popen([PAD, "serve", "--no-semantic"], env=env, stdout=subprocess.DEVNULL)
        try:
            for _ in range(500):
                if os.path.exists(sock):
                    break
                time.sleep(0.01)
            person = Person(sock)
            person.start()
            print(f"binary: {PAD}")
            for name, lags in (("socket `ask`", over_socket(sock, person)),
                               ("`pad mcp` ask_person", over_mcp(env, person))):
                p50, p99 = percentiles(lags)
                print(f"reply sent -> {name:<22} returned: p50 {p50:6.2f} ms  p99 {p99:6.2f} ms"
                      f"  ({len(lags)} questions)")
        finally:
            engine.terminate()
            engine.wait()


if __name__ == "__main__":
    main()
