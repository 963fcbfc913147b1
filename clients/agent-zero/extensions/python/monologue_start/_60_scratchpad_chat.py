"""A chat's first step opens its pad thread; every later start says it works again."""

from agent import LoopData
from helpers.extension import Extension

from usr.plugins.scratchpad.helpers import chat, pad, watcher


class ScratchpadChat(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        if not self.agent or self.agent.number != 0:
            return
        cfg = pad.config(self.agent)
        if not cfg.get("enabled", True):
            return
        watcher.ensure_running()
        context = self.agent.context
        # A stop that came while the chat was starting stays: it halts the
        # chat at its first step (the stop extension takes it; the chat's
        # end drops one that was never taken).
        st = chat.state_of(context)
        if st.get("status"):
            chat.set_state(context, cfg, "working", "continuing")
            return
        chat.ensure_thread(self.agent, cfg, chat.words_of(loop_data.user_message) if loop_data.user_message else "")
