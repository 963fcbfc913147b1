"""How long handing work to an A2A agent takes, on real servers (not run in
CI): note written -> message received by the agent, and the agent's result
-> reply visible to a subscriber, p50/p99, for the official SDK's server
and FastA2A. Each scripted task works 0.5–1.5 s (agents.py, "bench"), so
its end falls anywhere between two looks at it.

    PAD_BIN=<target>/release/pad <venv>/bin/python tests/a2a/bench.py [N]
"""

import json
import pathlib
import statistics
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "clients" / "python" / "tests"))

from pad_engine import Engine  # noqa: E402
from test_a2a import Agent  # noqa: E402


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def run(flavour, n, tmp):
    engine = Engine()
    agent = Agent(flavour, tmp)
    try:
        with engine.client() as c, engine.client() as watcher:
            c.hello(author="user")
            c.add_agent("bench", agent.url)
            sub = watcher.subscribe(pads=["bench"])
            sent, got = [], []
            for i in range(n):
                t0 = time.time()
                note = c.send("bench", f"bench note {i}", pad="bench")
                while True:
                    ev = next(iter(sub))
                    e = ev.get("entry") or {}
                    if ev["type"] == "created" and e.get("kind") == "result" and e.get("reply_to") == note["id"]:
                        seen = time.time()
                        break
                log = [json.loads(line) for line in agent.log.read_text().splitlines()]
                mine = [m for m in log if m["text"] == f"bench note {i}"]
                received = next(m["at"] for m in mine if not m.get("done"))
                done = next(m["at"] for m in mine if m.get("done"))
                sent.append((received - t0) * 1000)
                got.append((seen - done) * 1000)
        return sent, got
    finally:
        agent.stop()
        engine.stop()


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    with tempfile.TemporaryDirectory() as d:
        for flavour in ["sdk", "fasta2a"]:
            sent, got = run(flavour, n, pathlib.Path(d))
            print(f"{flavour:8} n={n}  note written -> agent has it: p50 {statistics.median(sent):6.1f} ms  p99 {pct(sent, 99):6.1f} ms"
                  f"   |  result -> reply seen: p50 {statistics.median(got):6.1f} ms  p99 {pct(got, 99):6.1f} ms")


if __name__ == "__main__":
    main()
