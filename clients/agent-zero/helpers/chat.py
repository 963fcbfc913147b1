"""One pad thread per Agent Zero chat.

The thread's root is the note that started the chat: the person's note
addressed to `@agent-zero`, or, for a chat begun in Agent Zero's own window,
a note the plugin writes in its pad holding the person's words (not Agent
Zero's framing of them). Beside it sits the chat's *status note* (written by
the plugin, a reply in the thread): its text and its `meta.agent_zero` say
the chat's live state — `working`, `waiting_for_you`, `paused`, `stopped`,
`done`, `idle` — and its last step, for the app's Agents view. Root and
status (and its delegations' tasks) are bookkeeping (`is_bookkeeping`): recall leaves them out and the
`scratchpad` tool's searches rank them under everyone else's notes. Progress notes,
questions and the final result are replies in the same thread, so the
person follows Agent Zero from the app, and whatever they reply there
reaches the chat (helpers/watcher.py).
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone
from typing import Any, Optional

from usr.plugins.scratchpad.helpers import pad
from usr.plugins.scratchpad.helpers import scratchpad_client as sp

DATA_KEY = "scratchpad"  # in AgentContext.data: {"thread", "status", "pad", "title"}, JSON-safe

_lock = threading.Lock()
# Entry id -> chat (context id), for every entry this process wrote in a chat
# thread: a reply to one of them belongs to that chat. After a restart the
# chat is read from the entry's meta.agent_zero.chat instead.
owned: dict[str, str] = {}
# Chats the person stopped from the pad: the loop halts at its next step.
stops: dict[str, str] = {}
# Questions an ask_person call is waiting on: their answers reach the call,
# not the loop as an intervention.
waited: set[str] = set()
_last_progress: dict[str, float] = {}
_last_state: dict[str, float] = {}
STATE_EVERY = 5.0


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def state_of(context: Any) -> dict[str, Any]:
    data = context.data.get(DATA_KEY)
    if not isinstance(data, dict):
        data = {}
        context.data[DATA_KEY] = data
    return data


def bind(context: Any, root: dict[str, Any]) -> None:
    """Makes `root` (a note addressed to Agent Zero) the chat's thread, before
    the chat's first step."""
    st = state_of(context)
    st["thread"], st["pad"] = root["id"], root["pad"]
    with _lock:
        owned[root["id"]] = context.id


def _meta(context: Any, **extra: Any) -> dict[str, Any]:
    return {"agent_zero": {"chat": context.id, **extra}}


def role_of(e: dict[str, Any]) -> Optional[str]:
    meta = e.get("meta") if isinstance(e.get("meta"), dict) else {}
    a0 = meta.get("agent_zero") if isinstance(meta.get("agent_zero"), dict) else {}
    return a0.get("role")


def is_bookkeeping(e: dict[str, Any], cfg: dict[str, Any]) -> bool:
    """A chat's root or status note, or a delegation's task (helpers/
    delegation.py), written by this agent: what a chat is, not what anyone
    knows."""
    return e.get("author") == cfg.get("author") and role_of(e) in ("chat", "status", "delegation")


def words_of(user_message: Any) -> str:
    """The person's words in Agent Zero's user message: its history message
    holds them as `{"user_message": …}` (prompts/fw.user_message.md), which
    `output_text()` would render as `user: {"user_message": …}`."""
    content = getattr(user_message, "content", None)
    if isinstance(content, dict) and isinstance(content.get("user_message"), str):
        return content["user_message"].strip()
    if isinstance(content, str):
        return content.strip()
    return user_message.output_text().strip()


def status_text(state: str, step: str = "") -> str:
    """What the status note says: the chat's state in words."""
    step = f": {step}" if step else ""
    return {
        "working": f"Agent Zero is working on it{step}.",
        "waiting_for_you": f"Agent Zero is waiting for your answer{step}",
        "paused": f"Agent Zero is paused{step}.",
        "stopped": f"Agent Zero stopped{step}.",
        "done": "Agent Zero is done: its answer is the result in this thread.",
        "idle": f"Agent Zero is idle{step}.",
    }.get(state, f"Agent Zero: {state}{step}.")


def over_a2a(context: Any) -> bool:
    """A chat Agent Zero's A2A server opened (a background context): the
    engine already keeps its note's thread, so the plugin opens none."""
    return getattr(getattr(context, "type", None), "value", None) == "background"


def ensure_thread(agent: Any, cfg: dict[str, Any], words: str) -> Optional[dict[str, Any]]:
    """The chat's thread, started when the chat starts with the person's
    `words`; None without an engine (or for a chat that came over A2A)."""
    context = agent.context
    st = state_of(context)
    if st.get("status"):
        return st
    if over_a2a(context) and not st.get("thread"):
        return None
    name = getattr(context, "name", None) or f"chat {context.id}"
    words = (words or "").strip()[:4000] or "(no message)"
    # Keys made once: `pad.call` runs a write again after a lost connection,
    # and the engine stores a key's write once.
    root_key, status_key = sp.new_key(), sp.new_key()
    if not st.get("thread"):
        root = pad.call(cfg, lambda c: c.add(words, pad=cfg["pad"], meta=_meta(context, role="chat", name=name),
                                              idempotency_key=root_key))
        if root is None:
            return None
        st["thread"], st["pad"] = root["id"], root["pad"]
    st["title"] = " ".join(words.split())[:120]
    status = pad.call(cfg, lambda c: c.reply(
        st["thread"], status_text("working", "started"), pad=st["pad"],
        meta=_meta(context, role="status", title=st["title"], state="working", step="started", at=now()),
        idempotency_key=status_key))
    if status is None:
        return None
    st["status"] = status["id"]
    with _lock:
        owned[st["thread"]] = context.id
        owned[status["id"]] = context.id
    return st


def post(context: Any, cfg: dict[str, Any], content: str, kind: str = "note", under: Optional[str] = None,
         **fields: Any) -> Optional[dict[str, Any]]:
    """A reply in the chat's thread — to the root, or to `under`, an entry of
    the thread (a subordinate's task) — remembered as the chat's."""
    st = state_of(context)
    if not st.get("thread"):
        return None
    meta = fields.pop("meta", None) or _meta(context)
    fields = {k: v for k, v in fields.items() if v is not None}
    key = sp.new_key()
    e = pad.call(cfg, lambda c: c.reply(under or st["thread"], content[:4000], pad=st.get("pad"), kind=kind,
                                        meta=meta, idempotency_key=key, **fields))
    if e is not None:
        with _lock:
            owned[e["id"]] = context.id
    return e


def set_state(context: Any, cfg: dict[str, Any], state: str, step: Optional[str] = None,
              content: Optional[str] = None) -> None:
    """The status note says the chat's state (the app's Agents view shows it)."""
    st = state_of(context)
    if not st.get("status"):
        return
    # Each change is a version in the note's history: a run of steps in the
    # same state is said at most every STATE_EVERY seconds.
    t = time.monotonic()
    if state == st.get("last_state") and not content and t - _last_state.get(context.id, -1e9) < STATE_EVERY:
        return
    _last_state[context.id] = t
    st["last_state"] = state
    step = (step or "")[:200]
    meta = _meta(context, role="status", title=st.get("title", ""), state=state, step=step, at=now())
    text = content or status_text(state, step)
    pad.call(cfg, lambda c: c.update(st["status"], content=text, meta=meta))


def mark_taken(context: Any, cfg: dict[str, Any], question: dict[str, Any], answer: dict[str, Any]) -> None:
    """Says on the question, in the engine, that `answer` was taken by the
    ask_person call that asked it: whoever reads the inbox next — this
    process, or Agent Zero restarted (a new container on the same volume)
    — passes it on to no chat."""
    meta = _meta(context, role="question", taken=[answer["id"]])
    pad.call(cfg, lambda c: c.update(question["id"], meta=meta))


def was_taken(parent_id: str, reply_id: str, cfg: dict[str, Any]) -> bool:
    """Whether the reply `reply_id` to `parent_id` was already taken (`mark_taken`)."""
    parent = pad.call(cfg, lambda c: c.get(parent_id))
    if not parent or parent.get("author") != cfg.get("author"):
        return False
    meta = parent.get("meta") if isinstance(parent.get("meta"), dict) else {}
    a0 = meta.get("agent_zero") if isinstance(meta.get("agent_zero"), dict) else {}
    return reply_id in (a0.get("taken") or [])


def progress_due(context_id: str, min_seconds: float) -> bool:
    """At most one progress note per `min_seconds` per chat."""
    t = time.monotonic()
    with _lock:
        last = _last_progress.get(context_id)
        if last is not None and t - last < min_seconds:
            return False
        _last_progress[context_id] = t
        return True


# How far up a thread `chat_for` looks for a chat's note: a chat's notes are
# a few replies from its root, and a deeper chain (a flood of replies) must
# not cost a call per note, nor the Python stack.
MAX_CHAIN = 64


def chat_for(entry_id: Optional[str], cfg: dict[str, Any]) -> Optional[str]:
    """The chat an entry belongs to: one this process wrote, else the chat its
    meta names (an entry written before a restart), looking up the thread
    through at most MAX_CHAIN notes."""
    at = entry_id
    for _ in range(MAX_CHAIN):
        if not at:
            return None
        with _lock:
            if at in owned:
                return owned[at]
        e = pad.call(cfg, lambda c, at=at: c.get(at))
        meta = (e or {}).get("meta") or {}
        chat = meta.get("agent_zero", {}).get("chat") if isinstance(meta.get("agent_zero"), dict) else None
        if chat and e and e.get("author") == cfg["author"]:
            with _lock:
                owned[at] = chat
            return chat
        at = (e or {}).get("reply_to")
    return None
