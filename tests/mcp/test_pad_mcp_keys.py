"""`pad mcp`'s writes carry an idempotency key: when an answer is lost on
the way back (a relay between `pad mcp` and the real engine,
clients/python/tests/lost_answers.py, turns it into -32006 after the engine
stored the write), the tool sends the same write again with the same key,
and the note is stored once."""

import types

from lost_answers import LostAnswers
from test_pad_mcp import run, text


def test_a_tool_whose_answer_was_lost_retries_with_its_key_and_stores_once(engine):
    relay = LostAnswers(engine.socket, methods=("entry.add",))
    try:
        async def body(s):
            return await s.call_tool("add_note", {"content": "the deploy needs a second look"})

        _, added = run(types.SimpleNamespace(socket=relay.socket_path), body, pad="mcp-keys")
        assert not added.is_error, text(added)
        said = text(added)
        assert said.startswith("Saved note ") and "holds 1 note." in said, said
        # The retry is no repeat of itself.
        assert "looks like" not in said, said
        first, retry = relay.sent
        assert first["idempotency_key"] and first["idempotency_key"] == retry["idempotency_key"]
        with engine.client() as c:
            assert [e["content"] for e in c.iter_entries("mcp-keys")] == ["the deploy needs a second look"]
    finally:
        relay.close()


def test_a_claim_whose_answer_was_lost_takes_one_task(engine):
    with engine.client() as c:
        c.add_task("first", pad="mcp-claim")
        c.add_task("second", pad="mcp-claim")
    relay = LostAnswers(engine.socket, methods=("task.claim",))
    try:
        async def body(s):
            return await s.call_tool("claim_task", {"pad": "mcp-claim"})

        _, claimed = run(types.SimpleNamespace(socket=relay.socket_path), body)
        assert not claimed.is_error, text(claimed)
        assert relay.sent[0]["idempotency_key"] == relay.sent[1]["idempotency_key"]
        with engine.client() as c:
            doing = [e for e in c.plan("mcp-claim")["entries"] if e["entry"]["status"] == "doing"]
        assert len(doing) == 1, doing
    finally:
        relay.close()


