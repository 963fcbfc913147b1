"""A chat run by the plugin in the stand-in loop until someone stops it from
the pad, for the app's end-to-end tests (ui/e2e/agent_zero.e2e.mjs):

    python standin_chat.py ROOT_DIR "the user's message"

ROOT_DIR becomes a stand-in Agent Zero (tests/standins, the plugin put there
by `pad agent-zero install`; PAD_BIN names `pad`). The engine is $PAD_SOCKET.
Each step takes half a second; the script prints the chat's thread id once
it exists, and "halted" or "finished" at the end. STANDIN_NOTIFY=TEXT makes
its first step a notify_user with that text. STANDIN_DELEGATE=1 makes its
first step a call_subordinate ("<message>: delegated"), so the long steps
are the subordinate's (its task in the pad); STANDIN_LEASE=N holds that
task under an N-second lease."""

import asyncio
import os
import pathlib
import shutil
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def main():
    root = pathlib.Path(sys.argv[1])
    shutil.copytree(HERE / "standins", root, dirs_exist_ok=True)
    subprocess.run([os.environ.get("PAD_BIN", "pad"), "agent-zero", "install", str(root)], check=True,
                   capture_output=True)
    sys.path[:0] = [str(root), str(HERE)]
    if os.environ.get("STANDIN_LEASE"):
        import json

        from usr.plugins.scratchpad.helpers import pad

        config = root / "usr" / "plugins" / "scratchpad" / "config.json"
        config.write_text(json.dumps({**pad.DEFAULTS, "delegation_lease_seconds": int(os.environ["STANDIN_LEASE"])}))
    from agent import AgentContext
    from helpers.errors import HandledException
    from initialize import initialize_agent
    from loop import Loop
    from usr.plugins.scratchpad.helpers import chat, watcher

    context = AgentContext(initialize_agent(), name="e2e chat")

    async def between(i):
        if i == 0:
            print(chat.state_of(context)["thread"], flush=True)
        await asyncio.sleep(0.5)

    steps = [("code_execution_tool", {"code": f"make step{i}"}) for i in range(240)] + [("response", {"text": "ok"})]
    if os.environ.get("STANDIN_DELEGATE"):
        steps.insert(0, ("call_subordinate", {"message": f"{sys.argv[2]}: delegated"}))
    if os.environ.get("STANDIN_NOTIFY"):  # a notify_user first: a desktop notification of the chat
        steps.insert(0, ("notify_user", {"title": "Release", "message": os.environ["STANDIN_NOTIFY"]}))
    result = asyncio.run(Loop(root).run(context, sys.argv[2], steps, between))
    print("halted" if isinstance(result, HandledException) else "finished", flush=True)
    watcher.stop()


if __name__ == "__main__":
    main()
