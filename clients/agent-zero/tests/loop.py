"""A stand-in of Agent Zero's message loop (agent.py `Agent.monologue`,
`process_tools`, `handle_intervention`), calling the plugin's extensions at
the same points in the same order, with a scripted model: each step is the
tool call the model "answers" with. tests/real runs the real loop."""

import asyncio
import importlib.util
import json
import pathlib

from agent import Agent, AgentContext, LoopData
from helpers.errors import HandledException, InterventionException
from helpers.tool import Response, Tool


class Message:
    """Agent Zero's history message of the user's words, as agent.py
    `hist_add_user_message` makes it (prompts/fw.user_message.md)."""

    def __init__(self, text):
        self.content = {"user_message": text}

    def output_text(self, human_label="user", ai_label="ai"):
        return f"{human_label}: {json.dumps(self.content)}"


def extensions(root: pathlib.Path, point: str):
    classes = []
    for plugin in sorted((root / "usr" / "plugins").iterdir()):
        folder = plugin / "extensions" / "python" / point
        for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
            spec = importlib.util.spec_from_file_location(f"ext_{plugin.name}_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            classes += [v for v in vars(module).values()
                        if isinstance(v, type) and v.__module__ == module.__name__ and hasattr(v, "execute")]
    return classes


def plugin_tool(root: pathlib.Path, name: str):
    path = root / "usr" / "plugins" / "scratchpad" / "tools" / f"{name}.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location(f"tool_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return next(v for v in vars(module).values()
                if isinstance(v, type) and issubclass(v, Tool) and v is not Tool)


class Answer(Tool):  # Agent Zero's `response` tool: ends the monologue
    async def execute(self, **kwargs):
        return Response(message=self.args.get("text", ""), break_loop=True)


class Echo(Tool):  # any other tool of Agent Zero's
    async def execute(self, **kwargs):
        return Response(message=f"ran {self.name}", break_loop=False)


class Loop:
    def __init__(self, root):
        self.root = root
        self.prompts = []  # the extras of each step, as the model would see them
        self.history = []  # interventions the loop took in
        self.responses = []  # what each tool answered, as the model reads it next
        self.asked = []  # which agent (its number) each step's model call was for

    async def call(self, point, agent, **kwargs):
        for cls in extensions(self.root, point):
            result = cls(agent=agent).execute(**kwargs)
            if asyncio.iscoroutine(result):
                await result

    async def handle_intervention(self, agent):
        data = {"args": (agent,), "kwargs": {}, "result": None, "exception": None}
        await self.call("_functions/agent/Agent/handle_intervention/start", agent, data=data)
        if data["exception"]:
            raise data["exception"]
        while agent.context.paused:
            await asyncio.sleep(0.02)
        if agent.intervention:
            msg, agent.intervention = agent.intervention, None
            self.history.append(msg.message)
            raise InterventionException(msg)

    async def run(self, context: AgentContext, message: str, steps, between=None):
        """Runs a chat's monologue. `steps`: (tool_name, tool_args) answers of the model, in
        order, whichever agent asks (a `call_subordinate` runs the subordinate's monologue on
        the steps that follow, as agent.py and tools/call_subordinate.py do); `between(i)`
        runs before step i's model call (an await point)."""
        self.steps, self.between, self.taken = list(steps), between, 0
        context.task = True
        try:
            return await self.monologue(context.agent0, message)
        except HandledException as e:
            return e
        finally:
            context.task = None

    async def monologue(self, agent, message: str):
        """Agent.monologue with its `_functions/agent/Agent/monologue` end point: the
        result or the exception it ends with."""
        data = {"args": (agent,), "kwargs": {}, "result": None, "exception": None}
        try:
            data["result"] = await self.message_loop(agent, message)
        except Exception as e:
            data["exception"] = e
        await self.call("_functions/agent/Agent/monologue/end", agent, data=data)
        if data["exception"]:
            raise data["exception"]
        return data["result"]

    async def handle_exception(self, agent, error):
        """Agent.handle_exception: the plugins' end extensions first, then Agent Zero's own
        (an intervention goes on, anything else ends the monologue as a HandledException)."""
        data = {"args": (agent, "message_loop", error), "kwargs": {}, "result": None, "exception": error}
        await self.call("_functions/agent/Agent/handle_exception/end", agent, data=data)
        if data["exception"] is None or isinstance(data["exception"], InterventionException):
            return
        raise data["exception"] if isinstance(data["exception"], HandledException) else HandledException(error)

    async def message_loop(self, agent, message: str):
        agent.loop_data = LoopData(user_message=Message(message))
        result = None
        try:
            await self.call("monologue_start", agent, loop_data=agent.loop_data)
            while self.taken < len(self.steps):
                agent.loop_data.iteration += 1
                try:
                    await self.call("message_loop_start", agent, loop_data=agent.loop_data)
                    await self.handle_intervention(agent)
                    await self.call("message_loop_prompts_after", agent, loop_data=agent.loop_data)
                    self.prompts.append(dict(agent.loop_data.extras_persistent))
                    self.asked.append(agent.number)
                    if self.between:
                        await self.between(self.taken)
                    await self.handle_intervention(agent)
                    name, args = self.steps[self.taken]
                    self.taken += 1
                    text = json.dumps({"thoughts": [f"step {self.taken}"], "headline": f"doing {name}",
                                       "tool_name": name, "tool_args": args})
                    agent.loop_data.last_response = text
                    cls = TOOLS.get(name) or plugin_tool(self.root, name) or Echo
                    tool = cls(agent, name, None, args, text, agent.loop_data)
                    tool.loop = self
                    agent.loop_data.current_tool = tool
                    try:
                        await self.handle_intervention(agent)
                        await self.call("tool_execute_before", agent, tool_args=args, tool_name=name)
                        response = await tool.execute(**args)
                        self.responses.append(response.message)
                        await self.handle_intervention(agent)
                        await self.call("tool_execute_after", agent, response=response, tool_name=name)
                        await self.handle_intervention(agent)
                        if response.break_loop:
                            result = response.message
                            break
                    finally:
                        agent.loop_data.current_tool = None
                except Exception as e:
                    await self.handle_exception(agent, e)
        finally:
            await self.call("monologue_end", agent, loop_data=agent.loop_data)
        return result


class Delegation(Tool):  # tools/call_subordinate.py: the subordinate's monologue on the next steps
    async def execute(self, message="", reset="", **kwargs):
        sub = self.agent.get_data(Agent.DATA_NAME_SUBORDINATE)
        if sub is None or str(reset).lower().strip() == "true":
            sub = Agent(self.agent.number + 1, self.agent.config, self.agent.context)
            sub.set_data(Agent.DATA_NAME_SUPERIOR, self.agent)
            self.agent.set_data(Agent.DATA_NAME_SUBORDINATE, sub)
        return Response(message=await self.loop.monologue(sub, message), break_loop=False)


class Failing(Tool):  # a tool that raises: an error the loop does not repair
    async def execute(self, **kwargs):
        raise RuntimeError(self.args.get("error", "the tool broke"))


TOOLS = {"response": Answer, "call_subordinate": Delegation, "fail": Failing}
