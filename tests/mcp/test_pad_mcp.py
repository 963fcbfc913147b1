"""`pad mcp` driven by the official MCP Python SDK (the `mcp` package) as the
client, over stdio, against a real engine; results checked through the socket."""

import asyncio
import os
import signal
import time

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

import scratchpad
from pad_engine import pad_binary

TOOLS = {
    "add_note", "scratch_note", "search_notes", "list_notes",
    "update_note", "delete_note", "list_tags", "read_pad",
    "claim_task", "update_task", "plan", "share_note", "ask_person",
}


def params(engine, author="agent-zero", pad="research", **env):
    env.update({"PAD_SOCKET": engine.socket, "PAD_AUTHOR": author, "PAD_PAD": pad,
                "PATH": os.environ.get("PATH", "")})
    return StdioServerParameters(command=pad_binary(), args=["mcp"], env=env)


async def session_run(engine, body, **kw):
    async with stdio_client(params(engine, **kw)) as (read, write):  # noqa: SIM117
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            return init, await body(session)


def run(engine, body, **kw):
    return asyncio.run(session_run(engine, body, **kw))


def text(result):
    assert result.content, result
    return "\n".join(c.text for c in result.content)


def test_lists_every_tool_with_teaching_descriptions(engine):
    async def body(s):
        return (await s.list_tools()).tools

    init, tools = run(engine, body)
    assert init.server_info.name == "scratchpad"
    assert {t.name for t in tools} == TOOLS
    by_name = {t.name: t for t in tools}
    assert "4,000 characters" in by_name["add_note"].description
    assert "10 tags" in by_name["add_note"].description
    assert "content" in by_name["scratch_note"].input_schema["properties"]
    assert set(by_name["search_notes"].input_schema["properties"]) >= {"query", "tags", "pad", "mode"}
    for t in tools:
        assert "pad" in t.input_schema["properties"] or t.name in (
            "update_note", "delete_note", "update_task", "share_note")
    ask = by_name["ask_person"]
    assert "irreversible" in ask.description and "wait" in ask.description
    assert set(ask.input_schema["properties"]) == {"question", "choices", "wait_seconds", "pad"}


def test_every_tool_works_and_writes_with_the_right_author(engine):
    async def body(s):
        out = {}
        out["add"] = await s.call_tool("add_note", {"content": "login retries 3x before failing",
                                                      "tags": ["login", "needs_eyes"], "kind": "insight"})
        out["scratch"] = await s.call_tool("scratch_note", {"content": "quick jot about tokens"})
        out["other_pad"] = await s.call_tool("add_note", {"content": "elsewhere", "pad": "side"})
        out["again"] = await s.call_tool("add_note", {"content": "login retries 3x before failing"})
        out["search"] = await s.call_tool("search_notes", {"query": "login retries", "tags": ["login"]})
        out["search_all"] = await s.call_tool("search_notes", {"query": "elsewhere", "pad": "*"})
        out["list"] = await s.call_tool("list_notes", {"pad": "research", "tags": ["login"]})
        out["tags"] = await s.call_tool("list_tags", {"pad": "research"})
        out["read"] = await s.call_tool("read_pad", {"pad": "research"})
        return out

    _, out = run(engine, body)
    for name, r in out.items():
        assert not r.is_error, (name, text(r))
    added = text(out["add"])
    assert added.startswith("Saved note ") and "to pad 'research'" in added and "holds 1 note." in added
    note_id = added.split()[2]
    assert "holds 2 notes." in text(out["scratch"])
    again = text(out["again"])
    assert f"It looks like note {note_id} \"login retries 3x before failing\" (the same text)" in again, again
    assert f"update_note {note_id} instead" in again, again
    assert "1 hit (" in text(out["search"]) and note_id in text(out["search"])
    assert "elsewhere" in text(out["search_all"])
    assert "login retries 3x" in text(out["list"]) and "quick jot" not in text(out["list"])
    assert "#login (1)" in text(out["tags"]) and "#needs_eyes (1)" in text(out["tags"])
    assert "login retries 3x before failing" in text(out["read"]) and "quick jot" in text(out["read"])

    # Checked through the socket: stored where and as whom the tools said.
    with engine.client() as c:
        e = c.get(note_id)
        assert e["author"] == "agent-zero" and e["pad"] == "research"
        assert e["tags"] == ["login", "needs_eyes"] and e["kind"] == "insight"
        assert {x["author"] for x in c.iter_entries("research")} == {"agent-zero"}
        c.delete(again.split()[2])

    async def change(s):
        up = await s.call_tool("update_note", {"id": note_id, "content": "login retries 5x", "status": "done"})
        gone = await s.call_tool("delete_note", {"id": note_id})
        return up, gone

    _, (up, gone) = run(engine, change)
    assert not up.is_error and "version 2" in text(up) and "login retries 5x" in text(up)
    assert not gone.is_error and note_id in text(gone)
    with engine.client() as c:
        assert [x["content"] for x in c.iter_entries("research")] == ["quick jot about tokens"]


def test_a_note_for_another_agent_reaches_its_inbox_line(engine):
    async def writer(s):
        return await s.call_tool("add_note", {"content": "please review the migration", "to": ["@reviewer"]})

    _, r = run(engine, writer)
    assert not r.is_error, text(r)

    async def reader(s):
        return await s.call_tool("list_tags", {"pad": "research"})

    _, r = run(engine, reader, author="reviewer")
    assert "1 note for you: [" in text(r) and "agent-zero: please review the migration" in text(r), text(r)


def test_errors_are_tool_errors_that_say_how_to_fix_the_call(engine):
    async def body(s):
        return (
            await s.call_tool("add_note", {"content": "x", "tags": [f"t{i}" for i in range(11)]}),
            await s.call_tool("update_note", {"id": "0000000000zz", "content": "y"}),
            await s.call_tool("update_note", {"id": "0000000000zz"}),
            await s.call_tool("add_note", {"content": "x" * 4001}),
            await s.call_tool("add_note", {"content": "x", "kind": "memo"}),
            await s.call_tool("search_notes", {"query": "x", "mode": "fuzzy"}),
            await s.call_tool("update_task", {"id": "0000000000zz", "status": "finished"}),
        )

    _, (tags, missing, nothing, long, kind, mode, status) = run(engine, body)
    # A word the tool does not take, said in the tool's terms with the
    # words it takes (the engine's types' own).
    assert kind.is_error and text(kind).startswith("add_note: kind 'memo' is not one of note, plan"), text(kind)
    assert mode.is_error and "hybrid, text, semantic" in text(mode), text(mode)
    assert status.is_error and "update_task: status 'finished'" in text(status), text(status)
    assert "todo, doing, done, failed, blocked" in text(status), text(status)
    assert tags.is_error and "limit is 10" in text(tags)
    assert missing.is_error and "0000000000zz" in text(missing)
    assert nothing.is_error and "give content, tags, status or supersedes" in text(nothing)
    assert long.is_error and "4000" in text(long).replace(",", "")


def test_no_engine_is_a_tool_error_not_a_crash(engine, tmp_path):
    class Nowhere:
        socket = str(tmp_path / "nothing.sock")

    async def body(s):
        return await s.call_tool("scratch_note", {"content": "hello?"})

    _, r = run(Nowhere, body, PAD_NO_AUTOSTART="1")
    assert r.is_error and "pad serve" in text(r)


def engines_serving(socket):
    """Pids of live `pad ... --socket SOCKET serve` processes."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and b"serve" in args and socket.encode() in args:
            pids.append(int(pid))
    return pids


def test_with_no_engine_ten_at_once_start_exactly_one(tmp_path):
    class Fresh:
        socket = str(tmp_path / "run" / "pad.sock")

    env = {"PAD_HOME": str(tmp_path / "data"), "PAD_NO_SEMANTIC": "1"}

    async def one(i):
        async def body(s):
            return await s.call_tool("scratch_note", {"content": f"note {i} from a fresh pad mcp"})
        _, r = await session_run(Fresh, body, author=f"agent-{i}", **env)
        return r

    async def all_at_once():
        return await asyncio.gather(*(one(i) for i in range(10)))

    results = asyncio.run(all_at_once())
    try:
        for r in results:
            assert not r.is_error, text(r)
        deadline = time.time() + 10
        while len(engines_serving(Fresh.socket)) != 1:
            assert time.time() < deadline, engines_serving(Fresh.socket)
            time.sleep(0.05)
        with scratchpad.Client(Fresh.socket) as c:
            notes = list(c.iter_entries("research"))
            assert len(notes) == 10
            assert {n["author"] for n in notes} == {f"agent-{i}" for i in range(10)}
    finally:
        for pid in engines_serving(Fresh.socket):
            os.kill(pid, signal.SIGTERM)


def test_tool_results_end_with_the_inbox_once(engine):
    async def first(s):
        return await s.call_tool("add_note", {"content": "the cache layer drops keys under load"})

    _, r = run(engine, first, author="agent-inbox", pad="inbox-test")
    mine = text(r).split()[2]
    assert "Inbox:" not in text(r)

    with engine.client(author="user") as person:
        person.call("inbox")  # the person's inbox starts now
        poke = person.add("please check the deploy", pad="inbox-test", tags=["needs_eyes"])
        reply = person.reply(mine, "confirmed, it is the eviction policy")

    async def next_calls(s):
        a = await s.call_tool("list_tags", {"pad": "inbox-test"})
        b = await s.call_tool("list_tags", {"pad": "inbox-test"})
        c = await s.call_tool("add_note", {"content": "thanks", "reply_to": reply["id"]})
        return a, b, c

    _, (a, b, c) = run(engine, next_calls, author="agent-inbox", pad="inbox-test")
    inbox = a.content[-1].text
    assert inbox.startswith("Inbox: 1 new needs_eyes: [" + poke["id"] + "] user: please check the deploy"), inbox
    assert "1 reply to your notes: [" + reply["id"] + "] user: confirmed" in inbox
    assert "Inbox:" not in text(b), "shown once"
    assert not c.is_error
    with engine.client() as check:
        note = check.get(text(c).split()[2])
        assert note["reply_to"] == reply["id"] and note["meta"] is None
        theirs = check.call("inbox", {"author": "user", "peek": True})
        assert [e["id"] for e in theirs["replies"]] == [note["id"]]


def test_planner_and_workers_share_a_plan_through_the_task_tools(engine):
    pad = "mcp-plan"

    async def plan(s):
        await s.call_tool("add_note", {"content": "Goal: port the CLI to Rust", "kind": "plan"})
        ids = []
        for content in ("inventory the commands", "port the parser", "port the output"):
            r = await s.call_tool("add_note", {"content": content, "kind": "task",
                                               "depends_on": ids[-1:]})
            assert not r.is_error, text(r)
            ids.append(text(r).split()[2])
        shown = await s.call_tool("plan", {"pad": pad})
        return ids, shown

    _, (ids, shown) = run(engine, plan, author="planner", pad=pad)
    shown = text(shown)
    assert "Goal: port the CLI to Rust" in shown
    assert "3 task(s)" in shown and "1 ready" in shown and "2 blocked" in shown
    assert shown.index(ids[0]) < shown.index(ids[1]) < shown.index(ids[2])
    assert f"waits on {ids[0]}" in shown

    async def worker_a_starts(s):
        claimed = await s.call_tool("claim_task", {"pad": pad, "lease_seconds": 600})
        progress = await s.call_tool("update_task", {"id": ids[0], "resume": "12 of 30 commands listed"})
        return claimed, progress

    _, (claimed, progress) = run(engine, worker_a_starts, author="worker-a", pad=pad)
    assert not claimed.is_error and f"You now hold task {ids[0]}" in text(claimed)
    assert not progress.is_error and "is doing" in text(progress) and "You hold it until" in text(progress)

    async def worker_b_waits(s):
        nothing = await s.call_tool("claim_task", {"pad": pad})
        steal = await s.call_tool("update_task", {"id": ids[0], "status": "done"})
        # Whatever its case, a finish is a completion: held by another, refused.
        shout = await s.call_tool("update_task", {"id": ids[0], "status": " Done"})
        return nothing, steal, shout

    _, (nothing, steal, shout) = run(engine, worker_b_waits, author="worker-b", pad=pad)
    assert not nothing.is_error and "No task is ready" in text(nothing) and "1 running" in text(nothing)
    assert "try again" in text(nothing)
    assert steal.is_error and "held by worker-a" in text(steal)
    assert shout.is_error and "held by worker-a" in text(shout), text(shout)

    async def worker_a_finishes(s):
        return await s.call_tool("update_task", {"id": ids[0], "status": "done",
                                                 "resume": "all 30 in docs/commands.md"})

    _, done = run(engine, worker_a_finishes, author="worker-a", pad=pad)
    assert not done.is_error and f"Task {ids[0]} is done" in text(done)

    async def worker_b_fails(s):
        claimed = await s.call_tool("claim_task", {"pad": pad})
        failed = await s.call_tool("update_task", {"id": ids[1], "status": "failed", "retry": True,
                                                   "error": "clap 5 is not out", "resume": "flags done"})
        return claimed, failed

    _, (claimed, failed) = run(engine, worker_b_fails, author="worker-b", pad=pad)
    assert f"You now hold task {ids[1]}" in text(claimed)
    assert not failed.is_error and "is todo" in text(failed) and "Last error: clap 5 is not out" in text(failed)

    async def worker_a_retries(s):
        return await s.call_tool("claim_task", {"pad": pad})

    _, again = run(engine, worker_a_retries, author="worker-a", pad=pad)
    again = text(again)
    assert f"You now hold task {ids[1]}" in again and "attempt 2" in again
    assert "Resume from: flags done" in again

    with engine.client() as c:
        first = c.get(ids[0])
        assert first["status"] == "done" and first["assignee"] == "worker-a"
        assert first["resume"] == "all 30 in docs/commands.md"
        report = c.call("report", {"pad": pad})
        by = {a["author"]: a for a in report["authors"]}
        assert by["worker-a"]["tasks_done"] == 1 and by["planner"]["entries"] == 4

    async def share(s):
        return await s.call_tool("share_note", {"id": ids[0], "to": ["mcp-other"]})

    _, shared = run(engine, share, author="worker-a", pad=pad)
    assert not shared.is_error and "mcp-other as " in text(shared)
    with engine.client() as c:
        copy = next(c.iter_entries("mcp-other"))
        assert copy["meta"]["shared_from"] == {"pad": pad, "id": ids[0], "author": "planner"}


def test_ask_person_waits_for_the_answer_given_over_the_socket(engine):
    """Agent Zero's way: a fresh `pad mcp` process and session for the call;
    the person answers over the socket while the tool call waits."""
    answered = {}

    def person_answers():
        with engine.client(author="user") as person:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                open_ = person.list("mcp-ask", kind="question", tags=["needs_eyes"])["entries"]
                if open_:
                    q = open_[0]
                    answered["question"] = q
                    answered["reply"] = person.reply(q["id"], "approve")
                    answered["at"] = time.monotonic()
                    return
                time.sleep(0.05)

    async def body(s):
        loop = asyncio.get_running_loop()
        helper = loop.run_in_executor(None, person_answers)
        r = await s.call_tool("ask_person", {"question": "About to drop the staging DB. Proceed?",
                                             "choices": ["approve", "deny"], "wait_seconds": 60})
        returned = time.monotonic()
        await helper
        return r, returned

    _, (r, returned) = run(engine, body, author="agent-asker", pad="mcp-ask")
    assert not r.is_error, text(r)
    out = text(r)
    assert out.startswith("Answer from user: approve"), out
    assert answered["question"]["id"] in out and answered["question"]["choices"] == ["approve", "deny"]
    assert "Inbox:" not in out, "the answer is not reported twice"
    assert returned - answered["at"] < 5
    with engine.client() as check:
        q = check.get(answered["question"]["id"])
        assert q["answer"] == answered["reply"]["id"] and q["author"] == "agent-asker"


def test_ask_person_without_an_answer_says_where_it_will_arrive(engine):
    async def ask(s):
        return await s.call_tool("ask_person", {"question": "Which region?", "wait_seconds": 0})

    _, r = run(engine, ask, author="agent-late", pad="mcp-late")
    out = text(r)
    assert not r.is_error and out.startswith("No answer yet after 0"), out
    qid = out.split("the question is ")[1].split(".")[0]
    with engine.client(author="user") as person:
        person.reply(qid, "eu-west")

    async def later(s):
        return await s.call_tool("list_tags", {"pad": "mcp-late"})

    _, r = run(engine, later, author="agent-late", pad="mcp-late")
    assert "1 reply to your notes: [" in text(r) and "user: eu-west" in text(r), text(r)

    async def bad(s):
        return await s.call_tool("ask_person", {"question": "x", "wait_seconds": 500})

    _, r = run(engine, bad, author="agent-late", pad="mcp-late")
    assert r.is_error and "110" in text(r), text(r)


def test_schemas_pass_strict_function_calling_rules(engine):
    """What OpenAI-style strict converters, the MCP Inspector and Agent
    Zero's prompt take unchanged: no $schema, closed objects, one type per
    property, standard formats only, no defaults; and no tool whose
    arguments may all be left out (Agent Zero refuses a call with {})."""
    async def body(s):
        return (await s.list_tools()).tools

    _, tools = run(engine, body)

    def walk(schema, where):
        assert "$schema" not in schema, where
        assert "default" not in schema, where
        assert not isinstance(schema.get("type"), list), (where, schema.get("type"))
        assert schema.get("format") in (None, "date-time", "email", "uri"), (where, schema.get("format"))
        if schema.get("type") == "object":
            assert schema.get("additionalProperties") is False, where
            for name, prop in schema.get("properties", {}).items():
                walk(prop, f"{where}.{name}")
        if "items" in schema:
            walk(schema["items"], f"{where}[]")

    for t in tools:
        walk(t.input_schema, t.name)
        assert t.input_schema.get("required"), f"{t.name} can be called with no arguments"
        for name in t.input_schema["required"]:
            assert name in t.input_schema["properties"], (t.name, name)
    pad = {t.name: t.input_schema["properties"].get("pad", {}) for t in tools}
    assert "'research'" in pad["list_notes"]["description"], "the server's pad is named"


def test_unknown_or_missing_arguments_are_refused_in_the_tools_words(engine):
    async def body(s):
        return (
            await s.call_tool("add_note", {"content": "tagged?", "tag": ["login"]}),
            await s.call_tool("list_notes", {}),
            await s.call_tool("search_notes", {"query": "x", "limit": "five"}),
            await s.call_tool("list_notes", {"pad": "research", "limit": "3"}),
        )

    _, (unknown, missing, wrong, coerced) = run(engine, body)
    assert unknown.is_error
    assert text(unknown).startswith("add_note has no argument 'tag'. Did you mean 'tags'?"), text(unknown)
    with engine.client() as c:
        assert not [e for e in c.list(pad="research")["entries"] if e["content"] == "tagged?"], "nothing saved"
    assert missing.is_error and "list_notes needs the argument 'pad'" in text(missing), text(missing)
    assert wrong.is_error and "'limit' must be a whole number" in text(wrong), text(wrong)
    assert not coerced.is_error, text(coerced)
    for r in (unknown, missing, wrong):
        assert "entry." not in text(r) and "protocol.md" not in text(r)


def test_every_tool_says_what_it_does_to_the_pad(engine):
    """Codex (and others) decide what needs approval from the annotations:
    without them a tool counts as destructive and open-world."""
    async def body(s):
        return (await s.list_tools()).tools

    _, tools = run(engine, body)
    reads = {"search_notes", "list_notes", "list_tags", "read_pad", "plan"}
    for t in tools:
        a = t.annotations
        assert a is not None and a.title and t.title, t.name
        assert a.read_only_hint is (t.name in reads), t.name
        assert a.destructive_hint is (t.name == "delete_note"), t.name
        assert a.open_world_hint is False, t.name
        assert a.idempotent_hint is not None, t.name


def test_arguments_a_client_adds_are_ignored_and_said(engine):
    """Gemini CLI adds `wait_for_previous` to every call; a near miss of a
    real argument is still the model's slip and refused."""
    async def body(s):
        return (
            await s.call_tool("add_note", {"content": "chained", "wait_for_previous": True}),
            await s.call_tool("search_notes", {"query": "chained", "wait_for_previous": False}),
            await s.call_tool("add_note", {"content": "x", "tag": ["a"]}),
        )

    _, (added, found, slip) = run(engine, body)
    assert not added.is_error, text(added)
    assert "(add_note ignored the argument 'wait_for_previous': it does not take it.)" in text(added)
    assert not found.is_error and "chained" in text(found), text(found)
    assert slip.is_error and "Did you mean 'tags'?" in text(slip)


def test_read_pad_stays_within_its_budget_and_says_what_it_left_out(engine):
    with engine.client(author="agent-big") as c:
        c.add("the plan: migrate in three steps", pad="big", kind="plan", pinned=True)
        q = c.add("open: which region first?", pad="big", kind="question")
        for i in range(150):
            c.add(f"note {i:03} " + "details of the migration step " * 50, pad="big")

    async def body(s):
        return (await s.call_tool("read_pad", {"pad": "big"}),
                await s.call_tool("read_pad", {"pad": "big", "max_chars": 60000}),
                await s.call_tool("read_pad", {"pad": "big", "max_chars": 10}))

    _, (small, larger, bad) = run(engine, body)
    out = text(small)
    body_text = small.content[0].text
    assert len(body_text) <= 12000 + 400, len(body_text)
    assert "the plan: migrate" in out and q["id"] in out, "pinned and open questions first"
    assert "note 149" in out and "note 000" not in out, "then the newest"
    assert "left out" in out and "max_chars" in out, out[-400:]
    assert len(larger.content[0].text) > 40000
    assert bad.is_error and "max_chars is 10" in text(bad)


def test_a_note_that_supersedes_another_is_what_search_list_and_read_pad_show(engine):
    """The duplicate hint offers superseding; after it, the current note is
    what the tools show, and the older one is one argument away."""
    async def body(s):
        first = await s.call_tool("add_note", {"content": "the staging database is on db-1.internal", "pad": "facts"})
        old_id = text(first).split("Saved note ")[1].split(" ")[0]
        again = await s.call_tool("add_note", {"content": "the staging database is on db-1.internal", "pad": "facts"})
        new_id = text(again).split("Saved note ")[1].split(" ")[0]
        moved = await s.call_tool("update_note", {"id": new_id, "content": "the staging database moved to db-2.internal",
                                                  "supersedes": old_id})
        return (old_id, new_id, text(again), moved,
                await s.call_tool("search_notes", {"query": "staging database", "pad": "facts", "mode": "text"}),
                await s.call_tool("search_notes", {"query": "staging database", "pad": "facts", "mode": "text",
                                                   "include_superseded": True}),
                await s.call_tool("list_notes", {"pad": "facts"}),
                await s.call_tool("read_pad", {"pad": "facts"}))

    _, (old_id, new_id, hint, moved, hits, all_hits, listed, md) = run(engine, body)
    assert f'update_note {new_id} with supersedes "{old_id}"' in hint, hint
    assert not moved.is_error, text(moved)
    assert f"supersedes [{old_id}]" in text(moved), text(moved)
    assert "db-2.internal" in text(hits) and "db-1.internal" not in text(hits), text(hits)
    assert f"[{old_id}]" in text(all_hits) and f"SUPERSEDED by [{new_id}]" in text(all_hits), text(all_hits)
    assert "1 note in 'facts'" in text(listed), text(listed)
    assert "db-2.internal" in text(md) and "db-1.internal" not in text(md), text(md)
    assert f"supersedes `{old_id}`" in text(md), text(md)


def test_ask_person_reports_progress_to_a_client_that_asks(engine):
    """The TypeScript SDK resets its 60 s clock on progress: a waiting
    ask_person sends some while it waits."""
    seen = []

    async def progress(p, total, message):
        seen.append((p, total, message))

    async def body(s):
        return await s.call_tool("ask_person", {"question": "Proceed?", "wait_seconds": 7},
                                 progress_callback=progress)

    _, r = run(engine, body, author="agent-progress", pad="mcp-progress")
    assert not r.is_error and text(r).startswith("No answer yet after 7 s"), text(r)
    assert seen and seen[0][1] == 7 and "waiting for the person" in seen[0][2], seen


async def session_with_elicitation(engine, body, on_elicit, **kw):
    async with stdio_client(params(engine, **kw)) as (read, write):  # noqa: SIM117
        async with ClientSession(read, write, elicitation_callback=on_elicit) as session:
            await session.initialize()
            return await body(session)


def test_ask_person_asks_in_a_client_with_elicitation_and_the_answer_joins_the_thread(engine):
    """The person answers in the agent's own client (a form with the
    choices): the tool returns it, and it is the person's reply in the
    question's thread, so the desktop sees the question answered."""
    asked = {}

    async def on_elicit(ctx, p):
        asked["message"], asked["schema"] = p.message, p.requested_schema
        return types.ElicitResult(action="accept", content={"choice": "deny"})

    async def body(s):
        return await s.call_tool("ask_person", {"question": "Force-push main?", "choices": ["approve", "deny"],
                                                "wait_seconds": 30})

    r = asyncio.run(session_with_elicitation(engine, body, on_elicit, author="agent-elicit", pad="mcp-elicit"))
    assert not r.is_error and text(r).startswith("Answer from user: deny"), text(r)
    assert "Force-push main?" in asked["message"]
    assert asked["schema"]["properties"]["choice"]["enum"] == ["approve", "deny"]
    with engine.client() as c:
        q = c.list("mcp-elicit", kind="question")["entries"][0]
        thread = c.thread(q["id"])
        assert [(e["author"], e["content"]) for e in thread["replies"]] == [("user", "deny")]
        assert thread["entry"]["answer"] == thread["replies"][0]["id"]


def test_an_answer_on_the_desktop_withdraws_the_clients_form(engine):
    """Answered elsewhere first: the client's form is cancelled
    (notifications/cancelled), and the tool returns the desktop's answer."""
    form = {}

    async def on_elicit(ctx, p):
        form["shown"] = True
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            form["withdrawn"] = True
            raise
        return types.ElicitResult(action="accept", content={"answer": "too late"})

    def person_answers():
        with engine.client(author="user") as person:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                open_ = person.list("mcp-elicit2", kind="question")["entries"]
                if open_ and form.get("shown"):
                    person.reply(open_[0]["id"], "approve")
                    return
                time.sleep(0.05)

    async def body(s):
        helper = asyncio.get_running_loop().run_in_executor(None, person_answers)
        r = await s.call_tool("ask_person", {"question": "Rotate the keys?", "choices": ["approve", "deny"],
                                             "wait_seconds": 30})
        await helper
        for _ in range(100):
            if form.get("withdrawn"):
                break
            await asyncio.sleep(0.05)
        return r

    r = asyncio.run(session_with_elicitation(engine, body, on_elicit, author="agent-elicit2", pad="mcp-elicit2"))
    assert text(r).startswith("Answer from user: approve"), text(r)
    assert form.get("withdrawn"), form
    with engine.client() as c:
        q = c.list("mcp-elicit2", kind="question")["entries"][0]
        assert [e["content"] for e in c.thread(q["id"])["replies"]] == ["approve"]


def test_on_protocol_2026_07_28_the_form_is_an_input_required_round_trip(engine):
    """That version forbids requests to the client: the first call returns
    the form (the question already on the desktop), the client calls again
    with the person's response, and the answer lands in the thread. The
    state is the server's to hold: a question's id, another session's state
    or a state used once already answers nothing."""
    async def on_elicit(ctx, p):  # declares the capability; the round trip carries the form
        raise AssertionError("no elicitation request on 2026-07-28")

    args = {"question": "Deploy on Friday?", "choices": ["yes", "no"], "wait_seconds": 20}

    async def body(s):
        await s.discover()
        first = await s.call_tool("ask_person", args, allow_input_required=True)

        async def other_session(s2):
            await s2.discover()
            return await s2.call_tool(
                "ask_person", args, allow_input_required=True, request_state=first.request_state,
                input_responses={"answer": types.ElicitResult(action="accept", content={"choice": "yes"})})
        stolen = await session_with_elicitation(engine, other_session, on_elicit, author="agent-modern",
                                                pad="mcp-modern")
        second = await s.call_tool(
            "ask_person", args, allow_input_required=True, request_state=first.request_state,
            input_responses={"answer": types.ElicitResult(action="accept", content={"answer": "not on a Friday"})})
        with engine.client(author="someone-else") as other:
            foreign = other.ask("not yours", pad="mcp-modern", wait_seconds=0)["question"]["id"]
        forged = await s.call_tool("ask_person", args, allow_input_required=True, request_state=foreign,
                                   input_responses={"answer": types.ElicitResult(action="accept",
                                                                                 content={"choice": "yes"})})
        replayed = await s.call_tool("ask_person", args, allow_input_required=True,
                                     request_state=first.request_state,
                                     input_responses={"answer": types.ElicitResult(action="accept",
                                                                                   content={"choice": "yes"})})
        return first, stolen, second, forged, replayed

    first, stolen, second, forged, replayed = asyncio.run(
        session_with_elicitation(engine, body, on_elicit, author="agent-modern", pad="mcp-modern"))
    assert isinstance(first, types.InputRequiredResult), first
    form = first.input_requests["answer"].params
    assert "Deploy on Friday?" in form.message and form.requested_schema["properties"]["choice"]["enum"] == ["yes", "no"]
    assert not second.is_error and text(second).startswith("Answer from user: not on a Friday"), text(second)
    for refused in (stolen, forged, replayed):
        assert refused.is_error and "not one this server gave this session" in text(refused), text(refused)
    with engine.client() as c:
        [q] = [e for e in c.list("mcp-modern", kind="question")["entries"] if e["content"] == "Deploy on Friday?"]
        assert first.request_state != q["id"] and q["id"][:9] not in first.request_state
        thread = c.thread(q["id"])
        assert [(e["author"], e["content"]) for e in thread["replies"]] == [("user", "not on a Friday")]


def test_the_core_tool_set_is_smaller(engine):
    async def body(s):
        return (await s.list_tools()).tools

    _, core = run(engine, body, PAD_TOOLS="core")
    assert {t.name for t in core} == {"add_note", "search_notes", "list_notes", "update_note", "ask_person"}
