"""Only the owner and token holders get in, and a token sees only its grant
(docs/security.md, "Threat model"): impostor engines are refused before
anything is sent, files stay private, revocation reaches subscriptions, and
a token cannot write or read as someone else."""

import json
import os
import pathlib
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

from pad_engine import Engine, pad_binary
import scratchpad

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="serving as another uid needs root (CI runs as root)")

IMPOSTOR = """
    import socket, sys
    s = socket.socket(socket.AF_UNIX)
    s.bind(sys.argv[1]); s.listen(8)
    print("ready", flush=True)
    got = b""
    while True:
        c, _ = s.accept()
        c.settimeout(1)
        try:
            while True:
                d = c.recv(65536)
                if not d: break
                got += d
        except OSError:
            pass
        c.close()
        open(sys.argv[2], "ab").write(got)
"""


def impostor(sock_path, record):
    """A fake engine serving `sock_path` as uid 65534, recording what it gets."""
    p = subprocess.Popen(["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups",
                          sys.executable, "-c", textwrap.dedent(IMPOSTOR), sock_path, record],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


@pytest.fixture
def impostors():
    """Two fake engines: one in a directory another user owns (as
    /tmp/scratchpad-$UID made first by someone else), one in a directory of
    ours but served by another uid."""
    base = tempfile.mkdtemp(prefix="pad-impostor-")
    os.chmod(base, 0o755)  # the other user must reach its own directory
    tmp_path = pathlib.Path(base)
    theirs = tmp_path / "scratchpad-0"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, NOBODY, NOBODY)
    record = tmp_path / "record"
    record.touch()
    os.chmod(record, 0o666)
    a = impostor(str(theirs / "pad.sock"), str(record))
    bound = tmp_path / "bind"
    bound.mkdir(mode=0o700)
    os.chown(bound, NOBODY, NOBODY)
    b = impostor(str(bound / "pad.sock"), str(record))
    ours = tmp_path / "ours"
    ours.mkdir(mode=0o700)
    os.rename(bound / "pad.sock", ours / "pad.sock")  # a listening socket keeps working when moved
    yield [str(theirs / "pad.sock"), str(ours / "pad.sock")], record
    for p in (a, b):
        p.kill()
        p.wait()
    shutil.rmtree(base)


@as_root
def test_an_impostor_engine_gets_nothing_from_the_cli_pad_mcp_or_the_python_client(impostors, tmp_path):
    sockets, record = impostors
    secret = "padt_" + "s" * 40
    for sock in sockets:
        with pytest.raises(scratchpad.NotYourEngine) as refused:
            scratchpad.Client(sock, token=secret)
        assert "not your engine" in str(refused.value)
        env = dict(os.environ, PAD_SOCKET=sock, PAD_TOKEN=secret, PAD_HOME=str(tmp_path / "home"),
                   PAD_NO_AUTOSTART="1")
        cli = subprocess.run([pad_binary(), "note", "the launch codes"], env=env, capture_output=True, text=True, timeout=30)
        assert cli.returncode != 0 and "not your engine" in cli.stderr, cli.stderr
        msgs = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add_note", "arguments": {"content": "the launch codes"}}},
        ]
        out = subprocess.run([pad_binary(), "mcp"], env=env, capture_output=True, text=True, timeout=30,
                             input="".join(json.dumps(m) + "\n" for m in msgs)).stdout
        result = json.loads(out.strip().splitlines()[-1])["result"]
        assert result["isError"] and "not your engine" in result["content"][0]["text"], result
    time.sleep(0.3)
    assert record.read_bytes() == b"", "the impostors received nothing"


def test_a_socket_path_that_is_a_file_is_never_removed(tmp_path):
    victim = tmp_path / "notes.txt"
    victim.write_text("mine")
    env = dict(os.environ, PAD_SOCKET=str(victim), PAD_HOME=str(tmp_path / "data"), PAD_NO_SEMANTIC="1")
    out = subprocess.run([pad_binary(), "serve"], env=env, capture_output=True, text=True, timeout=30)
    assert out.returncode != 0 and "is not a socket; nothing was removed" in out.stderr, out.stderr
    assert victim.read_text() == "mine"


def test_every_file_is_private_under_umask_022_in_a_0755_directory(tmp_path):
    home = tmp_path / "data"
    home.mkdir(mode=0o755)
    os.chmod(home, 0o755)
    stale = home / "engine.log"
    stale.write_text("from an older version\n")
    os.chmod(stale, 0o644)
    sock = tmp_path / "run" / "pad.sock"
    env = dict(os.environ, PAD_HOME=str(home), PAD_SOCKET=str(sock), PAD_NO_SEMANTIC="1", PAD_LOG="warn")
    engine = subprocess.Popen([pad_binary(), "serve"], env=env, preexec_fn=lambda: os.umask(0o022))
    try:
        deadline = time.time() + 20
        while not sock.exists():
            assert time.time() < deadline and engine.poll() is None
            time.sleep(0.02)
        with scratchpad.Client(str(sock)) as c:
            for i in range(20):
                c.add(f"private note {i}", pad="p", tags=["x"])
            c.search("private")
        loose = []
        for root, dirs, files in os.walk(home):
            for f in files:
                mode = stat.S_IMODE(os.stat(os.path.join(root, f)).st_mode)
                if mode & 0o077:
                    loose.append((os.path.join(root, f), oct(mode)))
        assert not loose, loose
        assert any(f.startswith("pad.db") for f in os.listdir(home))
    finally:
        engine.terminate()
        engine.wait()


@pytest.fixture(scope="module")
def engine():
    e = Engine()
    yield e
    e.stop()


def test_revoking_a_token_ends_its_subscriptions(engine):
    with engine.client() as owner:
        secret = owner.create_token("watcher", ["team-*"])
    with engine.client(token=secret) as watcher, engine.client() as owner:
        sub = watcher.subscribe(pads=["team-*"])
        owner.add("before", pad="team-a")
        assert watcher.next_event(sub.id)["entry"]["content"] == "before"
        owner.revoke_token("watcher")
        owner.add("after the revocation: secret plans", pad="team-a")
        watcher._sock.settimeout(1.5)
        with pytest.raises((TimeoutError, socket.timeout, OSError)):
            watcher.next_event(sub.id)


def test_a_token_writes_only_under_its_own_name_and_reads_only_its_own_inbox(engine):
    with engine.client() as owner:
        secret = owner.create_token("agent-t", ["team-*", "inbox"])
    with engine.client(token=secret, author="user") as t:
        assert t.server["author"] == "agent-t"
        # A call naming anyone else as who acts is refused, saying so.
        for method, params in [
            ("entry.add", {"pad": "team-b", "content": "please approve the payment", "author": "user"}),
            ("ask", {"content": "ok?", "wait_seconds": 0, "author": "user"}),
            ("inbox", {"author": "user"}),
            ("task.claim", {"pad": "team-b", "agent": "user"}),
        ]:
            with pytest.raises(scratchpad.Forbidden) as refused:
                t.call(method, params)
            assert "acts only as itself" in str(refused.value), method
        e = t.add("please approve the payment", pad="team-b", tags=["needs_eyes"])
        assert e["author"] == "agent-t"
        q = t.call("ask", {"content": "ok?", "wait_seconds": 0})["question"]
        assert q["author"] == "agent-t"
        t.call("inbox", {"author": "agent-t", "peek": True})


def test_a_token_learns_nothing_outside_its_grant(engine):
    with engine.client() as owner:
        secret = owner.create_token("scoped", ["scope-*"], read_only=True)
        foreign = owner.add("the merger is off", pad="board-secret", tags=["confidential"])
        owner.add("ours", pad="scope-a", tags=["mine"])
    with engine.client(token=secret) as t:
        stats = t.call("stats", {"activity": True})
        text = json.dumps(stats)
        assert "board-secret" not in text and "confidential" not in text, text
        assert stats["pads"] == 1 and stats["entries"] == 1 and stats["tags"] == 1, stats
        assert [p["name"] for p in stats["activity"]["busiest_pads"]] == ["scope-a"]
        assert stats["activity"]["entries_last_hour"] == 1, "the write rate counts its pads only"
        for method, params in [("entry.get", {"id": foreign["id"]}),
                               ("entry.thread", {"id": foreign["id"]}),
                               ("entry.get", {"id": foreign["id"][:11]})]:
            # A prefix resolves among the entries the token may read: one it
            # shares with "ours" (written in the same millisecond) names ours.
            try:
                got = t.call(method, params)
            except (scratchpad.NotFound, scratchpad.InvalidParams) as hidden:
                said = str(hidden)
                assert "board-secret" not in said and foreign["id"] not in said.replace(params["id"], ""), \
                    (method, said)
            else:
                assert len(params["id"]) < 12 and got["entry"]["pad"] == "scope-a", (method, got)


def test_a_tokens_task_cannot_wait_on_a_foreign_task(engine):
    with engine.client() as owner:
        secret = owner.create_token("planner-t", ["work-*"])
        foreign = owner.add("secret migration", pad="ops-private", kind="task")
    with engine.client(token=secret) as t:
        with pytest.raises(scratchpad.NotFound) as refused:
            t.add("watch it", pad="work-a", kind="task", depends_on=[foreign["id"]])
        assert refused.value.field == "depends_on" and "ops-private" not in str(refused.value)
        mine = t.add("mine", pad="work-a", kind="task")
        with pytest.raises(scratchpad.NotFound):
            t.call("entry.update", {"id": mine["id"], "depends_on": [foreign["id"]]})


def test_a_sweep_of_every_method_shows_a_scoped_token_nothing_foreign(engine):
    """Every method, called by a `proj-*` token with a foreign id, prefix,
    pad and author: no answer, error or event holds a foreign pad name, id,
    tag, author or content it did not send itself."""
    with engine.client() as owner:
        secret = owner.create_token("sweeper", ["proj-*"])
        foreign = owner.add("zebra-content-0451", pad="hidden-place", tags=["xylotag"],
                            kind="task", author="owner-agent")
        owner.add("ours", pad="proj-a", kind="task")
    fid = foreign["id"]
    hidden = ["hidden-place", "xylotag", "zebra-content-0451", "owner-agent", fid]
    calls = [
        ("hello", {}),
        ("entry.add", {"pad": "proj-a", "content": "x", "reply_to": fid}),
        ("entry.add", {"pad": "proj-a", "content": "x", "kind": "task", "depends_on": [fid]}),
        ("entry.get", {"id": fid}),
        ("entry.update", {"id": fid, "content": "mine"}),
        ("entry.delete", {"id": fid}),
        ("entry.list", {"pad": "hidden-place"}),
        ("entry.list", {"tags": ["xylotag"]}),
        ("entry.list", {"author": "owner-agent"}),
        ("entry.list", {}),
        ("search", {"query": "zebra"}),
        ("tags.list", {}),
        ("pad.list", {"include_archived": True}),
        ("pad.configure", {"name": "hidden-place", "ttl_seconds": 60}),
        ("pad.touch", {"name": "hidden-place"}),
        ("pad.clear", {"name": "hidden-place"}),
        ("pad.export", {"name": "hidden-place"}),
        ("subscribe", {"pads": ["hidden-place"]}),
        ("unsubscribe", {"subscription": 999}),
        ("stats", {"activity": True}),
        ("reindex", {}),
        ("inbox", {"author": "owner-agent"}),
        ("inbox", {}),
        ("plan.order", {"pad": "hidden-place"}),
        ("task.claim", {"pad": "hidden-place", "agent": "sweeper"}),
        ("task.heartbeat", {"id": fid}),
        ("task.complete", {"id": fid}),
        ("task.fail", {"id": fid, "error": "x"}),
        ("entry.share", {"id": fid, "to": ["proj-a"]}),
        ("entry.thread", {"id": fid}),
        ("ask", {"content": "q", "pad": "hidden-place", "wait_seconds": 0}),
        ("report", {"pad": "hidden-place"}),
        ("report", {}),
        ("token.create", {"name": "x", "pads": ["*"]}),
        ("token.list", {}),
        ("token.revoke", {"name": "sweeper-other"}),
    ] + [("entry.get", {"id": fid[:n]}) for n in (4, 8, 11)]
    seen = []
    with engine.client(token=secret) as t:
        sub = t.subscribe()  # every pad it may see
        for method, params in calls:
            try:
                said = json.dumps(t.call(method, params))
            except scratchpad.ScratchpadError as e:
                said = f"{e} {json.dumps(e.data)}"
            seen.append((method, json.dumps(params), said))
        with engine.client() as owner:
            owner.add("zebra-content-0451 again", pad="hidden-place", tags=["xylotag"])
        t._sock.settimeout(1.0)
        try:
            while True:
                seen.append(("event", "", json.dumps(t.next_event(sub.id))))
        except (TimeoutError, socket.timeout, OSError):
            pass
    leaks = [(m, word, said) for m, sent, said in seen for word in hidden
             if word in said and word not in sent]
    assert not leaks, leaks
    with engine.client() as owner:
        assert owner.get(fid)["content"] == "zebra-content-0451", "nothing foreign changed"
