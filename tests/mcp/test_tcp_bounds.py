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
            # A new HTTP client is served: the oldest idle connection makes
            # room for it (and the flood's stay within the caps).
            with urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=10) as r:
                assert r.status == 200
            assert descriptors(e.proc.pid) <= before + 2 * MAX_CONNECTIONS + 8
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


MAX_IN_FLIGHT_PER_CLIENT = 16  # src/tcp.rs
MAX_SESSIONS_PER_CLIENT = 16  # src/tcp.rs
MAX_STREAMS = 8  # src/tcp.rs

SLOW_HEADERS = r"""
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
def opened():
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    return s
held = [opened() for _ in range(n)]
print("ready", flush=True)
while True:  # a header byte now and then; a closed one is opened again
    for i, s in enumerate(held):
        try:
            s.sendall(b"X")
        except OSError:
            s.close()
            try:
                held[i] = opened()
            except OSError:
                pass
    time.sleep(0.5)
"""


def rpc(port, secret, method, params, timeout=60):
    import json
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/rpc", data=body, method="POST",
                                 headers={"Authorization": f"Bearer {secret}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def test_slow_headers_without_a_token_do_not_keep_a_token_holder_out():
    """Forty token-less connections sending their headers slowly once held
    every newcomer place: a client with a token (a connection per call, as
    Agent Zero's plugin) got 2 of 25 requests through in 25 s. The oldest
    newcomer now makes room for the next."""
    port = free_port()
    e = Engine(extra_args=["--mcp-http", f"127.0.0.1:{port}"])
    try:
        with e.client() as owner:
            secret = owner.create_token("agent-zero", ["*"])
        slow = subprocess.Popen([sys.executable, "-c", SLOW_HEADERS, str(port), "40"],
                                stdout=subprocess.PIPE, text=True)
        try:
            assert slow.stdout.readline().strip() == "ready"
            time.sleep(1)
            through = 0
            started = time.time()
            for i in range(25):
                try:
                    r = rpc(port, secret, "entry.add", {"pad": "a0", "content": f"call {i}"}, timeout=30)
                    through += "result" in r
                except (urllib.error.URLError, ConnectionError, TimeoutError):
                    pass
            assert through == 25, (through, time.time() - started)
        finally:
            slow.kill()
            slow.wait(timeout=10)
    finally:
        e.stop()


def test_one_token_holds_at_most_its_share_of_requests_and_sessions():
    """One token's 40 waiting asks once became 40 engine connections (and,
    over HTTP/2, 150 from one connection); one token's 999 MCP sessions
    kept every other token out. Each client now has its share, the owner's
    socket is served all along, and HTTP/2 carries 8 requests at a time."""
    import threading

    port = free_port()
    e = Engine(extra_args=["--mcp-http", f"127.0.0.1:{port}"])
    try:
        with e.client() as owner:
            greedy = owner.create_token("greedy", ["*"])
            other = owner.create_token("other", ["*"])
        answers = []

        def wait_for_an_answer():
            try:
                answers.append(rpc(port, greedy, "ask", {"content": "?", "wait_seconds": 8}))
            except Exception as err:  # noqa: BLE001 - counted as not served
                answers.append({"failed": repr(err)})

        # More asks than one client may have in progress, yet fewer
        # connections than the newcomer cap: a burst past that cap has its
        # oldest connection closed before its request is read on a busy
        # machine (that eviction is the test above, not this one).
        n = MAX_NEWCOMERS - 2
        askers = [threading.Thread(target=wait_for_an_answer) for _ in range(n)]
        for t in askers:
            t.start()
        time.sleep(2)
        started = time.time()
        with e.client(author="owner") as c:
            c.add("the owner is served", "bounds")
            assert c.stats()["connections"] <= MAX_IN_FLIGHT_PER_CLIENT + 8
        assert time.time() - started < 5
        # Another token is not kept out by the first one's asks.
        assert "result" in rpc(port, other, "entry.add", {"pad": "x", "content": "mine"})
        for t in askers:
            t.join(timeout=60)
        # Refused as a request past its share, or (a connection each) as a
        # connection past its share of the listener.
        refused = [a for a in answers if "error" in a and "requests in progress" in a["error"]["message"]
                   or "503" in a.get("failed", "")]
        waited = [a for a in answers if "result" in a]
        assert len(waited) <= MAX_IN_FLIGHT_PER_CLIENT and len(refused) >= n - MAX_IN_FLIGHT_PER_CLIENT, answers

        # Sessions: one token's share, and the next token still gets one.
        for _ in range(MAX_SESSIONS_PER_CLIENT):
            assert post(port, greedy)[0] == 200
        status, _ = post(port, greedy)
        assert status == 429
        assert post(port, other)[0] == 200
        # The older transport's sessions (a GET asking for events) count too.
        import http.client
        sse = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        sse.request("GET", "/mcp", headers={"Authorization": f"Bearer {greedy}", "Accept": "text/event-stream"})
        assert sse.getresponse().status == 429
        sse.close()

        # HTTP/2 without TLS: one connection carries 8 requests at a time;
        # streams past them are refused (REFUSED_STREAM), not served.
        assert h2_refused(port, other, streams=14) >= 14 - MAX_STREAMS
    finally:
        e.stop()


MAX_CONNECTIONS_PER_CLIENT = 16  # src/tcp.rs


def test_one_tokens_connections_leave_places_for_other_tokens_and_the_owner():
    """One token holding 64 keep-alive connections (one request each) once
    locked every other token's POST /rpc and the owner's MCP client out
    with 503. A token now holds at most its share of the listener: its next
    connection is refused and closed (or, past a second idle, takes its own
    idle one's place), and the others are served."""
    import http.client
    import json

    port = free_port()
    e = Engine(extra_args=["--mcp-http", f"127.0.0.1:{port}"])
    try:
        with e.client() as owner:
            greedy = owner.create_token("greedy", ["*"])
            other = owner.create_token("other", ["*"])
        server = open(os.path.join(e.data, "mcp-http.token")).read().strip()
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "pad.list", "params": {}})
        headers = {"Authorization": f"Bearer {greedy}", "Content-Type": "application/json"}
        held, refused = [], []
        for _ in range(MAX_CONNECTIONS):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("POST", "/rpc", body, headers)
            r = c.getresponse()
            said = r.read().decode()
            if r.status == 200:
                held.append(c)
                continue
            assert r.status == 503 and r.getheader("Connection") == "close", (r.status, said)
            assert "'greedy' already holds" in said, said
            refused.append(said)
            c.close()
        # At most its share stays open: past it, a connection is refused,
        # or (on a machine slow enough that one of its own sat idle for a
        # second) takes the place of its own idle one, which is closed.
        alive = 0
        for c in held:
            try:
                c.request("POST", "/rpc", body, headers)
                r = c.getresponse()
                r.read()
                alive += r.status == 200
            except (ConnectionError, http.client.HTTPException, OSError):
                pass
        assert 1 <= alive <= MAX_CONNECTIONS_PER_CLIENT, (alive, len(held), refused[:1])
        assert len(refused) + len(held) - alive >= MAX_CONNECTIONS - MAX_CONNECTIONS_PER_CLIENT
        # Another token and the owner's MCP client are served meanwhile.
        assert "result" in rpc(port, other, "pad.list", {})
        assert post(port, server)[0] == 200
        for c in held:
            c.close()
    finally:
        e.stop()


def test_idle_connections_of_many_tokens_make_room_for_a_new_one():
    """Four tokens holding every shared place with idle keep-alive
    connections (16 each, 64 in all) once kept a fifth token out with 503.
    A connection idle for a second now makes room: the fifth is served, the
    idle one closed (its client reconnects); connections in use are never
    the ones closed, nor the owner's (a token cannot take its place)."""
    import http.client
    import json

    port = free_port()
    e = Engine(extra_args=["--mcp-http", f"127.0.0.1:{port}"])
    try:
        with e.client() as c:
            tokens = [c.create_token(f"holder-{i}", ["*"]) for i in range(4)]
            late = c.create_token("late", ["*"])
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "pad.list", "params": {}})
        held = []
        for t in tokens:
            for _ in range(MAX_CONNECTIONS_PER_CLIENT):
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                c.request("POST", "/rpc", body, {"Authorization": f"Bearer {t}",
                                                 "Content-Type": "application/json"})
                r = c.getresponse()
                r.read()
                assert r.status == 200, r.status
                held.append(c)
        assert len(held) == MAX_CONNECTIONS
        # The owner's connection takes a place kept for the owner, and is
        # left idle longest: a token could not use its place, so it is
        # never the one closed for a token.
        server = open(os.path.join(e.data, "mcp-http.token")).read().strip()
        owner = http.client.HTTPConnection("127.0.0.1", port, timeout=10)

        def owners_call():  # its MCP client's: an initialize
            return post(port, server, conn=owner)[0]

        assert owners_call() == 200
        time.sleep(0.3)
        for i, c in enumerate(held):
            c.request("POST", "/rpc", body, {"Authorization": f"Bearer {tokens[i // MAX_CONNECTIONS_PER_CLIENT]}",
                                             "Content-Type": "application/json"})
            c.getresponse().read()
        time.sleep(1.5)  # idle long enough (src/tcp.rs IDLE_MEMBER, 1 s)
        # One of them busy: a stream held open (an MCP session's events).
        busy = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        busy.request("GET", "/mcp", headers={"Authorization": f"Bearer {late}",
                                             "Accept": "text/event-stream"})
        stream = busy.getresponse()
        assert stream.status == 200 and stream.readline().startswith(b"event: endpoint")
        time.sleep(1.5)
        for _ in range(3):
            assert "result" in rpc(port, late, "pad.list", {})
        # Its stream was not the one closed: the session is still there.
        busy.sock.settimeout(2)
        try:
            assert stream.readline() != b""
        except (TimeoutError, socket.timeout):
            pass
        busy.close()
        # Some idle connections were closed to make room; the rest serve.
        closed = 0
        for c in held:
            try:
                c.request("POST", "/rpc", body, {"Authorization": f"Bearer {tokens[0]}",
                                                 "Content-Type": "application/json"})
                c.getresponse().read()
            except (ConnectionError, http.client.HTTPException, OSError):
                closed += 1
            c.close()
        assert 1 <= closed <= 4, closed
        assert owners_call() == 200, "the owner's connection was closed for a token"
        owner.close()
    finally:
        e.stop()


def test_a_client_at_its_share_gets_in_when_one_of_its_own_is_idle():
    """A client at its 16 connections, all idle (a scraper's, say, kept
    alive by whoever holds them), once had every new one refused until
    those timed out. Its own connection idle longest now makes room."""
    import http.client
    import json

    port = free_port()
    e = Engine(extra_args=["--mcp-http", f"127.0.0.1:{port}"])
    try:
        with e.client() as c:
            secret = c.create_token("scraper", ["*"])
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "pad.list", "params": {}})
        headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
        held = []
        for _ in range(MAX_CONNECTIONS_PER_CLIENT):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("POST", "/rpc", body, headers)
            r = c.getresponse()
            r.read()
            assert r.status == 200
            held.append(c)
        time.sleep(1.5)
        assert "result" in rpc(port, secret, "pad.list", {})
        for c in held:
            c.close()
    finally:
        e.stop()


def h2_refused(port, secret, streams):
    """Opens `streams` HTTP/2 streams at once on one connection (prior
    knowledge, no TLS), each a POST /rpc `ask` that waits; returns how many
    the server refused with RST_STREAM REFUSED_STREAM."""
    import json
    import struct

    def frame(kind, flags, stream, payload=b""):
        return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload

    def literal(name, value):  # HPACK: literal header, not indexed, no Huffman
        name, value = name.encode(), value.encode()
        assert len(name) < 127 and len(value) < 127
        return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ask",
                       "params": {"content": "h2?", "wait_seconds": 5}}).encode()
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + frame(4, 0, 0))
    buf = b""

    def read_frame():
        nonlocal buf
        while len(buf) < 9 or len(buf) < 9 + int.from_bytes(buf[:3], "big"):
            chunk = s.recv(65536)
            assert chunk, "the server closed the connection"
            buf += chunk
        n = int.from_bytes(buf[:3], "big")
        kind, flags, stream = buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
        payload, buf = buf[9:9 + n], buf[9 + n:]
        return kind, flags, stream, payload

    while True:  # the server's settings, acknowledged
        kind, flags, _, _ = read_frame()
        if kind == 4 and not flags & 1:
            s.sendall(frame(4, 1, 0))
            break
    time.sleep(0.2)
    for i in range(streams):
        headers = b"".join([literal(":method", "POST"), literal(":scheme", "http"),
                            literal(":path", "/rpc"), literal(":authority", f"127.0.0.1:{port}"),
                            literal("content-type", "application/json"),
                            literal("authorization", f"Bearer {secret}")])
        stream = 2 * i + 1
        s.sendall(frame(1, 0x4, stream, headers) + frame(0, 0x1, stream, body))
    refused, answered = set(), set()
    while len(refused) + len(answered) < streams:
        kind, flags, stream, payload = read_frame()
        if kind == 3 and int.from_bytes(payload[:4], "big") == 7:
            refused.add(stream)
        elif kind in (0, 1) and flags & 1:
            answered.add(stream)
        elif kind == 7:  # GOAWAY
            break
    s.close()
    return len(refused)
