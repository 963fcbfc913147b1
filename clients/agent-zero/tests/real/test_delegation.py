"""Agent Zero's delegations (`call_subordinate`, tools/call_subordinate.py) as
tasks in the chat's pad, in its real loop (conftest.py says how it runs):
each call a task with the superior's message, held by the subordinate, its
steps as progress and its answer as outcome; nested calls nested; a
failure on the task; a reply on a task reaching that subordinate; Stop on
one task; Agent Zero killed mid-delegation."""

import json
import os
import pathlib
import signal
import subprocess
import sys

import pytest

from support import thread_of, wait_for

HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def fresh(model, engine):
    model.script.clear()
    model.requests.clear()
    yield


def run_chat(message):
    from agent import AgentContext, UserMessage
    from initialize import initialize_agent

    context = AgentContext(initialize_agent(), name="delegation test")
    return context, context.communicate(UserMessage(message=message))


def tasks_of(engine, pad="agent-zero"):
    """The pad's delegation tasks, by their text."""
    with engine.client() as c:
        found = c.list(pad, kind="task", limit=500)["entries"]
    return {e["content"]: e for e in found if (e.get("meta") or {}).get("agent_zero", {}).get("role") == "delegation"}


def holder(context, level):
    """Who holds a subordinate's task: its chat and level; in a container,
    where the plugin speaks with a token, the token's name (the engine lets
    a token hold tasks under its own name only; the meta says chat and level)."""
    return "agent-zero" if os.environ.get("PAD_ENGINE_URL") else f"agent-zero:{context.id}:a{level}".lower()


def subordinate(context, level):
    at = context.agent0
    while at is not None and at.number < level:
        at = at.get_data("_subordinate")
    return at


def test_a_superior_delegating_twice_and_once_nested_leaves_a_task_per_call(model, engine):
    seen = {}

    def looking(i, step):
        def then():
            seen[i] = tasks_of(engine)  # the tasks as the person sees them, before the step
            return step
        return then

    model.script[:] = [("call_subordinate", {"message": "survey the error logs of last night"}),
                       ("scratchpad", {"action": "search", "query": "error logs"}),
                       ("call_subordinate", {"message": "count the errors per service"}),
                       looking(3, ("scratchpad", {"action": "search", "query": "errors per service"})),
                       looking(4, ("response", {"text": "api 9, worker 3"})),
                       looking(5, ("response", {"text": "12 errors last night: api 9, worker 3"})),
                       ("call_subordinate", {"message": "write the summary for the person", "reset": "true"}),
                       ("response", {"text": "summary written"}),
                       ("response", {"text": "all done"})]
    context, task = run_chat("What broke last night? Delegate the survey.")
    assert task.result_sync(timeout=180) == "all done"
    # A2 at work: its task and A1's are doing, under a lease, held apart.
    survey, count = seen[3]["survey the error logs of last night"], seen[3]["count the errors per service"]
    assert survey["status"] == count["status"] == "doing" and survey["lease_until"] and count["lease_until"]
    assert (survey["assignee"], count["assignee"]) == (holder(context, 1), holder(context, 2))

    tasks = tasks_of(engine)
    survey, count = tasks["survey the error logs of last night"], tasks["count the errors per service"]
    summary = tasks["write the summary for the person"]
    root = thread_of(engine, context)["entry"]["id"]
    assert survey["reply_to"] == root and summary["reply_to"] == root and count["reply_to"] == survey["id"]
    assert [t["status"] for t in (survey, count, summary)] == ["done"] * 3
    assert survey["resume"] == "Answered: 12 errors last night: api 9, worker 3"
    assert count["resume"] == "Answered: api 9, worker 3" and summary["resume"] == "Answered: summary written"
    assert summary["assignee"] == holder(context, 1) and count["meta"]["agent_zero"]["by"] == "A1"
    assert (survey["meta"]["agent_zero"]["chat"], count["meta"]["agent_zero"]["level"]) == (context.id, 2)
    # Their steps were their progress, as they came.
    first = "Step 1: scratchpad: Using scratchpad"
    assert [seen[i]["survey the error logs of last night"]["resume"] for i in (3, 5)] == [
        first, first + "\nStep 2: call_subordinate: Using call_subordinate"]
    assert seen[4]["count the errors per service"]["resume"] == first
    # The superior read its subordinates' answers as Agent Zero hands them back.
    assert "12 errors last night" in model.prompt(6) and "summary written" in model.prompt(8)


def test_a_subordinates_question_to_the_person_is_asked_in_its_tasks_thread(model, engine):
    """So the person sees which task waits on them (the app's plan marks it)."""
    model.script[:] = [("call_subordinate", {"message": "flip the traffic to the new cluster"}),
                       ("ask_person", {"question": "Flip the traffic now?", "choices": ["approve", "deny"],
                                       "wait_seconds": 1}),
                       ("response", {"text": "asked; not flipped"}),
                       ("response", {"text": "the flip waits on the person"})]
    context, task = run_chat("Move staging; delegate the flip.")
    assert task.result_sync(timeout=180) == "the flip waits on the person"
    flip = tasks_of(engine)["flip the traffic to the new cluster"]
    with engine.client() as c:
        asked = [q for q in c.list("agent-zero", kind="question")["entries"] if q["content"] == "Flip the traffic now?"]
        assert len(asked) == 1 and asked[0]["reply_to"] == flip["id"] and asked[0]["answer"] is None, asked
        c.delete(asked[0]["id"])  # no open question left for later tests to answer

def test_a_subordinate_that_fails_says_so_on_its_task(model, engine):
    from model_standin import Refusal

    model.script[:] = [("call_subordinate", {"message": "rotate the staging certificates"}),
                       Refusal("quota exceeded for this key"), Refusal("quota exceeded for this key")]
    context, task = run_chat("Renew the staging certificates.")
    with pytest.raises(Exception):
        task.result_sync(timeout=180)  # Agent Zero ends the chat on an error it cannot repair
    failed = tasks_of(engine)["rotate the staging certificates"]
    assert failed["status"] == "failed"
    assert failed["error"].startswith("BadRequestError: ") and "quota exceeded for this key" in failed["error"]


def test_a_reply_on_a_task_reaches_that_subordinate(model, engine):
    def reply_on_the_task():
        task = tasks_of(engine)["migrate the billing database"]
        with engine.client(author="user") as person:
            person.reply(task["id"], "use the read replica for the dry run")
        wait_for(lambda: subordinate(context, 1).intervention is not None)
        assert context.agent0.intervention is None
        return ("scratchpad", {"action": "inbox"})

    model.script[:] = [("call_subordinate", {"message": "migrate the billing database"}),
                       reply_on_the_task,
                       ("response", {"text": "migrated, dry run on the replica"}),
                       ("response", {"text": "done"})]
    context, task = run_chat("Migrate the billing database.")
    assert task.result_sync(timeout=180) == "done"
    assert "use the read replica for the dry run" in model.prompt(2) and "on your task" in model.prompt(2)
    assert "read replica for the dry run" not in model.prompt(3)  # the superior's prompt: its answer only


def test_stop_on_a_task_stops_that_subordinate_and_what_it_delegated(model, engine):
    from pad_engine import pad_binary
    from usr.plugins.scratchpad.helpers import delegation

    def stop_a1():
        task = tasks_of(engine)["index the wiki"]
        subprocess.run([pad_binary(), "agent-zero", "stop", task["id"]], check=True, capture_output=True,
                       env={**os.environ, "PAD_SOCKET": engine.socket, "PAD_NO_AUTOSTART": "1"})
        wait_for(lambda: context.id in delegation.stops)
        return ("scratchpad", {"action": "inbox"})

    model.script[:] = [("call_subordinate", {"message": "index the wiki"}),
                       ("scratchpad", {"action": "search", "query": "wiki"}),
                       ("call_subordinate", {"message": "fetch every page of the wiki"}),
                       stop_a1,
                       ("response", {"text": "the wiki was not indexed: the person stopped it"})]
    context, task = run_chat("Make the wiki searchable.")
    assert task.result_sync(timeout=180) == "the wiki was not indexed: the person stopped it"
    assert len(model.requests) == 5  # A2 and A1 took no step after the Stop; A0 went on
    assert "A1 was stopped by user" in model.prompt(4)
    tasks = tasks_of(engine)
    for text in ("index the wiki", "fetch every page of the wiki"):
        assert tasks[text]["status"] == "failed"
        assert tasks[text]["error"].startswith("Stopped: stopped from the scratchpad by user")
    assert context.id not in delegation.stops


def test_agent_zero_killed_mid_delegation_leaves_the_task_todo_and_a_restart_starts_nothing(engine, tmp_path):
    from a0_process import MESSAGE

    env = {**os.environ, "A0_LEASE": "3", "PYTHONUNBUFFERED": "1"}
    run = subprocess.Popen([sys.executable, str(HERE / "a0_process.py"), "start", str(tmp_path)],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        held = wait_for(lambda: (t := tasks_of(engine).get(MESSAGE)) and "Step 2" in (t.get("resume") or "") and t,
                        timeout=240)
        assert held["status"] == "doing"
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
    finally:
        if run.poll() is None:
            run.kill()
    lapsed = wait_for(lambda: (t := tasks_of(engine)[MESSAGE])["status"] == "todo" and t, timeout=30)
    assert lapsed["resume"] == held["resume"] and lapsed["assignee"] == held["assignee"]
    assert "Step 2: scratchpad" in lapsed["resume"]

    again = subprocess.run([sys.executable, str(HERE / "a0_process.py"), "restart", str(tmp_path)],
                           capture_output=True, text=True, env=env, timeout=300)
    line = [l for l in again.stdout.splitlines() if l.startswith("RESTART ")]
    assert line, again.stderr[-3000:]
    seen = json.loads(line[-1][len("RESTART "):])
    chat = held["meta"]["agent_zero"]["chat"]
    assert chat in seen["chats"]  # Agent Zero loaded the chat again…
    assert seen["model_calls"] == 0 and seen["running"] == []  # …and started none of its work
    now = tasks_of(engine)[MESSAGE]
    assert (now["status"], now["version"], now["resume"]) == ("todo", lapsed["version"], lapsed["resume"])
