"""What the pad puts into Agent Zero's prompt, without an extra LLM call.

Each recall searches every pad the agent may read (the settings may narrow
them) with the user's message and the agent's latest thoughts, and keeps the
best notes that fit a character budget, beside what waits for this agent:
answers and replies to its notes, notes addressed to it, needs-eyes notes
and its due reminders (helpers/watcher.py gathers those).
"""

from __future__ import annotations

import fnmatch
import json
import time
from typing import Any, Optional

from usr.plugins.scratchpad.helpers import chat, pad

QUERY_CHARS = 1000  # the engine's longest query


def answer_of(text: str) -> Optional[dict[str, Any]]:
    """Agent Zero's JSON answer (thoughts, headline, tool call) in `text`, if any."""
    if not text:
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        start, end = text.find("{"), text.rfind("}")
        try:
            parsed = json.loads(text[start:end + 1]) if 0 <= start < end else None
        except ValueError:
            parsed = None
    return parsed if isinstance(parsed, dict) else None


def thoughts_of(last_response: str) -> str:
    """The `thoughts` of Agent Zero's last JSON answer, else its headline, else its text."""
    parsed = answer_of(last_response)
    if parsed is None:
        return last_response or ""
    t = parsed.get("thoughts")
    if isinstance(t, list):
        return " ".join(str(x) for x in t)
    if isinstance(t, str):
        return t
    return str(parsed.get("headline") or "")


def headline_of(message: str) -> str:
    """A step in a few words: the answer's headline, else its thoughts."""
    parsed = answer_of(message) or {}
    return str(parsed.get("headline") or "")[:200] or thoughts_of(message)[:200]


def query(user_message: str, last_response: str) -> str:
    """The user's message first (most of the room), then the latest thoughts."""
    user = " ".join((user_message or "").split())
    thoughts = " ".join(thoughts_of(last_response).split())
    if not thoughts:
        return user[:QUERY_CHARS]
    room = QUERY_CHARS - min(len(thoughts), 400) - 1
    return (user[:room] + " " + thoughts[-400:]).strip()[:QUERY_CHARS]


RECALLERS = ("scratchpad", "both", "agent-zero")
_said_both = False


def recaller(cfg: dict[str, Any], agent: Any) -> str:
    """Who recalls notes (`recall_by`). With "scratchpad" while Agent Zero's
    own memory recall is on too, both fill the prompt: said once in the log,
    with the two ways out."""
    global _said_both
    by = str(cfg.get("recall_by") or "scratchpad").strip().lower()
    if by not in RECALLERS:
        pad.health.say("settings", f"Scratchpad: recall_by is '{by}'; use one of {', '.join(RECALLERS)} "
                                   "(recalling as 'scratchpad' meanwhile)")
        by = "scratchpad"
    if by == "scratchpad" and not _said_both and memory_recall_on(agent):
        _said_both = True
        pad.log("Scratchpad: Agent Zero's own memory recall is on too, so both recall into the prompt "
                "(about three times the characters); switch it off in Settings → Memory to leave recall "
                "to the pad, or set the plugin's recall_by to 'both' (keep both) or 'agent-zero'")
    return by


MEMORY_CHECK_EVERY = 60.0  # seconds: a look at Agent Zero's settings costs it ~4 ms
_memory_checked = (-MEMORY_CHECK_EVERY, False)


def memory_recall_on(agent: Any) -> bool:
    """Whether Agent Zero's `_memory` plugin is on and recalls (looked up at
    most once a minute)."""
    global _memory_checked
    now = time.monotonic()
    if now - _memory_checked[0] < MEMORY_CHECK_EVERY:
        return _memory_checked[1]
    try:
        from helpers import plugins

        cfg = plugins.get_plugin_config("_memory", agent) if "_memory" in plugins.get_enabled_plugins(agent) else None
        on = isinstance(cfg, dict) and bool(cfg.get("memory_recall_enabled"))
    except Exception:
        on = False
    _memory_checked = (now, on)
    return on


def _allowed(cfg: dict[str, Any]) -> list[str]:
    return [p.strip().lower() for p in str(cfg.get("recall_pads") or "").split(",") if p.strip()]


def notes(cfg: dict[str, Any], q: str, context_id: Optional[str] = None) -> list[dict[str, Any]]:
    """The best notes for `q` the agent may read, outside this chat's own thread."""
    if len(q) < 3:
        return []
    pads = _allowed(cfg)
    limit = int(cfg.get("recall_max_notes") or 6)
    # Narrowed to some pads: one search over all of them, filtered here
    # (a search takes one pad filter; scores of two answers do not compare).
    fetch = limit * 4 if pads else limit + 8
    result = pad.call(cfg, lambda c: c.search(q, limit=min(fetch, 200)))
    if not result:
        return []
    out = []
    for hit in result.get("hits", []):
        e = hit["entry"]
        if pads and not any(fnmatch.fnmatch(e["pad"], p) for p in pads):
            continue
        if context_id and chat.owned.get(e["id"]) == context_id:
            continue  # the chat's own thread is already in its history
        if chat.is_bookkeeping(e, cfg):
            continue  # a chat's root or status: what a chat is, not what anyone knows
        out.append(e)
        if len(out) >= limit:
            break
    return out


def render(found: list[dict[str, Any]], waiting: list[dict[str, Any]], budget: int) -> str:
    """The prompt's scratchpad section, within `budget` characters."""
    parts: list[str] = []
    used = 0

    def add(text: str) -> bool:
        nonlocal used
        if used + len(text) + 1 > budget:
            return False
        parts.append(text)
        used += len(text) + 1
        return True

    if waiting:
        add("Waiting for you in the scratchpad (reply with the `scratchpad` tool, action `reply`):")
        for e in waiting:
            label = "addressed to you" if e.get("to") else ("a reply to your note " + e["reply_to"]
                                                             if e.get("reply_to") else "needs eyes")
            if not add(f"- ({label}) {pad.line(e, 400)}"):
                break
    if found:
        add("Notes from the scratchpad that may matter here (the person's and other agents'; "
            "search more with the `scratchpad` tool):")
        for e in found:
            if not add(f"- {pad.line(e, 500)}"):
                break
    return "\n".join(parts)
