"""What one agent out of reach, or hanging, costs everyone else (not run in
CI), for two `pad` binaries side by side: `entry.add` p50/p99 with 0 and
1,000 notes waiting for a down agent, what the engine writes to disk while
idle with them waiting, and a healthy agent's time to result beside six
notes to an agent that never answers.

    PAD_BEFORE=<old pad> PAD_BIN=<new pad> <venv>/bin/python tests/a2a/sealed_bench.py
"""

import os
import pathlib
import statistics
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "clients" / "python" / "tests"))

from bench import pct  # noqa: E402
from pad_engine import Engine  # noqa: E402
from test_a2a import Agent, replies, wait_for  # noqa: E402


def adds(c, n):
    took = []
    for i in range(n):
        t0 = time.perf_counter()
        c.add(f"a plain note {i}", "elsewhere")
        took.append((time.perf_counter() - t0) * 1000)
    return statistics.median(took), pct(took, 99)


def written(pid):
    with open(f"/proc/{pid}/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("write_bytes"))


def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def down_agent(tmp, pending):
    engine = Engine()
    agent = Agent("sdk", tmp)
    try:
        with engine.client() as c:
            c.hello(author="user")
            c.add_agent("away", agent.url)
            agent.stop()
            quiet = adds(c, 300)
            sends = []
            for i in range(pending):
                t0 = time.perf_counter()
                c.send("away", f"when you are back, job {i}", pad="waiting")
                sends.append((time.perf_counter() - t0) * 1000)
            loaded = adds(c, 300)
            first, last = sends[:100], sends[-100:]
            time.sleep(2)
            pid = engine.proc.pid
            w0, c0, t0 = written(pid), cpu(pid), time.time()
            time.sleep(20)
            secs = time.time() - t0
            idle_mb_s = (written(pid) - w0) / secs / 1e6
            idle_cpu = (cpu(pid) - c0) / secs * 100
            registry = os.path.getsize(os.path.join(engine.data, "agents.json"))
        return quiet, loaded, idle_mb_s, idle_cpu, registry, (first, last)
    finally:
        agent.stop()
        engine.stop()


WAIT = 180  # seconds a healthy agent's result is waited for


def beside_hanging(tmp):
    engine = Engine()
    stuck, helper = Agent("hanging", tmp), Agent("sdk", tmp)
    try:
        with engine.client() as c:
            c.hello(author="user")
            c.add_agent("stuck", stuck.url)
            c.add_agent("helper", helper.url)
            for i in range(6):
                c.send("stuck", f"job {i}", pad="proj")
            time.sleep(0.5)
            t0 = time.time()
            note = c.send("helper", "a quick one", pad="proj")
            try:
                wait_for("the result", lambda: next(
                    (r for r in replies(c, note["id"]) if r["kind"] == "result"), None), timeout=WAIT)
            except AssertionError:
                return None  # not within WAIT
            return time.time() - t0
    finally:
        stuck.stop()
        helper.stop()
        engine.stop()


def main():
    binaries = [("before", os.environ["PAD_BEFORE"]), ("after", os.environ["PAD_BIN"])]
    with tempfile.TemporaryDirectory() as d:
        for name, binary in binaries:
            os.environ["PAD_BIN"] = binary
            quiet, loaded, mb_s, cpu_pct, registry, (first, last) = down_agent(pathlib.Path(d), 1000)
            print(f"{name:6}  entry.add addressed to the down agent p50/p99: "
                  f"{statistics.median(first):.2f}/{pct(first, 99):.2f} ms for the first 100, "
                  f"{statistics.median(last):.2f}/{pct(last, 99):.2f} ms for the last 100 of 1,000", flush=True)
            print(f"{name:6}  entry.add p50/p99: {quiet[0]:.2f}/{quiet[1]:.2f} ms with 0 waiting, "
                  f"{loaded[0]:.2f}/{loaded[1]:.2f} ms with 1,000 waiting for a down agent | "
                  f"idle with them waiting: {mb_s:.2f} MB/s written, {cpu_pct:.1f} % CPU, "
                  f"agents.json {registry / 1000:.1f} kB", flush=True)
            healthy = beside_hanging(pathlib.Path(d))
            said = f"{healthy:.2f} s" if healthy is not None else f"none within {WAIT} s"
            print(f"{name:6}  a healthy agent's result beside six notes to a hanging one: {said}", flush=True)


if __name__ == "__main__":
    main()
