"""The Python client against a real engine."""

import json
import os
import threading
import time

import pytest

import scratchpad
from pad_engine import Engine
from scratchpad import Client


def test_hello_sets_the_default_author(engine):
    with engine.client(author="agent-py") as c:
        assert c.server["server"] == "scratchpad"
        assert c.server["protocol"] == scratchpad.PROTOCOL_VERSION
        e = c.add("written from python", pad="py-hello")
        assert e["author"] == "agent-py"
        assert c.add("someone else", pad="py-hello", author="other")["author"] == "other"


def test_entry_lifecycle_with_versions(engine):
    with engine.client(author="agent-py") as c:
        e = c.add("first draft", pad="py-life", tags=["Draft", "#x"], kind="plan", meta={"k": 1})
        assert e["tags"] == ["draft", "x"] and e["kind"] == "plan" and e["version"] == 1
        assert c.get(e["id"])["content"] == "first draft"
        e2 = c.update(e["id"], content="second draft", if_version=1, meta=None)
        assert e2["version"] == 2 and e2["meta"] is None
        with pytest.raises(scratchpad.Conflict) as stale:
            c.update(e["id"], content="lost update", if_version=1)
        assert stale.value.code == -32002
        assert c.get(e["id"])["content"] == "second draft"
        assert c.delete(e["id"])["deleted"] is True
        with pytest.raises(scratchpad.NotFound):
            c.get(e["id"])


def test_errors_carry_code_field_and_limit(engine):
    with engine.client() as c:
        with pytest.raises(scratchpad.InvalidParams) as too_many:
            c.add("x", pad="py-err", tags=[f"t{i}" for i in range(11)])
        err = too_many.value
        assert err.code == -32602 and err.field == "tags"
        assert err.data["limit"] == 10 and err.data["got"] == 11
        assert "limit is 10" in err.message
        with pytest.raises(scratchpad.TooLarge):
            c.add("x" * 4001, pad="py-err")
        with pytest.raises(scratchpad.MethodNotFound):
            c.call("entry.frobnicate")
        with pytest.raises(scratchpad.InvalidParams) as unknown:
            c.call("entry.add", {"pad": "py-err", "content": "x", "colour": "red"})
        assert "colour" in unknown.value.message
        # The connection is still usable after every error.
        assert c.add("still fine", pad="py-err")["content"] == "still fine"


def test_no_engine_is_a_clear_error(tmp_path):
    with pytest.raises(scratchpad.EngineUnavailable) as gone:
        Client(str(tmp_path / "nothing.sock"))
    assert "pad serve" in str(gone.value)


def test_paging_sees_every_entry_once(engine):
    with engine.client() as c:
        ids = {c.add(f"note {i}", pad="py-page")["id"] for i in range(1234)}
        seen = [e["id"] for e in c.iter_entries("py-page", limit=100)]
        assert len(seen) == len(set(seen)) == 1234
        assert set(seen) == ids
        page = c.list("py-page", limit=10)
        assert len(page["entries"]) == 10 and page["next_cursor"]


def test_search_tags_pads_export_stats(engine):
    with engine.client(author="agent-py") as c:
        c.add("docker login fails with 401", pad="py-search", tags=["docker"])
        c.add("lunch is pizza", pad="py-search")
        r = c.search("docker login", pad="py-search")
        assert r["mode"] == "text"  # this engine runs without a model
        assert [h["entry"]["content"] for h in r["hits"]] == ["docker login fails with 401"]
        assert r["hits"][0]["found_by"] == ["text"]
        with pytest.raises(scratchpad.Unavailable) as no_model:
            c.search("docker", mode="semantic")
        assert "mode 'text'" in no_model.value.message
        assert {"tag": "docker", "count": 1} in c.tags("py-search")
        pad = c.configure_pad("py-search", ttl_seconds=None, max_entries=100)
        assert pad["ttl_seconds"] is None and pad["max_entries"] == 100
        assert c.touch_pad("py-search")["name"] == "py-search"
        assert any(p["name"] == "py-search" for p in c.pads())
        md = c.export_pad("py-search")
        assert "docker login fails with 401" in md and "lunch is pizza" in md
        s = c.stats()
        assert s["entries"] >= 2 and s["semantic"]["status"] == "off"
        assert c.clear_pad("py-search") == 2
        assert c.list("py-search")["entries"] == []


def test_subscribe_yields_events_and_calls_still_work(engine):
    with engine.client() as watcher, engine.client(author="writer") as writer:
        sub = watcher.subscribe(pads=["py-sub-*"])
        other = watcher.subscribe(tags=["needs_eyes"])
        first = writer.add("one", pad="py-sub-a")
        # A call in between: the event that arrives meanwhile is kept.
        assert watcher.get(first["id"])["content"] == "one"
        writer.add("elsewhere", pad="py-nowhere")
        poke = writer.add("look at this", pad="py-sub-b", tags=["needs_eyes"])
        events = [next(sub), next(sub)]
        assert [(e["type"], e["entry"]["content"]) for e in events] == [
            ("created", "one"),
            ("created", "look at this"),
        ]
        poked = next(other)
        assert poked["entry"]["id"] == poke["id"]
        sub.close()
        other.close()


def test_subscription_blocks_until_an_event_comes(engine):
    with engine.client() as watcher:
        sub = watcher.subscribe(pads=["py-later"])

        def write_soon():
            time.sleep(0.2)
            with engine.client() as w:
                w.add("arrived later", pad="py-later")

        threading.Thread(target=write_soon).start()
        event = next(sub)
        assert event["type"] == "created" and event["entry"]["content"] == "arrived later"


def test_semantic_search_and_reindex(semantic_engine):
    with semantic_engine.client() as c:
        target = c.add("cannot authenticate to the container registry", pad="py-sem")
        c.add("lunch order for friday is pizza", pad="py-sem")
        deadline = time.time() + 60
        while True:
            s = c.stats()
            assert s["semantic"]["status"] in ("loading", "ready"), s["semantic"]
            if s["semantic"]["status"] == "ready" and s["embed_queue"] == 0 and s["semantic"]["vectors"] == 2:
                break
            assert time.time() < deadline, s
            time.sleep(0.05)
        r = c.search("docker login failures", mode="semantic", limit=1)
        assert r["hits"][0]["entry"]["id"] == target["id"]
        assert r["hits"][0]["found_by"] == ["semantic"]
        r = c.search("docker login failures")
        assert r["mode"] == "hybrid" and r["hits"][0]["entry"]["id"] == target["id"]
        assert c.reindex() == 2


def test_tasks_plans_reports_and_tokens(engine):
    with Client(engine.socket, author="planner") as c:
        a = c.add_task("collect the logs", "py-plan")
        b = c.add_task("find the leak", "py-plan", after=[a["id"]])
        plan = c.plan("py-plan")
        assert [s["entry"]["id"] for s in plan["entries"]] == [a["id"], b["id"]]
        assert [s["state"] for s in plan["entries"]] == ["ready", "blocked"]

        held = c.claim_task("py-plan", agent="worker", lease_seconds=60)
        assert held["id"] == a["id"] and held["status"] == "doing"
        assert c.claim_task("py-plan", agent="other") is None, "b waits on a"
        assert c.heartbeat(a["id"], "3 of 5 hosts", agent="worker")["resume"] == "3 of 5 hosts"
        with pytest.raises(scratchpad.Conflict):
            c.heartbeat(a["id"], agent="other")
        assert c.complete_task(a["id"], agent="worker")["status"] == "done"
        assert c.claim_task("py-plan", agent="worker")["id"] == b["id"]
        failed = c.fail_task(b["id"], "OOM", retry=True)
        assert failed["status"] == "todo" and failed["error"] == "OOM"

        copies = c.share(a["id"], ["py-elsewhere"])
        assert copies[0]["meta"]["shared_from"]["id"] == a["id"]
        report = c.report("py-plan")
        assert {x["author"]: x["tasks_done"] for x in report["authors"]}["worker"] == 1
        assert "## Tasks" in c.export_pad("py-plan", budget=2000)

        secret = c.create_token("py-bot", ["py-elsewhere"], read_only=True)
        assert [t["name"] for t in c.tokens()] == ["py-bot"]

    with Client(engine.socket, token=secret) as bot:
        assert bot.server["access"].startswith("token py-bot")
        assert [e["pad"] for e in bot.iter_entries()] == ["py-elsewhere"]
        with pytest.raises(scratchpad.Forbidden) as e:
            bot.add("sneaky", "py-elsewhere")
        assert "read-only" in str(e.value)
        with Client(engine.socket) as owner:
            owner.revoke_token("py-bot")
        with pytest.raises(scratchpad.Forbidden):
            bot.list("py-elsewhere")


def test_a_late_answer_reaches_an_asker_that_never_read_its_inbox(engine):
    """Issue 28: ask, give up after a second, the person answers later; the
    asker's first inbox read holds the answer."""
    with Client(engine.socket, author="agent-py-late") as agent:
        r = agent.ask("Rotate the keys now?", pad="py-late", choices=["yes", "no"], wait_seconds=1)
        assert r["answer"] is None
        with engine.client(author="user") as person:
            answer = person.reply(r["question"]["id"], "no")
        inbox = agent.inbox()
        assert [e["id"] for e in inbox["replies"]] == [answer["id"]], inbox
        assert agent.inbox()["replies"] == []


def test_ask_waits_past_the_socket_timeout_for_the_answer(engine):
    """`ask()` blocks until the person replies, even beyond the client's own
    socket timeout; `reply()` and `thread()` work the conversation."""
    answered = {}

    def person():
        with engine.client(author="user") as p:
            for _ in range(600):
                open_ = p.list("py-ask", kind="question")["entries"]
                if open_:
                    time.sleep(1.5)  # longer than the asker's socket timeout
                    answered["reply"] = p.reply(open_[0]["id"], "approve")
                    return
                time.sleep(0.05)

    helper = threading.Thread(target=person)
    helper.start()
    with Client(engine.socket, author="agent-py", timeout=1.0) as c:
        r = c.ask("Drop the staging DB?", pad="py-ask", choices=["approve", "deny"], wait_seconds=20)
        helper.join()
        assert r["answer"]["id"] == answered["reply"]["id"]
        assert r["answer"]["content"] == "approve" and r["answer"]["author"] == "user"
        q = r["question"]
        assert q["kind"] == "question" and q["choices"] == ["approve", "deny"]
        assert q["tags"] == ["needs_eyes"]
        t = c.thread(q["id"])
        assert t["entry"]["answer"] == r["answer"]["id"]
        assert [e["content"] for e in t["replies"]] == ["approve"]
        late = c.ask("Which region?", pad="py-ask", wait_seconds=0)
        assert late["answer"] is None
        with pytest.raises(scratchpad.NotFound) as missing:
            c.reply("zzzzzzzzzzzz", "hello?")
        assert missing.value.field == "id"


def test_http_client_speaks_the_protocol_over_post_rpc_with_an_access_token():
    """`HttpClient`: the engine's protocol on the --mcp-http listener
    (`POST /rpc`), as the token's author, within its pads; the server's own
    token, a wrong token and `subscribe` are refused in words that say why."""
    import socket as socket_module
    import urllib.error
    import urllib.request

    with socket_module.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    engine = Engine(extra_args=["--mcp-http", f"127.0.0.1:{port}"])
    url = f"http://127.0.0.1:{port}"
    try:
        with engine.client() as owner:
            secret = owner.create_token("http-bot", ["bots-*"])
        c = scratchpad.HttpClient(url, secret)
        assert c.server["author"] == "http-bot"
        e = c.add("reached over http", pad="bots-a", tags=["http"])
        assert e["author"] == "http-bot"
        assert c.search("reached over http", pad="bots-a", mode="text")["hits"][0]["entry"]["id"] == e["id"]
        with pytest.raises(scratchpad.Forbidden):
            c.add("not my pad", pad="inbox")
        with pytest.raises(scratchpad.MethodNotFound, match="poll `inbox`"):
            c.call("subscribe", {})
        with pytest.raises(scratchpad.Forbidden, match="refused the token"):
            scratchpad.HttpClient(url, "padt_not_a_token")
        server_token = open(os.path.join(engine.data, "mcp-http.token")).read().strip()
        with pytest.raises(scratchpad.Forbidden, match="access token, not the MCP server"):
            scratchpad.HttpClient(url, server_token)
        request = urllib.request.Request(url + "/rpc", data=b"not json", method="POST",
                                         headers={"Authorization": f"Bearer {secret}"})
        with urllib.request.urlopen(request, timeout=10) as r:
            assert json.loads(r.read())["error"]["code"] == -32700
        # A page whose name was rebound to this address is refused, as on /mcp.
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "stats", "params": {}}).encode()
        rebound = urllib.request.Request(url + "/rpc", data=body, method="POST",
                                         headers={"Authorization": f"Bearer {secret}",
                                                  "Host": f"evil.example:{port}"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(rebound, timeout=10)
        assert refused.value.code == 403
        with pytest.raises(scratchpad.EngineUnavailable, match="no Scratchpad engine answers"):
            scratchpad.HttpClient("http://127.0.0.1:9/", secret, timeout=2)
    finally:
        engine.stop()
