#!/usr/bin/env python3
"""Single-client write round trip from Python: Scratchpad vs a Redis Stream.

The Redis side is the design a user would otherwise build: XADD to a stream
plus EXPIRE for the idle TTL, AOF with fsync every second, pipelined in one
round trip. Both sides use raw sockets (RESP by hand, JSON lines by hand), so
neither pays for a client library, and the runs are interleaved so machine
noise hits both alike. Given the two servers' pids, it measures them left
to the scheduler and then pinned two ways (PLACEMENTS). Prints one JSON
object, a result per placement.
"""
import json
import os
import socket
import sys
import time


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def read_resp(f):
    line = f.readline()
    t = line[:1]
    if t in (b"+", b":"):
        return line
    if t == b"-":
        raise RuntimeError(line.decode())
    if t == b"$":
        n = int(line[1:])
        return f.read(n + 2) if n >= 0 else None
    raise RuntimeError("unexpected reply %r" % line)


# Where the three processes run. A round trip's floor is two wake-ups, and
# on this kind of machine (a VM) waking a thread on another core costs
# ~4 µs more than on the same one: left to the scheduler, whichever server
# happens to share the client's core wins by that much, so the unpinned
# ratio swung 0.8-1.2 from run to run with nothing changed. Pinned, both
# servers stand on the same ground.
PLACEMENTS = [
    ("scheduler", None, None),
    ("apart", {1}, {0}),  # servers on core 1, the client on core 0
    ("together", {0}, {0}),  # all three on core 0
]


def pin(pids, cpus):
    """Every thread of each process (threads made later inherit it)."""
    for pid in pids:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                os.sched_setaffinity(int(tid), cpus)
            except OSError:
                pass  # a thread that just ended


def measure(pf, p, rf, r, rounds, per_round, first_id):
    content = "agent-3 found that the login flow retries three times before giving up"
    pad_t, redis_t, hello_t = [], [], []
    rid = first_id
    for rnd in range(rounds):
        for i in range(per_round):
            rid += 1
            req = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "entry.add",
                              "params": {"pad": "py-bench", "content": content, "tags": ["bench"]}}).encode() + b"\n"
            t0 = time.perf_counter_ns()
            p.sendall(req)
            line = pf.readline()
            pad_t.append(time.perf_counter_ns() - t0)
            if b'"result"' not in line:
                raise RuntimeError(line)
        for i in range(per_round // 4):
            rid += 1
            req = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "hello", "params": {}}).encode() + b"\n"
            t0 = time.perf_counter_ns()
            p.sendall(req)
            pf.readline()
            hello_t.append(time.perf_counter_ns() - t0)
        for i in range(per_round):
            cmd = resp("XADD", "py-bench", "*", "content", content, "tags", "bench") + resp("EXPIRE", "py-bench", 7200)
            t0 = time.perf_counter_ns()
            r.sendall(cmd)
            read_resp(rf)
            read_resp(rf)
            redis_t.append(time.perf_counter_ns() - t0)
    us = lambda ns: round(ns / 1000, 1)
    return rid, {
        "n": len(pad_t),
        "pad_p50_us": us(percentile(pad_t, 0.5)), "pad_p99_us": us(percentile(pad_t, 0.99)),
        "redis_p50_us": us(percentile(redis_t, 0.5)), "redis_p99_us": us(percentile(redis_t, 0.99)),
        "hello_p50_us": us(percentile(hello_t, 0.5)), "hello_p99_us": us(percentile(hello_t, 0.99)),
    }


def main():
    pad_sock, redis_sock, rounds, per_round = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    servers = [int(pid) for pid in sys.argv[5:7]]
    p = socket.socket(socket.AF_UNIX)
    p.connect(pad_sock)
    pf = p.makefile("rb")
    r = socket.socket(socket.AF_UNIX)
    r.connect(redis_sock)
    rf = r.makefile("rb")
    every = set(range(os.cpu_count() or 1))
    out, rid = {}, 0
    for name, server_cpus, client_cpus in PLACEMENTS:
        if server_cpus is not None and (len(servers) < 2 or len(every) < 2):
            continue
        pin(servers, server_cpus or every)
        os.sched_setaffinity(0, client_cpus or every)
        rid, out[name] = measure(pf, p, rf, r, rounds, per_round, rid)
    pin(servers, every)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
