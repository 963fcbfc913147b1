"""The chat's steps in the pad: its final answer as a `result`, and at most
one progress note per `progress_min_seconds` for a step worth telling."""

from helpers.extension import Extension

from usr.plugins.scratchpad.helpers import chat, pad, recall

QUIET = {"response", "scratchpad", "ask_person", "notify_user", "wait"}


class ScratchpadProgress(Extension):
    async def execute(self, response=None, tool_name: str = "", **kwargs):
        if not self.agent or self.agent.number != 0 or response is None:
            return
        cfg = pad.config(self.agent)
        if not cfg.get("enabled", True):
            return
        context = self.agent.context
        if tool_name == "response":
            text = str(getattr(response, "message", "") or "").strip() or "(an empty answer)"
            chat.post(context, cfg, text, kind="result")
            chat.set_state(context, cfg, "done", "answered")
            return
        tool = getattr(getattr(self.agent, "loop_data", None), "current_tool", None)
        headline = recall.headline_of(getattr(tool, "message", "") or "")
        step = f"{tool_name}: {headline}" if headline else tool_name
        chat.set_state(context, cfg, "working", step)
        if (cfg.get("progress_notes", True) and tool_name not in QUIET
                and chat.progress_due(context.id, float(cfg.get("progress_min_seconds") or 60))):
            chat.post(context, cfg, f"Step {self.agent.loop_data.iteration}: {step}")

