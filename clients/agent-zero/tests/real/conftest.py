"""Agent Zero's real loop, from its source (A0_DIR: a checkout of
agent0ai/agent-zero, run with a Python that has its packages; see
docs/agent-zero.md, "Testing in Agent Zero's real loop"), with the plugin
installed by `pad agent-zero install`, its chat and utility models a
scripted stand-in on loopback (model_standin.py) and a real engine.

The checkout is copied first: Agent Zero writes settings, chats and logs
into its own tree. Its `_memory` plugin is switched off (its embedder comes
from Hugging Face, unreachable here); a0_setup.py says the rest."""

import os
import pathlib
import sys
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent
A0_DIR = os.environ.get("A0_DIR")
sys.path.insert(0, str(HERE.parents[2] / "python" / "tests"))
sys.path.insert(0, str(HERE.parent))  # support.py, shared with the stand-in tests
sys.path.insert(0, str(HERE))

collect_ignore_glob = [] if A0_DIR else ["test_*.py"]


# In a container (clients/agent-zero/tests/test_container.py): the engine
# runs on the host; the person reaches it on its socket (mounted), the
# plugin over HTTP through docker0 with a token, as in Agent Zero's image.
OUTSIDE = os.environ.get("PAD_ENGINE_SOCKET")


class OutsideEngine:
    socket = OUTSIDE

    def client(self, **kw):
        import scratchpad

        return scratchpad.Client(self.socket, **kw)

    def stop(self):
        pass


@pytest.fixture(scope="session")
def a0(tmp_path_factory):
    from a0_setup import prepare
    from pad_engine import pad_binary

    into = tmp_path_factory.mktemp("a0")
    settings = None
    if OUTSIDE:
        token = into / "token"
        token.write_text(os.environ["PAD_ENGINE_TOKEN"])
        settings = (os.environ["PAD_ENGINE_URL"], token)
    return prepare(A0_DIR, into, pad_binary(), settings)


@pytest.fixture(scope="session")
def model(a0):
    from a0_setup import use_models
    from model_standin import ModelStandin

    standin = ModelStandin()
    use_models(a0, standin.api_base)
    yield standin
    standin.stop()


@pytest.fixture(scope="session")
def engine(a0):
    from pad_engine import Engine

    e = OutsideEngine() if OUTSIDE else Engine(semantic=True)
    os.environ["PAD_SOCKET"] = e.socket
    # Recall finds notes by meaning once the model is loaded (until then a
    # search says it searched words only): seconds on a busy machine.
    deadline = time.time() + 120
    with e.client() as c:
        while c.stats()["semantic"]["status"] != "ready":
            assert time.time() < deadline, "the embedding model did not load in 120 s"
            time.sleep(0.2)
    yield e
    e.stop()
