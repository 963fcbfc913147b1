#!/usr/bin/env python3
"""Single-client write round trip from Python: Scratchpad vs a Redis Stream.

The Redis side is the design a user would otherwise build: XADD to a stream
plus EXPIRE for the idle TTL, AOF with fsync every second, pipelined in one
round trip. Both sides use raw sockets (RESP by hand, JSON lines by hand), so
neither pays for a client library, and the runs are interleaved so machine
noise hits both alike. Prints one JSON object.
"""
import json
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


def main():
    pad_sock, redis_sock, rounds, per_round = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    p = socket.socket(socket.AF_UNIX)
    p.connect(pad_sock)
    pf = p.makefile("rb")
    r = socket.socket(socket.AF_UNIX)
    r.connect(redis_sock)
    rf = r.makefile("rb")
    content = "agent-3 found that the login flow retries three times before giving up"
    pad_t, redis_t, hello_t = [], [], []
    rid = 0
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
    print(json.dumps({
        "n": len(pad_t),
        "pad_p50_us": us(percentile(pad_t, 0.5)), "pad_p99_us": us(percentile(pad_t, 0.99)),
        "redis_p50_us": us(percentile(redis_t, 0.5)), "redis_p99_us": us(percentile(redis_t, 0.99)),
        "hello_p50_us": us(percentile(hello_t, 0.5)), "hello_p99_us": us(percentile(hello_t, 0.99)),
    }))


if __name__ == "__main__":
    main()
