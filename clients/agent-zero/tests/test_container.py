"""The plugin in a real Docker container, as Agent Zero's image runs it:
root, in /a0, `usr/` a volume from the host, the default bridge,
`host.docker.internal` by `--add-host=…:host-gateway`, reaching the engine
only over HTTP through docker0 with the token `pad agent-zero install --url
… --token-file …` wrote. Inside, the stand-in loop (tests/loop.py) drives a
chat (container/drive.py); the person acts from the host.

The image comes from scripts/docker-image (Debian by debootstrap, no
registry), whose name scripts/test passes in PAD_CONTAINER_IMAGE; it starts
dockerd too. Without it this module has nothing to run."""

import json
import os
import pathlib
import shutil
import socket
import subprocess
import threading

import pytest

from pad_engine import Engine, pad_binary
from support import wait_for

IMAGE = os.environ.get("PAD_CONTAINER_IMAGE")
pytestmark = pytest.mark.skipif(not IMAGE, reason="run by scripts/test, which makes the image (scripts/docker-image)")
HERE = pathlib.Path(__file__).resolve().parent
DOCKER = ["docker"] if os.geteuid() == 0 else ["sudo", "-n", "docker"]


def gateway() -> str:
    """docker0's address: what host.docker.internal is inside."""
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "docker0"], capture_output=True, text=True,
                         check=True).stdout
    return out.split(" inet ")[1].split("/")[0]


@pytest.fixture(scope="module")
def served():
    """An engine serving HTTP on docker0 only, and a token for Agent Zero's pads."""
    with socket.socket() as s:
        s.bind((gateway(), 0))
        port = s.getsockname()[1]
    e = Engine(extra_args=["--mcp-http", f"{gateway()}:{port}"])
    e.port = port
    with e.client() as owner:
        e.token = owner.create_token("agent-zero", ["agent-zero", "inbox"])
    yield e
    e.stop()


@pytest.fixture()
def a0(tmp_path, served):
    """Agent Zero's /a0 (the stand-ins) and its usr/ volume, the plugin installed
    into the volume the Docker way."""
    root = tmp_path / "a0"
    shutil.copytree(HERE / "standins", root)
    (root / "usr").mkdir()
    token = tmp_path / "token"
    token.touch(mode=0o600)
    token.write_text(served.token)
    done = subprocess.run([pad_binary(), "agent-zero", "install", str(root / "usr"), "--url",
                           f"http://host.docker.internal:{served.port}", "--token-file", str(token)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert served.token not in done.stdout + done.stderr
    return root


def in_container(a0: pathlib.Path, scenario: str) -> dict:
    name = f"scratchpad-test-{os.getpid()}-{scenario}"
    cmd = [*DOCKER, "run", "--rm", "--name", name, "--add-host=host.docker.internal:host-gateway",
           "-e", "PYTHONDONTWRITEBYTECODE=1", "-w", "/a0",
           "-v", f"{a0}:/a0:ro", "-v", f"{a0 / 'usr'}:/a0/usr", "-v", f"{HERE}:/tests:ro",
           IMAGE, "python3", "/tests/container/drive.py", scenario]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    finally:
        subprocess.run([*DOCKER, "rm", "-f", name], capture_output=True)
    outcome = [line for line in done.stdout.splitlines() if line.startswith("OUTCOME ")]
    assert done.returncode == 0 and outcome, f"{done.stdout}\n{done.stderr}"
    return json.loads(outcome[0].removeprefix("OUTCOME "))


def test_a_chat_in_a_container_recalls_asks_hears_the_person_and_leaves_its_result(a0, served):
    with served.client(author="user") as person:
        fact = person.add("the staging database moved to db-staging-2.internal last week", pad="inbox")
        person.add("launch codes for the staging database host: 7431-alpha (private)", pad="private")

    def person_acts():
        with served.client(author="user") as person:
            q = wait_for(lambda: person.list("agent-zero", kind="question")["entries"], timeout=240)
            person.reply(q[0]["id"], "approve")
            person.reply(q[0]["reply_to"], "use the blue-green deploy, not rolling")

    acting = threading.Thread(target=person_acts, daemon=True)
    acting.start()
    out = in_container(a0, "work")
    acting.join(timeout=10)
    assert out["result"] == "Deployed to db-staging-2.internal.", out
    assert fact["id"] in out["prompts"][0] and "by user in inbox" in out["prompts"][0]
    assert fact["id"] in out["responses"][0]  # the tool's search, over HTTP
    assert "approve" in out["responses"][1]  # ask_person's answer, given on the host
    assert len(out["history"]) == 1 and "blue-green" in out["history"][0]
    seen = json.dumps([out["prompts"], out["responses"]])
    assert "7431-alpha" not in seen, "the token's scope held"
    assert out["errors"] == []
    with served.client() as c:
        replies = c.thread(out["thread"])["replies"]
        results = [e for e in replies if e["kind"] == "result"]
        assert len(results) == 1 and results[0]["author"] == "agent-zero"
        assert results[0]["content"] == "Deployed to db-staging-2.internal."


def test_delegations_in_a_container_are_tasks_held_under_the_tokens_name_nested_and_failed(a0, served):
    """Each `call_subordinate` of a chat in the container is a task in its
    pad, written over HTTP with the token: the superior's message, held by
    the token's name (a token holds tasks only under its own name) with
    chat and level in `meta`, the answer as its outcome, a nested
    delegation in its parent task's thread, a failure as the task's error."""
    out = in_container(a0, "delegate")
    assert out["result"] == "all done; the other chat: HandledException", out
    assert out["errors"] == []
    with served.client() as c:
        found = c.list("agent-zero", kind="task", limit=50)["entries"]
    tasks = {e["content"]: e for e in found if (e.get("meta") or {}).get("agent_zero", {}).get("role") == "delegation"}
    survey, count = tasks["survey the error logs of last night"], tasks["count the errors per service"]
    summary, certs = tasks["write the summary for the person"], tasks["rotate the staging certificates"]
    assert len(tasks) == 4, sorted(tasks)
    assert {t["assignee"] for t in tasks.values()} == {"agent-zero"}
    assert survey["reply_to"] == summary["reply_to"] == out["thread"] and count["reply_to"] == survey["id"]
    assert [t["status"] for t in (survey, count, summary)] == ["done"] * 3
    assert survey["resume"] == "Answered: 12 errors last night: api 9, worker 3"
    assert count["resume"] == "Answered: api 9, worker 3"
    assert survey["meta"]["agent_zero"]["chat"] == out["chat"]
    assert (survey["meta"]["agent_zero"]["level"], count["meta"]["agent_zero"]["level"]) == (1, 2)
    assert certs["status"] == "failed" and "certbot: rate limit reached" in certs["error"], certs
    assert certs["meta"]["agent_zero"]["chat"] != out["chat"]


def test_a_container_whose_engine_is_unreachable_finishes_and_says_so_once(a0, served):
    config = a0 / "usr" / "plugins" / "scratchpad" / "config.json"
    settings = json.loads(config.read_text())
    with socket.socket() as s:  # a port on docker0 where nothing listens
        s.bind((gateway(), 0))
        closed = s.getsockname()[1]
    settings["url"] = f"http://host.docker.internal:{closed}"
    config.write_text(json.dumps(settings))
    out = in_container(a0, "unreachable")
    assert out["result"] == "finished without the pad"
    assert len(out["errors"]) == 1 and "keeps working" in out["errors"][0], out["errors"]
    assert str(closed) in out["errors"][0]


A0_DIR, A0_PYTHON = os.environ.get("A0_DIR"), os.environ.get("A0_PYTHON")


@pytest.mark.skipif(not (A0_DIR and A0_PYTHON),
                    reason="Agent Zero's real loop needs A0_DIR and A0_PYTHON (docs/agent-zero.md)")
def test_agent_zeros_real_loop_passes_its_tests_in_the_container(tmp_path):
    """tests/real — Agent Zero's own loop, the plugin installed from its ZIP
    by Agent Zero's installer — inside the container, the engine on the host
    reached over HTTP through docker0 with a token (the person acts on its
    socket, mounted). Agent Zero's Python and packages are mounted from the
    host at their own paths: the image cannot be pulled here."""
    venv = pathlib.Path(A0_PYTHON).parent.parent  # a venv: bin/python
    home = next(line.split("=", 1)[1].strip() for line in (venv / "pyvenv.cfg").read_text().splitlines()
                if line.startswith("home"))
    base = pathlib.Path(home).parent
    repo = HERE.parents[2]
    with socket.socket() as s:
        s.bind((gateway(), 0))
        port = s.getsockname()[1]
    engine = Engine(semantic=True, extra_args=["--mcp-http", f"{gateway()}:{port}"])
    try:
        with engine.client() as owner:
            token = owner.create_token("agent-zero", ["*"])
        name = f"scratchpad-test-{os.getpid()}-a0"
        mounts = []
        for path, mode in ((A0_DIR, "ro"), (venv, "ro"), (base, "ro"), (repo, "ro"),
                           (pathlib.Path(pad_binary()).parent, "ro"), (pathlib.Path(engine.socket).parent, "rw")):
            mounts += ["-v", f"{path}:{path}:{mode}"]
        env = {"A0_DIR": A0_DIR, "PAD_BIN": pad_binary(), "PAD_ENGINE_SOCKET": engine.socket,
               "PAD_ENGINE_URL": f"http://host.docker.internal:{port}", "PAD_ENGINE_TOKEN": token,
               "PYTHONDONTWRITEBYTECODE": "1", "GIT_PYTHON_REFRESH": "quiet", "HOME": "/root"}
        cmd = [*DOCKER, "run", "--rm", "--name", name, "--add-host=host.docker.internal:host-gateway", *mounts,
               *[a for k, v in env.items() for a in ("-e", f"{k}={v}")], "-w", "/tmp", IMAGE,
               str(venv / "bin" / "python"), "-m", "pytest", "-q", "-rp", "-p", "no:cacheprovider",
               str(repo / "clients" / "agent-zero" / "tests" / "real")]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
        finally:
            subprocess.run([*DOCKER, "rm", "-f", name], capture_output=True)
        assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
        assert " passed" in done.stdout and " failed" not in done.stdout and " skipped" not in done.stdout
        # The delegations' own tests ran in there too (-rp names each passed test).
        assert "PASSED" in done.stdout and "test_delegation.py::" in done.stdout, done.stdout[-3000:]
        print("inside the container:", done.stdout.strip().splitlines()[-1])
    finally:
        engine.stop()
