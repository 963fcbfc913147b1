"""Writes carry an idempotency key: a retry after an answer that never came
(here lost by a relay, `lost_answers.py`, after the real engine stored the
write) sends the same key, and the engine stores the note once. The Python
client and the `pad` CLI both."""

import os
import subprocess

import scratchpad
from lost_answers import LostAnswers
from pad_engine import pad_binary
from scratchpad import Client


def test_a_write_whose_answer_was_lost_is_retried_with_its_key_and_stored_once(engine):
    relay = LostAnswers(engine.socket)
    try:
        with Client(socket_path=relay.socket_path, author="keyed") as c:
            note = c.add("stored once", pad="idem-lost")
        first, retry = relay.sent
        assert first["idempotency_key"] and first["idempotency_key"] == retry["idempotency_key"]
        with engine.client() as c:
            entries = c.list(pad="idem-lost")["entries"]
        assert [e["id"] for e in entries] == [note["id"]]
    finally:
        relay.close()


def test_a_claim_whose_answer_was_lost_takes_one_task(engine):
    with engine.client() as c:
        c.add_task("first", pad="idem-claim")
        c.add_task("second", pad="idem-claim")
    relay = LostAnswers(engine.socket, methods=("task.claim",))
    try:
        with Client(socket_path=relay.socket_path, author="worker") as c:
            task = c.claim_task("idem-claim")
        assert relay.sent[0]["idempotency_key"] == relay.sent[1]["idempotency_key"]
        with engine.client() as c:
            doing = [e["entry"]["id"] for e in c.plan("idem-claim")["entries"]
                     if e["entry"]["status"] == "doing"]
        assert doing == [task["id"]]
    finally:
        relay.close()


def test_each_write_has_its_own_key_and_a_given_key_is_kept(engine):
    relay = LostAnswers(engine.socket, lose=0)
    try:
        with Client(socket_path=relay.socket_path) as c:
            a = c.add("same words", pad="idem-own")
            b = c.add("same words", pad="idem-own")
            assert a["id"] != b["id"], "two calls, two notes"
            k1 = c.add("mine", pad="idem-own", idempotency_key="my-key")
            k2 = c.add("mine", pad="idem-own", idempotency_key="my-key")
            assert k1 == k2
        keys = [s["idempotency_key"] for s in relay.sent]
        assert keys[0] != keys[1] and keys[2:] == ["my-key", "my-key"]
        with engine.client() as c:
            try:
                c.add("other words", pad="idem-own", idempotency_key="my-key")
                raise AssertionError("a key sent with another call is refused")
            except scratchpad.InvalidParams as e:
                assert e.field == "idempotency_key"
    finally:
        relay.close()


def test_the_cli_retries_a_note_whose_answer_was_lost_with_its_key(engine):
    relay = LostAnswers(engine.socket, methods=("entry.add",))
    try:
        out = subprocess.run([pad_binary(), "note", "--socket", relay.socket_path, "--pad", "idem-cli",
                              "--json", "written from a shell"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        first, retry = relay.sent
        assert first["idempotency_key"] and first["idempotency_key"] == retry["idempotency_key"]
        with engine.client() as c:
            assert [e["content"] for e in c.list(pad="idem-cli")["entries"]] == ["written from a shell"]
    finally:
        relay.close()


def test_an_ask_whose_answer_was_lost_puts_one_question(engine):
    relay = LostAnswers(engine.socket, methods=("ask",))
    try:
        with Client(socket_path=relay.socket_path, author="asker") as c:
            asked = c.ask("ship it?", pad="idem-ask", choices=["yes", "no"], wait_seconds=0)
        assert relay.sent[0]["idempotency_key"] == relay.sent[1]["idempotency_key"]
        with engine.client() as c:
            questions = c.list(pad="idem-ask", kind="question")["entries"]
        assert [q["id"] for q in questions] == [asked["question"]["id"]]
    finally:
        relay.close()


def test_a_write_failed_past_its_retries_carries_its_key_to_go_on_with(engine, monkeypatch):
    monkeypatch.setattr(scratchpad, "WRITE_RETRY_WAITS", (0, 0, 0))
    relay = LostAnswers(engine.socket, lose=4)
    try:
        with Client(socket_path=relay.socket_path, author="keyed") as c:
            try:
                c.add("kept going", pad="idem-raised")
                raise AssertionError("every answer was lost: the write raises")
            except scratchpad.OutcomeUnknown as e:
                key = e.idempotency_key
        assert key and {s["idempotency_key"] for s in relay.sent} == {key}
        with engine.client() as c:
            stored = c.list(pad="idem-raised")["entries"]
            # Going on with the key answers with the note already stored.
            again = c.add("kept going", pad="idem-raised", idempotency_key=key)
            assert [e["id"] for e in stored] == [again["id"]]
            assert len(c.list(pad="idem-raised")["entries"]) == 1
    finally:
        relay.close()


def test_claim_task_and_ask_take_a_given_key(engine):
    with engine.client() as c:
        c.add_task("only", pad="idem-given")
        first = c.claim_task("idem-given", agent="w", idempotency_key="claim-given")
        again = c.claim_task("idem-given", agent="w", idempotency_key="claim-given")
        assert first["id"] == again["id"]
        q1 = c.ask("go?", pad="idem-given", wait_seconds=0, idempotency_key="ask-given")
        q2 = c.ask("go?", pad="idem-given", wait_seconds=0, idempotency_key="ask-given")
        assert q1["question"]["id"] == q2["question"]["id"]
        assert len(c.list(pad="idem-given", kind="question")["entries"]) == 1


def test_the_cli_names_the_key_of_a_note_it_could_not_confirm_and_takes_it_back(engine):
    relay = LostAnswers(engine.socket, methods=("entry.add",), lose=4)
    try:
        out = subprocess.run([pad_binary(), "note", "--socket", relay.socket_path, "--pad", "idem-cli-key",
                              "written once"], capture_output=True, text=True, timeout=60)
        assert out.returncode != 0
        key = relay.sent[0]["idempotency_key"]
        assert f"--idempotency-key {key}" in out.stderr, out.stderr
        # Sent again with the key (here from the environment): stored once.
        again = subprocess.run([pad_binary(), "note", "--socket", engine.socket, "--pad", "idem-cli-key",
                                "written once"], capture_output=True, text=True, timeout=60,
                               env=dict(os.environ, PAD_IDEMPOTENCY_KEY=key))
        assert again.returncode == 0, again.stderr
        with engine.client() as c:
            assert [e["content"] for e in c.list(pad="idem-cli-key")["entries"]] == ["written once"]
    finally:
        relay.close()
