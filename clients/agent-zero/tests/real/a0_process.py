"""Agent Zero's real loop in a process of its own, for the test that kills it
mid-delegation (test_delegation.py):

    python a0_process.py start DIR     # a copy of A0_DIR with the plugin, a chat that delegates; never ends
    python a0_process.py restart DIR   # that copy started again, as its web server starts

`start` prepares DIR as a0_setup.py does, holds delegations under an
A0_LEASE-second lease, and runs a chat whose subordinate takes two steps
and then waits on a model call that never answers (it prints "waiting"
then). `restart` starts the same copy as `run_ui.py`'s `init_a0` does — its
saved chats loaded, its job loop (which starts the plugin's watcher) —
watches for A0_WATCH seconds and prints one JSON line: the model calls made
and the chats loaded and running. The engine is $PAD_SOCKET; in a container
(PAD_ENGINE_URL and PAD_ENGINE_TOKEN, as in conftest.py) the plugin reaches
it over HTTP."""

import json
import os
import pathlib
import sys
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[2] / "python" / "tests"), str(HERE)]

MESSAGE = "reindex the search cluster, shard by shard"


def start(into: pathlib.Path) -> None:
    from a0_setup import prepare, use_models
    from model_standin import ModelStandin
    from pad_engine import pad_binary

    settings = None
    if os.environ.get("PAD_ENGINE_URL"):
        token = into / "token"
        token.write_text(os.environ["PAD_ENGINE_TOKEN"])
        settings = (os.environ["PAD_ENGINE_URL"], token)
    root = prepare(os.environ["A0_DIR"], into, pad_binary(), settings)
    model = ModelStandin()
    use_models(root, model.api_base)
    from usr.plugins.scratchpad.helpers import pad

    config = root / "usr" / "plugins" / "scratchpad" / "config.json"
    saved = json.loads(config.read_text()) if config.exists() else {}
    config.write_text(json.dumps({**pad.DEFAULTS, **saved, "delegation_lease_seconds": int(os.environ["A0_LEASE"])}))

    def hang():
        print("waiting", flush=True)
        threading.Event().wait()

    model.script[:] = [("call_subordinate", {"message": MESSAGE}),
                       ("scratchpad", {"action": "search", "query": "search cluster shards"}),
                       ("scratchpad", {"action": "add", "content": "shards 1-3 of the search cluster reindexed"}),
                       hang]
    from agent import AgentContext, UserMessage
    from initialize import initialize_agent

    context = AgentContext(initialize_agent(), name="killed mid-delegation")
    context.communicate(UserMessage(message="Reindex the search cluster; hand it to a subordinate."))
    print(f"chat {context.id}", flush=True)
    threading.Event().wait()


def restart(into: pathlib.Path) -> None:
    from a0_setup import enter, use_models
    from model_standin import ModelStandin

    root = into / "agent-zero"
    enter(root)
    model = ModelStandin()
    use_models(root, model.api_base)
    import initialize
    from agent import AgentContext

    initialize.initialize_chats().result_sync()
    initialize.initialize_job_loop()
    time.sleep(float(os.environ.get("A0_WATCH", "8")))
    contexts = AgentContext.all()
    print("RESTART " + json.dumps({"model_calls": len(model.requests), "chats": [c.id for c in contexts],
                                   "running": [c.id for c in contexts if c.is_running()]}), flush=True)
    os._exit(0)  # Agent Zero's job loop and the plugin's threads run forever


if __name__ == "__main__":
    {"start": start, "restart": restart}[sys.argv[1]](pathlib.Path(sys.argv[2]))
