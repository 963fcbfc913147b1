"""`pad serve --mcp-http`: the same tools over MCP's streamable HTTP, driven
by the official MCP Python SDK; refused without the bearer token."""

import asyncio
import os
import socket
import time
import urllib.error
import urllib.request

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from pad_engine import Engine


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def http_engine():
    port = free_port()
    e = Engine(extra_args=["--mcp-http", f"127.0.0.1:{port}", "--mcp-author", "agent-http",
                           "--mcp-pad", "remote"])
    e.url = f"http://127.0.0.1:{port}/mcp"
    token_file = os.path.join(e.data, "mcp-http.token")
    e.token = open(token_file).read().strip()
    e.token_mode = os.stat(token_file).st_mode & 0o777
    yield e
    e.stop()


async def with_session(url, token, body):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await body(session)


def test_tools_over_http_with_the_token(http_engine):
    assert http_engine.token_mode == 0o600 and len(http_engine.token) == 64

    async def body(s):
        tools = {t.name for t in (await s.list_tools()).tools}
        added = await s.call_tool("add_note", {"content": "written over HTTP", "tags": ["remote"]})
        found = await s.call_tool("search_notes", {"query": "written over HTTP"})
        return tools, added, found

    tools, added, found = asyncio.run(with_session(http_engine.url, http_engine.token, body))
    assert "add_note" in tools and "read_pad" in tools
    assert not added.is_error and not found.is_error
    note_id = added.content[0].text.split()[2]
    assert note_id in found.content[0].text
    with http_engine.client() as c:
        e = c.get(note_id)
        assert e["author"] == "agent-http" and e["pad"] == "remote"


@pytest.mark.parametrize("token", [None, "wrong", "0" * 64])
def test_refused_without_the_right_token(http_engine, token):
    req = urllib.request.Request(
        http_engine.url,
        data=b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}',
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                 **({"Authorization": f"Bearer {token}"} if token else {})},
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(req, timeout=10)
    assert refused.value.code == 401
    assert "bearer token" in refused.value.read().decode()
    challenge = refused.value.headers["WWW-Authenticate"]
    assert challenge.startswith('Bearer realm="scratchpad"') and "mcp-http.token" in challenge, challenge

    async def body(s):
        return await s.list_tools()

    with pytest.raises(Exception):
        asyncio.run(with_session(http_engine.url, token, body))


@pytest.mark.parametrize("path", ["/.well-known/oauth-protected-resource",
                                  "/.well-known/oauth-protected-resource/mcp",
                                  "/.well-known/oauth-authorization-server",
                                  "/.well-known/openid-configuration", "/register"])
def test_oauth_discovery_finds_nothing_so_clients_do_not_start_oauth(http_engine, path):
    url = http_engine.url.removesuffix("/mcp") + path
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(url, timeout=10)
    assert missing.value.code == 404
    assert "not an OAuth server" in missing.value.read().decode()


def test_the_wildcard_or_a_public_address_needs_a_second_flag(tmp_path):
    import subprocess
    from pad_engine import pad_binary
    for addr in ("0.0.0.0:8765", "[::]:8765", "8.8.8.8:8765"):
        out = subprocess.run(
            [pad_binary(), "serve", "--no-semantic", "--mcp-http", addr],
            env=dict(os.environ, PAD_HOME=str(tmp_path / "data"), PAD_SOCKET=str(tmp_path / "run" / "pad.sock")),
            capture_output=True, text=True, timeout=30,
        )
        assert out.returncode != 0 and "--mcp-http-allow-public" in out.stderr, out.stderr
        assert "172.17.0.1" in out.stderr, "the refusal says what to use instead"


def test_ending_a_session_answers_200_and_no_priming_event(http_engine):
    """DELETE of a session: 200 (clients expect 200 or 204). A 2025-06-18
    client gets no empty-data priming event before its answer."""
    def post(body, session=None):
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "Authorization": f"Bearer {http_engine.token}", "MCP-Protocol-Version": "2025-06-18"}
        if session:
            headers["Mcp-Session-Id"] = session
        return urllib.request.urlopen(urllib.request.Request(
            http_engine.url, data=body.encode(), headers=headers, method="POST"), timeout=10)

    r = post('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
             '"capabilities":{},"clientInfo":{"name":"x","version":"0"}}}')
    session = r.headers["Mcp-Session-Id"]
    first = r.read().decode()
    assert first.lstrip().startswith("data: {") or first.lstrip().startswith("{"), first
    assert "retry:" not in first and 'data: \n' not in first and "data:\n" not in first, first
    post('{"jsonrpc":"2.0","method":"notifications/initialized"}', session)
    call = post('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_tags",'
                '"arguments":{"pad":"remote"}}}', session).read().decode()
    assert call.lstrip().startswith("data: {"), call
    assert "retry:" not in call, call
    d = urllib.request.urlopen(urllib.request.Request(http_engine.url, method="DELETE", headers={
        "Authorization": f"Bearer {http_engine.token}", "Mcp-Session-Id": session}), timeout=10)
    assert d.status in (200, 204)


async def with_sse_session(url, token, body):
    from mcp.client.sse import sse_client
    async with sse_client(url, headers={"Authorization": f"Bearer {token}"}) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await body(session)


def test_the_older_sse_transport_on_the_same_url(http_engine):
    """Agent Zero speaks MCP's SSE transport to an entry with a `url` and no
    `type`: the same URL serves it, with the same tools and token."""
    async def body(s):
        tools = {t.name for t in (await s.list_tools()).tools}
        added = await s.call_tool("add_note", {"content": "written over SSE", "tags": ["sse"]})
        unknown = await s.call_tool("add_note", {"content": "x", "tag": "sse"})
        return tools, added, unknown

    tools, added, unknown = asyncio.run(with_sse_session(http_engine.url, http_engine.token, body))
    assert "add_note" in tools and "ask_person" in tools
    assert not added.is_error, added
    assert unknown.is_error and "Did you mean 'tags'?" in unknown.content[0].text
    with http_engine.client() as c:
        e = c.get(added.content[0].text.split()[2])
        assert e["author"] == "agent-http" and e["tags"] == ["sse"]

    # Streamable HTTP still answers on the same URL.
    async def list_only(s):
        return {t.name for t in (await s.list_tools()).tools}

    assert "add_note" in asyncio.run(with_session(http_engine.url, http_engine.token, list_only))


def test_the_sse_transport_needs_the_token_and_an_allowed_host(http_engine):
    def get(headers):
        req = urllib.request.Request(http_engine.url, headers={"Accept": "text/event-stream", **headers})
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status, r.readline().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    assert get({})[0] == 401
    auth = {"Authorization": f"Bearer {http_engine.token}"}
    status, first = get(auth)
    assert status == 200 and first.startswith("event: endpoint"), first
    port = http_engine.url.split(":")[2].split("/")[0]
    assert get({**auth, "Host": f"evil.example:{port}"})[0] == 403
    assert get({**auth, "Host": f"host.docker.internal:{port}"})[0] == 200
    bad = urllib.request.Request(http_engine.url + "?sessionId=nope", data=b"{}", headers=auth, method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(bad, timeout=5)
    assert e.value.code == 404 and "open the event stream again" in e.value.read().decode()


def test_each_access_token_is_its_own_author_and_inbox(http_engine):
    """Two Agent Zero instances with two access tokens (`pad token create`)
    write under two names, each limited to its pads, each with its own
    inbox; a revoked token gets 401 at once."""
    with http_engine.client() as owner:
        a = owner.call("token.create", {"name": "zero-a", "pads": ["team-*", "remote"]})["secret"]
        b = owner.call("token.create", {"name": "zero-b", "pads": ["team-*"]})["secret"]

    async def write(s):
        return await s.call_tool("add_note", {"content": "from my instance", "pad": "team-x"})

    ra = asyncio.run(with_session(http_engine.url, a, write))
    rb = asyncio.run(with_session(http_engine.url, b, write))
    assert not ra.is_error and not rb.is_error, (ra, rb)
    with http_engine.client() as c:
        assert c.get(ra.content[0].text.split()[2])["author"] == "zero-a"
        assert c.get(rb.content[0].text.split()[2])["author"] == "zero-b"
        person = c.call("hello", {"author": "user"})
        assert person["author"] == "user"
        c.call("entry.add", {"pad": "team-x", "content": "zero-a: look at this", "author": "user",
                             "reply_to": ra.content[0].text.split()[2]})

    async def tags(s):
        return await s.call_tool("list_tags", {"pad": "team-x"})

    seen_a = asyncio.run(with_session(http_engine.url, a, tags)).content[-1].text
    seen_b = asyncio.run(with_session(http_engine.url, b, tags)).content[-1].text
    assert "1 reply to your notes" in seen_a, seen_a
    assert "reply to your notes" not in seen_b, seen_b

    async def outside(s):
        return await s.call_tool("add_note", {"content": "not my pad", "pad": "private"})

    refused = asyncio.run(with_session(http_engine.url, b, outside))
    assert refused.is_error and "zero-b" in refused.content[0].text, refused.content[0].text

    with http_engine.client() as owner:
        owner.call("token.revoke", {"name": "zero-b"})
    req = urllib.request.Request(http_engine.url, data=b"{}", method="POST", headers={
        "Authorization": f"Bearer {b}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"})
    with pytest.raises(urllib.error.HTTPError) as gone:
        urllib.request.urlopen(req, timeout=10)
    assert gone.value.code == 401 and "revoked" in gone.value.read().decode()


def test_a_revoked_tokens_open_event_stream_ends(http_engine):
    """Revoking a token ends the event streams it holds open (an MCP
    session's), within a few seconds (src/mcp/http.rs REVOCATION_CHECK, 2 s),
    not when they next idle out; the owner's stream stays open, and the
    watch does not refresh the token's presence."""
    with http_engine.client() as owner:
        secret = owner.call("token.create", {"name": "streaming", "pads": ["remote"]})["secret"]

    def stream(token):
        req = urllib.request.Request(http_engine.url, headers={
            "Accept": "text/event-stream", "Authorization": f"Bearer {token}"})
        r = urllib.request.urlopen(req, timeout=60)
        assert r.readline().decode().startswith("event: endpoint")
        return r

    def last_seen():
        with http_engine.client() as owner:
            seen = owner.call("agent.list", {})["seen"]
        return [a["last_seen"] for a in seen if a["author"] == "streaming"]

    held, owners = stream(secret), stream(http_engine.token)
    try:
        # Watching for the revocation does not make the token look active.
        before = last_seen()
        time.sleep(4.5)
        assert last_seen() == before, (before, last_seen())
        with http_engine.client() as owner:
            owner.call("token.revoke", {"name": "streaming"})
        revoked = time.monotonic()
        # Read to its end: the server closes it.
        ended = None
        while time.monotonic() - revoked < 30:
            if not held.readline():
                ended = time.monotonic() - revoked
                break
        assert ended is not None, "the revoked token's stream is still open after 30 s"
        # The owner's is still open: reads wait (cut here by the timeout),
        # and never meet its end.
        owners.fp.raw._sock.settimeout(3)
        until = time.monotonic() + 6
        try:
            while time.monotonic() < until:
                assert owners.readline(), "the owner's stream ended"
        except (TimeoutError, socket.timeout):
            pass
    finally:
        held.close()
        owners.close()


def test_sessions_are_capped_and_a_freed_one_makes_room():
    """Past --mcp-http-max-sessions a new session gets 503 naming the limit
    and the way out; ending one (DELETE) makes room; existing sessions keep
    working meanwhile."""
    port = free_port()
    e = Engine(extra_args=["--mcp-http", f"127.0.0.1:{port}", "--mcp-http-max-sessions", "3"])
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        token = open(os.path.join(e.data, "mcp-http.token")).read().strip()

        def post(body, session=None):
            headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                       "Authorization": f"Bearer {token}", "MCP-Protocol-Version": "2025-06-18"}
            if session:
                headers["Mcp-Session-Id"] = session
            return urllib.request.urlopen(urllib.request.Request(
                url, data=body.encode(), headers=headers, method="POST"), timeout=10)

        init = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
                '"capabilities":{},"clientInfo":{"name":"x","version":"0"}}}')
        sessions = []
        for _ in range(3):
            r = post(init)
            sessions.append(r.headers["Mcp-Session-Id"])
            r.read()
            post('{"jsonrpc":"2.0","method":"notifications/initialized"}', sessions[-1]).read()
        with pytest.raises(urllib.error.HTTPError) as refused:
            post(init)
        assert refused.value.code == 503
        why = refused.value.read().decode()
        assert "3 MCP sessions are open, the limit" in why and "DELETE" in why, why
        assert refused.value.headers["Retry-After"] == "30"
        call = post('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_tags",'
                    '"arguments":{"pad":"inbox"}}}', sessions[0]).read().decode()
        assert '"result"' in call, call
        urllib.request.urlopen(urllib.request.Request(url, method="DELETE", headers={
            "Authorization": f"Bearer {token}", "Mcp-Session-Id": sessions[0]}), timeout=10).read()
        post(init).read()
    finally:
        e.stop()
