"""Stand-in for Agent Zero's helpers/tool.py (Tool, Response)."""

from dataclasses import dataclass
from typing import Any


@dataclass
class Response:
    message: str
    break_loop: bool
    additional: dict[str, Any] | None = None


class Tool:
    def __init__(self, agent, name, method, args, message, loop_data, **kwargs):
        self.agent, self.name, self.method = agent, name, method
        self.args, self.loop_data, self.message = args, loop_data, message
        self.progress = ""
