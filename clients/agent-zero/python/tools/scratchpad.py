"""Scratchpad as a native Agent Zero tool (an alternative to `pad mcp`).

Install: copy this file to Agent Zero's `python/tools/scratchpad.py`, the
Python client (`clients/python/scratchpad.py` of this repository) to
`python/helpers/scratchpad_client.py`, and
`prompts/agent.system.tool.scratchpad.md` to Agent Zero's prompts folder.
The engine's socket must be reachable (see docs/agent-zero.md); set
PAD_SOCKET, PAD_AUTHOR and PAD_PAD in Agent Zero's environment as needed.
"""

import os

try:  # inside Agent Zero
    from python.helpers.tool import Response, Tool
    from python.helpers import scratchpad_client as pad_client
except ImportError:  # the tests load the client from this repository
    from python.helpers.tool import Response, Tool  # type: ignore  # noqa: F401
    import scratchpad as pad_client  # type: ignore

ACTIONS = ("add", "ask", "search", "list", "read", "update", "delete", "tags", "inbox")


def _count(n, one, many):
    """"1 note", "2 notes": the count and the word that agrees with it."""
    return f"{n} {one if n == 1 else many}"


def _line(e):
    tags = " ".join(f"#{t}" for t in e.get("tags", []))
    status = f" ({e['status']})" if e.get("status") else ""
    return f"[{e['id']}] {e['kind']} by {e['author']} in {e['pad']}{status} {tags}".rstrip() + "\n" + e["content"]


def run_action(client, args, default_pad):
    """Performs one scratchpad action; returns the text for the agent."""
    action = (args.get("action") or "").strip().lower()
    pad = args.get("pad") or default_pad
    if action not in ACTIONS:
        return f"Unknown action '{action}'. Use one of: {', '.join(ACTIONS)}."
    try:
        if action == "add":
            fields = {k: args[k] for k in ("kind", "reply_to") if args.get(k)}
            e = client.add(args.get("content", ""), pad=pad, tags=args.get("tags") or None, **fields)
            return f"Saved note {e['id']} to pad '{e['pad']}'."
        if action == "ask":
            r = client.ask(args.get("question") or args.get("content", ""), pad=pad,
                           choices=args.get("choices") or None,
                           wait_seconds=int(60 if args.get("wait_seconds") is None else args["wait_seconds"]))
            q, a = r["question"], r["answer"]
            if a is None:
                return (f"No answer yet after {round(r['waited_seconds'])} s; the question is {q['id']}. "
                        "The answer will appear under `inbox` when the person replies. "
                        "Do not go ahead with what you asked about until then.")
            return f"Answer from {a['author']}: {a['content'].strip()}\n(question {q['id']}, reply {a['id']})"
        if action == "search":
            r = client.search(args.get("query", ""), pad=None if pad == "*" else pad,
                              tags=args.get("tags") or None, mode=args.get("mode"),
                              limit=int(args.get("limit") or 10))
            if not r["hits"]:
                return f"No notes match '{args.get('query', '')}'."
            return f"{_count(len(r['hits']), 'hit', 'hits')} ({r['mode']} search):\n\n" + "\n\n".join(
                _line(h["entry"]) for h in r["hits"])
        if action == "list":
            page = client.list(pad, tags=args.get("tags") or None, kind=args.get("kind"),
                               limit=int(args.get("limit") or 20))
            if not page["entries"]:
                return f"Pad '{pad}' has no matching notes."
            return f"{_count(len(page['entries']), 'note', 'notes')} in '{pad}', newest first:\n\n" + "\n\n".join(
                _line(e) for e in page["entries"])
        if action == "read":
            return client.export_pad(pad)
        if action == "update":
            changes = {k: args[k] for k in ("content", "tags", "status") if k in args}
            if not changes:
                return "Nothing to change: give content, tags or status along with the id."
            e = client.update(args.get("id", ""), **changes)
            return f"Updated (version {e['version']}):\n{_line(e)}"
        if action == "delete":
            return f"Deleted {client.delete(args.get('id', ''))['id']}."
        if action == "tags":
            tags = client.tags(pad)
            return ", ".join(f"#{t['tag']} ({t['count']})" for t in tags) or f"No tags in '{pad}' yet."
        if action == "inbox":
            r = client.call("inbox")
            parts = [f"needs eyes: {_line(e)}" for e in r["needs_eyes"]]
            parts += [f"reply: {_line(e)}" for e in r["replies"]]
            return "\n\n".join(parts) or "Nothing new."
    except pad_client.ScratchpadError as e:
        return f"Scratchpad refused the {action}: {e.message}"
    return ""  # unreachable


class Scratchpad(Tool):
    async def execute(self, **kwargs):
        args = dict(self.args or {}, **kwargs)
        author = os.environ.get("PAD_AUTHOR") or getattr(self.agent, "agent_name", None) or "agent-zero"
        try:
            with pad_client.Client(author=author.lower().replace(" ", "-"), client="agent-zero") as client:
                text = run_action(client, args, os.environ.get("PAD_PAD", "agent-zero"))
        except pad_client.EngineUnavailable as e:
            text = f"The scratchpad is not reachable: {e.message}"
        return Response(message=text, break_loop=False)
