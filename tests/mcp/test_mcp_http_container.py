"""Agent Zero's Docker set-up on Linux, played on this machine: a network
namespace joined to the host by a veth pair (as docker0 joins a bridge
container), a client in it running as another uid than the engine's (the
container's root is not the owner), reaching `pad serve --mcp-http` on the
host end's address with the token. Root only (CI runs as root): namespaces
and veth pairs need CAP_NET_ADMIN."""

import os
import random
import subprocess
import sys
import textwrap

import pytest

from pad_engine import Engine, free_port

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CI runs as root)")

NOBODY = "65534"


def sh(*args):
    subprocess.run(args, check=True, capture_output=True, text=True)


@pytest.fixture(scope="module")
def container():
    """A namespace `ns` with 10.254.N.2, the host end at 10.254.N.1."""
    n = random.randint(1, 250)
    name, host_if, ns_if = f"padtest{os.getpid()}", f"padh{os.getpid()}", f"padc{os.getpid()}"
    host_ip, ns_ip = f"10.254.{n}.1", f"10.254.{n}.2"
    sh("ip", "netns", "add", name)
    try:
        sh("ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        sh("ip", "link", "set", ns_if, "netns", name)
        sh("ip", "addr", "add", f"{host_ip}/24", "dev", host_if)
        sh("ip", "link", "set", host_if, "up")
        sh("ip", "netns", "exec", name, "ip", "addr", "add", f"{ns_ip}/24", "dev", ns_if)
        sh("ip", "netns", "exec", name, "ip", "link", "set", ns_if, "up")
        sh("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up")
        yield {"name": name, "host_ip": host_ip}
    finally:
        subprocess.run(["ip", "link", "del", host_if], capture_output=True)
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


@pytest.fixture(scope="module")
def served(container):
    bridge_port, loop_port = free_port(container["host_ip"]), free_port("127.0.0.1")
    e = Engine(extra_args=["--mcp-http", f"{container['host_ip']}:{bridge_port}",
                           "--mcp-http", f"127.0.0.1:{loop_port}",
                           "--mcp-author", "agent-zero", "--mcp-pad", "agent-zero"])
    e.bridge = f"http://{container['host_ip']}:{bridge_port}/mcp"
    e.loopback_elsewhere = f"http://{container['host_ip']}:{loop_port}/mcp"
    e.token = open(os.path.join(e.data, "mcp-http.token")).read().strip()
    yield e
    e.stop()


def in_container(container, code, *args):
    """Runs Python `code` in the namespace as uid 65534 (not the owner)."""
    run = subprocess.run(
        ["ip", "netns", "exec", container["name"], "setpriv", "--reuid", NOBODY, "--regid", NOBODY,
         "--clear-groups", sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True, text=True, timeout=60, env={"HOME": "/tmp", "PATH": os.environ["PATH"]},
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


HTTP_STATUS = """
    import sys, urllib.request, urllib.error
    url, token, host = sys.argv[1], sys.argv[2], sys.argv[3]
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = "Bearer " + token
    if host:
        headers["Host"] = host
    body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}'
    try:
        r = urllib.request.urlopen(urllib.request.Request(url, data=body, headers=headers, method="POST"), timeout=5)
        print(r.status)
    except urllib.error.HTTPError as e:
        print(e.code, e.read().decode().strip())
    except OSError as e:
        print("unreachable", e)
"""

SDK_CALL = """
    import asyncio, sys
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def main(url, token):
        async with create_mcp_http_client(headers={"Authorization": "Bearer " + token}) as http:
            async with streamable_http_client(url, http_client=http) as (read, write, *_):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    r = await s.call_tool("add_note", {"content": "written from the container", "tags": ["docker"]})
                    print(r.content[0].text)

    asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def test_a_container_uid_reaches_the_tools_over_the_bridge_with_the_token(container, served):
    out = in_container(container, SDK_CALL, served.bridge, served.token)
    assert out.startswith("Saved note "), out
    note_id = out.split()[2]
    with served.client() as c:
        e = c.get(note_id)
        assert e["author"] == "agent-zero" and e["pad"] == "agent-zero" and e["tags"] == ["docker"]


def test_without_or_with_a_wrong_token_the_container_gets_401(container, served):
    for token, said in (("", "401 missing bearer token"), ("0" * 64, "401 wrong bearer token")):
        out = in_container(container, HTTP_STATUS, served.bridge, token, "")
        assert out.startswith(said) and "mcp-http.token" in out, out


def test_host_docker_internal_passes_the_host_check_and_other_names_do_not(container, served):
    port = served.bridge.rsplit(":", 1)[1].split("/")[0]
    ok = in_container(container, HTTP_STATUS, served.bridge, served.token, f"host.docker.internal:{port}")
    assert ok == "200", ok
    rebound = in_container(container, HTTP_STATUS, served.bridge, served.token, f"evil.example:{port}")
    assert rebound.startswith("403"), rebound


def test_nothing_else_is_reachable_from_the_container(container, served):
    # The loopback listener is not on the bridge address.
    out = in_container(container, HTTP_STATUS, served.loopback_elsewhere, served.token, "")
    assert out.startswith("unreachable"), out
    # Nor is the engine's socket, to another uid.
    probe = """
        import socket, sys
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(sys.argv[1]); print("connected")
        except OSError as e:
            print("refused", e.errno)
    """
    assert in_container(container, probe, served.socket).startswith("refused")
