"""The plugin's one way to the engine: its settings, a connection per thread,
and the engine's health said once in Agent Zero's log.

Everything else in the plugin calls `call(agent, lambda c: ...)`: with the
engine unreachable it returns None after saying so once (and once again when
the engine is back), so Agent Zero keeps working without the pad.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Optional

import yaml

from usr.plugins.scratchpad.helpers import scratchpad_client as sp

PLUGIN = "scratchpad"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Every key a saved config must hold (Agent Zero does not merge a saved
# config with the defaults, so the plugin does: a key missing from a config
# saved by an older version of the plugin takes its default).
with open(os.path.join(HERE, "default_config.yaml"), encoding="utf-8") as f:
    DEFAULTS: dict[str, Any] = yaml.safe_load(f)


CONFIG_TTL = 1.0  # seconds a read of the settings is reused (a read costs Agent Zero ~4 ms)
_configs: dict[Any, tuple[float, dict[str, Any]]] = {}


def config(agent: Any = None) -> dict[str, Any]:
    """The plugin's settings for `agent` (project and profile scopes first),
    every key present; a change takes effect within CONFIG_TTL."""
    key = (getattr(getattr(agent, "context", None), "id", None), getattr(getattr(agent, "config", None), "profile", None))
    now = time.monotonic()
    held = _configs.get(key)
    if held and now - held[0] < CONFIG_TTL:
        return dict(held[1])
    cfg = _read_config(agent)
    _configs[key] = (now, cfg)
    return dict(cfg)


def _read_config(agent: Any) -> dict[str, Any]:
    found = None
    try:
        from helpers import plugins

        found = plugins.get_plugin_config(PLUGIN, agent)
    except Exception as e:  # a broken saved config must not stop the loop
        health.say("settings", f"Scratchpad: its settings could not be read ({e}); using the defaults")
    cfg = dict(DEFAULTS)
    if isinstance(found, dict):
        cfg.update({k: v for k, v in found.items() if k in DEFAULTS and v is not None})
    cfg["author"] = (str(cfg.get("author") or "agent-zero")).strip().lstrip("@").lower() or "agent-zero"
    cfg["pad"] = (str(cfg.get("pad") or "agent-zero")).strip().lower() or "agent-zero"
    return cfg


class Health:
    """Says each kind of trouble once in Agent Zero's log (and keeps the last
    line for the settings page), and once that it is over."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.trouble: dict[str, str] = {}
        self.last_ok: Optional[float] = None

    def say(self, kind: str, line: str) -> None:
        with self.lock:
            if self.trouble.get(kind) == line:
                return
            self.trouble[kind] = line
        log(line, error=True)

    def ok(self, kind: str) -> None:
        with self.lock:
            self.last_ok = time.time()
            gone = self.trouble.pop(kind, None)
        if gone is not None:
            log("Scratchpad: the engine answers again")

    def status(self) -> dict[str, Any]:
        with self.lock:
            return {"ok": not self.trouble, "problems": list(self.trouble.values()), "last_ok": self.last_ok}


health = Health()
ENGINE = "engine"  # the one kind of trouble every caller shares: reaching the engine


def log(line: str, error: bool = False) -> None:
    try:
        from helpers.print_style import PrintStyle

        (PrintStyle.error if error else PrintStyle.info)(line)
    except Exception:
        print(line, flush=True)


_local = threading.local()


def _connect(cfg: dict[str, Any]) -> "sp.Client":
    """The socket (native), or HTTP with a token when `url` is set (Docker)."""
    timeout = float(cfg.get("timeout_seconds") or 30)
    if cfg.get("url"):
        return sp.HttpClient(str(cfg["url"]), str(cfg.get("token") or ""), client="agent-zero-plugin",
                             timeout=timeout)
    return sp.Client(socket_path=cfg.get("socket") or None, author=cfg["author"], client="agent-zero-plugin",
                     token=cfg.get("token") or None, timeout=timeout)


def client(cfg: dict[str, Any]) -> "sp.Client":
    """This thread's connection for these settings, opened when needed."""
    key = (cfg.get("url"), cfg.get("socket"), cfg.get("token"), cfg["author"])
    held = getattr(_local, "held", None)
    if held and held[0] == key:
        return held[1]
    if held:
        held[1].close()
    c = _connect(cfg)
    _local.held = (key, c)
    return c


def drop_client() -> None:
    held = getattr(_local, "held", None)
    _local.held = None
    if held:
        try:
            held[1].close()
        except OSError:
            pass


def fix_for(e: Exception, cfg: dict[str, Any]) -> str:
    """One line naming the trouble and its fix."""
    where = cfg.get("url") or cfg.get("socket") or sp.default_socket_path()
    if isinstance(e, sp.NotYourEngine):
        return f"Scratchpad: {e.message}"
    if isinstance(e, sp.EngineUnavailable):
        return (f"Scratchpad: no engine answers at {where} ({e.message}). Agent Zero keeps working "
                "without the pad and reconnects by itself; start the app or `pad serve`, or set the "
                "socket (or, in Docker, the URL) in the plugin's settings")
    if isinstance(e, sp.Forbidden) or getattr(e, "code", None) == -32003:
        return (f"Scratchpad: the engine refused the plugin ({e.message}). Check the token in the "
                "plugin's settings (`pad token create --name agent-zero --pads 'agent-zero,inbox'`), "
                "or leave it empty on the owner's own socket")
    return f"Scratchpad: {e}"


def call(cfg: dict[str, Any], what: Callable[["sp.Client"], Any]) -> Any:
    """Runs `what` on this thread's connection. Engine trouble (unreachable, a
    refused token) is said once, whoever meets it, and gives None; an error
    answer about the call itself is raised to the caller."""
    for attempt in (1, 2):
        try:
            result = what(client(cfg))
            health.ok(ENGINE)
            return result
        except sp.EngineUnavailable as e:
            drop_client()
            if attempt == 2 or isinstance(e, sp.NotYourEngine):
                health.say(ENGINE, fix_for(e, cfg))
                return None
        except sp.Forbidden as e:
            if "token" in e.message.lower() or "hello" in e.message.lower():
                drop_client()
                health.say(ENGINE, fix_for(e, cfg))
                return None
            raise
        except OSError as e:  # a timeout or a reset mid-answer: the connection is unusable
            drop_client()
            if attempt == 2:
                health.say(ENGINE, fix_for(sp.EngineUnavailable(str(e)), cfg))
                return None
    return None


def age(iso: Optional[str], now: Optional[datetime] = None) -> str:
    """"3 min ago", "2 h ago": how long ago an entry was written."""
    if not iso:
        return "?"
    try:
        t = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return "?"
    s = max(0, int(((now or datetime.now(timezone.utc)) - t).total_seconds()))
    if s < 90:
        return f"{s} s ago"
    if s < 5400:
        return f"{s // 60} min ago"
    if s < 172800:
        return f"{s // 3600} h ago"
    return f"{s // 86400} d ago"


def line(e: dict[str, Any], limit: int = 600) -> str:
    """One entry as the model reads it: id, kind, author, pad, age, then its text."""
    tags = " ".join(f"#{t}" for t in e.get("tags") or [])
    status = f" ({e['status']})" if e.get("status") else ""
    text = " ".join(str(e.get("content", "")).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    head = f"[{e['id']}] {e.get('kind', 'note')} by {e.get('author')} in {e.get('pad')}, {age(e.get('created_at'))}{status}"
    return f"{head} {tags}".rstrip() + f": {text}"
