"""A chat that ends without an answer (an error, a stop) says so in its status."""

from helpers.extension import Extension

from usr.plugins.scratchpad.helpers import chat, pad


class ScratchpadEnd(Extension):
    async def execute(self, **kwargs):
        if not self.agent or self.agent.number != 0:
            return
        cfg = pad.config(self.agent)
        if not cfg.get("enabled", True):
            return
        context = self.agent.context
        chat.stops.pop(context.id, None)
        self.agent.set_data("_scratchpad_waiting", [])
        st = chat.state_of(context)
        if st.get("status") and st.get("last_state") not in ("done", "stopped"):
            chat.set_state(context, cfg, "idle", "the chat ended without an answer")
