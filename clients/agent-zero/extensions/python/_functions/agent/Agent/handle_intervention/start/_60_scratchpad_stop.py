"""Stop from the pad: the loop halts at its next step (Agent Zero checks for
interventions before and after every model call and tool). A Stop on the
whole chat ends it; a Stop on a subordinate's task ends that subordinate
and what it delegated (helpers/delegation.py), and its superior goes on."""

from helpers.errors import HandledException
from helpers.extension import Extension

from usr.plugins.scratchpad.helpers import chat, delegation, pad


class ScratchpadStop(Extension):
    async def execute(self, data: dict = {}, **kwargs):
        if not self.agent:
            return
        context = self.agent.context
        below = delegation.stop_due(self.agent)
        if below is not None:
            data["exception"] = HandledException(below)
            return
        who = chat.stops.pop(context.id, None)
        if who is None:
            return
        cfg = pad.config(self.agent)
        step = getattr(getattr(self.agent, "loop_data", None), "iteration", 0)
        chat.set_state(context, cfg, "stopped", f"stopped by {who} at step {step}")
        chat.post(context, cfg, f"Stopped by {who} at step {step}; nothing more will run in this chat "
                                "until someone writes to it again.")
        data["exception"] = HandledException(Exception(f"stopped from the scratchpad by {who}"))
