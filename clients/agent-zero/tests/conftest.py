"""Fixtures for the native Agent Zero tool: a real engine, and the tool module
loaded with a stand-in for Agent Zero's `python.helpers.tool` (Agent Zero itself
is not installable offline; its `Tool` and `Response` are small and mirrored
here with the same constructor and fields)."""

import dataclasses
import importlib.util
import pathlib
import sys
import types

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "python" / "tests"))
sys.path.insert(0, str(HERE.parents[1] / "python"))

from pad_engine import Engine  # noqa: E402


@dataclasses.dataclass
class Response:
    message: str
    break_loop: bool


class Tool:
    def __init__(self, agent, name, method, args, message, loop_data=None, **kwargs):
        self.agent, self.name, self.method = agent, name, method
        self.args, self.message, self.loop_data = args, message, loop_data


def _stub_agent_zero():
    python = types.ModuleType("python")
    helpers = types.ModuleType("python.helpers")
    tool = types.ModuleType("python.helpers.tool")
    tool.Tool, tool.Response = Tool, Response
    python.helpers, helpers.tool = helpers, tool
    sys.modules.update({"python": python, "python.helpers": helpers, "python.helpers.tool": tool})


@pytest.fixture(scope="module")
def tool_module():
    _stub_agent_zero()
    path = HERE.parent / "python" / "tools" / "scratchpad.py"
    spec = importlib.util.spec_from_file_location("a0_scratchpad_tool", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def engine():
    e = Engine()
    yield e
    e.stop()
