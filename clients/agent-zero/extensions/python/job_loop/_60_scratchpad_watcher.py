"""Keeps the pad's watcher running in Agent Zero's web server, so a note
addressed to Agent Zero starts a chat even when no chat is open."""

from helpers.extension import Extension

from usr.plugins.scratchpad.helpers import watcher


class ScratchpadWatcher(Extension):
    async def execute(self, **kwargs):
        watcher.ensure_running()
