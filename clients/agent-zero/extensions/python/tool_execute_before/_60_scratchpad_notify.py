"""Agent Zero's `notify_user` also reaches the person's desktop, through the pad."""

from helpers.extension import Extension

from usr.plugins.scratchpad.helpers import chat, pad
from usr.plugins.scratchpad.helpers import scratchpad_client as sp


class ScratchpadNotify(Extension):
    async def execute(self, tool_args: dict | None = None, tool_name: str = "", **kwargs):
        if not self.agent or tool_name != "notify_user":
            return
        cfg = pad.config(self.agent)
        if not cfg.get("enabled", True) or not cfg.get("notify_through_pad", True):
            return
        args = tool_args or {}
        title, message = str(args.get("title") or "").strip(), str(args.get("message") or "").strip()
        if not message:
            return
        text = f"{title}: {message}" if title else message
        if args.get("detail"):
            text += f"\n\n{args['detail']}"
        if chat.post(self.agent.context, cfg, text, tags=["needs_eyes"]) is None:
            key = sp.new_key()  # pad.call's retry reuses it
            pad.call(cfg, lambda c: c.add(text, pad="inbox", tags=["needs_eyes"], idempotency_key=key))
