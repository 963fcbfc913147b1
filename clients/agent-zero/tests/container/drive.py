"""Runs inside the test container (test_container.py), as Agent Zero's image
runs: root, in /a0 (here the stand-ins of tests/standins), the plugin in the
`usr/` volume, reaching the engine only at the URL its settings name. Drives
one chat through the stand-in loop (tests/loop.py) and prints what the
model would have seen, as one JSON line after "OUTCOME "."""

import asyncio
import json
import sys

sys.path[:0] = ["/a0", "/tests"]

from agent import AgentContext  # noqa: E402
from helpers import print_style  # noqa: E402
from initialize import initialize_agent  # noqa: E402
from loop import Loop  # noqa: E402


async def work(context, loop):
    waited = []

    async def between(i):
        if i == 2 and not waited:  # the person writes in the chat's thread meanwhile: wait for it
            waited.append(i)  # (the step runs again once the loop has taken it in)
            for _ in range(2400):  # up to 2 min, beside a busy CPU (the plugin polls every 2 s)
                if context.agent0.intervention:
                    break
                await asyncio.sleep(0.05)

    steps = [("scratchpad", {"action": "search", "query": "staging database host"}),
             ("ask_person", {"question": "Drop the table sessions_old?", "choices": ["approve", "deny"]}),
             ("code_execution_tool", {"code": "make deploy"}),
             ("scratchpad", {"action": "search", "query": "launch codes"}),
             ("response", {"text": "Deployed to db-staging-2.internal."})]
    return await loop.run(context, "Deploy the service to staging; which database host is it?", steps, between)


async def unreachable(context, loop):
    steps = [("scratchpad", {"action": "search", "query": "anything"}), ("code_execution_tool", {}),
             ("response", {"text": "finished without the pad"})]
    return await loop.run(context, "do it without the pad", steps)


async def delegate(context, loop):
    """A superior delegating twice, once nested (its subordinate delegates in
    turn), then another chat whose subordinate fails."""
    steps = [("call_subordinate", {"message": "survey the error logs of last night"}),
             ("code_execution_tool", {"code": "grep ERROR /var/log/app.log"}),
             ("call_subordinate", {"message": "count the errors per service"}),
             ("response", {"text": "api 9, worker 3"}),
             ("response", {"text": "12 errors last night: api 9, worker 3"}),
             ("call_subordinate", {"message": "write the summary for the person", "reset": "true"}),
             ("response", {"text": "summary written"}),
             ("response", {"text": "all done"})]
    done = await loop.run(context, "what broke last night?", steps)
    failing = AgentContext(initialize_agent(), name="failing chat")
    failed = await Loop(loop.root).run(failing, "renew the certificates", [
        ("call_subordinate", {"message": "rotate the staging certificates"}),
        ("fail", {"error": "certbot: rate limit reached"}),
        ("response", {"text": "never"})])
    return f"{done}; the other chat: {type(failed).__name__}"


def main(scenario):
    from usr.plugins.scratchpad.helpers import chat, watcher

    context = AgentContext(initialize_agent(), name="container chat")
    loop = Loop(__import__("pathlib").Path("/a0"))
    try:
        result = asyncio.run({"work": work, "unreachable": unreachable, "delegate": delegate}[scenario](context, loop))
        state = chat.state_of(context) or {}
    finally:
        watcher.stop()
    print("OUTCOME " + json.dumps({
        "result": str(result), "prompts": [p.get("scratchpad", "") for p in loop.prompts],
        "history": loop.history, "responses": loop.responses, "errors": [line for kind, line in print_style.lines if kind == "error"],
        "thread": state.get("thread"), "status": state.get("status"), "chat": context.id}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
