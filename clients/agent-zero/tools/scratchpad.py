"""The pad's note tools for Agent Zero: one tool, `scratchpad`, with an
`action` (its prompt: prompts/agent.system.tool.scratchpad.md)."""

import asyncio

from helpers.tool import Response, Tool

from usr.plugins.scratchpad.helpers import chat, pad
from usr.plugins.scratchpad.helpers import scratchpad_client as sp

ACTIONS = ("add", "reply", "search", "list", "read", "thread", "update", "delete", "inbox")


def _count(n, one, many):
    return f"{n} {one if n == 1 else many}"


def run_action(c, args, cfg, thread_pad=None, key=None):
    """Performs one action on connection `c`; returns the text for the model.
    `key`: the idempotency key of the action's write, made once per tool call
    so a retry after a lost connection writes nothing twice."""
    action = str(args.get("action") or "").strip().lower()
    pad_name = str(args.get("pad") or cfg["pad"]).strip()
    tags = args.get("tags") or None
    if isinstance(tags, str):
        tags = [t.strip() for t in tags.replace(",", " ").split() if t.strip()]
    if action == "add":
        fields = {k: args[k] for k in ("kind", "reply_to") if args.get(k)}
        if args.get("to"):
            to = args["to"]
            fields["to"] = [to] if isinstance(to, str) else list(to)
        if key:
            fields["idempotency_key"] = key
        e = c.add(str(args.get("content", "")), pad=pad_name, tags=tags, **fields)
        return f"Saved note {e['id']} to pad '{e['pad']}'."
    if action == "reply":
        if not args.get("id"):
            return "Give `id`: the note to reply to (its id from a search, the list or the prompt)."
        keyed = {"idempotency_key": key} if key else {}
        e = c.reply(str(args["id"]), str(args.get("content", "")), kind=args.get("kind") or None, **keyed)
        return f"Replied with note {e['id']} in pad '{e['pad']}'; its author will see it."
    if action == "search":
        where = args.get("pad")
        r = c.search(str(args.get("query", "")), pad=None if where in (None, "", "*") else where,
                     tags=tags, mode=args.get("mode") or None, limit=int(args.get("limit") or 10))
        if not r["hits"]:
            return f"No notes match '{args.get('query', '')}'."
        # A chat's root and status notes (what a chat is) under what anyone knows.
        hits = sorted(r["hits"], key=lambda h: chat.is_bookkeeping(h["entry"], cfg))
        return f"{_count(len(hits), 'hit', 'hits')} ({r['mode']} search), best first:\n" + "\n".join(
            pad.line(h["entry"]) for h in hits)
    if action == "list":
        page = c.list(pad_name, tags=tags, kind=args.get("kind") or None, limit=int(args.get("limit") or 20))
        if not page["entries"]:
            return f"Pad '{pad_name}' has no matching notes."
        return f"{_count(len(page['entries']), 'note', 'notes')} in '{pad_name}', newest first:\n" + "\n".join(
            pad.line(e) for e in page["entries"])
    if action == "read":
        return c.export_pad(pad_name, budget=int(args.get("max_chars") or 8000))
    if action == "thread":
        if not args.get("id"):
            return "Give `id`: a note of the thread to read."
        t = c.thread(str(args["id"]))
        return "\n".join([pad.line(t["entry"])] + ["  " + pad.line(e) for e in t["replies"]])
    if action == "update":
        changes = {k: args[k] for k in ("content", "status", "kind") if k in args}
        if tags is not None:
            changes["tags"] = tags
        if not args.get("id") or not changes:
            return "Give `id` and what to change: `content`, `tags`, `status` or `kind`."
        e = c.update(str(args["id"]), **changes)
        return f"Updated (version {e['version']}): {pad.line(e)}"
    if action == "delete":
        if not args.get("id"):
            return "Give `id`: the note to delete (it goes to the trash; the person can restore it)."
        return f"Deleted {c.delete(str(args['id']))['id']} (in the trash; restorable)."
    if action == "inbox":
        r = c.inbox(peek=True)
        parts = [f"addressed to you: {pad.line(e)}" for e in r.get("addressed", [])]
        parts += [f"needs eyes: {pad.line(e)}" for e in r["needs_eyes"]]
        parts += [f"reply: {pad.line(e)}" for e in r["replies"]]
        return "\n".join(parts) or "Nothing new."
    return f"Unknown action '{action}'. Use one of: {', '.join(ACTIONS)}."


class Scratchpad(Tool):
    async def execute(self, **kwargs):
        args = dict(self.args or {}, **kwargs)
        cfg = pad.config(self.agent)
        action = str(args.get("action") or "").strip().lower()
        key = sp.new_key()  # one per call: pad.call's retry reuses it

        def work(c):
            try:
                return run_action(c, args, cfg, key=key)
            except sp.ScratchpadError as e:
                if isinstance(e, sp.EngineUnavailable):
                    raise
                return f"Scratchpad refused the {action or 'call'}: {e.message}"

        text = await asyncio.to_thread(pad.call, cfg, work)
        if text is None:
            text = ("The scratchpad is not reachable now; carry on without it "
                    f"({'; '.join(pad.health.status()['problems']) or 'no engine'}).")
        return Response(message=text, break_loop=False)
