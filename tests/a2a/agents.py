"""Scripted A2A agents on real A2A servers, for tests/a2a.

    python agents.py FLAVOUR PORT LOG

FLAVOUR is `sdk` (the A2A project's official Python SDK, protocol 1.0),
`fasta2a` (FastA2A, the library Agent Zero's A2A server uses, with a worker
that can continue a conversation in its context), or `agent-zero` (FastA2A
exactly as Agent Zero ships it: mounted under /a2a/t-TOKEN, every message a
new task in a temporary context, the answer a message in the history).

What each agent does depends on the message it gets:
- "… fail …": working, then failed with a reason;
- "… ask …": working ("looking into it"), then input-required asking "Which
  database: staging or prod?"; the answer completes the task with an
  artifact "done: used <answer>" (on the same task for the SDK; in a new
  task of the same context for FastA2A);
- "… slow …": working for 4 s, then completed;
- "… bench …": working for 0.5–1.5 s, then completed (tests/a2a/bench.py);
- anything else: working, then completed with the artifact "echo: <text>".
Every message received is logged to LOG as a JSON line: task, context,
text, and the time (`at`); a "bench" task's completion too (`done`).
"""

import asyncio
import json
import os
import random
import sys
import time
import uuid

import uvicorn

FLAVOUR, PORT, LOG = sys.argv[1], int(sys.argv[2]), sys.argv[3]
# The token in an Agent Zero-flavoured agent's URL (A2A_AGENT_TOKEN: another,
# as when Agent Zero's login changes).
TOKEN = os.environ.get("A2A_AGENT_TOKEN", "s3cr3t-a0-token")
QUESTION = "Which database: staging or prod?"


def log(task_id, context_id, text, **more):
    with open(LOG, "a") as f:
        f.write(json.dumps({"task": task_id, "context": context_id, "text": text, "at": time.time(), **more}) + "\n")


def sdk_app():
    from a2a.server.agent_execution import AgentExecutor
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes.agent_card_routes import create_agent_card_routes
    from a2a.server.routes.jsonrpc_routes import create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
    from a2a.types import a2a_pb2 as pb
    from starlette.applications import Starlette

    def text_part(t):
        return pb.Part(text=t)

    class Scripted(AgentExecutor):
        async def execute(self, context, event_queue):
            text = context.get_user_input()
            log(context.task_id, context.context_id, text)
            up = TaskUpdater(event_queue, context.task_id, context.context_id)
            task = context.current_task
            if task is None:
                await event_queue.enqueue_event(pb.Task(
                    id=context.task_id, context_id=context.context_id,
                    status=pb.TaskStatus(state=pb.TASK_STATE_SUBMITTED),
                    history=[context.message]))
            elif task.status.state == pb.TASK_STATE_INPUT_REQUIRED:
                await up.add_artifact([text_part(f"done: used {text}")], name="result")
                await up.complete()
                return
            await up.start_work(up.new_agent_message([text_part("looking into it")]))
            await asyncio.sleep(0.3)
            if "fail" in text:
                await up.failed(up.new_agent_message([text_part("the disk is full")]))
            elif "ask" in text:
                await up.requires_input(up.new_agent_message([text_part(QUESTION)]))
            else:
                if "slow" in text:
                    await asyncio.sleep(4)
                if "bench" in text:
                    await asyncio.sleep(random.uniform(0.5, 1.5))
                said = "x" * 4_000_000 if "huge" in text else f"echo: {text}"
                await up.add_artifact([text_part(said)], name="result")
                await up.complete()
                if "bench" in text:
                    log(context.task_id, context.context_id, text, done=True)

        async def cancel(self, context, event_queue):
            pass

    card = pb.AgentCard(
        name="Scripted SDK agent", description="Echoes, asks, fails on cue.", version="1.0",
        supported_interfaces=[pb.AgentInterface(
            url=f"http://127.0.0.1:{PORT}/", protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=pb.AgentCapabilities(streaming=False),
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="echo", name="Echo", description="Says back what it got",
                              tags=["test"])],
    )
    handler = DefaultRequestHandler(agent_executor=Scripted(), task_store=InMemoryTaskStore(),
                                    agent_card=card)
    return Starlette(routes=create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url="/"))


def fasta2a_app(as_agent_zero):
    from contextlib import asynccontextmanager

    from fasta2a import FastA2A, Worker
    from fasta2a.broker import InMemoryBroker
    from fasta2a.storage import InMemoryStorage

    storage, broker = InMemoryStorage(), InMemoryBroker()

    def msg(t):
        return {"role": "agent", "parts": [{"kind": "text", "text": t}], "kind": "message",
                "message_id": str(uuid.uuid4())}

    class Scripted(Worker):
        async def run_task(self, params):
            task_id, message = params["id"], params["message"]
            context_id = params["context_id"]
            text = "\n".join(p.get("text", "") for p in message.get("parts", []) if p.get("kind") == "text")
            log(task_id, context_id, text)
            await self.storage.update_task(task_id, state="working")
            await asyncio.sleep(0.3)
            if as_agent_zero:
                # Agent Zero: a temporary context per task; the answer is a message.
                if "fail" in text:
                    raise RuntimeError("the model API key is missing")
                if "slow" in text:
                    await asyncio.sleep(4)
                await self.storage.update_task(task_id, state="completed",
                                               new_messages=[msg(f"agent zero says: {text}")])
                return
            waiting = await self.storage.load_context(context_id)
            if waiting == "asked":
                await self.storage.update_context(context_id, "answered")
                await self.storage.update_task(
                    task_id, state="completed",
                    new_artifacts=[{"artifact_id": str(uuid.uuid4()), "name": "result",
                                    "parts": [{"kind": "text", "text": f"done: used {text}"}]}])
            elif "fail" in text:
                await self.storage.update_task(task_id, state="failed",
                                               new_messages=[msg("the disk is full")])
            elif "ask" in text:
                await self.storage.update_context(context_id, "asked")
                await self.storage.update_task(task_id, state="input-required",
                                               new_messages=[msg(QUESTION)])
            else:
                if "slow" in text:
                    await asyncio.sleep(4)
                if "bench" in text:
                    await asyncio.sleep(random.uniform(0.5, 1.5))
                await self.storage.update_task(
                    task_id, state="completed",
                    new_artifacts=[{"artifact_id": str(uuid.uuid4()), "name": "result",
                                    "parts": [{"kind": "text", "text": f"echo: {text}"}]}])
                if "bench" in text:
                    log(task_id, context_id, text, done=True)

        async def cancel_task(self, params):
            await self.storage.update_task(params["id"], state="canceled")

        def build_message_history(self, history):
            return history

        def build_artifacts(self, result):
            return []

    worker = Scripted(broker=broker, storage=storage)

    @asynccontextmanager
    async def lifespan(app):
        async with app.task_manager:
            async with worker.run():
                yield

    name = "Agent Zero" if as_agent_zero else "Scripted FastA2A agent"
    app = FastA2A(storage=storage, broker=broker, name=name, lifespan=lifespan,
                  description="A scripted agent on FastA2A",
                  skills=[{"id": "general_assistance", "name": "General AI Assistant",
                           "description": "anything", "tags": ["ai"], "input_modes": ["text/plain"],
                           "output_modes": ["text/plain"]}])
    if not as_agent_zero:
        return app

    async def mounted(scope, receive, send):
        # Agent Zero's routing: /a2a/t-TOKEN[/p-PROJECT]/… with the token checked.
        if scope["type"] == "lifespan":
            return await app(scope, receive, send)
        path = scope.get("path", "")
        prefix = f"/a2a/t-{TOKEN}"
        if not path.startswith(prefix):
            await send({"type": "http.response.start", "status": 401,
                        "headers": [[b"content-type", b"text/plain"]]})
            await send({"type": "http.response.body", "body": b"Unauthorized"})
            return
        rest = path[len(prefix):] or "/"
        scope = dict(scope, path=rest, raw_path=rest.encode())
        return await app(scope, receive, send)

    return mounted


if FLAVOUR == "sdk":
    application = sdk_app()
elif FLAVOUR == "fasta2a":
    application = fasta2a_app(False)
elif FLAVOUR == "agent-zero":
    application = fasta2a_app(True)
elif FLAVOUR == "hanging":
    # Serves its card, then takes every A2A call in and never answers.
    inner = sdk_app()

    async def application(scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "POST":
            await asyncio.sleep(3600)
        return await inner(scope, receive, send)
else:
    sys.exit(f"unknown flavour {FLAVOUR}")

uvicorn.run(application, host="127.0.0.1", port=PORT, log_level="warning")
