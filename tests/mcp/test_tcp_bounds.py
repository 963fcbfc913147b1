"""The engine's TCP listeners (`--mcp-http`, `--metrics`) are reachable by
every local account before any token is checked. Thousands of idle
connections from another user must not take the descriptors the owner's
socket needs: each listener serves a bounded number (the rest get 503 at
once), half-sent request heads are cut off, and the owner is served all
along."""

import os
import resource
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

from pad_engine import Engine

MAX_CONNECTIONS = 64  # src/tcp.rs
HEAD_TIMEOUT = 10  # seconds, src/tcp.rs

FLOOD = r"""
import resource, socket, sys, time
ports, n = [int(p) for p in sys.argv[1].split(",")], int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
held = []
for i in range(n):
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", ports[i % len(ports)]))
    except OSError:
        s.close()
        continue
    held.append(s)
print(len(held), flush=True)
sys.stdin.read()  # idle until told to go
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_idle_tcp_floods_leave_the_owner_served():
    mcp, metrics = free_port(), free_port()
    e = Engine(extra_args=["--mcp-http", f"127.0.0.1:{mcp}", "--metrics", f"127.0.0.1:{metrics}"])
    try:
        before = descriptors(e.proc.pid)
        n = min(6000, resource.getrlimit(resource.RLIMIT_NOFILE)[1] - 100)
        # Another local account, when the test can be one.
        # (Debian's python3: the test's own may sit where nobody may read.)
        other = os.geteuid() == 0 and os.path.exists("/usr/bin/python3")
        as_other = (lambda: os.setuid(65534)) if other else None
        python = "/usr/bin/python3" if other else sys.executable
        flood = subprocess.Popen([python, "-c", FLOOD, f"{mcp},{metrics}", str(n)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                 preexec_fn=as_other)
        try:
            held = int(flood.stdout.readline())
            assert held > 2 * MAX_CONNECTIONS, held
            time.sleep(0.5)
            # The engine holds at most its caps' worth of them.
            during = descriptors(e.proc.pid)
            assert during <= before + 2 * MAX_CONNECTIONS + 8, (before, during)
            # The owner's socket answers at once.
            started = time.time()
            with e.client(author="owner") as c:
                c.add("still served", "bounds")
                assert c.stats()["entries"] >= 1
            # Quiet: ~50 ms; a socket starved by the flood would time out.
            assert time.time() - started < 5
            # A new HTTP client is told, not left hanging.
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=5)
                raise AssertionError("the listener is full: expected 503")
            except urllib.error.HTTPError as refused:
                assert refused.code == 503
                assert f"{MAX_CONNECTIONS} connections" in refused.read().decode()
            except (ConnectionResetError, urllib.error.URLError) as closed:
                # The close can overtake the answer; it is still no hang.
                assert "timed out" not in str(closed), closed
        finally:
            flood.stdin.close()
            flood.wait(timeout=10)
        # Once the flood is gone, the listeners serve again.
        deadline = time.time() + 10
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=5) as r:
                    assert r.status == 200
                break
            except (urllib.error.HTTPError, urllib.error.URLError, ConnectionResetError):
                assert time.time() < deadline, "the metrics listener never recovered"
                time.sleep(0.2)
    finally:
        e.stop()


def test_a_half_sent_request_head_is_cut_off():
    metrics = free_port()
    e = Engine(extra_args=["--metrics", f"127.0.0.1:{metrics}"])
    try:
        s = socket.create_connection(("127.0.0.1", metrics))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no blank line: unfinished
        s.settimeout(HEAD_TIMEOUT + 10)
        started = time.time()
        rest = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            rest += chunk
        took = time.time() - started
        assert HEAD_TIMEOUT - 1 <= took <= HEAD_TIMEOUT + 5, took
        assert rest == b"" or rest.startswith(b"HTTP/1.1 408"), rest
        s.close()
    finally:
        e.stop()
