"""`ask_person`: asks the person through the pad and returns their answer to
the loop — given in the app, on the desktop notification or in the quick box."""

import asyncio
import time

from helpers.tool import Response, Tool

from usr.plugins.scratchpad.helpers import chat, delegation, pad
from usr.plugins.scratchpad.helpers import scratchpad_client as sp

CHUNK = 15  # seconds per wait on the engine: Stop is checked between waits


class AskPerson(Tool):
    async def execute(self, **kwargs):
        args = dict(self.args or {}, **kwargs)
        question = str(args.get("question") or args.get("content") or "").strip()
        if not question:
            return Response(message="Give `question`: what to ask the person, in one or two sentences.",
                            break_loop=False)
        choices = args.get("choices") or None
        if isinstance(choices, str):
            choices = [c.strip() for c in choices.split(",") if c.strip()]
        cfg = pad.config(self.agent)
        context = self.agent.context
        fields = {"kind": "question", "tags": ["needs_eyes"], "choices": choices}
        # A subordinate asks in its task's thread: the person sees which task waits on them.
        task = delegation.task_of(self.agent)
        q = chat.post(context, cfg, question, under=task, **fields)
        if q is not None and task and q.get("reply_to") == task:
            delegation.note_question(q["id"], task)
        if q is None:  # no chat thread (the engine was down when the chat began)
            key = sp.new_key()  # pad.call's retry reuses it
            q = await asyncio.to_thread(pad.call, cfg, lambda c: c.add(question, pad="inbox", idempotency_key=key,
                                                                       **fields))
        if q is None:
            return Response(message="The scratchpad is not reachable, so the person cannot be asked there; "
                            "ask in your answer instead.", break_loop=False)
        chat.waited.add(q["id"])
        chat.set_state(context, cfg, "waiting_for_you", question)
        deadline = time.monotonic() + float(args.get("wait_seconds") or cfg.get("ask_wait_seconds") or 300)
        answer = None
        while answer is None and time.monotonic() < deadline:
            if context.id in chat.stops:
                break
            wait = int(max(1, min(CHUNK, deadline - time.monotonic())))
            r = await asyncio.to_thread(pad.call, cfg, lambda c: c.wait_for_answer(q["id"], wait))
            if r is None:
                await asyncio.sleep(1)
                continue
            answer = r.get("answer")
        if answer is None:
            chat.waited.discard(q["id"])  # a late answer reaches the chat (a subordinate's: its task) as a message
            chat.set_state(context, cfg, "working", "asked; no answer yet")
            return Response(message=f"No answer yet to question {q['id']}. The answer will reach you in this "
                            "chat when the person gives it; do not do what you asked about until then.",
                            break_loop=False)
        chat.mark_taken(context, cfg, q, answer)
        chat.set_state(context, cfg, "working", "answered by " + str(answer.get("author")))
        return Response(message=f"{answer.get('author')} answered: {str(answer.get('content', '')).strip()}",
                        break_loop=False)

