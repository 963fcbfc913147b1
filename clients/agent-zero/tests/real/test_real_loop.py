"""The plugin in Agent Zero's real loop (conftest.py says how it runs)."""

import json
import os
import threading
import time

import pytest

from support import status_of, thread_of, wait_for


def run_chat(message, timeout=120):
    from agent import AgentContext, UserMessage
    from initialize import initialize_agent

    context = AgentContext(initialize_agent(), name="real loop test")
    task = context.communicate(UserMessage(message=message))
    return context, task


@pytest.fixture(autouse=True)
def fresh(model, engine):
    model.script.clear()
    model.requests.clear()
    yield


def test_the_persons_note_found_by_meaning_is_in_the_first_prompt_and_the_answer_lands_as_a_result(model, engine):
    with engine.client(author="user") as person:
        note = person.add("our pre-production Postgres moved to pg-stg-07.internal", pad="inbox")
        person.add("buy coffee beans on friday", pad="inbox")
    model.script[:] = [("scratchpad", {"action": "add", "content": "deploying against pg-stg-07"}),
                       ("scratchpad", {"action": "search", "query": "pre-production Postgres"}),
                       ("response", {"text": "Deployed; the staging database is pg-stg-07.internal."})]
    context, task = run_chat("Which server hosts the staging database? Deploy there.")
    assert task.result_sync(timeout=120) == "Deployed; the staging database is pg-stg-07.internal."
    first = model.prompt(0)
    assert note["id"] in first and "by user in inbox" in first
    assert note["id"] in model.prompt(2)  # the tool's search result reached the model
    thread = thread_of(engine, context)
    # The root is the person's words, not Agent Zero's framing of them.
    assert thread["entry"]["content"] == "Which server hosts the staging database? Deploy there."
    results = [e for e in thread["replies"] if e["kind"] == "result"]
    assert len(results) == 1 and "pg-stg-07" in results[0]["content"]
    assert [e["content"] for e in thread["replies"] if (e.get("meta") or {}).get("agent_zero", {}).get("role")
            == "status"] == ["Agent Zero is done: its answer is the result in this thread."]
    with engine.client() as c:
        added = c.search("deploying against pg-stg-07", mode="text")["hits"]
        assert added and added[0]["entry"]["author"] == "agent-zero"


def test_a_reply_written_mid_task_reaches_the_loop_as_an_intervention(model, engine):
    holder = {}

    def reply_then_call():
        root = thread_of(engine, holder["context"])["entry"]["id"]
        with engine.client(author="user") as person:
            person.reply(root, "use the blue-green deploy, not rolling")
        wait_for(lambda: holder["context"].agent0.intervention is not None)
        return ("scratchpad", {"action": "inbox"})

    model.script[:] = [reply_then_call, ("response", {"text": "deployed blue-green"})]
    from agent import AgentContext, UserMessage
    from initialize import initialize_agent

    context = AgentContext(initialize_agent(), name="intervention test")
    holder["context"] = context
    task = context.communicate(UserMessage(message="deploy the service"))
    assert task.result_sync(timeout=120) == "deployed blue-green"
    assert "blue-green deploy, not rolling" in model.prompt(1)


def test_stop_from_the_pad_halts_the_loop(model, engine):
    holder = {}

    def stop_then_call():
        from usr.plugins.scratchpad.helpers import chat

        root = thread_of(engine, holder["context"])["entry"]["id"]
        with engine.client(author="user") as person:
            person.reply(root, "stop", meta={"control": "stop"})
        wait_for(lambda: holder["context"].id in chat.stops)
        return ("scratchpad", {"action": "inbox"})

    model.script[:] = [stop_then_call] + [("scratchpad", {"action": "inbox"})] * 5
    from agent import AgentContext, UserMessage
    from initialize import initialize_agent

    context = AgentContext(initialize_agent(), name="stop test")
    holder["context"] = context
    task = context.communicate(UserMessage(message="a long job"))
    try:
        task.result_sync(timeout=120)
    except Exception:
        pass  # Agent Zero ends a halted chat with its HandledException
    assert len(model.requests) == 1
    assert status_of(engine, context)["state"] == "stopped"


def test_ask_person_returns_the_answer_given_in_the_app(model, engine):
    def answer():
        with engine.client(author="user") as person:
            q = wait_for(lambda: [e for e in person.list("agent-zero", kind="question")["entries"]
                                  if "sessions_old" in e["content"] and not e["answer"]])
            person.reply(q[0]["id"], "approve")

    threading.Thread(target=answer, daemon=True).start()
    model.script[:] = [("ask_person", {"question": "Drop the table sessions_old?", "choices": ["approve", "deny"]}),
                       ("response", {"text": "dropped"})]
    context, task = run_chat("clean up staging")
    assert task.result_sync(timeout=120) == "dropped"
    assert "user answered: approve" in model.prompt(1)


def test_an_addressed_note_starts_a_chat_whose_result_comes_back_once(model, engine):
    from usr.plugins.scratchpad.helpers import watcher

    watcher.ensure_running()  # Agent Zero's job loop starts it in the web server
    model.script[:] = [("response", {"text": "3 flaky tests, all in the login suite"})]
    with engine.client(author="user") as person:
        note = person.send("agent-zero", "summarise yesterday's CI failures", pad="inbox")

    def results():
        with engine.client() as c:
            return [e for e in c.thread(note["id"])["replies"] if e["kind"] == "result"]

    found = wait_for(results, timeout=120)
    time.sleep(1)
    assert len(results()) == 1 and found[0]["content"] == "3 flaky tests, all in the login suite"
    assert "summarise yesterday's CI failures" in model.prompt(0)


def test_with_the_engine_down_the_loop_finishes_and_says_so_once(model, engine, a0, tmp_path, monkeypatch):
    from usr.plugins.scratchpad.helpers import pad

    said = []
    monkeypatch.setattr(pad, "log", lambda line, error=False: said.append((error, line)))
    config = a0 / "usr" / "plugins" / "scratchpad" / "config.json"
    saved = config.read_text() if config.exists() else None  # in a container: the URL and token
    config.write_text(json.dumps({**pad.DEFAULTS, "socket": str(tmp_path / "none.sock")}))
    pad._configs.clear()
    try:
        model.script[:] = [("scratchpad", {"action": "search", "query": "anything"}),
                           ("response", {"text": "done without the pad"})]
        context, task = run_chat("do the thing")
        assert task.result_sync(timeout=120) == "done without the pad"
        assert "not reachable" in model.prompt(1)
        errors = [line for error, line in said if error and "no engine answers" in line]
        assert len(errors) == 1
    finally:
        if saved is None:
            config.unlink()
        else:
            config.write_text(saved)
        pad._configs.clear()


def test_the_settings_page_api_answers_in_agent_zero(a0, engine):
    """The settings page's "Test connection" as Agent Zero's API loads it."""
    import asyncio

    from usr.plugins.scratchpad.api.status import Status

    r = asyncio.run(Status(None, None).process({"config": {}}, None))
    assert r["ok"] and "Connected as agent-zero" in r["line"], r
    if os.environ.get("PAD_ENGINE_SOCKET"):  # in a container: over HTTP, as its token
        assert "access: token agent-zero" in r["line"], r
