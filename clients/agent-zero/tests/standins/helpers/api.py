"""Stand-in for Agent Zero's helpers/api.py (ApiHandler)."""

Request = object


class ApiHandler:
    def __init__(self, app=None, thread_lock=None):
        self.app, self.thread_lock = app, thread_lock
