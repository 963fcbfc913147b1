"""A superior's `call_subordinate`: the delegation becomes a task in the
chat's pad, held by the subordinate (helpers/delegation.py)."""

from helpers.extension import Extension

from usr.plugins.scratchpad.helpers import delegation, pad


class ScratchpadDelegate(Extension):
    async def execute(self, tool_args: dict | None = None, tool_name: str = "", **kwargs):
        if not self.agent or tool_name != "call_subordinate":
            return
        cfg = pad.config(self.agent)
        if delegation.enabled(cfg):
            delegation.delegate(self.agent, cfg, str((tool_args or {}).get("message") or ""))
