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

MAX_CONNECTIONS = 64  # src/tcp.rs: connections a listener let a request through
MAX_NEWCOMERS = 32  # src/tcp.rs: connections yet to
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
                assert f"{MAX_NEWCOMERS} connections" in refused.read().decode()
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


INITIALIZE = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
              b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}')


def post(port, token=None, conn=None):
    """One POST /mcp (initialize) on `conn` (a new connection if none): the
    status, and whether the server closed the connection after it."""
    import http.client
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    conn.request("POST", "/mcp", INITIALIZE, headers)
    r = conn.getresponse()
    r.read()
    return r.status, r.getheader("Connection") == "close"


def test_clients_without_a_token_hold_no_place_and_are_counted_not_logged():
    """64 token-less keep-alive connections once made every real request get
    503 for a minute, and each refusal logged ~300 bytes."""
    import http.client
    mcp, metrics = free_port(), free_port()
    e = Engine(extra_args=["--mcp-http", f"127.0.0.1:{mcp}", "--metrics", f"127.0.0.1:{metrics}"])
    try:
        token = open(os.path.join(e.data, "mcp-http.token")).read().strip()
        # A client with the token keeps its connection.
        member = http.client.HTTPConnection("127.0.0.1", mcp, timeout=10)
        assert post(mcp, token, member) == (200, False)
        held = []
        for _ in range(3 * MAX_CONNECTIONS):
            c = http.client.HTTPConnection("127.0.0.1", mcp, timeout=10)
            status, closed = post(mcp, None, c)
            assert (status, closed) == (401, True)
            held.append(c)
        # The refused connections are gone: new clients with the token get in.
        for _ in range(12):
            assert post(mcp, token)[0] == 200
        assert post(mcp, token, member)[0] == 200
        # Idle newcomers fill their own places only.
        idle = [socket.create_connection(("127.0.0.1", mcp)) for _ in range(MAX_NEWCOMERS)]
        time.sleep(0.3)
        assert post(mcp, token, member)[0] == 200
        for s in idle:
            s.close()
        time.sleep(0.3)
        assert post(mcp, token)[0] == 200
        refused_lines = [line for line in e.log().splitlines() if "refused" in line]
        assert len(refused_lines) <= 2, refused_lines
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=5) as r:
            scrape = r.read().decode()
        counted = [line for line in scrape.splitlines()
                   if line.startswith('scratchpad_http_refused_total{listener="mcp"}')]
        assert counted and float(counted[0].split()[-1]) >= 3 * MAX_CONNECTIONS, counted
    finally:
        e.stop()
