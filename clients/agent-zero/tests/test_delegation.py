"""Agent Zero's delegations (`call_subordinate`) as tasks in the chat's pad,
in the stand-in loop (tests/loop.py runs a subordinate's monologue on the
steps that follow a `call_subordinate`, as Agent Zero does), against a
real engine. tests/real/test_delegation.py shows the same in Agent Zero's
real loop."""

import asyncio
import json
import os
import pathlib
import signal
import subprocess
import sys

from pad_engine import pad_binary
from support import thread_of, wait_for

HERE = pathlib.Path(__file__).resolve().parent


def new_context(name="delegating chat"):
    from agent import AgentContext
    from initialize import initialize_agent

    return AgentContext(initialize_agent(), name=name)


def tasks_of(engine, pad="agent-zero"):
    """The pad's delegation tasks, by their text."""
    with engine.client() as c:
        found = c.list(pad, kind="task", limit=200)["entries"]
    return {e["content"]: e for e in found if (e.get("meta") or {}).get("agent_zero", {}).get("role") == "delegation"}


def with_settings(plugin, **changes):
    plugin.config.write_text(json.dumps({**plugin.pad.DEFAULTS, "socket": os.environ["PAD_SOCKET"], **changes}))
    plugin.pad._configs.clear()


def test_each_delegation_is_a_task_held_by_its_subordinate_and_nested_ones_nest(plugin, engine):
    context = new_context()
    loop = plugin.Loop(plugin.root)
    seen = {}

    async def between(i):
        seen[i] = tasks_of(engine)  # before each step: the tasks as the person sees them

    steps = [("call_subordinate", {"message": "survey the error logs of last night"}),
             ("code_execution_tool", {"code": "grep ERROR /var/log/app.log"}),
             ("call_subordinate", {"message": "count the errors per service"}),
             ("code_execution_tool", {"code": "sort | uniq -c"}),
             ("response", {"text": "api 9, worker 3"}),
             ("response", {"text": "12 errors last night: api 9, worker 3"}),
             ("call_subordinate", {"message": "write the summary for the person", "reset": "true"}),
             ("response", {"text": "summary written"}),
             ("response", {"text": "all done"})]
    assert asyncio.run(loop.run(context, "what broke last night?", steps, between)) == "all done"
    assert loop.asked == [0, 1, 1, 2, 2, 1, 0, 1, 0]
    holder = f"agent-zero:{context.id}:a".lower()
    # A2 at work (step 3): its task and A1's are doing, under a lease, held apart.
    survey, count = seen[3]["survey the error logs of last night"], seen[3]["count the errors per service"]
    assert survey["status"] == count["status"] == "doing" and survey["lease_until"] and count["lease_until"]
    assert (survey["assignee"], count["assignee"]) == (holder + "1", holder + "2")

    tasks = tasks_of(engine)
    survey, count = tasks["survey the error logs of last night"], tasks["count the errors per service"]
    summary = tasks["write the summary for the person"]
    root = thread_of(engine, context)["entry"]["id"]
    assert survey["reply_to"] == root and summary["reply_to"] == root and count["reply_to"] == survey["id"]
    assert [t["status"] for t in (survey, count, summary)] == ["done"] * 3
    assert survey["resume"] == "Answered: 12 errors last night: api 9, worker 3"
    assert count["resume"] == "Answered: api 9, worker 3" and summary["resume"] == "Answered: summary written"
    assert summary["assignee"] == holder + "1" and survey["meta"]["agent_zero"]["level"] == 1
    assert count["meta"]["agent_zero"]["level"] == 2 and count["meta"]["agent_zero"]["by"] == "A1"
    # Its steps were its progress, as they came.
    first = "Step 1: code_execution_tool: doing code_execution_tool"
    assert [seen[i]["survey the error logs of last night"]["resume"] for i in (1, 2, 3, 5)] == [
        "A1 received the task.", first, first, first + "\nStep 2: call_subordinate: doing call_subordinate"]
    assert seen[4]["count the errors per service"]["resume"] == "Step 1: code_execution_tool: doing code_execution_tool"
    # The tasks are the chat's bookkeeping: another chat's recall leaves them out.
    other = plugin.Loop(plugin.root)
    asyncio.run(other.run(new_context("another chat"), "survey the error logs of last night",
                          [("response", {"text": "ok"})]))
    assert other.prompts and not any(t["id"] in str(p) for p in other.prompts for t in (survey, count, summary))


def test_a_subordinate_that_fails_fails_its_task_with_the_error(plugin, engine):
    from helpers.errors import HandledException

    context = new_context()
    loop = plugin.Loop(plugin.root)
    steps = [("call_subordinate", {"message": "rotate the staging certificates"}),
             ("fail", {"error": "certbot: rate limit reached"}),
             ("response", {"text": "never"})]
    assert isinstance(asyncio.run(loop.run(context, "renew certs", steps)), HandledException)
    task = tasks_of(engine)["rotate the staging certificates"]
    assert task["status"] == "failed" and task["error"] == "RuntimeError: certbot: rate limit reached"


def test_a_subordinates_question_to_the_person_is_asked_in_its_tasks_thread(plugin, engine):
    """So the task is seen to wait on the person (the app's plan marks it);
    the superior's own question stays in the chat's thread."""
    context = new_context()
    loop = plugin.Loop(plugin.root)
    steps = [("ask_person", {"question": "Which cluster is staging on now?", "wait_seconds": 1}),
             ("call_subordinate", {"message": "flip the traffic to the new cluster"}),
             ("ask_person", {"question": "Flip the traffic now?", "choices": ["approve", "deny"], "wait_seconds": 1}),
             ("response", {"text": "asked; not flipped"}),
             ("response", {"text": "staging waits on the person"})]
    assert asyncio.run(loop.run(context, "move staging", steps)) == "staging waits on the person"
    task = tasks_of(engine)["flip the traffic to the new cluster"]
    with engine.client() as c:
        asked = {q["content"]: q for q in c.list("agent-zero", kind="question")["entries"]}
    sub, top = asked["Flip the traffic now?"], asked["Which cluster is staging on now?"]
    assert sub["reply_to"] == task["id"] and sub["answer"] is None and "needs_eyes" in sub["tags"]
    assert top["reply_to"] == thread_of(engine, context)["entry"]["id"]
    with engine.client() as c:  # no open question left for the session's later tests to answer
        for q in (sub, top):
            c.delete(q["id"])


def test_a_reply_on_a_task_reaches_that_subordinate_at_its_next_step(plugin, engine):
    from agent import Agent

    plugin.watcher.ensure_running()
    context = new_context()
    loop = plugin.Loop(plugin.root)

    told = []

    async def between(i):
        if i == 2 and not told:  # A1's second step
            told.append(i)
            sub = context.agent0.get_data(Agent.DATA_NAME_SUBORDINATE)
            task = tasks_of(engine)["migrate the billing database"]
            with engine.client(author="user") as person:
                person.reply(task["id"], "use the read replica for the dry run")
            for _ in range(2400):
                if sub.intervention is not None:
                    break
                await asyncio.sleep(0.05)
            assert context.agent0.intervention is None  # the subordinate's, not the superior's

    steps = [("call_subordinate", {"message": "migrate the billing database"}),
             ("code_execution_tool", {"code": "pg_dump"}),
             ("code_execution_tool", {"code": "dry run"}),
             ("response", {"text": "migrated"}),
             ("response", {"text": "done"})]
    assert asyncio.run(loop.run(context, "migrate billing", steps, between)) == "done"
    assert len(loop.history) == 1 and "read replica" in loop.history[0] and "on your task" in loop.history[0]
    assert loop.asked[2:4] == [1, 1]  # A1 took it in and went on


def test_an_answer_after_the_subordinates_ask_gave_up_reaches_that_subordinate(plugin, engine):
    """The question is asked in the task's thread; once `ask_person` stopped
    waiting, the person's answer to it is a reply to the question, and it
    still goes to the subordinate that asked, not to the superior."""
    from agent import Agent

    plugin.watcher.ensure_running()
    context = new_context()
    loop = plugin.Loop(plugin.root)

    answered = []

    async def between(i):
        if i == 3 and not answered:  # A1's step after its ask gave up
            answered.append(i)
            sub = context.agent0.get_data(Agent.DATA_NAME_SUBORDINATE)
            with engine.client() as c:
                q = next(q for q in c.list("agent-zero", kind="question")["entries"]
                         if q["content"] == "Drop the old billing table too?")
            assert q["reply_to"] == tasks_of(engine)["tidy the billing schema"]["id"]
            with engine.client(author="user") as person:
                person.reply(q["id"], "yes, drop it")
            for _ in range(2400):
                if sub.intervention is not None:
                    break
                await asyncio.sleep(0.05)
            assert context.agent0.intervention is None  # the subordinate's, not the superior's

    steps = [("call_subordinate", {"message": "tidy the billing schema"}),
             ("ask_person", {"question": "Drop the old billing table too?", "wait_seconds": 1}),
             ("code_execution_tool", {"code": "vacuum"}),
             ("code_execution_tool", {"code": "drop table"}),
             ("response", {"text": "tidied"}),
             ("response", {"text": "done"})]
    assert asyncio.run(loop.run(context, "tidy billing", steps, between)) == "done"
    assert answered and len(loop.history) == 1 and "yes, drop it" in loop.history[0]
    # The task ended: a Stop on its question stops nothing (not the chat).
    task = tasks_of(engine)["tidy the billing schema"]["id"]
    question = next(q for q, t in plugin.watcher.delegation.asked.items() if t == task)
    stop = {"id": "stop-1", "reply_to": question, "author": "user"}
    assert plugin.watcher.on_task(stop, "stop", {}) is True
    with engine.client() as c:  # no question left for the session's later tests to answer
        for q in c.list("agent-zero", kind="question")["entries"]:
            if q["content"] == "Drop the old billing table too?":
                c.delete(q["id"])


def test_what_the_plugin_remembers_of_ended_tasks_and_their_questions_is_bounded(plugin):
    d = plugin.watcher.delegation
    for i in range(d.REMEMBERED + 10):
        d.note_question(f"q{i}", f"t{i}")
    assert len(d.asked) == d.REMEMBERED and "q0" not in d.asked and d.asked[f"q{d.REMEMBERED + 9}"] == f"t{d.REMEMBERED + 9}"
    d.asked.clear()


def test_stop_on_a_task_halts_that_subordinate_and_what_it_delegated_and_the_chat_goes_on(plugin, engine):
    from agent import Agent

    plugin.watcher.ensure_running()
    context = new_context()
    loop = plugin.Loop(plugin.root)
    from usr.plugins.scratchpad.helpers import delegation

    stopped = []

    async def between(i):
        if i == 3 and not stopped:  # A2 about to take its first step
            stopped.append(i)
            task = tasks_of(engine)["index the wiki"]
            subprocess.run([pad_binary(), "agent-zero", "stop", task["id"]], check=True, capture_output=True,
                           env={"PAD_SOCKET": engine.socket, "PAD_NO_AUTOSTART": "1", "PATH": "/usr/bin:/bin"})
            for _ in range(2400):
                if context.id in delegation.stops:
                    break
                await asyncio.sleep(0.05)

    steps = [("call_subordinate", {"message": "index the wiki"}),
             ("code_execution_tool", {"code": "crawl"}),
             ("call_subordinate", {"message": "fetch every page"}),
             ("response", {"text": "the wiki was not indexed: stopped by the person"})]
    result = asyncio.run(loop.run(context, "make the wiki searchable", steps, between))
    assert result == "the wiki was not indexed: stopped by the person"
    assert loop.asked == [0, 1, 1, 2, 0]  # A2's step never ran; A0 went on
    tasks = tasks_of(engine)
    for text in ("index the wiki", "fetch every page"):
        assert tasks[text]["status"] == "failed" and tasks[text]["error"].startswith("Stopped: stopped from the "
                                                                                     "scratchpad by user")
    said = context.agent0.tool_results
    assert len(said) == 1 and said[0][0] == "call_subordinate" and "A1 was stopped by user" in said[0][1]
    assert context.id not in plugin.chat.stops and context.id not in delegation.stops
    assert context.agent0.get_data(Agent.DATA_NAME_SUBORDINATE).number == 1


def test_the_lease_is_renewed_while_the_subordinate_works_and_a_killed_agent_zero_leaves_the_task_todo(
        plugin, engine, tmp_path):
    with_settings(plugin, delegation_lease_seconds=2)
    # A step longer than the lease: the task stays held.
    context = new_context()
    loop = plugin.Loop(plugin.root)

    held = []

    async def slow(i):
        if i == 1:
            await asyncio.sleep(4)  # twice the lease; the engine puts a lapsed one back within a second
            held.append(tasks_of(engine)["a slow step"]["status"])

    steps = [("call_subordinate", {"message": "a slow step"}), ("code_execution_tool", {}),
             ("response", {"text": "slow but done"}), ("response", {"text": "ok"})]
    assert asyncio.run(loop.run(context, "slow", steps, slow)) == "ok"
    assert held == ["doing"] and tasks_of(engine)["a slow step"]["status"] == "done"

    # Agent Zero killed mid-delegation: back to todo, with where it stood.
    driver = subprocess.Popen([sys.executable, str(HERE / "standin_chat.py"), str(tmp_path / "a0"),
                               "tidy the release notes"], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "STANDIN_DELEGATE": "1", "STANDIN_LEASE": "2",
                                   "PAD_BIN": pad_binary()})
    try:
        task = wait_for(lambda: (t := tasks_of(engine).get("tidy the release notes: delegated")) and
                        "Step 2" in (t.get("resume") or "") and t)
        assert task["status"] == "doing"
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        lapsed = wait_for(lambda: (t := tasks_of(engine)["tidy the release notes: delegated"])["status"] == "todo"
                          and t, timeout=30)
        assert "Step 2: code_execution_tool" in lapsed["resume"] and lapsed["assignee"] == task["assignee"]
    finally:
        if driver.poll() is None:
            driver.kill()


def test_an_outcome_the_engine_missed_is_written_once_it_answers(plugin, tmp_path):
    from pad_engine import Engine

    away = Engine()  # an engine of its own, killed while the subordinate answers
    try:
        with_settings(plugin, socket=away.socket)
        context = new_context()
        loop = plugin.Loop(plugin.root)
        killed = []

        async def between(i):
            if i == 2 and not killed:  # before A1's answer
                killed.append(i)
                away.kill()

        steps = [("call_subordinate", {"message": "archive the old builds"}), ("code_execution_tool", {}),
                 ("response", {"text": "archived 14 builds"}), ("response", {"text": "ok"})]
        assert asyncio.run(loop.run(context, "tidy the build server", steps, between)) == "ok"
        away.start()
        done = wait_for(lambda: (t := tasks_of(away)["archive the old builds"])["status"] == "done" and t,
                        timeout=60)
        assert done["resume"] == "Answered: archived 14 builds"
        said = [text for _, text in plugin.log if "no engine answers" in text]
        assert said  # the log said the engine was away
    finally:
        away.stop()
