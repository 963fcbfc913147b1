"""A Stop the person gave on a subordinate's task ends that subordinate (and
what it delegated); its superior takes the stop as its call's answer and
goes on. Runs before Agent Zero's own handlers (_50, _90), which would end
the superior too."""

from helpers.extension import Extension

from usr.plugins.scratchpad.helpers import delegation


class ScratchpadStopped(Extension):
    async def execute(self, data: dict = {}, **kwargs):
        error = data.get("exception")
        if not self.agent or not isinstance(error, BaseException):
            return
        stop = delegation.stopped_here(self.agent, error)
        if stop is None:
            return
        self.agent.hist_add_tool_result(
            "call_subordinate",
            f"Your subordinate A{stop.level} was stopped by {stop.who} from the scratchpad (task "
            f"{stop.task}); what it did is in that task. Do not delegate the same work "
            "again unless the person asks; carry on with the rest, or answer with what you have.")
        data["exception"] = None
