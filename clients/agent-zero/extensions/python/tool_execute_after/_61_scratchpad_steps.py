"""A subordinate's steps: its task's `resume` holds the latest, with a heartbeat."""

from helpers.extension import Extension

from usr.plugins.scratchpad.helpers import delegation, pad, recall


class ScratchpadSteps(Extension):
    async def execute(self, response=None, tool_name: str = "", **kwargs):
        if not self.agent or self.agent.number == 0 or tool_name == "response":
            return
        if not self.agent.get_data(delegation.DATA_TASK):
            return
        cfg = pad.config(self.agent)
        tool = getattr(getattr(self.agent, "loop_data", None), "current_tool", None)
        headline = recall.headline_of(getattr(tool, "message", "") or "")
        step = getattr(getattr(self.agent, "loop_data", None), "iteration", 0) + 1
        delegation.step(self.agent, cfg, f"Step {step}: {tool_name}" + (f": {headline}" if headline else ""))
