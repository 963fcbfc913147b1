"""A subordinate's monologue ended: its answer completes its task, an error
(an exception, a Stop) fails it."""

from helpers.extension import Extension

from usr.plugins.scratchpad.helpers import delegation


class ScratchpadOutcome(Extension):
    async def execute(self, data: dict = {}, **kwargs):
        if not self.agent or self.agent.number == 0:
            return
        error = data.get("exception")
        error = error if isinstance(error, BaseException) else None
        delegation.end(self.agent, None if error else data.get("result"), error)
