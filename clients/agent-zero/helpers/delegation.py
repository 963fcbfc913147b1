"""Agent Zero's delegations as tasks in the chat's pad.

A superior hands work to a subordinate with `call_subordinate`; the plugin
writes each such call as a task (`kind: task`) in the chat's pad, a reply
in the chat's thread — or, for a subordinate's own delegation, in its
task's thread, so nested delegations nest:

- `delegate` (the superior's `tool_execute_before` for `call_subordinate`):
  the superior's message is the task's text; it is `doing` at once, held
  by the subordinate under a name the person can tell apart — the plugin's
  author, the chat, the level: `agent-zero:k3j2h1ab:a1` (with an access
  token the engine lets a token hold tasks only under its own name, so the
  holder is the token's name and `meta.agent_zero` says chat and level);
- `begin` (the subordinate's `monologue_start`) binds the task to the
  subordinate; `step` (its `tool_execute_after`) writes its latest steps
  as the task's `resume` with a heartbeat;
- `end` (the end of its `monologue`, `_functions/agent/Agent/monologue/end`)
  completes the task with its answer as the `resume`, or fails it with the
  error (an exception, a Stop).

Each live task is held under a lease (`delegation_lease_seconds`) which a
thread of this process renews while the subordinate runs: Agent Zero
killed, the renewals stop, the lease lapses and the engine puts the task
back to `todo` with its `resume` — the plugin never claims a task, so a
restarted Agent Zero starts none of it again; the person decides. A chat
Agent Zero itself stopped (its Stop, a reset, a deleted chat) fails its
live tasks at the next renewal. An outcome the engine could not take (it
was down) is written once it answers again.

The person steers a task from the pad (helpers/watcher.py): a reply to it
reaches that subordinate as an intervention at its next step (`tell`); a
Stop on it (`pad agent-zero stop TASK`) halts that subordinate and what it
delegated (`stop`, raised at the next step by the stop extension), and its
superior carries on with the stop as the call's answer (`StoppedHere`).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from usr.plugins.scratchpad.helpers import chat, pad
from usr.plugins.scratchpad.helpers import scratchpad_client as sp

DATA_TASK = "_scratchpad_task"  # on a subordinate: the task it works on
DATA_NEXT = "_scratchpad_delegating"  # on a superior: the task of the call in progress
STEPS_KEPT = 8  # the latest steps a task's resume holds
MAX_TEXT = 4000


@dataclass
class Live:
    """A delegation being worked on, in this process."""
    id: str
    chat: str  # the context's id
    level: int  # the subordinate's number (A1: 1)
    holder: str
    cfg: dict[str, Any]
    steps: list[str] = field(default_factory=list)
    due: float = 0.0  # when its lease is next renewed (time.monotonic)

    def beaten(self) -> None:
        """Its lease was just renewed: the next renewal is due in a third of it."""
        self.due = time.monotonic() + lease_seconds(self.cfg) / 3


_lock = threading.Lock()
live: dict[str, Live] = {}
# The questions a subordinate asked the person in its task's thread, by
# the task: an answer after its `ask_person` gave up is for that task
# (`note_question`).
asked: dict[str, str] = {}
# Tasks of this process that ended: a Stop on one (or on a question asked
# in one) has nothing to stop.
finished: dict[str, None] = {}
# The most questions and ended tasks remembered: the oldest go first, so a
# process running for weeks keeps no more than this of either.
REMEMBERED = 4096
# Outcomes the engine did not take (it was down), by task id: written once it answers.
unwritten: dict[str, tuple[Live, str, str]] = {}
# Stops the person gave on a task: chat -> (level, who, task id).
stops: dict[str, tuple[int, str, str]] = {}
_renewer: Optional[threading.Thread] = None


class Stopped(Exception):
    """Raised in a stopped subordinate (or one it delegated to), wrapped in
    Agent Zero's HandledException: it ends every monologue from there down
    to the stopped level, and its superior takes it as the call's answer."""

    def __init__(self, level: int, who: str, task: str):
        super().__init__(f"stopped from the scratchpad by {who} (the Stop was given on A{level}'s task {task})")
        self.level, self.who, self.task = level, who, task


def note_question(question: str, task: str) -> None:
    """`ask_person` asked `question` in `task`'s thread."""
    with _lock:
        _remember(asked, question, task)


def _remember(kept: dict, key: str, value: Any) -> None:
    """Keeps `key` (held under `_lock`), forgetting the oldest past `REMEMBERED`."""
    kept.pop(key, None)
    kept[key] = value
    while len(kept) > REMEMBERED:
        del kept[next(iter(kept))]


def enabled(cfg: dict[str, Any]) -> bool:
    return bool(cfg.get("enabled", True) and cfg.get("delegation_tasks", True))


def lease_seconds(cfg: dict[str, Any]) -> int:
    return max(2, int(cfg.get("delegation_lease_seconds") or 120))


def holder_name(c: "sp.Client", cfg: dict[str, Any], chat_id: str, level: int) -> str:
    """Who holds a delegation's task: `<author>:<chat>:a<level>`; a token's
    own name when the plugin speaks with a token (the engine allows no other)."""
    if cfg.get("token"):
        return str(c.server.get("author") or cfg["author"])
    return f"{cfg['author']}:{chat_id}:a{level}".lower()[:64]


def delegate(agent: Any, cfg: dict[str, Any], message: str) -> Optional[dict[str, Any]]:
    """The superior `agent` calls `call_subordinate` with `message`: its
    task, written `doing` under a live lease, or None without an engine."""
    context, level = agent.context, agent.number + 1
    st = chat.state_of(context)
    parent = task_of(agent) or st.get("thread")
    where = st.get("pad") or cfg["pad"]
    text = (message or "").strip()[:MAX_TEXT] or "(no message)"
    lease = lease_seconds(cfg)
    meta = {"agent_zero": {"chat": context.id, "role": "delegation", "level": level, "agent": f"A{level}",
                           "by": getattr(agent, "agent_name", f"A{agent.number}"),
                           "chat_name": getattr(context, "name", None) or ""}}

    key = sp.new_key()  # `pad.call` may run `write` again: one task all the same

    def write(c: "sp.Client") -> dict[str, Any]:
        holder = holder_name(c, cfg, context.id, level)
        fields: dict[str, Any] = {"reply_to": parent} if parent else {}
        task = c.add(text, pad=where, kind="task", status="doing", assignee=holder, meta=meta,
                     idempotency_key=key, **fields)
        return c.heartbeat(task["id"], f"A{level} received the task.", agent=holder, lease_seconds=lease)

    try:
        task = pad.call(cfg, write)
    except sp.ScratchpadError as e:
        pad.health.say("delegation", f"Scratchpad: could not write A{level}'s task: {e}")
        return None
    if task is None:
        return None
    record = {"id": task["id"], "holder": task["assignee"], "level": level}
    agent.set_data(DATA_NEXT, record)
    held = Live(task["id"], context.id, level, task["assignee"], cfg)
    held.beaten()
    with _lock:
        live[task["id"]] = held
    with chat._lock:
        chat.owned[task["id"]] = context.id
    ensure_renewing()
    return task


def task_of(agent: Any) -> Optional[str]:
    """The id of the task `agent` works on, when it is a subordinate at
    work on a delegation: its own delegations and its questions to the
    person go in that task's thread."""
    return (agent.get_data(DATA_TASK) or {}).get("id")


def begin(sub: Any) -> None:
    """The subordinate's monologue starts: the task its superior just wrote is its own."""
    superior = sub.get_data("_superior")
    record = superior.get_data(DATA_NEXT) if superior is not None else None
    if record and record.get("level") == sub.number:
        superior.set_data(DATA_NEXT, None)
        sub.set_data(DATA_TASK, record)


def step(sub: Any, cfg: dict[str, Any], line: str) -> None:
    """One of the subordinate's steps: the task's `resume` holds its latest
    steps, with a heartbeat."""
    record = sub.get_data(DATA_TASK)
    held = live.get(record["id"]) if record else None
    if held is None:
        return
    held.steps = (held.steps + [line[:300]])[-STEPS_KEPT:]
    resume = "\n".join(held.steps)[:MAX_TEXT]
    try:
        pad.call(cfg, lambda c: beat(c, held, resume))
    except sp.ScratchpadError as e:  # e.g. someone finished it by hand: say so, keep working
        pad.health.say("delegation", f"Scratchpad: A{held.level}'s task {held.id}: {e}")


def beat(c: "sp.Client", held: Live, resume: Optional[str] = None) -> dict[str, Any]:
    """A heartbeat on a live task. One whose lease lapsed while the engine
    was away (back to `todo`, still naming its holder, nobody else's since)
    is held again: the subordinate never stopped working on it."""
    try:
        task = c.heartbeat(held.id, resume, agent=held.holder, lease_seconds=lease_seconds(held.cfg))
    except sp.Conflict:
        now = c.get(held.id)
        if now.get("status") != "todo" or str(now.get("assignee") or "").lower() != held.holder.lower():
            raise
        c.update(held.id, status="doing", if_version=now["version"])
        task = c.heartbeat(held.id, resume, agent=held.holder, lease_seconds=lease_seconds(held.cfg))
    held.beaten()
    return task


def end(sub: Any, result: Any, error: Optional[BaseException]) -> None:
    """The subordinate's monologue ended: its answer completes the task, an
    error fails it."""
    record = sub.get_data(DATA_TASK)
    if not record:
        return
    sub.set_data(DATA_TASK, None)
    with _lock:
        held = live.pop(record["id"], None)
        _remember(finished, record["id"], None)
        stop = stops.get(sub.context.id)
        if stop and stop[0] == sub.number:
            stops.pop(sub.context.id, None)
    if held is None:
        return
    if error is None:
        finish(held, "done", f"Answered: {str(result or '').strip() or '(an empty answer)'}")
    else:
        finish(held, "failed", describe(error))


def describe(error: BaseException) -> str:
    """An error as the task says it: the cause inside Agent Zero's
    HandledException, in one line."""
    inner = error.args[0] if error.args and isinstance(error.args[0], BaseException) else error
    text = " ".join(str(inner).split()) or type(inner).__name__
    if isinstance(inner, Stopped):
        return f"Stopped: {text}."
    return f"{type(inner).__name__}: {text}"[:MAX_TEXT]


def finish(held: Live, status: str, text: str) -> bool:
    """Writes a task's outcome; kept for a later try when the engine is away."""
    text = text[:MAX_TEXT]

    def write(c: "sp.Client") -> dict[str, Any]:
        try:
            if status == "done":
                return c.complete_task(held.id, text, agent=held.holder)
            return c.fail_task(held.id, text, agent=held.holder)
        except sp.Conflict:
            # Its lease lapsed while the engine was away (back to todo): the
            # outcome is still this process's to say.
            fields = {"resume": text} if status == "done" else {"meta": {"agent_zero": {
                "chat": held.chat, "role": "delegation", "level": held.level, "error": text}}}
            return c.update(held.id, status=status, **fields)

    try:
        done = pad.call(held.cfg, write)
    except sp.ScratchpadError as e:
        pad.health.say("delegation", f"Scratchpad: could not finish task {held.id}: {e}")
        return True
    if done is None:
        with _lock:
            unwritten[held.id] = (held, status, text)
        ensure_renewing()
        return False
    return True


def tell(task_id: str, message: str) -> bool:
    """A reply on a live task reaches its subordinate at its next step."""
    from agent import UserMessage

    sub = agent_of(task_id)
    if sub is None:
        return False
    sub.intervention = UserMessage(message=message)
    return True


def agent_of(task_id: str) -> Any:
    """The subordinate working on the live task `task_id`, if it still runs."""
    from agent import AgentContext

    held = live.get(task_id)
    context = AgentContext.get(held.chat) if held else None
    at = context.agent0 if context is not None else None
    while at is not None and at.number < held.level:
        at = at.get_data("_subordinate")
    record = at.get_data(DATA_TASK) if at is not None else None
    return at if record and record.get("id") == task_id else None


def stop(task_id: str, who: str) -> bool:
    """Stops the subordinate on the live task `task_id` and what it
    delegated, at its next step; its superior goes on."""
    held = live.get(task_id)
    if held is None or agent_of(task_id) is None:
        return False
    with _lock:
        stops[held.chat] = (held.level, who, task_id)
    return True


def stop_due(agent: Any) -> Optional[Stopped]:
    """The Stop this agent must raise now (it is at or below a stopped level)."""
    stop = stops.get(agent.context.id)
    if stop is None or agent.number < stop[0]:
        return None
    if stop[2] not in live:  # its subordinate finished before the Stop came
        with _lock:
            stops.pop(agent.context.id, None)
        return None
    return Stopped(*stop)


def stopped_here(agent: Any, error: BaseException) -> Optional[Stopped]:
    """The Stop of `agent`'s own subordinate, when `error` carries one: the
    superior takes it as its call's answer and goes on."""
    inner = error.args[0] if error.args and isinstance(error.args[0], BaseException) else error
    if isinstance(inner, Stopped) and inner.level == agent.number + 1:
        return inner
    return None


def ensure_renewing() -> None:
    global _renewer
    with _lock:
        if _renewer is None or not _renewer.is_alive():
            _renewer = threading.Thread(target=_renew_forever, name="scratchpad-leases", daemon=True)
            _renewer.start()


def _renew_forever() -> None:
    while True:
        with _lock:
            held = list(live.values())
            waiting = list(unwritten.values())
            unwritten.clear()
        renew_once(held, waiting)
        time.sleep(0.5)


def renew_once(held: list[Live], waiting: list[tuple[Live, str, str]]) -> None:
    """Renews the lease of each live task whose chat still runs, when due;
    fails one whose chat Agent Zero stopped; writes the outcomes the engine
    missed."""
    from agent import AgentContext

    for h in held:
        context = AgentContext.get(h.chat)
        if context is None or not context.is_running():
            with _lock:
                if live.pop(h.id, None) is None:
                    continue
            finish(h, "failed", "Agent Zero stopped the chat (its Stop, a reset or a deleted chat) "
                                f"before A{h.level} finished.")
            continue
        if h.due > time.monotonic():
            continue
        try:
            pad.call(h.cfg, lambda c, h=h: beat(c, h))
        except sp.ScratchpadError as e:
            pad.health.say("delegation", f"Scratchpad: A{h.level}'s task {h.id}: {e}")
    for task, status, text in waiting:
        finish(task, status, text)  # kept again if the engine is still away
