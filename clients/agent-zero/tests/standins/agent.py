"""Stand-in for Agent Zero's agent.py: the few names the plugin imports, with
the real ones' constructors and fields (tests/real/test_standins.py checks
them against a checkout). The loop itself is driven by tests/loop.py."""

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class AgentContextType(Enum):
    USER = "user"
    TASK = "task"
    BACKGROUND = "background"


@dataclass
class AgentConfig:
    mcp_servers: str
    profile: str = ""
    knowledge_subdirs: list = field(default_factory=lambda: ["default", "custom"])
    additional: dict = field(default_factory=dict)


@dataclass
class UserMessage:
    message: str
    attachments: list = field(default_factory=list)
    system_message: list = field(default_factory=list)
    id: str = ""


class LoopData:
    def __init__(self, **kwargs):
        self.iteration = -1
        self.system = []
        self.user_message = None
        self.history_output = []
        self.extras_temporary = OrderedDict()
        self.extras_persistent = OrderedDict()
        self.last_response = ""
        self.params_temporary = {}
        self.params_persistent = {}
        self.current_tool = None
        for key, value in kwargs.items():
            setattr(self, key, value)


class AgentContext:
    _contexts: dict = {}
    _lock = threading.RLock()
    _counter = 0

    def __init__(self, config, id=None, name=None, agent0=None, log=None, paused=False,
                 streaming_agent=None, created_at=None, type=None, last_message=None, data=None,
                 output_data=None, set_current=False):
        with AgentContext._lock:
            AgentContext._counter += 1
            self.id = id or f"ctx{AgentContext._counter}"
            AgentContext._contexts[self.id] = self
        self.config, self.name, self.paused = config, name, paused
        self.type = type or AgentContextType.USER
        self.data = data or {}
        self.agent0 = agent0 or Agent(0, config, self)
        self.streaming_agent = streaming_agent
        self.task = None
        self.messages: list = []  # what communicate() received, for the tests

    @staticmethod
    def get(id):
        return AgentContext._contexts.get(id)

    def get_agent(self):
        return self.streaming_agent or self.agent0

    def is_running(self):
        return bool(self.task)

    def communicate(self, msg, broadcast_level=1):
        self.paused = False
        self.messages.append(msg)
        if self.task:
            self.get_agent().intervention = msg
        return self.task


class Agent:
    DATA_NAME_SUPERIOR = "_superior"
    DATA_NAME_SUBORDINATE = "_subordinate"

    def __init__(self, number, config, context=None):
        self.config = config
        self.context = context or AgentContext(config=config, agent0=self)
        self.number = number
        self.agent_name = f"A{number}"
        self.intervention = None
        self.data: dict[str, Any] = {}
        self.loop_data = LoopData()
        self.tool_results: list = []  # what hist_add_tool_result received, for the tests

    def get_data(self, field):
        return self.data.get(field, None)

    def set_data(self, field, value):
        self.data[field] = value

    def hist_add_tool_result(self, tool_name, tool_result, **kwargs):
        self.tool_results.append((tool_name, tool_result))
