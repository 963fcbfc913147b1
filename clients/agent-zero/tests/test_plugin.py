"""The plugin's extensions and tools in a stand-in of Agent Zero's loop
(tests/loop.py), against a real engine."""

import asyncio
import json
import pathlib
import subprocess
import threading
import time

import pytest

from pad_engine import pad_binary
from support import status_of, thread_of, wait_for


def new_context(name="test chat"):
    from agent import AgentContext
    from initialize import initialize_agent

    return AgentContext(initialize_agent(), name=name)


def test_the_persons_note_is_in_the_first_prompt_and_the_answer_lands_in_the_thread(plugin, engine):
    with engine.client(author="user") as person:
        mine = person.add("the staging database moved to db-staging-2.internal last week", pad="inbox")
        person.add("lunch order: two pizzas", pad="inbox")
    context = new_context()
    loop = plugin.Loop(plugin.root)
    steps = [("scratchpad", {"action": "add", "content": "deploying to db-staging-2", "kind": "note"}),
             ("scratchpad", {"action": "search", "query": "staging database host"}),
             ("response", {"text": "Deployed to staging (db-staging-2.internal)."})]
    result = asyncio.run(loop.run(context, "Deploy the service to staging; which database host is it?", steps))
    assert result == "Deployed to staging (db-staging-2.internal)."
    first = loop.prompts[0]["scratchpad"]
    assert mine["id"] in first and "by user in inbox" in first and "s ago" in first
    assert "pizzas" not in first.split("\n")[1]  # the matching note ranks first
    thread = thread_of(engine, context)
    kinds = [(e["author"], e["kind"]) for e in thread["replies"]]
    assert ("agent-zero", "result") in kinds
    result_note = next(e for e in thread["replies"] if e["kind"] == "result")
    assert result_note["content"] == "Deployed to staging (db-staging-2.internal)."
    status = status_of(engine, context)
    assert status["state"] == "done" and status["title"].startswith("Deploy the service to staging")
    with engine.client() as c:  # the tool wrote to the plugin's pad, as agent-zero
        hits = c.search("deploying to db-staging-2", pad="agent-zero", mode="text")["hits"]
        assert hits and hits[0]["entry"]["author"] == "agent-zero"


def test_recall_respects_the_budget_and_the_pads_setting(plugin, engine):
    with engine.client(author="user") as person:
        for i in range(20):
            person.add(f"kubernetes upgrade note {i}: drain node pool {i} before the upgrade", pad="ops")
        private = person.add("kubernetes upgrade: the secret pool is excluded", pad="private")
    plugin.config.write_text(json.dumps({"recall_pads": "ops", "recall_budget_chars": 500}))
    plugin.pad._configs.clear()
    loop = plugin.Loop(plugin.root)
    asyncio.run(loop.run(new_context(), "plan the kubernetes upgrade", [("response", {"text": "ok"})]))
    text = loop.prompts[0]["scratchpad"]
    assert len(text) <= 500 and "in ops" in text and private["id"] not in text


def test_what_waits_for_the_agent_is_in_the_prompt(plugin, engine):
    with engine.client(author="agent-zero") as a0:
        earlier = a0.add("I think the cache TTL is too long", pad="agent-zero")
    plugin.watcher.ensure_running()
    with engine.client(author="user") as person:
        person.reply(earlier["id"], "agreed, make it 5 minutes")
    wait_for(lambda: plugin.watcher.pending)
    loop = plugin.Loop(plugin.root)
    asyncio.run(loop.run(new_context(), "tune the service", [("response", {"text": "done"})]))
    text = loop.prompts[0]["scratchpad"]
    assert "Waiting for you" in text and "make it 5 minutes" in text and earlier["id"] in text


def test_a_reply_mid_task_reaches_the_loop_as_an_intervention(plugin, engine):
    context = new_context()
    loop = plugin.Loop(plugin.root)

    replied = []

    async def between(i):
        if i == 1 and not replied:  # the person replies in the chat's thread while it works
            replied.append(True)
            root = thread_of(engine, context)["entry"]["id"]
            with engine.client(author="user") as person:
                person.reply(root, "use the blue-green deploy, not rolling")
            for _ in range(2400):  # up to 2 min, beside a busy CPU
                if context.agent0.intervention:
                    break
                await asyncio.sleep(0.05)

    steps = [("code_execution_tool", {"code": "ls"}), ("code_execution_tool", {"code": "make"}),
             ("code_execution_tool", {"code": "make deploy"}), ("response", {"text": "deployed"})]
    assert asyncio.run(loop.run(context, "deploy it", steps, between)) == "deployed"
    assert len(loop.history) == 1 and "blue-green" in loop.history[0] and "by user" in loop.history[0]


def test_stop_from_the_pad_halts_the_loop_at_its_next_step(plugin, engine):
    from helpers.errors import HandledException

    context = new_context()
    loop = plugin.Loop(plugin.root)
    ran = []

    async def between(i):
        ran.append(i)
        if i == 1:
            root = thread_of(engine, context)["entry"]["id"]
            subprocess.run([pad_binary(), "agent-zero", "stop", root], check=True, capture_output=True,
                           env={"PAD_SOCKET": engine.socket, "PAD_NO_AUTOSTART": "1", "PATH": "/usr/bin:/bin"})
            for _ in range(2400):  # up to 2 min, beside a busy CPU
                if context.id in plugin.chat.stops:
                    break
                await asyncio.sleep(0.05)

    steps = [("code_execution_tool", {})] * 5 + [("response", {"text": "never"})]
    result = asyncio.run(loop.run(context, "a long job", steps, between))
    assert isinstance(result, HandledException) and ran == [0, 1]
    status = status_of(engine, context)
    assert status["state"] == "stopped" and "stopped by user at step 1" in status["step"]
    assert any("Stopped by user" in e["content"] for e in thread_of(engine, context)["replies"])


def test_pause_holds_the_loop_until_resume(plugin, engine):
    context = new_context()
    loop = plugin.Loop(plugin.root)
    paused_at, bystander = [], []

    async def between(i):
        # Another author's control is only words (an intervention: the step
        # runs again), and the chat goes on.
        if i == 0 and not paused_at and not bystander:
            root = thread_of(engine, context)["entry"]["id"]
            with engine.client(author="bystander") as other:
                other.reply(root, "pause", meta={"control": "pause"})
            await asyncio.sleep(1)
            bystander.append(context.paused)
        elif i == 0 and not paused_at:
            root = thread_of(engine, context)["entry"]["id"]
            with engine.client(author="user") as person:
                person.reply(root, "pause", meta={"control": "pause"})
            for _ in range(2400):  # up to 2 min, beside a busy CPU
                if context.paused:
                    break
                await asyncio.sleep(0.05)
            paused_at.append(context.paused)
            wait_for(lambda: status_of(engine, context)["state"] == "paused")  # said just after the pause

            def resume():
                time.sleep(0.5)
                with engine.client(author="user") as person:
                    person.reply(root, "resume", meta={"control": "resume"})

            threading.Thread(target=resume).start()

    t = time.monotonic()
    assert asyncio.run(loop.run(context, "work", [("response", {"text": "done"})], between)) == "done"
    assert bystander == [False] and paused_at == [True] and time.monotonic() - t >= 0.5
    assert any("Written by bystander" in m for m in loop.history), loop.history


def test_ask_person_returns_the_answer_given_in_the_app(plugin, engine):
    context = new_context()
    loop = plugin.Loop(plugin.root)

    def answer():
        with engine.client(author="user") as person:
            q = wait_for(lambda: person.list("agent-zero", kind="question")["entries"])
            person.reply(q[0]["id"], "approve")

    threading.Thread(target=answer).start()
    steps = [("ask_person", {"question": "Drop the table sessions_old?", "choices": ["approve", "deny"]}),
             ("response", {"text": "dropped"})]
    asyncio.run(loop.run(context, "clean up staging", steps))
    tool_results = [e for e in thread_of(engine, context)["replies"] if e["kind"] == "question"]
    assert tool_results and tool_results[0]["choices"] == ["approve", "deny"]
    assert "needs_eyes" not in tool_results[0]["tags"]  # answered
    assert loop.history == []  # the answer reached the tool, not the loop as an intervention


def test_an_addressed_note_starts_a_chat_whose_result_comes_back_once(plugin, engine):
    from agent import AgentContext

    before = set(AgentContext._contexts)
    plugin.watcher.ensure_running()
    with engine.client(author="user") as person:
        note = person.send("agent-zero", "summarise yesterday's CI failures", pad="inbox")
    new = wait_for(lambda: set(AgentContext._contexts) - before)
    context = AgentContext.get(new.pop())
    assert "summarise yesterday's CI failures" in context.messages[0].message
    loop = plugin.Loop(plugin.root)
    asyncio.run(loop.run(context, context.messages[0].message, [("response", {"text": "3 flaky tests"})]))
    with engine.client() as c:
        replies = c.thread(note["id"])["replies"]
    results = [e for e in replies if e["kind"] == "result"]
    assert len(results) == 1 and results[0]["content"] == "3 flaky tests"
    time.sleep(0.5)  # no second chat for the same note
    assert len(set(AgentContext._contexts) - before) == 1


def test_notify_user_reaches_the_desktop_through_the_pad(plugin, engine):
    context = new_context()
    loop = plugin.Loop(plugin.root)
    steps = [("notify_user", {"title": "Build", "message": "the release build is green"}),
             ("response", {"text": "ok"})]
    asyncio.run(loop.run(context, "build it", steps))
    notes = [e for e in thread_of(engine, context)["replies"] if "needs_eyes" in e["tags"]]
    assert notes and notes[0]["content"] == "Build: the release build is green"


def test_with_the_engine_down_the_loop_finishes_and_says_so_once(plugin, engine, tmp_path):
    plugin.config.write_text(json.dumps({"socket": str(tmp_path / "nothing.sock")}))
    loop = plugin.Loop(plugin.root)
    steps = [("scratchpad", {"action": "search", "query": "x y z"}), ("code_execution_tool", {}),
             ("response", {"text": "finished without the pad"})]
    assert asyncio.run(loop.run(new_context(), "do it", steps)) == "finished without the pad"
    errors = [line for kind, line in plugin.log if kind == "error" and "no engine answers" in line]
    assert len(errors) == 1 and "keeps working" in errors[0]
    plugin.config.unlink()  # the engine is back: the plugin recovers by itself
    plugin.pad._configs.clear()  # (settings are re-read within a second; not worth the wait here)
    assert asyncio.run(plugin.Loop(plugin.root).run(new_context(), "again", [("response", {"text": "ok"})])) == "ok"
    assert any("answers again" in line for _, line in plugin.log)


def test_a_wrong_token_gives_one_line_naming_the_fix(plugin, engine):
    plugin.config.write_text(json.dumps({"token": "padt_wrong"}))
    asyncio.run(plugin.Loop(plugin.root).run(new_context(), "x", [("response", {"text": "ok"})]))
    errors = [line for kind, line in plugin.log if kind == "error"]
    assert len(errors) == 1 and "token" in errors[0] and "pad token create" in errors[0]


def test_install_into_a_usr_volume_keeps_settings_and_drops_stale_files(tmp_path):
    usr = tmp_path / "usr"
    (usr / "plugins" / "scratchpad" / "tools").mkdir(parents=True)
    (usr / "plugins" / "scratchpad" / "config.json").write_text('{"pad": "mine"}')
    (usr / "plugins" / "scratchpad" / "tools" / "old_tool.py").write_text("")
    done = subprocess.run([pad_binary(), "agent-zero", "install", str(usr)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "usr folder" in done.stdout and "Restart Agent Zero" in done.stdout
    base = usr / "plugins" / "scratchpad"
    assert (base / "config.json").read_text() == '{"pad": "mine"}'
    assert not (base / "tools" / "old_tool.py").exists()
    assert (base / "plugin.yaml").exists() and (base / "helpers" / "scratchpad_client.py").exists()
    bad = subprocess.run([pad_binary(), "agent-zero", "install", str(tmp_path / "elsewhere")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "checkout" in bad.stderr


def test_in_docker_the_plugin_reaches_the_engine_over_http_with_a_token(plugin, http_engine, monkeypatch):
    """Agent Zero in a container: no socket, the engine's HTTP endpoint and an
    access token. Recall, the thread, and the person's reply (read by polling
    the inbox: HTTP carries no events) all work as on the socket."""
    monkeypatch.setenv("PAD_SOCKET", "/nonexistent/pad.sock")
    plugin.config.write_text(json.dumps({"url": http_engine.url, "token": http_engine.token,
                                         "poll_seconds": 0.2}))
    with http_engine.client(author="user") as person:
        note = person.add("the release branch is frozen until friday", pad="inbox")
    context = new_context()
    loop = plugin.Loop(plugin.root)
    replied = []

    async def between(i):
        if i == 1 and not replied:
            replied.append(True)
            with http_engine.client(author="user") as person:
                person.reply(thread_of(http_engine, context)["entry"]["id"], "ship it anyway, I approve")
            for _ in range(2400):  # up to 2 min, beside a busy CPU
                if context.agent0.intervention:
                    break
                await asyncio.sleep(0.05)

    steps = [("scratchpad", {"action": "search", "query": "release branch frozen"}),
             ("code_execution_tool", {}), ("response", {"text": "shipped"})]
    assert asyncio.run(loop.run(context, "can we ship the release branch?", steps, between)) == "shipped"
    assert note["id"] in loop.prompts[0]["scratchpad"]
    assert len(loop.history) == 1 and "I approve" in loop.history[0]
    results = [e for e in thread_of(http_engine, context)["replies"] if e["kind"] == "result"]
    assert results and results[0]["author"] == "agent-zero"


def test_over_http_a_wrong_token_gives_one_line_naming_the_fix(plugin, http_engine, monkeypatch):
    monkeypatch.setenv("PAD_SOCKET", "/nonexistent/pad.sock")
    plugin.config.write_text(json.dumps({"url": http_engine.url, "token": "padt_wrong"}))
    asyncio.run(plugin.Loop(plugin.root).run(new_context(), "x", [("scratchpad", {"action": "inbox"}),
                                                                    ("response", {"text": "ok"})]))
    errors = [line for kind, line in plugin.log if kind == "error"]
    assert len(errors) == 1 and "refused" in errors[0] and "pad token create" in errors[0]


def test_with_agent_zero_registered_over_a2a_the_plugin_leaves_addressed_notes_to_a2a(plugin, engine, tmp_path):
    """Never both: when the engine sends notes for `agent-zero` over A2A, the
    plugin starts no chat for them (and says why once in its log)."""
    import socket as socket_module
    import sys

    from agent import AgentContext

    with socket_module.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    agents_py = pathlib.Path(__file__).resolve().parents[3] / "tests" / "a2a" / "agents.py"
    server = subprocess.Popen([sys.executable, str(agents_py), "agent-zero", str(port), str(tmp_path / "a2a.log")])
    try:
        wait_for(lambda: socket_module.socket().connect_ex(("127.0.0.1", port)) == 0)
        with engine.client() as owner:
            owner.add_agent("agent-zero", f"http://127.0.0.1:{port}/a2a/t-s3cr3t-a0-token")
        before = set(AgentContext._contexts)
        plugin.watcher.ensure_running()
        with engine.client(author="user") as person:
            note = person.send("agent-zero", "count the open incidents", pad="inbox")
        with engine.client() as c:
            wait_for(lambda: any(r["kind"] == "result" for r in c.thread(note["id"])["replies"]))
        time.sleep(0.5)
        assert set(AgentContext._contexts) == before  # delivered once: over A2A
        assert any("over A2A, not through the plugin" in line for _, line in plugin.log)
    finally:
        server.terminate()
        server.wait(timeout=10)
        with engine.client() as owner:
            owner.call("agent.remove", {"name": "agent-zero"})


def test_the_settings_page_says_whom_it_reached_or_what_to_fix(plugin, engine, tmp_path):
    """Its "Test connection" (api/status.py) with the settings being edited."""
    import importlib.util

    path = plugin.root / "usr" / "plugins" / "scratchpad" / "api" / "status.py"
    spec = importlib.util.spec_from_file_location("scratchpad_status_api", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    handler = module.Status()
    ok = asyncio.run(handler.process({"config": {}}, None))
    assert ok["ok"] and "Connected as agent-zero" in ok["line"], ok
    down = asyncio.run(handler.process({"config": {"socket": str(tmp_path / "none.sock")}}, None))
    assert not down["ok"] and "no engine answers" in down["line"]
    refused = asyncio.run(handler.process({"config": {"token": "padt_wrong"}}, None))
    assert not refused["ok"] and "pad token create" in refused["line"], refused


def test_a_chat_opened_by_agent_zeros_a2a_server_gets_no_second_thread(plugin, engine):
    """Agent Zero's A2A server runs a handed-over note in a background chat;
    the engine already keeps that note's thread, so the plugin opens none
    (its tools still work)."""
    from agent import AgentContext, AgentContextType
    from initialize import initialize_agent

    context = AgentContext(initialize_agent(), type=AgentContextType.BACKGROUND)
    loop = plugin.Loop(plugin.root)
    steps = [("scratchpad", {"action": "add", "content": "counted 4 open incidents"}),
             ("response", {"text": "incidents tallied: 4 open"})]
    assert asyncio.run(loop.run(context, "count the open incidents", steps)) == "incidents tallied: 4 open"
    assert "thread" not in plugin.chat.state_of(context)
    with engine.client() as c:
        assert c.search("counted 4 open incidents", mode="text")["hits"]
        assert not c.search("tallied", mode="text")["hits"]  # no result posted by the plugin


def test_a_note_at_the_end_of_a_deep_reply_chain_still_starts_its_chat(plugin, engine):
    """A reply chain 1,100 deep ending in a note to agent-zero: the plugin
    looks a bounded way up the thread (no RecursionError, no call per note)
    and the note starts its chat."""
    from agent import AgentContext

    before = set(AgentContext._contexts)
    with engine.client(author="someone") as c:
        at = c.add("the start of a long chain", pad="deep")["id"]
        for i in range(1100):
            at = c.reply(at, f"and then {i}")["id"]
    plugin.watcher.ensure_running()
    with engine.client(author="user") as person:
        person.call("entry.add", {"pad": "deep", "content": "sum this chain up", "to": ["agent-zero"],
                                  "reply_to": at})
    new = wait_for(lambda: set(AgentContext._contexts) - before)
    context = AgentContext.get(new.pop())
    assert "sum this chain up" in context.messages[0].message


def test_only_notes_handed_to_agent_zero_start_chats_and_each_writer_has_a_bound(plugin, engine):
    """A token whose grant names no agent once started 40 chats with 40
    notes to agent-zero. The engine decides, as for A2A agents: a note
    starts a chat when it was handed to agent-zero (the person wrote it, or
    a token whose grant names agent-zero); and one writer's notes start at
    most CHATS_PER_AUTHOR chats in a window."""
    from agent import AgentContext

    plugin.watcher._started.clear()
    with engine.client() as owner:
        nobody = owner.call("token.create", {"name": "stranger", "pads": ["*"]})["secret"]
        named = owner.call("token.create", {"name": "flooder", "pads": ["*"], "agents": ["agent-zero"]})["secret"]
    before = set(AgentContext._contexts)
    plugin.watcher.ensure_running()
    with engine.client(token=nobody) as stranger:
        for i in range(3):
            stranger.send("agent-zero", f"run rm -rf for me {i}", pad="inbox")
    with engine.client(token=named) as flooder:
        sent = [flooder.send("agent-zero", f"job {i}", pad="inbox")["id"] for i in range(plugin.watcher.CHATS_PER_AUTHOR + 2)]
    started = wait_for(lambda: len(set(AgentContext._contexts) - before) >= plugin.watcher.CHATS_PER_AUTHOR
                       and set(AgentContext._contexts) - before)
    time.sleep(1)  # nothing more comes
    new = [AgentContext.get(c) for c in set(AgentContext._contexts) - before]
    assert len(new) == plugin.watcher.CHATS_PER_AUTHOR, [c.messages[0].message for c in new]
    texts = " ".join(c.messages[0].message for c in new)
    assert "rm -rf" not in texts
    assert all(f"job {i}" in texts for i in range(plugin.watcher.CHATS_PER_AUTHOR))
    assert len(sent) == plugin.watcher.CHATS_PER_AUTHOR + 2
    kept = " ".join(str(e.get("content")) for e in plugin.watcher.take_pending())
    assert "rm -rf for me 0" in kept and f"job {plugin.watcher.CHATS_PER_AUTHOR + 1}" in kept


def test_who_recalls_beside_agent_zeros_own_memory(plugin, engine):
    """`recall_by`: with Agent Zero's `_memory` recalling too, the plugin (by
    default still recalling) says so once; "agent-zero" leaves notes to it
    but still shows what waits; a wrong value is named with the choices."""
    import shutil

    memory = plugin.root / "usr" / "plugins" / "_memory"
    memory.mkdir()
    (memory / "default_config.yaml").write_text("memory_recall_enabled: true\n")
    recall = __import__("usr.plugins.scratchpad.helpers.recall", fromlist=["recall"])
    recall._memory_checked, recall._said_both = (-1e9, False), False
    try:
        with engine.client(author="user") as person:
            fact = person.add("the nightly backup of the billing database runs at 02:00 UTC", pad="inbox")
        for _ in range(2):
            loop = plugin.Loop(plugin.root)
            asyncio.run(loop.run(new_context(), "when does the billing database backup run?",
                                 [("response", {"text": "02:00"})]))
            assert fact["id"] in loop.prompts[0]["scratchpad"]
        said = [line for _, line in plugin.log if "memory recall is on too" in line]
        assert len(said) == 1 and "Settings → Memory" in said[0] and "recall_by" in said[0]

        plugin.config.write_text(json.dumps({"recall_by": "agent-zero", "take_addressed": False}))
        plugin.pad._configs.clear()
        plugin.watcher.ensure_running()
        with engine.client(author="user") as person:  # addressed, kept for the next prompt
            eyes = person.send("agent-zero", "look at the failed billing backup", pad="inbox")
        wait_for(lambda: any(e["id"] == eyes["id"] for e in plugin.watcher.pending))
        loop = plugin.Loop(plugin.root)
        asyncio.run(loop.run(new_context(), "when does the billing database backup run?",
                             [("response", {"text": "02:00"})]))
        text = loop.prompts[0]["scratchpad"]
        assert eyes["id"] in text and "Waiting for you" in text
        assert fact["id"] not in text and "Notes from the scratchpad" not in text

        plugin.config.write_text(json.dumps({"recall_by": "everyone"}))
        plugin.pad._configs.clear()
        asyncio.run(plugin.Loop(plugin.root).run(new_context(), "x y z", [("response", {"text": "ok"})]))
        errors = [line for kind, line in plugin.log if kind == "error" and "recall_by" in line]
        assert len(errors) == 1 and "scratchpad, both, agent-zero" in errors[0]
    finally:
        shutil.rmtree(memory)
        recall._memory_checked = (-1e9, False)
