"""What the mean a hybrid search centres on costs (`engine/centre.rs`): a
pad-filtered hybrid question with the pad's mean kept, against the same
question right after a note written to another pad moved the index (so
the mean is read again: `Meaning::vector_sum` over at most 2,000 notes).

    PAD_MODEL_DIR=… ORT_DYLIB_PATH=… python3 benches/centre_cost.py [path/to/pad] [notes]

Starts its own engine (meaning search on, SQLite) on a temp socket, writes
`notes` (default 2,000) varied notes to pad `big` and waits until they are
embedded. Then, 40 times each, interleaved: the question asked again (the
mean kept), and the question asked after a note to pad `other` was
embedded (the mean read again). Prints p50 and p95 in milliseconds; their
difference is the mean's cost.
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "clients", "python"))
import scratchpad  # noqa: E402

target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(HERE, "..", "..", "scratchpad-target")
PAD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(target, "release", "pad")
NOTES = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
RUNS = 40
QUESTION = "when did the staging database move to the new cluster?"
WORDS = ("deploy staging database cluster backup disk login token printer lunch "
         "review migration cache queue worker latency index report invoice").split()


def note(i):
    w = [WORDS[(i * k + 3) % len(WORDS)] for k in (1, 3, 7, 11)]
    return f"note {i}: the {w[0]} {w[1]} needs a look after the {w[2]} and {w[3]} change"


def embedded(c):
    while c.stats()["embed_queue"] > 0:
        time.sleep(0.05)


def timed(c):
    t = time.perf_counter()
    c.search(QUESTION, mode="hybrid", pad="big", limit=10)
    return (time.perf_counter() - t) * 1e3


def main():
    with tempfile.TemporaryDirectory() as d:
        sock = os.path.join(d, "pad.sock")
        env = dict(os.environ, PAD_HOME=os.path.join(d, "data"), PAD_SOCKET=sock, PAD_LOG="warn")
        env.pop("PAD_NO_SEMANTIC", None)
        engine = subprocess.Popen([PAD, "serve"], env=env)
        try:
            for _ in range(500):
                try:
                    c = scratchpad.Client(sock)
                    break
                except scratchpad.EngineUnavailable:
                    time.sleep(0.02)
            for i in range(NOTES):
                c.add(note(i), pad="big")
            embedded(c)
            while c.stats()["semantic"]["status"] != "ready":
                time.sleep(0.1)
            embedded(c)
            timed(c)
            kept, read = [], []
            for i in range(RUNS):
                kept.append(timed(c))
                c.add(f"other note {i}", pad="other")
                embedded(c)
                # The first search after the write also waits for nothing:
                # the note is embedded; only the mean is read again.
                read.append(timed(c))
            for name, ms in (("the mean kept", kept), ("the mean read again", read)):
                ms.sort()
                print(f"{name:<22} p50 {statistics.median(ms):6.2f} ms   "
                      f"p95 {ms[int(len(ms) * 0.95)]:6.2f} ms   ({NOTES} notes in the pad)")
        finally:
            engine.terminate()
            engine.wait()


if __name__ == "__main__":
    main()
