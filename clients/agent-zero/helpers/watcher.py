"""The person reaching a running Agent Zero through the pad.

One thread per Agent Zero process holds a subscription to the engine and,
whenever something may concern Agent Zero (a note addressed to it, a reply
by someone else, a reminder), reads its inbox and routes what is new (over
HTTP, which carries no events, it reads the inbox every `poll_seconds`):

- a reply in a chat's thread (to the chat's root, status, progress, result
  or question) reaches that chat as an *intervention* — Agent Zero's own
  mechanism, `context.communicate(UserMessage(...))`, which the loop handles
  at its next step; a chat that has finished continues with it;
- a reply to a delegation's task (helpers/delegation.py) reaches that
  subordinate at its next step — and so does an answer to a question the
  subordinate asked there that came after its `ask_person` gave up — and a
  Stop on it halts that subordinate and what it delegated, while the chat
  goes on;
- a reply carrying `meta.control` `pause`, `resume` or `stop` (the app's
  buttons, `pad agent-zero stop`) by one of the `controllers` (the person,
  "user", unless the settings name more) pauses, resumes or halts the chat;
  anyone else's is only their words, like any reply;
- a note addressed to `@agent-zero` starts a new chat bound to that note's
  thread when the engine handed it to Agent Zero — the person wrote it, or
  a token whose grant names agent-zero: the engine keeps a delivery for it,
  the same rule as for A2A agents (`agent.deliveries`) — at most
  CHATS_PER_AUTHOR chats per writer in CHATS_WINDOW seconds (unless the
  engine sends it over A2A, or the settings say no); anyone else's stays a
  note for the next prompt;
- an answer an `ask_person` call already took (the question says so in the
  engine, `chat.mark_taken`) goes nowhere: not into the chat again, nor,
  after a restart, into a new one;
- anything else (needs-eyes notes, replies to older notes, reminders) waits
  in `pending` for the next prompt (helpers/recall.py).

The engine keeps the inbox cursor, so nothing is lost while Agent Zero or
the engine is down: the first read after a (re)connect delivers it.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Optional

from usr.plugins.scratchpad.helpers import chat, delegation, pad
from usr.plugins.scratchpad.helpers import scratchpad_client as sp

CONTROLS = ("pause", "resume", "stop")

_lock = threading.Lock()
pending: list[dict[str, Any]] = []  # for the next prompt, oldest first
PENDING_MAX = 50  # older ones are dropped (recall off: nobody takes them)
_seen: set[str] = set()
_thread: Optional["Watcher"] = None
# Chats one writer's notes may start in a window: a flood of addressed
# notes (40 notes, 40 chats) must not run the machine.
CHATS_PER_AUTHOR = 5
CHATS_WINDOW = 600.0
_started: dict[str, list[float]] = {}  # writer -> when their notes started chats


def _within_bound(author: str) -> bool:
    """Counts a chat started by `author`'s note, unless they are at the bound."""
    now = time.monotonic()
    with _lock:
        recent = [t for t in _started.get(author, []) if now - t < CHATS_WINDOW]
        if len(recent) >= CHATS_PER_AUTHOR:
            _started[author] = recent
            return False
        _started[author] = recent + [now]
        return True


def _keep(e: dict[str, Any]) -> None:
    with _lock:
        pending.append(e)
        del pending[:-PENDING_MAX]


def take_pending() -> list[dict[str, Any]]:
    with _lock:
        out = list(pending)
        pending.clear()
        return out


def message_for(e: dict[str, Any], started: bool = False, task: bool = False) -> str:
    """The words a note from the pad reaches Agent Zero with."""
    who, where = e.get("author"), e.get("pad")
    text = str(e.get("content", "")).strip()
    if task:
        return f"{text}\n\n(Written by {who} on your task {e.get('reply_to')} in the scratchpad, note {e['id']}.)"
    if started:
        return (f"{text}\n\n(From the scratchpad: a note by {who} in pad '{where}', id {e['id']}, addressed to "
                "you. Your progress, questions and final answer go to its thread there; the person follows "
                "you from the app.)")
    return f"{text}\n\n(Written by {who} in the scratchpad thread of this chat, note {e['id']}.)"


class Watcher(threading.Thread):
    """The inbox reader (see the module's text). `start_chat` is Agent Zero's
    way to open a chat; tests give their own."""

    def __init__(self) -> None:
        super().__init__(name="scratchpad-watcher", daemon=True)
        self.stopping = False
        self.conn: Optional[sp.Client] = None
        self.a2a_owns_addressed = False

    def stop(self) -> None:
        self.stopping = True
        conn = self.conn
        if conn is not None:
            try:
                conn._sock.shutdown(2)  # wakes the thread from its wait for the next event
            except (OSError, AttributeError):  # AttributeError: over HTTP, nothing to wake
                pass

    def run(self) -> None:
        backoff = 0.5
        while not self.stopping:
            cfg = pad.config()
            try:
                self.conn = pad._connect(cfg)
                # A token writes under its own name: that is who notes reach.
                cfg = {**cfg, "author": self.conn.server.get("author") or cfg["author"]}
                self._check_a2a(cfg)
                pad.health.ok(pad.ENGINE)
                backoff = 0.5
                if isinstance(self.conn, sp.HttpClient):
                    self.poll(cfg)  # over HTTP there are no events: read the inbox every few seconds
                    continue
                self.conn._sock.settimeout(None)  # events may be hours apart
                sub = self.conn.call("subscribe", {})["subscription"]
                self.drain(cfg)
                while not self.stopping:
                    event = self.conn.next_event(sub)
                    if not self._concerns_us(event, cfg):
                        continue
                    cfg = {**pad.config(), "author": cfg["author"]}
                    e = event.get("entry") or {}
                    if event.get("type") == "created" and e.get("reply_to") in chat.owned:
                        # A reply in a chat's thread that is not to one of
                        # Agent Zero's own notes (the person answering their
                        # own note) is in no inbox: route it from the event.
                        self.take("replies", e, cfg)
                    self.drain(cfg)
            except (sp.ScratchpadError, OSError) as e:
                if self.stopping:
                    break
                pad.health.say(pad.ENGINE, pad.fix_for(e if isinstance(e, sp.ScratchpadError)
                                                      else sp.EngineUnavailable(str(e)), cfg))
            except Exception as e:  # never let the thread die: say it, wait, try again
                pad.health.say("watcher", f"Scratchpad: reading the inbox failed: {e!r}")
            finally:
                if self.conn is not None:
                    self.conn.close()
                    self.conn = None
            time.sleep(backoff)
            backoff = min(backoff * 2, 10.0)

    def poll(self, cfg: dict[str, Any]) -> None:
        """Reads the inbox every `poll_seconds` until stopped or the settings change."""
        while not self.stopping:
            self.drain(cfg)
            deadline = time.monotonic() + float(cfg.get("poll_seconds") or 2)
            while not self.stopping and time.monotonic() < deadline:
                time.sleep(0.1)
            fresh = pad.config()
            if fresh.get("url") != cfg.get("url") or fresh.get("token") != cfg.get("token"):
                return
            cfg = {**fresh, "author": cfg["author"]}

    def _handed(self, e: dict[str, Any], cfg: dict[str, Any]) -> bool:
        """Whether the engine handed the note to us: it keeps a delivery for
        our name when the writer may hand work to it (the person, or a token
        whose grant names it). The engine decides; we ask."""
        try:
            rows = self.conn.call("agent.deliveries", {"entry": e["id"]}).get("deliveries", [])
        except sp.ScratchpadError:
            return False
        return any(str(r.get("agent", "")).lower() == cfg["author"].lower() for r in rows)

    def _a2a_owns(self, cfg: dict[str, Any]) -> bool:
        """Whether the engine sends notes addressed to us over A2A (asked
        again for each such note: a registration may have come or gone)."""
        self._check_a2a(cfg)
        return self.a2a_owns_addressed

    def _check_a2a(self, cfg: dict[str, Any]) -> None:
        try:
            agents = self.conn.call("agent.list", {"seen_within": 1}).get("agents", [])
        except sp.ScratchpadError:
            agents = []
        owned = any(a.get("name") == cfg["author"] for a in agents)
        if owned and not self.a2a_owns_addressed:
            pad.log(f"Scratchpad: '{cfg['author']}' is registered with the engine as an A2A agent, so notes "
                    "addressed to it reach Agent Zero over A2A, not through the plugin (remove the "
                    f"registration with `pad agent remove {cfg['author']}` to let the plugin take them)")
        self.a2a_owns_addressed = owned

    @staticmethod
    def _concerns_us(event: dict[str, Any], cfg: dict[str, Any]) -> bool:
        kind = event.get("type")
        if kind == "lagged":
            return True
        e = event.get("entry") or {}
        if kind == "reminder":
            return e.get("author") == cfg["author"]
        if kind != "created" or e.get("author") == cfg["author"]:
            return False
        return cfg["author"] in (e.get("to") or []) or bool(e.get("reply_to"))

    def drain(self, cfg: dict[str, Any]) -> None:
        """Reads the inbox once and routes what is new."""
        box = self.conn.call("inbox", {})
        items: list[tuple[str, dict[str, Any]]] = []
        for key in ("addressed", "replies", "needs_eyes", "reminders"):
            items += [(key, e) for e in box.get(key) or []]
        for key, e in items:
            self.take(key, e, cfg)

    def take(self, key: str, e: dict[str, Any], cfg: dict[str, Any]) -> None:
        """Routes `e` unless it was routed before."""
        with _lock:
            if e["id"] in _seen:
                return
            _seen.add(e["id"])
        try:
            self.route(key, e, cfg)
        except Exception as err:  # one bad note must not stop the others
            pad.health.say("route", f"Scratchpad: could not pass note {e['id']} to Agent Zero: {err!r}")

    def route(self, key: str, e: dict[str, Any], cfg: dict[str, Any]) -> None:
        if key in ("needs_eyes", "reminders"):
            _keep(e)
            return
        parent = e.get("reply_to")
        meta = e.get("meta") if isinstance(e.get("meta"), dict) else {}
        if parent and parent in chat.waited and meta.get("control") not in CONTROLS:
            return  # an ask_person call is waiting for exactly this answer
        if parent and chat.was_taken(parent, e["id"], cfg):
            return  # an ask_person call took it (before a restart, maybe): no chat gets it twice
        chat_id = chat.chat_for(parent, cfg) if parent else None
        if chat_id:
            self.deliver(chat_id, e, cfg)
        elif key == "addressed" and cfg.get("take_addressed") and not self._a2a_owns(cfg):
            if not self._handed(e, cfg):
                pad.log(f"Scratchpad: note {e['id']} by {e.get('author')} is addressed to "
                               f"{cfg['author']} but was not handed to it (the writer's token does not name "
                               f"{cfg['author']}: pad token create --agents {cfg['author']}); it stays a note")
                _keep(e)
            elif not _within_bound(str(e.get("author"))):
                pad.log(f"Scratchpad: {e.get('author')} started {CHATS_PER_AUTHOR} chats in "
                               f"{int(CHATS_WINDOW // 60)} minutes; note {e['id']} stays a note")
                _keep(e)
            else:
                start_chat(e, cfg)
        else:
            _keep(e)

    def deliver(self, chat_id: str, e: dict[str, Any], cfg: dict[str, Any]) -> None:
        from agent import AgentContext, UserMessage

        context = AgentContext.get(chat_id)
        with chat._lock:
            chat.owned[e["id"]] = chat_id  # a reply to this reply is the chat's too
        control = (e.get("meta") or {}).get("control") if isinstance(e.get("meta"), dict) else None
        if context is None:  # the chat is gone (deleted, or Agent Zero restarted without it)
            if control is None:
                start_chat(e, cfg)
            return
        if on_task(e, control, cfg):
            return
        if control in CONTROLS and e.get("author") in controllers(cfg):
            apply_control(context, control, e, cfg)
            return
        context.communicate(UserMessage(message=message_for(e)))


def on_task(e: dict[str, Any], control: Optional[str], cfg: dict[str, Any]) -> bool:
    """A reply on a delegation's task: its words reach that subordinate's
    next step, a Stop halts that subordinate and what it delegated; so does
    an answer to a question the subordinate asked there after its
    `ask_person` stopped waiting. False when the task is not one being
    worked on here (the chat takes it)."""
    task = e.get("reply_to")
    task = delegation.asked.get(task, task)
    if task in delegation.finished and control == "stop":
        pad.log(f"Scratchpad: the Stop {e['id']} came after task {task} was finished; nothing to stop")
        return True
    if task not in delegation.live:
        return False
    if control == "stop" and e.get("author") in controllers(cfg):
        return delegation.stop(task, str(e.get("author")))
    if control is None:
        return delegation.tell(task, message_for(e, task=True))
    return False


def controllers(cfg: dict[str, Any]) -> list[str]:
    """The authors whose pause, resume and stop a chat obeys."""
    return [a.strip().lstrip("@").lower() for a in str(cfg.get("controllers") or "user").split(",") if a.strip()]


def apply_control(context: Any, control: str, e: dict[str, Any], cfg: dict[str, Any]) -> None:
    who = e.get("author", "someone")
    if control == "pause":
        context.paused = True
        chat.set_state(context, cfg, "paused", f"paused by {who}")
    elif control == "resume":
        chat.stops.pop(context.id, None)
        context.paused = False
        chat.set_state(context, cfg, "working", f"resumed by {who}")
    elif control == "stop":
        running = bool(getattr(context, "is_running", lambda: False)())
        if running:
            chat.stops[context.id] = who
            context.paused = False  # a paused loop must wake to stop
        else:
            chat.set_state(context, cfg, "stopped", f"stopped by {who} (it was not running)")


def start_chat(e: dict[str, Any], cfg: dict[str, Any]) -> Any:
    """A new Agent Zero chat for the note `e`, bound to its thread."""
    from agent import AgentContext, UserMessage
    from initialize import initialize_agent

    name = " ".join(str(e.get("content", "")).split())[:40]
    context = AgentContext(initialize_agent(), name=f"Pad: {name}")
    chat.bind(context, e)
    context.communicate(UserMessage(message=message_for(e, started=True)))
    try:
        from helpers.persist_chat import save_tmp_chat

        save_tmp_chat(context)
    except Exception:
        pass
    pad.log(f"Scratchpad: note {e['id']} by {e.get('author')} started chat {context.id}")
    return context


def ensure_running() -> "Watcher":
    """Starts the watcher once per process (the job loop and every chat call it)."""
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = Watcher()
            _thread.start()
        return _thread


def stop() -> None:
    global _thread
    with _lock:
        t, _thread = _thread, None
    if t is not None:
        t.stop()
        t.join(timeout=5)
