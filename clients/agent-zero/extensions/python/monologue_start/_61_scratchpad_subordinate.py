"""A subordinate's monologue starts: the task its superior's call wrote is its own."""

from agent import LoopData
from helpers.extension import Extension

from usr.plugins.scratchpad.helpers import delegation


class ScratchpadSubordinate(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        if self.agent and self.agent.number > 0:
            delegation.begin(self.agent)
