"""Puts the pad into the prompt: what waits for this agent, every step, and
the notes that match the task, every `recall_interval` steps — unless the
settings leave recalling notes to Agent Zero's own memory (`recall_by`)."""

from agent import LoopData
from helpers.extension import Extension

from usr.plugins.scratchpad.helpers import chat, pad, recall, watcher

WAITING = "_scratchpad_waiting"
FOUND = "_scratchpad_found"


class ScratchpadRecall(Extension):
    async def execute(self, loop_data: LoopData = LoopData(), **kwargs):
        if not self.agent:
            return
        cfg = pad.config(self.agent)
        if not cfg.get("enabled", True) or not cfg.get("recall_enabled", True):
            return
        waiting = self.agent.get_data(WAITING) or []
        if self.agent.number == 0:
            new = watcher.take_pending()
            if new:
                waiting = (waiting + new)[-int(cfg.get("recall_max_waiting") or 10):]
                self.agent.set_data(WAITING, waiting)
        interval = max(1, int(cfg.get("recall_interval") or 1))
        found = self.agent.get_data(FOUND) or []
        by = recall.recaller(cfg, self.agent)
        if by == "agent-zero":
            found = []
        elif loop_data.iteration % interval == 0:
            user = chat.words_of(loop_data.user_message) if loop_data.user_message else ""
            q = recall.query(user, loop_data.last_response)
            found = recall.notes(cfg, q, self.agent.context.id)
            self.agent.set_data(FOUND, found)
        text = recall.render(found, waiting, int(cfg.get("recall_budget_chars") or 3000))
        if text:
            loop_data.extras_persistent["scratchpad"] = text
        else:
            loop_data.extras_persistent.pop("scratchpad", None)
