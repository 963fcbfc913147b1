"""Stand-in for Agent Zero's initialize.py: the agent config a new chat gets."""

from agent import AgentConfig


def initialize_agent(override_settings=None):
    return AgentConfig(mcp_servers="")
