"""The settings page's "Test connection": reaches the engine with the
settings being edited and says what is wrong in one line."""

from helpers.api import ApiHandler, Request

from usr.plugins.scratchpad.helpers import pad
from usr.plugins.scratchpad.helpers import scratchpad_client as sp


class Status(ApiHandler):
    async def process(self, input: dict, request: Request) -> dict:
        cfg = dict(pad.config())
        cfg.update({k: v for k, v in (input.get("config") or {}).items() if k in pad.DEFAULTS})
        cfg = {**cfg, "author": str(cfg.get("author") or "agent-zero").lower()}
        try:
            with pad._connect(cfg) as c:
                stats = c.call("stats")
                return {"ok": True, "line": f"Connected as {c.server.get('author')} to the engine "
                        f"(version {stats.get('version')}, {stats.get('entries')} notes); "
                        f"access: {c.server.get('access')}", "health": pad.health.status()}
        except sp.ScratchpadError as e:
            return {"ok": False, "line": pad.fix_for(e, cfg), "health": pad.health.status()}
