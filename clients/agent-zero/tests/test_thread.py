"""A chat's pad thread as the person reads it: the root is their words, the
status note says the chat's state, the chat's own bookkeeping stays out of
recall and under everyone's notes in searches, an answer taken before a
restart starts nothing after it, and a Stop that comes as a chat starts
halts it."""

import asyncio
import json
import subprocess
import threading

from pad_engine import pad_binary
from support import status_of, thread_of, wait_for


def new_context(name="test chat"):
    from agent import AgentContext
    from initialize import initialize_agent

    return AgentContext(initialize_agent(), name=name)


def status_note(engine, context):
    from usr.plugins.scratchpad.helpers import chat

    with engine.client() as c:
        return c.get(chat.state_of(context)["status"])


def test_the_root_is_the_persons_words_and_the_status_says_the_state(plugin, engine):
    words = "Deploy the service to staging.\nUse the new database host, not the old one."
    loop = plugin.Loop(plugin.root)
    context = new_context()

    async def between(i):
        if i == 1:
            working = status_note(engine, context)
            assert working["content"].startswith("Agent Zero is working on it"), working["content"]

    steps = [("code_execution_tool", {}), ("code_execution_tool", {}), ("response", {"text": "deployed"})]
    assert asyncio.run(loop.run(context, words, steps, between)) == "deployed"
    root = thread_of(engine, context)["entry"]
    assert root["content"] == words and "user_message" not in root["content"]
    assert root["author"] == "agent-zero" and root["meta"]["agent_zero"]["role"] == "chat"
    status = status_note(engine, context)
    assert status["meta"]["agent_zero"]["state"] == "done"
    assert status["content"] == "Agent Zero is done: its answer is the result in this thread."
    assert status_of(engine, context)["title"] == "Deploy the service to staging. Use the new database host, not the old one."


def test_recall_and_search_put_the_persons_notes_above_the_chats_own_bookkeeping(plugin, engine):
    # Other tests fill this engine's other pads (a 1,100-note chain): recall
    # reads the two pads this test writes to.
    plugin.config.write_text(json.dumps({"recall_pads": "inbox,agent-zero"}))
    task = "rotate the vault signing keys for production tonight"
    first = new_context("first")
    asyncio.run(plugin.Loop(plugin.root).run(first, task, [("response", {"text": "rotated"})]))
    earlier = thread_of(engine, first)["entry"]
    assert earlier["content"] == task
    with engine.client(author="user") as person:
        fact = person.add("vault signing keys: rotate with ops/vault.md, never during a release", pad="inbox")
        # Every note found by meaning too (the engine embeds in the background).
        wait_for(lambda: person.stats()["semantic"]["status"] == "ready" and person.stats()["embed_queue"] == 0)
    loop = plugin.Loop(plugin.root)
    second = new_context("second")
    steps = [("scratchpad", {"action": "search", "query": "rotate the vault signing keys"}),
             ("response", {"text": "ok"})]
    asyncio.run(loop.run(second, task, steps))
    recalled = loop.prompts[0]["scratchpad"]
    assert fact["id"] in recalled
    assert earlier["id"] not in recalled, "another chat's root is not recalled as knowledge"
    # The tool's search: the chats' roots (found too: the same words) under
    # the person's note.
    found = loop.responses[0].splitlines()[1:]
    ids = [line.split("]")[0].lstrip("[") for line in found]
    roots = [ids.index(r) for r in (earlier["id"], thread_of(engine, second)["entry"]["id"]) if r in ids]
    assert fact["id"] in ids and roots and ids.index(fact["id"]) < min(roots), found


def test_an_answer_taken_before_a_restart_starts_no_chat_after_it(plugin, http_engine, monkeypatch):
    """Agent Zero in Docker reads its inbox every poll_seconds: an answer
    ask_person took may still be unread when the container restarts. The
    new process must not start a chat from it."""
    from agent import AgentContext

    monkeypatch.setenv("PAD_SOCKET", "/nonexistent/pad.sock")
    plugin.config.write_text(json.dumps({"url": http_engine.url, "token": http_engine.token,
                                         "poll_seconds": 600}))
    context = new_context()
    loop = plugin.Loop(plugin.root)

    def answer():  # the person answers the question in the app while ask_person waits
        thread = wait_for(lambda: plugin.chat.state_of(context).get("thread"))
        with http_engine.client(author="user") as person:
            q = wait_for(lambda: [e for e in person.thread(thread)["replies"] if e["kind"] == "question"])
            person.reply(q[0]["id"], "approve")

    steps = [("ask_person", {"question": "Drop the table sessions_old?", "choices": ["approve", "deny"],
                             "wait_seconds": 120}),
             ("response", {"text": "dropped"})]
    threading.Thread(target=answer, daemon=True).start()
    assert asyncio.run(loop.run(context, "clean up staging", steps)) == "dropped"
    assert loop.responses[0] == "user answered: approve"

    # The restart: a new process knows nothing of the chat, and the answer is
    # still in the inbox (the old watcher slept through it).
    plugin.watcher.stop()
    plugin.chat.owned.clear()
    plugin.chat.waited.clear()
    plugin.watcher._seen.clear()
    AgentContext._contexts.pop(context.id)
    before = set(AgentContext._contexts)
    plugin.watcher.ensure_running()
    with http_engine.client(author="user") as person:  # a fresh note that must start a chat: the read went by
        fresh = person.send("agent-zero", "count the open incidents", pad="inbox")
    plugin.watcher.stop()
    plugin.watcher.ensure_running()  # reads the inbox at once, not in 600 s
    started = wait_for(lambda: set(AgentContext._contexts) - before)
    messages = [AgentContext.get(c).messages[0].message for c in started]
    assert len(started) == 1 and "count the open incidents" in messages[0], messages
    assert fresh["id"] in messages[0]


def test_a_stop_that_comes_as_the_chat_starts_halts_it_before_its_first_step(plugin, engine):
    from agent import AgentContext
    from helpers.errors import HandledException

    before = set(AgentContext._contexts)
    plugin.watcher.ensure_running()
    with engine.client(author="user") as person:
        note = person.send("agent-zero", "run the three slow migration steps", pad="inbox")
    context = AgentContext.get(wait_for(lambda: set(AgentContext._contexts) - before).pop())
    context.task = True  # Agent Zero's communicate() starts the chat's task at once: it runs
    subprocess.run([pad_binary(), "agent-zero", "stop", note["id"]], check=True, capture_output=True,
                   env={"PAD_SOCKET": engine.socket, "PAD_NO_AUTOSTART": "1", "PATH": "/usr/bin:/bin"})
    wait_for(lambda: context.id in plugin.chat.stops)
    loop = plugin.Loop(plugin.root)
    steps = [("code_execution_tool", {"code": f"migrate {i}"}) for i in range(3)] + [("response", {"text": "x"})]
    result = asyncio.run(loop.run(context, context.messages[0].message, steps))
    assert isinstance(result, HandledException) and loop.responses == [], loop.responses
    status = status_note(engine, context)
    assert status["meta"]["agent_zero"]["state"] == "stopped"
    assert status["content"].startswith("Agent Zero stopped: stopped by user"), status["content"]


def test_a_note_written_again_after_a_lost_connection_is_stored_once(plugin, engine, monkeypatch):
    from lost_answers import LostAnswers

    # The engine stores the chat's root note, and the connection drops before
    # its answer arrives: the plugin reconnects and writes it again, with
    # the same idempotency key.
    relay = LostAnswers(engine.socket, methods=("entry.add",), hang_up=True)
    monkeypatch.setenv("PAD_SOCKET", relay.socket_path)
    plugin.pad.drop_client()
    try:
        words = "Count the rows in the orders table."
        context = new_context("lost connection")
        steps = [("response", {"text": "42"})]
        assert asyncio.run(plugin.Loop(plugin.root).run(context, words, steps)) == "42"
        first, again = relay.sent[:2]
        assert first["content"] == words and first["idempotency_key"] == again["idempotency_key"]
        root = thread_of(engine, context)["entry"]
        with engine.client() as c:
            roots = [e for e in c.iter_entries(root["pad"]) if e["content"] == words]
        assert [e["id"] for e in roots] == [root["id"]]
    finally:
        relay.close()


def test_the_scratchpad_tools_note_written_again_after_a_lost_connection_is_stored_once(plugin, engine,
                                                                                       monkeypatch):
    from lost_answers import LostAnswers

    # The tool's note is stored and the connection drops before its answer:
    # the plugin's retry sends the tool call's one key again.
    words = "the tool's note whose answer is lost"
    relay = LostAnswers(engine.socket, methods=("entry.add",), hang_up=True,
                        only=lambda params: params.get("content") == words)
    monkeypatch.setenv("PAD_SOCKET", relay.socket_path)
    plugin.pad.drop_client()
    try:
        context = new_context("lost tool answer")
        steps = [("scratchpad", {"action": "add", "content": words, "pad": "lost-tool-answer"}),
                 ("response", {"text": "noted"})]
        assert asyncio.run(plugin.Loop(plugin.root).run(context, "note the deploy", steps)) == "noted"
        tried = [p for p in relay.sent if p.get("content") == words]
        assert len(tried) == 2 and tried[0]["idempotency_key"] == tried[1]["idempotency_key"], tried
        with engine.client() as c:
            assert [e["content"] for e in c.iter_entries("lost-tool-answer")] == [words]
    finally:
        relay.close()
