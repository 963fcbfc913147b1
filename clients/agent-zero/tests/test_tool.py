"""The native Agent Zero tool against a real engine."""

import asyncio
import types


def run(tool_module, engine, monkeypatch, **args):
    monkeypatch.setenv("PAD_SOCKET", engine.socket)
    monkeypatch.setenv("PAD_PAD", "a0")
    monkeypatch.delenv("PAD_AUTHOR", raising=False)
    agent = types.SimpleNamespace(agent_name="Agent 0")
    tool = tool_module.Scratchpad(agent, "scratchpad", None, args, "")
    response = asyncio.run(tool.execute())
    assert response.break_loop is False
    return response.message


def test_actions_round_trip(tool_module, engine, monkeypatch):
    msg = run(tool_module, engine, monkeypatch, action="add",
              content="login fails because the refresh token is cached", tags=["login"], kind="insight")
    assert msg.startswith("Saved note ") and "to pad 'a0'" in msg
    note_id = msg.split()[2]
    with engine.client() as c:
        e = c.get(note_id)
        assert (e["author"], e["pad"], e["kind"], e["tags"]) == ("agent-0", "a0", "insight", ["login"])

    found = run(tool_module, engine, monkeypatch, action="search", query="refresh token")
    assert "1 hit (" in found and "hit(s)" not in found and note_id in found
    assert note_id in run(tool_module, engine, monkeypatch, action="list", tags=["login"])
    assert "#login (1)" in run(tool_module, engine, monkeypatch, action="tags")
    assert "refresh token is cached" in run(tool_module, engine, monkeypatch, action="read")
    updated = run(tool_module, engine, monkeypatch, action="update", id=note_id, content="fixed: TTL 5 min")
    assert "version 2" in updated and "fixed: TTL 5 min" in updated
    assert f"Deleted {note_id}." == run(tool_module, engine, monkeypatch, action="delete", id=note_id)


def test_inbox_and_replies(tool_module, engine, monkeypatch):
    assert run(tool_module, engine, monkeypatch, action="inbox") == "Nothing new."
    mine = run(tool_module, engine, monkeypatch, action="add", content="deploy plan v1").split()[2]
    with engine.client(author="user") as person:
        person.add("look at the deploy plan", pad="a0", tags=["needs_eyes"])
        person.reply(mine, "v1 misses the rollback step")
    inbox = run(tool_module, engine, monkeypatch, action="inbox")
    assert "needs eyes: [" in inbox and "look at the deploy plan" in inbox
    assert "reply: [" in inbox and "misses the rollback step" in inbox
    assert run(tool_module, engine, monkeypatch, action="inbox") == "Nothing new."


def test_ask_waits_for_the_users_answer(tool_module, engine, monkeypatch):
    import threading
    import time

    def answer():
        with engine.client(author="user") as person:
            for _ in range(600):
                open_ = person.list("a0", kind="question")["entries"]
                if open_:
                    person.reply(open_[0]["id"], "deny")
                    return
                time.sleep(0.05)

    helper = threading.Thread(target=answer)
    helper.start()
    msg = run(tool_module, engine, monkeypatch, action="ask", question="Force-push main?",
              choices=["approve", "deny"], wait_seconds=30)
    helper.join()
    assert msg.startswith("Answer from user: deny"), msg
    late = run(tool_module, engine, monkeypatch, action="ask", question="Which region?", wait_seconds=0)
    assert late.startswith("No answer yet after 0 s; the question is "), late


def test_mistakes_are_explained(tool_module, engine, monkeypatch):
    msg = run(tool_module, engine, monkeypatch, action="add", content="x", tags=[f"t{i}" for i in range(11)])
    assert msg.startswith("Scratchpad refused the add:") and "limit is 10" in msg
    assert "Use one of: add, ask, search" in run(tool_module, engine, monkeypatch, action="frobnicate")
    assert "give content, tags or status" in run(tool_module, engine, monkeypatch, action="update", id="x")


def test_unreachable_engine(tool_module, engine, monkeypatch, tmp_path):
    monkeypatch.setenv("PAD_SOCKET", str(tmp_path / "none.sock"))
    agent = types.SimpleNamespace(agent_name="Agent 0")
    tool = tool_module.Scratchpad(agent, "scratchpad", None, {"action": "list"}, "")
    msg = asyncio.run(tool.execute()).message
    assert msg.startswith("The scratchpad is not reachable") and "pad serve" in msg
