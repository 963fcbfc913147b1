"""Helpers both the stand-in tests and the real-loop tests use."""

import time


def wait_for(what, timeout=120.0):
    """Polls `what` until it returns something true, and returns that. The
    default is generous: beside `stress-ng --cpu 2` a step that takes well
    under a second on a quiet machine took over 20 s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = what()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError("timed out")


def thread_of(engine, context):
    """The chat's pad thread: its root and every reply."""
    from usr.plugins.scratchpad.helpers import chat

    with engine.client() as c:
        return c.thread(chat.state_of(context)["thread"])


def status_of(engine, context):
    """What the chat's status note says (`meta.agent_zero`)."""
    from usr.plugins.scratchpad.helpers import chat

    with engine.client() as c:
        return c.get(chat.state_of(context)["status"])["meta"]["agent_zero"]
