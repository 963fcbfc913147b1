"""Stand-in for Agent Zero's helpers/extension.py (Extension)."""


class Extension:
    def __init__(self, agent, **kwargs):
        self.agent = agent
        self.kwargs = kwargs

    def execute(self, **kwargs):
        pass
